
/*
 * Disarm an EPOLLONESHOT item that no caller has been handed since it was
 * last armed, so that user space may delete it and free what its epoll_data
 * refers to. Must be called with "mtx" held.
 *
 * ep->mtx keeps the scans out: ep_send_events() and __ep_eventpoll_poll()
 * hold it from ep_start_scan() to ep_done_scan(). The item is therefore on
 * ep->rdllist or on no list, never on a scan batch or on ep->ovflist, and
 * its mask changes only under ep->mtx. An armed item always has EPOLLERR
 * and EPOLLHUP. ep_deliver_event() clears every event bit of a oneshot item
 * once it has copied its event to user space; we clear EPOLLONESHOT too,
 * and only EPOLL_CTL_MOD sets the mask again. So:
 *
 *  - no event bits and no EPOLLONESHOT: we disarmed the item already.
 *    Return -EALREADY: the caller that got 0 owns its deletion.
 *
 *  - no event bits: a caller holds the event. Return -EBUSY and leave the
 *    item alone. A wakeup during the scan that delivered the event may have
 *    requeued the item from ep->ovflist; the next scan drops it, finding no
 *    event it is armed for.
 *
 *  - event bits: nobody was handed the item. Clear them under ep->lock,
 *    which orders us against ep_poll_callback(), so that no later wakeup
 *    queues the item, and unlink it if an earlier one did. Return 0.
 *
 * The unlink needs no ep->seq write section. ep->seq covers the switch
 * between ep->rdllist and a scan batch, during which ep_events_available()
 * could see neither; taking one ready item off the list, as ep_remove_epi()
 * does, cannot hide another item from it.
 *
 * An item without EPOLLONESHOT is armed again by every delivery, so it can
 * never be known to be idle: refuse it with -EINVAL.
 */
