		/* Handed out: ep_disable() answers -EBUSY until EPOLL_CTL_MOD */
