// SPDX-License-Identifier: GPL-2.0
/*
 * The bench's -M ops: the cost of single epoll_ctl() calls.
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
 * the protocol makes the two calls; and the second call alone, DEL of
 * items DISABLE has just disabled (the DISABLE untimed), is what a
 * single op that deleted an item nobody holds would save per deletion. The two clock reads add their
 * cost once per batch, not once per op. The median and the 10th and 90th percentiles are over the
 * batches. Items in a batch follow a random permutation of the set, so the
 * lookup walks the whole red-black tree, not one hot path.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "bench.h"
#include "bench_modes.h"

enum op { OP_DISABLE_ARMED, OP_DISABLE_DELIVERED, OP_MOD, OP_DEL, OP_ADD,
	  OP_DISABLE_DEL, OP_DEL_DISABLED, OP_DEL_MISSING, NR_OPS };

static const char *const op_names[] = {
	[OP_DISABLE_ARMED] = "disable_armed",
	[OP_DISABLE_DELIVERED] = "disable_delivered",
	[OP_MOD] = "mod",
	[OP_DEL] = "del",
	[OP_ADD] = "add",
	[OP_DISABLE_DEL] = "disable_del",
	[OP_DEL_DISABLED] = "del_disabled",
	[OP_DEL_MISSING] = "del_enoent",
};

/*
 * The epoll_ctl() calls each op makes, in order, and what they return;
 * disabled: its items are disabled first, untimed
 */
static const struct {
	int ctl[2];
	int want;
	bool disabled;
} op_calls[NR_OPS] = {
	[OP_DISABLE_ARMED] = { { EPOLL_CTL_DISABLE } },
	[OP_DISABLE_DELIVERED] = { { EPOLL_CTL_DISABLE }, EBUSY },
	[OP_MOD] = { { EPOLL_CTL_MOD } },
	[OP_DEL] = { { EPOLL_CTL_DEL } },
	[OP_ADD] = { { EPOLL_CTL_ADD } },
	[OP_DISABLE_DEL] = { { EPOLL_CTL_DISABLE, EPOLL_CTL_DEL } },
	[OP_DEL_DISABLED] = { { EPOLL_CTL_DEL }, 0, true },
	[OP_DEL_MISSING] = { { EPOLL_CTL_DEL }, ENOENT },
};

static bool op_uses_disable(enum op which)
{
	return op_calls[which].ctl[0] == EPOLL_CTL_DISABLE ||
	       op_calls[which].disabled;
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

/* Untimed: disable the batch's armed items */
static void ops_disable(struct ops_set *s, const int *b, int nb)
{
	int i;

	for (i = 0; i < nb; i++)
		expect_ctl(s, OP_DEL_DISABLED, ops_ctl(s->ep, EPOLL_CTL_DISABLE,
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void print_stats(int n, enum op which, double *v, int k, int nb)
{
	qsort(v, k, sizeof(*v), cmp_double);
	out("ops,%d,%s,%ld,%.1f,%.1f,%.1f", n, op_names[which], (long)k * nb,
	    v[k / 2], v[k * 10 / 100], v[k * 90 / 100]);
}

void run_ops(int size)
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
			ops_disable(&s, b, nb);
			v[OP_DEL_DISABLED][r] =
				ops_time(&s, b, nb, OP_DEL_DISABLED);
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
