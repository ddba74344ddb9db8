	return op != EPOLL_CTL_DEL;
