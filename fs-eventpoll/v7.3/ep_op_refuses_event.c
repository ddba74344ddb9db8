
/* Tells if the operation refuses an event, to leave room for flags in it */
static inline bool ep_op_refuses_event(int op)
{
	return op == EPOLL_CTL_DISABLE;
}
