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
 * protocols.h lists them and each proto_<name>.c is one, its comment
 * saying what it does: disable (EPOLL_CTL_DISABLE), global (one mutex),
 * deferred (QSBR), slots (generation-checked slots, epoll_data a slot's
 * index and generation), uring (no epoll: io_uring) and naive (unsafe).
 * bench_driver.c drives them, for bench_proto.c and bench_burst.c.
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
 * For slots "freed" is the state's free at the generation's move; its
 * slot is ready for the next item at once, and a chunk of slots left
 * empty goes back to malloc after a grace period.
 * For uring the wait is the message's trip, the waiter's cancel and its
 * reaping of the poll's end.
 * After the window no item is deleted any more, and the run goes on until
 * those waiting are freed (or for twice the timeout and a second more:
 * any left then are counted as unfreed, their age so far their wait).
 *
 * "-M burst" (bench_burst.c) asks what a protocol costs in memory: the
 * set grows from 1,000 items to 100,000, each with a buffer of its own
 * (512 B to 64 KiB), and is deleted back down to 1,000; for each protocol,
 * in a process of its own, from the decision to delete an item to its
 * buffer's free(), and the process's memory (RSS and the allocator's
 * count) at the peak and after the burst.
 *
 * Freed items are poisoned and kept in a quarantine for a while before
 * they really go back to malloc, so that a waiter that touches an item
 * after it was freed (a use-after-free in a real program) is counted as a
 * late touch instead of crashing; slots' chunks, given back, are
 * poisoned and kept too. Only naive may have late touches: if a safe
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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bench.h"
#include "bench_driver.h"
#include "bench_modes.h"
#include "protocols.h"

static void usage(const char *prog)
{
	char names[256] = "";
	unsigned int i;

	for (i = 0; i < nr_protocols; i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names),
			 "%s, ", protocols[i]->name);
	fprintf(stderr,
		"usage: %s -M ops [-n sizes] [-i iterations] [-b batch]\n"
		"       %s [-M proto|reclaim|burst] [-p protocols] [-t readers] [-n items]\n"
		"          [-T timeouts] [-s seconds] [-r runs] [-d delay_us]\n"
		"          [-c rate] [-w rate] [-o first]\n"
		"  lists are comma-separated\n"
		"  -M  ops: ns per epoll_ctl() op; proto: throughput of the\n"
		"      deletion protocols (default); reclaim: how long a\n"
		"      deleted item waits to be freed under each protocol;\n"
		"      burst: memory held and freed after a burst of items\n"
		"  -n  set sizes (ops, default 10,1000,100000) or items\n"
		"      (proto, default 1000; burst: before and at the peak,\n"
		"      default 1000,100000)\n"
		"  -i  ops per op and set size (default %ld)\n"
		"  -b  ops per timed batch (default %d)\n"
		"  -p  %sall (default),\n"
		"      or safe: all but the unsafe control\n"
		"  -t  reader threads (default 1,2,4,16,64,128; burst: 4)\n"
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
		prog, prog, opt.iterations, opt.batch, names, opt.seconds,
		opt.runs, opt.seed);
	exit(2);
}

static long number(const char *s, long min, long max, const char *prog)
{
	long v;

	if (!parse_long(s, min, max, &v))
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

static int protocol_list(const char *s, const struct protocol **v,
			 const char *prog)
{
	char buf[256], *tok, *save;
	unsigned int i;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		/* every protocol; or every safe one (not naive) */
		if (!strcmp(tok, "all") || !strcmp(tok, "safe")) {
			for (i = 0; i < nr_protocols && n < MAX_LIST; i++)
				if (tok[0] == 'a' || !protocols[i]->unsafe)
					v[n++] = protocols[i];
			continue;
		}
		if (n == MAX_LIST)
			usage(prog);
		v[n] = protocol_named(tok);
		if (!v[n++])
			usage(prog);
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
			else if (!strcmp(optarg, "burst"))
				opt.mode = MODE_BURST;
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
		sizes = opt.mode == MODE_OPS ? "10,1000,100000" :
			opt.mode == MODE_BURST ? "1000,100000" : "1000";
	opt.nr_sizes = list(sizes, opt.sizes, 1, 10000000, argv[0]);
	if (!opt.nr_waiters)
		opt.nr_waiters = list(opt.mode == MODE_BURST ? "4" :
				      "1,2,4,16,64,128", opt.waiters, 1, 4096,
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

static const char *const mode_names[] = {
	[MODE_OPS] = "ops",
	[MODE_PROTO] = "proto",
	[MODE_RECLAIM] = "reclaim",
	[MODE_BURST] = "burst",
};

int main(int argc, char **argv)
{
	struct utsname u;
	char why[160];
	int avail, run, i;

	driver = &bench_driver;
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
	} else if (opt.mode == MODE_BURST) {
		run_bursts();
	} else {
		run_protos();
	}
	out("# bench done, exit %d", exit_status);
	return exit_status;
}
