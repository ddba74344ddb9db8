/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the EPOLL_CTL_DISABLE tests share: the op, calls that answer with
 * an errno, the protocol the op exists for, and the probe for a kernel
 * that has the op.
 *
 * The names, in every file: an item is one file in an epoll set; a waiter
 * is a thread in epoll_wait() on the set; the waiter handed an item's
 * event is its owner until it re-arms the item with EPOLL_CTL_MOD; a
 * canceller is a thread that wants an item gone without owning it, and
 * asks DISABLE:
 *
 *   0         nobody holds the event: the canceller deletes the item now
 *   EBUSY     an owner holds the event: it deletes the item when done
 *   EALREADY  a canceller disabled the item already and owns its deletion
 *
 * A writer makes items ready. An item is live from its EPOLL_CTL_ADD to
 * its deletion; an owner that touches an item after its deletion makes a
 * late touch, which the protocol exists to prevent.
 *
 * The protocol: each item has a lock, a tag and a stop flag. The
 * canceller's step, under the lock: set stop and ask DISABLE, and delete
 * the item at once if it answers 0. The owner's step, under the lock:
 * count a late touch if the tag is not ITEM_LIVE, delete the item if stop
 * is set, else handle the event and re-arm the item. The lock orders the
 * two: an owner that looked at stop before the canceller set it has
 * re-armed the item before DISABLE asks, so DISABLE disarms it.
 */
#ifndef EPOLL_DISABLE_H_
#define EPOLL_DISABLE_H_

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Not in the C library's <sys/epoll.h>; the value is the kernel's ABI. */
#ifndef EPOLL_CTL_DISABLE
#define EPOLL_CTL_DISABLE 4
#endif

/* 0 or the errno of an epoll_ctl() op given no event */
static inline int ctl(int ep, int op, int fd)
{
	return epoll_ctl(ep, op, fd, NULL) ? errno : 0;
}

/* EPOLL_CTL_DISABLE takes no event */
static inline int disable(int ep, int fd)
{
	return ctl(ep, EPOLL_CTL_DISABLE, fd);
}

static inline int rearm(int ep, int fd, unsigned int events)
{
	struct epoll_event ev = { .events = events };

	return epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev) ? errno : 0;
}

/* How many events epoll_wait() hands out right now (0 or 1) */
static inline int reported(int ep)
{
	struct epoll_event ev;

	return epoll_wait(ep, &ev, 1, 0);
}

static inline int put_byte(int fd)
{
	return write(fd, "x", 1);
}

static inline void sleep_us(long us)
{
	struct timespec ts = { us / 1000000L, (us % 1000000L) * 1000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* An item's tag: ITEM_POISON once it is deleted (or freed) */
#define ITEM_LIVE	0x600dcafeU
#define ITEM_POISON	0xdeadbeefU

/* What the protocol keeps for each item */
struct item_guard {
	pthread_mutex_t lock;
	unsigned int tag;
	bool stop;		/* a canceller wants the item gone */
};

static inline void item_guard_init(struct item_guard *g)
{
	pthread_mutex_init(&g->lock, NULL);
	g->tag = ITEM_LIVE;
	g->stop = false;
}

/* What an owner finds when it has taken the item's lock */
enum item_found {
	ITEM_HELD,	/* live: handle the event and re-arm the item */
	ITEM_STOPPED,	/* a canceller got EBUSY: the owner deletes it */
	ITEM_DELETED,	/* deleted under the owner: a late touch */
};

/* The owner's step, for an event it was handed: returns with g->lock held */
static inline enum item_found owner_lock(struct item_guard *g)
{
	pthread_mutex_lock(&g->lock);
	if (g->tag != ITEM_LIVE)
		return ITEM_DELETED;
	return g->stop ? ITEM_STOPPED : ITEM_HELD;
}

/*
 * The canceller's step, with g->lock held, for the item watched as @fd in
 * @ep: DISABLE's answer. On 0 the canceller deletes the item now; on EBUSY
 * the owner deletes it when it takes the lock; any other answer is an
 * error.
 */
static inline int cancel_locked(struct item_guard *g, int ep, int fd)
{
	g->stop = true;
	return disable(ep, fd);
}

/*
 * The probe: does this kernel know op 4? One without it rejects the op as
 * unknown (EINVAL), after copying an event for it if it copies one for
 * every op but EPOLL_CTL_DEL (EFAULT for a NULL event: ask again with
 * one). An item without EPOLLONESHOT is EINVAL too, so ask about a file
 * that is not in the set: the op answers ENOENT, an unknown op EINVAL.
 * Ask about an EPOLLONESHOT item as well, so that only a kernel that
 * answers both as an unknown op counts as one without it; any other
 * answer is the op's, and the tests judge it. Op 5, which no kernel has,
 * shows how this kernel answers an unknown op.
 */
struct disable_probe {
	int setup;	/* errno of the set and item, or 0 */
	int item;	/* DISABLE of an armed EPOLLONESHOT item, no event */
	int item_event;	/* the same given an event, where item is EFAULT */
	int absent;	/* DISABLE of a file not in the set, no event */
	int unknown;	/* op 5 on the item, no event */
};

static inline bool probe_disable(struct disable_probe *p)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT };
	int ep, sv[2];

	*p = (struct disable_probe){
		.item = -1, .item_event = -1, .absent = -1, .unknown = -1,
	};
	ep = epoll_create1(0);
	if (ep < 0) {
		p->setup = errno;
		return true;	/* let the tests say what is wrong */
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		p->setup = errno;
		close(ep);
		return true;
	}
	if (!epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev)) {
		p->item = disable(ep, sv[0]);
		p->absent = disable(ep, sv[1]);
		p->unknown = ctl(ep, 5, sv[0]);
		if (p->item == EFAULT)
			p->item_event = epoll_ctl(ep, EPOLL_CTL_DISABLE,
						  sv[0], &ev) ? errno : 0;
	} else {
		p->setup = errno;
	}
	close(sv[0]);
	close(sv[1]);
	close(ep);
	return !((p->item == EFAULT ? p->item_event : p->item) == EINVAL &&
		 (p->absent == EINVAL || p->absent == EFAULT));
}

static inline bool have_disable(void)
{
	struct disable_probe p;

	return probe_disable(&p);
}

#endif /* EPOLL_DISABLE_H_ */
