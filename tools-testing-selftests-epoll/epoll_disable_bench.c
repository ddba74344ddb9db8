// SPDX-License-Identifier: GPL-2.0
/*
 * epoll_disable_bench - what EPOLL_CTL_DISABLE costs, and what it buys.
 *
 * "-M ops" times single epoll_ctl() calls on a set of N eventfds, all
 * EPOLLIN | EPOLLONESHOT: DISABLE of an armed item (returns 0), DISABLE of
 * a delivered item (EBUSY), EPOLL_CTL_MOD, EPOLL_CTL_DEL and EPOLL_CTL_ADD.
 *
 * "-M proto" runs the workload of epoll_disable_test for a fixed time:
 * reader threads in epoll_wait() on one set of N EPOLLONESHOT socketpairs,
 * a writer writing bytes to random items and a churn thread that deletes
 * a random item and puts a new one in its place, over and over. How an
 * item is deleted safely while readers may hold its event is the protocol:
 *
 *   disable   per-item mutex, EPOLL_CTL_DISABLE, "delete when done": on
 *             EBUSY the reader holding the event deletes the item
 *   global    one mutex held across epoll_wait() and the handling of the
 *             event, and by the churn thread around delete and free (the
 *             churn thread goes first when it waits)
 *   deferred  no kernel help: EPOLL_CTL_DEL at once, then free the item
 *             only when every reader has passed a quiescent point since
 *             (QSBR: a global epoch, one counter per reader)
 *   naive     EPOLL_CTL_DEL and free under the item mutex: unsafe
 *
 * Freed items are poisoned and kept in a quarantine for a while before
 * they really go back to malloc, so that a reader that touches an item
 * after it was freed (a use-after-free in a real program) is counted as a
 * late touch instead of crashing. Only naive may have late touches: if a
 * safe protocol has any, the run fails (exit 1). The timings are reported,
 * never judged.
 *
 * Output is CSV on stdout (lines starting with '#' are comments), kind
 * "ops" or "proto" first; -P puts a prefix before every line, so that the
 * lines can be picked out of a console log.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
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

/* Not in the C library's <sys/epoll.h>; the value is the kernel's ABI. */
#ifndef EPOLL_CTL_DISABLE
#define EPOLL_CTL_DISABLE 4
#endif

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#define ITEM_LIVE	0x600dcafeU
#define ITEM_POISON	0xdeadbeefU

#define MAX_LIST	16
#define CACHELINE	64
/* Readers wake up this often without events (a quiescent point too) */
#define READER_TIMEOUT_MS	10
/* Load before the counters are read at the start of the window */
#define WARMUP_US	100000L
/* deferred: look for items to free every this many retirements */
#define RECLAIM_BATCH	32
/* Freed items stay poisoned this long (in frees) before free() */
#define QUARANTINE	65536

enum mode { MODE_OPS, MODE_PROTO };
enum protocol { PROTO_DISABLE, PROTO_GLOBAL, PROTO_DEFERRED, PROTO_NAIVE };

static const char *const protocol_names[] = {
	[PROTO_DISABLE] = "disable",
	[PROTO_GLOBAL] = "global",
	[PROTO_DEFERRED] = "deferred",
	[PROTO_NAIVE] = "naive",
};

static struct {
	enum mode mode;
	int sizes[MAX_LIST], nr_sizes;
	int readers[MAX_LIST], nr_readers;
	int protocols[MAX_LIST], nr_protocols;
	int runs;
	double seconds;
	long iterations;
	int batch;
	int delay_us;
	long churn_rate;
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

static bool have_disable;
static int exit_status;

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

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000L, (us % 1000000L) * 1000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* xorshift64*: one state per thread, no locks */
static unsigned long rnd_next(unsigned long *s)
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
 * it has the op, 0 if not, -1 if it claims the op but gets it wrong.
 */
static int probe(char *why, size_t len)
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
 * that undoes DEL. The two clock reads add their cost once per batch, not
 * once per op. The median and the 10th and 90th percentiles are over the
 * batches. Items in a batch follow a random permutation of the set, so the
 * lookup walks the whole red-black tree, not one hot path.
 */
enum op { OP_DISABLE_ARMED, OP_DISABLE_DELIVERED, OP_MOD, OP_DEL, OP_ADD,
	  NR_OPS };

static const char *const op_names[] = {
	[OP_DISABLE_ARMED] = "disable_armed",
	[OP_DISABLE_DELIVERED] = "disable_delivered",
	[OP_MOD] = "mod",
	[OP_DEL] = "del",
	[OP_ADD] = "add",
};

struct ops_set {
	int ep;
	int n;
	int *fd;
	int *perm;
	unsigned long bad[NR_OPS];	/* calls that returned the wrong thing */
	int first_errno[NR_OPS];
};

static int ctl(int ep, int op, int fd, unsigned int idx)
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
		err = ctl(s->ep, EPOLL_CTL_ADD, s->fd[i], i);
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

/* Time @op on the batch's items; returns ns per op */
static double ops_time(struct ops_set *s, const int *b, int nb, enum op which)
{
	static const int ctl_op[NR_OPS] = {
		[OP_DISABLE_ARMED] = EPOLL_CTL_DISABLE,
		[OP_DISABLE_DELIVERED] = EPOLL_CTL_DISABLE,
		[OP_MOD] = EPOLL_CTL_MOD,
		[OP_DEL] = EPOLL_CTL_DEL,
		[OP_ADD] = EPOLL_CTL_ADD,
	};
	int want = which == OP_DISABLE_DELIVERED ? EBUSY : 0;
	int i, op = ctl_op[which], got[nb];
	long long t0, t1;

	t0 = now_ns();
	for (i = 0; i < nb; i++)
		got[i] = ctl(s->ep, op, s->fd[b[i]], b[i]);
	t1 = now_ns();
	for (i = 0; i < nb; i++)
		expect_ctl(s, which, got[i], want);
	return (double)(t1 - t0) / nb;
}

/* Untimed: re-arm the batch's items after DISABLE */
static void ops_rearm(struct ops_set *s, const int *b, int nb)
{
	int i;

	for (i = 0; i < nb; i++)
		expect_ctl(s, OP_MOD, ctl(s->ep, EPOLL_CTL_MOD, s->fd[b[i]],
					  b[i]), 0);
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
		if (have_disable) {
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
		v[OP_ADD][r] = ops_time(&s, b, nb, OP_ADD);
	}
	out("# ops: %d items, %d batches of %d, %.2f s", s.n, rounds, nb,
	    (now_ns() - t0) / 1e9);
	for (w = 0; w < NR_OPS; w++) {
		if (!have_disable && (w == OP_DISABLE_ARMED ||
				      w == OP_DISABLE_DELIVERED))
			continue;
		if (s.bad[w])
			fail("%s on %d items: %lu calls did not return %s (first: %s)",
			     op_names[w], s.n, s.bad[w],
			     w == OP_DISABLE_DELIVERED ? "EBUSY" : "0",
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
	unsigned int tag;	/* ITEM_LIVE, ITEM_POISON once freed */
	pthread_mutex_t lock;	/* disable, deferred, naive */
	bool stop;		/* disable: to be deleted; deferred: deleted */
	unsigned long epoch;	/* deferred: retired in this epoch */
	struct item *next;	/* deferred: retire list */
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
 *   deferred  the core, a mutex, the deleted flag, the retire epoch and
 *             link; one cache line per reader (its quiescent counter),
 *             one for the global epoch and the list head; and the items
 *             waiting on the retire list (its mean length, sampled at
 *             each retirement), whole
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
	pthread_mutex_t lock;
	bool dead;
	unsigned long epoch;
	struct item_deferred *next;
};

/* The writer's way to an item: the churn thread swaps it under the lock */
struct slot {
	pthread_mutex_t lock;
	struct item *it;
};

struct reader {
	pthread_t thread;
	atomic_ulong qs;	/* deferred: epoch at its last quiescent point */
	atomic_ulong events;	/* handled: read and re-armed */
	atomic_ulong late;	/* touched an item after it was freed */
	atomic_ulong stale;	/* an event of an item already deleted */
	atomic_ulong owner_deletes;	/* disable: deleted after EBUSY */
} __attribute__((aligned(CACHELINE)));

static struct proto {
	enum protocol protocol;
	int n, nr_readers;
	int epfd, quitfd;
	struct slot *slots;
	struct reader *readers;
	pthread_mutex_t global;
	pthread_mutex_t gate;	/* global: held by the deleter while it waits */
	atomic_bool churn_waits;	/* global: the deleter wants the lock */
	atomic_bool quit;
	atomic_ulong deletions, busy, errors;
	atomic_ulong gp;	/* deferred: the global epoch */
	struct item *retire_head, *retire_tail;
	long retired, peak_retired;
	double backlog_sum;	/* deferred: retire list length, summed */
	unsigned long retirements;
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

static struct {
	pthread_mutex_t lock;
	struct item *ring[QUARANTINE];
	long head, len;
} quarantine = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void item_release(struct item *it)
{
	pthread_mutex_destroy(&it->lock);
	free(it);
}

/* "free": poison the item and keep it for QUARANTINE more frees */
static void item_free(struct item *it)
{
	struct item *old = NULL;

	it->tag = ITEM_POISON;
	pthread_mutex_lock(&quarantine.lock);
	if (quarantine.len == QUARANTINE) {
		old = quarantine.ring[quarantine.head];
		quarantine.ring[quarantine.head] = it;
		quarantine.head = (quarantine.head + 1) % QUARANTINE;
	} else {
		quarantine.ring[(quarantine.head + quarantine.len++) %
				QUARANTINE] = it;
	}
	pthread_mutex_unlock(&quarantine.lock);
	if (old)
		item_release(old);
}

static void quarantine_drain(void)
{
	while (quarantine.len) {
		item_release(quarantine.ring[quarantine.head]);
		quarantine.head = (quarantine.head + 1) % QUARANTINE;
		quarantine.len--;
	}
	quarantine.head = 0;
}

static void item_close(struct item *it)
{
	close(it->c.fd[0]);
	close(it->c.fd[1]);
}

/* Remove an item from the set; @close_fds unless deferred */
static void item_del(struct item *it, bool close_fds)
{
	if (epoll_ctl(P.epfd, EPOLL_CTL_DEL, it->c.fd[0], NULL))
		error_at("EPOLL_CTL_DEL of fd %d: %s", it->c.fd[0],
			 strerror(errno));
	atomic_fetch_add_explicit(&P.deletions, 1, memory_order_relaxed);
	if (close_fds)
		item_close(it);
}

static void deferred_reclaim(bool all);

static struct item *item_new(void)
{
	struct item *it = calloc(1, sizeof(*it));
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
			free(it);
			return NULL;
		}
		deferred_reclaim(false);
		sleep_us(1000);
	}
	pthread_mutex_init(&it->lock, NULL);
	it->tag = ITEM_LIVE;
	it->c.events = EPOLLIN | EPOLLONESHOT;
	ev.events = it->c.events;
	ev.data.ptr = it;
	if (epoll_ctl(P.epfd, EPOLL_CTL_ADD, it->c.fd[0], &ev)) {
		error_at("EPOLL_CTL_ADD: %s", strerror(errno));
		item_close(it);
		item_release(it);
		return NULL;
	}
	return it;
}

/* For an event this reader owns: drain the socket, re-arm the item */
static void item_handle(struct reader *r, struct item *it)
{
	struct epoll_event ev = { .events = it->c.events, .data.ptr = it };
	char buf[256];
	ssize_t n;

	while ((n = read(it->c.fd[0], buf, sizeof(buf))) > 0)
		;
	if (n < 0 && errno != EAGAIN)
		error_at("read of fd %d: %s", it->c.fd[0], strerror(errno));
	if (epoll_ctl(P.epfd, EPOLL_CTL_MOD, it->c.fd[0], &ev))
		error_at("EPOLL_CTL_MOD of fd %d: %s", it->c.fd[0],
			 strerror(errno));
	atomic_fetch_add_explicit(&r->events, 1, memory_order_relaxed);
}

static void count(atomic_ulong *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/*
 * global: a plain mutex lets the reader that just unlocked it take it
 * again at once, before a woken waiter runs, and the deleter starves (no
 * deletions at all with 64 readers). So the deleter says that it waits,
 * and readers let it go first: a correct protocol that also deletes.
 */
static void global_lock_reader(void)
{
	if (atomic_load_explicit(&P.churn_waits, memory_order_relaxed)) {
		/* sleep until the deleter has the lock */
		pthread_mutex_lock(&P.gate);
		pthread_mutex_unlock(&P.gate);
	}
	pthread_mutex_lock(&P.global);
}

static void global_lock_churn(void)
{
	pthread_mutex_lock(&P.gate);
	atomic_store(&P.churn_waits, true);
	pthread_mutex_lock(&P.global);
	atomic_store(&P.churn_waits, false);
	pthread_mutex_unlock(&P.gate);
}

static void *reader(void *arg)
{
	struct reader *r = arg;
	struct epoll_event ev;
	struct item *it;
	int n;

	for (;;) {
		/*
		 * deferred: the quiescent point. This thread holds no item:
		 * whatever its last epoll_wait() returned has been handled,
		 * and the next one starts after every deletion of an epoch
		 * up to this one, so it cannot return those items.
		 */
		if (P.protocol == PROTO_DEFERRED)
			atomic_store(&r->qs, atomic_load(&P.gp));
		if (P.protocol == PROTO_GLOBAL)
			global_lock_reader();
		n = epoll_wait(P.epfd, &ev, 1, READER_TIMEOUT_MS);
		if (n <= 0 || !ev.data.ptr) {
			if (P.protocol == PROTO_GLOBAL)
				pthread_mutex_unlock(&P.global);
			if (n < 0 && errno != EINTR) {
				error_at("epoll_wait: %s", strerror(errno));
				return NULL;
			}
			if (n > 0)
				return NULL;	/* quitfd: the run is over */
			continue;
		}
		it = ev.data.ptr;

		/* The window in which the item may be freed under us */
		if (opt.delay_us)
			sleep_us(opt.delay_us);

		if (P.protocol == PROTO_GLOBAL) {
			/* nobody deletes while we hold the global lock */
			if (it->tag != ITEM_LIVE)
				count(&r->late);
			else
				item_handle(r, it);
			pthread_mutex_unlock(&P.global);
			continue;
		}

		pthread_mutex_lock(&it->lock);
		if (it->tag != ITEM_LIVE) {
			count(&r->late);
			pthread_mutex_unlock(&it->lock);
		} else if (it->stop && P.protocol == PROTO_DISABLE) {
			/* DISABLE said EBUSY: we own the event, we delete */
			item_del(it, true);
			pthread_mutex_unlock(&it->lock);
			item_free(it);
			count(&r->owner_deletes);
		} else if (it->stop) {
			/* deferred: deleted, not yet freed: leave it */
			count(&r->stale);
			pthread_mutex_unlock(&it->lock);
		} else {
			item_handle(r, it);
			pthread_mutex_unlock(&it->lock);
		}
	}
}

static void *writer(void *arg)
{
	unsigned long s = opt.seed * 0x9e3779b97f4a7c15UL + 1;
	struct slot *sl;

	(void)arg;
	while (!atomic_load_explicit(&P.quit, memory_order_relaxed)) {
		sl = &P.slots[rnd_next(&s) % P.n];
		pthread_mutex_lock(&sl->lock);
		if (write(sl->it->c.fd[1], "x", 1) != 1 && errno != EAGAIN)
			error_at("write: %s", strerror(errno));
		pthread_mutex_unlock(&sl->lock);
	}
	return NULL;
}

/* deferred: the oldest epoch some reader may still hold an item of */
static unsigned long deferred_min_qs(void)
{
	unsigned long min = ULONG_MAX, v;
	int i;

	for (i = 0; i < P.nr_readers; i++) {
		v = atomic_load(&P.readers[i].qs);
		if (v < min)
			min = v;
	}
	return min;
}

/* deferred: free what no reader can hold any more (@all: readers gone) */
static void deferred_reclaim(bool all)
{
	unsigned long min = all ? ULONG_MAX : deferred_min_qs();
	struct item *it;

	while ((it = P.retire_head) && it->epoch <= min) {
		P.retire_head = it->next;
		if (!P.retire_head)
			P.retire_tail = NULL;
		P.retired--;
		item_close(it);
		item_free(it);
	}
}

static void deferred_retire(struct item *it)
{
	/* after the DEL: readers that see this epoch cannot get the item */
	it->epoch = atomic_fetch_add(&P.gp, 1) + 1;
	it->next = NULL;
	if (P.retire_tail)
		P.retire_tail->next = it;
	else
		P.retire_head = it;
	P.retire_tail = it;
	if (++P.retired > P.peak_retired)
		P.peak_retired = P.retired;
	P.backlog_sum += P.retired;
	P.retirements++;
	if (P.retired % RECLAIM_BATCH == 0)
		deferred_reclaim(false);
}

/* Delete (and free) an item the writer can no longer reach */
static void delete_item(struct item *it)
{
	switch (P.protocol) {
	case PROTO_DISABLE:
		pthread_mutex_lock(&it->lock);
		it->stop = true;
		if (!epoll_ctl(P.epfd, EPOLL_CTL_DISABLE, it->c.fd[0], NULL)) {
			item_del(it, true);
			pthread_mutex_unlock(&it->lock);
			item_free(it);
			return;
		}
		if (errno == EBUSY)
			atomic_fetch_add_explicit(&P.busy, 1,
						  memory_order_relaxed);
		else
			error_at("EPOLL_CTL_DISABLE: %s", strerror(errno));
		pthread_mutex_unlock(&it->lock);
		return;
	case PROTO_GLOBAL:
		global_lock_churn();
		item_del(it, true);
		item_free(it);
		pthread_mutex_unlock(&P.global);
		return;
	case PROTO_DEFERRED:
		pthread_mutex_lock(&it->lock);
		it->stop = true;
		item_del(it, false);
		pthread_mutex_unlock(&it->lock);
		deferred_retire(it);
		return;
	case PROTO_NAIVE:
		pthread_mutex_lock(&it->lock);
		item_del(it, true);
		it->tag = ITEM_POISON;
		pthread_mutex_unlock(&it->lock);
		item_free(it);
		return;
	}
}

static void *churn(void *arg)
{
	unsigned long s = opt.seed * 0xbf58476d1ce4e5b9UL + 7;
	long long t0 = now_ns();
	struct item *it, *old;
	struct slot *sl;
	long k;

	(void)arg;
	for (k = 1; !atomic_load_explicit(&P.quit, memory_order_relaxed);
	     k++) {
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
		delete_item(old);
		if (opt.churn_rate) {
			long long due = t0 + k * 1000000000LL / opt.churn_rate,
				  now = now_ns();

			if (due > now)
				sleep_us((due - now) / 1000);
		}
	}
	return NULL;
}

struct totals {
	unsigned long events, deletions, late, stale, owner_deletes;
};

static void totals(struct totals *t)
{
	int i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < P.nr_readers; i++) {
		t->events += atomic_load(&P.readers[i].events);
		t->late += atomic_load(&P.readers[i].late);
		t->stale += atomic_load(&P.readers[i].stale);
		t->owner_deletes += atomic_load(&P.readers[i].owner_deletes);
	}
	t->deletions = atomic_load(&P.deletions);
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
		       (P.nr_readers + 1.0) * CACHELINE / n +
		       mean_backlog() * sizeof(struct item_deferred) / n;
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
	/* Level-triggered, never re-armed: wakes every reader at the end */
	if (epoll_ctl(P.epfd, EPOLL_CTL_ADD, P.quitfd, &ev))
		return -1;
	pthread_mutex_init(&P.global, NULL);
	pthread_mutex_init(&P.gate, NULL);
	P.slots = calloc(P.n, sizeof(*P.slots));
	P.readers = aligned_alloc(CACHELINE, P.nr_readers * sizeof(*P.readers));
	if (!P.slots || !P.readers)
		return -1;
	memset(P.readers, 0, P.nr_readers * sizeof(*P.readers));
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
		item_del(P.slots[i].it, true);
		item_release(P.slots[i].it);
		pthread_mutex_destroy(&P.slots[i].lock);
	}
	deferred_reclaim(true);
	quarantine_drain();
	pthread_mutex_destroy(&P.global);
	pthread_mutex_destroy(&P.gate);
	free(P.slots);
	free(P.readers);
	close(P.epfd);
	close(P.quitfd);
}

static void run_proto(enum protocol protocol, int readers, int n)
{
	struct totals t0, t1, t2;
	pthread_t wthread, cthread;
	long long ns0, ns1;
	double secs;
	int i;

	if (protocol == PROTO_DISABLE && !have_disable)
		return;		/* said once, in main() */
	memset(&P, 0, sizeof(P));
	P.protocol = protocol;
	P.nr_readers = readers;
	P.n = n;
	raise_nofile((rlim_t)4 * n + 4 * QUARANTINE + 256);
	if (proto_setup()) {
		fail("%s setup, %d items: %s", protocol_names[protocol], n,
		     P.errors ? P.first_error : strerror(errno));
		return;
	}
	for (i = 0; i < readers; i++)
		if (pthread_create(&P.readers[i].thread, NULL, reader,
				   &P.readers[i])) {
			fail("pthread_create of reader %d", i);
			exit(1);
		}
	if (pthread_create(&wthread, NULL, writer, NULL) ||
	    pthread_create(&cthread, NULL, churn, NULL)) {
		fail("pthread_create");
		exit(1);
	}

	sleep_us(WARMUP_US);
	totals(&t0);
	ns0 = now_ns();
	sleep_us(opt.seconds * 1e6);
	totals(&t1);
	ns1 = now_ns();

	atomic_store(&P.quit, true);
	pthread_join(wthread, NULL);
	pthread_join(cthread, NULL);
	if (eventfd_write(P.quitfd, 1))
		error_at("write of quitfd: %s", strerror(errno));
	for (i = 0; i < readers; i++)
		pthread_join(P.readers[i].thread, NULL);

	secs = (ns1 - ns0) / 1e9;
	/* late touches over the whole run, with the wind-down */
	totals(&t2);
	if (atomic_load(&P.errors))
		fail("%s, %d readers: %lu unexpected errors, first: %s",
		     protocol_names[protocol], readers,
		     atomic_load(&P.errors), P.first_error);
	if (protocol != PROTO_NAIVE && t2.late)
		fail("%s, %d readers: %lu late touches in a safe protocol",
		     protocol_names[protocol], readers, t2.late);
	if (protocol == PROTO_DISABLE &&
	    atomic_load(&P.busy) != t2.owner_deletes)
		fail("disable, %d readers: %lu EBUSY but %lu owner deletes",
		     readers, atomic_load(&P.busy), t2.owner_deletes);
	out("proto,%s,%d,%d,%.3f,%lu,%.0f,%lu,%.0f,%lu,%.1f",
	    protocol_names[protocol], readers, n, secs,
	    t1.events - t0.events, (t1.events - t0.events) / secs,
	    t1.deletions - t0.deletions,
	    (t1.deletions - t0.deletions) / secs, t2.late, bytes_per_item());
	if (protocol == PROTO_DISABLE)
		out("# disable, %d readers: %lu EBUSY, deleted by the reader",
		    readers, t2.owner_deletes);
	if (protocol == PROTO_DEFERRED)
		out("# deferred, %d readers: retire list %.0f items on average, %ld at most; %lu stale events",
		    readers, mean_backlog(), P.peak_retired, t2.stale);
	proto_teardown();
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s -M ops [-n sizes] [-i iterations] [-b batch]\n"
		"       %s [-M proto] [-p protocols] [-t readers] [-n items]\n"
		"          [-s seconds] [-r runs] [-d delay_us] [-c rate]\n"
		"  lists are comma-separated\n"
		"  -M  ops: ns per epoll_ctl() op; proto: throughput of the\n"
		"      deletion protocols (default)\n"
		"  -n  set sizes (ops, default 10,1000,100000) or items\n"
		"      (proto, default 1000)\n"
		"  -i  ops per op and set size (default %ld)\n"
		"  -b  ops per timed batch (default %d)\n"
		"  -p  disable, global, deferred, naive or all (default all)\n"
		"  -t  reader threads (default 1,2,4,16,64,128)\n"
		"  -s  seconds per run (default %g)\n"
		"  -r  runs of each configuration (default %d)\n"
		"  -d  readers sleep this long between epoll_wait() and\n"
		"      taking the item, to widen the race window (default 0)\n"
		"  -c  deletions per second of the churn thread (default 0:\n"
		"      as fast as it can)\n"
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

	while ((c = getopt(argc, argv, "M:n:i:b:p:t:s:r:d:c:S:P:h")) != -1) {
		switch (c) {
		case 'M':
			if (!strcmp(optarg, "ops"))
				opt.mode = MODE_OPS;
			else if (!strcmp(optarg, "proto"))
				opt.mode = MODE_PROTO;
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
			opt.nr_readers = list(optarg, opt.readers, 1, 4096,
					      argv[0]);
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
			opt.churn_rate = number(optarg, 0, 100000000, argv[0]);
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
	if (!opt.nr_readers)
		opt.nr_readers = list("1,2,4,16,64,128", opt.readers, 1, 4096,
				      argv[0]);
	if (!opt.nr_protocols)
		opt.nr_protocols = protocol_list("all", opt.protocols,
						 argv[0]);
}

int main(int argc, char **argv)
{
	struct utsname u;
	char why[160];
	int avail, run, i, j, k;

	parse(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	srand(opt.seed);
	uname(&u);
	out("# epoll_disable_bench -M %s on Linux %s %s",
	    opt.mode == MODE_OPS ? "ops" : "proto", u.release, u.machine);
	out("# smp %ld", sysconf(_SC_NPROCESSORS_ONLN));

	avail = probe(why, sizeof(why));
	have_disable = avail > 0;
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
		if (opt.churn_rate)
			snprintf(why, sizeof(why), "%ld/s", opt.churn_rate);
		else
			snprintf(why, sizeof(why), "flat out");
		out("# %g s per run, %d runs, delay %d us, churn %s",
		    opt.seconds, opt.runs, opt.delay_us, why);
		out("kind,protocol,readers,items,seconds,events,events_per_s,deletions,deletions_per_s,late_touches,bytes_per_item");
		for (run = 0; run < opt.runs; run++)
			for (k = 0; k < opt.nr_sizes; k++)
				for (i = 0; i < opt.nr_readers; i++)
					for (j = 0; j < opt.nr_protocols; j++)
						run_proto(opt.protocols[j],
							  opt.readers[i],
							  opt.sizes[k]);
	}
	out("# bench done, exit %d", exit_status);
	return exit_status;
}
