// SPDX-License-Identifier: GPL-2.0
/*
 * The bench's -M proto and -M reclaim: the driver.  Waiters in
 * epoll_wait() on one set of P.n EPOLLONESHOT socketpairs, a writer
 * writing bytes to random items, and a canceller that replaces a random
 * item by a new one and deletes the old one, over and over; how it is
 * deleted, and how a waiter handles the event it was handed, is the
 * protocol's (struct protocol, bench.h).  The driver times the window,
 * counts what the threads did, and checks that a safe protocol touched
 * no freed item.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

struct bench_run B;
static long long *reclaim_samples;
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

/* Was the deletion of an item decided at @t in the timed window? */
static bool in_window(long long t)
{
	return t >= atomic_load(&B.window_start) &&
	       t < atomic_load(&B.window_end);
}

static void sample_add(struct samples *s, long long v)
{
	long i = atomic_fetch_add(&s->n, 1);

	if (i < MAX_SAMPLES)
		s->v[i] = v;
}

/* The item's memory may be reused now: count its wait if it was timed */
static void bench_reclaimed(struct item *it)
{
	if (bench_of(it)->buf)
		burst_state_free(it);
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

	sys_calls = &w->sys;
	return wait_loop(w);
}

/* Sleep until the @k-th step of a thread paced at @rate a second */
static void pace(long long t0, long k, long rate)
{
	long long due, now;

	if (!rate)
		return;
	due = t0 + k * 1000000000LL / rate;
	now = now_ns();
	if (due > now)
		sleep_us((due - now) / 1000);
}

static void *writer(void *arg)
{
	unsigned long s = opt.seed * 0x9e3779b97f4a7c15UL + 1;
	long long t0 = now_ns();
	struct slot *sl;
	long k;

	(void)arg;
	for (k = 1; !atomic_load_explicit(&B.quit, memory_order_relaxed);
	     k++) {
		sl = &B.slots[rnd_next(&s) % P.n];
		pthread_mutex_lock(&sl->lock);
		if (write(sl->it->c.fd[1], "x", 1) != 1 && errno != EAGAIN)
			error_at("write: %s", strerror(errno));
		pthread_mutex_unlock(&sl->lock);
		pace(t0, k, opt.write_rate);
	}
	return NULL;
}

/* Count the items deleted and not yet freed, at each deletion */
static void sample_pending(void)
{
	long v = atomic_load(&B.pending);

	if (v > B.pending_peak)
		B.pending_peak = v;
	B.pending_sum += v;
	B.pending_samples++;
}

/*
 * The canceller: replace a random item by a new one and delete the old
 * one, at the -c rate; the protocol's own work (deferred reclamation)
 * runs here too, between deletions. Once the window is over (draining), only the reclamation
 * goes on.
 */
static void *canceller(void *arg)
{
	unsigned long s = opt.seed * 0xbf58476d1ce4e5b9UL + 7;
	const struct protocol *p = P.protocol;
	long long t0 = now_ns();
	struct item *it, *old;
	struct slot *sl;
	long k;

	(void)arg;
	sys_calls = &P.canceller_sys;
	if (p->canceller_begin && p->canceller_begin())
		return NULL;
	for (k = 1; !atomic_load_explicit(&B.quit, memory_order_relaxed);
	     k++) {
		if (p->canceller_tick)
			p->canceller_tick();
		if (atomic_load(&B.draining)) {
			sleep_us(100);
			continue;
		}
		sl = &B.slots[rnd_next(&s) % P.n];
		it = item_new();
		if (!it) {
			sleep_us(1000);
			continue;
		}
		pthread_mutex_lock(&sl->lock);
		old = sl->it;
		sl->it = it;
		pthread_mutex_unlock(&sl->lock);
		old->decided = now_ns();
		bench_of(old)->timed = in_window(old->decided);
		if (bench_of(old)->timed) {
			atomic_fetch_add(&B.pending, 1);
			sample_pending();
		}
		/* the protocol's lock contract (protocol.h) */
		pthread_mutex_lock(&old->g.lock);
		p->cancel(old);
		pace(t0, k, opt.cancel_rate);
	}
	if (p->canceller_end)
		p->canceller_end();
	return NULL;
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

/* CPU time the readers, the writer and the canceller have used */
struct cpu_use {
	double waiters, writer, canceller;
};

static double thread_cpu(pthread_t t)
{
	struct timespec ts;
	clockid_t c;

	if (pthread_getcpuclockid(t, &c) || clock_gettime(c, &ts))
		return 0;
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void cpu_use(struct cpu_use *u, pthread_t wthread, pthread_t cthread)
{
	int i;

	u->waiters = 0;
	for (i = 0; i < P.nr_waiters; i++)
		u->waiters += thread_cpu(waiter_at(i)->thread);
	u->writer = thread_cpu(wthread);
	u->canceller = thread_cpu(cthread);
}

/* The CPUs this process may run on: 1 under "taskset 1" */
static int cpus_allowed(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	return CPU_COUNT(&set);
}

/* Calls in the window per event handled in it */
static double per_event(unsigned long calls, const struct totals *t0,
			const struct totals *t1)
{
	unsigned long events = t1->events - t0->events;

	return events ? (double)calls / events : 0;
}

static int proto_setup(void)
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

/*
 * After the window: no more deletions; wait until what was deleted in it
 * is freed, or for twice the waiters' timeout and a second more. Then
 * stop the writer and the canceller, and give the items the protocol
 * still holds (deferred's) their age so far as their wait. Returns how
 * many were not freed.
 */
static long proto_drain(pthread_t wthread, pthread_t cthread)
{
	long drain_ms = P.timeout == NO_TIMEOUT ? 1000 : 2 * P.timeout + 1000;
	long long until = now_ns() + drain_ms * 1000000LL;
	long unfreed;

	atomic_store(&B.draining, true);
	while (atomic_load(&B.pending) > 0 && now_ns() < until)
		sleep_us(1000);
	atomic_store(&B.quit, true);
	pthread_join(wthread, NULL);
	pthread_join(cthread, NULL);
	atomic_store(&B.drained, true);
	unfreed = atomic_load(&B.pending);
	if (P.protocol->unfreed)
		P.protocol->unfreed();
	return unfreed;
}

/* -M reclaim: the waits of the items deleted in the window */
static void report_reclaim(int waiters, int n,
			   double events_per_s, long unfreed)
{
	long k = atomic_load(&B.reclaim.n);
	long long *v = B.reclaim.v;

	if (k > MAX_SAMPLES) {
		out("# %ld reclaim samples past the first %ld not kept", k -
		    MAX_SAMPLES, MAX_SAMPLES);
		k = MAX_SAMPLES;
	}
	if (!k) {
		fail("%s, %d readers, timeout %d: no deletion in the window",
		     P.protocol->name, waiters, P.timeout);
		return;
	}
	qsort(v, k, sizeof(*v), cmp_ll);
	out("reclaim,%s,%d,%d,%d,%ld,%.1f,%.1f,%.1f,%.1f,%ld,%ld,%.0f",
	    P.protocol->name, waiters, n, P.timeout, k,
	    v[(k - 1) / 2] / 1e3, v[(k - 1) * 99 / 100] / 1e3,
	    v[k - 1] / 1e3, B.pending_samples ?
	    B.pending_sum / B.pending_samples : 0.0, B.pending_peak,
	    unfreed, events_per_s);
}

static void run_proto(const struct protocol *protocol, int waiters, int n,
		      int timeout)
{
	struct totals t0, t1, t2;
	struct cpu_use u0, u1;
	pthread_t wthread, cthread;
	long long ns0, ns1;
	long unfreed;
	double secs;
	int i;

	if (protocol->needs_disable && !has_disable)
		return;		/* said once, in main() */
	memset(&P, 0, sizeof(P));
	memset(&B, 0, sizeof(B));
	P.protocol = protocol;
	P.delay_us = opt.delay_us;
	P.nr_waiters = waiters;
	P.n = n;
	P.timeout = timeout;
	atomic_store(&B.window_start, LLONG_MAX);
	atomic_store(&B.window_end, LLONG_MAX);
	B.reclaim.v = reclaim_samples;
	raise_nofile((rlim_t)4 * n + 4 * QUARANTINE + 256);
	if (proto_setup()) {
		fail("%s setup, %d items: %s", P.protocol->name, n,
		     B.errors ? B.first_error : strerror(errno));
		return;
	}
	for (i = 0; i < waiters; i++)
		if (pthread_create(&waiter_at(i)->thread, NULL, proto_waiter,
				   waiter_at(i))) {
			fail("pthread_create of reader %d", i);
			exit(1);
		}
	if (protocol->started)
		protocol->started();
	if (pthread_create(&wthread, NULL, writer, NULL) ||
	    pthread_create(&cthread, NULL, canceller, NULL)) {
		fail("pthread_create");
		exit(1);
	}

	sleep_us(WARMUP_US);
	totals(&t0);
	cpu_use(&u0, wthread, cthread);
	ns0 = now_ns();
	atomic_store(&B.window_start, ns0);
	sleep_us(opt.seconds * 1e6);
	totals(&t1);
	cpu_use(&u1, wthread, cthread);
	ns1 = now_ns();
	atomic_store(&B.window_end, ns1);
	unfreed = proto_drain(wthread, cthread);

	if (eventfd_write(P.quitfd, 1))
		error_at("write of quitfd: %s", strerror(errno));
	for (i = 0; i < waiters; i++)
		pthread_join(waiter_at(i)->thread, NULL);

	secs = (ns1 - ns0) / 1e9;
	/* late touches over the whole run, with the wind-down */
	totals(&t2);
	if (atomic_load(&B.errors))
		fail("%s, %d readers: %lu unexpected errors, first: %s",
		     P.protocol->name, waiters,
		     atomic_load(&B.errors), B.first_error);
	if (!protocol->unsafe && t2.late)
		fail("%s, %d readers: %lu late touches in a safe protocol",
		     P.protocol->name, waiters, t2.late);
	if (opt.mode == MODE_RECLAIM)
		report_reclaim(waiters, n,
			       (t1.events - t0.events) / secs, unfreed);
	else
		out("proto,%s,%d,%d,%.3f,%lu,%.0f,%lu,%.0f,%lu,%.1f,%.3f,%.3f,%.2f,%.2f,%.2f,%d",
		    P.protocol->name, waiters, n, secs,
		    t1.events - t0.events, (t1.events - t0.events) / secs,
		    t1.deletions - t0.deletions,
		    (t1.deletions - t0.deletions) / secs, t2.late,
		    protocol->bytes_per_item(), per_event(t1.sys - t0.sys, &t0, &t1),
		    per_event(t1.waiter_sys - t0.waiter_sys, &t0, &t1),
		    (u1.waiters - u0.waiters) / secs,
		    (u1.writer - u0.writer) / secs,
		    (u1.canceller - u0.canceller) / secs, cpus_allowed());
	if (protocol->report)
		protocol->report(waiters, &t2);
	if (t2.kicks)
		out("# %s, %d readers: %lu signals to readers in epoll_wait()",
		    P.protocol->name, waiters, t2.kicks);
	proto_teardown();
}

/* SIGUSR1 only interrupts a waiter's epoll_wait() */
static void on_kick(int sig)
{
	(void)sig;
}

/* Each protocol in turn, from the -o-th of the list on, wrapping round */
static void run_config(int waiters, int n, int timeout)
{
	int j;

	for (j = 0; j < opt.nr_protocols; j++)
		run_proto(opt.protocols[(j + opt.first) % opt.nr_protocols],
			  waiters, n, timeout);
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

/* -M proto and -M reclaim: every configuration, -r times over */
void run_protos(void)
{
	struct sigaction sa = { .sa_handler = on_kick };
	char rate[32];
	int run, i, k, t;

	/* no SA_RESTART: epoll_wait() is never restarted anyway */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	reclaim_samples = calloc(MAX_SAMPLES, sizeof(*reclaim_samples));
	if (!reclaim_samples) {
		fail("no memory for %ld samples", MAX_SAMPLES);
		return;
	}
	if (opt.cancel_rate)
		snprintf(rate, sizeof(rate), "%ld/s", opt.cancel_rate);
	else
		snprintf(rate, sizeof(rate), "flat out");
	out("# %g s per run, %d runs, delay %d us, churn %s",
	    opt.seconds, opt.runs, opt.delay_us, rate);
	if (opt.write_rate)
		snprintf(rate, sizeof(rate), "%ld/s", opt.write_rate);
	else
		snprintf(rate, sizeof(rate), "flat out");
	out("# writes %s", rate);
	if (opt.mode == MODE_RECLAIM)
		out("kind,protocol,readers,items,timeout_ms,deletions,p50_us,p99_us,max_us,pending_mean,pending_peak,unfreed,events_per_s");
	else
		out("kind,protocol,readers,items,seconds,events,events_per_s,deletions,deletions_per_s,late_touches,bytes_per_item,syscalls_per_event,reader_syscalls_per_event,reader_cpu,writer_cpu,deleter_cpu,cpus");
	for (run = 0; run < opt.runs; run++)
		for (k = 0; k < opt.nr_sizes; k++)
			for (t = 0; t < opt.nr_timeouts; t++)
				for (i = 0; i < opt.nr_waiters; i++)
					run_config(opt.waiters[i],
						   opt.sizes[k],
						   opt.timeouts[t]);
	free(reclaim_samples);
}
