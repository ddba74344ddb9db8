// SPDX-License-Identifier: GPL-2.0
/*
 * The server's uring protocol, the waiters' side.  Each waiter is the
 * only thread that submits to its ring and reaps it; what it reaps is a
 * message (from the acceptor: a new connection; from the canceller:
 * close one), a poll's completion, or a failed cancel.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server.h"

/*
 * uring: a new connection reaches its waiter, which puts it in the table
 * and arms its poll; only now can the canceller find it, so its message
 * to close it comes after this one
 */
static void uring_adopt(void *arg, void *item)
{
	struct waiter *w = arg;
	struct item *it = item;

	pthread_mutex_lock(&S.table_lock);
	table_add_locked(it);
	pthread_mutex_unlock(&S.table_lock);
	if (!ring_poll(&w->home.ring, it->fd, it))
		error_at("no SQE for the poll of fd %d", it->fd);
}

/*
 * uring: the poll's terminal completion of a closing item: no
 * completion of this ring names it any more, so close and free it
 */
static void uring_free(struct waiter *w, struct item *it)
{
	w->home.ending--;
	table_remove(it);
	fd_close(it);
	if (it->cancelled)
		atomic_fetch_sub(&S.held, 1);
	item_free(it);
}

/*
 * uring: cancel @it's poll, the close being claimed (g.stop set under
 * the lock by the canceller, or by this waiter when the client went
 * away); the close and the free wait for the poll's last completion
 */
static void uring_close(void *arg, void *item)
{
	struct waiter *w = arg;
	struct item *it = item;

	if (it->closing) {
		error_at("fd %d: closed twice", it->fd);
		return;
	}
	it->closing = true;
	w->home.ending++;
	if (!ring_cancel(&w->home.ring, it))
		error_at("no SQE for the cancel of fd %d", it->fd);
	if (it->cancelled && opt.fault == FAULT_EARLY_FREE)
		uring_free(w, it);	/* before the poll's end: wrong */
}

/*
 * uring: serve what the client sent, under the item's lock; false if
 * the client went away, and this waiter now owns the close. A
 * connection the canceller has claimed is left alone: its message is
 * on its way.
 */
static bool uring_serve(struct item *it)
{
	bool open = true;

	pthread_mutex_lock(&it->g.lock);
	if (it->g.stop) {
		inc(&S.stale);
	} else if (receive(it)) {
		it->seen_ns = now_ns();
	} else {
		inc(&S.client_closes);
		it->g.stop = true;
		open = false;
	}
	pthread_mutex_unlock(&it->g.lock);
	return open;
}

/* uring: a completion of @it's poll; a poll that ended by itself re-arms */
static void uring_event(void *arg, void *item,
			const struct io_uring_cqe *cqe)
{
	bool more = cqe->flags & IORING_CQE_F_MORE;
	struct waiter *w = arg;
	struct item *it = item;

	/* the window in which a canceller may free it under us */
	if (opt.delay_us)
		sleep_us(opt.delay_us);
	if (it->g.tag != ITEM_LIVE) {
		inc(&S.late);
		return;
	}
	if (it->closing) {
		if (!more)
			uring_free(w, it);
		else
			inc(&S.stale);
		return;
	}
	if (cqe->res < 0 && cqe->res != -ECANCELED)
		error_at("poll of fd %d: %s", it->fd, strerror(-cqe->res));
	if (cqe->res > 0 && !uring_serve(it)) {
		uring_close(w, it);
		return;
	}
	if (!more && !ring_poll(&w->home.ring, it->fd, it))
		error_at("no SQE for the poll of fd %d", it->fd);
}

static const struct home_ops uring_ops = {
	.arm = uring_adopt,
	.cancel = uring_close,
	.event = uring_event,
};

/*
 * uring: the waiter sets up its ring in its own thread and polls quitfd
 * there; once quitfd fires it goes on until every message sent to it is
 * reaped and every poll it cancelled has ended (or a second later)
 */
void *uring_waiter(struct waiter *w)
{
	int err;

	err = home_open(&w->home, URING_SQ, URING_CQ, NULL, S.quitfd);
	atomic_fetch_add(&S.ready, 1);
	if (err) {
		error_at("io_uring_setup: %s", strerror(err));
		return NULL;
	}
	err = home_run(&w->home, WAIT_MS, &uring_ops, w);
	if (err)
		error_at("io_uring_enter: %s", strerror(-err));
	if (w->home.cancel_err)
		error_at("cancel of a poll: %s",
			 strerror(-w->home.cancel_err));
	ring_close(&w->home.ring);
	return NULL;
}

/*
 * uring: a thread that sends messages (the acceptor, the canceller) has a
 * ring of its own for them
 */
static __thread struct ring msg_ring = { .fd = -1 };

/* uring: tell @it's waiter to adopt it, or to close it */
void uring_send(struct item *it, enum ring_tag tag)
{
	int err;

	if (msg_ring.fd < 0) {
		err = ring_open(&msg_ring, URING_SQ, URING_CQ, NULL);
		if (err) {
			error_at("io_uring_setup: %s", strerror(err));
			return;
		}
	}
	if (!home_send(&msg_ring, &S.waiters[it->home].home,
		       ring_data(it, tag))) {
		error_at("no SQE for a message");
		return;
	}
	err = ring_flush(&msg_ring);
	if (err)
		error_at("IORING_OP_MSG_RING: %s", strerror(-err));
}

/* uring: a thread that sent messages is done */
void uring_stop_sending(void)
{
	if (msg_ring.fd >= 0)
		ring_close(&msg_ring);
}

