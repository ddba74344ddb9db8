/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the EPOLL_CTL_DISABLE tests share. An item is a file in an epoll
 * set; a waiter, a thread in epoll_wait(); the owner, the waiter handed
 * the item's event, until it re-arms the item; a canceller, a thread that
 * wants the item gone. The protocol: under the item's lock, the canceller
 * sets stop and asks DISABLE, and deletes the item at once on 0; on EBUSY
 * the owner, finding stop under the lock, deletes it. An owner that finds
 * the tag not ITEM_LIVE touches a deleted item: that must never happen.
 */
#ifndef EPOLL_DISABLE_H_
#define EPOLL_DISABLE_H_

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

/* Not in the C library's <sys/epoll.h>; the value is the kernel's ABI */
#ifndef EPOLL_CTL_DISABLE
#define EPOLL_CTL_DISABLE 4
#endif

/* 0 or the errno of an epoll_ctl() op given no event */
static inline int ctl(int ep, int op, int fd)
{
	return epoll_ctl(ep, op, fd, NULL) ? errno : 0;
}

static inline int disable(int ep, int fd)
{
	return ctl(ep, EPOLL_CTL_DISABLE, fd);
}

static inline int rearm(int ep, int fd, unsigned int events)
{
	struct epoll_event ev = { .events = events };

	return epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev) ? errno : 0;
}

/* How many events epoll_wait() hands out right now (0 or 1) */
static inline int reported(int ep)
{
	struct epoll_event ev;

	return epoll_wait(ep, &ev, 1, 0);
}

#define ITEM_LIVE	0x600dcafeU
#define ITEM_POISON	0xdeadbeefU	/* the tag once the item is deleted */

struct item_guard {
	pthread_mutex_t lock;
	unsigned int tag;
	bool stop;		/* a canceller wants the item gone */
};

static inline void item_guard_init(struct item_guard *g)
{
	pthread_mutex_init(&g->lock, NULL);
	g->tag = ITEM_LIVE;
	g->stop = false;
}

enum item_found { ITEM_HELD, ITEM_STOPPED, ITEM_DELETED };

/* The owner's step: what it finds, with g->lock held */
static inline enum item_found owner_lock(struct item_guard *g)
{
	pthread_mutex_lock(&g->lock);
	if (g->tag != ITEM_LIVE)
		return ITEM_DELETED;
	return g->stop ? ITEM_STOPPED : ITEM_HELD;
}

/* The canceller's step, with g->lock held: DISABLE's answer */
static inline int cancel_locked(struct item_guard *g, int ep, int fd)
{
	g->stop = true;
	return disable(ep, fd);
}

/* What the probe found */
enum probe_found { HAS_DISABLE, NO_DISABLE, PROBE_FAILED };

/*
 * The probe, unless -l or -h runs no test: DISABLE of an armed EPOLLONESHOT
 * item, no event. The op answers 0; a kernel without it EINVAL, as for an
 * unknown op, or EFAULT for the NULL event if it copies an event for every
 * op but DEL. No other answer means either: it fails the probe, as does a
 * probe that cannot ask. @why says what was found, if not the op.
 */
static inline enum probe_found probe_for_disable(int argc, char **argv,
						 char *why, size_t len)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT };
	int ep, sv[2] = { -1, -1 }, err;

	while (--argc > 0)
		if (!strcmp(argv[argc], "-l") || !strcmp(argv[argc], "-h"))
			return HAS_DISABLE;
	ep = epoll_create1(0);
	if (ep < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev)) {
		snprintf(why, len, "EPOLL_CTL_DISABLE probe: setup: %s",
			 strerror(errno));
		err = -1;
	} else {
		err = disable(ep, sv[0]);
	}
	close(sv[0]);
	close(sv[1]);
	close(ep);
	if (!err)
		return HAS_DISABLE;
	if (err == EINVAL || err == EFAULT) {
		snprintf(why, len, "EPOLL_CTL_DISABLE not supported by this kernel");
		return NO_DISABLE;
	}
	if (err > 0)
		snprintf(why, len, "EPOLL_CTL_DISABLE probe answered %s (errno %d)",
			 strerror(err), err);
	return PROBE_FAILED;
}

#endif /* EPOLL_DISABLE_H_ */
