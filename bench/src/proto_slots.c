// SPDX-License-Identifier: GPL-2.0
/*
 * slots: no kernel help, written for slots.  epoll_data holds a slot's
 * index and its generation, not a pointer; a slot is the generation, a
 * pointer to the item's state and a lock (16 bytes), in chunks of
 * SLOTS_CHUNK that a fixed directory finds.  A waiter takes the lock of
 * the slot its event names and drops the event if the generation has
 * moved on; else the state is live and stays so until it unlocks.
 * Deleting: under the slot's lock, EPOLL_CTL_DEL, the generation moved
 * on and the pointer cleared; after the unlock the state is freed (fds
 * closed) at once, since no waiter can reach it any more, and the slot
 * is free for the next item.  A chunk whose slots are all free is taken
 * out of the directory and given back to malloc after a grace period:
 * once every waiter has passed a quiescent point (before its
 * epoll_wait()) after the chunk left the directory.  That is safe
 * because every item of the chunk was deleted (EPOLL_CTL_DEL) before it
 * left: an epoll_wait() that starts after the quiescent point cannot
 * hand out their events, and an event handed out before it has been
 * handled by then, so no waiter can still look at the chunk; a waiter
 * that finds the directory entry empty drops its event.  The entry is
 * not reused until the chunk is freed, so a new chunk never meets an old
 * event.  New items take the free slot of the lowest chunk, so that the
 * high chunks empty when the set shrinks.  (It replaced genslot, which
 * kept the bench's whole item in each slot of a slab that never shrank:
 * not what a program written for slots does.)
 *
 * The lock is a futex word of the slot's own (0 free, 1 held, 2 held
 * and waited for): a waiter holds it across its read and re-arm, so it
 * must sleep, not spin; a pthread mutex would be 40 bytes of the 16.
 *
 * Per item: the state (the core and its slot's index), the slots of the
 * chunks held, free ones too (a chunk stays while one item lives in it),
 * their headers and the directory's entries in use; one cache line per
 * waiter (its quiescent counter) and one for the global epoch.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "protocol.h"

/* What a program keeps: the slot, and the state's own field */
struct slot {
	atomic_uint lock;
	uint32_t gen;		/* never 0: a key of 0 is quitfd's */
	struct item *state;	/* NULL once free */
};

struct item_slots {
	struct item_core c;
	uint32_t slot;
};

/*
 * Small, so that a set shrunk by random deletions leaves empty chunks:
 * 1% of 100,000 items left alive empties 53% of the chunks of 64 slots,
 * 8% of those of 256
 */
#define SLOTS_CHUNK		64
/* 16M slots: more than -n allows */
#define SLOTS_MAX_CHUNKS	(1 << 18)
/* Chunks given back are poisoned and kept this long (in chunks) */
#define SLOTS_QUARANTINE	64

struct slot_chunk {
	unsigned int tag;	/* the bench's: ITEM_POISON once given back */
	int used;		/* slots that hold an item */
	int free;		/* the next free slot, -1: none */
	long entry;		/* its directory entry */
	struct qsbr_node retired;
	int16_t next[SLOTS_CHUNK];	/* the free list */
	struct slot s[SLOTS_CHUNK];
};

/* The bench's: the item's state and the waiter, as this protocol runs */
struct slots_it {
	struct item it;
	uint32_t slot;
};

struct slots_waiter {
	struct waiter w;
	atomic_ulong qs;	/* QSBR's counter */
	long long kicked;	/* when the canceller last did */
};

static _Atomic(struct slot_chunk *) dir[SLOTS_MAX_CHUNKS];

/*
 * The table: which chunk has free slots, which entries are in use or
 * waiting for their chunk's grace period, the retire list.  Taken by
 * whoever adds or deletes an item (the bench's canceller; the server's
 * acceptor, reaper and waiters), never under a slot's lock.
 */
static pthread_mutex_t table = PTHREAD_MUTEX_INITIALIZER;
static bool retiring[SLOTS_MAX_CHUNKS];
static long hi;			/* entries ever used: [0, hi) */
static long lowest;		/* no chunk below has a free slot */
static long chunks, chunks_peak, chunks_freed;	/* allocated */
static long live_chunks;	/* in the directory */
static struct qsbr qsbr;
static void *quarantine[SLOTS_QUARANTINE];
static int quarantine_next;

static struct slots_it *slots_of(struct item *it)
{
	return container_of(it, struct slots_it, it);
}

static struct slots_waiter *swaiter_of(struct waiter *w)
{
	return container_of(w, struct slots_waiter, w);
}

static void slot_lock(struct slot *s)
{
	unsigned int c = 0;

	if (atomic_compare_exchange_strong(&s->lock, &c, 1))
		return;
	if (c != 2)
		c = atomic_exchange(&s->lock, 2);
	while (c) {
		syscall(SYS_futex, &s->lock, FUTEX_WAIT_PRIVATE, 2, NULL,
			NULL, 0);
		c = atomic_exchange(&s->lock, 2);
	}
}

static void slot_unlock(struct slot *s)
{
	if (atomic_exchange(&s->lock, 0) == 2)
		syscall(SYS_futex, &s->lock, FUTEX_WAKE_PRIVATE, 1, NULL,
			NULL, 0);
}

/* A slot in use: its chunk cannot leave the directory */
static struct slot *slot_at(uint32_t idx)
{
	struct slot_chunk *ch = atomic_load(&dir[idx / SLOTS_CHUNK]);

	return &ch->s[idx % SLOTS_CHUNK];
}

/* The chunk's grace period is over: poisoned, and free()d later */
static void chunk_free(struct qsbr_node *n)
{
	struct slot_chunk *ch = qsbr_entry(n, struct slot_chunk, retired);
	long c = ch->entry;

	ch->tag = ITEM_POISON;
	free(quarantine[quarantine_next]);
	quarantine[quarantine_next] = ch;
	quarantine_next = (quarantine_next + 1) % SLOTS_QUARANTINE;
	retiring[c] = false;
	if (c < lowest)
		lowest = c;
	chunks--;
	chunks_freed++;
}

/* Must hold the table */
static void slots_reclaim_locked(void)
{
	if (qsbr.head)
		qsbr_reclaim(&qsbr, false, chunk_free);
}

/* A chunk more at the lowest free entry. Must hold the table. */
static long chunk_new(void)
{
	struct slot_chunk *ch;
	long c;
	int i;

	for (c = 0; c < SLOTS_MAX_CHUNKS; c++)
		if (!atomic_load(&dir[c]) && !retiring[c])
			break;
	if (c == SLOTS_MAX_CHUNKS)
		return -1;
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -1;
	ch->tag = ITEM_LIVE;
	for (i = 0; i < SLOTS_CHUNK; i++) {
		ch->s[i].gen = 1;
		ch->next[i] = i + 1;
	}
	ch->next[SLOTS_CHUNK - 1] = -1;
	ch->free = 0;
	ch->entry = c;
	atomic_store(&dir[c], ch);
	live_chunks++;
	if (c >= hi)
		hi = c + 1;
	if (++chunks > chunks_peak)
		chunks_peak = chunks;
	return c;
}

/* A free slot for @it, its state. Must hold the table. */
static int slot_get_locked(struct item *it)
{
	struct slot_chunk *ch = NULL;
	long c;
	int i;

	for (c = lowest; c < hi; c++) {
		ch = atomic_load(&dir[c]);
		if (ch && ch->free >= 0)
			break;
	}
	lowest = c;
	if (c == hi) {
		/* the lowest entry free, maybe below hi: lowest moves there */
		c = chunk_new();
		if (c < 0)
			return -1;
		lowest = c;
		ch = atomic_load(&dir[c]);
	}
	i = ch->free;
	ch->free = ch->next[i];
	ch->used++;
	/* no waiter can hold this generation: the slot was free */
	ch->s[i].state = it;
	slots_of(it)->slot = c * SLOTS_CHUNK + i;
	return 0;
}

/*
 * The slot is free again (its generation moved on under its lock); an
 * empty chunk leaves the directory for its grace period, unless it is
 * the last one. Must hold the table.
 */
static void slot_put_locked(uint32_t idx)
{
	long c = idx / SLOTS_CHUNK;
	struct slot_chunk *ch = atomic_load(&dir[c]);
	int i = idx % SLOTS_CHUNK;

	ch->next[i] = ch->free;
	ch->free = i;
	if (c < lowest)
		lowest = c;
	if (--ch->used || live_chunks <= 1)
		return;
	atomic_store(&dir[c], NULL);
	retiring[c] = true;
	live_chunks--;
	qsbr_retire(&qsbr, &ch->retired);
}

static void slot_put(uint32_t idx)
{
	pthread_mutex_lock(&table);
	slot_put_locked(idx);
	slots_reclaim_locked();
	pthread_mutex_unlock(&table);
}

static int slots_setup(void)
{
	long c;

	for (c = 0; c < hi; c++)
		retiring[c] = false;
	hi = lowest = 0;
	chunks = chunks_peak = chunks_freed = live_chunks = 0;
	quarantine_next = 0;
	memset(&qsbr, 0, sizeof(qsbr));
	qsbr_init(&qsbr, &swaiter_of(waiter_at(0))->qs, P.waiter_stride,
		  P.nr_waiters);
	return 0;
}

/* A slot for the new item: what epoll_data says is its key */
static epoll_data_t slots_data(struct item *it)
{
	struct slot *s;
	uint64_t key = 0;

	pthread_mutex_lock(&table);
	if (!slot_get_locked(it)) {
		s = slot_at(slots_of(it)->slot);
		key = (uint64_t)s->gen << 32 | slots_of(it)->slot;
	} else {
		error_at("no slot for an item");
	}
	pthread_mutex_unlock(&table);
	return (epoll_data_t){ .u64 = key };
}

/*
 * Under the slot's lock: out of the set, and the generation moved on, so
 * that a waiter holding its event finds it gone when it gets the lock.
 * Drops the lock; the state is then nobody's but ours.
 */
static void slots_retire(struct slot *s, struct item *it)
{
	item_del(it, true);
	if (!++s->gen)
		s->gen = 1;	/* never 0: a key of 0 is quitfd's */
	s->state = NULL;
	slot_unlock(s);
	slot_put(slots_of(it)->slot);
	item_free(it);
}

/* An item that never made it into the set */
static void slots_unalloc(struct item *it)
{
	struct slot *s = slot_at(slots_of(it)->slot);

	slot_lock(s);
	if (!++s->gen)
		s->gen = 1;
	s->state = NULL;
	slot_unlock(s);
	slot_put(slots_of(it)->slot);
	item_release(it);
}

/* The quiescent point: this waiter holds no slot */
static void slots_quiescent(struct waiter *w)
{
	qsbr_quiescent(&qsbr, &swaiter_of(w)->qs);
}

/*
 * The slot's chunk is in the directory, or was given back with all its
 * items deleted; under the slot's lock, the generation says whether the
 * event's item still lives in it.
 */
static void slots_event(struct waiter *w, epoll_data_t data)
{
	uint32_t idx = (uint32_t)data.u64;
	struct slot_chunk *ch;
	struct item *it;
	struct slot *s;

	ch = atomic_load_explicit(&dir[idx / SLOTS_CHUNK],
				  memory_order_acquire);
	if (!ch) {
		count(&w->stale);	/* every item in its chunk deleted */
		return;
	}
	if (ch->tag != ITEM_LIVE) {
		count(&w->late);	/* the bench's: a chunk given back */
		return;
	}
	s = &ch->s[idx % SLOTS_CHUNK];
	slot_lock(s);
	if (ch->tag != ITEM_LIVE) {
		count(&w->late);	/* given back while we came here */
		return;
	} else if (s->gen != (uint32_t)(data.u64 >> 32)) {
		count(&w->stale);	/* deleted since: drop it */
	} else if (!s->state || s->state->g.tag != ITEM_LIVE) {
		count(&w->late);
	} else {
		it = s->state;
		/* the driver's lock, if it takes one, nests in the slot's */
		if (!item_handle(w, it, data, true)) {
			slots_retire(s, it);	/* its peer went away */
			return;
		}
	}
	slot_unlock(s);
}

/*
 * The item's lock is the driver's: stop the item under it, so that its
 * waiters leave it to us, and drop it before the slot's, which the
 * waiters take first
 */
static void slots_cancel(struct item *it)
{
	struct slot *s = slot_at(slots_of(it)->slot);

	it->g.stop = true;
	pthread_mutex_unlock(&it->g.lock);
	slot_lock(s);
	slots_retire(s, it);
}

/*
 * -T -1: wake the waiters that keep the oldest retired chunk, each at
 * most once every KICK_EVERY_US; and give back what may go
 */
static void slots_tick(void)
{
	struct slots_waiter *w;
	long long now;
	int i;

	pthread_mutex_lock(&table);
	slots_reclaim_locked();
	if (qsbr.head && P.timeout == NO_TIMEOUT) {
		now = now_ns();
		for (i = 0; i < P.nr_waiters; i++) {
			w = swaiter_of(waiter_at(i));
			if (atomic_load(&w->qs) < qsbr.head->epoch &&
			    now - w->kicked >= KICK_EVERY_US * 1000LL) {
				kick(&w->w);
				w->kicked = now;
			}
		}
	}
	pthread_mutex_unlock(&table);
}

static void slots_report(int waiters, const struct totals *t)
{
	out("# slots, %d readers: %ld chunks of %d slots (%ld KiB) held at the end, %ld at most, %ld given back; %lu stale events",
	    waiters, chunks, SLOTS_CHUNK,
	    (long)(chunks * sizeof(struct slot_chunk) / 1024), chunks_peak,
	    chunks_freed, t->stale);
}

/*
 * A program's: the state, its slot's share of the chunks held now (their
 * free slots and headers too), the directory's entries in use, the
 * waiters' counters and the epoch
 */
static double slots_bytes_per_item(void)
{
	double n = P.n;

	return sizeof(struct item_slots) +
	       chunks * sizeof(struct slot_chunk) / n +
	       hi * sizeof(struct slot_chunk *) / n +
	       (P.nr_waiters + 1.0) * CACHELINE / n;
}

/* The waiters are gone: every chunk goes back */
static void slots_teardown(void)
{
	long c;
	int i;

	qsbr_reclaim(&qsbr, true, chunk_free);
	for (c = 0; c < hi; c++) {
		free(atomic_load(&dir[c]));
		atomic_store(&dir[c], NULL);
	}
	for (i = 0; i < SLOTS_QUARANTINE; i++) {
		free(quarantine[i]);
		quarantine[i] = NULL;
	}
}

const struct protocol proto_slots = {
	.name = "slots",
	.item_size = sizeof(struct slots_it),
	.waiter_size = sizeof(struct slots_waiter),
	.setup = slots_setup,
	.data = slots_data,
	.unalloc = slots_unalloc,
	.wait_begin = slots_quiescent,
	.event = slots_event,
	.canceller_tick = slots_tick,
	.cancel = slots_cancel,
	.report = slots_report,
	.bytes_per_item = slots_bytes_per_item,
	.teardown = slots_teardown,
};
