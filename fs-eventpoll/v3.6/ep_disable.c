
/*
 * Disable an EPOLLONESHOT item that no epoll_wait() caller has been handed
 * since it was last armed, so that the caller may remove it and free what its
 * epoll_data refers to. Must be called with "mtx" held.
 *
 * Holding ep->mtx excludes ep_scan_ready_list(): it holds ep->mtx from the
 * moment it steals ep->rdllist until it has spliced back what it left and
 * reset ep->ovflist to EP_UNACTIVE_PTR, whether it runs for epoll_wait()
 * (ep_send_events_proc()) or for a poll of the epoll file itself
 * (ep_read_events_proc()). No scan is in progress, so the item is either on
 * ep->rdllist or on no list at all, never on a scan's txlist or chained on
 * ep->ovflist. ep_send_events_proc() clears the event bits of a oneshot item,
 * under ep->mtx, when it copies the event to user space, and only
 * EPOLL_CTL_MOD sets them again. We clear them too, and set epi->disabled,
 * which EPOLL_CTL_MOD clears. So:
 *
 *  - disabled: we disarmed the item already. Return -EALREADY: the caller
 *    that got 0 owns its deletion.
 *
 *  - bits set: nobody was handed the item. Clear them under ep->lock, which
 *    ep_poll_callback() holds to test them, so that no later wakeup queues
 *    the item, and take it off the ready list if an earlier wakeup did.
 *    Return 0: nobody will be handed this item until EPOLL_CTL_MOD arms it
 *    again.
 *
 *  - bits clear: a caller holds the event (an armed item always has
 *    EPOLLERR and EPOLLHUP). Return -EBUSY and leave the item alone; the
 *    caller that holds the event decides when it may go. A wakeup that
 *    came during the scan which delivered the event may have put the item
 *    back on the ready list; the next scan drops it, finding no event it
 *    is armed for.
 *
 * An item without EPOLLONESHOT is armed again by every delivery, so it can
 * never be known to be idle: refuse it with -EINVAL.
 */
static int ep_disable(struct eventpoll *ep, struct epitem *epi)
{
	lockdep_assert_held(&ep->mtx);

	if (!(epi->event.events & EPOLLONESHOT))
		return -EINVAL;
	if (epi->disabled)
		return -EALREADY;

	/* Interrupts are on here, as in ep_modify(): epoll_ctl() may sleep */
	spin_lock_irq(&ep->lock);
	if (!(epi->event.events & ~EP_PRIVATE_BITS)) {
		spin_unlock_irq(&ep->lock);
		return -EBUSY;
	}
	epi->event.events &= EP_PRIVATE_BITS;
	if (ep_is_linked(&epi->rdllink)) {
		list_del_init(&epi->rdllink);
		/* A ready item keeps its wakeup source active: release it */
		__pm_relax(epi->ws);
	}
	spin_unlock_irq(&ep->lock);
	epi->disabled = true;

	return 0;
}
