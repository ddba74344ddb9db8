
/*
 * Disarm an EPOLLONESHOT item that nobody was handed since it was last armed,
 * so that user space may delete it and free what its epoll_data refers to.
 * Called with ep->mtx held, which keeps ep_scan_ready_list() out: the item is
 * on ep->rdllist or on no list. ep->lock orders us against ep_poll_callback().
 * Delivery clears a oneshot item's event bits; we clear EPOLLONESHOT too.
 *
 * Returns 0 if the item was armed (it is now disarmed and off the ready
 * list), -EBUSY if a caller holds its event, -EALREADY if it is disabled
 * already, -EINVAL if it is not EPOLLONESHOT.
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
