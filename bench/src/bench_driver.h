/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bench's driver of the protocols (bench_driver.c), which the modes
 * that run a protocol share: -M proto and -M reclaim (bench_proto.c) and
 * -M burst (bench_burst.c).  A bench item, the writer's slots, the run's
 * state B (what the protocols may read of the run is P, protocol.h), and
 * the driver's functions the modes call.
 */
#ifndef EPOLL_DISABLE_BENCH_DRIVER_H
#define EPOLL_DISABLE_BENCH_DRIVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "protocol.h"

/*
 * The bench's own per item, before the protocol's struct in the item's
 * block (P.item_off): @it last
 */
struct bench_item {
	bool timed;		/* deleted in the timed window */
	char *buf;		/* -M burst: a connection's buffer */
	size_t buf_len;
	struct item it;
};

static inline struct bench_item *bench_of(struct item *it)
{
	return container_of(it, struct bench_item, it);
}

/* The writer's way to an item: the canceller swaps it under the lock */
struct slot {
	pthread_mutex_t lock;
	struct item *it;
};

/* Reclaim latencies: ns from the decision to delete to the free */
struct samples {
	long long *v;
	atomic_long n;		/* taken; those past MAX_SAMPLES are lost */
};

/*
 * One run's state, the bench's own: what the protocols may read of it is
 * P (protocol.h)
 */
struct bench_run {
	struct slot *slots;
	atomic_bool quit;
	atomic_ulong errors;
	/* reclaim: the timed window, and what was deleted in it */
	struct samples reclaim;
	atomic_llong window_start, window_end;
	atomic_bool draining, drained;
	atomic_long pending;	/* deleted in the window, not yet freed */
	long pending_peak;
	double pending_sum;	/* sampled at each deletion in the window */
	unsigned long pending_samples;
	/*
	 * -M burst: the EPOLL_CTL_DEL calls the deleter made while it
	 * shrank the set, and their time (ns, each call timed alone)
	 */
	unsigned long dels;
	long long del_ns;
	/* -M burst: bytes of buffers not yet freed, the latest free */
	atomic_ulong buf_bytes;
	atomic_llong last_buf_free;
	char first_error[160];
};

extern struct bench_run B;

extern const struct driver bench_driver;

/* A new item, in the set: NULL, and the error counted, if it failed */
struct item *item_new(void);
/* -M burst: give @it a buffer of @len bytes, freed at its reclaimed() */
int item_buf_alloc(struct item *it, size_t len);
/* A waiter's thread: counts its calls, runs the protocol's loop */
void *proto_waiter(void *arg);
/* The calling thread (the canceller) counts its calls in @c */
void sys_calls_to(atomic_ulong *c);
void totals(struct totals *t);
/* Back to malloc, what the quarantine holds: no thread may look */
void quarantine_empty(void);
/* The set, the quitfd, the writer's P.n slots and their items */
int proto_setup(void);
void proto_teardown(void);
/* The burst's deleter, while it shrinks the set: time its DELs */
extern __thread bool time_dels;

#endif /* EPOLL_DISABLE_BENCH_DRIVER_H */
