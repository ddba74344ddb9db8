/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What our programs outside the series share: the op's number, a clock, a
 * sleep, a random number generator and the probe for the op. The
 * selftest has its own, as the series carries it alone.
 */
#ifndef EPOLL_DISABLE_UTIL_H
#define EPOLL_DISABLE_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Not in the C library's <sys/epoll.h>; the value is the kernel's ABI. */
#ifndef EPOLL_CTL_DISABLE
#define EPOLL_CTL_DISABLE 4
#endif

static inline long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline void sleep_us(long us)
{
	struct timespec ts = { us / 1000000L, (us % 1000000L) * 1000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* xorshift64*: one state per thread, no locks */
static inline unsigned long rnd_next(unsigned long *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717UL;
}

/*
 * Does this kernel have EPOLL_CTL_DISABLE? As in epoll_disable_test: a
 * kernel without it copies an event for op 4 before it looks at the op
 * (EFAULT for a NULL event) and then rejects the op (EINVAL). Returns 1 if
 * it has the op, 0 if not, -1 if it claims the op but gets it wrong; @why
 * says which.
 */
static inline int probe_disable(char *why, size_t len)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT };
	int ep, sv[2], ret = -1;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		snprintf(why, len, "socketpair: %s", strerror(errno));
		return -1;
	}
	ep = epoll_create1(0);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev)) {
		snprintf(why, len, "epoll setup: %s", strerror(errno));
		goto out;
	}
	if (!epoll_ctl(ep, EPOLL_CTL_DISABLE, sv[0], NULL)) {
		snprintf(why, len, "EPOLL_CTL_DISABLE supported");
		ret = 1;
	} else if (errno != EFAULT) {
		snprintf(why, len,
			 "op 4 with a NULL event: %s, expected 0 or EFAULT",
			 strerror(errno));
	} else if (!epoll_ctl(ep, EPOLL_CTL_DISABLE, sv[0], &ev)) {
		snprintf(why, len,
			 "op 4 works but reads its event argument");
	} else if (errno == EINVAL) {
		snprintf(why, len,
			 "EPOLL_CTL_DISABLE not supported by this kernel");
		ret = 0;
	} else {
		snprintf(why, len, "op 4 with an event: %s, expected EINVAL",
			 strerror(errno));
	}
out:
	if (ep >= 0)
		close(ep);
	close(sv[0]);
	close(sv[1]);
	return ret;
}

#endif
