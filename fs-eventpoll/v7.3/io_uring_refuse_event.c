	if (ep_op_refuses_event(epoll->op) && READ_ONCE(sqe->addr))
		return -EINVAL;
