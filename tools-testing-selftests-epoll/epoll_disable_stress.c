// SPDX-License-Identifier: GPL-2.0
/*
 * EPOLL_CTL_DISABLE under a server's load: the protocol the op exists for,
 * while many threads wait on the set. epoll_disable_test has the contract.
 *
 * Waiters block in epoll_wait() on one set of socketpairs; a writer keeps
 * them busy; four cancellers delete items under the load and re-create
 * them on the file numbers just freed; then every item left is deleted. A
 * deletion is:
 *
 *   lock item; stop = 1;
 *   EPOLL_CTL_DISABLE == 0      -> nobody was handed the event: delete now
 *   EPOLL_CTL_DISABLE == EBUSY  -> a waiter holds the event; it sees stop
 *                                  under the item lock and deletes the item
 *   unlock item
 *
 * Deleted items keep a poisoned tag instead of being freed, so that a
 * waiter touching one (a use-after-free in a real server) is counted.
 *
 * Every assertion is an invariant of the protocol: each item deleted
 * exactly once, none touched after its deletion, no byte lost, and one
 * owner's delete for each EBUSY. How often DISABLE answered EBUSY is the
 * scheduler's doing: the test prints it and requires nothing of it ('make
 * soak' does, over many runs).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "epoll_disable.h"

/*
 * The server. Each connection is an item of the set, with the protocol's
 * lock, tag and stop flag and a count of its deletions; a slot holds an
 * item until a canceller replaces it.
 */
#ifndef SERVER_ITEMS
#define SERVER_ITEMS	500
#endif
#ifndef SERVER_WAITERS
#define SERVER_WAITERS	100
#endif
#ifndef SERVER_LOAD_MS
#define SERVER_LOAD_MS	2000
#endif
#define CANCELLERS	4
#define DELETE_EVERY_US	2000
/* The final deletions are spread over this long, each meeting the load */
#define CANCEL_MS	1000
/* How long to wait for the waiters to catch up */
#define SETTLE_MS	(5000 + SERVER_ITEMS)

struct item {
	struct item_guard g;	/* the tag is ITEM_POISON once deleted */
	int fd[2];		/* fd[0] is watched; the writer uses fd[1] */
	unsigned int events;
	int deletions;
	struct item *next;	/* every item ever made, for the final count */
};

static struct {
	int ep, quitfd;
	struct item *slot[SERVER_ITEMS];
	struct item *all;
	pthread_mutex_t all_lock;
	atomic_bool pause, paused, quit, cancellers_quit;
	atomic_ulong written, read, closed, handled, recreated;
	atomic_ulong deleted, late_touches, owner_deletes;
	atomic_ulong disable_ok, disable_busy, errors;
	char first_error[256];
	pthread_mutex_t error_lock;
} srv = {
	.ep = -1,
	.quitfd = -1,
	.all_lock = PTHREAD_MUTEX_INITIALIZER,
	.error_lock = PTHREAD_MUTEX_INITIALIZER,
};

static void error_at(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&srv.error_lock);
	if (!atomic_fetch_add(&srv.errors, 1)) {
		va_start(ap, fmt);
		vsnprintf(srv.first_error, sizeof(srv.first_error), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&srv.error_lock);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static struct item *slot_get(int i)
{
	return __atomic_load_n(&srv.slot[i], __ATOMIC_ACQUIRE);
}

static void slot_set(int i, struct item *it)
{
	__atomic_store_n(&srv.slot[i], it, __ATOMIC_RELEASE);
}

/* Called with it->g.lock held: the one place where an item is deleted */
static void item_delete(struct item *it)
{
	if (epoll_ctl(srv.ep, EPOLL_CTL_DEL, it->fd[0], NULL))
		error_at("EPOLL_CTL_DEL of fd %d: %s", it->fd[0],
			 strerror(errno));
	it->g.tag = ITEM_POISON;
	it->deletions++;
	atomic_fetch_add(&srv.deleted, 1);
}

static int item_arm(struct item *it, int op)
{
	struct epoll_event ev = { .events = it->events, .data.ptr = it };

	return epoll_ctl(srv.ep, op, it->fd[0], &ev);
}

/* Called with it->g.lock held, for an event this waiter was handed */
static void item_handle(struct item *it)
{
	char buf[256];
	ssize_t n;

	while ((n = read(it->fd[0], buf, sizeof(buf))) > 0)
		atomic_fetch_add(&srv.read, n);
	if (n < 0 && errno != EAGAIN)
		error_at("read of fd %d: %s", it->fd[0], strerror(errno));
	atomic_fetch_add(&srv.handled, 1);
	if (item_arm(it, EPOLL_CTL_MOD))
		error_at("EPOLL_CTL_MOD of fd %d: %s", it->fd[0],
			 strerror(errno));
}

static void *waiter(void *arg)
{
	struct epoll_event ev;
	struct item *it;
	int n;

	for (;;) {
		n = epoll_wait(srv.ep, &ev, 1, 1000);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			error_at("epoll_wait: %s", strerror(errno));
			return arg;
		}
		if (n == 0)
			continue;
		it = ev.data.ptr;
		if (!it)
			return arg;	/* quitfd: the test is over */

		/* Here the item may be deleted under us, but for the op */
		switch (owner_lock(&it->g)) {
		case ITEM_DELETED:
			atomic_fetch_add(&srv.late_touches, 1);
			break;
		case ITEM_STOPPED:
			/* DISABLE said EBUSY: we hold the event, we delete */
			item_delete(it);
			atomic_fetch_add(&srv.owner_deletes, 1);
			break;
		case ITEM_HELD:
			item_handle(it);
			break;
		}
		pthread_mutex_unlock(&it->g.lock);
	}
}

/* Called with it->g.lock held: one byte for the item's waiter */
static void put(struct item *it, char c)
{
	if (write(it->fd[1], &c, 1) == 1)
		atomic_fetch_add(&srv.written, 1);
	else if (errno != EAGAIN)
		error_at("write of fd %d: %s", it->fd[1], strerror(errno));
}

static void *writer(void *arg)
{
	struct item *it;
	unsigned long i;

	for (i = 0; !atomic_load(&srv.quit); i++) {
		if (atomic_load(&srv.pause)) {
			atomic_store(&srv.paused, true);
			sleep_us(1000);
			continue;
		}
		atomic_store(&srv.paused, false);
		it = slot_get(i % SERVER_ITEMS);
		pthread_mutex_lock(&it->g.lock);
		if (it->g.tag == ITEM_LIVE)
			put(it, 'x');
		pthread_mutex_unlock(&it->g.lock);
		if (i % SERVER_ITEMS == 0)
			sched_yield();
	}
	return arg;
}

/* Delete an item this thread was not handed. Called with it->g.lock held. */
static void cancel(struct item *it)
{
	int err = cancel_locked(&it->g, srv.ep, it->fd[0]);

	if (!err) {
		atomic_fetch_add(&srv.disable_ok, 1);
		item_delete(it);
	} else if (err == EBUSY) {
		atomic_fetch_add(&srv.disable_busy, 1);
	} else {
		error_at("EPOLL_CTL_DISABLE of fd %d: %s", it->fd[0],
			 strerror(err));
	}
}

/* A new item for slot @i, in the set, armed; NULL with errno set if not */
static struct item *item_new(int i)
{
	struct item *it = calloc(1, sizeof(*it));

	if (!it)
		return NULL;
	item_guard_init(&it->g);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		       0, it->fd)) {
		free(it);
		return NULL;
	}
	it->events = EPOLLIN | EPOLLONESHOT | (i % 2 ? EPOLLET : 0);
	pthread_mutex_lock(&srv.all_lock);
	it->next = srv.all;
	srv.all = it;
	pthread_mutex_unlock(&srv.all_lock);
	if (item_arm(it, EPOLL_CTL_ADD))
		return NULL;	/* on srv.all: counted as never deleted */
	return it;
}

/*
 * Wait until @it, which a canceller cancelled, is deleted: at once if
 * DISABLE said 0, else by the waiter that holds its event. Then close its
 * socketpair, counting the bytes left in it, so that the numbers can be
 * reused. False if it is still there after SETTLE_MS.
 */
static bool close_when_deleted(struct item *it)
{
	long deadline = now_ms() + SETTLE_MS;
	int pending = 0;
	bool gone;

	for (;;) {
		pthread_mutex_lock(&it->g.lock);
		gone = it->deletions;
		if (gone) {
			if (!ioctl(it->fd[0], FIONREAD, &pending))
				atomic_fetch_add(&srv.closed, pending);
			close(it->fd[0]);
			close(it->fd[1]);
			it->fd[0] = -1;
			it->fd[1] = -1;
		}
		pthread_mutex_unlock(&it->g.lock);
		if (gone)
			return true;
		if (now_ms() > deadline)
			return false;
		sleep_us(100);
	}
}

/*
 * A canceller, as a server closes connections while serving others: every
 * DELETE_EVERY_US it picks one of its slots, makes the item ready (a
 * connection that just got data), cancels it, waits until it is deleted,
 * and puts a new item in the slot on the file numbers just freed. Every
 * other time the data comes while the canceller holds the item lock, so
 * that a waiter handed the event waits for the lock right then, whatever
 * the number of CPUs: the moment DISABLE answers EBUSY for.
 */
static void *canceller(void *arg)
{
	int id = (int)(long)arg;
	/* This canceller's slots: id, id + CANCELLERS, id + 2 * CANCELLERS, ... */
	int mine = (SERVER_ITEMS - id + CANCELLERS - 1) / CANCELLERS;
	unsigned int seed = id + 1;
	struct item *it;
	int i;

	while (mine > 0 && !atomic_load(&srv.cancellers_quit)) {
		i = id + CANCELLERS * (rand_r(&seed) % mine);
		it = slot_get(i);
		pthread_mutex_lock(&it->g.lock);
		put(it, 'y');
		if (rand_r(&seed) % 2) {
			pthread_mutex_unlock(&it->g.lock);
			sched_yield();
			pthread_mutex_lock(&it->g.lock);
		} else {
			sched_yield();
		}
		cancel(it);
		pthread_mutex_unlock(&it->g.lock);
		if (!close_when_deleted(it))
			return NULL;	/* the final count says so */
		it = item_new(i);
		if (!it) {
			error_at("re-creating item %d: %s", i, strerror(errno));
			return NULL;
		}
		slot_set(i, it);
		atomic_fetch_add(&srv.recreated, 1);
		sleep_us(DELETE_EVERY_US);
	}
	return NULL;
}

/* Wait until cond() holds or SETTLE_MS pass; true if it holds */
static bool settle(bool (*cond)(void))
{
	long deadline = now_ms() + SETTLE_MS;

	while (!cond()) {
		if (now_ms() > deadline)
			return false;
		sleep_us(1000);
	}
	return true;
}

static bool writer_is_paused(void)
{
	return atomic_load(&srv.paused);
}

static bool all_read(void)
{
	return atomic_load(&srv.read) + atomic_load(&srv.closed) ==
	       atomic_load(&srv.written);
}

static bool all_deleted(void)
{
	return atomic_load(&srv.deleted) >=
	       SERVER_ITEMS + atomic_load(&srv.recreated);
}

FIXTURE(server) {
	pthread_t waiters[SERVER_WAITERS];
	pthread_t writer, cancellers[CANCELLERS];
};

FIXTURE_SETUP(server)
{
	rlim_t need = 2 * SERVER_ITEMS + 64;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	struct rlimit rl;
	int i;

	/* Two fds an item; raise the soft limit, and the hard one if root */
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_cur < need) {
		rl.rlim_cur = need;
		rl.rlim_max = rl.rlim_max < need ? need : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			SKIP(return, "RLIMIT_NOFILE cannot be raised to %lu: %s",
			     (unsigned long)need, strerror(errno));
	}
	srv.ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_GE(srv.ep, 0);
	srv.quitfd = eventfd(0, EFD_CLOEXEC);
	ASSERT_GE(srv.quitfd, 0);
	/* Level-triggered and never re-armed: wakes every waiter at the end */
	ASSERT_EQ(0, epoll_ctl(srv.ep, EPOLL_CTL_ADD, srv.quitfd, &ev));
	for (i = 0; i < SERVER_ITEMS; i++) {
		srv.slot[i] = item_new(i);
		ASSERT_NE(NULL, srv.slot[i]);
	}
}

FIXTURE_TEARDOWN(server)
{
	struct item *it;

	for (it = srv.all; it; it = it->next) {
		if (it->fd[0] >= 0) {
			close(it->fd[0]);
			close(it->fd[1]);
		}
	}
	if (srv.quitfd >= 0)
		close(srv.quitfd);
	if (srv.ep >= 0)
		close(srv.ep);
}

/* Deterministic, so that each run deletes the items in the same order */
static void shuffle(int *v, int n)
{
	unsigned int seed = 1;
	int i, j, t;

	for (i = n - 1; i > 0; i--) {
		j = rand_r(&seed) % (i + 1);
		t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
}

/*
 * Load, with items deleted and re-created under it; then every byte
 * written must have reached a waiter or been in its item's socket when
 * the item was deleted: a lost wakeup leaves bytes unread. Then delete
 * every item while the writer keeps the events coming, paced so that each
 * deletion can meet a waiter that was just handed that item's event.
 */
TEST_F_TIMEOUT(server, load, 300)
{
	unsigned long once = 0, never = 0, twice = 0, left = 0, made;
	unsigned long busy, owners, late, unread;
	int order[SERVER_ITEMS];
	bool drained, all_gone;
	struct item *it;
	int i;

	for (i = 0; i < SERVER_WAITERS; i++)
		ASSERT_EQ(0, pthread_create(&self->waiters[i], NULL, waiter,
					    NULL));
	ASSERT_EQ(0, pthread_create(&self->writer, NULL, writer, NULL));
	for (i = 0; i < CANCELLERS; i++)
		ASSERT_EQ(0, pthread_create(&self->cancellers[i], NULL, canceller,
					    (void *)(long)i));

	sleep_us(SERVER_LOAD_MS * 1000L);
	atomic_store(&srv.cancellers_quit, true);
	for (i = 0; i < CANCELLERS; i++)
		pthread_join(self->cancellers[i], NULL);
	atomic_store(&srv.pause, true);
	drained = settle(writer_is_paused) && settle(all_read);
	unread = atomic_load(&srv.written) - atomic_load(&srv.read) -
		 atomic_load(&srv.closed);

	atomic_store(&srv.pause, false);
	for (i = 0; i < SERVER_ITEMS; i++)
		order[i] = i;
	shuffle(order, SERVER_ITEMS);
	sleep_us(CANCEL_MS * 100L);
	for (i = 0; i < SERVER_ITEMS; i++) {
		it = slot_get(order[i]);
		pthread_mutex_lock(&it->g.lock);
		cancel(it);
		pthread_mutex_unlock(&it->g.lock);
		sleep_us(CANCEL_MS * 1000L / SERVER_ITEMS);
	}
	all_gone = settle(all_deleted);

	atomic_store(&srv.quit, true);
	pthread_join(self->writer, NULL);
	ASSERT_EQ(0, eventfd_write(srv.quitfd, 1));
	for (i = 0; i < SERVER_WAITERS; i++)
		pthread_join(self->waiters[i], NULL);

	for (it = srv.all; it; it = it->next) {
		int pending = 0;

		once += it->deletions == 1;
		never += it->deletions == 0;
		twice += it->deletions > 1;
		if (it->fd[0] >= 0 && !ioctl(it->fd[0], FIONREAD, &pending))
			left += pending;
	}
	made = SERVER_ITEMS + atomic_load(&srv.recreated);
	busy = atomic_load(&srv.disable_busy);
	owners = atomic_load(&srv.owner_deletes);
	late = atomic_load(&srv.late_touches);

	ksft_print_msg("%d items, %d waiters, %d ms: %lu events, %lu connections re-created\n",
		       SERVER_ITEMS, SERVER_WAITERS, SERVER_LOAD_MS,
		       atomic_load(&srv.handled), atomic_load(&srv.recreated));
	ksft_print_msg("DISABLE 0/EBUSY %lu/%lu, owner deletes %lu, late touches %lu\n",
		       atomic_load(&srv.disable_ok), busy, owners, late);
	ksft_print_msg("bytes written %lu, read %lu, in deleted items %lu, left in sockets %lu\n",
		       atomic_load(&srv.written), atomic_load(&srv.read),
		       atomic_load(&srv.closed), left);

	EXPECT_EQ(0UL, atomic_load(&srv.errors))
		TH_LOG("unexpected errors, the first: %s", srv.first_error);
	EXPECT_TRUE(all_gone && once == made)
		TH_LOG("every item deleted exactly once: %lu of %lu, %lu never, %lu twice",
		       once, made, never, twice);
	EXPECT_EQ(0UL, late)
		TH_LOG("no item touched after its deletion: %lu late touches",
		       late);
	EXPECT_TRUE(drained)
		TH_LOG("every byte read or deleted with its item: %lu unread after the load",
		       unread);
	EXPECT_EQ(busy, owners)
		TH_LOG("each EBUSY followed by the owner's delete: EBUSY %lu, owner deletes %lu",
		       busy, owners);
}

int main(int argc, char **argv)
{
	if (!have_disable())
		ksft_exit_skip("EPOLL_CTL_DISABLE not supported by this kernel\n");
	/* The tests run in children: let no line wait in a buffer */
	setvbuf(stdout, NULL, _IOLBF, 0);
	return test_harness_run(argc, argv);
}
