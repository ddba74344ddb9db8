/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the bench's files share: the options, the output, and for -M proto
 * and -M reclaim the bench's side of the workload (the writer's slots, the
 * timed window, the reclaim samples: the run's state B).
 *
 * The workload is bench_proto.c's: waiters in epoll_wait() on one set, a
 * writer, and a canceller that replaces items and deletes the old ones.
 * How an item is deleted while a waiter may hold its event is a protocol
 * (protocol.h), one file each, shared with the server; bench_proto.c is
 * the bench's driver of them.
 */
#ifndef EPOLL_DISABLE_BENCH_H
#define EPOLL_DISABLE_BENCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>

#include "protocol.h"

#define MAX_LIST	16
/* Reclaim latency samples kept, at most */
#define MAX_SAMPLES	(1L << 20)
/* Load before the counters are read at the start of the window */
#define WARMUP_US	100000L
/* Freed items stay poisoned this long (in frees) before free() */
#define QUARANTINE	65536

enum mode { MODE_OPS, MODE_PROTO, MODE_RECLAIM, MODE_BURST };

struct bench_opt {
	enum mode mode;
	int sizes[MAX_LIST], nr_sizes;
	int waiters[MAX_LIST], nr_waiters;
	const struct protocol *protocols[MAX_LIST];
	int nr_protocols;
	int timeouts[MAX_LIST], nr_timeouts;
	int runs;
	double seconds;
	long iterations;
	int batch;
	int first;		/* -o: the protocol each sweep starts with */
	int delay_us;
	long cancel_rate;
	long write_rate;
	unsigned int seed;
	const char *prefix;
};

extern struct bench_opt opt;
extern bool has_disable;
extern int exit_status;

rlim_t raise_nofile(rlim_t need);

/* -M ops (bench_ops.c) */
void run_ops(int size);

/* -M proto and -M reclaim (bench_proto.c) */
void run_protos(void);
extern const struct driver bench_driver;

/* -M burst (bench_burst.c) */
void run_bursts(void);

/* epoll_disable_bench.c: the output, for bench_driver */
void bench_vout(const char *fmt, va_list ap);
void bench_vfail(const char *fmt, va_list ap);

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
	char first_error[160];
};

extern struct bench_run B;

/* What -M burst takes of the driver: its own setup, writer and deleter */
struct item *item_new(void);
void *proto_waiter(void *arg);
void totals(struct totals *t);
void quarantine_empty(void);
void proto_teardown(void);
/* The burst's deleter, while it shrinks the set: time its DELs */
extern __thread bool time_dels;
/* The burst's: free an item's buffer, at its reclaimed() */
void burst_state_free(struct item *it);

#endif /* EPOLL_DISABLE_BENCH_H */
