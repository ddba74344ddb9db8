 *   event            - ep->mtx for writes, ep_disable()'s also under
 *                      ep->lock; ep_poll_callback() reads it under
 *                      ep->lock, racing the other writers, which
 *                      smp_mb() in ep_modify() orders
