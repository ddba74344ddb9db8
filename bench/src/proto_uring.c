// SPDX-License-Identifier: GPL-2.0
/*
 * uring: no epoll, io_uring as epoll_disable_uring.h does it.  Each
 * waiter has a ring of its own and the items whose poll
 * (IORING_OP_POLL_ADD, multishot) lives there; the canceller sends the
 * item's waiter a message (IORING_OP_MSG_RING), and the waiter cancels
 * the poll (IORING_OP_ASYNC_CANCEL) and frees the item when it reaps the
 * poll's terminal completion (no IORING_CQE_F_MORE).  New items reach
 * their waiter the same way.  A ring per waiter, not one shared by all: a
 * ring's SQ has one producer and its CQ one consumer, so a shared ring
 * needs a lock around both, which serialises the waiters as global does,
 * and the thread that reaps an item's completions would no longer be the
 * only one to touch it.  Items are dealt to the rings in turn.  Its
 * reclaim time is the message's trip, the waiter's cancel and its reaping
 * of the poll's end.  An item whose peer went away (item_ready() says
 * so: the server's client closed) its waiter cancels and frees the same
 * way, unasked.  Every thread that adds or cancels items (the bench's
 * canceller; the server's acceptor and reaper) sends from a ring of its
 * own.
 *
 * Per item: the core, the home ring's index and the cancelling flag;
 * every ring's mapped SQ, SQEs and CQ, the canceller's too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "epoll_disable_uring.h"
#include "protocol.h"

struct item_uring {
	struct item_core c;
	int home;
	bool cancelling;
};

/* The bench's: the item and the waiter as this protocol runs them */
struct uring_it {
	struct item it;
	int home;		/* the waiter whose ring polls it */
	bool cancelling;	/* its waiter has cancelled its poll */
};

struct uring_waiter {
	struct waiter w;
	struct ring_home home;	/* its ring, the canceller's messages */
};

static struct uring_it *uring_of(struct item *it)
{
	return container_of(it, struct uring_it, it);
}

static struct ring_home *home_of(struct waiter *w)
{
	return &container_of(w, struct uring_waiter, w)->home;
}

static atomic_int ready;	/* waiters with their ring set up */
static int next_home;		/* the ring the next item goes to */
static atomic_long ring_bytes_total;	/* mapped by every ring */

/* A canceller's ring, which sends its messages; NULL elsewhere */
static __thread struct ring cring;
static __thread struct ring *msg_ring;

static int uring_setup(void)
{
	atomic_store(&ready, 0);
	next_home = 0;
	atomic_store(&ring_bytes_total, 0);
	return 0;
}

/*
 * uring: queue a message to @it's waiter in the canceller's ring; the
 * canceller submits it with the next (uring_flush())
 */
static void uring_send(struct item *it, enum ring_tag tag)
{
	if (!home_send(msg_ring, home_of(waiter_at(uring_of(it)->home)),
		       ring_data(it, tag)))
		error_at("no SQE for a message");
}

/*
 * uring: submit the canceller's messages, one io_uring_enter() for the
 * new item's and the old one's
 */
static void uring_flush(void)
{
	int err = ring_flush(msg_ring);

	if (err)
		error_at("IORING_OP_MSG_RING: %s", strerror(-err));
}

/* Before the waiters run, each arms its own at its start */
static int uring_add(struct item *it)
{
	uring_of(it)->home = next_home++ % P.nr_waiters;
	if (msg_ring)
		uring_send(it, TAG_ARM);
	return 0;
}

/*
 * uring: a waiter's ring holds the polls of the items dealt to it, at
 * most this many SQEs in flight at once (more wait for the next submit),
 * and room for this many completions per item it polls, up to a cap: a
 * fuller CQ ends multishot polls, which the waiter then re-arms.  A
 * driver whose items come and go (the server) sets P.queue_len instead.
 */
#define URING_SQ		64
#define URING_CQ_PER_ITEM	4
#define URING_CQ_MIN		256
#define URING_CQ_MAX		8192

/*
 * uring: arm @it's poll in this waiter's ring. Only the home waiter
 * submits to its ring.
 */
static void uring_arm(void *arg, void *item)
{
	struct waiter *w = arg;
	struct item *it = item;

	if (!ring_poll(&home_of(w)->ring, it->c.fd[0], it))
		error_at("no SQE for the poll of fd %d", it->c.fd[0]);
}

/* uring: arm @it if it was dealt to this waiter before the waiters ran */
static void uring_arm_own(void *arg, void *item)
{
	struct waiter *w = arg;
	struct item *it = item;

	if (uring_of(it)->home == waiter_index(w))
		uring_arm(w, it);
}

/*
 * uring: the poll's terminal completion of a cancelled item: free it,
 * counted as its owner's delete if the canceller chose it (decided), not
 * its peer's going
 */
static void uring_free(struct waiter *w, struct item *it)
{
	bool decided = it->decided;

	home_of(w)->ending--;
	item_close(it);
	item_free(it);
	if (decided)
		count(&w->owner_deletes);
}

/*
 * uring: cancel @it's poll, its deletion decided (by the canceller, or
 * by this waiter when its peer went away). The item is freed at the
 * poll's terminal completion, which this waiter reaps: until then its
 * fds stay open and nobody frees it.
 */
static void uring_close(struct waiter *w, struct item *it)
{
	if (uring_of(it)->cancelling) {
		error_at("fd %d: cancelled twice", it->c.fd[0]);
		return;
	}
	uring_of(it)->cancelling = true;
	home_of(w)->ending++;
	if (!ring_cancel(&home_of(w)->ring, it))
		error_at("no SQE for the cancel of fd %d", it->c.fd[0]);
}

/*
 * uring: the canceller's message for @it has reached its waiter: cancel
 * the poll. P.free_early, the driver's fault control: free it now, and
 * the poll's end names a freed item.
 */
static void uring_cancel(void *arg, void *item)
{
	struct waiter *w = arg;
	struct item *it = item;

	uring_close(w, it);
	if (P.free_early)
		uring_free(w, it);
}

/*
 * uring: a completion of @it's poll, reaped by its waiter. A poll that
 * ends by itself (a full CQ ends a multishot poll) is armed again; one
 * that ends after the cancel frees the item.
 */
static void uring_event(void *arg, void *item,
			const struct io_uring_cqe *cqe)
{
	bool more = cqe->flags & IORING_CQE_F_MORE;
	struct waiter *w = arg;
	struct item *it = item;

	/* The window in which the item may be freed under us */
	if (P.delay_us)
		sleep_us(P.delay_us);
	if (it->g.tag != ITEM_LIVE) {
		count(&w->late);
		return;
	}
	if (uring_of(it)->cancelling) {
		if (!more)
			uring_free(w, it);
		else
			count(&w->stale);
		return;
	}
	if (cqe->res < 0 && cqe->res != -ECANCELED)
		error_at("poll of fd %d: %s", it->c.fd[0], strerror(-cqe->res));
	/* the driver's work, no re-arm: a multishot poll stays armed */
	if (cqe->res > 0 && !item_ready(w, it)) {
		uring_close(w, it);
		return;
	}
	if (!more)
		uring_arm(w, it);
}

/* uring: a new item sent to this waiter: the driver's, then its poll */
static void uring_adopt(void *arg, void *item)
{
	item_adopt(item);
	uring_arm(arg, item);
}

static const struct home_ops uring_ops = {
	.arm = uring_adopt,
	.cancel = uring_cancel,
	.event = uring_event,
};

/*
 * uring: the waiter sets up its ring in its own thread (the ring's only
 * issuer), arms the items dealt to it and quitfd's poll, then reaps and
 * waits. Each io_uring_enter() submits what the last completions asked
 * for (re-arms, cancels) and waits for the next ones.
 */
static void *uring_waiter(struct waiter *w)
{
	unsigned int cq = URING_CQ_PER_ITEM * (P.n / P.nr_waiters + 1);
	int err;

	cq = cq < URING_CQ_MIN ? URING_CQ_MIN : cq > URING_CQ_MAX ?
	     URING_CQ_MAX : cq;
	if (P.queue_len)
		cq = P.queue_len;
	err = home_open(home_of(w), URING_SQ, cq, &w->sys, P.quitfd);
	if (err) {
		error_at("io_uring_setup: %s", strerror(err));
		atomic_fetch_add(&ready, 1);
		return NULL;
	}
	atomic_fetch_add(&ring_bytes_total, ring_bytes(&home_of(w)->ring));
	/*
	 * The items dealt to this waiter, before the canceller starts: it
	 * waits for every waiter to be ready, and from then on it replaces
	 * the slots' items and sends their waiters the messages. An item
	 * both found here and sent would be polled twice, the poll the
	 * cancel does not end naming it after its free.
	 */
	each_item(uring_arm_own, w);
	atomic_fetch_add(&ready, 1);
	err = home_run(home_of(w), P.timeout, &uring_ops, w);
	if (err)
		error_at("io_uring_enter: %s", strerror(-err));
	if (home_of(w)->cancel_err)
		error_at("cancel of a poll: %s",
			 strerror(-home_of(w)->cancel_err));
	ring_close(&home_of(w)->ring);
	return NULL;
}

/* Each waiter's ring is set up before a message is sent */
static void uring_started(void)
{
	while (atomic_load(&ready) < P.nr_waiters)
		sleep_us(1000);
}

static int uring_canceller_begin(void)
{
	int err = ring_open(&cring, URING_SQ,
			    P.queue_len ? P.queue_len : URING_CQ_MIN,
			    &P.canceller_sys);

	if (err) {
		error_at("io_uring_setup: %s", strerror(err));
		return -1;
	}
	atomic_fetch_add(&ring_bytes_total, ring_bytes(&cring));
	msg_ring = &cring;
	return 0;
}

static void uring_canceller_end(void)
{
	ring_close(msg_ring);
	msg_ring = NULL;
}

/*
 * Its waiter frees it, at its poll's terminal completion.  The item's
 * lock is the driver's, uring needs none: the item is stopped under it
 * (the driver's owner and canceller leave it alone from now on), and
 * deleted with its fds left open until then.
 */
static void uring_cancel_item(struct item *it)
{
	it->g.stop = true;
	item_del(it, false);
	pthread_mutex_unlock(&it->g.lock);
	uring_send(it, TAG_CANCEL);
	uring_flush();
}

static void uring_report(int waiters, const struct totals *t)
{
	out("# uring, %d readers: %lu items freed at their poll's end, %lu events after the cancel, %lu events whose read found nothing, %ld KiB of rings",
	    waiters, t->owner_deletes, t->stale, t->empty,
	    atomic_load(&ring_bytes_total) / 1024);
}

static double uring_bytes_per_item(void)
{
	return sizeof(struct item_uring) +
	       atomic_load(&ring_bytes_total) / (double)P.n;
}

/* The rings are gone: close and free */
static void uring_teardown_item(struct item *it)
{
	item_close(it);
	item_release(it);
}

const struct protocol proto_uring = {
	.name = "uring",
	.item_size = sizeof(struct uring_it),
	.waiter_size = sizeof(struct uring_waiter),
	.no_set = true,
	.setup = uring_setup,
	.add = uring_add,
	.run_waiter = uring_waiter,
	.started = uring_started,
	.canceller_begin = uring_canceller_begin,
	.canceller_end = uring_canceller_end,
	.flush = uring_flush,
	.cancel = uring_cancel_item,
	.report = uring_report,
	.bytes_per_item = uring_bytes_per_item,
	.teardown_item = uring_teardown_item,
};
