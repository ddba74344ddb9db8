/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every file of the bench shares (bench.c): the options, the
 * output, what the probe found, the exit status, the fd limit.  The
 * program's main() (epoll_disable_bench.c) fills them in and calls the
 * modes (bench_modes.h); the modes and the driver (bench_driver.h) read
 * them, and none of them calls main()'s file.
 */
#ifndef EPOLL_DISABLE_BENCH_H
#define EPOLL_DISABLE_BENCH_H

#include <stdarg.h>
#include <stdbool.h>
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

/* Raise RLIMIT_NOFILE to @need if we may; returns the soft limit */
rlim_t raise_nofile(rlim_t need);

/* The output, for the driver's struct driver: out() and fail() */
void bench_vout(const char *fmt, va_list ap);
void bench_vfail(const char *fmt, va_list ap);

#endif /* EPOLL_DISABLE_BENCH_H */
