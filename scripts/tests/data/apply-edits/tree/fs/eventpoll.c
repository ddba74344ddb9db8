/* A few lines of fs/eventpoll.c, enough for one edit of each kind */
static int ep_modify(struct eventpoll *ep, struct epitem *epi)
{
	return 0;
}

static int ep_remove(struct eventpoll *ep, struct epitem *epi)
{
	return 0;
}

int do_epoll_ctl(int epfd, int op, int fd)
{
	switch (op) {
	case EPOLL_CTL_MOD:
		error = ep_modify(ep, epi);
		break;
	case EPOLL_CTL_DEL:
		error = ep_remove(ep, epi);
		break;
	}
	/* an obsolete comment,
	 * two lines long */
	return error;
}
