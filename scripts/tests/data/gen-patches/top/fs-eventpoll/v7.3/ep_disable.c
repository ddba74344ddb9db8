static int ep_disable(struct eventpoll *ep, struct epitem *epi)
{
	return -EBUSY;
}

