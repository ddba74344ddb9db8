// SPDX-License-Identifier: GPL-2.0
/*
 * What every file of the fuzzer shares (epoll_ctl_fuzz_common.h): the
 * options, the pool of files and the event pages, the probe's findings,
 * the threads' random numbers, what the contract allows for a call, the
 * helpers' errors and the TAP lines.  It calls no other file of the
 * fuzzer: main() (epoll_ctl_fuzz.c) calls the others, and each of them
 * calls this one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/epoll.h>

#include "epoll_disable_util.h"
#include "epoll_ctl_fuzz_common.h"

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

char *guard;		/* a read-write page, then a PROT_NONE one */
long page_size;

/* What the probe found */
bool has_disable;		/* EPOLL_CTL_DISABLE is op 4 */
bool unknown_reads_event;	/* an unknown op copies its event */

atomic_bool stop;

/* The helpers' errors: how many, and the first */
static pthread_mutex_t helper_lock = PTHREAD_MUTEX_INITIALIZER;
atomic_ulong helper_errors;
char helper_error_msg[256];

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

void helper_error(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&helper_lock);
	if (!atomic_fetch_add(&helper_errors, 1)) {
		va_start(ap, fmt);
		vsnprintf(helper_error_msg, sizeof(helper_error_msg), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&helper_lock);
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

int test_no;
int nr_failed;

void result(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d ", ok ? "ok" : "not ok", ++test_no);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	nr_failed += !ok;
}
