
/*
 * Disable an EPOLLONESHOT item that no epoll_wait() caller has been handed
 * since it was last armed, so that the caller may remove it and free what its
 * epoll_data refers to. Must be called with "mtx" held.
 *
 * Holding ep->mtx excludes the event delivery loops: ep_send_events() and
 * __ep_eventpoll_poll() scan under it. No scan is in progress, so the item is
 * either on ep->rdllist or on no list at all, never on a scan batch or on
 * ep->ovflist, and its mask changes only under ep->mtx. An armed item always
 * has EPOLLERR and EPOLLHUP. ep_deliver_event() clears every event bit of a
 * oneshot item when it copies its event to user space; we clear EPOLLONESHOT
 * too, and only EPOLL_CTL_MOD sets the mask again. So:
 *
 *  - no event bits and no EPOLLONESHOT: we disarmed the item already.
 *    Return -EALREADY: the caller that got 0 owns its deletion.
 *
 *  - no event bits: a caller holds the event. Return -EBUSY and leave the
 *    item alone. A wakeup that came during the scan which delivered the
 *    event may have put the item back on the ready list; the next scan
 *    drops it, finding no event it is armed for.
 *
 *  - event bits: nobody was handed the item. Clear them under ep->lock,
 *    which orders us against ep_poll_callback(), so that no later wakeup
 *    queues the item, and take it off the ready list if an earlier wakeup
 *    did. Return 0: nobody will be handed this item until EPOLL_CTL_MOD
 *    arms it again.
 *
 * An item without EPOLLONESHOT is armed again by every delivery, so it can
 * never be known to be idle: refuse it with -EINVAL.
 */
