static int ep_disable(struct eventpoll *ep, struct epitem *epi)
{
	struct wakeup_source *ws;

	lockdep_assert_irqs_enabled();
	lockdep_assert_held(&ep->mtx);

	if (!(epi->event.events & EPOLLONESHOT))
		return -EINVAL;
	if (epi->disabled)
		return -EALREADY;

	spin_lock_irq(&ep->lock);
	if (!(epi->event.events & ~EP_PRIVATE_BITS)) {
		spin_unlock_irq(&ep->lock);
		return -EBUSY;
	}
	epi->event.events &= EP_PRIVATE_BITS;
	if (ep_is_linked(epi)) {
		list_del_init(&epi->rdllink);
		/* A ready item keeps its wakeup source active: release it */
		ws = ep_wakeup_source(epi);
		if (ws)
			__pm_relax(ws);
	}
	spin_unlock_irq(&ep->lock);
	epi->disabled = true;

	return 0;
}
