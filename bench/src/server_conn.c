// SPDX-License-Identifier: GPL-2.0
/*
 * The server's connections, from accept to free: the waiters and the
 * owner's step, the acceptor, the reaper (the canceller) and its
 * protocols, the idle clients, and the books that check every
 * connection is freed and every fd closed exactly once.
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
	QUARANTINE_INIT(quarantine_ring, struct item, g);
unsigned char *freed;

void out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

void error_at(const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&S.errors, 1))
		return;
	va_start(ap, fmt);
	vsnprintf(S.first_error, sizeof(S.first_error), fmt, ap);
	va_end(ap);
}

void inc(atomic_ulong *c)
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

void item_free(struct item *it)
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
void fd_close(struct item *it)
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

void table_remove(struct item *it)
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
bool receive(struct item *it)
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

/* Put @it in the table, for the canceller. Must hold table_lock. */
void table_add_locked(struct item *it)
{
	if (S.table[it->fd])
		error_at("fd %d: in the table twice", it->fd);
	S.table[it->fd] = it;
	if (it->fd > S.table_hi)
		S.table_hi = it->fd;
}

void *waiter(void *arg)
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

void *acceptor(void *arg)
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

void *canceller(void *arg)
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

int setup(void)
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
/* Stop every thread; close and free what is left, as at exit */
void stop(pthread_t acc, pthread_t can, pthread_t idl)
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

