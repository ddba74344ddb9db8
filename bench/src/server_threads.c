// SPDX-License-Identifier: GPL-2.0
/*
 * The server's threads (server_threads.h), which main() starts and stops:
 * the workers (the protocol's waiters), the acceptor, which takes each
 * new connection into the books and the set, the reaper (the canceller),
 * which closes connections idle too long and others at random through
 * the protocol's cancel, and the idle clients of our own that give the
 * reaper its idle connections.  And the server's setup, with the run's
 * state P, and its stop.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server.h"
#include "server_books.h"
#include "server_conn.h"
#include "server_http.h"
#include "server_threads.h"

/* A worker: a waiter of the protocol's */
void *worker(void *arg)
{
	return wait_loop(arg);
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
	conn_quarantine_drain();
	close(S.lfd);
}
