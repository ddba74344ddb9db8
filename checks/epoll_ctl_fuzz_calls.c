// SPDX-License-Identifier: GPL-2.0
/*
 * The fuzz (epoll_ctl_fuzz_calls.h): the fuzzer threads' random
 * epoll_ctl() calls, each answer checked against what the contract
 * allows for its arguments (epoll_ctl_fuzz_common.c's outcomes()), the
 * unexpected ones kept for the report, and the count of every answer by
 * op.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>

#include "epoll_disable_util.h"
#include "epoll_ctl_fuzz_common.h"
#include "epoll_ctl_fuzz_calls.h"

struct call {
	int op;
	int ep;		/* pool slots */
	int fd;
	int ptr;
	unsigned int events;
};

/* Not in the C library's <sys/epoll.h> of older systems */
#ifndef EPOLLEXCLUSIVE
#define EPOLLEXCLUSIVE	0x10000000U
#endif
#ifndef EPOLLWAKEUP
#define EPOLLWAKEUP	0x20000000U
#endif

static const char *const ptr_name[NR_PTRS] = {
	[P_GOOD] = "a good event",
	[P_MISALIGNED] = "a misaligned event",
	[P_NULL] = "a NULL event",
	[P_PROT_NONE] = "a PROT_NONE event",
	[P_ONE] = "event (void *)1",
	[P_STRADDLE] = "an event running into a PROT_NONE page",
};

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

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static char reports[MAX_REPORTS][320];
static int nr_reports;

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

void *fuzzer(void *arg)
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

/* The call @th is making, or made last: for a fuzzer that hung */
void fuzzer_call_str(struct thread *th, char *buf, size_t len)
{
	struct call cur;

	cur.op = atomic_load(&th->cur_op);
	cur.ep = atomic_load(&th->cur_ep);
	cur.fd = atomic_load(&th->cur_fd);
	cur.ptr = atomic_load(&th->cur_ptr);
	cur.events = atomic_load(&th->cur_events);
	call_str(&cur, buf, len);
}

/* The unexpected answers kept, and how many more there were */
void print_reports(unsigned long unexpected_calls)
{
	int i;

	for (i = 0; i < nr_reports; i++)
		printf("# unexpected: %s\n", reports[i]);
	if (unexpected_calls > (unsigned long)nr_reports)
		printf("# ... and %lu more unexpected results\n",
		       unexpected_calls - nr_reports);
}

void print_counts(unsigned long count[NR_CLASSES][NR_RESULTS + 1])
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
