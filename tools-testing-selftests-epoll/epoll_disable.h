/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the EPOLL_CTL_DISABLE tests share: the op, calls that answer with
 * an errno, and the probe for a kernel that has the op.
 *
 * The names, in every file: an item is one file in an epoll set; a waiter
 * is a thread in epoll_wait() on the set; the waiter handed an item's
 * event is its owner until it re-arms the item with EPOLL_CTL_MOD; a
 * canceller is a thread that wants an item gone without owning it, and
 * asks DISABLE:
 *
 *   0         nobody holds the event: the canceller deletes the item now
 *   EBUSY     an owner holds the event: it deletes the item when done
 *   EALREADY  a canceller disabled the item already and owns its deletion
 */
#ifndef EPOLL_DISABLE_H_
#define EPOLL_DISABLE_H_

#include <errno.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Not in the C library's <sys/epoll.h>; the value is the kernel's ABI. */
#ifndef EPOLL_CTL_DISABLE
#define EPOLL_CTL_DISABLE 4
#endif

/* 0 or the errno of an epoll_ctl() op given no event */
static inline int ctl(int ep, int op, int fd)
{
	return epoll_ctl(ep, op, fd, NULL) ? errno : 0;
}

/* EPOLL_CTL_DISABLE takes no event */
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

static inline int put_byte(int fd)
{
	return write(fd, "x", 1);
}

static inline void sleep_us(long us)
{
	struct timespec ts = { us / 1000000L, (us % 1000000L) * 1000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Does this kernel know op 4? One without it rejects the op as unknown
 * (EINVAL), after copying an event for it if it copies one for every op
 * but EPOLL_CTL_DEL (EFAULT for a NULL event: ask again with one). An
 * item without EPOLLONESHOT is EINVAL too, so ask about a file that is
 * not in the set: the op answers ENOENT, an unknown op EINVAL. Ask about
 * an EPOLLONESHOT item as well, so that only a kernel that answers both
 * as an unknown op counts as one without it; any other answer is the
 * op's, and the tests judge it.
 */
static inline bool have_disable(void)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT };
	int ep, sv[2], item = 0, absent = 0;

	ep = epoll_create1(0);
	if (ep < 0)
		return true;	/* let the tests say what is wrong */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		close(ep);
		return true;
	}
	if (!epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev)) {
		item = disable(ep, sv[0]);
		absent = disable(ep, sv[1]);
		if (item == EFAULT)
			item = epoll_ctl(ep, EPOLL_CTL_DISABLE, sv[0], &ev) ?
			       errno : 0;
	}
	close(sv[0]);
	close(sv[1]);
	close(ep);
	return !(item == EINVAL && (absent == EINVAL || absent == EFAULT));
}

#endif /* EPOLL_DISABLE_H_ */
