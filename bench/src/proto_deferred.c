// SPDX-License-Identifier: GPL-2.0
/*
 * deferred: no kernel help and no per-item lock.  Set the item's "dead"
 * flag, EPOLL_CTL_DEL at once, then free the item (and close its fds)
 * only when every waiter has come back from the epoll_wait() it was in at
 * the time (QSBR: a global epoch, one counter per waiter, a quiescent
 * point before each epoll_wait()).  A waiter that was handed the event of
 * a dead item drops it; its MOD may meet ENOENT.  With no timeout (-T -1)
 * the canceller wakes the waiters it waits for with a signal.
 *
 * Per item: the core, the deleted flag, the retire epoch and link; one
 * cache line per waiter (its quiescent counter), one for the global epoch
 * and the list head; and the items waiting on the retire list (its mean
 * length, sampled at each retirement), whole.
 */
#define _GNU_SOURCE
#include <string.h>

#include "protocol.h"

struct item_deferred {
	struct item_core c;
	atomic_bool dead;
	unsigned long epoch;
	struct item_deferred *next;
};

/* The bench's: the item and the waiter as this protocol runs them */
struct deferred_it {
	struct item it;
	atomic_bool dead;	/* deleted */
	struct qsbr_node retired;	/* on the retire list */
};

struct deferred_waiter {
	struct waiter w;
	atomic_ulong qs;	/* QSBR's counter */
	long long kicked;	/* the canceller's: when it last did */
};

static struct deferred_it *deferred_of(struct item *it)
{
	return container_of(it, struct deferred_it, it);
}

static struct deferred_waiter *dwaiter_of(struct waiter *w)
{
	return container_of(w, struct deferred_waiter, w);
}

/* The retire list is the canceller's, or the main thread's once it is gone */
static struct qsbr qsbr;
static long retired, peak_retired;
static double backlog_sum;	/* retire list length, summed */
static unsigned long retirements;

static int deferred_setup(void)
{
	memset(&qsbr, 0, sizeof(qsbr));
	qsbr_init(&qsbr, &dwaiter_of(waiter_at(0))->qs, P.waiter_stride,
		  P.nr_waiters);
	retired = peak_retired = 0;
	backlog_sum = 0;
	retirements = 0;
	return 0;
}

/*
 * The quiescent point. This waiter holds no item: whatever its last
 * epoll_wait() returned has been handled, and the next one starts after
 * every deletion of an epoch up to this one, so it cannot return those
 * items.
 */
static void deferred_quiescent(struct waiter *w)
{
	qsbr_quiescent(&qsbr, &dwaiter_of(w)->qs);
}

/*
 * The peer went away while this waiter held the event: no other waiter
 * can hold it, and the driver stopped it for the canceller, so it goes
 * at once
 */
static void deferred_owner_delete(struct item *it)
{
	item_del(it, true);
	item_free(it);
}

/* An event for an item that a waiter holds, no lock taken */
static void deferred_event(struct waiter *w, epoll_data_t data)
{
	struct item *it = data.ptr;

	if (it->g.tag != ITEM_LIVE)
		count(&w->late);
	else if (atomic_load(&deferred_of(it)->dead))
		count(&w->stale);	/* deleted, not yet freed: drop it */
	else if (!item_handle(w, it, data, true))
		deferred_owner_delete(it);
}

static void deferred_free(struct qsbr_node *n)
{
	struct item *it = &qsbr_entry(n, struct deferred_it, retired)->it;

	retired--;
	item_close(it);
	item_free(it);
}

/* Free what no waiter can hold any more */
static bool deferred_reclaim(void)
{
	qsbr_reclaim(&qsbr, false, deferred_free);
	return true;
}

/*
 * deferred, -T -1: wake the waiters that keep the oldest retired item
 * from being freed, each at most once every KICK_EVERY_US
 */
static void deferred_kick(void)
{
	struct qsbr_node *oldest = qsbr.head;
	long long now = now_ns();
	struct deferred_waiter *w;
	int i;

	if (!oldest || P.timeout != NO_TIMEOUT)
		return;
	for (i = 0; i < P.nr_waiters; i++) {
		w = dwaiter_of(waiter_at(i));
		if (atomic_load(&w->qs) < oldest->epoch &&
		    now - w->kicked >= KICK_EVERY_US * 1000LL) {
			kick(&w->w);
			w->kicked = now;
		}
	}
}

static void deferred_retire(struct item *it)
{
	qsbr_retire(&qsbr, &deferred_of(it)->retired);
	if (++retired > peak_retired)
		peak_retired = retired;
	backlog_sum += retired;
	retirements++;
}

static void deferred_tick(void)
{
	deferred_reclaim();
	deferred_kick();
}

/* The item's lock is the driver's: deferred needs none */
static void deferred_cancel(struct item *it)
{
	it->g.stop = true;
	atomic_store(&deferred_of(it)->dead, true);
	pthread_mutex_unlock(&it->g.lock);
	item_del(it, false);
	deferred_retire(it);
}

/* Those still on the retire list once the canceller is gone */
static void deferred_unfreed(void)
{
	struct qsbr_node *n;

	for (n = qsbr.head; n; n = n->next)
		item_unfreed(&qsbr_entry(n, struct deferred_it, retired)->it);
}

static double mean_backlog(void)
{
	return retirements ? backlog_sum / retirements : 0;
}

static void deferred_report(int waiters, const struct totals *t)
{
	out("# deferred, %d readers: retire list %.0f items on average, %ld at most; %lu stale events",
	    waiters, mean_backlog(), peak_retired, t->stale);
}

static double deferred_bytes_per_item(void)
{
	double n = P.n;

	return sizeof(struct item_deferred) +
	       (P.nr_waiters + 1.0) * CACHELINE / n +
	       mean_backlog() * sizeof(struct item_deferred) / n;
}

/* The waiters are gone: free every item still retired */
static void deferred_teardown(void)
{
	qsbr_reclaim(&qsbr, true, deferred_free);
}

const struct protocol proto_deferred = {
	.name = "deferred",
	.item_size = sizeof(struct deferred_it),
	.waiter_size = sizeof(struct deferred_waiter),
	.setup = deferred_setup,
	.out_of_fds = deferred_reclaim,
	.wait_begin = deferred_quiescent,
	.event = deferred_event,
	.canceller_tick = deferred_tick,
	.cancel = deferred_cancel,
	.unfreed = deferred_unfreed,
	.report = deferred_report,
	.bytes_per_item = deferred_bytes_per_item,
	.teardown = deferred_teardown,
};
