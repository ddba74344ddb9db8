// SPDX-License-Identifier: GPL-2.0-or-later
static int ep_modify(struct eventpoll *ep, struct epitem *epi)
{
	return 0;
}

int do_epoll_ctl_file(int op)
{
	switch (op) {
	case EPOLL_CTL_MOD:
		return ep_modify(ep, epi);
	}
	return -EINVAL;
}
