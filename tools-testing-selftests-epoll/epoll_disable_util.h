/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What our programs outside the series share, on top of the selftest's
 * epoll_disable.h (the op, the protocol, the probe, and the names of the
 * roles, which these programs use too): a clock, a random number
 * generator, and what the probe's answers mean for a program that must
 * use the op.
 */
#ifndef EPOLL_DISABLE_UTIL_H
#define EPOLL_DISABLE_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "epoll_disable.h"

static inline long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* xorshift64*: one state per thread, no locks */
static inline unsigned long rnd_next(unsigned long *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717UL;
}

static inline int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

/*
 * probe_disable() for a program that deletes items with the op: 1 if the
 * kernel has it and DISABLE of an armed item answers 0, as the program
 * needs; 0 if the kernel has no op 4; -1 if it has one that answers
 * otherwise, or the probe could not ask. @why says which.
 */
static inline int disable_usable(char *why, size_t len)
{
	struct disable_probe p;

	if (!probe_disable(&p)) {
		snprintf(why, len,
			 "EPOLL_CTL_DISABLE not supported by this kernel");
		return 0;
	}
	if (p.setup) {
		snprintf(why, len, "probe setup: %s", strerror(p.setup));
		return -1;
	}
	if (p.item == EFAULT && !p.item_event) {
		snprintf(why, len,
			 "op 4 works but reads its event argument");
		return -1;
	}
	if (p.item) {
		snprintf(why, len,
			 "op 4 on an armed EPOLLONESHOT item: %s, expected 0",
			 strerror(p.item));
		return -1;
	}
	snprintf(why, len, "EPOLL_CTL_DISABLE supported");
	return 1;
}

#endif
