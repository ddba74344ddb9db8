		return epi->event.events &= ~EPOLLONESHOT, -EBUSY;
