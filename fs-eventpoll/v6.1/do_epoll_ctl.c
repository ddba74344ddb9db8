	case EPOLL_CTL_DISABLE:
		if (epi)
			error = ep_disable(ep, epi);
		else
			error = -ENOENT;
		break;
