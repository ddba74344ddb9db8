/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What our programs outside the series share, on top of the selftest's
 * epoll_disable.h (the op, the protocol, and the names of the roles,
 * which these programs use too): a clock, a sleep, a random number
 * generator, a probe that records every answer it met and what those
 * answers mean for a program that must use the op, and what the bench
 * and the server need to free items safely and to catch a late touch: a
 * quarantine and QSBR.
 *
 * It lives in common/, not in bench/src/ or checks/, because both
 * include it: each points down to common/, neither sideways at the other.
 */
#ifndef EPOLL_DISABLE_UTIL_H
#define EPOLL_DISABLE_UTIL_H

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "epoll_disable.h"

static inline void sleep_us(long us)
{
	struct timespec ts = { us / 1000000L, (us % 1000000L) * 1000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * The probe, answer by answer: does this kernel know op 4? One without it
 * rejects the op as unknown (EINVAL), after copying an event for it if it
 * copies one for every op but EPOLL_CTL_DEL (EFAULT for a NULL event: ask
 * again with one). An item without EPOLLONESHOT is EINVAL too, so ask
 * about a file that is not in the set: the op answers ENOENT, an unknown
 * op EINVAL. Ask about an EPOLLONESHOT item as well, so that only a
 * kernel that answers both as an unknown op counts as one without it; any
 * other answer is the op's, for the caller to judge. Op 5, which no
 * kernel has, shows how this kernel answers an unknown op.
 */
struct disable_probe {
	int setup;	/* errno of the set and item, or 0 */
	int item;	/* DISABLE of an armed EPOLLONESHOT item, no event */
	int item_event;	/* the same given an event, where item is EFAULT */
	int absent;	/* DISABLE of a file not in the set, no event */
	int unknown;	/* op 5 on the item, no event */
};

static inline bool probe_disable(struct disable_probe *p)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT };
	int ep, sv[2];

	*p = (struct disable_probe){
		.item = -1, .item_event = -1, .absent = -1, .unknown = -1,
	};
	ep = epoll_create1(0);
	if (ep < 0) {
		p->setup = errno;
		return true;	/* let the caller say what is wrong */
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		p->setup = errno;
		close(ep);
		return true;
	}
	if (!epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev)) {
		p->item = disable(ep, sv[0]);
		p->absent = disable(ep, sv[1]);
		p->unknown = ctl(ep, 5, sv[0]);
		if (p->item == EFAULT)
			p->item_event = epoll_ctl(ep, EPOLL_CTL_DISABLE,
						  sv[0], &ev) ? errno : 0;
	} else {
		p->setup = errno;
	}
	close(sv[0]);
	close(sv[1]);
	close(ep);
	return !((p->item == EFAULT ? p->item_event : p->item) == EINVAL &&
		 (p->absent == EINVAL || p->absent == EFAULT));
}

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

/*
 * A decimal option's value in [min, max]: false if the text is not one
 * (the caller prints its usage)
 */
static inline bool parse_long(const char *s, long min, long max, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return !errno && end != s && !*end && *v >= min && *v <= max;
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

/*
 * The quarantine: a freed item is poisoned (ITEM_POISON) and kept here
 * for the next QUARANTINE frees before it goes back to malloc, so that an
 * owner that touches it after its free (a use-after-free in a real
 * program) reads the poison and counts a late touch instead of crashing.
 */
struct quarantine {
	pthread_mutex_t lock;
	void **ring;
	long size, head, len;
	size_t guard;		/* where an item keeps its struct item_guard */
};

/* One that keeps as many items as @array holds, of @type with @member */
#define QUARANTINE_INIT(array, type, member) {				\
	.lock = PTHREAD_MUTEX_INITIALIZER, .ring = (array),		\
	.size = sizeof(array) / sizeof((array)[0]),			\
	.guard = offsetof(type, member) }

/* Back to malloc, its lock destroyed first */
static inline void quarantine_release(struct quarantine *q, void *item)
{
	struct item_guard *g = (void *)((char *)item + q->guard);

	pthread_mutex_destroy(&g->lock);
	free(item);
}

/*
 * Keep @item; the item kept longest falls out once the quarantine is
 * full, and is returned for quarantine_release() after the unlock (NULL
 * if none). Must be called with q->lock held.
 */
static inline void *quarantine_put_locked(struct quarantine *q, void *item)
{
	void *old = NULL;

	if (q->len == q->size) {
		old = q->ring[q->head];
		q->ring[q->head] = item;
		q->head = (q->head + 1) % q->size;
	} else {
		q->ring[(q->head + q->len++) % q->size] = item;
	}
	return old;
}

static inline void quarantine_put(struct quarantine *q, void *item)
{
	void *old;

	pthread_mutex_lock(&q->lock);
	old = quarantine_put_locked(q, item);
	pthread_mutex_unlock(&q->lock);
	if (old)
		quarantine_release(q, old);
}

/* Every item kept back to malloc: at the end, once no thread runs */
static inline void quarantine_drain(struct quarantine *q)
{
	while (q->len) {
		quarantine_release(q, q->ring[q->head]);
		q->head = (q->head + 1) % q->size;
		q->len--;
	}
}

/*
 * QSBR, the deferred protocol's reclamation, which needs no op: the
 * canceller deletes an item (EPOLL_CTL_DEL) and retires it in a new
 * epoch; each waiter, at its quiescent point (it holds no item, and is
 * about to call epoll_wait()), records the epoch it sees. A waiter that
 * has recorded an item's epoch called epoll_wait() after the item's
 * deletion, so it cannot hold the item's event: once every waiter has,
 * the item is freed. The retire list is one thread's at a time.
 */
struct qsbr_node {
	unsigned long epoch;	/* retired in this epoch */
	struct qsbr_node *next;
};

struct qsbr {
	atomic_ulong epoch;	/* the global epoch */
	struct qsbr_node *head, *tail;	/* the retire list, oldest first */
	char *qs;		/* waiter 0's counter, an atomic_ulong */
	size_t stride;		/* from one waiter's counter to the next */
	int nr_waiters;
};

#define qsbr_entry(node, type, member) \
	((type *)((char *)(node) - offsetof(type, member)))

/*
 * @nr waiters, waiter i with its quiescent counter at @qs + i * @stride:
 * for an array of struct waiter, &w[0].qs and sizeof(w[0])
 */
static inline void qsbr_init(struct qsbr *q, atomic_ulong *qs, size_t stride,
			     int nr)
{
	atomic_store(&q->epoch, 0);
	q->head = q->tail = NULL;
	q->qs = (char *)qs;
	q->stride = stride;
	q->nr_waiters = nr;
}

/* A waiter's quiescent point: @qs is its counter */
static inline void qsbr_quiescent(struct qsbr *q, atomic_ulong *qs)
{
	atomic_store(qs, atomic_load(&q->epoch));
}

static inline unsigned long qsbr_waiter_qs(const struct qsbr *q, int i)
{
	return atomic_load((atomic_ulong *)(q->qs + i * q->stride));
}

/* The oldest epoch some waiter may still hold an item of */
static inline unsigned long qsbr_min(const struct qsbr *q)
{
	unsigned long min = ULONG_MAX, v;
	int i;

	for (i = 0; i < q->nr_waiters; i++) {
		v = qsbr_waiter_qs(q, i);
		if (v < min)
			min = v;
	}
	return min;
}

/* After its EPOLL_CTL_DEL: a waiter that sees this epoch cannot get it */
static inline void qsbr_retire(struct qsbr *q, struct qsbr_node *n)
{
	n->epoch = atomic_fetch_add(&q->epoch, 1) + 1;
	n->next = NULL;
	if (q->tail)
		q->tail->next = n;
	else
		q->head = n;
	q->tail = n;
}

/*
 * Hand @reclaim each retired node that no waiter can hold any more, oldest
 * first, off the list (@all: every one, once no waiter runs)
 */
static inline void qsbr_reclaim(struct qsbr *q, bool all,
				void (*reclaim)(struct qsbr_node *n))
{
	unsigned long safe = all ? ULONG_MAX : qsbr_min(q);
	struct qsbr_node *n;

	while ((n = q->head) && n->epoch <= safe) {
		q->head = n->next;
		if (!q->head)
			q->tail = NULL;
		reclaim(n);
	}
}

#endif
