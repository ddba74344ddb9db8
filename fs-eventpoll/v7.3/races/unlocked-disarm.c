	epi->event.events &= EP_PRIVATE_BITS;
