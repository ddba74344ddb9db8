// SPDX-License-Identifier: GPL-2.0
/*
 * epoll_disable_bench - what EPOLL_CTL_DISABLE costs, and what it buys.
 *
 * "-M ops" times single epoll_ctl() calls on a set of N eventfds, all
 * EPOLLIN | EPOLLONESHOT: DISABLE of an armed item (returns 0), DISABLE of
 * a delivered item (EBUSY), EPOLL_CTL_MOD, EPOLL_CTL_DEL, EPOLL_CTL_ADD,
 * DISABLE and DEL of an item one after the other (what deleting an item
 * costs with the op), and the floor: EPOLL_CTL_DEL of an fd that is not in
 * the set (ENOENT), which is no more than the syscall, the two fd lookups,
 * ep->mtx and a search of the tree.
 *
 * "-M proto" runs the workload of epoll_disable_test for a fixed time:
 * waiter threads in epoll_wait() on one set of N EPOLLONESHOT socketpairs,
 * a writer writing bytes to random items and a canceller that deletes
 * a random item and puts a new one in its place, over and over. How an
 * item is deleted safely while waiters may hold its event is the protocol:
 *
 *   disable   EPOLL_CTL_DISABLE, "delete when done": 0, the canceller
 *             deletes and frees the item at once; EBUSY, the waiter
 *             holding the event (its owner) does. The item's lock orders
 *             the canceller's stop flag and DISABLE with the owner's
 *             check of the flag and its re-arm (MOD): without it, an
 *             owner that read the flag just before it was set would
 *             re-arm an item that nobody is left to delete. The steps
 *             are epoll_disable.h's, as in the selftest.
 *   global    one mutex held across epoll_wait() and the handling of the
 *             event, and by the canceller around delete and free (the
 *             canceller goes first when it waits)
 *   deferred  no kernel help and no per-item lock: set the item's "dead"
 *             flag, EPOLL_CTL_DEL at once, then free the item (and close
 *             its fds) only when every waiter has come back from the
 *             epoll_wait() it was in at the time (QSBR: a global epoch,
 *             one counter per waiter, a quiescent point before each
 *             epoll_wait()). A waiter that was handed the event of a
 *             dead item drops it; its MOD may meet ENOENT.
 *   genslot   no kernel help: items live in the slots of a slab of the
 *             program's own, never given back to malloc while the set
 *             lives (a deleted item's slot goes on a free list for the
 *             next one), and epoll_data holds the slot's index and a
 *             generation, not a pointer. Deleting: under the slot's
 *             mutex, EPOLL_CTL_DEL and the generation moved on; then the
 *             fds are closed and the slot is free at once. A waiter
 *             takes the mutex of the slot its event names and drops the
 *             event if the generation is not the slot's: the slot is
 *             still valid memory, the item is gone. No use-after-free,
 *             no double delete; but no memory is returned either (the
 *             slab stays at its high-water mark), and the program has
 *             to allocate its items from a slab of its own.
 *   uring     no epoll: io_uring, as epoll_disable_uring.h does it. Each
 *             waiter has a ring of its own and the items whose poll
 *             (IORING_OP_POLL_ADD, multishot) lives there; the canceller
 *             sends the item's waiter a message (IORING_OP_MSG_RING), and
 *             the waiter cancels the poll (IORING_OP_ASYNC_CANCEL) and
 *             frees the item when it reaps the poll's terminal completion
 *             (no IORING_CQE_F_MORE). New items reach their waiter the
 *             same way. A ring per waiter, not one shared by all: a
 *             ring's SQ has one producer and its CQ one consumer, so a
 *             shared ring needs a lock around both, which serialises the
 *             waiters as global does, and the thread that reaps an
 *             item's completions would no longer be the only one to
 *             touch it. Items are dealt to the rings in turn.
 *   naive     EPOLL_CTL_DEL and free under the item mutex: unsafe
 *
 * A waiter blocked in epoll_wait() cannot be taken for quiescent: the
 * wait may already have taken the event of an item that is deleted
 * before the call returns it. So deferred reclamation waits for each
 * waiter's epoll_wait() to return, which its timeout bounds (-T). With
 * no timeout (-T -1) the canceller wakes the waiters it waits for with
 * a signal (epoll_wait() fails with EINTR), and under global it signals
 * the waiter that holds the mutex in epoll_wait().
 *
 * "-M reclaim" runs the same workload and reports, instead of throughput,
 * how long each item deleted in the timed window waited between the
 * canceller's decision to delete it and its free (p50, p99, max) and how
 * many items were deleted but not yet freed (mean over the window, peak).
 * For genslot "freed" is the slot back on the free list, ready for the
 * next item: its memory is never given back, which "-M proto" shows as
 * bytes_per_item, every slot of the slab counted, free ones too.
 * For uring the wait is the message's trip, the waiter's cancel and its
 * reaping of the poll's end.
 * After the window no item is deleted any more, and the run goes on until
 * those waiting are freed (or for twice the timeout and a second more:
 * any left then are counted as unfreed, their age so far their wait).
 *
 * Freed items are poisoned and kept in a quarantine for a while before
 * they really go back to malloc, so that a waiter that touches an item
 * after it was freed (a use-after-free in a real program) is counted as a
 * late touch instead of crashing. Genslot frees no memory: its late touch
 * is a waiter about to read and re-arm a slot that holds no item, or one
 * added after the waiter's epoll_wait() returned (a check of the bench's
 * own, blind to the generation, so that a genslot that skipped or misused
 * it would be caught). Only naive may have late touches: if a safe
 * protocol has any, the run fails (exit 1). The timings are reported,
 * never judged.
 *
 * Each thread counts its io_uring_enter() and epoll_*() calls, and
 * "-M proto" reports them per event handled: all of them, and the
 * waiters' alone. The epoll waiters take one event per epoll_wait();
 * a uring waiter reaps whatever its ring holds per io_uring_enter().
 * It also reports the CPU time the waiters, the writer and the canceller
 * used per second of the window: on two CPUs, with one waiter beside a
 * writer that never sleeps, how the scheduler places the three decides
 * the waiter's share, and with it the events handled. So it reports the
 * CPUs the process may run on too: run under "taskset 1", all threads
 * share one CPU, no placement decides anything, and the events handled
 * measure what each protocol costs per event, every thread's CPU time
 * counted.
 *
 * Output is CSV on stdout (lines starting with '#' are comments), kind
 * "ops" or "proto" first; -P puts a prefix before every line, so that the
 * lines can be picked out of a console log.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

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

enum mode { MODE_OPS, MODE_PROTO, MODE_RECLAIM };
enum protocol { PROTO_DISABLE, PROTO_GLOBAL, PROTO_DEFERRED, PROTO_GENSLOT,
		PROTO_URING, PROTO_NAIVE };

static const char *const protocol_names[] = {
	[PROTO_DISABLE] = "disable",
	[PROTO_GLOBAL] = "global",
	[PROTO_DEFERRED] = "deferred",
	[PROTO_GENSLOT] = "genslot",
	[PROTO_URING] = "uring",
	[PROTO_NAIVE] = "naive",
};

static struct {
	enum mode mode;
	int sizes[MAX_LIST], nr_sizes;
	int waiters[MAX_LIST], nr_waiters;
	int protocols[MAX_LIST], nr_protocols;
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
} opt = {
	.mode = MODE_PROTO,
	.runs = 1,
	.seconds = 2,
	.iterations = 20000,
	.batch = 100,
	.seed = 1,
	.prefix = "",
};

static bool has_disable;
static int exit_status;
static long long *reclaim_samples;

/* One line of output: the prefix, then the text */
static void out(const char *fmt, ...)
{
	va_list ap;

	fputs(opt.prefix, stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void fail(const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	out("# FAIL %s", buf);
	exit_status = 1;
}

/* Raise RLIMIT_NOFILE to @need if we may; returns the soft limit */
static rlim_t raise_nofile(rlim_t need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 1024;
	if (rl.rlim_cur >= need)
		return rl.rlim_cur;
	rl.rlim_cur = need;
	if (rl.rlim_max < need)
		rl.rlim_max = need;	/* root only; fails otherwise */
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		getrlimit(RLIMIT_NOFILE, &rl);
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	getrlimit(RLIMIT_NOFILE, &rl);
	return rl.rlim_cur;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * -M ops
 *
 * Each op is timed alone, as a batch: B different items (B = -b, or the
 * set size if smaller) get the op one after the other between two
 * clock_gettime() calls, and the batch's time divided by B is one sample
 * of ns/op. What an op needs before it (a delivered event for the EBUSY
 * case) and what undoes it (EPOLL_CTL_MOD to re-arm after DISABLE,
 * EPOLL_CTL_ADD after DEL) is done outside the timed batch, so no
 * subtraction of a second measurement is needed; ADD is timed as the op
 * that undoes DEL, and the floor is a second DEL of the batch that DEL
 * just removed. DISABLE then DEL is one timed op, as a deletion under
 * the protocol makes the two calls. The two clock reads add their cost once per batch, not
 * once per op. The median and the 10th and 90th percentiles are over the
 * batches. Items in a batch follow a random permutation of the set, so the
 * lookup walks the whole red-black tree, not one hot path.
 */
enum op { OP_DISABLE_ARMED, OP_DISABLE_DELIVERED, OP_MOD, OP_DEL, OP_ADD,
	  OP_DISABLE_DEL, OP_DEL_MISSING, NR_OPS };

static const char *const op_names[] = {
	[OP_DISABLE_ARMED] = "disable_armed",
	[OP_DISABLE_DELIVERED] = "disable_delivered",
	[OP_MOD] = "mod",
	[OP_DEL] = "del",
	[OP_ADD] = "add",
	[OP_DISABLE_DEL] = "disable_del",
	[OP_DEL_MISSING] = "del_enoent",
};

/* The epoll_ctl() calls each op makes, in order, and what they return */
static const struct {
	int ctl[2];
	int want;
} op_calls[NR_OPS] = {
	[OP_DISABLE_ARMED] = { { EPOLL_CTL_DISABLE } },
	[OP_DISABLE_DELIVERED] = { { EPOLL_CTL_DISABLE }, EBUSY },
	[OP_MOD] = { { EPOLL_CTL_MOD } },
	[OP_DEL] = { { EPOLL_CTL_DEL } },
	[OP_ADD] = { { EPOLL_CTL_ADD } },
	[OP_DISABLE_DEL] = { { EPOLL_CTL_DISABLE, EPOLL_CTL_DEL } },
	[OP_DEL_MISSING] = { { EPOLL_CTL_DEL }, ENOENT },
};

static bool op_uses_disable(enum op which)
{
	return op_calls[which].ctl[0] == EPOLL_CTL_DISABLE;
}

struct ops_set {
	int ep;
	int n;
	int *fd;
	int *perm;
	unsigned long bad[NR_OPS];	/* calls that returned the wrong thing */
	int first_errno[NR_OPS];
};

static int ops_ctl(int ep, int op, int fd, unsigned int idx)
{
	struct epoll_event ev = {
		.events = EPOLLIN | EPOLLONESHOT, .data.u32 = idx,
	};

	return epoll_ctl(ep, op, fd, op == EPOLL_CTL_DISABLE ||
			 op == EPOLL_CTL_DEL ? NULL : &ev) ? errno : 0;
}

static void expect_ctl(struct ops_set *s, enum op which, int got, int want)
{
	if (got == want)
		return;
	if (!s->bad[which]++)
		s->first_errno[which] = got;
}

/* n eventfds in a new set; fewer if the fd or watch limits say so */
static int ops_setup(struct ops_set *s, int n)
{
	rlim_t lim = raise_nofile((rlim_t)n + 64);
	int i, err;

	memset(s, 0, sizeof(*s));
	if (lim < (rlim_t)n + 64) {
		out("# set size %d reduced to %ld: RLIMIT_NOFILE is %lu and cannot be raised",
		    n, (long)lim - 64, (unsigned long)lim);
		n = (long)lim - 64;
	}
	s->ep = epoll_create1(EPOLL_CLOEXEC);
	s->fd = calloc(n, sizeof(*s->fd));
	s->perm = calloc(n, sizeof(*s->perm));
	if (s->ep < 0 || !s->fd || !s->perm)
		return -1;
	for (i = 0; i < n; i++) {
		s->fd[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (s->fd[i] < 0) {
			out("# set size %d reduced to %d: eventfd: %s", n, i,
			    strerror(errno));
			break;
		}
		err = ops_ctl(s->ep, EPOLL_CTL_ADD, s->fd[i], i);
		if (err) {
			/* ENOSPC: /proc/sys/fs/epoll/max_user_watches */
			out("# set size %d reduced to %d: EPOLL_CTL_ADD: %s", n,
			    i, strerror(err));
			close(s->fd[i]);
			break;
		}
	}
	s->n = i;
	for (i = 0; i < s->n; i++)
		s->perm[i] = i;
	for (i = s->n - 1; i > 0; i--) {
		int j = rand() % (i + 1), t = s->perm[i];

		s->perm[i] = s->perm[j];
		s->perm[j] = t;
	}
	return s->n > 0 ? 0 : -1;
}

static void ops_teardown(struct ops_set *s)
{
	int i;

	for (i = 0; i < s->n; i++)
		close(s->fd[i]);
	close(s->ep);
	free(s->fd);
	free(s->perm);
}

/* Time @which on the batch's items; returns ns per op */
static double ops_time(struct ops_set *s, const int *b, int nb, enum op which)
{
	const int *op = op_calls[which].ctl;
	int i, got[nb];
	long long t0, t1;

	t0 = now_ns();
	if (op[1]) {
		for (i = 0; i < nb; i++)
			got[i] = ops_ctl(s->ep, op[0], s->fd[b[i]], b[i]) ?:
				 ops_ctl(s->ep, op[1], s->fd[b[i]], b[i]);
	} else {
		for (i = 0; i < nb; i++)
			got[i] = ops_ctl(s->ep, op[0], s->fd[b[i]], b[i]);
	}
	t1 = now_ns();
	for (i = 0; i < nb; i++)
		expect_ctl(s, which, got[i], op_calls[which].want);
	return (double)(t1 - t0) / nb;
}

/* Untimed: put the batch's items back in the set after a deletion */
static void ops_readd(struct ops_set *s, const int *b, int nb)
{
	int i;

	for (i = 0; i < nb; i++)
		expect_ctl(s, OP_ADD, ops_ctl(s->ep, EPOLL_CTL_ADD,
					      s->fd[b[i]], b[i]), 0);
}

/* Untimed: re-arm the batch's items after DISABLE */
static void ops_rearm(struct ops_set *s, const int *b, int nb)
{
	int i;

	for (i = 0; i < nb; i++)
		expect_ctl(s, OP_MOD, ops_ctl(s->ep, EPOLL_CTL_MOD,
					      s->fd[b[i]], b[i]), 0);
}

/* Untimed: make the batch's items ready and collect their events */
static void ops_deliver(struct ops_set *s, const int *b, int nb)
{
	struct epoll_event ev[nb];
	int i, n, got = 0, tries = 0;

	for (i = 0; i < nb; i++)
		eventfd_write(s->fd[b[i]], 1);
	while (got < nb && tries++ < 100) {
		n = epoll_wait(s->ep, ev, nb - got, 0);
		if (n > 0)
			got += n;
	}
	if (got != nb && !s->bad[OP_DISABLE_DELIVERED]++)
		s->first_errno[OP_DISABLE_DELIVERED] = EAGAIN;
}

/* Untimed: empty the eventfds again, so that the items are idle */
static void ops_undeliver(struct ops_set *s, const int *b, int nb)
{
	eventfd_t v;
	int i;

	for (i = 0; i < nb; i++)
		eventfd_read(s->fd[b[i]], &v);
}

static void print_stats(int n, enum op which, double *v, int k, int nb)
{
	qsort(v, k, sizeof(*v), cmp_double);
	out("ops,%d,%s,%ld,%.1f,%.1f,%.1f", n, op_names[which], (long)k * nb,
	    v[k / 2], v[k * 10 / 100], v[k * 90 / 100]);
}

static void run_ops(int size)
{
	struct ops_set s;
	double *v[NR_OPS];
	int nb, rounds, r, i, w, *b;
	long long t0 = now_ns();

	if (ops_setup(&s, size)) {
		fail("ops setup for %d items: %s", size, strerror(errno));
		return;
	}
	nb = opt.batch < s.n ? opt.batch : s.n;
	rounds = (opt.iterations + nb - 1) / nb;
	for (w = 0; w < NR_OPS; w++)
		v[w] = calloc(rounds, sizeof(double));
	b = calloc(nb, sizeof(*b));
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < nb; i++)
			b[i] = s.perm[((long)r * nb + i) % s.n];
		/* the ops in turn, so that drift hits them alike */
		v[OP_MOD][r] = ops_time(&s, b, nb, OP_MOD);
		if (has_disable) {
			v[OP_DISABLE_ARMED][r] =
				ops_time(&s, b, nb, OP_DISABLE_ARMED);
			ops_rearm(&s, b, nb);
			ops_deliver(&s, b, nb);
			v[OP_DISABLE_DELIVERED][r] =
				ops_time(&s, b, nb, OP_DISABLE_DELIVERED);
			ops_undeliver(&s, b, nb);
			ops_rearm(&s, b, nb);
		}
		v[OP_DEL][r] = ops_time(&s, b, nb, OP_DEL);
		v[OP_DEL_MISSING][r] = ops_time(&s, b, nb, OP_DEL_MISSING);
		v[OP_ADD][r] = ops_time(&s, b, nb, OP_ADD);
		if (has_disable) {
			v[OP_DISABLE_DEL][r] =
				ops_time(&s, b, nb, OP_DISABLE_DEL);
			ops_readd(&s, b, nb);
		}
	}
	out("# ops: %d items, %d batches of %d, %.2f s", s.n, rounds, nb,
	    (now_ns() - t0) / 1e9);
	for (w = 0; w < NR_OPS; w++) {
		if (!has_disable && op_uses_disable(w))
			continue;
		if (s.bad[w])
			fail("%s on %d items: %lu calls did not return %s (first: %s)",
			     op_names[w], s.n, s.bad[w],
			     op_calls[w].want ? strerror(op_calls[w].want) : "0",
			     strerror(s.first_errno[w]));
		print_stats(s.n, w, v[w], rounds, nb);
	}
	for (w = 0; w < NR_OPS; w++)
		free(v[w]);
	free(b);
	ops_teardown(&s);
}

/*
 * -M proto
 */

/* What the application keeps per item whatever the protocol */
struct item_core {
	int fd[2];		/* fd[0] is watched; the writer uses fd[1] */
	unsigned int events;
};

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
	unsigned long born;	/* genslot, the bench's: P.births at ADD */
	int home;		/* uring: the waiter whose ring polls it */
	bool cancelling;	/* uring: its waiter has cancelled its poll */
};

/*
 * bytes_per_item: what each protocol needs per item in user space, as the
 * size of the struct it would use (with its padding), plus its shared
 * structures divided by the number of items. Not counted: the tag (the
 * bench's detector), the quarantine and the writer's slot table (the same
 * for all), and the kernel's own cost (epitem, socket) of items that the
 * deferred protocol keeps open until they are freed.
 *
 *   global    the core, and two mutexes and a flag for the whole set
 *   disable   the core, a mutex and the stop flag
 *   naive     the core and a mutex
 *   deferred  the core, the deleted flag, the retire epoch and link;
 *             one cache line per waiter (its quiescent counter),
 *             one for the global epoch and the list head; and the items
 *             waiting on the retire list (its mean length, sampled at
 *             each retirement), whole
 *   uring     the core, the home ring's index and the cancelling flag;
 *             every ring's mapped SQ, SQEs and CQ, the canceller's too
 *   genslot   the core, a mutex, the generation and the free-list link
 *             (an index) for every slot the slab holds at the end of the
 *             run, free ones too: never given back, they are what the
 *             protocol holds; a pointer per chunk and the free-list head
 *             (the directory's unused entries are not counted: a program
 *             sizes it for its own maximum)
 */
struct item_global {
	struct item_core c;
};

struct item_disable {
	struct item_core c;
	pthread_mutex_t lock;
	bool stop;
};

struct item_naive {
	struct item_core c;
	pthread_mutex_t lock;
};

struct item_deferred {
	struct item_core c;
	atomic_bool dead;
	unsigned long epoch;
	struct item_deferred *next;
};

struct item_uring {
	struct item_core c;
	int home;
	bool cancelling;
};

struct item_genslot {
	struct item_core c;
	pthread_mutex_t lock;
	uint32_t gen;
	uint32_t next;
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
	atomic_ulong owner_deletes;	/* disable: deleted after EBUSY */
	atomic_ulong kicks;	/* -T -1: woken by a signal */
	atomic_ulong sys;	/* io_uring_enter() and epoll_*() calls */
	atomic_ulong empty;	/* uring: an event whose read found nothing */
	long long kicked;	/* the canceller's: when it last did */
	struct ring_home home;	/* uring: its ring, the canceller's messages */
} __attribute__((aligned(CACHELINE)));

/* Reclaim latencies: ns from the decision to delete to the free */
struct samples {
	long long *v;
	atomic_long n;		/* taken; those past MAX_SAMPLES are lost */
};

static struct proto {
	enum protocol protocol;
	int n, nr_waiters;
	int timeout;		/* waiters' epoll_wait() timeout, ms */
	int epfd, quitfd;
	struct slot *slots;
	struct waiter *waiters;
	pthread_mutex_t global;
	pthread_mutex_t gate;	/* global: the canceller's, while it waits */
	atomic_bool canceller_waits;	/* global: it wants the lock */
	atomic_int holder;	/* global: the waiter that has the lock */
	atomic_bool quit;
	atomic_ulong deletions, busy, errors;
	atomic_ulong canceller_sys;	/* its io_uring_enter(), epoll_*() */
	struct qsbr qsbr;	/* deferred */
	struct ring cring;	/* uring: the canceller's, for messages */
	atomic_int ready;	/* uring: waiters with their ring set up */
	int next_home;		/* uring: the ring the next item goes to */
	atomic_long ring_bytes;	/* uring: mapped by every ring */
	long retired, peak_retired;
	double backlog_sum;	/* deferred: retire list length, summed */
	unsigned long retirements;
	struct item *slab_free;	/* genslot: the canceller's */
	long slab_chunks;	/* genslot: chunks in the slab */
	atomic_ulong births;	/* genslot, the bench's: items added */
	/* reclaim: the timed window, and what was deleted in it */
	struct samples reclaim;
	atomic_llong window_start, window_end;
	atomic_bool draining, drained;
	atomic_long pending;	/* deleted in the window, not yet freed */
	long pending_peak;
	double pending_sum;	/* sampled at each deletion in the window */
	unsigned long pending_samples;
	char first_error[160];
} P;

static pthread_mutex_t error_lock = PTHREAD_MUTEX_INITIALIZER;

static void error_at(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&error_lock);
	if (!atomic_fetch_add(&P.errors, 1)) {
		va_start(ap, fmt);
		vsnprintf(P.first_error, sizeof(P.first_error), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&error_lock);
}

/*
 * The calling thread's count of io_uring_enter() and epoll_*() calls:
 * its struct waiter's, or the canceller's; NULL in the main thread,
 * whose calls (setup, teardown) are not the protocol's
 */
static __thread atomic_ulong *sys_calls;

/* Count one such call, just before it is made */
static void sys_call(void)
{
	if (sys_calls)
		atomic_fetch_add_explicit(sys_calls, 1, memory_order_relaxed);
}

/* uring: the canceller's ring, which sends its messages; NULL elsewhere */
static __thread struct ring *msg_ring;

static void *quarantine_ring[QUARANTINE];
static struct quarantine quarantine =
	QUARANTINE_INIT(quarantine_ring, struct item, g);

static void item_release(struct item *it)
{
	pthread_mutex_destroy(&it->g.lock);
	free(it);
}

/* Was the deletion of an item decided at @t in the timed window? */
static bool in_window(long long t)
{
	return t >= atomic_load(&P.window_start) &&
	       t < atomic_load(&P.window_end);
}

static void sample_add(struct samples *s, long long v)
{
	long i = atomic_fetch_add(&s->n, 1);

	if (i < MAX_SAMPLES)
		s->v[i] = v;
}

/* The item's memory may be reused now: count its wait if it was timed */
static void reclaimed(struct item *it)
{
	if (it->timed && !atomic_load(&P.drained)) {
		sample_add(&P.reclaim, now_ns() - it->decided);
		atomic_fetch_sub(&P.pending, 1);
	}
}

/*
 * "free": poison the item and keep it for QUARANTINE more frees; an item
 * deleted in the window is reclaimed now, until the run stops counting
 */
static void item_free(struct item *it)
{
	reclaimed(it);
	it->g.tag = ITEM_POISON;
	quarantine_put(&quarantine, it);
}

static void item_close(struct item *it)
{
	close(it->c.fd[0]);
	close(it->c.fd[1]);
}

/* Remove an item from the set; @close_fds unless deferred */
static void item_del(struct item *it, bool close_fds)
{
	sys_call();
	if (epoll_ctl(P.epfd, EPOLL_CTL_DEL, it->c.fd[0], NULL))
		error_at("EPOLL_CTL_DEL of fd %d: %s", it->c.fd[0],
			 strerror(errno));
	atomic_fetch_add_explicit(&P.deletions, 1, memory_order_relaxed);
	if (close_fds)
		item_close(it);
}

/*
 * genslot: the slab. Its slots come in chunks that are never freed while
 * the set lives, so the slot an event names is memory of the right type
 * whatever became of the item in it; a fixed directory finds a chunk, so
 * growing never moves a slot. Only the canceller adds and deletes
 * items, so the free list and the growth are its own and take no lock.
 */
#define GENSLOT_CHUNK		256
/* 16M slots: more than -n allows */
#define GENSLOT_MAX_CHUNKS	(1 << 16)

static _Atomic(struct item *) genslot_dir[GENSLOT_MAX_CHUNKS];

/* What epoll_data holds: the generation above, the slot's index below */
static uint64_t genslot_key(const struct item *it)
{
	return (uint64_t)it->gen << 32 | it->idx;
}

static struct item *genslot_at(uint64_t key)
{
	uint32_t idx = (uint32_t)key;
	struct item *chunk;

	chunk = atomic_load_explicit(&genslot_dir[idx / GENSLOT_CHUNK],
				     memory_order_acquire);
	return &chunk[idx % GENSLOT_CHUNK];
}

static void genslot_put(struct item *it)
{
	it->next = P.slab_free;
	P.slab_free = it;
}

/* A chunk more, its slots on the free list, lowest index first */
static int genslot_grow(void)
{
	long c = P.slab_chunks, i;
	struct item *chunk;

	if (c == GENSLOT_MAX_CHUNKS)
		return -1;
	chunk = calloc(GENSLOT_CHUNK, sizeof(*chunk));
	if (!chunk)
		return -1;
	for (i = GENSLOT_CHUNK - 1; i >= 0; i--) {
		pthread_mutex_init(&chunk[i].g.lock, NULL);
		chunk[i].idx = c * GENSLOT_CHUNK + i;
		/* never 0: a key of 0 is quitfd's */
		chunk[i].gen = 1;
		chunk[i].g.tag = ITEM_POISON;
		genslot_put(&chunk[i]);
	}
	atomic_store_explicit(&genslot_dir[c], chunk, memory_order_release);
	P.slab_chunks++;
	return 0;
}

static struct item *genslot_get(void)
{
	struct item *it;

	if (!P.slab_free && genslot_grow())
		return NULL;
	it = P.slab_free;
	P.slab_free = it->next;
	return it;
}

/* At the end of the run: the slab goes back to malloc at last */
static void genslot_destroy(void)
{
	struct item *chunk;
	long c, i;

	for (c = 0; c < P.slab_chunks; c++) {
		chunk = atomic_load(&genslot_dir[c]);
		for (i = 0; i < GENSLOT_CHUNK; i++)
			pthread_mutex_destroy(&chunk[i].g.lock);
		free(chunk);
		atomic_store(&genslot_dir[c], NULL);
	}
	P.slab_chunks = 0;
	P.slab_free = NULL;
}

static struct item *item_alloc(void)
{
	struct item *it;

	if (P.protocol == PROTO_GENSLOT)
		return genslot_get();
	it = calloc(1, sizeof(*it));
	if (it)
		pthread_mutex_init(&it->g.lock, NULL);
	return it;
}

/* Give back an item that did not make it into the set */
static void item_unalloc(struct item *it)
{
	if (P.protocol == PROTO_GENSLOT)
		genslot_put(it);
	else
		item_release(it);
}

static void deferred_reclaim(bool all);
static void uring_send(struct item *it, enum ring_tag tag);

static struct item *item_new(void)
{
	struct item *it = item_alloc();
	struct epoll_event ev;
	int tries = 0;

	if (!it)
		return NULL;
	while (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			  0, it->c.fd)) {
		/* deferred: retired items keep their fds until freed */
		if ((errno != EMFILE && errno != ENFILE) || tries++ > 1000 ||
		    P.protocol != PROTO_DEFERRED) {
			error_at("socketpair: %s", strerror(errno));
			item_unalloc(it);
			return NULL;
		}
		deferred_reclaim(false);
		sleep_us(1000);
	}
	it->g.tag = ITEM_LIVE;
	it->c.events = EPOLLIN | EPOLLONESHOT;
	if (P.protocol == PROTO_URING) {
		/* before the waiters run, each arms its own at its start */
		it->home = P.next_home++ % P.nr_waiters;
		if (msg_ring)
			uring_send(it, TAG_ARM);
		return it;
	}
	ev.events = it->c.events;
	sys_call();
	if (P.protocol == PROTO_GENSLOT) {
		/* before the ADD: see genslot_late() */
		it->born = atomic_fetch_add(&P.births, 1) + 1;
		ev.data.u64 = genslot_key(it);
	} else {
		ev.data.ptr = it;
	}
	if (epoll_ctl(P.epfd, EPOLL_CTL_ADD, it->c.fd[0], &ev)) {
		error_at("EPOLL_CTL_ADD: %s", strerror(errno));
		item_close(it);
		it->g.tag = ITEM_POISON;
		item_unalloc(it);
		return NULL;
	}
	return it;
}

/* For an event this waiter owns: drain the socket, re-arm the item */
static void item_handle(struct waiter *w, struct item *it, epoll_data_t data)
{
	struct epoll_event ev = { .events = it->c.events, .data = data };
	char buf[256];
	ssize_t n;

	while ((n = read(it->c.fd[0], buf, sizeof(buf))) > 0)
		;
	if (n < 0 && errno != EAGAIN)
		error_at("read of fd %d: %s", it->c.fd[0], strerror(errno));
	/* deferred: the item may have been deleted since we looked */
	sys_call();
	if (epoll_ctl(P.epfd, EPOLL_CTL_MOD, it->c.fd[0], &ev) &&
	    (errno != ENOENT || P.protocol != PROTO_DEFERRED))
		error_at("EPOLL_CTL_MOD of fd %d: %s", it->c.fd[0],
			 strerror(errno));
	atomic_fetch_add_explicit(&w->events, 1, memory_order_relaxed);
}

static void count(atomic_ulong *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/*
 * global: a plain mutex lets the waiter that just unlocked it take it
 * again at once, before a thread it woke runs, and the canceller starves
 * (no deletions at all with 64 waiters). So the canceller says that it
 * waits, and waiters let it go first: a correct protocol that also
 * deletes.
 */
static void global_lock_waiter(struct waiter *w)
{
	if (atomic_load_explicit(&P.canceller_waits, memory_order_relaxed)) {
		/* sleep until the canceller has the lock */
		pthread_mutex_lock(&P.gate);
		pthread_mutex_unlock(&P.gate);
	}
	pthread_mutex_lock(&P.global);
	atomic_store(&P.holder, w - P.waiters);
}

static void global_unlock_waiter(void)
{
	atomic_store(&P.holder, -1);
	pthread_mutex_unlock(&P.global);
}

/* Wake a waiter out of epoll_wait(): it fails with EINTR */
static void kick(struct waiter *w)
{
	pthread_kill(w->thread, SIGUSR1);
	count(&w->kicks);
}

/*
 * With -T -1 the waiter that holds the lock may wait in epoll_wait() for
 * ever: wake it, and again each KICK_EVERY_US until we have the lock (a
 * signal that lands before its epoll_wait() starts is lost).
 */
static void global_lock_canceller(void)
{
	struct timespec until;
	int h;

	pthread_mutex_lock(&P.gate);
	atomic_store(&P.canceller_waits, true);
	if (P.timeout != NO_TIMEOUT) {
		pthread_mutex_lock(&P.global);
	} else {
		for (;;) {
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += KICK_EVERY_US * 1000L;
			if (until.tv_nsec >= 1000000000L) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000L;
			}
			if (!pthread_mutex_timedlock(&P.global, &until))
				break;
			h = atomic_load(&P.holder);
			if (h >= 0)
				kick(&P.waiters[h]);
		}
	}
	atomic_store(&P.canceller_waits, false);
	pthread_mutex_unlock(&P.gate);
}

/* deferred: an event for an item that a waiter holds, no lock taken */
static void deferred_handle(struct waiter *w, struct item *it)
{
	if (it->g.tag != ITEM_LIVE)
		count(&w->late);
	else if (atomic_load(&it->dead))
		count(&w->stale);	/* deleted, not yet freed: drop it */
	else
		item_handle(w, it, (epoll_data_t){ .ptr = it });
}

/* disable and naive: the owner's step, under the item's lock */
static void locked_handle(struct waiter *w, struct item *it)
{
	switch (owner_lock(&it->g)) {
	case ITEM_DELETED:
		count(&w->late);
		pthread_mutex_unlock(&it->g.lock);
		break;
	case ITEM_STOPPED:
		/* DISABLE said EBUSY: we own the event, we delete */
		item_del(it, true);
		pthread_mutex_unlock(&it->g.lock);
		item_free(it);
		count(&w->owner_deletes);
		break;
	case ITEM_HELD:
		item_handle(w, it, (epoll_data_t){ .ptr = it });
		pthread_mutex_unlock(&it->g.lock);
		break;
	}
}

/*
 * genslot, the bench's own check, blind to the generation (a bug in the
 * protocol's use of it is what it must catch): is the slot free, or does
 * it hold an item added after epoll_wait() returned this event (@seen:
 * P.births then), which cannot be the event's? Either way the waiter is
 * about to read and re-arm the fds of an item that is not the event's,
 * or of none: what a use-after-free becomes when memory is type-stable.
 */
static bool genslot_late(const struct item *it, unsigned long seen)
{
	return it->g.tag != ITEM_LIVE || it->born > seen;
}

/*
 * genslot: the slot is valid memory whatever happened; under its mutex,
 * the generation says whether the item the event was for still lives in
 * it. If not, the event is dropped, and the fds are not touched.
 */
static void genslot_handle(struct waiter *w, epoll_data_t data,
			   unsigned long seen)
{
	struct item *it = genslot_at(data.u64);

	pthread_mutex_lock(&it->g.lock);
	if (it->gen != (uint32_t)(data.u64 >> 32))
		count(&w->stale);	/* deleted since: drop it */
	else if (genslot_late(it, seen))
		count(&w->late);
	else
		item_handle(w, it, data);
	pthread_mutex_unlock(&it->g.lock);
}

/*
 * uring: a waiter's ring holds the polls of the items dealt to it, at
 * most this many SQEs in flight at once (more wait for the next submit),
 * and room for this many completions per item it polls, up to a cap: a
 * fuller CQ ends multishot polls, which the waiter then re-arms
 */
#define URING_SQ		64
#define URING_CQ_PER_ITEM	4
#define URING_CQ_MIN		256
#define URING_CQ_MAX		8192

/*
 * uring: arm @it's poll in this waiter's ring. Only the home waiter
 * submits to its ring.
 */
static void uring_arm(void *arg, void *item)
{
	struct waiter *w = arg;
	struct item *it = item;

	if (!ring_poll(&w->home.ring, it->c.fd[0], it))
		error_at("no SQE for the poll of fd %d", it->c.fd[0]);
}

/*
 * uring: the canceller's message for @it has reached its waiter: cancel
 * the poll. The item is freed at the poll's terminal completion, which
 * this waiter reaps: until then its fds stay open and nobody frees it.
 */
static void uring_cancel(void *arg, void *item)
{
	struct waiter *w = arg;
	struct item *it = item;

	it->cancelling = true;
	w->home.ending++;
	if (!ring_cancel(&w->home.ring, it))
		error_at("no SQE for the cancel of fd %d", it->c.fd[0]);
}

/* uring: the poll's terminal completion of a cancelled item: free it */
static void uring_free(struct waiter *w, struct item *it)
{
	w->home.ending--;
	item_close(it);
	item_free(it);
	count(&w->owner_deletes);
}

/* uring: drain the socket the poll reported ready; no re-arm is needed */
static void uring_read(struct waiter *w, struct item *it)
{
	char buf[256];
	ssize_t n, got = 0;

	while ((n = read(it->c.fd[0], buf, sizeof(buf))) > 0)
		got += n;
	if (n < 0 && errno != EAGAIN)
		error_at("read of fd %d: %s", it->c.fd[0], strerror(errno));
	count(got ? &w->events : &w->empty);
}

/*
 * uring: a completion of @it's poll, reaped by its waiter. A poll that
 * ends by itself (a full CQ ends a multishot poll) is armed again; one
 * that ends after the cancel frees the item.
 */
static void uring_event(void *arg, void *item,
			const struct io_uring_cqe *cqe)
{
	bool more = cqe->flags & IORING_CQE_F_MORE;
	struct waiter *w = arg;
	struct item *it = item;

	/* The window in which the item may be freed under us */
	if (opt.delay_us)
		sleep_us(opt.delay_us);
	if (it->g.tag != ITEM_LIVE) {
		count(&w->late);
		return;
	}
	if (it->cancelling) {
		if (!more)
			uring_free(w, it);
		else
			count(&w->stale);
		return;
	}
	if (cqe->res > 0)
		uring_read(w, it);
	else if (cqe->res != -ECANCELED)
		error_at("poll of fd %d: %s", it->c.fd[0], strerror(-cqe->res));
	if (!more)
		uring_arm(w, it);
}

static const struct home_ops uring_ops = {
	.arm = uring_arm,
	.cancel = uring_cancel,
	.event = uring_event,
};

/*
 * uring: the waiter sets up its ring in its own thread (the ring's only
 * issuer), arms the items dealt to it and quitfd's poll, then reaps and
 * waits. Each io_uring_enter() submits what the last completions asked
 * for (re-arms, cancels) and waits for the next ones.
 */
static void *uring_waiter(struct waiter *w)
{
	unsigned int cq = URING_CQ_PER_ITEM * (P.n / P.nr_waiters + 1);
	int i, err;

	cq = cq < URING_CQ_MIN ? URING_CQ_MIN : cq > URING_CQ_MAX ?
	     URING_CQ_MAX : cq;
	err = home_open(&w->home, URING_SQ, cq, &w->sys, P.quitfd);
	if (err) {
		error_at("io_uring_setup: %s", strerror(err));
		atomic_fetch_add(&P.ready, 1);
		return NULL;
	}
	atomic_fetch_add(&P.ring_bytes, ring_bytes(&w->home.ring));
	/*
	 * The items dealt to this waiter, before the canceller starts: it
	 * waits for every waiter to be ready, and from then on it replaces
	 * the slots' items and sends their waiters the messages. An item
	 * both found here and sent would be polled twice, the poll the
	 * cancel does not end naming it after its free.
	 */
	for (i = 0; i < P.n; i++)
		if (P.slots[i].it->home == w - P.waiters)
			uring_arm(w, P.slots[i].it);
	atomic_fetch_add(&P.ready, 1);
	err = home_run(&w->home, P.timeout, &uring_ops, w);
	if (err)
		error_at("io_uring_enter: %s", strerror(-err));
	if (w->home.cancel_err)
		error_at("cancel of a poll: %s",
			 strerror(-w->home.cancel_err));
	ring_close(&w->home.ring);
	return NULL;
}

static void *waiter(void *arg)
{
	struct waiter *w = arg;
	struct epoll_event ev;
	unsigned long seen = 0;
	struct item *it;
	int n;

	sys_calls = &w->sys;
	if (P.protocol == PROTO_URING)
		return uring_waiter(w);
	for (;;) {
		/*
		 * deferred: the quiescent point. This thread holds no item:
		 * whatever its last epoll_wait() returned has been handled,
		 * and the next one starts after every deletion of an epoch
		 * up to this one, so it cannot return those items.
		 */
		if (P.protocol == PROTO_DEFERRED)
			qsbr_quiescent(&P.qsbr, &w->qs);
		if (P.protocol == PROTO_GLOBAL)
			global_lock_waiter(w);
		sys_call();
		n = epoll_wait(P.epfd, &ev, 1, P.timeout);
		if (n <= 0 || !ev.data.ptr) {
			if (P.protocol == PROTO_GLOBAL)
				global_unlock_waiter();
			if (n < 0 && errno != EINTR) {
				error_at("epoll_wait: %s", strerror(errno));
				return NULL;
			}
			if (n > 0)
				return NULL;	/* quitfd: the run is over */
			continue;
		}
		it = ev.data.ptr;	/* genslot: a key, not a pointer */
		if (P.protocol == PROTO_GENSLOT)
			seen = atomic_load(&P.births);

		/* The window in which the item may be freed under us */
		if (opt.delay_us)
			sleep_us(opt.delay_us);

		switch (P.protocol) {
		case PROTO_GLOBAL:
			/* nobody deletes while we hold the global lock */
			if (it->g.tag != ITEM_LIVE)
				count(&w->late);
			else
				item_handle(w, it, ev.data);
			global_unlock_waiter();
			break;
		case PROTO_DEFERRED:
			deferred_handle(w, it);
			break;
		case PROTO_GENSLOT:
			genslot_handle(w, ev.data, seen);
			break;
		default:
			locked_handle(w, it);
		}
	}
}

/* Sleep until the @k-th step of a thread paced at @rate a second */
static void pace(long long t0, long k, long rate)
{
	long long due, now;

	if (!rate)
		return;
	due = t0 + k * 1000000000LL / rate;
	now = now_ns();
	if (due > now)
		sleep_us((due - now) / 1000);
}

static void *writer(void *arg)
{
	unsigned long s = opt.seed * 0x9e3779b97f4a7c15UL + 1;
	long long t0 = now_ns();
	struct slot *sl;
	long k;

	(void)arg;
	for (k = 1; !atomic_load_explicit(&P.quit, memory_order_relaxed);
	     k++) {
		sl = &P.slots[rnd_next(&s) % P.n];
		pthread_mutex_lock(&sl->lock);
		if (write(sl->it->c.fd[1], "x", 1) != 1 && errno != EAGAIN)
			error_at("write: %s", strerror(errno));
		pthread_mutex_unlock(&sl->lock);
		pace(t0, k, opt.write_rate);
	}
	return NULL;
}

static void deferred_free(struct qsbr_node *n)
{
	struct item *it = qsbr_entry(n, struct item, retired);

	P.retired--;
	item_close(it);
	item_free(it);
}

/*
 * deferred: free what no waiter can hold any more (@all: waiters gone).
 * The retire list is the canceller's, or the main thread's once the
 * canceller is gone.
 */
static void deferred_reclaim(bool all)
{
	qsbr_reclaim(&P.qsbr, all, deferred_free);
}

/*
 * deferred, -T -1: wake the waiters that keep the oldest retired item
 * from being freed, each at most once every KICK_EVERY_US
 */
static void deferred_kick(void)
{
	struct qsbr_node *oldest = P.qsbr.head;
	long long now = now_ns();
	struct waiter *w;
	int i;

	if (!oldest || P.timeout != NO_TIMEOUT)
		return;
	for (i = 0; i < P.nr_waiters; i++) {
		w = &P.waiters[i];
		if (atomic_load(&w->qs) < oldest->epoch &&
		    now - w->kicked >= KICK_EVERY_US * 1000LL) {
			kick(w);
			w->kicked = now;
		}
	}
}

static void deferred_retire(struct item *it)
{
	qsbr_retire(&P.qsbr, &it->retired);
	if (++P.retired > P.peak_retired)
		P.peak_retired = P.retired;
	P.backlog_sum += P.retired;
	P.retirements++;
}

/*
 * genslot: under the slot's mutex, delete the item and move the
 * generation on, so that a waiter holding its event finds it gone when it
 * gets the mutex; the fds are closed after the unlock (once the generation
 * has moved no waiter looks at them), and the slot is free for the next
 * item at once. Its memory is never given back.
 */
static void genslot_delete(struct item *it)
{
	pthread_mutex_lock(&it->g.lock);
	item_del(it, false);
	if (!++it->gen)
		it->gen = 1;	/* never 0: a key of 0 is quitfd's */
	/* the bench's: the slot holds no item */
	it->g.tag = ITEM_POISON;
	pthread_mutex_unlock(&it->g.lock);
	item_close(it);
	genslot_put(it);
	reclaimed(it);
}

/*
 * uring: queue a message to @it's waiter in the canceller's ring; the
 * canceller submits it with the next (uring_flush())
 */
static void uring_send(struct item *it, enum ring_tag tag)
{
	if (!home_send(msg_ring, &P.waiters[it->home].home,
		       ring_data(it, tag)))
		error_at("no SQE for a message");
}

/*
 * uring: submit the canceller's messages, one io_uring_enter() for the
 * new item's and the old one's
 */
static void uring_flush(void)
{
	int err = ring_flush(msg_ring);

	if (err)
		error_at("IORING_OP_MSG_RING: %s", strerror(-err));
}

/* The canceller's step: delete (and free) an item the writer cannot reach */
static void cancel(struct item *it)
{
	int err;

	switch (P.protocol) {
	case PROTO_DISABLE:
		pthread_mutex_lock(&it->g.lock);
		sys_call();
		err = cancel_locked(&it->g, P.epfd, it->c.fd[0]);
		if (!err) {
			item_del(it, true);
			pthread_mutex_unlock(&it->g.lock);
			item_free(it);
			return;
		}
		if (err == EBUSY)
			count(&P.busy);
		else
			error_at("EPOLL_CTL_DISABLE: %s", strerror(err));
		pthread_mutex_unlock(&it->g.lock);
		return;
	case PROTO_GLOBAL:
		global_lock_canceller();
		item_del(it, true);
		item_free(it);
		pthread_mutex_unlock(&P.global);
		return;
	case PROTO_DEFERRED:
		atomic_store(&it->dead, true);
		item_del(it, false);
		deferred_retire(it);
		return;
	case PROTO_GENSLOT:
		genslot_delete(it);
		return;
	case PROTO_URING:
		/* its waiter frees it, at its poll's terminal completion */
		uring_send(it, TAG_CANCEL);
		uring_flush();
		atomic_fetch_add_explicit(&P.deletions, 1,
					  memory_order_relaxed);
		return;
	case PROTO_NAIVE:
		pthread_mutex_lock(&it->g.lock);
		item_del(it, true);
		it->g.tag = ITEM_POISON;
		pthread_mutex_unlock(&it->g.lock);
		item_free(it);
		return;
	}
}

/* Count the items deleted and not yet freed, at each deletion */
static void sample_pending(void)
{
	long v = atomic_load(&P.pending);

	if (v > P.pending_peak)
		P.pending_peak = v;
	P.pending_sum += v;
	P.pending_samples++;
}

/*
 * The canceller: replace a random item by a new one and delete the old
 * one, at the -c rate; deferred reclamation runs here too, between
 * deletions. Once the window is over (draining), only the reclamation
 * goes on.
 */
static void *canceller(void *arg)
{
	unsigned long s = opt.seed * 0xbf58476d1ce4e5b9UL + 7;
	long long t0 = now_ns();
	struct item *it, *old;
	struct slot *sl;
	long k;
	int err;

	(void)arg;
	sys_calls = &P.canceller_sys;
	if (P.protocol == PROTO_URING) {
		err = ring_open(&P.cring, URING_SQ, URING_CQ_MIN,
				&P.canceller_sys);
		if (err) {
			error_at("io_uring_setup: %s", strerror(err));
			return NULL;
		}
		atomic_fetch_add(&P.ring_bytes, ring_bytes(&P.cring));
		msg_ring = &P.cring;
	}
	for (k = 1; !atomic_load_explicit(&P.quit, memory_order_relaxed);
	     k++) {
		if (P.protocol == PROTO_DEFERRED) {
			deferred_reclaim(false);
			deferred_kick();
		}
		if (atomic_load(&P.draining)) {
			sleep_us(100);
			continue;
		}
		sl = &P.slots[rnd_next(&s) % P.n];
		it = item_new();
		if (!it) {
			sleep_us(1000);
			continue;
		}
		pthread_mutex_lock(&sl->lock);
		old = sl->it;
		sl->it = it;
		pthread_mutex_unlock(&sl->lock);
		old->decided = now_ns();
		old->timed = in_window(old->decided);
		if (old->timed) {
			atomic_fetch_add(&P.pending, 1);
			sample_pending();
		}
		cancel(old);
		pace(t0, k, opt.cancel_rate);
	}
	if (msg_ring) {
		ring_close(msg_ring);
		msg_ring = NULL;
	}
	return NULL;
}

struct totals {
	unsigned long events, deletions, late, stale, owner_deletes, kicks;
	unsigned long sys, waiter_sys, empty;
};

static void totals(struct totals *t)
{
	int i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < P.nr_waiters; i++) {
		t->events += atomic_load(&P.waiters[i].events);
		t->late += atomic_load(&P.waiters[i].late);
		t->stale += atomic_load(&P.waiters[i].stale);
		t->owner_deletes += atomic_load(&P.waiters[i].owner_deletes);
		t->kicks += atomic_load(&P.waiters[i].kicks);
		t->waiter_sys += atomic_load(&P.waiters[i].sys);
		t->empty += atomic_load(&P.waiters[i].empty);
	}
	t->deletions = atomic_load(&P.deletions);
	t->sys = t->waiter_sys + atomic_load(&P.canceller_sys);
}

/* CPU time the readers, the writer and the canceller have used */
struct cpu_use {
	double waiters, writer, canceller;
};

static double thread_cpu(pthread_t t)
{
	struct timespec ts;
	clockid_t c;

	if (pthread_getcpuclockid(t, &c) || clock_gettime(c, &ts))
		return 0;
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void cpu_use(struct cpu_use *u, pthread_t wthread, pthread_t cthread)
{
	int i;

	u->waiters = 0;
	for (i = 0; i < P.nr_waiters; i++)
		u->waiters += thread_cpu(P.waiters[i].thread);
	u->writer = thread_cpu(wthread);
	u->canceller = thread_cpu(cthread);
}

/* The CPUs this process may run on: 1 under "taskset 1" */
static int cpus_allowed(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	return CPU_COUNT(&set);
}

/* Calls in the window per event handled in it */
static double per_event(unsigned long calls, const struct totals *t0,
			const struct totals *t1)
{
	unsigned long events = t1->events - t0->events;

	return events ? (double)calls / events : 0;
}

static double mean_backlog(void)
{
	return P.retirements ? P.backlog_sum / P.retirements : 0;
}

static double bytes_per_item(void)
{
	double n = P.n;

	switch (P.protocol) {
	case PROTO_DISABLE:
		return sizeof(struct item_disable);
	case PROTO_GLOBAL:
		return sizeof(struct item_global) +
		       (2 * sizeof(pthread_mutex_t) + 1.0) / n;
	case PROTO_DEFERRED:
		return sizeof(struct item_deferred) +
		       (P.nr_waiters + 1.0) * CACHELINE / n +
		       mean_backlog() * sizeof(struct item_deferred) / n;
	case PROTO_GENSLOT:
		return (P.slab_chunks * (GENSLOT_CHUNK *
					 sizeof(struct item_genslot) +
					 sizeof(struct item *)) +
			sizeof(uint32_t)) / n;
	case PROTO_URING:
		return sizeof(struct item_uring) +
		       atomic_load(&P.ring_bytes) / n;
	case PROTO_NAIVE:
		return sizeof(struct item_naive);
	}
	return 0;
}

static int proto_setup(void)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	int i;

	P.epfd = epoll_create1(EPOLL_CLOEXEC);
	P.quitfd = eventfd(0, EFD_CLOEXEC);
	if (P.epfd < 0 || P.quitfd < 0)
		return -1;
	/* Level-triggered, never re-armed: wakes every waiter at the end */
	if (epoll_ctl(P.epfd, EPOLL_CTL_ADD, P.quitfd, &ev))
		return -1;
	pthread_mutex_init(&P.global, NULL);
	pthread_mutex_init(&P.gate, NULL);
	P.slots = calloc(P.n, sizeof(*P.slots));
	P.waiters = aligned_alloc(CACHELINE, P.nr_waiters * sizeof(*P.waiters));
	if (!P.slots || !P.waiters)
		return -1;
	memset(P.waiters, 0, P.nr_waiters * sizeof(*P.waiters));
	qsbr_init(&P.qsbr, &P.waiters[0].qs, sizeof(P.waiters[0]),
		  P.nr_waiters);
	for (i = 0; i < P.n; i++) {
		pthread_mutex_init(&P.slots[i].lock, NULL);
		P.slots[i].it = item_new();
		if (!P.slots[i].it)
			return -1;
	}
	return 0;
}

static void proto_teardown(void)
{
	int i;

	for (i = 0; i < P.n; i++) {
		if (!P.slots[i].it)
			continue;
		if (P.protocol == PROTO_URING)	/* the rings are gone */
			item_close(P.slots[i].it);
		else
			item_del(P.slots[i].it, true);
		if (P.protocol != PROTO_GENSLOT)
			item_release(P.slots[i].it);
		pthread_mutex_destroy(&P.slots[i].lock);
	}
	deferred_reclaim(true);
	genslot_destroy();
	quarantine_drain(&quarantine);
	pthread_mutex_destroy(&P.global);
	pthread_mutex_destroy(&P.gate);
	free(P.slots);
	free(P.waiters);
	close(P.epfd);
	close(P.quitfd);
}

/*
 * After the window: no more deletions; wait until what was deleted in it
 * is freed, or for twice the waiters' timeout and a second more. Then
 * stop the writer and the canceller, and give the deferred items still
 * waiting their age so far as their wait. Returns how many were not
 * freed.
 */
static long proto_drain(pthread_t wthread, pthread_t cthread)
{
	long drain_ms = P.timeout == NO_TIMEOUT ? 1000 : 2 * P.timeout + 1000;
	long long until = now_ns() + drain_ms * 1000000LL;
	struct qsbr_node *n;
	struct item *it;
	long unfreed;

	atomic_store(&P.draining, true);
	while (atomic_load(&P.pending) > 0 && now_ns() < until)
		sleep_us(1000);
	atomic_store(&P.quit, true);
	pthread_join(wthread, NULL);
	pthread_join(cthread, NULL);
	atomic_store(&P.drained, true);
	unfreed = atomic_load(&P.pending);
	for (n = P.qsbr.head; n; n = n->next) {
		it = qsbr_entry(n, struct item, retired);
		if (it->timed)
			sample_add(&P.reclaim, now_ns() - it->decided);
	}
	return unfreed;
}

/* -M reclaim: the waits of the items deleted in the window */
static void report_reclaim(enum protocol protocol, int waiters, int n,
			   double events_per_s, long unfreed)
{
	long k = atomic_load(&P.reclaim.n);
	long long *v = P.reclaim.v;

	if (k > MAX_SAMPLES) {
		out("# %ld reclaim samples past the first %ld not kept", k -
		    MAX_SAMPLES, MAX_SAMPLES);
		k = MAX_SAMPLES;
	}
	if (!k) {
		fail("%s, %d readers, timeout %d: no deletion in the window",
		     protocol_names[protocol], waiters, P.timeout);
		return;
	}
	qsort(v, k, sizeof(*v), cmp_ll);
	out("reclaim,%s,%d,%d,%d,%ld,%.1f,%.1f,%.1f,%.1f,%ld,%ld,%.0f",
	    protocol_names[protocol], waiters, n, P.timeout, k,
	    v[(k - 1) / 2] / 1e3, v[(k - 1) * 99 / 100] / 1e3,
	    v[k - 1] / 1e3, P.pending_samples ?
	    P.pending_sum / P.pending_samples : 0.0, P.pending_peak,
	    unfreed, events_per_s);
}

static void run_proto(enum protocol protocol, int waiters, int n, int timeout)
{
	struct totals t0, t1, t2;
	struct cpu_use u0, u1;
	pthread_t wthread, cthread;
	long long ns0, ns1;
	long unfreed;
	double secs;
	int i;

	if (protocol == PROTO_DISABLE && !has_disable)
		return;		/* said once, in main() */
	memset(&P, 0, sizeof(P));
	P.protocol = protocol;
	P.nr_waiters = waiters;
	P.n = n;
	P.timeout = timeout;
	atomic_store(&P.holder, -1);
	atomic_store(&P.window_start, LLONG_MAX);
	atomic_store(&P.window_end, LLONG_MAX);
	P.reclaim.v = reclaim_samples;
	raise_nofile((rlim_t)4 * n + 4 * QUARANTINE + 256);
	if (proto_setup()) {
		fail("%s setup, %d items: %s", protocol_names[protocol], n,
		     P.errors ? P.first_error : strerror(errno));
		return;
	}
	for (i = 0; i < waiters; i++)
		if (pthread_create(&P.waiters[i].thread, NULL, waiter,
				   &P.waiters[i])) {
			fail("pthread_create of reader %d", i);
			exit(1);
		}
	/* uring: each waiter's ring is set up before a message is sent */
	while (atomic_load(&P.ready) < waiters && protocol == PROTO_URING)
		sleep_us(1000);
	if (pthread_create(&wthread, NULL, writer, NULL) ||
	    pthread_create(&cthread, NULL, canceller, NULL)) {
		fail("pthread_create");
		exit(1);
	}

	sleep_us(WARMUP_US);
	totals(&t0);
	cpu_use(&u0, wthread, cthread);
	ns0 = now_ns();
	atomic_store(&P.window_start, ns0);
	sleep_us(opt.seconds * 1e6);
	totals(&t1);
	cpu_use(&u1, wthread, cthread);
	ns1 = now_ns();
	atomic_store(&P.window_end, ns1);
	unfreed = proto_drain(wthread, cthread);

	if (eventfd_write(P.quitfd, 1))
		error_at("write of quitfd: %s", strerror(errno));
	for (i = 0; i < waiters; i++)
		pthread_join(P.waiters[i].thread, NULL);

	secs = (ns1 - ns0) / 1e9;
	/* late touches over the whole run, with the wind-down */
	totals(&t2);
	if (atomic_load(&P.errors))
		fail("%s, %d readers: %lu unexpected errors, first: %s",
		     protocol_names[protocol], waiters,
		     atomic_load(&P.errors), P.first_error);
	if (protocol != PROTO_NAIVE && t2.late)
		fail("%s, %d readers: %lu late touches in a safe protocol",
		     protocol_names[protocol], waiters, t2.late);
	if (protocol == PROTO_DISABLE &&
	    atomic_load(&P.busy) != t2.owner_deletes)
		fail("disable, %d readers: %lu EBUSY but %lu owner deletes",
		     waiters, atomic_load(&P.busy), t2.owner_deletes);
	if (opt.mode == MODE_RECLAIM)
		report_reclaim(protocol, waiters, n,
			       (t1.events - t0.events) / secs, unfreed);
	else
		out("proto,%s,%d,%d,%.3f,%lu,%.0f,%lu,%.0f,%lu,%.1f,%.3f,%.3f,%.2f,%.2f,%.2f,%d",
		    protocol_names[protocol], waiters, n, secs,
		    t1.events - t0.events, (t1.events - t0.events) / secs,
		    t1.deletions - t0.deletions,
		    (t1.deletions - t0.deletions) / secs, t2.late,
		    bytes_per_item(), per_event(t1.sys - t0.sys, &t0, &t1),
		    per_event(t1.waiter_sys - t0.waiter_sys, &t0, &t1),
		    (u1.waiters - u0.waiters) / secs,
		    (u1.writer - u0.writer) / secs,
		    (u1.canceller - u0.canceller) / secs, cpus_allowed());
	if (protocol == PROTO_DISABLE)
		out("# disable, %d readers: %lu EBUSY, deleted by the reader",
		    waiters, t2.owner_deletes);
	if (protocol == PROTO_DEFERRED)
		out("# deferred, %d readers: retire list %.0f items on average, %ld at most; %lu stale events",
		    waiters, mean_backlog(), P.peak_retired, t2.stale);
	if (protocol == PROTO_URING)
		out("# uring, %d readers: %lu items freed at their poll's end, %lu events after the cancel, %lu events whose read found nothing, %ld KiB of rings",
		    waiters, t2.owner_deletes, t2.stale, t2.empty,
		    atomic_load(&P.ring_bytes) / 1024);
	if (protocol == PROTO_GENSLOT)
		out("# genslot, %d readers: %ld slots (%ld KiB) held for %d live items, never given back while the set lives; %lu stale events",
		    waiters, P.slab_chunks * GENSLOT_CHUNK,
		    (long)(P.slab_chunks * GENSLOT_CHUNK *
			   sizeof(struct item_genslot) / 1024), n, t2.stale);
	if (t2.kicks)
		out("# %s, %d readers: %lu signals to readers in epoll_wait()",
		    protocol_names[protocol], waiters, t2.kicks);
	proto_teardown();
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s -M ops [-n sizes] [-i iterations] [-b batch]\n"
		"       %s [-M proto|reclaim] [-p protocols] [-t readers] [-n items]\n"
		"          [-T timeouts] [-s seconds] [-r runs] [-d delay_us]\n"
		"          [-c rate] [-w rate] [-o first]\n"
		"  lists are comma-separated\n"
		"  -M  ops: ns per epoll_ctl() op; proto: throughput of the\n"
		"      deletion protocols (default); reclaim: how long a\n"
		"      deleted item waits to be freed under each protocol\n"
		"  -n  set sizes (ops, default 10,1000,100000) or items\n"
		"      (proto, default 1000)\n"
		"  -i  ops per op and set size (default %ld)\n"
		"  -b  ops per timed batch (default %d)\n"
		"  -p  disable, global, deferred, genslot, uring, naive or all\n"
		"      (default all)\n"
		"  -t  reader threads (default 1,2,4,16,64,128)\n"
		"  -s  seconds per run (default %g)\n"
		"  -r  runs of each configuration (default %d)\n"
		"  -d  readers sleep this long between epoll_wait() and\n"
		"      taking the item, to widen the race window (default 0)\n"
		"  -T  the readers' epoll_wait() timeouts in ms, -1 for none\n"
		"      (default 10)\n"
		"  -c  deletions per second of the churn thread (default 0:\n"
		"      as fast as it can)\n"
		"  -w  writes per second of the writer (default 0: as fast\n"
		"      as it can)\n"
		"  -o  start each configuration's protocols at the list's\n"
		"      N-th (from 0), so that sweeps can put a different one\n"
		"      first in the process (default 0)\n"
		"  -S  seed (default %u)\n"
		"  -P  print this before every output line (default none)\n",
		prog, prog, opt.iterations, opt.batch, opt.seconds, opt.runs,
		opt.seed);
	exit(2);
}

static long number(const char *s, long min, long max, const char *prog)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		usage(prog);
	return v;
}

static int list(const char *s, int *v, long min, long max, const char *prog)
{
	char buf[256], *tok, *save;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n == MAX_LIST)
			usage(prog);
		v[n++] = number(tok, min, max, prog);
	}
	if (!n)
		usage(prog);
	return n;
}

static int protocol_list(const char *s, int *v, const char *prog)
{
	char buf[256], *tok, *save;
	unsigned int i;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "all")) {
			for (i = 0; i < ARRAY_SIZE(protocol_names) &&
			     n < MAX_LIST; i++)
				v[n++] = i;
			continue;
		}
		for (i = 0; i < ARRAY_SIZE(protocol_names); i++)
			if (!strcmp(tok, protocol_names[i]))
				break;
		if (i == ARRAY_SIZE(protocol_names) || n == MAX_LIST)
			usage(prog);
		v[n++] = i;
	}
	if (!n)
		usage(prog);
	return n;
}

static void parse(int argc, char **argv)
{
	const char *sizes = NULL;
	char *end;
	int c;

	while ((c = getopt(argc, argv, "M:n:i:b:p:t:T:s:r:d:c:w:o:S:P:h")) != -1) {
		switch (c) {
		case 'M':
			if (!strcmp(optarg, "ops"))
				opt.mode = MODE_OPS;
			else if (!strcmp(optarg, "proto"))
				opt.mode = MODE_PROTO;
			else if (!strcmp(optarg, "reclaim"))
				opt.mode = MODE_RECLAIM;
			else
				usage(argv[0]);
			break;
		case 'n':
			sizes = optarg;
			break;
		case 'i':
			opt.iterations = number(optarg, 1, LONG_MAX, argv[0]);
			break;
		case 'b':
			opt.batch = number(optarg, 1, 100000, argv[0]);
			break;
		case 'p':
			opt.nr_protocols = protocol_list(optarg, opt.protocols,
							 argv[0]);
			break;
		case 't':
			opt.nr_waiters = list(optarg, opt.waiters, 1, 4096,
					      argv[0]);
			break;
		case 'T':
			opt.nr_timeouts = list(optarg, opt.timeouts,
					       NO_TIMEOUT, 60000, argv[0]);
			break;
		case 's':
			opt.seconds = strtod(optarg, &end);
			if (*end || end == optarg || !(opt.seconds > 0) ||
			    opt.seconds > 3600)
				usage(argv[0]);
			break;
		case 'r':
			opt.runs = number(optarg, 1, 1000, argv[0]);
			break;
		case 'd':
			opt.delay_us = number(optarg, 0, 10000000, argv[0]);
			break;
		case 'c':
			opt.cancel_rate = number(optarg, 0, 100000000, argv[0]);
			break;
		case 'w':
			opt.write_rate = number(optarg, 0, 100000000, argv[0]);
			break;
		case 'o':
			opt.first = number(optarg, 0, MAX_LIST - 1, argv[0]);
			break;
		case 'S':
			opt.seed = number(optarg, 0, UINT_MAX, argv[0]);
			break;
		case 'P':
			opt.prefix = optarg;
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc)
		usage(argv[0]);
	if (!sizes)
		sizes = opt.mode == MODE_OPS ? "10,1000,100000" : "1000";
	opt.nr_sizes = list(sizes, opt.sizes, 1, 10000000, argv[0]);
	if (!opt.nr_waiters)
		opt.nr_waiters = list("1,2,4,16,64,128", opt.waiters, 1, 4096,
				      argv[0]);
	if (!opt.nr_protocols)
		opt.nr_protocols = protocol_list("all", opt.protocols,
						 argv[0]);
	if (!opt.nr_timeouts)
		opt.nr_timeouts = list("10", opt.timeouts, NO_TIMEOUT, 60000,
				       argv[0]);
	for (c = 0; c < opt.nr_timeouts; c++)
		if (!opt.timeouts[c])
			usage(argv[0]);	/* waiters would spin */
}

/* SIGUSR1 only interrupts a waiter's epoll_wait() */
static void on_kick(int sig)
{
	(void)sig;
}

static const char *const mode_names[] = {
	[MODE_OPS] = "ops",
	[MODE_PROTO] = "proto",
	[MODE_RECLAIM] = "reclaim",
};

/* Each protocol in turn, from the -o-th of the list on, wrapping round */
static void run_config(int waiters, int n, int timeout)
{
	int j;

	for (j = 0; j < opt.nr_protocols; j++)
		run_proto(opt.protocols[(j + opt.first) % opt.nr_protocols],
			  waiters, n, timeout);
}

/* -M proto and -M reclaim: every configuration, -r times over */
static void run_protos(void)
{
	struct sigaction sa = { .sa_handler = on_kick };
	char rate[32];
	int run, i, k, t;

	/* no SA_RESTART: epoll_wait() is never restarted anyway */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	reclaim_samples = calloc(MAX_SAMPLES, sizeof(*reclaim_samples));
	if (!reclaim_samples) {
		fail("no memory for %ld samples", MAX_SAMPLES);
		return;
	}
	if (opt.cancel_rate)
		snprintf(rate, sizeof(rate), "%ld/s", opt.cancel_rate);
	else
		snprintf(rate, sizeof(rate), "flat out");
	out("# %g s per run, %d runs, delay %d us, churn %s",
	    opt.seconds, opt.runs, opt.delay_us, rate);
	if (opt.write_rate)
		snprintf(rate, sizeof(rate), "%ld/s", opt.write_rate);
	else
		snprintf(rate, sizeof(rate), "flat out");
	out("# writes %s", rate);
	if (opt.mode == MODE_RECLAIM)
		out("kind,protocol,readers,items,timeout_ms,deletions,p50_us,p99_us,max_us,pending_mean,pending_peak,unfreed,events_per_s");
	else
		out("kind,protocol,readers,items,seconds,events,events_per_s,deletions,deletions_per_s,late_touches,bytes_per_item,syscalls_per_event,reader_syscalls_per_event,reader_cpu,writer_cpu,deleter_cpu,cpus");
	for (run = 0; run < opt.runs; run++)
		for (k = 0; k < opt.nr_sizes; k++)
			for (t = 0; t < opt.nr_timeouts; t++)
				for (i = 0; i < opt.nr_waiters; i++)
					run_config(opt.waiters[i],
						   opt.sizes[k],
						   opt.timeouts[t]);
	free(reclaim_samples);
}

int main(int argc, char **argv)
{
	struct utsname u;
	char why[160];
	int avail, run, i;

	parse(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	srand(opt.seed);
	uname(&u);
	out("# epoll_disable_bench -M %s on Linux %s %s",
	    mode_names[opt.mode], u.release, u.machine);
	out("# smp %ld", sysconf(_SC_NPROCESSORS_ONLN));

	avail = disable_usable(why, sizeof(why));
	has_disable = avail > 0;
	if (avail < 0)
		fail("EPOLL_CTL_DISABLE probe: %s", why);
	else if (!avail)
		out("# %s: DISABLE rows skipped", why);

	if (opt.mode == MODE_OPS) {
		out("kind,set_size,op,iterations,median_ns,p10_ns,p90_ns");
		for (run = 0; run < opt.runs; run++)
			for (i = 0; i < opt.nr_sizes; i++)
				run_ops(opt.sizes[i]);
	} else {
		run_protos();
	}
	out("# bench done, exit %d", exit_status);
	return exit_status;
}
