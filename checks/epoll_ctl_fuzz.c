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
 * The fuzz is epoll_ctl_fuzz_calls.c, the load beside it
 * epoll_ctl_fuzz_load.c; this file is main(), which calls them.
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
#include "epoll_ctl_fuzz_common.h"
#include "epoll_ctl_fuzz_calls.h"
#include "epoll_ctl_fuzz_load.h"
#include "epoll_ctl_fuzz_seq.h"

static struct thread *fuzzers, *waiters, writer_thread, churner_thread;

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

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
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
	long v;

	if (!parse_long(s, min, max, &v))
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
		fuzzer_call_str(&fuzzers[i], what, sizeof(what));
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
	print_reports(unexpected_calls);
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
	printf("# Totals: pass:%d fail:%d\n", test_no - nr_failed, nr_failed);

	alarm(0);
	if (hung)
		_exit(KSFT_FAIL);	/* a hung thread cannot be joined */
	for (i = 0; i < NR_SLOTS; i++)
		if (pool[i].kind != K_CLOSED)
			close(pool[i].fd);
	return nr_failed ? KSFT_FAIL : KSFT_PASS;
}
