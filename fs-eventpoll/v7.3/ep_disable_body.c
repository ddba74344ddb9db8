static int ep_disable(struct eventpoll *ep, struct epitem *epi)
{
	__poll_t events = epi->event.events;
	struct wakeup_source *ws;

	lockdep_assert_irqs_enabled();
	lockdep_assert_held(&ep->mtx);

	if (!(events & EPOLLONESHOT))
		return events & ~EP_PRIVATE_BITS ? -EINVAL : -EALREADY;
	if (!(events & ~EP_PRIVATE_BITS))
		return -EBUSY;

	spin_lock_irq(&ep->lock);
	WARN_ON_ONCE(ep_is_scanning(ep));
	epi->event.events = events & EP_PRIVATE_BITS & ~EPOLLONESHOT;
	if (ep_is_linked(epi)) {
		list_del_init(&epi->rdllink);
		/* A ready item keeps its wakeup source active: release it */
		ws = ep_wakeup_source(epi);
		if (ws)
			__pm_relax(ws);
	}
	spin_unlock_irq(&ep->lock);

	return 0;
}
