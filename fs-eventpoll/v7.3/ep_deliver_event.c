		/* Handed out: ep_disable() is -EBUSY until EPOLL_CTL_MOD */
