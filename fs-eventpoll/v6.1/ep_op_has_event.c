	return op == EPOLL_CTL_ADD || op == EPOLL_CTL_MOD;
