
/*
 * Disarm an EPOLLONESHOT item that no caller has been handed since it was
 * last armed, so that user space may delete it and free what its epoll_data
 * refers to. Must be called with "mtx" held.
 *
 * ep->mtx keeps the scans out: ep_send_events() and __ep_eventpoll_poll()
 * hold it from ep_start_scan() to ep_done_scan(). The item is therefore on
 * ep->rdllist or on no list, never on a scan batch or on ep->ovflist, and
 * its event bits change only under ep->mtx. ep_deliver_event() clears them
 * once it has copied a oneshot item's event to user space, we clear them
 * and set epi->disabled, and only EPOLL_CTL_MOD sets them again. So:
 *
 *  - disabled: we disarmed the item already. Return -EALREADY: the caller
 *    that got 0 owns its deletion.
 *
 *  - bits set: nobody was handed the item. Clear them under ep->lock, which
 *    orders us against ep_poll_callback(), so that no later wakeup queues
 *    the item, and unlink it if an earlier one did. Return 0: nobody will
 *    be handed the item until EPOLL_CTL_MOD arms it again.
 *
 *  - bits clear: a caller holds the event (an armed item always has
 *    EPOLLERR and EPOLLHUP). Return -EBUSY and leave the item alone.
 *
 * The unlink needs no ep->seq write section. ep->seq covers the switch
 * between ep->rdllist and a scan batch, during which ep_events_available()
 * could see neither; taking one ready item off the list, as ep_remove_epi()
 * does, cannot hide another item from it.
 *
 * An item without EPOLLONESHOT is armed again by every delivery, so it can
 * never be known to be idle: refuse it with -EINVAL.
 */
