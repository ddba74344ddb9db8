/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A deletion protocol and the workload driver that runs it.
 *
 * How an item is deleted while a waiter may hold its event is a protocol,
 * one file each (proto_<name>.c), which fills in a struct protocol;
 * protocols.h lists them, one line each, and is the only header that
 * names one: this one names none, nor includes a protocol's own header.
 * The same objects are linked into the bench (bench_driver.c drives
 * them all) and the server (server_conn.c drives those whose items a
 * connection can be), which are the drivers: they make the items, run
 * the waiters' loop and the canceller, and call a protocol's operations,
 * never its insides.
 *
 * A protocol sees of its driver only what this header declares: struct
 * item, struct waiter and the run's state P, whose fields every driver
 * fills in the same way, and the functions below the struct protocol,
 * which reach the driver through its struct driver (set before a run).
 * Neither struct names a protocol or a driver: a protocol's own state per
 * item or per waiter is its struct, which embeds struct item (struct
 * waiter) first, its size in item_size (waiter_size), and container_of()
 * leads back to it; a driver's own state per item is its struct, which
 * embeds struct item last (the bench's struct bench_item, the server's
 * struct conn), so that the protocol's struct follows in one block.
 *
 * Locking: the driver calls ->cancel() with the item's lock (it->g.lock)
 * held, having chosen the item under it, and ->cancel() drops it.  A
 * protocol whose waiters take no item lock drops it at once.
 */
#ifndef EPOLL_DISABLE_PROTOCOL_H
#define EPOLL_DISABLE_PROTOCOL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "epoll_disable_util.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#define CACHELINE	64
/* -T -1: waiters wait in epoll_wait() for ever */
#define NO_TIMEOUT	-1
/* -T -1: the canceller wakes a waiter it waits for at most this often */
#define KICK_EVERY_US	1000

/* What the application keeps per item whatever the protocol */
struct item_core {
	int fd[2];		/* fd[0] is watched; fd[1] the writer's */
	unsigned int events;
};

/*
 * An item as every protocol and driver sees it: the core, the driver's
 * guard (its tag and lock), and when a canceller chose to delete it.  A
 * protocol with state of its own per item puts it in its struct that
 * embeds this one first (item_size; container_of() back), and a driver
 * with state of its own (the bench's, the server's connection) puts it
 * in its struct that embeds this one last: a driver's block is its own
 * fields, P.item_off bytes, then the protocol's struct (item_alloc()).
 */
struct item {
	struct item_core c;
	/* the tag: ITEM_POISON once freed; the lock: see the top */
	struct item_guard g;
	long long decided;	/* when a canceller chose to delete it */
};

/*
 * A waiter as every protocol and driver sees it; a protocol with state of
 * its own per waiter puts it in its struct that embeds this one first
 * (waiter_size), and reaches the others with waiter_at()
 */
struct waiter {
	pthread_t thread;
	atomic_ulong events;	/* handled: read and re-armed */
	atomic_ulong late;	/* touched an item after it was freed */
	atomic_ulong stale;	/* an event of an item already deleted */
	atomic_ulong owner_deletes;	/* deleted by the event's holder */
	atomic_ulong kicks;	/* -T -1: woken by a signal */
	atomic_ulong sys;	/* system calls: sys_call() */
	atomic_ulong empty;	/* no set: a ready item whose read found nothing */
} __attribute__((aligned(CACHELINE)));

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#endif

/* Counts over every waiter, read at the window's ends */
struct totals {
	unsigned long events, deletions, late, stale, owner_deletes, kicks;
	unsigned long sys, waiter_sys, empty;
};

/* What a protocol may read of the run: the driver fills it in */
struct run {
	const struct protocol *protocol;
	int n;			/* items in the set (the bench's) */
	int nr_waiters;
	int timeout;		/* waiters' epoll_wait() timeout, ms */
	int epfd, quitfd;	/* quitfd: in the set, with data 0 */
	/* nr_waiters of the protocol's waiter struct: waiter_at() */
	struct waiter *waiters;
	size_t waiter_stride;
	/* the driver's fields before an item in its block: item_alloc() */
	size_t item_off;
	int delay_us;		/* the waiters' sleep before an event */
	/*
	 * For a driver whose items come and go (the server): how many
	 * completions a protocol's queue per thread holds; 0: the
	 * protocol's own choice, from n
	 */
	unsigned int queue_len;
	/*
	 * Fault control, a driver's negative control of its late-touch
	 * check: free an item the canceller deleted before its waiter is
	 * done with it (a protocol that frees at a later step: at the
	 * cancel)
	 */
	bool free_early;
	atomic_ulong busy;	/* cancels that left the item to its holder */
	atomic_ulong deletions;
	atomic_ulong canceller_sys;	/* the canceller's system calls */
};

extern struct run P;

/*
 * A deletion protocol: what the driver asks of it.  Every operation but
 * name, event and cancel may be NULL, which means "nothing to do" (for
 * unalloc, add and teardown_item: the plain way, the driver's).
 */
struct protocol {
	const char *name;
	/* needs EPOLL_CTL_DISABLE: skipped on a kernel without it */
	bool needs_disable;
	/* unsafe: late touches are what it shows, not a failure */
	bool unsafe;
	/*
	 * Its waiters keep the canceller away with a lock of the whole set,
	 * not the item's: a driver whose own work takes the item's lock (the
	 * server's idle scan) cannot run it
	 */
	bool set_lock;
	/*
	 * Its items are in no epoll set: it polls them itself, and its
	 * waiters report one ready with item_ready(), which
	 * re-arms nothing; item_del() leaves P.epfd alone
	 */
	bool no_set;

	/*
	 * Its struct per item and per waiter, which embeds struct item or
	 * struct waiter first; 0: the plain one
	 */
	size_t item_size, waiter_size;

	/* Before the items are made (state of its own, zeroed per run) */
	int (*setup)(void);
	/* Giving back an item that never made it into the set */
	void (*unalloc)(struct item *it);
	/* Put a new item in the set: 0, or an errno */
	int (*add)(struct item *it);
	/*
	 * Or let the driver put it in, with this epoll_data (NULL: the
	 * item's pointer); the protocol's own memory, if it fails, goes
	 * at unalloc
	 */
	epoll_data_t (*data)(struct item *it);
	/* A socketpair() failed with EMFILE or ENFILE: free what it may */
	bool (*out_of_fds)(void);

	/* A waiter's whole loop instead of the driver's epoll_wait() one */
	void *(*run_waiter)(struct waiter *w);
	/* Before each epoll_wait(); after one that handed out no event */
	void (*wait_begin)(struct waiter *w);
	void (*wait_none)(struct waiter *w);
	/* Right after epoll_wait() handed out an event */
	void (*woken)(struct waiter *w);
	/* The owner's handling of the event it was handed */
	void (*event)(struct waiter *w, epoll_data_t data);

	/*
	 * A thread that adds or cancels items (the canceller; the server's
	 * acceptor too): at its start and end; the canceller, before each
	 * step
	 */
	int (*canceller_begin)(void);
	void (*canceller_end)(void);
	void (*canceller_tick)(void);
	/*
	 * A thread that adds items: hand on at once what its adds queued
	 * (the server's acceptor; the bench's canceller leaves it to the
	 * cancel that follows)
	 */
	void (*flush)(void);
	/*
	 * Delete @it, which the driver chose under it->g.lock and holds it
	 * for us, and free it, now or later; drops it->g.lock
	 */
	void (*cancel)(struct item *it);

	/*
	 * Once the waiters are started, before the writer and canceller;
	 * once the canceller is gone: the items it still holds
	 */
	void (*started)(void);
	void (*unfreed)(void);
	/* What it reports beside the figures, and may fail the run on */
	void (*report)(int waiters, const struct totals *t);
	/*
	 * What it needs per item in user space: the size of the struct it
	 * would use (with its padding), plus its shared structures divided
	 * by the number of items.  Not counted: the tag (the bench's
	 * detector), the quarantine and the writer's slot table (the same
	 * for all), and the kernel's own cost (epitem, socket) of items a
	 * protocol keeps open until they are freed.
	 */
	double (*bytes_per_item)(void);
	/* At the end of the run: an item still in the set, then the rest */
	void (*teardown_item)(struct item *it);
	void (*teardown)(void);
};

/*
 * The driver: what the functions below do in a program.  Each driver
 * fills one in, with functions of its own names, and sets driver to it
 * before a run.
 */
struct driver {
	void (*vout)(const char *fmt, va_list ap);
	void (*vfail)(const char *fmt, va_list ap);
	void (*verror)(const char *fmt, va_list ap);
	void (*sys_call)(void);
	int (*item_add)(struct item *it, epoll_data_t data);
	void (*item_del)(struct item *it, bool close_fds);
	void (*item_close)(struct item *it);
	void (*item_free)(struct item *it);
	void (*item_release)(struct item *it);
	void (*reclaimed)(struct item *it);
	void (*unfreed)(struct item *it);
	bool (*item_handle)(struct waiter *w, struct item *it,
			    epoll_data_t data, bool may_be_gone);
	bool (*item_ready)(struct waiter *w, struct item *it);
	void (*item_adopt)(struct item *it);
	void (*each_item)(void (*fn)(void *arg, void *item), void *arg);
};

extern const struct driver *driver;

/* What the protocols (and the drivers' own files) call: protocol.c */
void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void error_at(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Count one system call of the protocol's (epoll_*(), say), just before it */
void sys_call(void);
/* EPOLL_CTL_ADD of @it with @data: 0, or the errno */
int item_add(struct item *it, epoll_data_t data);
/* Out of the set; @close_fds, unless they stay open a while */
void item_del(struct item *it, bool close_fds);
void item_close(struct item *it);
/* Freed, as far as the protocol goes (the driver may keep it poisoned) */
void item_free(struct item *it);
/* Give its memory back with no free counted: the run is over */
void item_release(struct item *it);
/* Its memory may be reused now (a protocol that frees no memory) */
void reclaimed(struct item *it);
/* Deleted, and still not freed when the canceller is gone */
void item_unfreed(struct item *it);
/*
 * The owner's work on the event it was handed (the bench: drain and
 * re-arm; the server: answer the requests and re-arm).  @may_be_gone:
 * the caller holds nothing that keeps a canceller away (the driver may
 * take the item's lock).  False: the peer went away, the driver marked
 * it->g.stop under the item's lock, and the caller, its owner, deletes
 * and frees it.
 */
bool item_handle(struct waiter *w, struct item *it, epoll_data_t data,
		 bool may_be_gone);
/*
 * The owner's work on an item its poll reported ready, for a protocol
 * with no set (no re-arm): read (the server: and answer) what came.
 * False: as item_handle()'s, the peer went away, the driver marked
 * it->g.stop under the item's lock, and the caller deletes and frees it.
 */
bool item_ready(struct waiter *w, struct item *it);
/* A waiter of a protocol with no set took an item handed to it */
void item_adopt(struct item *it);
/* The drivers': the epoll_data a new item is added with */
static inline epoll_data_t item_data(struct item *it)
{
	const struct protocol *p = P.protocol;

	return p->data ? p->data(it) : (epoll_data_t){ .ptr = it };
}

/* Each item in the set before the waiters started */
void each_item(void (*fn)(void *arg, void *item), void *arg);

/*
 * The drivers': a zeroed block for an item of the protocol's (P.item_off
 * bytes of the driver's, then item_size), its lock initialised; the item
 * in it, and the block of an item
 */
struct item *item_alloc(void);
size_t item_block_size(void);
static inline void *item_block(struct item *it)
{
	return (char *)it - P.item_off;
}
/* P.nr_waiters zeroed waiters of the protocol's size in P.waiters */
int waiters_alloc(void);
static inline struct waiter *waiter_at(int i)
{
	return (struct waiter *)((char *)P.waiters + i * P.waiter_stride);
}
static inline int waiter_index(const struct waiter *w)
{
	return ((const char *)w - (const char *)P.waiters) / P.waiter_stride;
}

static inline void count(atomic_ulong *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/*
 * The owner's step for a protocol whose waiters take the item's lock: the
 * event handled under it, or the item deleted if a canceller marked it
 */
void locked_event(struct waiter *w, epoll_data_t data);
/* Wake a waiter out of epoll_wait() with SIGUSR1: it fails with EINTR */
void kick(struct waiter *w);
/*
 * A waiter's loop, for its driver's thread: the protocol's own, or
 * epoll_wait() on the set with the protocol's steps around it, until the
 * driver's quitfd (data 0) is ready
 */
void *wait_loop(struct waiter *w);

#endif /* EPOLL_DISABLE_PROTOCOL_H */
