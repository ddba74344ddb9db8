/* A few lines of fs/eventpoll.c, enough for one edit of each kind */
static int ep_modify(struct eventpoll *ep, struct epitem *epi)
{
	return 0;
}

static int ep_disable(struct eventpoll *ep, struct epitem *epi)
{
	return -EBUSY;
}

static int ep_remove(struct eventpoll *ep, struct epitem *epi)
{
	/* removes the item */
	return 1;
}

int do_epoll_ctl(int epfd, int op, int fd)
{
	switch (op) {
	case EPOLL_CTL_MOD:
		error = ep_modify(ep, epi);
		break;
	case EPOLL_CTL_DEL:
	/* the op is done */
		error = ep_remove(ep, epi);
		break;
	case EPOLL_CTL_DISABLE:
		error = ep_disable(ep, epi);
		break;
	}
	return error;
}
