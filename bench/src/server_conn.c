// SPDX-License-Identifier: GPL-2.0
/*
 * The server as a driver of the protocols (protocol.h; server_conn.h):
 * what an item's deletion, the owner's work on its event and its free
 * mean for a connection.  A connection is made here, enters the books
 * and the set, is read and answered (server_http.c) by the waiter its
 * event went to, is reaped through the protocol's cancel, and is freed
 * into a quarantine that counts a second free or a late touch.  Its fd
 * is closed once, as the books say (server_books.c).  Which protocols
 * the server can run is said here too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "protocols.h"
#include "server.h"
#include "server_books.h"
#include "server_conn.h"
#include "server_http.h"

/*
 * Freed connections, poisoned, kept for QUARANTINE more frees; under its
 * lock, how often each id was freed (freed[])
 */
static void *quarantine_ring[QUARANTINE];
static struct quarantine quarantine =
	QUARANTINE_INIT(quarantine_ring, struct conn, it.g);

/* The connection the reaper is closing: freed within its reap, at once */
static __thread struct item *reaping;

static void conn_vout(const char *fmt, va_list ap)
{
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
}

/* The first error is kept, the others counted: report() fails the run */
static void conn_verror(const char *fmt, va_list ap)
{
	if (atomic_fetch_add(&S.errors, 1))
		return;
	vsnprintf(S.first_error, sizeof(S.first_error), fmt, ap);
}

static void sample_reclaim(struct conn *c)
{
	if (!c->cancelled)
		return;
	pthread_mutex_lock(&S.stats_lock);
	if (S.nr_samples < MAX_SAMPLES)
		S.samples[S.nr_samples++] = now_ns() - c->it.decided;
	pthread_mutex_unlock(&S.stats_lock);
}

/*
 * Poison @c and keep it for QUARANTINE more frees; count a second free
 * (by its id: naive poisons the tag itself, under the lock, before the
 * free)
 */
static void quarantine_conn(struct conn *c)
{
	struct conn *old = NULL;

	pthread_mutex_lock(&quarantine.lock);
	if (freed[c->id]++) {
		inc(&S.bad_frees);
		pthread_mutex_unlock(&quarantine.lock);
		return;
	}
	c->it.g.tag = ITEM_POISON;
	inc(&S.frees);
	old = quarantine_put_locked(&quarantine, c);
	pthread_mutex_unlock(&quarantine.lock);
	if (old)
		quarantine_release(&quarantine, old);
}

/*
 * Out of the set, if the protocol has one. The fd is closed when the
 * connection leaves the table, at its free or the protocol's
 * item_close(), never under the item's lock (the reaper takes the
 * table's lock, then an item's). One that stays open a while is shut
 * down now: the client sees the close at once.
 */
static void conn_del(struct item *it, bool close_fds)
{
	int fd = it->c.fd[0];

	if (!opt.protocol->no_set && epoll_ctl(P.epfd, EPOLL_CTL_DEL, fd, NULL))
		error_at("EPOLL_CTL_DEL of fd %d: %s", fd, strerror(errno));
	if (!close_fds)
		shutdown(fd, SHUT_RDWR);
}

/* Out of the table and closed: its fd number may be reused from now on */
static void conn_close(struct item *it)
{
	struct conn *c = conn_of(it);

	table_remove(it);
	fd_close(c);
	c->fd_closed = true;
}

static void conn_free(struct item *it)
{
	struct conn *c = conn_of(it);

	if (!c->fd_closed)
		conn_close(it);
	if (it == reaping)
		inc(&S.cancel_now);
	if (c->cancelled)
		atomic_fetch_sub(&S.held, 1);
	if (c->cancelled && opt.fault == FAULT_LEAK_CONN)
		return;
	sample_reclaim(c);
	quarantine_conn(c);
	if (c->cancelled && opt.fault == FAULT_DOUBLE_FREE)
		quarantine_conn(c);
}

/* Never called: no protocol the server runs gives memory back itself */
static void conn_release(struct item *it)
{
	error_at("fd %d: released, not freed", it->c.fd[0]);
}

static void conn_nothing(struct item *it)
{
	(void)it;
}

/* The server does not count its system calls */
static void conn_sys_call(void)
{
}

/*
 * The owner's work on the event it was handed: read and answer the
 * requests and re-arm the connection; false if the client went away,
 * with the item stopped (the reaper leaves it alone) for its owner to
 * delete. @may_be_gone: the caller holds no lock that keeps the reaper
 * away, so take the item's, and drop an event of one the reaper closed.
 */
static bool conn_handle(struct waiter *w, struct item *it,
			epoll_data_t data, bool may_be_gone)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT };
	struct conn *c = conn_of(it);
	bool open;

	if (may_be_gone) {
		switch (owner_lock(&it->g)) {
		case ITEM_DELETED:
			count(&w->late);
			pthread_mutex_unlock(&it->g.lock);
			return true;
		case ITEM_STOPPED:
			/* the reaper deleted it, and frees it later */
			count(&w->stale);
			pthread_mutex_unlock(&it->g.lock);
			return true;
		case ITEM_HELD:
			break;
		}
	}
	open = receive(c);
	if (open) {
		c->seen_ns = now_ns();
		ev.data = data;
		if (epoll_ctl(P.epfd, EPOLL_CTL_MOD, it->c.fd[0], &ev))
			error_at("EPOLL_CTL_MOD of fd %d: %s", it->c.fd[0],
				 strerror(errno));
	} else {
		inc(&S.client_closes);
		it->g.stop = true;
	}
	if (may_be_gone)
		pthread_mutex_unlock(&it->g.lock);
	return open;
}

/*
 * The owner's work on a connection its poll reported ready (uring): as
 * conn_handle(), under the item's lock, with nothing to re-arm. One the
 * reaper has stopped is left alone: its close is on its way.
 */
static bool conn_ready(struct waiter *w, struct item *it)
{
	struct conn *c = conn_of(it);
	bool open = true;

	pthread_mutex_lock(&it->g.lock);
	if (it->g.stop) {
		count(&w->stale);
	} else if (receive(c)) {
		c->seen_ns = now_ns();
	} else {
		inc(&S.client_closes);
		it->g.stop = true;
		open = false;
	}
	pthread_mutex_unlock(&it->g.lock);
	return open;
}

/* The server's items come after the waiters start: none before */
static void conn_each_item(void (*fn)(void *arg, void *item), void *arg)
{
	(void)fn;
	(void)arg;
}

/* Put in the set, with the epoll_data the protocol chose */
static int conn_add(struct item *it, epoll_data_t data)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT };

	ev.data = data;
	return epoll_ctl(P.epfd, EPOLL_CTL_ADD, it->c.fd[0], &ev) ? errno : 0;
}

/* uring: a waiter took a new connection; only now may the reaper see it */
static void conn_adopt(struct item *it)
{
	pthread_mutex_lock(&S.table_lock);
	table_add_locked(it);
	pthread_mutex_unlock(&S.table_lock);
}

const struct driver conn_driver = {
	.vout = conn_vout,
	.vfail = conn_verror,
	.verror = conn_verror,
	.sys_call = conn_sys_call,
	.item_add = conn_add,
	.item_del = conn_del,
	.item_close = conn_close,
	.item_free = conn_free,
	.item_release = conn_release,
	.reclaimed = conn_nothing,
	.unfreed = conn_nothing,
	.item_handle = conn_handle,
	.item_ready = conn_ready,
	.item_adopt = conn_adopt,
	.each_item = conn_each_item,
};

/*
 * The protocols the server runs: those whose items a connection can be
 * (all: the driver allocates them), and that leave the item's lock to
 * the server
 */
static bool conn_fits(const struct protocol *p)
{
	return !p->set_lock;
}

const struct protocol *conn_protocol(const char *name)
{
	const struct protocol *p = protocol_named(name);

	return p && conn_fits(p) ? p : NULL;
}

void conn_protocol_names(char *buf, size_t len)
{
	unsigned int i;

	buf[0] = 0;
	for (i = 0; i < nr_protocols; i++)
		if (conn_fits(protocols[i]))
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s",
				 buf[0] ? "|" : "", protocols[i]->name);
}

struct conn *conn_new(int fd)
{
	unsigned long id = atomic_fetch_add(&S.next_id, 1);
	struct item *it = id < MAX_IDS ? item_alloc() : NULL;
	struct conn *c;

	if (!it) {
		error_at("no room for connection %lu", id);
		if (it)
			free(item_block(it));
		return NULL;
	}
	c = conn_of(it);
	item_guard_init(&c->it.g);
	c->it.c.fd[0] = fd;
	c->it.c.fd[1] = -1;
	c->it.c.events = EPOLLIN | EPOLLONESHOT;
	c->id = id;
	c->seen_ns = now_ns();
	inc(&S.allocs);
	return c;
}

/* The plain way in: the table, then the set, before a waiter can close it */
void conn_enter(struct item *it)
{
	pthread_mutex_lock(&S.table_lock);
	table_add_locked(it);
	if (item_add(it, item_data(it)))
		error_at("EPOLL_CTL_ADD: %s", strerror(errno));
	pthread_mutex_unlock(&S.table_lock);
}

/*
 * The reaper closes @it from outside the waiters, as the protocol says.
 * Must be called with it->g.lock held, which the protocol drops.
 */
void reap(struct item *it)
{
	struct conn *c = conn_of(it);

	c->cancelled = true;
	it->decided = now_ns();
	if (has_unread(c))
		inc(&S.unread);
	/* decided closed, not yet freed: conn_free() takes it off */
	atomic_fetch_add(&S.held, 1);
	reaping = it;
	opt.protocol->cancel(it);
	reaping = NULL;
}

/* Back to malloc, what the quarantine holds: no thread may look */
void conn_quarantine_drain(void)
{
	quarantine_drain(&quarantine);
}

