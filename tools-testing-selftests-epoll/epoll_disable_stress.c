// SPDX-License-Identifier: GPL-2.0
/*
 * EPOLL_CTL_DISABLE under a server's load, for a few seconds: waiters in
 * epoll_wait() on one set of sockets, while clients write to them and now
 * and then delete one with epoll_disable.h's protocol and make another.
 * It requires every item deleted once, none touched after its deletion
 * (a deleted item is poisoned, not freed), no byte lost, and an owner's
 * delete for each EBUSY; it prints how many EBUSY answers there were.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>

#include "kselftest_harness.h"
#include "epoll_disable.h"

/* A socketpair an item, as many as the design's test; make scale has its own */
#ifndef SERVER_ITEMS
#define SERVER_ITEMS	500
#define SERVER_WAITERS	100
#define SERVER_LOAD_S	2
#define SERVER_TIMEOUT	30
#endif
#define CLIENTS		4
/* The items' files and a few more: over the usual soft limit of 1024 */
#define SERVER_FILES	(2 * SERVER_ITEMS + 64)

struct item {
	struct item_guard g;
	int fd[2];		/* fd[0] is watched; clients write to fd[1] */
};

static struct {
	int ep;
	struct item *slot[SERVER_ITEMS];
	atomic_bool quit;
	atomic_ulong made, deleted, late, owner_deletes;
	atomic_ulong written, read, closed, busy;
	atomic_int error;	/* an unexpected errno */
} srv;

/* With it->g.lock held: its files closed, the bytes left in them counted */
static void item_delete(struct item *it)
{
	int pending = 0;

	if (ctl(srv.ep, EPOLL_CTL_DEL, it->fd[0]) ||
	    ioctl(it->fd[0], FIONREAD, &pending))
		srv.error = errno;
	srv.closed += pending;
	close(it->fd[0]);
	close(it->fd[1]);
	it->g.tag = ITEM_POISON;
	srv.deleted++;
}

static int item_arm(struct item *it, int op)
{
	struct epoll_event ev = {
		.events = EPOLLIN | EPOLLONESHOT | (it->fd[0] % 2 ? EPOLLET : 0),
		.data.ptr = it,
	};

	return epoll_ctl(srv.ep, op, it->fd[0], &ev) ? errno : 0;
}

/* A new item, in the set and armed, or NULL */
static struct item *item_new(void)
{
	struct item *it = calloc(1, sizeof(*it));

	if (!it || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, it->fd))
		return NULL;
	item_guard_init(&it->g);
	srv.made++;
	return item_arm(it, EPOLL_CTL_ADD) ? NULL : it;
}

/* The owner's part, for the item whose event this thread was handed */
static void serve(struct item *it)
{
	char buf[256];
	ssize_t n;

	/* Here a canceller may delete the item, but for the op */
	switch (owner_lock(&it->g)) {
	case ITEM_DELETED:
		srv.late++;
		break;
	case ITEM_STOPPED:
		item_delete(it);
		srv.owner_deletes++;
		break;
	case ITEM_HELD:
		while ((n = read(it->fd[0], buf, sizeof(buf))) > 0)
			srv.read += n;
		if (item_arm(it, EPOLL_CTL_MOD))
			srv.error = errno;
	}
	pthread_mutex_unlock(&it->g.lock);
}

static void *waiter(void *arg)
{
	struct epoll_event ev;

	while (epoll_wait(srv.ep, &ev, 1, -1) == 1 && ev.data.ptr)
		serve(ev.data.ptr);
	return arg;	/* the quit eventfd (data NULL): the test is over */
}

/* Delete an item this thread was not handed, with it->g.lock held */
static void cancel(struct item *it)
{
	int err = cancel_locked(&it->g, srv.ep, it->fd[0]);

	if (!err)
		item_delete(it);
	else if (err == EBUSY)
		srv.busy++;
	else
		srv.error = err;
}

/*
 * A client writes a byte to one of its items at a time. One write in 64
 * it then deletes the item, as a server closes a connection while serving
 * others, at once or every other time after a yield, so that a waiter
 * handed the event waits for the item's lock right then; and it puts a
 * new item in its place, on the file numbers just freed if DISABLE said 0.
 */
static void *client(void *arg)
{
	unsigned int n, seed = (long)arg;
	struct item *it;
	int i;

	for (n = 1; !atomic_load(&srv.quit); n++) {
		i = (long)arg + CLIENTS * (rand_r(&seed) % (SERVER_ITEMS / CLIENTS));
		it = srv.slot[i];
		pthread_mutex_lock(&it->g.lock);
		if (write(it->fd[1], "x", 1) == 1)
			srv.written++;
		if (n % 64 == 0) {
			if (n % 128 == 0) {
				pthread_mutex_unlock(&it->g.lock);
				sched_yield();
				pthread_mutex_lock(&it->g.lock);
			}
			cancel(it);
			srv.slot[i] = item_new();
		}
		pthread_mutex_unlock(&it->g.lock);
		if (!srv.slot[i]) {
			srv.error = errno;
			return NULL;
		}
	}
	return NULL;
}

FIXTURE(server) {
	pthread_t waiters[SERVER_WAITERS], clients[CLIENTS];
	int quit;
};

FIXTURE_SETUP(server)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	int i;

	srv.ep = epoll_create1(0);
	/* Level-triggered and never re-armed: wakes every waiter at the end */
	self->quit = eventfd(0, 0);
	ASSERT_EQ(0, epoll_ctl(srv.ep, EPOLL_CTL_ADD, self->quit, &ev));
	for (i = 0; i < SERVER_ITEMS; i++)
		ASSERT_NE(NULL, srv.slot[i] = item_new());
}

FIXTURE_TEARDOWN(server)
{
}

/*
 * The load; then quiescence, waited for and never timed: the clients
 * joined, so nothing is written any more; the waiters woken by the quit
 * eventfd and joined, each done with the event it held, so every EBUSY
 * has had its owner's delete; and what is still ready served by this
 * thread alone, until epoll_wait() has nothing. Then every byte written
 * must have been read or been in its item when the item was deleted (a
 * lost wakeup leaves bytes unread), and every item left is deleted.
 */
TEST_F_TIMEOUT(server, load, SERVER_TIMEOUT)
{
	struct epoll_event ev;
	unsigned long unread;
	struct item *it;
	long i;

	for (i = 0; i < SERVER_WAITERS; i++)
		ASSERT_EQ(0, pthread_create(&self->waiters[i], NULL, waiter,
					    NULL));
	for (i = 0; i < CLIENTS; i++)
		ASSERT_EQ(0, pthread_create(&self->clients[i], NULL, client,
					    (void *)i));
	sleep(SERVER_LOAD_S);
	atomic_store(&srv.quit, true);
	for (i = 0; i < CLIENTS; i++)
		pthread_join(self->clients[i], NULL);
	ASSERT_EQ(0, eventfd_write(self->quit, 1));
	for (i = 0; i < SERVER_WAITERS; i++)
		pthread_join(self->waiters[i], NULL);
	ASSERT_EQ(0, ctl(srv.ep, EPOLL_CTL_DEL, self->quit));
	while (epoll_wait(srv.ep, &ev, 1, 0) == 1)
		serve(ev.data.ptr);
	unread = srv.written - srv.read - srv.closed;
	for (i = 0; i < SERVER_ITEMS; i++) {
		it = srv.slot[i];
		if (!it)
			continue;	/* the client failed: the error says so */
		pthread_mutex_lock(&it->g.lock);
		cancel(it);
		pthread_mutex_unlock(&it->g.lock);
	}

	ksft_print_msg("%d items, %d waiters, %d s: %lu bytes, %lu items made\n",
		       SERVER_ITEMS, SERVER_WAITERS, SERVER_LOAD_S, srv.read, srv.made);
	ksft_print_msg("DISABLE EBUSY %lu, owner deletes %lu, late touches %lu\n",
		       srv.busy, srv.owner_deletes, srv.late);
	EXPECT_EQ(0, srv.error) TH_LOG("unexpected: %s", strerror(srv.error));
	EXPECT_EQ(srv.made, srv.deleted)
		TH_LOG("every item deleted exactly once:");
	EXPECT_EQ(0UL, srv.late) TH_LOG("no item touched after its deletion:");
	EXPECT_EQ(0UL, unread)
		TH_LOG("every byte read or deleted with its item:");
	EXPECT_EQ(srv.busy, srv.owner_deletes)
		TH_LOG("each EBUSY followed by the owner's delete:");
}

/* Not TEST_HARNESS_MAIN: on a kernel without the op it would exit 0 */
int main(int argc, char **argv)
{
	enum probe_found found;
	struct rlimit nofile;
	char why[96];

	found = probe_for_disable(argc, argv, why, sizeof(why));
	if (found == NO_DISABLE)
		ksft_exit_skip("%s\n", why);
	if (found == PROBE_FAILED)
		ksft_exit_fail_msg("%s\n", why);
	/* As far as the hard limit allows, or past it with the privilege */
	if (getrlimit(RLIMIT_NOFILE, &nofile))
		ksft_exit_fail_msg("getrlimit: %s\n", strerror(errno));
	if (nofile.rlim_cur < SERVER_FILES) {
		nofile.rlim_cur = SERVER_FILES;
		if (nofile.rlim_max < SERVER_FILES)
			nofile.rlim_max = SERVER_FILES;
		if (setrlimit(RLIMIT_NOFILE, &nofile))
			ksft_exit_skip("%d open files needed, over RLIMIT_NOFILE's hard limit\n",
				       SERVER_FILES);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	return test_harness_run(argc, argv);
}
