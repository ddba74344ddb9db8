// SPDX-License-Identifier: GPL-2.0
/*
 * What every file of the bench shares (bench.h): the options, which
 * main() parses, the output, the probe's finding, the exit status and the
 * fd limit.  It calls no other file of the bench.
 */
#include <stdarg.h>
#include <stdio.h>
#include <sys/resource.h>

#include "bench.h"

struct bench_opt opt = {
	.mode = MODE_PROTO,
	.runs = 1,
	.seconds = 2,
	.iterations = 20000,
	.batch = 100,
	.seed = 1,
	.prefix = "",
};

bool has_disable;
int exit_status;

/* One line of output: the prefix, then the text */
void bench_vout(const char *fmt, va_list ap)
{
	fputs(opt.prefix, stdout);
	vprintf(fmt, ap);
	putchar('\n');
}

void bench_vfail(const char *fmt, va_list ap)
{
	char buf[256];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	out("# FAIL %s", buf);
	exit_status = 1;
}

/* Raise RLIMIT_NOFILE to @need if we may; returns the soft limit */
rlim_t raise_nofile(rlim_t need)
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
