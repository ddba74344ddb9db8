// SPDX-License-Identifier: GPL-2.0
/*
 * The server's connections, from accept to free: the server as a driver
 * of the protocols (protocol.h: what an item's deletion, the owner's
 * work on its event and its free mean for a connection), the waiters,
 * the acceptor, the reaper (the canceller), the idle clients, and the
 * books that check every connection is freed and every fd closed exactly
 * once.
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

#include "protocols.h"
#include "server.h"


static const char response[] =
	"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
	"Content-Length: 3\r\n\r\nok\n";

/* wrk calls done() at the end: one line of figures, latencies in us */

struct server S = {
	.table_lock = PTHREAD_MUTEX_INITIALIZER,
	.fd_lock = PTHREAD_MUTEX_INITIALIZER,
	.stats_lock = PTHREAD_MUTEX_INITIALIZER,
};

/* Freed items, poisoned, and how often each id was freed (under its lock) */

static void *quarantine_ring[QUARANTINE];
static struct quarantine quarantine =
	QUARANTINE_INIT(quarantine_ring, struct conn, it.g);
unsigned char *freed;

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

void inc(atomic_ulong *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
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

/* Mark @c's fd closed in the books: false if it is not open as @c's */
static bool fd_forget(struct conn *c)
{
	int fd = c->it.c.fd[0];
	bool ok;

	pthread_mutex_lock(&S.fd_lock);
	ok = S.fd_open[fd] && S.fd_gen[fd] == c->gen;
	if (ok)
		S.fd_open[fd] = 0;
	pthread_mutex_unlock(&S.fd_lock);
	return ok;
}

/* Close the connection's fd once, as the books say (never a reused one) */
static void fd_close(struct conn *c)
{
	int fd = c->it.c.fd[0];

	if (c->cancelled && opt.fault == FAULT_LEAK_FD) {
		shutdown(fd, SHUT_RDWR);
		return;
	}
	if (!fd_forget(c)) {
		inc(&S.bad_closes);
		return;
	}
	inc(&S.closed);
	close(fd);
	if (c->cancelled && opt.fault == FAULT_DOUBLE_CLOSE && !fd_forget(c))
		inc(&S.bad_closes);
}

static void table_remove(struct item *it)
{
	int fd = it->c.fd[0];

	pthread_mutex_lock(&S.table_lock);
	if (S.table[fd] != it)
		error_at("fd %d: not its connection in the table", fd);
	else
		S.table[fd] = NULL;
	pthread_mutex_unlock(&S.table_lock);
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

/* Bytes the client sent that the server has not taken as a request */
static bool has_unread(struct conn *c)
{
	int n = 0;

	return c->len || (!ioctl(c->it.c.fd[0], FIONREAD, &n) && n > 0);
}

/* Answer one request; false if the socket is gone. Must hold the lock. */
static bool answer(struct conn *c)
{
	size_t off = 0;
	ssize_t n;

	if (opt.fault == FAULT_DROP &&
	    atomic_load(&S.requests) % DROP_EVERY == 0)
		return true;
	while (off < sizeof(response) - 1) {
		n = send(c->it.c.fd[0], response + off,
			 sizeof(response) - 1 - off, MSG_NOSIGNAL);
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

/* Take the complete requests out of c->buf. Must hold the item's lock. */
static bool serve(struct conn *c)
{
	char *end;
	size_t used;

	while ((end = memmem(c->buf, c->len, "\r\n\r\n", 4))) {
		used = end + 4 - c->buf;
		memmove(c->buf, c->buf + used, c->len - used);
		c->len -= used;
		inc(&S.requests);
		if (!answer(c))
			return false;
	}
	return c->len < sizeof(c->buf);
}

/*
 * Read and answer what the client sent; false if it went away (or sent
 * more than a request can hold). Must hold the item's lock.
 */
bool receive(struct conn *c)
{
	ssize_t n;

	for (;;) {
		n = recv(c->it.c.fd[0], c->buf + c->len,
			 sizeof(c->buf) - c->len, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		if (n > 0) {
			c->len += n;
			if (serve(c))
				continue;
		}
		return false;
	}
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

/* Put @it in the table, for the canceller. Must hold table_lock. */
void table_add_locked(struct item *it)
{
	int fd = it->c.fd[0];

	if (S.table[fd])
		error_at("fd %d: in the table twice", fd);
	S.table[fd] = it;
	if (fd > S.table_hi)
		S.table_hi = fd;
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

/* A worker: a waiter of the protocol's */
void *worker(void *arg)
{
	return wait_loop(arg);
}

static struct conn *conn_new(int fd)
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

/* A new fd number, as open in the books; false if it was open already */
static bool fd_opened(struct conn *c)
{
	int fd = c->it.c.fd[0];
	bool was;

	pthread_mutex_lock(&S.fd_lock);
	was = S.fd_open[fd];
	S.fd_open[fd] = 1;
	c->gen = ++S.fd_gen[fd];
	pthread_mutex_unlock(&S.fd_lock);
	inc(&S.accepted);
	return !was;
}

/* The plain way in: the table, then the set, before a waiter can close it */
static void conn_enter(struct item *it)
{
	pthread_mutex_lock(&S.table_lock);
	table_add_locked(it);
	if (item_add(it, item_data(it)))
		error_at("EPOLL_CTL_ADD: %s", strerror(errno));
	pthread_mutex_unlock(&S.table_lock);
}

void *acceptor(void *arg)
{
	const struct protocol *p = opt.protocol;
	struct conn *c;
	int fd, err;

	(void)arg;
	if (p->canceller_begin && p->canceller_begin())
		return NULL;
	for (;;) {
		fd = accept4(S.lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (atomic_load(&S.quit))
				break;
			if (errno != EINTR && errno != ECONNABORTED)
				error_at("accept: %s", strerror(errno));
			continue;
		}
		if (fd >= S.table_size) {
			error_at("fd %d beyond the table", fd);
			close(fd);
			continue;
		}
		c = conn_new(fd);
		if (!c) {
			close(fd);
			continue;
		}
		if (!fd_opened(c))
			inc(&S.bad_closes);	/* closed without the books */
		if (!p->add) {
			conn_enter(&c->it);
			continue;
		}
		err = p->add(&c->it);
		if (err)
			error_at("adding fd %d: %s", fd, strerror(err));
		else if (p->flush)
			p->flush();
	}
	if (p->canceller_end)
		p->canceller_end();
	return NULL;
}

/*
 * The reaper closes @it from outside the waiters, as the protocol says.
 * Must be called with it->g.lock held, which the protocol drops.
 */
static void reap(struct item *it)
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

/* Must be called with table_lock held; false if @it is not to be closed */
static bool lock_open(struct item *it)
{
	if (!it)
		return false;
	pthread_mutex_lock(&it->g.lock);
	if (!it->g.stop && it->g.tag == ITEM_LIVE)
		return true;
	pthread_mutex_unlock(&it->g.lock);
	return false;
}

/*
 * A forced close: the first open item from a random fd number on. Its
 * lock, held, keeps it ours once the table's is dropped: a waiter stops
 * an item under it before it closes one.
 */
static void cancel_random(unsigned long *seed)
{
	struct item *it = NULL;
	int n, i, fd;

	pthread_mutex_lock(&S.table_lock);
	n = S.table_hi + 1;
	fd = rnd_next(seed) % n;
	for (i = 0; i < n; i++, fd = (fd + 1) % n) {
		if (lock_open(S.table[fd])) {
			it = S.table[fd];
			break;
		}
	}
	pthread_mutex_unlock(&S.table_lock);
	if (it) {
		inc(&S.cancels_forced);
		reap(it);
	}
}

static void cancel_idle(void)
{
	long long limit = now_ns() - opt.idle_ms * 1000000LL;
	struct item *it;
	int fd, hi;

	pthread_mutex_lock(&S.table_lock);
	hi = S.table_hi;
	pthread_mutex_unlock(&S.table_lock);
	for (fd = 0; fd <= hi; fd++) {
		pthread_mutex_lock(&S.table_lock);
		it = S.table[fd];
		if (!lock_open(it)) {
			pthread_mutex_unlock(&S.table_lock);
			continue;
		}
		pthread_mutex_unlock(&S.table_lock);
		if (conn_of(it)->seen_ns < limit) {
			inc(&S.cancels_idle);
			reap(it);
		} else {
			pthread_mutex_unlock(&it->g.lock);
		}
	}
}

static void sample_held(void)
{
	long h = atomic_load(&S.held);

	S.held_sum += h;
	S.held_samples++;
	if (h > S.held_max)
		S.held_max = h;
}

void *reaper(void *arg)
{
	long long t0 = S.cancel_from, scan = t0, t;
	unsigned long seed = 0x9e3779b97f4a7c15UL, done = 0;
	long scan_ns = opt.idle_ms * 250000L;
	const struct protocol *p = opt.protocol;

	(void)arg;
	if (p->canceller_begin && p->canceller_begin())
		return NULL;
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
		if (p->canceller_tick)
			p->canceller_tick();
		sample_held();
		sleep_us(1000);
	}
	/* what is deferred still gets reclaimed while the waiters run */
	while (atomic_load(&S.held) > 0 && !atomic_load(&S.quit)) {
		if (p->canceller_tick)
			p->canceller_tick();
		sleep_us(1000);
	}
	if (p->canceller_end)
		p->canceller_end();
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
void *idler(void *arg)
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

/* The server's state and the run's (P), then the protocol's */
int setup(void)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	const struct protocol *p = opt.protocol;
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	S.table_size = rl.rlim_cur > 65536 ? 65536 : rl.rlim_cur;
	S.table = calloc(S.table_size, sizeof(*S.table));
	S.fd_gen = calloc(S.table_size, sizeof(*S.fd_gen));
	S.fd_open = calloc(S.table_size, 1);
	S.samples = calloc(MAX_SAMPLES, sizeof(*S.samples));
	freed = calloc(MAX_IDS, 1);
	P.protocol = p;
	P.nr_waiters = opt.waiters;
	P.item_off = offsetof(struct conn, it);
	if (!S.table || !S.fd_gen || !S.fd_open || waiters_alloc() ||
	    !S.samples || !freed) {
		out("# out of memory");
		return -1;
	}
	P.timeout = WAIT_MS;
	P.delay_us = opt.delay_us;
	P.queue_len = URING_CQ;
	P.free_early = opt.fault == FAULT_EARLY_FREE;
	P.epfd = epoll_create1(EPOLL_CLOEXEC);
	P.quitfd = eventfd(0, EFD_CLOEXEC);
	if (P.epfd < 0 || P.quitfd < 0 ||
	    epoll_ctl(P.epfd, EPOLL_CTL_ADD, P.quitfd, &ev)) {
		out("# epoll setup: %s", strerror(errno));
		return -1;
	}
	if (p->setup && p->setup()) {
		out("# %s setup failed", p->name);
		return -1;
	}
	return listen_local();
}

/* What the waiters counted, in the server's books */
static void count_waiters(void)
{
	struct waiter *w;
	int i;

	for (i = 0; i < opt.waiters; i++) {
		w = waiter_at(i);
		atomic_fetch_add(&S.late, atomic_load(&w->late));
		atomic_fetch_add(&S.stale, atomic_load(&w->stale));
		atomic_fetch_add(&S.owner_closes,
				 atomic_load(&w->owner_deletes));
	}
	atomic_store(&S.cancel_busy, atomic_load(&P.busy));
}

/* Stop every thread; close and free what is left, as at exit */
void stop(pthread_t acc, pthread_t can, pthread_t idl)
{
	const struct protocol *p = opt.protocol;
	uint64_t one = 1;
	struct item *it;
	int i;

	atomic_store(&S.quit, true);
	pthread_join(idl, NULL);
	shutdown(S.lfd, SHUT_RDWR);
	pthread_join(acc, NULL);
	pthread_join(can, NULL);
	if (write(P.quitfd, &one, sizeof(one)) != sizeof(one))
		error_at("quitfd: %s", strerror(errno));
	for (i = 0; i < opt.waiters; i++)
		pthread_join(waiter_at(i)->thread, NULL);
	count_waiters();
	if (p->teardown)
		p->teardown();
	for (i = 0; i <= S.table_hi; i++) {
		it = S.table[i];
		if (!it)
			continue;
		if (conn_of(it)->cancelled)
			error_at("fd %d: reaped with EBUSY, never closed", i);
		if (!p->no_set &&
		    epoll_ctl(P.epfd, EPOLL_CTL_DEL, i, NULL))
			error_at("EPOLL_CTL_DEL of fd %d: %s", i,
				 strerror(errno));
		item_free(it);
	}
	quarantine_drain(&quarantine);
	close(S.lfd);
}
