// SPDX-License-Identifier: GPL-2.0
/*
 * disable: EPOLL_CTL_DISABLE, "delete when done".  0: the canceller
 * deletes and frees the item at once; EBUSY: the waiter holding the event
 * (its owner) does.  The item's lock orders the canceller's stop flag and
 * DISABLE with the owner's check of the flag and its re-arm (MOD):
 * without it, an owner that read the flag just before it was set would
 * re-arm an item that nobody is left to delete.  The steps are
 * epoll_disable.h's, as in the selftest.
 *
 * Per item: the core, a mutex and the stop flag.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "protocol.h"

struct item_disable {
	struct item_core c;
	pthread_mutex_t lock;
	bool stop;
};

static void disable_cancel(struct item *it)
{
	int err;

	sys_call();
	err = cancel_locked(&it->g, P.epfd, it->c.fd[0]);
	if (!err) {
		item_del(it, true);
		pthread_mutex_unlock(&it->g.lock);
		item_free(it);
		return;
	}
	if (err == EBUSY)
		count(&P.busy);
	else
		error_at("EPOLL_CTL_DISABLE: %s", strerror(err));
	pthread_mutex_unlock(&it->g.lock);
}

/* Every EBUSY left the deletion to the owner, which must have done it */
static void disable_report(int waiters, const struct totals *t)
{
	if (atomic_load(&P.busy) != t->owner_deletes)
		fail("disable, %d readers: %lu EBUSY but %lu owner deletes",
		     waiters, atomic_load(&P.busy), t->owner_deletes);
	out("# disable, %d readers: %lu EBUSY, deleted by the reader",
	    waiters, t->owner_deletes);
}

static double disable_bytes_per_item(void)
{
	return sizeof(struct item_disable);
}

const struct protocol proto_disable = {
	.name = "disable",
	.needs_disable = true,
	.event = locked_event,
	.cancel = disable_cancel,
	.report = disable_report,
	.bytes_per_item = disable_bytes_per_item,
};
