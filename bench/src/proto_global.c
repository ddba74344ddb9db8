// SPDX-License-Identifier: GPL-2.0
/*
 * global: one mutex held across epoll_wait() and the handling of the
 * event, and by the canceller around delete and free (the canceller goes
 * first when it waits).  With no timeout (-T -1) the canceller signals
 * the waiter that holds the mutex in epoll_wait().
 *
 * Per item: the core; and two mutexes and a flag for the whole set.
 */
#define _GNU_SOURCE
#include <time.h>

#include "protocol.h"

struct item_global {
	struct item_core c;
};

static pthread_mutex_t global;
static pthread_mutex_t gate;	/* the canceller's, while it waits */
static atomic_bool canceller_waits;	/* it wants the lock */
static atomic_int holder;	/* the waiter that has the lock */

static int global_setup(void)
{
	pthread_mutex_init(&global, NULL);
	pthread_mutex_init(&gate, NULL);
	atomic_store(&canceller_waits, false);
	atomic_store(&holder, -1);
	return 0;
}

/*
 * global: a plain mutex lets the waiter that just unlocked it take it
 * again at once, before a thread it woke runs, and the canceller starves
 * (no deletions at all with 64 waiters). So the canceller says that it
 * waits, and waiters let it go first: a correct protocol that also
 * deletes.
 */
static void global_lock_waiter(struct waiter *w)
{
	if (atomic_load_explicit(&canceller_waits, memory_order_relaxed)) {
		/* sleep until the canceller has the lock */
		pthread_mutex_lock(&gate);
		pthread_mutex_unlock(&gate);
	}
	pthread_mutex_lock(&global);
	atomic_store(&holder, waiter_index(w));
}

static void global_unlock_waiter(struct waiter *w)
{
	(void)w;
	atomic_store(&holder, -1);
	pthread_mutex_unlock(&global);
}

/*
 * With -T -1 the waiter that holds the lock may wait in epoll_wait() for
 * ever: wake it, and again each KICK_EVERY_US until we have the lock (a
 * signal that lands before its epoll_wait() starts is lost).
 */
static void global_lock_canceller(void)
{
	struct timespec until;
	int h;

	pthread_mutex_lock(&gate);
	atomic_store(&canceller_waits, true);
	if (P.timeout != NO_TIMEOUT) {
		pthread_mutex_lock(&global);
	} else {
		for (;;) {
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += KICK_EVERY_US * 1000L;
			if (until.tv_nsec >= 1000000000L) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000L;
			}
			if (!pthread_mutex_timedlock(&global, &until))
				break;
			h = atomic_load(&holder);
			if (h >= 0)
				kick(waiter_at(h));
		}
	}
	atomic_store(&canceller_waits, false);
	pthread_mutex_unlock(&gate);
}

/* Nobody deletes while this waiter holds the global lock */
static void global_event(struct waiter *w, epoll_data_t data)
{
	struct item *it = data.ptr;

	if (it->g.tag != ITEM_LIVE) {
		count(&w->late);
	} else if (!item_handle(w, it, data, false)) {
		/* its peer went away: the canceller waits for our lock */
		item_del(it, true);
		item_free(it);
	}
	global_unlock_waiter(w);
}

/* The item's lock is the driver's: global needs its own alone */
static void global_cancel(struct item *it)
{
	pthread_mutex_unlock(&it->g.lock);
	global_lock_canceller();
	item_del(it, true);
	item_free(it);
	pthread_mutex_unlock(&global);
}

static double global_bytes_per_item(void)
{
	return sizeof(struct item_global) +
	       (2 * sizeof(pthread_mutex_t) + 1.0) / P.n;
}

static void global_teardown(void)
{
	pthread_mutex_destroy(&global);
	pthread_mutex_destroy(&gate);
}

const struct protocol proto_global = {
	.name = "global",
	.set_lock = true,
	.setup = global_setup,
	.wait_begin = global_lock_waiter,
	.wait_none = global_unlock_waiter,
	.event = global_event,
	.cancel = global_cancel,
	.bytes_per_item = global_bytes_per_item,
	.teardown = global_teardown,
};
