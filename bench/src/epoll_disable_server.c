// SPDX-License-Identifier: GPL-2.0
/*
 * epoll_disable_server - a keep-alive HTTP/1.1 server that closes its
 * connections from outside its waiters, under wrk's load.
 *
 * The roles are epoll_disable.h's: each connection is an item, and the
 * threads are waiters and a canceller. The output keeps the words it has
 * always printed, which scripts read: there a waiter is a "worker", the
 * canceller the "reaper", and a canceller's close a "reap".
 *
 * N waiters wait in epoll_wait() on one set. Every connection is in it as
 * EPOLLIN | EPOLLONESHOT with its struct item in data.ptr; the waiter that
 * is handed the event, its owner, reads the requests, answers each with a
 * fixed 200 and re-arms the item with EPOLL_CTL_MOD. An acceptor thread
 * adds items, and a canceller thread closes them from outside the
 * waiters: those idle longer than -i, and -r forced closes a second at
 * random, so that it closes under load (wrk keeps every connection busy,
 * so -I clients of the server's own connect and say nothing, for the idle
 * closes). How the canceller closes an item that a waiter may have just
 * been handed is the protocol (-p):
 *
 *   disable   the protocol's steps: under the item's lock, stop it and
 *             ask EPOLL_CTL_DISABLE: 0, nobody holds its event, so
 *             EPOLL_CTL_DEL, close and free at once; EBUSY, its owner,
 *             finding it stopped under the lock, deletes, closes and
 *             frees it when it gets there
 *   deferred  no kernel help: EPOLL_CTL_DEL and shutdown() at once, then
 *             close and free only when every waiter has passed a
 *             quiescent point since (QSBR: a global epoch, one counter
 *             per waiter, read before each epoll_wait())
 *   naive     EPOLL_CTL_DEL, close and free under the lock: unsafe
 *   uring     no epoll: io_uring as epoll_disable_uring.h does it. Each
 *             waiter has a ring, and the connections the acceptor deals
 *             it in turn are polled there (multishot), put in the
 *             canceller's table by it; the canceller, under the item's
 *             lock, marks it stopped and shuts its socket down, and sends
 *             its waiter a message, on which the waiter cancels the poll;
 *             it closes and frees the connection when it reaps the
 *             poll's terminal completion. The item's lock here is the
 *             server's bookkeeping (the canceller's scan reads the idle
 *             time and claims the close), not what makes the free safe.
 *
 * On a kernel without the op, disable says so and runs deferred.
 *
 * The server runs wrk itself (-W, from PATH) against its own port for -d
 * seconds, reads wrk's figures from a small Lua script it hands it, and
 * then checks, each a TAP line:
 *
 *   1 no connection's state is touched after it was freed: freed
 *     items are poisoned and kept in a quarantine, so a waiter that takes
 *     the lock of a freed one counts a late touch instead of crashing
 *   2 every connection is freed exactly once (a count per connection)
 *   3 every accepted fd is closed exactly once (a generation per fd
 *     number, so that closing a reused number counts too)
 *   4 no request is lost that wrk did not see an error for: every request
 *     read was answered or its answer failed on a closed socket; wrk saw
 *     no timeout and no error status, counted no more answers than were
 *     sent, and saw at least one socket error per connection that the
 *     canceller closed on a request it had not read
 *   5 the canceller closed connections while wrk's load ran, forced and
 *     idle ones (with -I)
 *
 * -B breaks one check on purpose (its negative controls): leak-conn never
 * frees a cancelled item and double-free frees it twice (check 2);
 * leak-fd shuts a cancelled item's fd down but never closes it, and
 * double-close closes it twice, the second time in the books only, which
 * refuse it (check 3); drop leaves every 500th request unanswered (check
 * 4). The naive protocol is the control of check 1, -r 0 -I 0 that of
 * check 5. -p uring -B early-free is check 1's for uring: the waiter
 * frees a cancelled connection as soon as it has asked for the cancel,
 * not at the poll's terminal completion, which then names a freed one.
 *
 * The figures (requests/s and latency from wrk, closes by the canceller
 * a second, reclaim latency from the canceller's decision to the free,
 * items held awaiting reclaim) are one line starting with -P's prefix,
 * for a script to collect: "server," then the protocol, waiters, wrk's
 * connections and seconds, idle ms, forced closes/s, requests/s, latency
 * p50 and p99, the canceller's closes/s, reclaim latency p50 and p99,
 * held mean and max, EBUSY answers and late touches (latencies in us).
 *
 * Exit: 0 all checks passed, 1 one failed, 4 wrk is missing.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "epoll_disable_util.h"
#include "epoll_disable_uring.h"

/* Waiters wake this often without events: the deferred quiescent point */
#define WAIT_MS		10
/* Freed items stay poisoned this long (in frees) before free() */
#define QUARANTINE	16384
#define MAX_IDS		(1 << 22)
#define MAX_SAMPLES	(1 << 20)
#define REQ_MAX		1024
#define DROP_EVERY	500
#define MAX_IDLERS	64
/* uring: each ring's SQEs and CQEs */
#define URING_SQ	64
#define URING_CQ	1024

static const char response[] =
	"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
	"Content-Length: 3\r\n\r\nok\n";

/* wrk calls done() at the end: one line of figures, latencies in us */
static const char wrk_script[] =
	"done = function(s, lat, req)\n"
	"  local e = s.errors\n"
	"  local f = string.rep(\",%.0f\", 9)\n"
	"  io.write(string.format(\"wrk\" .. f .. \"\\n\", s.duration,\n"
	"    s.requests, e.connect, e.read, e.write, e.status, e.timeout,\n"
	"    lat:percentile(50), lat:percentile(99)))\n"
	"end\n";

enum protocol { PROTO_DISABLE, PROTO_DEFERRED, PROTO_NAIVE, PROTO_URING,
		NR_PROTOCOLS };
enum fault {
	FAULT_NONE, FAULT_LEAK_CONN, FAULT_DOUBLE_FREE, FAULT_LEAK_FD,
	FAULT_DOUBLE_CLOSE, FAULT_DROP, FAULT_EARLY_FREE, NR_FAULTS
};

static const char *const protocol_names[] = {
	[PROTO_DISABLE] = "disable",
	[PROTO_DEFERRED] = "deferred",
	[PROTO_NAIVE] = "naive",
	[PROTO_URING] = "uring",
};

/* In enum fault's order */
static const char *const fault_names[NR_FAULTS] = {
	"none", "leak-conn", "double-free", "leak-fd", "double-close", "drop",
	"early-free",
};

static struct {
	enum protocol protocol;
	enum fault fault;
	long waiters, idlers;
	long wrk_threads, wrk_conns, seconds;
	long idle_ms, cancel_rate, delay_us;
	const char *wrk, *prefix;
} opt = {
	.protocol = PROTO_DISABLE,
	.wrk = "wrk",
	.prefix = "",
};

/* The options that take a number: its range, and its value without one */
static const struct {
	char c;
	long *v;
	long min, max, dflt;
} numbers[] = {
	{ 't', &opt.waiters, 1, 1024, 8 },
	{ 'I', &opt.idlers, 0, MAX_IDLERS, 4 },
	{ 'c', &opt.wrk_conns, 1, 10000, 64 },
	{ 'T', &opt.wrk_threads, 1, 64, 2 },
	{ 'd', &opt.seconds, 2, 3600, 5 },
	{ 'i', &opt.idle_ms, 1, 3600000, 250 },
	{ 'r', &opt.cancel_rate, 0, 1000000, 200 },
	{ 'w', &opt.delay_us, 0, 1000000, 0 },
};

/* An item: a client's connection */
struct item {
	/* the tag: ITEM_POISON once freed; stop: no more requests, closing */
	struct item_guard g;
	int fd;
	unsigned int gen;	/* the fd number's generation at accept */
	unsigned long id;
	bool cancelled;		/* closing by a canceller's decision */
	long long seen_ns;	/* last request, for the idle canceller */
	long long cancel_ns;	/* when the canceller decided */
	struct qsbr_node retired;	/* deferred: the retire list */
	int home;		/* uring: the waiter whose ring polls it */
	bool closing;		/* uring: its waiter cancelled the poll */
	size_t len;
	char buf[REQ_MAX];
};

struct waiter {
	pthread_t thread;
	atomic_ulong qs;	/* deferred: QSBR's counter */
	struct ring_home home;	/* uring: its ring, the others' messages */
};

struct wrk_figures {
	bool seen;
	double us, requests, connect, read, write, status, timeout, p50, p99;
};

static struct {
	int epfd, lfd, quitfd, port;
	struct waiter *waiters;
	atomic_bool quit;

	/* the items by fd number, for the canceller: under table_lock */
	pthread_mutex_t table_lock;
	struct item **table;
	int table_size, table_hi;

	/* every fd number's generation and whether it is open: fd_lock */
	pthread_mutex_t fd_lock;
	unsigned int *fd_gen;
	unsigned char *fd_open;

	/* deferred: the retire list is the canceller's alone */
	struct qsbr qsbr;

	/* uring: waiters with a ring; the acceptor's next waiter */
	atomic_int ready;
	unsigned long next_home;

	atomic_ulong accepted, closed, bad_closes, allocs, frees, bad_frees;
	atomic_ulong requests, answered, send_failed, late, stale, errors;
	atomic_ulong cancels_idle, cancels_forced, cancel_now, cancel_busy;
	atomic_ulong unread;
	atomic_ulong owner_closes, client_closes, next_id, idle_clients;
	atomic_long held;
	long held_max;
	double held_sum;
	unsigned long held_samples;
	long long cancel_from, cancel_until;

	/* reclaim latencies in ns: stats_lock */
	pthread_mutex_t stats_lock;
	long long *samples;
	unsigned long nr_samples;

	char first_error[160];
} S = {
	.table_lock = PTHREAD_MUTEX_INITIALIZER,
	.fd_lock = PTHREAD_MUTEX_INITIALIZER,
	.stats_lock = PTHREAD_MUTEX_INITIALIZER,
};

/* Freed items, poisoned, and how often each id was freed (under its lock) */
static void *quarantine_ring[QUARANTINE];
static struct quarantine quarantine =
	QUARANTINE_INIT(quarantine_ring, struct item, g);
static unsigned char *freed;

static void out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void error_at(const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&S.errors, 1))
		return;
	va_start(ap, fmt);
	vsnprintf(S.first_error, sizeof(S.first_error), fmt, ap);
	va_end(ap);
}

static void inc(atomic_ulong *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

static void sample_reclaim(struct item *it)
{
	if (!it->cancelled)
		return;
	pthread_mutex_lock(&S.stats_lock);
	if (S.nr_samples < MAX_SAMPLES)
		S.samples[S.nr_samples++] = now_ns() - it->cancel_ns;
	pthread_mutex_unlock(&S.stats_lock);
}

/* Poison @it and keep it for QUARANTINE more frees; count a second free */
static void quarantine_item(struct item *it)
{
	struct item *old = NULL;

	pthread_mutex_lock(&quarantine.lock);
	if (it->g.tag != ITEM_LIVE || freed[it->id]++) {
		inc(&S.bad_frees);
		pthread_mutex_unlock(&quarantine.lock);
		return;
	}
	it->g.tag = ITEM_POISON;
	inc(&S.frees);
	old = quarantine_put_locked(&quarantine, it);
	pthread_mutex_unlock(&quarantine.lock);
	if (old)
		quarantine_release(&quarantine, old);
}

static void item_free(struct item *it)
{
	if (it->cancelled && opt.fault == FAULT_LEAK_CONN)
		return;
	sample_reclaim(it);
	quarantine_item(it);
	if (it->cancelled && opt.fault == FAULT_DOUBLE_FREE)
		quarantine_item(it);
}

/* Mark @it's fd closed in the books: false if it is not open as @it's */
static bool fd_forget(struct item *it)
{
	bool ok;

	pthread_mutex_lock(&S.fd_lock);
	ok = S.fd_open[it->fd] && S.fd_gen[it->fd] == it->gen;
	if (ok)
		S.fd_open[it->fd] = 0;
	pthread_mutex_unlock(&S.fd_lock);
	return ok;
}

/* Close the item's fd once, as the books say (never a reused one) */
static void fd_close(struct item *it)
{
	if (it->cancelled && opt.fault == FAULT_LEAK_FD) {
		shutdown(it->fd, SHUT_RDWR);
		return;
	}
	if (!fd_forget(it)) {
		inc(&S.bad_closes);
		return;
	}
	inc(&S.closed);
	close(it->fd);
	if (it->cancelled && opt.fault == FAULT_DOUBLE_CLOSE && !fd_forget(it))
		inc(&S.bad_closes);
}

/* Must be called with table_lock held. */
static void table_remove_locked(struct item *it)
{
	if (S.table[it->fd] != it)
		error_at("fd %d: not its connection in the table", it->fd);
	else
		S.table[it->fd] = NULL;
}

static void table_remove(struct item *it)
{
	pthread_mutex_lock(&S.table_lock);
	table_remove_locked(it);
	pthread_mutex_unlock(&S.table_lock);
}

static void item_del(struct item *it)
{
	if (epoll_ctl(S.epfd, EPOLL_CTL_DEL, it->fd, NULL))
		error_at("EPOLL_CTL_DEL of fd %d: %s", it->fd, strerror(errno));
}

/* Bytes the client sent that the server has not taken as a request */
static bool has_unread(struct item *it)
{
	int n = 0;

	return it->len || (!ioctl(it->fd, FIONREAD, &n) && n > 0);
}

/*
 * Close an item whose event this waiter holds (its owner), and free it.
 * Must be called with it->g.lock held; drops it.
 */
static void owner_close(struct item *it)
{
	it->g.stop = true;
	item_del(it);
	pthread_mutex_unlock(&it->g.lock);
	table_remove(it);
	fd_close(it);
	if (it->cancelled)
		atomic_fetch_sub(&S.held, 1);
	item_free(it);
}

/* Answer one request; false if the socket is gone. Must hold it->g.lock. */
static bool answer(struct item *it)
{
	size_t off = 0;
	ssize_t n;

	if (opt.fault == FAULT_DROP &&
	    atomic_load(&S.requests) % DROP_EVERY == 0)
		return true;
	while (off < sizeof(response) - 1) {
		n = send(it->fd, response + off, sizeof(response) - 1 - off,
			 MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			inc(&S.send_failed);
			return false;
		}
		off += n;
	}
	inc(&S.answered);
	return true;
}

/* Take the complete requests out of it->buf. Must hold it->g.lock. */
static bool serve(struct item *it)
{
	char *end;
	size_t used;

	while ((end = memmem(it->buf, it->len, "\r\n\r\n", 4))) {
		used = end + 4 - it->buf;
		memmove(it->buf, it->buf + used, it->len - used);
		it->len -= used;
		inc(&S.requests);
		if (!answer(it))
			return false;
	}
	return it->len < sizeof(it->buf);
}

/*
 * Read and answer what the client sent; false if it went away (or sent
 * more than a request can hold). Must hold it->g.lock.
 */
static bool receive(struct item *it)
{
	ssize_t n;

	for (;;) {
		n = recv(it->fd, it->buf + it->len, sizeof(it->buf) - it->len,
			 MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		if (n > 0) {
			it->len += n;
			if (serve(it))
				continue;
		}
		return false;
	}
}

/*
 * The owner's step, for an event it was handed: read and answer the
 * requests and re-arm @it, or close it if the client went away or a
 * canceller wants it closed.
 */
static void handle(struct item *it)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT };

	switch (owner_lock(&it->g)) {
	case ITEM_DELETED:
		/* freed under us: only the naive protocol gets here */
		inc(&S.late);
		pthread_mutex_unlock(&it->g.lock);
		return;
	case ITEM_STOPPED:
		if (opt.protocol == PROTO_DISABLE) {
			/* DISABLE said EBUSY: we hold the event, we close */
			inc(&S.owner_closes);
			owner_close(it);
		} else {
			/* deferred: deleted, the canceller frees it later */
			inc(&S.stale);
			pthread_mutex_unlock(&it->g.lock);
		}
		return;
	case ITEM_HELD:
		break;
	}
	if (!receive(it)) {
		inc(&S.client_closes);
		owner_close(it);
		return;
	}
	it->seen_ns = now_ns();
	ev.data.ptr = it;
	if (epoll_ctl(S.epfd, EPOLL_CTL_MOD, it->fd, &ev))
		error_at("EPOLL_CTL_MOD of fd %d: %s", it->fd, strerror(errno));
	pthread_mutex_unlock(&it->g.lock);
}

/*
 * uring: the waiters' side. Each waiter is the only thread that submits
 * to its ring and reaps it; what it reaps is a message (from the
 * acceptor: a new connection; from the canceller: close one), a poll's
 * completion, or a failed cancel.
 */

/* Put @it in the table, for the canceller. Must hold table_lock. */
static void table_add_locked(struct item *it)
{
	if (S.table[it->fd])
		error_at("fd %d: in the table twice", it->fd);
	S.table[it->fd] = it;
	if (it->fd > S.table_hi)
		S.table_hi = it->fd;
}

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
static void *uring_waiter(struct waiter *w)
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
static void uring_send(struct item *it, enum ring_tag tag)
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
static void uring_stop_sending(void)
{
	if (msg_ring.fd >= 0)
		ring_close(&msg_ring);
}

static void *waiter(void *arg)
{
	struct waiter *w = arg;
	struct epoll_event ev;
	int n;

	if (opt.protocol == PROTO_URING)
		return uring_waiter(w);
	for (;;) {
		/*
		 * deferred: the quiescent point. This waiter holds no
		 * item, and its next epoll_wait() starts after every
		 * EPOLL_CTL_DEL retired up to this epoch.
		 */
		qsbr_quiescent(&S.qsbr, &w->qs);
		n = epoll_wait(S.epfd, &ev, 1, WAIT_MS);
		if (n < 0 && errno != EINTR) {
			error_at("epoll_wait: %s", strerror(errno));
			return NULL;
		}
		if (n <= 0)
			continue;
		if (!ev.data.ptr)
			return NULL;	/* quitfd */
		/* the window in which a canceller may free it under us */
		if (opt.delay_us)
			sleep_us(opt.delay_us);
		handle(ev.data.ptr);
	}
}

static struct item *item_new(int fd)
{
	struct item *it = calloc(1, sizeof(*it));
	unsigned long id = atomic_fetch_add(&S.next_id, 1);

	if (!it || id >= MAX_IDS) {
		error_at("no room for connection %lu", id);
		free(it);
		return NULL;
	}
	pthread_mutex_init(&it->g.lock, NULL);
	it->g.tag = ITEM_LIVE;
	it->fd = fd;
	it->id = id;
	it->seen_ns = now_ns();
	inc(&S.allocs);
	return it;
}

/* A new fd number, as open in the books; false if it was open already */
static bool fd_opened(struct item *it)
{
	bool was;

	pthread_mutex_lock(&S.fd_lock);
	was = S.fd_open[it->fd];
	S.fd_open[it->fd] = 1;
	it->gen = ++S.fd_gen[it->fd];
	pthread_mutex_unlock(&S.fd_lock);
	inc(&S.accepted);
	return !was;
}

static void *acceptor(void *arg)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT };
	struct item *it;
	int fd;

	(void)arg;
	for (;;) {
		fd = accept4(S.lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (atomic_load(&S.quit)) {
				uring_stop_sending();
				return NULL;
			}
			if (errno != EINTR && errno != ECONNABORTED)
				error_at("accept: %s", strerror(errno));
			continue;
		}
		if (fd >= S.table_size) {
			error_at("fd %d beyond the table", fd);
			close(fd);
			continue;
		}
		it = item_new(fd);
		if (!it) {
			close(fd);
			continue;
		}
		if (!fd_opened(it))
			inc(&S.bad_closes);	/* closed without the books */
		if (opt.protocol == PROTO_URING) {
			/* its waiter puts it in the table */
			it->home = S.next_home++ % opt.waiters;
			uring_send(it, TAG_ARM);
			continue;
		}
		ev.data.ptr = it;
		/* in the table before a waiter can close it */
		pthread_mutex_lock(&S.table_lock);
		table_add_locked(it);
		if (epoll_ctl(S.epfd, EPOLL_CTL_ADD, fd, &ev))
			error_at("EPOLL_CTL_ADD: %s", strerror(errno));
		pthread_mutex_unlock(&S.table_lock);
	}
}

static void deferred_free(struct qsbr_node *n)
{
	struct item *it = qsbr_entry(n, struct item, retired);

	fd_close(it);
	atomic_fetch_sub(&S.held, 1);
	item_free(it);
}

/* deferred: close and free what no waiter can hold (@all: none runs) */
static void reclaim(bool all)
{
	qsbr_reclaim(&S.qsbr, all, deferred_free);
}

/*
 * The canceller deletes @it at once, closes and frees it. Must be called
 * with table_lock and it->g.lock held; drops it->g.lock.
 */
static void delete_now(struct item *it)
{
	item_del(it);
	table_remove_locked(it);
	pthread_mutex_unlock(&it->g.lock);
	fd_close(it);
	item_free(it);
}

/*
 * The canceller's step: close @it from outside the waiters, as the
 * protocol says. Must be called with table_lock and it->g.lock held;
 * drops it->g.lock.
 */
static void cancel(struct item *it)
{
	int err;

	it->cancelled = true;
	it->cancel_ns = now_ns();
	if (has_unread(it))
		inc(&S.unread);
	switch (opt.protocol) {
	case PROTO_DISABLE:
		err = cancel_locked(&it->g, S.epfd, it->fd);
		if (!err) {
			inc(&S.cancel_now);
			delete_now(it);
			return;
		}
		if (err == EBUSY) {
			/* its owner closes it */
			inc(&S.cancel_busy);
			atomic_fetch_add(&S.held, 1);
		} else {
			error_at("EPOLL_CTL_DISABLE: %s", strerror(err));
		}
		pthread_mutex_unlock(&it->g.lock);
		return;
	case PROTO_DEFERRED:
		it->g.stop = true;
		item_del(it);
		shutdown(it->fd, SHUT_RDWR);
		table_remove_locked(it);
		pthread_mutex_unlock(&it->g.lock);
		qsbr_retire(&S.qsbr, &it->retired);
		atomic_fetch_add(&S.held, 1);
		return;
	case PROTO_NAIVE:
		it->g.stop = true;
		delete_now(it);
		return;
	case PROTO_URING:
		/* claimed: its waiter closes and frees it, told so */
		it->g.stop = true;
		shutdown(it->fd, SHUT_RDWR);
		pthread_mutex_unlock(&it->g.lock);
		atomic_fetch_add(&S.held, 1);
		uring_send(it, TAG_CANCEL);
		return;
	default:
		return;
	}
}

/* Must be called with table_lock held; false if @it is not to be closed */
static bool lock_open(struct item *it)
{
	if (!it)
		return false;
	pthread_mutex_lock(&it->g.lock);
	if (!it->g.stop)
		return true;
	pthread_mutex_unlock(&it->g.lock);
	return false;
}

/* A forced close: the first open item from a random fd number on */
static void cancel_random(unsigned long *seed)
{
	int n, i, fd;

	pthread_mutex_lock(&S.table_lock);
	n = S.table_hi + 1;
	fd = rnd_next(seed) % n;
	for (i = 0; i < n; i++, fd = (fd + 1) % n) {
		if (lock_open(S.table[fd])) {
			inc(&S.cancels_forced);
			cancel(S.table[fd]);
			break;
		}
	}
	pthread_mutex_unlock(&S.table_lock);
}

static void cancel_idle(void)
{
	long long limit = now_ns() - opt.idle_ms * 1000000LL;
	struct item *it;
	int fd;

	pthread_mutex_lock(&S.table_lock);
	for (fd = 0; fd <= S.table_hi; fd++) {
		it = S.table[fd];
		if (!lock_open(it))
			continue;
		if (it->seen_ns < limit) {
			inc(&S.cancels_idle);
			cancel(it);
		} else {
			pthread_mutex_unlock(&it->g.lock);
		}
	}
	pthread_mutex_unlock(&S.table_lock);
}

static void sample_held(void)
{
	long h = atomic_load(&S.held);

	S.held_sum += h;
	S.held_samples++;
	if (h > S.held_max)
		S.held_max = h;
}

static void *canceller(void *arg)
{
	long long t0 = S.cancel_from, scan = t0, t;
	unsigned long seed = 0x9e3779b97f4a7c15UL, done = 0;
	long scan_ns = opt.idle_ms * 250000L;

	(void)arg;
	while ((t = now_ns()) < S.cancel_until && !atomic_load(&S.quit)) {
		while (done <
		       (unsigned long)((t - t0) / 1e9 * opt.cancel_rate)) {
			cancel_random(&seed);
			done++;
		}
		if (t - scan >= scan_ns) {
			cancel_idle();
			scan = t;
		}
		if (opt.protocol == PROTO_DEFERRED)
			reclaim(false);
		sample_held();
		sleep_us(1000);
	}
	/* what is retired still gets reclaimed while the waiters run */
	while (opt.protocol == PROTO_DEFERRED && S.qsbr.head &&
	       !atomic_load(&S.quit)) {
		reclaim(false);
		sleep_us(1000);
	}
	uring_stop_sending();
	return NULL;
}

static int connect_local(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fd;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons(S.port);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		error_at("idle client: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	inc(&S.idle_clients);
	return fd;
}

/*
 * Clients of our own that connect and say nothing, for the idle closes:
 * each one it closes connects again.
 */
static void *idler(void *arg)
{
	struct pollfd p[MAX_IDLERS];
	char buf[256];
	ssize_t n;
	int i;

	(void)arg;
	for (i = 0; i < opt.idlers; i++) {
		p[i].fd = connect_local();
		p[i].events = POLLIN;
	}
	while (now_ns() < S.cancel_until && !atomic_load(&S.quit)) {
		if (poll(p, opt.idlers, 10) <= 0)
			continue;
		for (i = 0; i < opt.idlers; i++) {
			if (!p[i].revents)
				continue;
			n = recv(p[i].fd, buf, sizeof(buf), MSG_DONTWAIT);
			if (n > 0 || (n < 0 && errno == EAGAIN))
				continue;
			close(p[i].fd);
			p[i].fd = connect_local();
		}
	}
	for (i = 0; i < opt.idlers; i++)
		if (p[i].fd >= 0)
			close(p[i].fd);
	return NULL;
}

static int listen_local(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int one = 1, fd;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
				 sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 4096) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len)) {
		out("# cannot listen on 127.0.0.1: %s", strerror(errno));
		return -1;
	}
	S.lfd = fd;
	S.port = ntohs(sa.sin_port);
	return 0;
}

static int setup(void)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	S.table_size = rl.rlim_cur > 65536 ? 65536 : rl.rlim_cur;
	S.table = calloc(S.table_size, sizeof(*S.table));
	S.fd_gen = calloc(S.table_size, sizeof(*S.fd_gen));
	S.fd_open = calloc(S.table_size, 1);
	S.waiters = calloc(opt.waiters, sizeof(*S.waiters));
	S.samples = calloc(MAX_SAMPLES, sizeof(*S.samples));
	freed = calloc(MAX_IDS, 1);
	if (!S.table || !S.fd_gen || !S.fd_open || !S.waiters || !S.samples ||
	    !freed) {
		out("# out of memory");
		return -1;
	}
	qsbr_init(&S.qsbr, &S.waiters[0].qs, sizeof(S.waiters[0]), opt.waiters);
	S.epfd = epoll_create1(EPOLL_CLOEXEC);
	S.quitfd = eventfd(0, EFD_CLOEXEC);
	if (S.epfd < 0 || S.quitfd < 0 ||
	    epoll_ctl(S.epfd, EPOLL_CTL_ADD, S.quitfd, &ev)) {
		out("# epoll setup: %s", strerror(errno));
		return -1;
	}
	return listen_local();
}

/* wrk against our port; its stdout comes back on the returned fd */
static pid_t spawn_wrk(const char *script, int *rfd)
{
	char t[16], c[16], d[16], url[64];
	int p[2];
	pid_t pid;

	snprintf(t, sizeof(t), "%ld", opt.wrk_threads);
	snprintf(c, sizeof(c), "%ld", opt.wrk_conns);
	snprintf(d, sizeof(d), "%lds", opt.seconds);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", S.port);
	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		execlp(opt.wrk, opt.wrk, "-t", t, "-c", c, "-d", d,
		       "--timeout", "5s", "-s", script, url, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	*rfd = p[0];
	return pid;
}

/* Run wrk to the end and take its figures; its exit status */
static int run_wrk(struct wrk_figures *w)
{
	char script[] = "/tmp/epoll_disable_server.XXXXXX", line[512];
	int fd, status = -1;
	FILE *f;
	pid_t pid;

	fd = mkstemp(script);
	if (fd < 0 || write(fd, wrk_script, sizeof(wrk_script) - 1) !=
		      (ssize_t)sizeof(wrk_script) - 1) {
		out("# wrk script: %s", strerror(errno));
		return -1;
	}
	close(fd);
	pid = spawn_wrk(script, &fd);
	if (pid < 0) {
		out("# cannot run wrk: %s", strerror(errno));
		unlink(script);
		return -1;
	}
	f = fdopen(fd, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "wrk,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf",
			   &w->us, &w->requests, &w->connect, &w->read,
			   &w->write, &w->status, &w->timeout, &w->p50,
			   &w->p99) == 9)
			w->seen = true;
	if (f)
		fclose(f);
	waitpid(pid, &status, 0);
	unlink(script);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Stop every thread; close and free what is left, as at exit */
static void stop(pthread_t acc, pthread_t can, pthread_t idl)
{
	uint64_t one = 1;
	struct item *it;
	int i;

	atomic_store(&S.quit, true);
	pthread_join(idl, NULL);
	shutdown(S.lfd, SHUT_RDWR);
	pthread_join(acc, NULL);
	pthread_join(can, NULL);
	if (write(S.quitfd, &one, sizeof(one)) != sizeof(one))
		error_at("quitfd: %s", strerror(errno));
	for (i = 0; i < opt.waiters; i++)
		pthread_join(S.waiters[i].thread, NULL);
	reclaim(true);
	for (i = 0; i <= S.table_hi; i++) {
		it = S.table[i];
		if (!it)
			continue;
		if (it->cancelled)
			error_at("fd %d: reaped with EBUSY, never closed", i);
		S.table[i] = NULL;
		if (opt.protocol != PROTO_URING)	/* rings are gone */
			item_del(it);
		fd_close(it);
		item_free(it);
	}
	quarantine_drain(&quarantine);
	close(S.lfd);
}

static double pct_us(double p)
{
	if (!S.nr_samples)
		return 0;
	return S.samples[(unsigned long)(p * (S.nr_samples - 1))] / 1e3;
}

static int nr_checks;

static bool check(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - %s\n", ok ? "" : "not ", ++nr_checks, name);
	if (!ok) {
		printf("#   ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		putchar('\n');
	}
	return ok;
}

#define N(x)	atomic_load(&S.x)

/* Checks 4's: every request answered, or lost where wrk saw an error */
static bool requests_ok(const struct wrk_figures *w, char *why, size_t len)
{
	double errs = w->connect + w->read + w->write;

	if (!w->seen)
		snprintf(why, len, "wrk printed no figures");
	else if (N(requests) != N(answered) + N(send_failed))
		snprintf(why, len, "%lu requests read, %lu answered, %lu answers failed",
			 N(requests), N(answered), N(send_failed));
	else if (w->timeout || w->status)
		snprintf(why, len, "wrk: %.0f timeouts, %.0f error statuses",
			 w->timeout, w->status);
	else if (w->requests > N(answered))
		snprintf(why, len, "wrk counted %.0f answers, %lu were sent",
			 w->requests, N(answered));
	else if (errs < N(unread))
		snprintf(why, len, "%lu connections reaped on an unread request, wrk saw %.0f socket errors",
			 N(unread), errs);
	else
		return true;
	return false;
}

static int report(const struct wrk_figures *w)
{
	double secs = (S.cancel_until - S.cancel_from) / 1e9;
	double wsecs = w->us / 1e6;
	unsigned long cancels = N(cancels_idle) + N(cancels_forced);
	double held = S.held_samples ? S.held_sum / S.held_samples : 0;
	char why[200];
	bool ok = true;

	qsort(S.samples, S.nr_samples, sizeof(*S.samples), cmp_ll);
	out("# wrk: %.0f requests, %.0f/s, latency p50 %.0f us p99 %.0f us; socket errors: connect %.0f read %.0f write %.0f, timeouts %.0f, error statuses %.0f",
	    w->requests, wsecs > 0 ? w->requests / wsecs : 0, w->p50, w->p99,
	    w->connect, w->read, w->write, w->timeout, w->status);
	out("# server: %lu connections (%lu idle clients), %lu requests, %lu answered; %lu closed by the client",
	    N(allocs), N(idle_clients), N(requests), N(answered),
	    N(client_closes));
	out("# reaper: %lu reaps (%lu idle, %lu forced, %lu on an unread request): %lu closed at once, %lu EBUSY closed by their worker",
	    cancels, N(cancels_idle), N(cancels_forced), N(unread),
	    N(cancel_now),
	    N(owner_closes));
	out("# reclaim latency p50 %.0f us p99 %.0f us; held awaiting reclaim %.1f on average, %ld at most; %lu stale events, %lu late touches",
	    pct_us(0.5), pct_us(0.99), held, S.held_max, N(stale), N(late));
	out("%sserver,%s,%ld,%ld,%ld,%ld,%ld,%.0f,%.0f,%.0f,%.1f,%.0f,%.0f,%.1f,%ld,%lu,%lu",
	    opt.prefix, protocol_names[opt.protocol], opt.waiters,
	    opt.wrk_conns, opt.seconds, opt.idle_ms, opt.cancel_rate,
	    wsecs > 0 ? w->requests / wsecs : 0,
	    w->p50, w->p99, secs > 0 ? cancels / secs : 0, pct_us(0.5),
	    pct_us(0.99), held, S.held_max, N(cancel_busy), N(late));

	ok &= check(!N(late), "no connection state touched after it was freed",
		    "%lu late touches", N(late));
	ok &= check(N(allocs) == N(frees) && !N(bad_frees),
		    "every connection freed exactly once",
		    "%lu connections, %lu freed, %lu frees of a freed one",
		    N(allocs), N(frees), N(bad_frees));
	ok &= check(N(accepted) == N(closed) && !N(bad_closes),
		    "every fd closed exactly once",
		    "%lu accepted, %lu closed, %lu closes of a closed fd",
		    N(accepted), N(closed), N(bad_closes));
	ok &= check(requests_ok(w, why, sizeof(why)),
		    "no request lost that wrk did not see an error for",
		    "%s", why);
	ok &= check(N(cancels_forced) > 0 && w->requests > 0 &&
		    (N(cancels_idle) > 0 || !opt.idlers),
		    "connections reaped under load",
		    "%lu forced and %lu idle reaps, %.0f requests",
		    N(cancels_forced), N(cancels_idle), w->requests);
	if (N(errors)) {
		out("# %lu errors, the first: %s", N(errors), S.first_error);
		ok = false;
	}
	printf("1..%d\n", nr_checks);
	return ok ? 0 : 1;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-p disable|deferred|naive|uring] [-t workers] [-I idle clients]\n"
		"          [-c conns] [-T wrk threads] [-d seconds] [-i idle ms]\n"
		"          [-r reaps/s] [-w delay us] [-W wrk] [-P prefix]\n"
		"          [-B leak-conn|double-free|leak-fd|double-close|drop]\n",
		prog);
	exit(2);
}

static int pick(const char *s, const char *const *names, int n,
		const char *prog)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	usage(prog);
	return 0;
}

/* -c N, for a @c of the numbers table: false if @c is none of them */
static bool set_number(int c, const char *s, const char *prog)
{
	char *end;
	long v;
	size_t i;

	for (i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		if (numbers[i].c != c)
			continue;
		v = strtol(s, &end, 10);
		if (*end || end == s || v < numbers[i].min ||
		    v > numbers[i].max)
			usage(prog);
		*numbers[i].v = v;
		return true;
	}
	return false;
}

static void parse(int argc, char **argv)
{
	size_t i;
	int c;

	for (i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++)
		*numbers[i].v = numbers[i].dflt;
	while ((c = getopt(argc, argv, "p:t:I:c:T:d:i:r:w:B:W:P:")) != -1) {
		if (c == 'p')
			opt.protocol = pick(optarg, protocol_names,
					    NR_PROTOCOLS, argv[0]);
		else if (c == 'B')
			opt.fault = pick(optarg, fault_names, NR_FAULTS,
					 argv[0]);
		else if (c == 'W')
			opt.wrk = optarg;
		else if (c == 'P')
			opt.prefix = optarg;
		else if (!set_number(c, optarg, argv[0]))
			usage(argv[0]);
	}
	if (optind != argc || opt.wrk_conns < opt.wrk_threads)
		usage(argv[0]);
}

int main(int argc, char **argv)
{
	struct wrk_figures w = { 0 };
	pthread_t acc, can, idl;
	char why[128];
	int i, rc, have;

	parse(argc, argv);
	have = disable_usable(why, sizeof(why));
	if (have < 0) {
		out("not ok 1 - EPOLL_CTL_DISABLE probe: %s", why);
		return 1;
	}
	if (!have && opt.protocol == PROTO_DISABLE) {
		out("# %s: deferred reclamation instead", why);
		opt.protocol = PROTO_DEFERRED;
	}
	out("# protocol %s, %ld workers; wrk: %ld threads, %ld connections, %ld s; reaper: idle %ld ms, %ld forced closes/s%s%s",
	    protocol_names[opt.protocol], opt.waiters, opt.wrk_threads,
	    opt.wrk_conns, opt.seconds, opt.idle_ms, opt.cancel_rate,
	    opt.fault ? "; broken on purpose: " : "",
	    opt.fault ? fault_names[opt.fault] : "");
	if (setup())
		return 1;
	for (i = 0; i < opt.waiters; i++)
		if (pthread_create(&S.waiters[i].thread, NULL, waiter,
				   &S.waiters[i])) {
			out("# pthread_create: %s", strerror(errno));
			return 1;
		}
	/* uring: every ring set up before a message is sent to it */
	while (opt.protocol == PROTO_URING &&
	       atomic_load(&S.ready) < opt.waiters)
		sleep_us(1000);
	/* close until a second before wrk stops, not while it winds down */
	S.cancel_from = now_ns();
	S.cancel_until = S.cancel_from + (opt.seconds - 1) * 1000000000LL;
	if (pthread_create(&acc, NULL, acceptor, NULL) ||
	    pthread_create(&can, NULL, canceller, NULL) ||
	    pthread_create(&idl, NULL, idler, NULL)) {
		out("# pthread_create: %s", strerror(errno));
		return 1;
	}
	rc = run_wrk(&w);
	stop(acc, can, idl);
	if (rc == 127 && !w.seen) {
		out("# SKIP %s not found: install wrk", opt.wrk);
		return 4;
	}
	if (rc)
		out("# wrk exited %d", rc);
	return report(&w) || rc ? 1 : 0;
}
