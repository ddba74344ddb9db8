	/* Read under ep->lock, like every other test of the mask here */
	if (!(epi->event.events & EPOLLEXCLUSIVE))
		ewake = 1;

