// SPDX-License-Identifier: GPL-2.0
/*
 * The server's uring protocol, a struct protocol of the server's own:
 * proto_uring.c reads and drains the bench's socketpairs and knows
 * nothing of a connection the client closes, which this one serves and
 * closes.  Each waiter is the only thread that submits to its ring and
 * reaps it; what it reaps is a message (from the acceptor: a new
 * connection; from the reaper: close one), a poll's completion, or a
 * failed cancel.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server.h"

/*
 * uring: a thread that sends messages (the acceptor, the reaper) has a
 * ring of its own for them
 */
static __thread struct ring msg_ring = { .fd = -1 };

/* uring: tell @it's waiter to adopt it, or to close it */
static void conn_uring_send(struct item *it, enum ring_tag tag)
{
	int err;

	if (msg_ring.fd < 0) {
		err = ring_open(&msg_ring, URING_SQ, URING_CQ, NULL);
		if (err) {
			error_at("io_uring_setup: %s", strerror(err));
			return;
		}
	}
	if (!home_send(&msg_ring, &P.waiters[it->home].home,
		       ring_data(it, tag))) {
		error_at("no SQE for a message");
		return;
	}
	err = ring_flush(&msg_ring);
	if (err)
		error_at("IORING_OP_MSG_RING: %s", strerror(-err));
}

/* uring: a thread that sent messages is done */
static void conn_uring_stop_sending(void)
{
	if (msg_ring.fd >= 0)
		ring_close(&msg_ring);
}

/*
 * uring: a new connection reaches its waiter, which puts it in the table
 * and arms its poll; only now can the reaper find it, so its message
 * to close it comes after this one
 */
static void conn_uring_adopt(void *arg, void *item)
{
	struct waiter *w = arg;
	struct item *it = item;

	item_adopt(it);
	if (!ring_poll(&w->home.ring, it->c.fd[0], it))
		error_at("no SQE for the poll of fd %d", it->c.fd[0]);
}

/*
 * uring: the poll's terminal completion of a closing item: no
 * completion of this ring names it any more, so close and free it
 */
static void conn_uring_free(struct waiter *w, struct item *it)
{
	w->home.ending--;
	item_free(it);
}

/*
 * uring: cancel @it's poll, the close being claimed (g.stop set under
 * the lock by the reaper, or by this waiter when the client went
 * away); the close and the free wait for the poll's last completion
 */
static void conn_uring_close(void *arg, void *item)
{
	struct waiter *w = arg;
	struct item *it = item;

	if (it->cancelling) {
		error_at("fd %d: closed twice", it->c.fd[0]);
		return;
	}
	it->cancelling = true;
	w->home.ending++;
	if (!ring_cancel(&w->home.ring, it))
		error_at("no SQE for the cancel of fd %d", it->c.fd[0]);
	if (conn_of(it)->cancelled && opt.fault == FAULT_EARLY_FREE)
		conn_uring_free(w, it);	/* before the poll's end */
}

/*
 * uring: serve what the client sent, under the item's lock; false if
 * the client went away, and this waiter now owns the close. A
 * connection the reaper has claimed is left alone: its message is on
 * its way.
 */
static bool conn_uring_serve(struct waiter *w, struct item *it)
{
	bool open = true;

	pthread_mutex_lock(&it->g.lock);
	if (it->g.stop) {
		count(&w->stale);
	} else if (receive(conn_of(it))) {
		conn_of(it)->seen_ns = now_ns();
	} else {
		inc(&S.client_closes);
		it->g.stop = true;
		open = false;
	}
	pthread_mutex_unlock(&it->g.lock);
	return open;
}

/* uring: a completion of @it's poll; a poll that ended by itself re-arms */
static void conn_uring_event(void *arg, void *item,
			     const struct io_uring_cqe *cqe)
{
	bool more = cqe->flags & IORING_CQE_F_MORE;
	struct waiter *w = arg;
	struct item *it = item;
	int fd = it->c.fd[0];

	/* the window in which a reaper may free it under us */
	if (P.delay_us)
		sleep_us(P.delay_us);
	if (it->g.tag != ITEM_LIVE) {
		count(&w->late);
		return;
	}
	if (it->cancelling) {
		if (!more)
			conn_uring_free(w, it);
		else
			count(&w->stale);
		return;
	}
	if (cqe->res < 0 && cqe->res != -ECANCELED)
		error_at("poll of fd %d: %s", fd, strerror(-cqe->res));
	if (cqe->res > 0 && !conn_uring_serve(w, it)) {
		conn_uring_close(w, it);
		return;
	}
	if (!more && !ring_poll(&w->home.ring, fd, it))
		error_at("no SQE for the poll of fd %d", fd);
}

static const struct home_ops conn_uring_ops = {
	.arm = conn_uring_adopt,
	.cancel = conn_uring_close,
	.event = conn_uring_event,
};

/*
 * uring: the waiter sets up its ring in its own thread and polls quitfd
 * there; once quitfd fires it goes on until every message sent to it is
 * reaped and every poll it cancelled has ended (or a second later)
 */
static void *conn_uring_waiter(struct waiter *w)
{
	int err;

	err = home_open(&w->home, URING_SQ, URING_CQ, NULL, P.quitfd);
	atomic_fetch_add(&S.ready, 1);
	if (err) {
		error_at("io_uring_setup: %s", strerror(err));
		return NULL;
	}
	err = home_run(&w->home, P.timeout, &conn_uring_ops, w);
	if (err)
		error_at("io_uring_enter: %s", strerror(-err));
	if (w->home.cancel_err)
		error_at("cancel of a poll: %s",
			 strerror(-w->home.cancel_err));
	ring_close(&w->home.ring);
	return NULL;
}

/* Every ring set up before a message is sent to it */
static void conn_uring_started(void)
{
	while (atomic_load(&S.ready) < P.nr_waiters)
		sleep_us(1000);
}

/* The acceptor's: deal the connection to a waiter, which adopts it */
static int conn_uring_add(struct item *it)
{
	it->home = S.next_home++ % P.nr_waiters;
	conn_uring_send(it, TAG_ARM);
	return 0;
}

/* Claimed: its waiter closes and frees it, told so */
static void conn_uring_cancel(struct item *it)
{
	it->g.stop = true;
	shutdown(it->c.fd[0], SHUT_RDWR);
	pthread_mutex_unlock(&it->g.lock);
	conn_uring_send(it, TAG_CANCEL);
}

const struct protocol conn_uring = {
	.name = "uring",
	.add = conn_uring_add,
	.run_waiter = conn_uring_waiter,
	.started = conn_uring_started,
	.canceller_end = conn_uring_stop_sending,
	.cancel = conn_uring_cancel,
};
