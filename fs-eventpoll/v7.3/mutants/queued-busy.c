	if (ep_is_linked(epi)) {
		spin_unlock_irq(&ep->lock);
		return -EBUSY;
	}
