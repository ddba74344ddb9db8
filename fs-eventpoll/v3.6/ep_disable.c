
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
 * ep->ovflist, and its mask changes only under ep->mtx. An armed item always
 * has EPOLLERR and EPOLLHUP. ep_send_events_proc() clears every event bit of
 * a oneshot item when it copies its event to user space; we clear
 * EPOLLONESHOT too, and only EPOLL_CTL_MOD sets the mask again. So:
 *
 *  - no event bits and no EPOLLONESHOT: we disarmed the item already.
 *    Return -EALREADY: the caller that got 0 owns its deletion.
 *
 *  - no event bits: a caller holds the event. Return -EBUSY and leave the
 *    item alone. A wakeup that came during the scan which delivered the
 *    event may have put the item back on the ready list; the next scan
 *    drops it, finding no event it is armed for.
 *
 *  - event bits: nobody was handed the item. Clear them under ep->lock,
 *    which ep_poll_callback() holds to test them, so that no later wakeup
 *    queues the item, and take it off the ready list if an earlier wakeup
 *    did. Return 0: nobody will be handed this item until EPOLL_CTL_MOD
 *    arms it again.
 *
 * An item without EPOLLONESHOT is armed again by every delivery, so it can
 * never be known to be idle: refuse it with -EINVAL.
 */
static int ep_disable(struct eventpoll *ep, struct epitem *epi)
{
	unsigned int events = epi->event.events;

	lockdep_assert_held(&ep->mtx);

	if (!(events & EPOLLONESHOT))
		return events & ~EP_PRIVATE_BITS ? -EINVAL : -EALREADY;
	if (!(events & ~EP_PRIVATE_BITS))
		return -EBUSY;

	/* Interrupts are on here, as in ep_modify(): epoll_ctl() may sleep */
	spin_lock_irq(&ep->lock);
	WARN_ON_ONCE(ep->ovflist != EP_UNACTIVE_PTR);
	epi->event.events = events & EP_PRIVATE_BITS & ~EPOLLONESHOT;
	if (ep_is_linked(&epi->rdllink)) {
		list_del_init(&epi->rdllink);
		/* A ready item keeps its wakeup source active: release it */
		__pm_relax(epi->ws);
	}
	spin_unlock_irq(&ep->lock);

	return 0;
}
