	epi->event.events = events & EP_PRIVATE_BITS;
