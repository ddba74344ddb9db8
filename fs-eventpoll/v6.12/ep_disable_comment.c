
/*
 * Disable an EPOLLONESHOT item that no epoll_wait() caller has been handed
 * since it was last armed, so that the caller may remove it and free what its
 * epoll_data refers to. Must be called with "mtx" held.
 *
 * Holding ep->mtx excludes the event delivery loops: ep_send_events() and
 * __ep_eventpoll_poll() scan under it. No scan is in progress, so the item is
 * either on ep->rdllist or on no list at all, never on a scan batch or on
 * ep->ovflist. ep_deliver_event() clears the event bits of a oneshot item,
 * under ep->mtx, when it copies the event to user space, and only
 * EPOLL_CTL_MOD sets them again. We clear them too, and set epi->disabled,
 * which EPOLL_CTL_MOD clears. So:
 *
 *  - disabled: we disarmed the item already. Return -EALREADY: the caller
 *    that got 0 owns its deletion.
 *
 *  - bits set: nobody was handed the item. Clear them under ep->lock,
 *    which orders us against ep_poll_callback(), so that no later wakeup
 *    queues the item, and take it off the ready list if an earlier wakeup
 *    did. Return 0: nobody will be handed this item until EPOLL_CTL_MOD
 *    arms it again.
 *
 *  - bits clear: a caller holds the event (an armed item always has
 *    EPOLLERR and EPOLLHUP). Return -EBUSY and leave the item alone; the
 *    caller that holds the event decides when it may go.
 *
 * An item without EPOLLONESHOT is armed again by every delivery, so it can
 * never be known to be idle: refuse it with -EINVAL.
 */
