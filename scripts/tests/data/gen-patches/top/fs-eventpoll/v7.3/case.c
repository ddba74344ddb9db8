	case EPOLL_CTL_DISABLE:
		return ep_disable(ep, epi);
