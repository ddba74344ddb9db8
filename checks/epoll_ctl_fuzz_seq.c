// SPDX-License-Identifier: GPL-2.0
/*
 * The sequential phase: one thread, an epoll set of its own and a few
 * eventfds, random ops on them, and after each op its answer, and what
 * epoll_wait() and poll() on the set report, compared with a model of
 * every item.  An eventfd is readable while its count is not 0 and each
 * write wakes its waiters with EPOLLIN, so readiness and edges are the
 * phase's own to decide.
 *
 * In the model an item is armed from ADD or MOD until epoll_wait() hands
 * out its event (EPOLLONESHOT) or DISABLE answers 0.  epoll_wait() and
 * poll() report it if it is armed for EPOLLIN and readable and, with
 * EPOLLET, queued: a write while it is armed, or ADD or MOD while it is
 * readable, queues it; its delivery, DISABLE and a read that empties the
 * eventfd unqueue it.  DISABLE answers ENOENT for a file not in the set,
 * EINVAL without EPOLLONESHOT, 0 if armed, EBUSY if delivered and
 * EALREADY if disabled; without the op, what an unknown op answers.  The
 * first difference ends the phase.
 *
 * "-x" hands the model a wrong kernel, one that leaves a oneshot item
 * armed when it delivers its event: the phase must fail.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "epoll_disable_util.h"
#include "epoll_ctl_fuzz_common.h"
#include "epoll_ctl_fuzz_seq.h"

#define SEQ_ITEMS	4
#define SEQ_OPS		20000

enum {
	Q_ADD, Q_MOD, Q_DEL, Q_DISABLE, Q_WRITE, Q_READ, Q_WAIT, Q_POLL,
	NR_SEQ_OPS
};

/* The states DISABLE finds an item in, for the coverage check */
enum {
	ST_ABSENT, ST_NOT_ONESHOT, ST_IDLE, ST_READY, ST_DELIVERED,
	ST_DISABLED, NR_STATES
};

static const char *const state_name[NR_STATES] = {
	"not in the set", "not oneshot", "armed, idle", "armed, ready",
	"delivered", "disabled",
};

struct seq_item {
	int fd;
	unsigned int events;
	bool added, armed, queued, readable, delivered;
};

static struct {
	int ep;
	struct seq_item item[SEQ_ITEMS];
	unsigned long ops, reports;
	unsigned long disable[NR_STATES];
	int answer[NR_STATES];		/* DISABLE's answer in each state */
	char diff[320];
} seq;

static bool seq_reported(const struct seq_item *it)
{
	return it->added && it->armed && (it->events & EPOLLIN) &&
	       it->readable && (!(it->events & EPOLLET) || it->queued);
}

static int seq_state(const struct seq_item *it)
{
	if (!it->added)
		return ST_ABSENT;
	if (!(it->events & EPOLLONESHOT))
		return ST_NOT_ONESHOT;
	if (it->armed)
		return seq_reported(it) ? ST_READY : ST_IDLE;
	return it->delivered ? ST_DELIVERED : ST_DISABLED;
}

static void seq_arm(struct seq_item *it, unsigned int events)
{
	it->events = events;
	it->armed = true;
	it->delivered = false;
	it->queued = it->readable && (events & EPOLLIN);
}

/* What DISABLE answers for @it: 0 (it disarms the item) or -errno */
static int seq_disable(const struct seq_item *it)
{
	if (!has_disable)
		return unknown_reads_event ? -EFAULT : -EINVAL;
	if (!it->added)
		return -ENOENT;
	if (!(it->events & EPOLLONESHOT))
		return -EINVAL;
	if (it->armed)
		return 0;
	return it->delivered ? -EBUSY : -EALREADY;
}

/* epoll_ctl() on the phase's set: 0 or a negative errno */
static int seq_ctl(int op, const struct seq_item *it, unsigned int events)
{
	struct epoll_event ev = {
		.events = events,
		.data.u64 = DATA(it - seq.item),
	};
	bool with_event = op == EPOLL_CTL_ADD || op == EPOLL_CTL_MOD;

	return epoll_ctl(seq.ep, op, it->fd, with_event ? &ev : NULL) ?
	       -errno : 0;
}

static void seq_item_str(const struct seq_item *it, char *buf, size_t len)
{
	snprintf(buf, len, "item %d (%s%s%s%s%s%s)", (int)(it - seq.item),
		 !it->added ? "not in the set" :
		 it->events & EPOLLONESHOT ? "oneshot" : "not oneshot",
		 it->added && (it->events & EPOLLET) ? ", ET" : "",
		 it->added && !(it->events & EPOLLIN) ? ", no EPOLLIN" : "",
		 !it->added ? "" : it->armed ? ", armed" :
		 it->delivered ? ", delivered" : ", disabled",
		 it->added && it->queued ? ", queued" : "",
		 it->readable ? ", readable" : "");
}

static bool seq_differs(const char *what, const struct seq_item *it,
			int got, int want)
{
	char item[120], g[20], w[20];

	if (got == want)
		return false;
	seq_item_str(it, item, sizeof(item));
	snprintf(seq.diff, sizeof(seq.diff),
		 "op %lu, %s on %s: got %s, the model says %s", seq.ops, what,
		 item, err_name(-got, g, sizeof(g)),
		 err_name(-want, w, sizeof(w)));
	return true;
}

/* epoll_wait() with no timeout: exactly the items the model reports */
static bool seq_wait(void)
{
	struct epoll_event evs[SEQ_ITEMS + 1];
	unsigned int want = 0, got = 0;
	struct seq_item *it;
	int i, n;

	for (i = 0; i < SEQ_ITEMS; i++)
		want |= seq_reported(&seq.item[i]) << i;
	n = epoll_wait(seq.ep, evs, ARRAY_SIZE(evs), 0);
	if (n < 0) {
		snprintf(seq.diff, sizeof(seq.diff), "op %lu, epoll_wait: %s",
			 seq.ops, strerror(errno));
		return false;
	}
	for (i = 0; i < n; i++) {
		if (evs[i].data.u64 >> 32 != DATA_TAG ||
		    (evs[i].data.u64 & 0xffffffffU) >= SEQ_ITEMS ||
		    evs[i].events != EPOLLIN)
			break;
		got |= 1U << (evs[i].data.u64 & 0xffffffffU);
	}
	if (i < n || got != want || n != __builtin_popcount(want)) {
		snprintf(seq.diff, sizeof(seq.diff),
			 "op %lu, epoll_wait: %d events, items %#x (last %#x, data %#llx); the model says items %#x",
			 seq.ops, n, got, n ? evs[n - 1].events : 0,
			 n ? (unsigned long long)evs[n - 1].data.u64 : 0ULL,
			 want);
		return false;
	}
	seq.reports += n;
	for (i = 0; i < SEQ_ITEMS; i++) {
		it = &seq.item[i];
		if (!(got & 1U << i))
			continue;
		if (it->events & EPOLLET)
			it->queued = false;
		if ((it->events & EPOLLONESHOT) && !opt.wrong_model) {
			it->armed = false;
			it->delivered = true;
		}
	}
	return true;
}

/* poll() on the set: readable exactly when the model reports an item */
static bool seq_poll(void)
{
	struct pollfd pfd = { .fd = seq.ep, .events = POLLIN };
	bool want = false;
	int i, n;

	for (i = 0; i < SEQ_ITEMS; i++)
		want = want || seq_reported(&seq.item[i]);
	n = poll(&pfd, 1, 0);
	if (n < 0 || !!n != want) {
		snprintf(seq.diff, sizeof(seq.diff),
			 "op %lu, poll on the set: %s, the model says %s",
			 seq.ops, n < 0 ? strerror(errno) :
			 n ? "readable" : "not readable",
			 want ? "readable" : "not readable");
		return false;
	}
	return true;
}

static unsigned int seq_events(struct thread *th)
{
	static const unsigned int events[] = {
		EPOLLIN, EPOLLIN | EPOLLET, EPOLLIN | EPOLLONESHOT,
		EPOLLIN | EPOLLONESHOT | EPOLLET, EPOLLONESHOT,
	};

	return events[below(th, ARRAY_SIZE(events))];
}

/* One random op, checked; false at the first difference */
static bool seq_step(struct thread *th)
{
	struct seq_item *it = &seq.item[below(th, SEQ_ITEMS)];
	unsigned int events;
	eventfd_t v;
	int want, got, state;

	seq.ops++;
	switch (below(th, NR_SEQ_OPS)) {
	case Q_ADD:
		events = seq_events(th);
		want = it->added ? -EEXIST : 0;
		got = seq_ctl(EPOLL_CTL_ADD, it, events);
		if (seq_differs("ADD", it, got, want))
			return false;
		if (!got) {
			it->added = true;
			seq_arm(it, events);
		}
		return true;
	case Q_MOD:
		events = seq_events(th);
		want = it->added ? 0 : -ENOENT;
		got = seq_ctl(EPOLL_CTL_MOD, it, events);
		if (seq_differs("MOD", it, got, want))
			return false;
		if (!got)
			seq_arm(it, events);
		return true;
	case Q_DEL:
		want = it->added ? 0 : -ENOENT;
		got = seq_ctl(EPOLL_CTL_DEL, it, 0);
		if (seq_differs("DEL", it, got, want))
			return false;
		it->added = false;
		return true;
	case Q_DISABLE:
		/* One time in four with an event: refused, the item as it was */
		if (has_disable && !below(th, 4)) {
			struct epoll_event ev = { .events = EPOLLIN };

			got = epoll_ctl(seq.ep, EPOLL_CTL_DISABLE, it->fd, &ev) ?
			      -errno : 0;
			return !seq_differs("DISABLE with an event", it, got,
					    -EINVAL);
		}
		state = seq_state(it);
		got = seq_ctl(EPOLL_CTL_DISABLE, it, 0);
		if (seq_differs("DISABLE", it, got, seq_disable(it)))
			return false;
		if (!got) {
			it->armed = false;
			it->queued = false;
		}
		seq.disable[state]++;
		seq.answer[state] = got;
		return true;
	case Q_WRITE:
		if (eventfd_write(it->fd, 1)) {
			seq_differs("write", it, -errno, 0);
			return false;
		}
		it->readable = true;
		if (it->added && it->armed && (it->events & EPOLLIN))
			it->queued = true;
		return true;
	case Q_READ:
		if (eventfd_read(it->fd, &v) && errno != EAGAIN) {
			seq_differs("read", it, -errno, 0);
			return false;
		}
		it->readable = false;
		it->queued = false;
		return true;
	case Q_WAIT:
		return seq_wait();
	}
	return seq_poll();
}

/* Run the phase; NULL if the kernel did what the model said throughout */
const char *sequential(void)
{
	struct thread th;
	const char *why = NULL;
	int i;

	seed_thread(&th, 300);
	seq.ep = epoll_create1(0);
	if (seq.ep < 0)
		return "epoll_create1 failed";
	for (i = 0; i < SEQ_ITEMS; i++) {
		seq.item[i].fd = eventfd(0, EFD_NONBLOCK);
		if (seq.item[i].fd < 0)
			return "eventfd failed";
	}
	while (seq.ops < SEQ_OPS && !why)
		if (!seq_step(&th))
			why = seq.diff;
	for (i = 0; i < SEQ_ITEMS; i++)
		close(seq.item[i].fd);
	close(seq.ep);
	return why;
}

/* Did the phase ask DISABLE in every state, and get the right answer? */
void sequential_coverage(void)
{
	const char *name = "sequential: DISABLE asked in every state";
	char line[400], e[20];
	size_t n = 0;
	bool all = true;
	int s;

	for (s = 0; s < NR_STATES; s++) {
		all = all && seq.disable[s];
		n += snprintf(line + n, sizeof(line) - n, "%s%s %lu (%s)",
			      s ? ", " : "", state_name[s], seq.disable[s],
			      seq.disable[s] ?
			      err_name(-seq.answer[s], e, sizeof(e)) : "-");
	}
	printf("# sequential: %lu ops, %lu events reported; DISABLE: %s\n",
	       seq.ops, seq.reports, line);
	if (!has_disable) {
		printf("ok %d %s # SKIP kernel without EPOLL_CTL_DISABLE\n",
		       ++test_no, name);
		return;
	}
	result(all, "%s", name);
}
