// SPDX-License-Identifier: GPL-2.0
/*
 * What the protocols share, linked into every driver: the run's state P,
 * the owner's step of a protocol that locks the item, and the functions
 * protocol.h declares, which reach the driver through its struct driver.
 * It names no protocol (the registry, protocols.c, does).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"

struct run P;
const struct driver *driver;

void out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	driver->vout(fmt, ap);
	va_end(ap);
}

void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	driver->vfail(fmt, ap);
	va_end(ap);
}

void error_at(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	driver->verror(fmt, ap);
	va_end(ap);
}

void sys_call(void)
{
	driver->sys_call();
}

int item_add(struct item *it, epoll_data_t data)
{
	return driver->item_add(it, data);
}

void item_del(struct item *it, bool close_fds)
{
	driver->item_del(it, close_fds);
}

void item_close(struct item *it)
{
	driver->item_close(it);
}

void item_free(struct item *it)
{
	driver->item_free(it);
}

void item_release(struct item *it)
{
	driver->item_release(it);
}

void reclaimed(struct item *it)
{
	driver->reclaimed(it);
}

void item_unfreed(struct item *it)
{
	driver->unfreed(it);
}

bool item_handle(struct waiter *w, struct item *it, epoll_data_t data,
		 bool may_be_gone)
{
	return driver->item_handle(w, it, data, may_be_gone);
}

bool item_ready(struct waiter *w, struct item *it)
{
	return driver->item_ready(w, it);
}

void item_adopt(struct item *it)
{
	driver->item_adopt(it);
}

void each_item(void (*fn)(void *arg, void *item), void *arg)
{
	driver->each_item(fn, arg);
}

size_t item_block_size(void)
{
	const struct protocol *p = P.protocol;

	return P.item_off + (p->item_size ? p->item_size : sizeof(struct item));
}

struct item *item_alloc(void)
{
	char *block = calloc(1, item_block_size());
	struct item *it;

	if (!block)
		return NULL;
	it = (struct item *)(block + P.item_off);
	pthread_mutex_init(&it->g.lock, NULL);
	return it;
}

int waiters_alloc(void)
{
	const struct protocol *p = P.protocol;
	size_t size = p->waiter_size ? p->waiter_size : sizeof(struct waiter);

	P.waiter_stride = (size + CACHELINE - 1) / CACHELINE * CACHELINE;
	P.waiters = aligned_alloc(CACHELINE, P.nr_waiters * P.waiter_stride);
	if (!P.waiters)
		return -1;
	memset(P.waiters, 0, P.nr_waiters * P.waiter_stride);
	return 0;
}

/*
 * The owner deletes the item whose event it holds: DISABLE said EBUSY,
 * or its peer went away. Must be called with it->g.lock held; drops it.
 */
static void owner_delete(struct item *it)
{
	item_del(it, true);
	pthread_mutex_unlock(&it->g.lock);
	item_free(it);
}

void locked_event(struct waiter *w, epoll_data_t data)
{
	struct item *it = data.ptr;

	switch (owner_lock(&it->g)) {
	case ITEM_DELETED:
		count(&w->late);
		pthread_mutex_unlock(&it->g.lock);
		break;
	case ITEM_STOPPED:
		/* DISABLE said EBUSY: we own the event, we delete */
		owner_delete(it);
		count(&w->owner_deletes);
		break;
	case ITEM_HELD:
		if (item_handle(w, it, data, false))
			pthread_mutex_unlock(&it->g.lock);
		else
			owner_delete(it);
		break;
	}
}

void kick(struct waiter *w)
{
	pthread_kill(w->thread, SIGUSR1);
	count(&w->kicks);
}

void *wait_loop(struct waiter *w)
{
	const struct protocol *p = P.protocol;
	struct epoll_event ev;
	int n;

	if (p->run_waiter)
		return p->run_waiter(w);
	for (;;) {
		if (p->wait_begin)
			p->wait_begin(w);
		sys_call();
		n = epoll_wait(P.epfd, &ev, 1, P.timeout);
		if (n <= 0 || !ev.data.ptr) {
			if (p->wait_none)
				p->wait_none(w);
			if (n < 0 && errno != EINTR) {
				error_at("epoll_wait: %s", strerror(errno));
				return NULL;
			}
			if (n > 0)
				return NULL;	/* quitfd: the run is over */
			continue;
		}
		if (p->woken)
			p->woken(w);

		/* The window in which the item may be freed under us */
		if (P.delay_us)
			sleep_us(P.delay_us);

		p->event(w, ev.data);
	}
}
