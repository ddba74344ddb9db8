 *   event            - ep->mtx for writes, ep_disable()'s under ep->lock
 *                      too; lockless read in ep_poll_callback pairs with
 *                      smp_mb() in ep_modify()
 *   disabled         - ep->mtx
