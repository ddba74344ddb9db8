// SPDX-License-Identifier: GPL-2.0
/*
 * epoll_disable_bench - what EPOLL_CTL_DISABLE costs, and what it buys.
 *
 * -M ops times single epoll_ctl() calls on N EPOLLONESHOT eventfds, and
 * the floor (EPOLL_CTL_DEL of an fd not in the set). -M proto runs
 * epoll_disable_test's workload for a fixed time: waiters in epoll_wait()
 * on N EPOLLONESHOT socketpairs, a writer, and a canceller that deletes
 * a random item and adds one in its place, each deletion made safe by
 * the protocol -p names (protocols.h; bench_driver.c drives them).
 * -M reclaim reports, instead of events/s, the time from the decision to
 * delete an item to its free; -M burst (bench_burst.c) grows the set to
 * 100,000 items and back and reports memory.
 *
 * Freed items are poisoned and quarantined, so a late touch is counted
 * instead of crashing; a safe protocol with one fails the run (exit 1).
 * Timings are reported, never judged. Output is CSV on stdout ('#' lines
 * are comments), each line behind -P's prefix. bench/README says what
 * each mode measures and how each protocol deletes.
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
