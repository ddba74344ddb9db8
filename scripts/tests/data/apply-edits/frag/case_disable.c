	case EPOLL_CTL_DISABLE:
		error = ep_disable(ep, epi);
		break;
