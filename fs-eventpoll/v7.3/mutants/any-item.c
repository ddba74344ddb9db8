	if (!(events & (EPOLLONESHOT | ~EP_PRIVATE_BITS)))
