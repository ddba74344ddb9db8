/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the bench's files share: the options, the output, and for -M proto
 * and -M reclaim the workload (struct item, struct waiter, the run's state
 * P) and the deletion protocols it drives (struct protocol).
 *
 * The workload is epoll_disable_bench.c's: waiters in epoll_wait() on one
 * set, a writer, and a canceller that replaces items and deletes the old
 * ones.  How an item is deleted while a waiter may hold its event is a
 * protocol, one file each (proto_<name>.c), which fills in a struct
 * protocol; protocols.h lists them, one line each.  bench_proto.c is the
 * driver: it calls the protocol's operations and nothing else of it.
 */
#ifndef EPOLL_DISABLE_BENCH_H
#define EPOLL_DISABLE_BENCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/resource.h>

#include "epoll_disable_util.h"
#include "epoll_disable_uring.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#define MAX_LIST	16
#define CACHELINE	64
/* -T -1: waiters wait in epoll_wait() for ever */
#define NO_TIMEOUT	-1
/* -T -1: the canceller wakes a waiter it waits for at most this often */
#define KICK_EVERY_US	1000
/* Reclaim latency samples kept, at most */
#define MAX_SAMPLES	(1L << 20)
/* Load before the counters are read at the start of the window */
#define WARMUP_US	100000L
/* Freed items stay poisoned this long (in frees) before free() */
#define QUARANTINE	65536

enum mode { MODE_OPS, MODE_PROTO, MODE_RECLAIM, MODE_BURST };

struct protocol;

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

void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
rlim_t raise_nofile(rlim_t need);

/* -M ops (bench_ops.c) */
void run_ops(int size);

/* -M proto and -M reclaim (bench_proto.c) */
void run_protos(void);

/* -M burst (bench_burst.c) */
void run_bursts(void);

/* What the application keeps per item whatever the protocol */
struct item_core {
	int fd[2];		/* fd[0] is watched; the writer uses fd[1] */
	unsigned int events;
};

/*
 * An item: the core, the bench's own bookkeeping, and the fields the
 * protocols need of it (a protocol's own struct, for bytes_per_item, is
 * in its file)
 */
struct item {
	struct item_core c;
	/* the tag: ITEM_POISON once freed; the lock: disable, naive, genslot */
	struct item_guard g;
	atomic_bool dead;	/* deferred: deleted */
	union {
		struct qsbr_node retired;	/* deferred: the retire list */
		struct item *next;	/* genslot: the free list */
	};
	long long decided;	/* when the canceller chose to delete it */
	bool timed;		/* it did so in the timed window */
	uint32_t gen, idx;	/* genslot: the slot's generation and index */
	unsigned long born;	/* genslot, the bench's: births at ADD */
	int home;		/* uring: the waiter whose ring polls it */
	bool cancelling;	/* uring: its waiter has cancelled its poll */
	char *buf;		/* -M burst: the connection's buffer, or NULL */
	size_t buf_len;
};

/* The writer's way to an item: the canceller swaps it under the lock */
struct slot {
	pthread_mutex_t lock;
	struct item *it;
};

struct waiter {
	pthread_t thread;
	atomic_ulong qs;	/* deferred: QSBR's counter */
	atomic_ulong events;	/* handled: read and re-armed */
	atomic_ulong late;	/* touched an item after it was freed */
	atomic_ulong stale;	/* an event of an item already deleted */
	atomic_ulong owner_deletes;	/* deleted by the event's holder */
	atomic_ulong kicks;	/* -T -1: woken by a signal */
	atomic_ulong sys;	/* io_uring_enter() and epoll_*() calls */
	atomic_ulong empty;	/* uring: an event whose read found nothing */
	unsigned long seen;	/* genslot: births when its wait returned */
	long long kicked;	/* the canceller's: when it last did */
	struct ring_home home;	/* uring: its ring, the canceller's messages */
} __attribute__((aligned(CACHELINE)));

/* Reclaim latencies: ns from the decision to delete to the free */
struct samples {
	long long *v;
	atomic_long n;		/* taken; those past MAX_SAMPLES are lost */
};

/* Counts over every waiter, read at the window's ends */
struct totals {
	unsigned long events, deletions, late, stale, owner_deletes, kicks;
	unsigned long sys, waiter_sys, empty;
};

/* One run's state, whatever the protocol: bench_proto.c's */
struct proto {
	const struct protocol *protocol;
	int n, nr_waiters;
	int timeout;		/* waiters' epoll_wait() timeout, ms */
	int epfd, quitfd;
	struct slot *slots;
	struct waiter *waiters;
	atomic_bool quit;
	atomic_ulong deletions, busy, errors;
	atomic_ulong canceller_sys;	/* its io_uring_enter(), epoll_*() */
	/* reclaim: the timed window, and what was deleted in it */
	struct samples reclaim;
	atomic_llong window_start, window_end;
	atomic_bool draining, drained;
	atomic_long pending;	/* deleted in the window, not yet freed */
	long pending_peak;
	double pending_sum;	/* sampled at each deletion in the window */
	unsigned long pending_samples;
	char first_error[160];
};

extern struct proto P;

/*
 * A deletion protocol: what the driver asks of it.  Every operation but
 * name, event and cancel may be NULL, which means "nothing to do" (for
 * alloc, unalloc, add and teardown_item: the plain way, below).
 */
struct protocol {
	const char *name;
	/* needs EPOLL_CTL_DISABLE: skipped on a kernel without it */
	bool needs_disable;
	/* unsafe: late touches are what it shows, not a failure */
	bool unsafe;

	/* Before the items are made (state of its own, zeroed per run) */
	int (*setup)(void);
	/* An item's memory, and giving it back unused */
	struct item *(*alloc)(void);
	void (*unalloc)(struct item *it);
	/* Put a new item in the set: 0, or an errno */
	int (*add)(struct item *it);
	/* A socketpair() failed with EMFILE or ENFILE: free what it may */
	bool (*out_of_fds)(void);

	/* A waiter's whole loop instead of the driver's epoll_wait() one */
	void *(*run_waiter)(struct waiter *w);
	/* Before each epoll_wait(); after one that handed out no event */
	void (*wait_begin)(struct waiter *w);
	void (*wait_none)(struct waiter *w);
	/* Right after epoll_wait() handed out an event */
	void (*woken)(struct waiter *w);
	/* The owner's handling of the event it was handed */
	void (*event)(struct waiter *w, epoll_data_t data);

	/* The canceller: at its start and end, and before each step */
	int (*canceller_begin)(void);
	void (*canceller_end)(void);
	void (*canceller_tick)(void);
	/* Delete @it, which the writer can no longer reach, and free it */
	void (*cancel)(struct item *it);

	/*
	 * Once the waiters are started, before the writer and canceller;
	 * once the canceller is gone: the timed items it still holds
	 */
	void (*started)(void);
	void (*unfreed)(void);
	/* What it reports beside the figures, and may fail the run on */
	void (*report)(int waiters, const struct totals *t);
	/*
	 * What it needs per item in user space: the size of the struct it
	 * would use (with its padding), plus its shared structures divided
	 * by the number of items.  Not counted: the tag (the bench's
	 * detector), the quarantine and the writer's slot table (the same
	 * for all), and the kernel's own cost (epitem, socket) of items a
	 * protocol keeps open until they are freed.
	 */
	double (*bytes_per_item)(void);
	/* At the end of the run: an item still in the set, then the rest */
	void (*teardown_item)(struct item *it);
	void (*teardown)(void);
};

#define PROTOCOL(name)	extern const struct protocol proto_##name;
#include "protocols.h"
#undef PROTOCOL

extern const struct protocol *const protocols[];
extern const unsigned int nr_protocols;

/* What the protocols share with the driver (bench_proto.c) */
void error_at(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sys_call(void);
void count(atomic_ulong *c);
void sample_add(struct samples *s, long long v);
void reclaimed(struct item *it);
void item_release(struct item *it);
void item_free(struct item *it);
void item_close(struct item *it);
void item_del(struct item *it, bool close_fds);
void item_handle(struct waiter *w, struct item *it, epoll_data_t data,
		 bool may_be_gone);
int item_add(struct item *it, epoll_data_t data);
void locked_event(struct waiter *w, epoll_data_t data);
void kick(struct waiter *w);

/* What -M burst takes of the driver: its own setup, writer and deleter */
struct item *item_new(void);
void *proto_waiter(void *arg);
void totals(struct totals *t);
void quarantine_empty(void);
void proto_teardown(void);
/* The burst's: free an item's buffer, at its reclaimed() */
void burst_state_free(struct item *it);

#endif /* EPOLL_DISABLE_BENCH_H */
