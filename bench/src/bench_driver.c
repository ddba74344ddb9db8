// SPDX-License-Identifier: GPL-2.0
/*
 * The bench's driver of the protocols (protocol.h), which -M proto,
 * -M reclaim (bench_proto.c) and -M burst (bench_burst.c) run: the items,
 * each a socketpair watched EPOLLIN | EPOLLONESHOT, in the writer's slots;
 * the waiters' handling of an event (drain the socket, re-arm); the
 * driver's side of a deletion (the set, the fds, the free into the
 * quarantine that counts a late touch, the reclaim samples); the counts
 * over every waiter; the setup and teardown of a run.  How an item is
 * deleted while a waiter may hold its event is the protocol's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench.h"
#include "bench_driver.h"

struct bench_run B;
static pthread_mutex_t error_lock = PTHREAD_MUTEX_INITIALIZER;

/* The first error of the run is kept, the others counted */
static void bench_verror(const char *fmt, va_list ap)
{
	pthread_mutex_lock(&error_lock);
	if (!atomic_fetch_add(&B.errors, 1))
		vsnprintf(B.first_error, sizeof(B.first_error), fmt, ap);
	pthread_mutex_unlock(&error_lock);
}

/*
 * The calling thread's count of io_uring_enter() and epoll_*() calls:
 * its struct waiter's, or the canceller's; NULL in the main thread,
 * whose calls (setup, teardown) are not the protocol's
 */
static __thread atomic_ulong *sys_calls;

/* The calling thread counts its calls in @c from now on */
void sys_calls_to(atomic_ulong *c)
{
	sys_calls = c;
}

/* Count one such call, just before it is made */
static void bench_sys_call(void)
{
	if (sys_calls)
		atomic_fetch_add_explicit(sys_calls, 1, memory_order_relaxed);
}

static void *quarantine_ring[QUARANTINE];
static struct quarantine quarantine =
	QUARANTINE_INIT(quarantine_ring, struct bench_item, it.g);

/* Back to malloc now, what the quarantine holds: no thread may look */
void quarantine_empty(void)
{
	quarantine_drain(&quarantine);
}

static void bench_release(struct item *it)
{
	pthread_mutex_destroy(&it->g.lock);
	free(item_block(it));
}

static void sample_add(struct samples *s, long long v)
{
	long i = atomic_fetch_add(&s->n, 1);

	if (i < MAX_SAMPLES)
		s->v[i] = v;
}

/* -M burst: a connection's buffer, resident as one that has been used */
int item_buf_alloc(struct item *it, size_t len)
{
	static long page;
	struct bench_item *b = bench_of(it);
	size_t i;

	if (!page)
		page = sysconf(_SC_PAGESIZE);
	b->buf = malloc(len);
	if (!b->buf)
		return -1;
	for (i = 0; i < len; i += page)
		b->buf[i] = 1;
	b->buf[len - 1] = 1;
	b->buf_len = len;
	atomic_fetch_add(&B.buf_bytes, len);
	return 0;
}

/* Its protocol says the item's memory may go: so may its buffer */
static void buf_free(struct item *it)
{
	struct bench_item *b = bench_of(it);
	long long t, last;

	free(b->buf);
	b->buf = NULL;
	atomic_fetch_sub(&B.buf_bytes, b->buf_len);
	t = now_ns();
	last = atomic_load(&B.last_buf_free);
	while (t > last &&
	       !atomic_compare_exchange_weak(&B.last_buf_free, &last, t))
		;
}

/* The item's memory may be reused now: count its wait if it was timed */
static void bench_reclaimed(struct item *it)
{
	if (bench_of(it)->buf)
		buf_free(it);
	if (bench_of(it)->timed && !atomic_load(&B.drained)) {
		sample_add(&B.reclaim, now_ns() - it->decided);
		atomic_fetch_sub(&B.pending, 1);
	}
}

/*
 * "free": poison the item and keep it for QUARANTINE more frees; an item
 * deleted in the window is reclaimed now, until the run stops counting
 */
static void bench_free(struct item *it)
{
	bench_reclaimed(it);
	it->g.tag = ITEM_POISON;
	quarantine_put(&quarantine, item_block(it));
}

static void bench_close(struct item *it)
{
	close(it->c.fd[0]);
	close(it->c.fd[1]);
}

/*
 * Remove an item from the set, if the protocol has one; @close_fds
 * unless they stay open a while
 */
__thread bool time_dels;

static void bench_del(struct item *it, bool close_fds)
{
	long long t0 = 0;

	if (!P.protocol->no_set) {
		sys_call();
		if (time_dels)
			t0 = now_ns();
		if (epoll_ctl(P.epfd, EPOLL_CTL_DEL, it->c.fd[0], NULL))
			error_at("EPOLL_CTL_DEL of fd %d: %s", it->c.fd[0],
				 strerror(errno));
		if (time_dels) {
			B.del_ns += now_ns() - t0;
			B.dels++;
		}
	}
	atomic_fetch_add_explicit(&P.deletions, 1, memory_order_relaxed);
	if (close_fds)
		bench_close(it);
}

/* Still not freed once the canceller is gone: its age so far is its wait */
static void bench_unfreed(struct item *it)
{
	if (bench_of(it)->timed)
		sample_add(&B.reclaim, now_ns() - it->decided);
}

/* The bench adds every item before the waiters start: nothing to do */
static void bench_adopt(struct item *it)
{
	(void)it;
}

static void bench_each_item(void (*fn)(void *arg, void *item), void *arg)
{
	int i;

	for (i = 0; i < P.n; i++)
		fn(arg, B.slots[i].it);
}

/* Give back an item that did not make it into the set */
static void item_unalloc(struct item *it)
{
	if (P.protocol->unalloc)
		P.protocol->unalloc(it);
	else
		item_release(it);
}

static int bench_add(struct item *it, epoll_data_t data)
{
	struct epoll_event ev = { .events = it->c.events, .data = data };

	sys_call();
	return epoll_ctl(P.epfd, EPOLL_CTL_ADD, it->c.fd[0], &ev) ? errno : 0;
}

struct item *item_new(void)
{
	const struct protocol *p = P.protocol;
	struct item *it = item_alloc();
	int tries = 0, err;

	if (!it)
		return NULL;
	while (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			  0, it->c.fd)) {
		/* deferred: retired items keep their fds until freed */
		if ((errno != EMFILE && errno != ENFILE) || tries++ > 1000 ||
		    !p->out_of_fds) {
			error_at("socketpair: %s", strerror(errno));
			item_unalloc(it);
			return NULL;
		}
		p->out_of_fds();
		sleep_us(1000);
	}
	it->g.tag = ITEM_LIVE;
	it->c.events = EPOLLIN | EPOLLONESHOT;
	err = p->add ? p->add(it) : item_add(it, item_data(it));
	if (err) {
		error_at("EPOLL_CTL_ADD: %s", strerror(err));
		item_close(it);
		it->g.tag = ITEM_POISON;
		item_unalloc(it);
		return NULL;
	}
	return it;
}

/*
 * For an event this waiter owns: drain the socket, re-arm the item.  The
 * writer never goes away, so neither does an item by itself: true.
 */
static bool bench_handle(struct waiter *w, struct item *it,
			 epoll_data_t data, bool may_be_gone)
{
	struct epoll_event ev = { .events = it->c.events, .data = data };
	char own[256], *buf = bench_of(it)->buf ? bench_of(it)->buf : own;
	ssize_t n;

	/* -M burst: into the item's own buffer, as a connection reads */
	while ((n = read(it->c.fd[0], buf, sizeof(own))) > 0)
		;
	if (n < 0 && errno != EAGAIN)
		error_at("read of fd %d: %s", it->c.fd[0], strerror(errno));
	/* @may_be_gone: deleted since we looked, and that is fine */
	sys_call();
	if (epoll_ctl(P.epfd, EPOLL_CTL_MOD, it->c.fd[0], &ev) &&
	    (errno != ENOENT || !may_be_gone))
		error_at("EPOLL_CTL_MOD of fd %d: %s", it->c.fd[0],
			 strerror(errno));
	atomic_fetch_add_explicit(&w->events, 1, memory_order_relaxed);
	return true;
}

/*
 * For an item its poll reported ready (a protocol with no set): drain
 * the socket, nothing to re-arm; a read that found nothing counts apart.
 * The writer never goes away: true.
 */
static bool bench_ready(struct waiter *w, struct item *it)
{
	char own[256], *buf = bench_of(it)->buf ? bench_of(it)->buf : own;
	ssize_t n, got = 0;

	/* -M burst: into the item's own buffer, as bench_handle() does */
	while ((n = read(it->c.fd[0], buf, sizeof(own))) > 0)
		got += n;
	if (n < 0 && errno != EAGAIN)
		error_at("read of fd %d: %s", it->c.fd[0], strerror(errno));
	count(got ? &w->events : &w->empty);
	return true;
}

void *proto_waiter(void *arg)
{
	struct waiter *w = arg;

	sys_calls_to(&w->sys);
	return wait_loop(w);
}

void totals(struct totals *t)
{
	struct waiter *w;
	int i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < P.nr_waiters; i++) {
		w = waiter_at(i);
		t->events += atomic_load(&w->events);
		t->late += atomic_load(&w->late);
		t->stale += atomic_load(&w->stale);
		t->owner_deletes += atomic_load(&w->owner_deletes);
		t->kicks += atomic_load(&w->kicks);
		t->waiter_sys += atomic_load(&w->sys);
		t->empty += atomic_load(&w->empty);
	}
	t->deletions = atomic_load(&P.deletions);
	t->sys = t->waiter_sys + atomic_load(&P.canceller_sys);
}

int proto_setup(void)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	int i;

	P.epfd = epoll_create1(EPOLL_CLOEXEC);
	P.quitfd = eventfd(0, EFD_CLOEXEC);
	if (P.epfd < 0 || P.quitfd < 0)
		return -1;
	/* Level-triggered, never re-armed: wakes every waiter at the end */
	if (epoll_ctl(P.epfd, EPOLL_CTL_ADD, P.quitfd, &ev))
		return -1;
	B.slots = calloc(P.n, sizeof(*B.slots));
	P.item_off = offsetof(struct bench_item, it);
	if (!B.slots || waiters_alloc())
		return -1;
	if (P.protocol->setup && P.protocol->setup())
		return -1;
	for (i = 0; i < P.n; i++) {
		pthread_mutex_init(&B.slots[i].lock, NULL);
		B.slots[i].it = item_new();
		if (!B.slots[i].it)
			return -1;
	}
	return 0;
}

void proto_teardown(void)
{
	int i;

	for (i = 0; i < P.n; i++) {
		if (!B.slots[i].it)
			continue;
		if (P.protocol->teardown_item) {
			P.protocol->teardown_item(B.slots[i].it);
		} else {
			item_del(B.slots[i].it, true);
			item_release(B.slots[i].it);
		}
		pthread_mutex_destroy(&B.slots[i].lock);
	}
	if (P.protocol->teardown)
		P.protocol->teardown();
	quarantine_drain(&quarantine);
	free(B.slots);
	free(P.waiters);
	close(P.epfd);
	close(P.quitfd);
}

const struct driver bench_driver = {
	.vout = bench_vout,
	.vfail = bench_vfail,
	.verror = bench_verror,
	.sys_call = bench_sys_call,
	.item_add = bench_add,
	.item_del = bench_del,
	.item_close = bench_close,
	.item_free = bench_free,
	.item_release = bench_release,
	.reclaimed = bench_reclaimed,
	.unfreed = bench_unfreed,
	.item_handle = bench_handle,
	.item_ready = bench_ready,
	.item_adopt = bench_adopt,
	.each_item = bench_each_item,
};
