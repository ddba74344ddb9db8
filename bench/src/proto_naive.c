// SPDX-License-Identifier: GPL-2.0
/*
 * naive: EPOLL_CTL_DEL and free under the item mutex: unsafe.  A waiter
 * that was handed the item's event before the delete takes the freed
 * item's lock: the late touch the bench counts, and the control that
 * shows the safe protocols' zero means something.
 *
 * Per item: the core and a mutex.
 */
#define _GNU_SOURCE
#include "protocol.h"

struct item_naive {
	struct item_core c;
	pthread_mutex_t lock;
};

static void naive_cancel(struct item *it)
{
	item_del(it, true);
	it->g.tag = ITEM_POISON;
	pthread_mutex_unlock(&it->g.lock);
	item_free(it);
}

static double naive_bytes_per_item(void)
{
	return sizeof(struct item_naive);
}

const struct protocol proto_naive = {
	.name = "naive",
	.unsafe = true,
	.event = locked_event,
	.cancel = naive_cancel,
	.bytes_per_item = naive_bytes_per_item,
};
