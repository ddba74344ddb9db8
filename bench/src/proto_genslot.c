// SPDX-License-Identifier: GPL-2.0
/*
 * genslot: no kernel help.  Items live in the slots of a slab of the
 * program's own, never given back to malloc while the set lives (a
 * deleted item's slot goes on a free list for the next one), and
 * epoll_data holds the slot's index and a generation, not a pointer.
 * Deleting: under the slot's mutex, EPOLL_CTL_DEL and the generation
 * moved on; then the fds are closed and the slot is free at once.  A
 * waiter takes the mutex of the slot its event names and drops the event
 * if the generation is not the slot's: the slot is still valid memory,
 * the item is gone.  No use-after-free, no double delete; but no memory
 * is returned either (the slab stays at its high-water mark), and the
 * program has to allocate its items from a slab of its own.  Its
 * reclaim time is the slot back on the free list.
 *
 * Per item: the core, a mutex, the generation and the free-list link (an
 * index) for every slot the slab holds at the end of the run, free ones
 * too: never given back, they are what the protocol holds; a pointer per
 * chunk and the free-list head (the directory's unused entries are not
 * counted: a program sizes it for its own maximum).
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "protocol.h"

struct item_genslot {
	struct item_core c;
	pthread_mutex_t lock;
	uint32_t gen;
	uint32_t next;
};

/*
 * The bench's: a slot as this protocol runs it, in the driver's block
 * (P.item_off of the driver's fields before it, as every protocol's
 * item); and a waiter, with what the bench's check needs
 */
struct genslot_it {
	struct item it;
	uint32_t gen, idx;	/* the slot's generation and index */
	struct item *next;	/* the free list */
	unsigned long born;	/* the bench's: births at ADD */
};

struct genslot_waiter {
	struct waiter w;
	unsigned long seen;	/* the bench's: births when its wait returned */
};

static struct genslot_it *slot_of(struct item *it)
{
	return container_of(it, struct genslot_it, it);
}

static struct item *slab_free;	/* the canceller's */
static long slab_chunks;	/* chunks in the slab */
static atomic_ulong births;	/* the bench's: items added */

/*
 * genslot: the slab. Its slots come in chunks that are never freed while
 * the set lives, so the slot an event names is memory of the right type
 * whatever became of the item in it; a fixed directory finds a chunk, so
 * growing never moves a slot. Only the canceller adds and deletes
 * items, so the free list and the growth are its own and take no lock.
 */
#define GENSLOT_CHUNK		256
/* 16M slots: more than -n allows */
#define GENSLOT_MAX_CHUNKS	(1 << 16)

static _Atomic(char *) genslot_dir[GENSLOT_MAX_CHUNKS];

/* Slot @i of @chunk: each a driver's block of item_block_size() */
static struct item *genslot_slot(char *chunk, long i)
{
	return (struct item *)(chunk + i * item_block_size() + P.item_off);
}

/* What epoll_data holds: the generation above, the slot's index below */
static uint64_t genslot_key(const struct item *it)
{
	return (uint64_t)slot_of((struct item *)it)->gen << 32 |
	       slot_of((struct item *)it)->idx;
}

static struct item *genslot_at(uint64_t key)
{
	uint32_t idx = (uint32_t)key;
	char *chunk;

	chunk = atomic_load_explicit(&genslot_dir[idx / GENSLOT_CHUNK],
				     memory_order_acquire);
	return genslot_slot(chunk, idx % GENSLOT_CHUNK);
}

static void genslot_put(struct item *it)
{
	slot_of(it)->next = slab_free;
	slab_free = it;
}

/* A chunk more, its slots on the free list, lowest index first */
static int genslot_grow(void)
{
	long c = slab_chunks, i;
	struct item *it;
	char *chunk;

	if (c == GENSLOT_MAX_CHUNKS)
		return -1;
	chunk = calloc(GENSLOT_CHUNK, item_block_size());
	if (!chunk)
		return -1;
	for (i = GENSLOT_CHUNK - 1; i >= 0; i--) {
		it = genslot_slot(chunk, i);
		pthread_mutex_init(&it->g.lock, NULL);
		slot_of(it)->idx = c * GENSLOT_CHUNK + i;
		/* never 0: a key of 0 is quitfd's */
		slot_of(it)->gen = 1;
		it->g.tag = ITEM_POISON;
		genslot_put(it);
	}
	atomic_store_explicit(&genslot_dir[c], chunk, memory_order_release);
	slab_chunks++;
	return 0;
}

static struct item *genslot_get(void)
{
	struct item *it;

	if (!slab_free && genslot_grow())
		return NULL;
	it = slab_free;
	slab_free = slot_of(it)->next;
	return it;
}

/* At the end of the run: the slab goes back to malloc at last */
static void genslot_destroy(void)
{
	char *chunk;
	long c, i;

	for (c = 0; c < slab_chunks; c++) {
		chunk = atomic_load(&genslot_dir[c]);
		for (i = 0; i < GENSLOT_CHUNK; i++)
			pthread_mutex_destroy(&genslot_slot(chunk, i)->g.lock);
		free(chunk);
		atomic_store(&genslot_dir[c], NULL);
	}
	slab_chunks = 0;
	slab_free = NULL;
}

static int genslot_setup(void)
{
	slab_free = NULL;
	slab_chunks = 0;
	atomic_store(&births, 0);
	return 0;
}

/* Before the ADD: see genslot_late() */
static int genslot_add(struct item *it)
{
	slot_of(it)->born = atomic_fetch_add(&births, 1) + 1;
	return item_add(it, (epoll_data_t){ .u64 = genslot_key(it) });
}

/* What the bench's check compares the slot's item with */
static void genslot_woken(struct waiter *w)
{
	container_of(w, struct genslot_waiter, w)->seen = atomic_load(&births);
}

/*
 * genslot, the bench's own check, blind to the generation (a bug in the
 * protocol's use of it is what it must catch): is the slot free, or does
 * it hold an item added after epoll_wait() returned this event (@seen:
 * births then), which cannot be the event's? Either way the waiter is
 * about to read and re-arm the fds of an item that is not the event's,
 * or of none: what a use-after-free becomes when memory is type-stable.
 */
static bool genslot_late(struct item *it, unsigned long seen)
{
	return it->g.tag != ITEM_LIVE || slot_of(it)->born > seen;
}

static void genslot_delete(struct item *it);

/*
 * genslot: the slot is valid memory whatever happened; under its mutex,
 * the generation says whether the item the event was for still lives in
 * it. If not, the event is dropped, and the fds are not touched.
 */
static void genslot_event(struct waiter *w, epoll_data_t data)
{
	struct item *it = genslot_at(data.u64);

	pthread_mutex_lock(&it->g.lock);
	if (slot_of(it)->gen != (uint32_t)(data.u64 >> 32))
		count(&w->stale);	/* deleted since: drop it */
	else if (genslot_late(it, container_of(w, struct genslot_waiter,
						w)->seen))
		count(&w->late);
	else if (!item_handle(w, it, data, false)) {
		genslot_delete(it);	/* its peer went away */
		return;
	}
	pthread_mutex_unlock(&it->g.lock);
}

/*
 * genslot: under the slot's mutex, delete the item and move the
 * generation on, so that a waiter holding its event finds it gone when it
 * gets the mutex; the fds are closed after the unlock (once the generation
 * has moved no waiter looks at them), and the slot is free for the next
 * item at once. Its memory is never given back. Must be called with the
 * slot's mutex held; drops it.
 */
static void genslot_delete(struct item *it)
{
	item_del(it, false);
	if (!++slot_of(it)->gen)
		slot_of(it)->gen = 1;	/* never 0: a key of 0 is quitfd's */
	/* the bench's: the slot holds no item */
	it->g.tag = ITEM_POISON;
	pthread_mutex_unlock(&it->g.lock);
	item_close(it);
	genslot_put(it);
	reclaimed(it);
}

static void genslot_report(int waiters, const struct totals *t)
{
	out("# genslot, %d readers: %ld slots (%ld KiB) held for %d live items, never given back while the set lives; %lu stale events",
	    waiters, slab_chunks * GENSLOT_CHUNK,
	    (long)(slab_chunks * GENSLOT_CHUNK *
		   sizeof(struct item_genslot) / 1024), P.n, t->stale);
}

static double genslot_bytes_per_item(void)
{
	return (slab_chunks * (GENSLOT_CHUNK * sizeof(struct item_genslot) +
			       sizeof(struct item *)) +
		sizeof(uint32_t)) / (double)P.n;
}

/* Its slot is the slab's, given back with it */
static void genslot_teardown_item(struct item *it)
{
	item_del(it, true);
}

const struct protocol proto_genslot = {
	.name = "genslot",
	.item_size = sizeof(struct genslot_it),
	.waiter_size = sizeof(struct genslot_waiter),
	.setup = genslot_setup,
	.alloc = genslot_get,
	.unalloc = genslot_put,
	.add = genslot_add,
	.woken = genslot_woken,
	.event = genslot_event,
	.cancel = genslot_delete,
	.report = genslot_report,
	.bytes_per_item = genslot_bytes_per_item,
	.teardown_item = genslot_teardown_item,
	.teardown = genslot_destroy,
};
