
/*
 * Disarm an EPOLLONESHOT item that nobody was handed since it was last armed,
 * so that user space may delete it and free what its epoll_data refers to.
 * Called with ep->mtx held, which keeps the scans out: the item is on
 * ep->rdllist or on no list. ep->lock orders us against ep_poll_callback().
 * Delivery clears a oneshot item's event bits; we clear EPOLLONESHOT too.
 *
 * Returns 0 if the item was armed (it is now disarmed and off the ready
 * list), -EBUSY if a caller holds its event, -EALREADY if it is disabled
 * already, -EINVAL if it is not EPOLLONESHOT.
 */
