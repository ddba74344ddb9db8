// SPDX-License-Identifier: GPL-2.0
/*
 * The bench's -M proto and -M reclaim, on its driver (bench_driver.c).
 * Waiters in epoll_wait() on one set of P.n EPOLLONESHOT socketpairs, a
 * writer writing bytes to random items, and a canceller that replaces a
 * random item by a new one and deletes the old one, over and over; how it
 * is deleted, and how a waiter handles the event it was handed, is the
 * protocol's (struct protocol, protocol.h).  This file times the window,
 * reports what the threads did, and fails the run if a safe protocol
 * touched a freed item.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "bench_driver.h"
#include "bench_modes.h"

static long long *reclaim_samples;

/* Was the deletion of an item decided at @t in the timed window? */
static bool in_window(long long t)
{
	return t >= atomic_load(&B.window_start) &&
	       t < atomic_load(&B.window_end);
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
	sys_calls_to(&P.canceller_sys);
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
