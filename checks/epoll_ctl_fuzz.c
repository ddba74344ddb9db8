// SPDX-License-Identifier: GPL-2.0
/*
 * epoll_ctl_fuzz - a bounded fuzzer of epoll_ctl(2), EPOLL_CTL_DISABLE
 * included, that checks every result it gets against the contract.
 *
 * A few epoll sets (one nested in another) and a pool of files: AF_UNIX
 * socketpairs, eventfds, pipes, an epoll set, a regular file and /dev/null
 * (neither of which can be polled), a closed fd, INT_MAX and -1. Fuzzer
 * threads make a fixed number of epoll_ctl() calls, each with a random op
 * (ADD, MOD, DEL, DISABLE, or an unknown op around them), epfd and fd from
 * the pool, event mask and event pointer: a good one, a misaligned one,
 * NULL, a PROT_NONE page, (void *)1, or one that runs into a PROT_NONE
 * page. Meanwhile waiter threads collect events with epoll_wait(), a
 * writer makes the files ready and drains them, and a churner closes some
 * files and re-creates them in place (dup2() onto the same number), so that
 * items come, go, are delivered and are disabled under the fuzzers' feet.
 *
 * Every result is checked against what do_epoll_ctl() may answer for its
 * arguments, taking its checks in order: EFAULT, and only EFAULT, if the
 * op reads its event and the pointer is bad; EBADF for a closed epfd or
 * fd; EPERM for a file that cannot be polled; EINVAL if epfd is not an
 * epoll set or is fd itself, and for an unknown op; then, by op:
 *
 *   ADD      0, EEXIST, EINVAL, ELOOP, ENOMEM, ENOSPC
 *   MOD      0, ENOENT, EINVAL
 *   DEL      0, ENOENT
 *   DISABLE  0, ENOENT, EINVAL, EBUSY, EALREADY
 *
 * ADD and MOD read the event, DEL does not, and DISABLE refuses any but
 * NULL with EINVAL before it looks at anything else. Before the series an
 * unknown op reads it too, and op 4 is an unknown op: a probe at start
 * finds out which kernel this is. A file the churner owns may be closed at
 * any moment, so for it the outcomes of a closed fd are allowed as well,
 * and where it is both epfd and fd, those of two files of its kind: the
 * kernel looks the number up twice, and may find the old file and the new.
 *
 * Then a sequential phase checks every answer, and what epoll_wait()
 * reports after it, against a model of each item's state (see
 * epoll_ctl_fuzz_seq.c): where the fuzz can only tell an errno the contract
 * allows from one it does not, the model tells the right answer from a
 * wrong one, such as 0 from DISABLE for an item whose event was handed out.
 *
 * Negative controls: "-b" drops EBADF from what the fuzz allows, and "-x"
 * gives the sequential phase a wrong model; either run must fail.
 *
 * Exit status follows kselftest: 0 pass, 1 fail.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "epoll_disable_util.h"
#include "epoll_ctl_fuzz.h"

/* Not in the C library's <sys/epoll.h> of older systems */
#ifndef EPOLLEXCLUSIVE
#define EPOLLEXCLUSIVE	0x10000000U
#endif
#ifndef EPOLLWAKEUP
#define EPOLLWAKEUP	0x20000000U
#endif


/*
 * An outcome as a bit: bit 0 is success, bit e is errno e (e < 63), and
 * bit 63 is EALREADY (114), the one answer past them
 */
unsigned long long outcome(int e)
{
	if (e == EALREADY)
		return 1ULL << 63;
	return e >= 0 && e < 63 ? 1ULL << e : 0;
}

struct fuzz_opt opt = {
	.ops = 200000,
	.threads = 4,
	.waiters = 2,
	.seed = 1,
	.timeout = 120,
};

struct slot pool[NR_SLOTS] = {
	[S_EP_A] = { "epoll set A", K_EPOLL },
	[S_EP_B] = { "epoll set B", K_EPOLL },
	[S_EP_OUTER] = { "outer epoll set", K_EPOLL },
	[S_EP_INNER] = { "inner epoll set", K_EPOLL },
	[S_EP_CHURN] = { "re-created epoll set", K_EPOLL, G_EPOLL },
	[S_SOCK_A0] = { "socket A0", K_SOCK },
	[S_SOCK_A1] = { "socket A1", K_SOCK },
	[S_SOCK_B0] = { "re-created socket B0", K_SOCK, G_SOCK },
	[S_SOCK_B1] = { "re-created socket B1", K_SOCK, G_SOCK },
	[S_EVENTFD] = { "eventfd", K_EVENTFD },
	[S_EVENTFD_CHURN] = { "re-created eventfd", K_EVENTFD, G_EVENTFD },
	[S_PIPE_R] = { "pipe read end", K_PIPE_R },
	[S_PIPE_W] = { "pipe write end", K_PIPE_W },
	[S_PIPE_CHURN_R] = { "re-created pipe read end", K_PIPE_R, G_PIPE },
	[S_PIPE_CHURN_W] = { "re-created pipe write end", K_PIPE_W, G_PIPE },
	[S_FILE] = { "regular file", K_FILE },
	[S_DEVNULL] = { "/dev/null", K_FILE },
	[S_CLOSED] = { "closed fd", K_CLOSED },
	[S_HUGE] = { "fd INT_MAX", K_CLOSED, G_NONE, INT_MAX },
	[S_NEG] = { "fd -1", K_CLOSED, G_NONE, -1 },
};


static const char *const ptr_name[NR_PTRS] = {
	[P_GOOD] = "a good event",
	[P_MISALIGNED] = "a misaligned event",
	[P_NULL] = "a NULL event",
	[P_PROT_NONE] = "a PROT_NONE event",
	[P_ONE] = "event (void *)1",
	[P_STRADDLE] = "an event running into a PROT_NONE page",
};

char *guard;		/* a read-write page, then a PROT_NONE one */
long page_size;

/* What the probe found */
bool has_disable;		/* EPOLL_CTL_DISABLE is op 4 */
bool unknown_reads_event;	/* an unknown op copies its event */


static const char *const class_name[NR_CLASSES] = {
	"ADD", "DEL", "MOD", "DISABLE", "unknown",
};

static int class_of(int op)
{
	switch (op) {
	case EPOLL_CTL_ADD:
		return C_ADD;
	case EPOLL_CTL_DEL:
		return C_DEL;
	case EPOLL_CTL_MOD:
		return C_MOD;
	case EPOLL_CTL_DISABLE:
		return C_DISABLE;
	}
	return C_UNKNOWN;
}

struct call {
	int op;
	int ep;		/* pool slots */
	int fd;
	int ptr;
	unsigned int events;
};


static struct thread *fuzzers, *waiters, writer_thread, churner_thread;
atomic_bool stop;

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static char reports[MAX_REPORTS][320];
static int nr_reports;
static atomic_ulong helper_errors;
static char helper_error_msg[256];

unsigned long long rnd(struct thread *th)
{
	/* xorshift64* */
	th->rng ^= th->rng >> 12;
	th->rng ^= th->rng << 25;
	th->rng ^= th->rng >> 27;
	return (th->rng * 0x2545f4914f6cdd1dULL) >> 11;
}

unsigned int below(struct thread *th, unsigned int n)
{
	return rnd(th) % n;
}

void seed_thread(struct thread *th, unsigned int n)
{
	th->rng = (opt.seed + 1ULL) * 0x9e3779b97f4a7c15ULL + n * 0xbf58476dULL;
	if (!th->rng)
		th->rng = 1;
	rnd(th);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

const char *err_name(int err, char *buf, size_t len)
{
	static const struct {
		int err;
		const char *name;
	} names[] = {
		{ 0, "0" }, { EPERM, "EPERM" }, { ENOENT, "ENOENT" },
		{ EINTR, "EINTR" }, { EBADF, "EBADF" }, { EAGAIN, "EAGAIN" },
		{ ENOMEM, "ENOMEM" }, { EFAULT, "EFAULT" }, { EBUSY, "EBUSY" },
		{ EEXIST, "EEXIST" }, { EINVAL, "EINVAL" },
		{ ENOSPC, "ENOSPC" }, { ELOOP, "ELOOP" },
		{ EALREADY, "EALREADY" },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i].err == err)
			return names[i].name;
	snprintf(buf, len, "errno %d", err);
	return buf;
}

static void mask_str(unsigned long long mask, char *buf, size_t len)
{
	size_t n = 0;
	char tmp[16];
	int e;

	buf[0] = '\0';
	for (e = 0; e < 64 && n < len; e++)
		if (mask & outcome(e))
			n += snprintf(buf + n, len - n, "%s%s", n ? "," : "",
				      err_name(e, tmp, sizeof(tmp)));
	if (!n)
		snprintf(buf, len, "nothing");
}

static const char *op_str(int op, char *buf, size_t len)
{
	int c = class_of(op);

	if (c == C_UNKNOWN)
		snprintf(buf, len, "op %d", op);
	else
		snprintf(buf, len, "%s", class_name[c]);
	return buf;
}

static void call_str(const struct call *c, char *buf, size_t len)
{
	char op[16];

	snprintf(buf, len, "%s on epfd %d (%s), fd %d (%s), events %#x, %s",
		 op_str(c->op, op, sizeof(op)), pool[c->ep].fd,
		 pool[c->ep].name, pool[c->fd].fd, pool[c->fd].name,
		 c->events, ptr_name[c->ptr]);
}

void helper_error(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&report_lock);
	if (!atomic_fetch_add(&helper_errors, 1)) {
		va_start(ap, fmt);
		vsnprintf(helper_error_msg, sizeof(helper_error_msg), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&report_lock);
}

/* Does the kernel copy the event argument of @op from user space? */
static bool reads_event(int op)
{
	if (op == EPOLL_CTL_ADD || op == EPOLL_CTL_MOD)
		return true;
	if (op == EPOLL_CTL_DEL || (op == EPOLL_CTL_DISABLE && has_disable))
		return false;
	return unknown_reads_event;
}

/*
 * What epoll_ctl() may answer for @op given the event pointer @ptr, on an
 * epfd and fd of these kinds, in the kernel's order: DISABLE's refusal of
 * an event, the event copy, the two fd lookups, the pollable check, the
 * epoll set check, then the op.
 */
unsigned long long outcomes(int op, int ptr, enum kind ep, enum kind fd,
			    bool same)
{
	if (op == EPOLL_CTL_DISABLE && has_disable && ptr != P_NULL)
		return outcome(EINVAL);
	if (ptr >= P_NULL && reads_event(op))
		return outcome(EFAULT);
	if (ep == K_CLOSED || fd == K_CLOSED)
		return outcome(EBADF);
	if (fd == K_FILE)
		return outcome(EPERM);
	if (same || ep != K_EPOLL)
		return outcome(EINVAL);

	switch (op) {
	case EPOLL_CTL_ADD:
		return outcome(0) | outcome(EEXIST) | outcome(EINVAL) |
		       outcome(ELOOP) | outcome(ENOMEM) | outcome(ENOSPC);
	case EPOLL_CTL_MOD:
		return outcome(0) | outcome(ENOENT) | outcome(EINVAL);
	case EPOLL_CTL_DEL:
		return outcome(0) | outcome(ENOENT);
	case EPOLL_CTL_DISABLE:
		if (has_disable)
			return outcome(0) | outcome(ENOENT) | outcome(EINVAL) |
			       outcome(EBUSY) | outcome(EALREADY);
		break;
	}
	return outcome(EINVAL);
}

static unsigned long long allowed(const struct call *c)
{
	const struct slot *ep = &pool[c->ep], *fd = &pool[c->fd];
	bool same = c->ep == c->fd;
	int ptr = c->ptr;
	unsigned long long mask;

	mask = outcomes(c->op, ptr, ep->kind, fd->kind, same);
	/*
	 * The churner may have a slot of its own closed right now, or
	 * closed and re-created between the kernel's lookups of epfd and
	 * fd, where one slot then names two files of its kind
	 */
	if (ep->group) {
		mask |= outcomes(c->op, ptr, K_CLOSED,
				 same ? K_CLOSED : fd->kind, same);
		if (same)
			mask |= outcomes(c->op, ptr, ep->kind, fd->kind, false);
	}
	if (fd->group)
		mask |= outcomes(c->op, ptr, ep->kind, K_CLOSED, same);
	if (opt.narrow)
		mask &= ~outcome(EBADF);
	return mask;
}

static void unexpected(struct thread *th, const struct call *c, int ret,
		       int err, unsigned long long mask)
{
	char what[200], got[16], allow[96];

	th->unexpected++;
	pthread_mutex_lock(&report_lock);
	if (nr_reports < MAX_REPORTS) {
		call_str(c, what, sizeof(what));
		mask_str(mask, allow, sizeof(allow));
		if (ret && ret != -1)
			snprintf(got, sizeof(got), "%d", ret);
		snprintf(reports[nr_reports++], sizeof(reports[0]),
			 "%s: got %s, allowed %s", what,
			 ret && ret != -1 ? got :
			 err_name(err, got, sizeof(got)), allow);
	}
	pthread_mutex_unlock(&report_lock);
}

static unsigned int pick_events(struct thread *th)
{
	static const unsigned int base[] = {
		EPOLLIN, EPOLLOUT, EPOLLIN | EPOLLOUT, EPOLLIN | EPOLLRDHUP,
		EPOLLIN | EPOLLPRI, EPOLLOUT | EPOLLHUP | EPOLLERR, 0,
	};
	unsigned int ev;

	if (!below(th, 16))
		return rnd(th);		/* any bits at all */
	ev = base[below(th, ARRAY_SIZE(base))];
	if (below(th, 4))
		ev |= EPOLLONESHOT;
	if (!below(th, 3))
		ev |= EPOLLET;
	if (!below(th, 10))
		ev |= EPOLLEXCLUSIVE;
	if (!below(th, 10))
		ev |= EPOLLWAKEUP;
	return ev;
}

static int pick_op(struct thread *th)
{
	static const int odd[] = {
		INT_MIN, INT_MAX, -1000, 1000, 0x10001, 0x10004, 0x104,
	};
	unsigned int r = below(th, 100);

	if (r < 30)
		return EPOLL_CTL_DISABLE;
	if (r < 50)
		return EPOLL_CTL_ADD;
	if (r < 65)
		return EPOLL_CTL_MOD;
	if (r < 75)
		return EPOLL_CTL_DEL;
	if (r < 95)
		return (int)below(th, 10) - 2;	/* -2 .. 7 */
	return odd[below(th, ARRAY_SIZE(odd))];
}

static int pick_ptr(struct thread *th)
{
	unsigned int r = below(th, 100);

	if (r < 65)
		return P_GOOD;
	if (r < 72)
		return P_MISALIGNED;
	return P_NULL + (r - 72) % (NR_PTRS - P_NULL);
}

static void *fuzzer(void *arg)
{
	struct thread *th = arg;
	struct epoll_event ev;
	char buf[sizeof(ev) + 1];
	unsigned long long mask;
	unsigned long i;
	struct call c;
	void *ptr;
	int ret, err;

	for (i = 0; i < th->ops; i++) {
		c.op = pick_op(th);
		c.ep = below(th, 5) ? (int)below(th, NR_EPOLL) :
				      (int)below(th, NR_SLOTS);
		c.fd = below(th, NR_SLOTS);
		c.events = pick_events(th);
		/* DISABLE refuses an event: mostly give it none, as it wants */
		c.ptr = c.op == EPOLL_CTL_DISABLE && below(th, 4) ? P_NULL :
			pick_ptr(th);

		ev.events = c.events;
		ev.data.u64 = DATA(c.fd);
		memcpy(buf + 1, &ev, sizeof(ev));
		switch (c.ptr) {
		case P_GOOD:
			ptr = &ev;
			break;
		case P_MISALIGNED:
			ptr = buf + 1;
			break;
		case P_NULL:
			ptr = NULL;
			break;
		case P_PROT_NONE:
			ptr = guard + page_size;
			break;
		case P_ONE:
			ptr = (void *)1;
			break;
		default:
			ptr = guard + page_size - sizeof(ev) / 2;
			break;
		}

		atomic_store(&th->cur_op, c.op);
		atomic_store(&th->cur_ep, c.ep);
		atomic_store(&th->cur_fd, c.fd);
		atomic_store(&th->cur_ptr, c.ptr);
		atomic_store(&th->cur_events, c.events);
		ret = epoll_ctl(pool[c.ep].fd, c.op, pool[c.fd].fd, ptr);
		err = ret ? errno : 0;
		atomic_store(&th->done, i + 1);

		th->count[class_of(c.op)][err >= 0 && err < NR_RESULTS ?
					  err : NR_RESULTS]++;
		mask = allowed(&c);
		if ((ret && ret != -1) || !(mask & outcome(err)))
			unexpected(th, &c, ret, err, mask);
	}
	atomic_store(&th->finished, true);
	return NULL;
}

/*
 * Is op 4 EPOLL_CTL_DISABLE here (epoll_disable.h's probe), and does an
 * unknown op read its event? Without the op, op 4 is an unknown op, which
 * reads its event before the series (EFAULT for NULL) and fails with
 * EINVAL after its first patch.
 */
static void print_probe(void)
{
	struct disable_probe p;
	char e4[16], e5[16];

	has_disable = probe_disable(&p);
	unknown_reads_event = p.unknown == EFAULT;
	printf("# kernel %s EPOLL_CTL_DISABLE%s\n",
	       has_disable ? "with" : "without",
	       has_disable ? " (op 4)" : ": op 4 is an unknown op");
	printf("# probe: op 4 with a NULL event: %s, op 5: %s\n",
	       err_name(p.item, e4, sizeof(e4)),
	       err_name(p.unknown, e5, sizeof(e5)));
	printf("# ops that read their event: ADD, MOD%s\n",
	       !unknown_reads_event ? "" : has_disable ?
	       ", unknown ops" : ", unknown ops (op 4 too)");
}

static void on_alarm(int sig)
{
	static const char msg[] =
		"Bail out! the watchdog fired: the run did not end\n";

	(void)sig;
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(KSFT_FAIL);
	_exit(KSFT_FAIL);
}

int test_no;
static int failed;

void result(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d ", ok ? "ok" : "not ok", ++test_no);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	failed += !ok;
}

/* Did the fuzz reach every answer DISABLE has? */
static void disable_coverage(const unsigned long *n)
{
	const char *name =
		"DISABLE answered 0, EBUSY, EALREADY, EINVAL and ENOENT";

	if (!has_disable) {
		printf("ok %d %s # SKIP kernel without EPOLL_CTL_DISABLE\n",
		       ++test_no, name);
		return;
	}
	result(n[0] && n[EBUSY] && n[EALREADY] && n[EINVAL] && n[ENOENT],
	       "%s (%lu, %lu, %lu, %lu, %lu times)", name, n[0], n[EBUSY],
	       n[EALREADY], n[EINVAL], n[ENOENT]);
}

static int start(struct thread *th, unsigned int n, void *(*fn)(void *))
{
	seed_thread(th, n);
	return pthread_create(&th->tid, NULL, fn, th);
}

/* Join @th by @deadline (CLOCK_REALTIME); false if it is still running */
static bool join(struct thread *th, const struct timespec *deadline)
{
	return !pthread_timedjoin_np(th->tid, NULL, deadline);
}

static void print_counts(unsigned long count[NR_CLASSES][NR_RESULTS + 1])
{
	char line[512], tmp[16];
	unsigned long total;
	int c, e;
	size_t n;

	for (c = 0; c < NR_CLASSES; c++) {
		total = 0;
		n = 0;
		for (e = 0; e <= NR_RESULTS; e++) {
			if (!count[c][e])
				continue;
			total += count[c][e];
			n += snprintf(line + n, sizeof(line) - n, " %s %lu,",
				      e == NR_RESULTS ? "other" :
				      err_name(e, tmp, sizeof(tmp)),
				      count[c][e]);
			if (n >= sizeof(line))
				break;
		}
		if (n && n < sizeof(line))
			line[n - 1] = '\0';
		printf("# %-7s %8lu:%s\n", class_name[c], total, n ? line : "");
	}
	line[0] = '\0';
	n = 0;
	for (e = 0; e <= NR_RESULTS && n < sizeof(line); e++) {
		total = 0;
		for (c = 0; c < NR_CLASSES; c++)
			total += count[c][e];
		if (total)
			n += snprintf(line + n, sizeof(line) - n, "%s%s %lu",
				      n ? ", " : "", e == NR_RESULTS ? "other" :
				      err_name(e, tmp, sizeof(tmp)), total);
	}
	printf("# by result: %s\n", line);
}

static void print_usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-n ops] [-t threads] [-w waiters] [-S seed]\n"
		"          [-T timeout] [-b] [-x]\n"
		"  -n  epoll_ctl() calls in all (default %lu)\n"
		"  -t  fuzzer threads (default %d, at most %d)\n"
		"  -w  epoll_wait() threads (default %d, at most %d)\n"
		"  -S  seed (default %u)\n"
		"  -T  seconds the fuzzers may take before they count as hung\n"
		"      (default %d)\n"
		"  -b  negative control: do not allow EBADF, so the run must\n"
		"      fail\n"
		"  -x  negative control: the sequential phase's model forgets\n"
		"      that delivery disarms a oneshot item, so it must fail\n",
		prog, opt.ops, opt.threads, MAX_THREADS, opt.waiters,
		MAX_THREADS, opt.seed, opt.timeout);
	exit(KSFT_FAIL);
}

static long number(const char *s, long min, long max, const char *prog)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		print_usage(prog);
	return v;
}

static void parse(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "n:t:w:S:T:bxh")) != -1) {
		switch (c) {
		case 'n':
			opt.ops = number(optarg, 1, LONG_MAX, argv[0]);
			break;
		case 't':
			opt.threads = number(optarg, 1, MAX_THREADS, argv[0]);
			break;
		case 'w':
			opt.waiters = number(optarg, 0, MAX_THREADS, argv[0]);
			break;
		case 'S':
			opt.seed = number(optarg, 0, UINT_MAX, argv[0]);
			break;
		case 'T':
			opt.timeout = number(optarg, 1, 86400, argv[0]);
			break;
		case 'b':
			opt.narrow = true;
			break;
		case 'x':
			opt.wrong_model = true;
			break;
		default:
			print_usage(argv[0]);
		}
	}
	if (optind != argc)
		print_usage(argv[0]);
}

int main(int argc, char **argv)
{
	static unsigned long count[NR_CLASSES][NR_RESULTS + 1];
	unsigned long done = 0, unexpected_calls = 0, wait_calls = 0;
	unsigned long events = 0, class_total[NR_CLASSES] = { 0 };
	bool hung = false, ran;
	int i, c, e;
	struct timespec deadline;
	char what[200];
	const char *why;
	double t0, took;
	struct call cur;

	parse(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	printf("TAP version 13\n");
	printf("# %lu ops, %d fuzzers, %d waiters, seed %u, timeout %d s%s%s\n",
	       opt.ops, opt.threads, opt.waiters, opt.seed, opt.timeout,
	       opt.narrow ? ", -b: EBADF not allowed (must fail)" : "",
	       opt.wrong_model ? ", -x: a wrong model (must fail)" : "");

	why = setup();
	if (why) {
		printf("1..1\nnot ok 1 setup: %s: %s\n", why, strerror(errno));
		return KSFT_FAIL;
	}
	print_probe();
	printf("1..7\n");

	fuzzers = calloc(opt.threads, sizeof(*fuzzers));
	waiters = calloc(opt.waiters ? opt.waiters : 1, sizeof(*waiters));
	if (!fuzzers || !waiters)
		return KSFT_FAIL;

	/* A last resort if even the timed joins below cannot end the run */
	signal(SIGALRM, on_alarm);
	alarm(opt.timeout + 60);

	t0 = now();
	for (i = 0; i < opt.waiters; i++)
		if (start(&waiters[i], 100 + i, waiter))
			return KSFT_FAIL;
	if (start(&writer_thread, 200, writer) ||
	    start(&churner_thread, 201, churner))
		return KSFT_FAIL;
	for (i = 0; i < opt.threads; i++) {
		fuzzers[i].ops = opt.ops / opt.threads +
				 ((unsigned long)i < opt.ops % opt.threads);
		if (start(&fuzzers[i], i, fuzzer))
			return KSFT_FAIL;
	}

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += opt.timeout;
	for (i = 0; i < opt.threads; i++) {
		if (join(&fuzzers[i], &deadline))
			continue;
		hung = true;
		cur.op = atomic_load(&fuzzers[i].cur_op);
		cur.ep = atomic_load(&fuzzers[i].cur_ep);
		cur.fd = atomic_load(&fuzzers[i].cur_fd);
		cur.ptr = atomic_load(&fuzzers[i].cur_ptr);
		cur.events = atomic_load(&fuzzers[i].cur_events);
		call_str(&cur, what, sizeof(what));
		printf("# fuzzer %d hung after %lu of %lu ops, last in %s\n",
		       i, atomic_load(&fuzzers[i].done), fuzzers[i].ops, what);
	}
	took = now() - t0;
	atomic_store(&stop, true);

	/* The helpers look at the stop flag at least every few ms */
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 10;
	for (i = 0; i < opt.waiters; i++) {
		if (!join(&waiters[i], &deadline)) {
			hung = true;
			printf("# waiter %d hung in epoll_wait()\n", i);
		}
	}
	if (!join(&writer_thread, &deadline)) {
		hung = true;
		printf("# the writer hung\n");
	}
	if (!join(&churner_thread, &deadline)) {
		hung = true;
		printf("# the churner hung\n");
	}

	for (i = 0; i < opt.threads; i++) {
		done += atomic_load(&fuzzers[i].done);
		unexpected_calls += fuzzers[i].unexpected;
		for (c = 0; c < NR_CLASSES; c++)
			for (e = 0; e <= NR_RESULTS; e++)
				count[c][e] += fuzzers[i].count[c][e];
	}
	for (c = 0; c < NR_CLASSES; c++)
		for (e = 0; e <= NR_RESULTS; e++)
			class_total[c] += count[c][e];
	for (i = 0; i < opt.waiters; i++) {
		wait_calls += waiters[i].calls;
		events += waiters[i].events;
	}

	printf("# %lu ops in %.2f s (%.0f ops/s)\n", done, took,
	       took > 0 ? done / took : 0.0);
	print_counts(count);
	printf("# %lu epoll_wait() calls got %lu events\n", wait_calls, events);
	printf("# %lu reads and writes, %lu files re-created\n",
	       writer_thread.calls, churner_thread.calls);
	for (i = 0; i < nr_reports; i++)
		printf("# unexpected: %s\n", reports[i]);
	if (unexpected_calls > (unsigned long)nr_reports)
		printf("# ... and %lu more unexpected results\n",
		       unexpected_calls - nr_reports);
	if (atomic_load(&helper_errors))
		printf("# %lu helper errors, first: %s\n",
		       atomic_load(&helper_errors), helper_error_msg);

	result(!unexpected_calls,
	       "every errno is one the contract lists (%lu unexpected)",
	       unexpected_calls);
	result(!atomic_load(&helper_errors),
	       "epoll_wait() got only registered data, helpers no errors (%lu)",
	       atomic_load(&helper_errors));
	result(!hung, "no thread hung (fuzzers took %.2f s, limit %d s)",
	       took, opt.timeout);
	ran = done == opt.ops && count[C_ADD][0] && count[C_MOD][0] &&
	      count[C_DEL][0];
	for (c = 0; c < NR_CLASSES; c++)
		ran = ran && class_total[c];
	result(ran, "every op ran (%lu of %lu; ADD, MOD and DEL succeeded)",
	       done, opt.ops);
	disable_coverage(count[C_DISABLE]);

	why = sequential();
	if (why)
		printf("# sequential: %s\n", why);
	result(!why, "sequential: every answer and report as the model says");
	sequential_coverage();
	printf("# Totals: pass:%d fail:%d\n", test_no - failed, failed);

	alarm(0);
	if (hung)
		_exit(KSFT_FAIL);	/* a hung thread cannot be joined */
	for (i = 0; i < NR_SLOTS; i++)
		if (pool[i].kind != K_CLOSED)
			close(pool[i].fd);
	return failed ? KSFT_FAIL : KSFT_PASS;
}
