// SPDX-License-Identifier: GPL-2.0
/*
 * The bench's -M burst: what each protocol costs where a server's memory
 * matters, after a burst of connections.  The set grows from -n's first
 * count of items to its second (1,000 to 100,000 by default), each item a
 * socketpair watched EPOLLIN | EPOLLONESHOT with a buffer of its own, as
 * a connection has: 512 B to 64 KiB, log-uniform from a fixed seed,
 * malloc()ed and touched so that it is resident.  The waiters handle
 * events and re-arm all along, the writer makes events fire, and the
 * deleter (the canceller's role, the one thread that adds and deletes)
 * then deletes items picked at random through the protocol's cancel until
 * the first count is left.
 *
 * An item's buffer is free()d when its protocol says the memory may go,
 * at its reclaimed(): disable at once on 0 and by the event's holder on
 * EBUSY, global under its mutex, deferred after its grace period, uring
 * at the poll's terminal completion, slots as soon as the generation has
 * moved (its waiter checks the generation, under the slot's lock, before
 * it touches the buffer), its slot free for the next item at once and
 * its chunk, once empty, given back after a grace period.
 *
 * For each protocol: from the decision to delete an item to its buffer's
 * free() (p50, p99, max) and to the last such free; the buffers' total at
 * the peak; the process's memory at the peak and after the burst, as RSS
 * (/proc/self/statm) and as the allocator's own count (mallinfo2(): bytes
 * in use, and bytes held from the system); and RSS once malloc_trim(0)
 * has given back what it can.  "After" is measured with the waiters and
 * the writer stopped and the bench's quarantine of freed items emptied
 * (the bench's detector, not the protocol's), the items left still live.
 * Each protocol runs in a process of its own, so that none inherits the
 * heap another left.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "bench_driver.h"
#include "bench_modes.h"

/* An item's buffer: 2^BUF_MIN_SHIFT to 2^BUF_MAX_SHIFT - 1 bytes */
#define BUF_MIN_SHIFT	9
#define BUF_MAX_SHIFT	16
/* The deleter does the protocol's own work once every this many steps */
#define TICK_EVERY	16
/*
 * How long the deleter waits for the last buffer to be freed, at most:
 * -M reclaim's twice the timeout and a second is too short here, where
 * 99,000 deletions come at once (uring's readers, each with its queue of
 * messages, took about 10 s in the guest)
 */
#define DRAIN_MS	60000L
/* How long the deleter goes on after the last free, beyond two timeouts */
#define SETTLE_MS	100L

/* The process's memory, KiB */
struct mem {
	long rss, heap, arena;
};

/*
 * What two clock reads around a call add to its time, ns: the median of
 * 101 batches of 100 back-to-back pairs
 */
static double clock_pair_ns(void)
{
	long long v[101], t0;
	int i, j;

	for (i = 0; i < 101; i++) {
		t0 = now_ns();
		for (j = 0; j < 100; j++) {
			now_ns();
			now_ns();
		}
		v[i] = now_ns() - t0;
	}
	qsort(v, 101, sizeof(*v), cmp_ll);
	return v[50] / 100.0;
}

/* The burst's state beside the run's P */
static struct {
	int base, peak;
	atomic_int live;	/* items in B.slots[0, live) */
	long long shrink_start;	/* the first decision to delete */
	unsigned long state_peak;
	struct mem at_peak;
	unsigned long seed;	/* the deleter's */
	pthread_t deleter;
} burst;

static long page_size(void)
{
	static long page;

	if (!page)
		page = sysconf(_SC_PAGESIZE);
	return page;
}

/* RSS from /proc/self/statm, read without malloc() */
static long rss_kib(void)
{
	char buf[128];
	long size, rss;
	ssize_t n;
	int fd;

	fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (sscanf(buf, "%ld %ld", &size, &rss) != 2)
		return -1;
	return rss * (page_size() / 1024);
}

/* mmap()ed chunks count as in use and as held: they are both */
static void mem_now(struct mem *m)
{
	struct mallinfo2 mi = mallinfo2();

	m->rss = rss_kib();
	m->heap = (mi.uordblks + mi.hblkhd) / 1024;
	m->arena = (mi.arena + mi.hblkhd) / 1024;
}

/* Log-uniform: a power of two picked evenly, then a size within it */
static size_t buf_size(unsigned long *s)
{
	unsigned int shift = BUF_MIN_SHIFT +
			     rnd_next(s) % (BUF_MAX_SHIFT - BUF_MIN_SHIFT);

	return (1UL << shift) + rnd_next(s) % (1UL << shift);
}

/* A new item with its buffer, in the next slot: the writer may pick it */
static int burst_add(void)
{
	int n = atomic_load(&burst.live);
	struct slot *sl = &B.slots[n];
	struct item *it = item_new();

	if (!it)
		return -1;
	if (item_buf_alloc(it, buf_size(&burst.seed))) {
		error_at("no memory for a buffer");
		return -1;
	}
	pthread_mutex_lock(&sl->lock);
	sl->it = it;
	pthread_mutex_unlock(&sl->lock);
	atomic_store(&burst.live, n + 1);
	return 0;
}

/*
 * Take a random item out of the writer's reach: the last slot's item
 * moves into its slot (both locked, lower index first, as the writer
 * takes one), and the protocol deletes it
 */
static void burst_delete(void)
{
	int n = atomic_load(&burst.live), j = rnd_next(&burst.seed) % n;
	struct slot *a = &B.slots[j], *z = &B.slots[n - 1];
	struct item *old;

	pthread_mutex_lock(&a->lock);
	if (a != z)
		pthread_mutex_lock(&z->lock);
	old = a->it;
	a->it = z->it;
	z->it = NULL;
	atomic_store(&burst.live, n - 1);
	if (a != z)
		pthread_mutex_unlock(&z->lock);
	pthread_mutex_unlock(&a->lock);
	old->decided = now_ns();
	bench_of(old)->timed = true;
	atomic_fetch_add(&B.pending, 1);
	/* the protocol's lock contract (protocol.h) */
	pthread_mutex_lock(&old->g.lock);
	P.protocol->cancel(old);
}

static void burst_tick(long k)
{
	if (P.protocol->canceller_tick && !(k % TICK_EVERY))
		P.protocol->canceller_tick();
}

/*
 * The deleter: grow to the peak, measure, delete down to the base, and
 * wait until every buffer is freed (or DRAIN_MS has passed), doing the
 * protocol's own work all along
 */
static void *burst_deleter(void *arg)
{
	const struct protocol *p = P.protocol;
	long long until;
	long k = 0;

	(void)arg;
	if (p->canceller_begin && p->canceller_begin())
		return NULL;
	while (atomic_load(&burst.live) < burst.peak) {
		burst_tick(k++);
		if (burst_add())
			goto out;
	}
	burst.state_peak = atomic_load(&B.buf_bytes);
	mem_now(&burst.at_peak);
	burst.shrink_start = now_ns();
	time_dels = true;
	while (atomic_load(&burst.live) > burst.base) {
		burst_tick(k++);
		burst_delete();
	}
	time_dels = false;
	until = now_ns() + DRAIN_MS * 1000000LL;
	while (atomic_load(&B.pending) > 0 && now_ns() < until) {
		burst_tick(0);
		sleep_us(100);
	}
	/*
	 * Then two of the readers' timeouts and SETTLE_MS more, still doing
	 * the protocol's work: every reader passes a quiescent point (on a
	 * busy machine a reader whose wait timed out may wait for a CPU),
	 * and what a protocol keeps for a grace period beside the items
	 * (slots' empty chunks) may go
	 */
	until = now_ns() + ((P.timeout > 0 ? 2LL * P.timeout : 0) +
			    SETTLE_MS) * 1000000LL;
	while (now_ns() < until) {
		burst_tick(0);
		sleep_us(100);
	}
out:
	if (p->canceller_end)
		p->canceller_end();
	return NULL;
}

/* As -M proto's writer, over the slots that hold an item now */
static void *burst_writer(void *arg)
{
	unsigned long s = opt.seed * 0x9e3779b97f4a7c15UL + 1;
	struct slot *sl;

	(void)arg;
	while (!atomic_load_explicit(&B.quit, memory_order_relaxed)) {
		sl = &B.slots[rnd_next(&s) % atomic_load(&burst.live)];
		pthread_mutex_lock(&sl->lock);
		if (sl->it && write(sl->it->c.fd[1], "x", 1) != 1 &&
		    errno != EAGAIN)
			error_at("write: %s", strerror(errno));
		pthread_mutex_unlock(&sl->lock);
		if (opt.write_rate)
			sleep_us(1000000L / opt.write_rate);
	}
	return NULL;
}

/* -M proto's setup, with room for the peak and the base's items made */
static int burst_setup(void)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	int i;

	P.epfd = epoll_create1(EPOLL_CLOEXEC);
	P.quitfd = eventfd(0, EFD_CLOEXEC);
	if (P.epfd < 0 || P.quitfd < 0 ||
	    epoll_ctl(P.epfd, EPOLL_CTL_ADD, P.quitfd, &ev))
		return -1;
	B.slots = calloc(burst.peak, sizeof(*B.slots));
	B.reclaim.v = calloc(burst.peak - burst.base, sizeof(*B.reclaim.v));
	P.item_off = offsetof(struct bench_item, it);
	if (!B.slots || !B.reclaim.v || waiters_alloc())
		return -1;
	for (i = 0; i < burst.peak; i++)
		pthread_mutex_init(&B.slots[i].lock, NULL);
	if (P.protocol->setup && P.protocol->setup())
		return -1;
	for (i = 0; i < burst.base; i++)
		if (burst_add())
			return -1;
	return 0;
}

/* The items left go with their buffers, every slot's lock with them */
static void burst_teardown(void)
{
	int i;

	for (i = 0; i < atomic_load(&burst.live); i++) {
		free(bench_of(B.slots[i].it)->buf);
		bench_of(B.slots[i].it)->buf = NULL;
	}
	P.n = burst.peak;
	proto_teardown();
	free(B.reclaim.v);
}

static void burst_report(int waiters, long unfreed, const struct mem *after,
			 const struct mem *trimmed)
{
	long k = atomic_load(&B.reclaim.n);
	long long *v = B.reclaim.v;

	if (!k) {
		fail("%s, %d readers: no item freed in the burst",
		     P.protocol->name, waiters);
		return;
	}
	qsort(v, k, sizeof(*v), cmp_ll);
	out("burst,%s,%d,%d,%d,%ld,%.1f,%.1f,%.1f,%.1f,%ld,%lu,%ld,%ld,%ld,%ld,%ld,%ld,%lu,%.1f,%.1f",
	    P.protocol->name, waiters, burst.base, burst.peak, k,
	    v[(k - 1) / 2] / 1e3, v[(k - 1) * 99 / 100] / 1e3,
	    v[k - 1] / 1e3,
	    (atomic_load(&B.last_buf_free) - burst.shrink_start) / 1e6, unfreed,
	    burst.state_peak / 1024, burst.at_peak.rss, burst.at_peak.heap,
	    after->rss, after->heap, after->arena, trimmed->rss, B.dels,
	    B.del_ns / 1e6, B.dels * clock_pair_ns() / 1e6);
}

/* One protocol's burst, in this process: the child's whole work */
static void run_burst(const struct protocol *protocol, int waiters,
		      int timeout)
{
	struct mem after, trimmed;
	pthread_t wthread;
	struct totals t;
	long unfreed;
	int i;

	memset(&P, 0, sizeof(P));
	P.protocol = protocol;
	P.nr_waiters = waiters;
	/* what the protocol sees at its start (uring arms these) */
	P.n = burst.base;
	P.timeout = timeout;
	atomic_store(&burst.live, 0);
	atomic_store(&B.buf_bytes, 0);
	atomic_store(&B.last_buf_free, 0);
	burst.seed = opt.seed * 0xbf58476d1ce4e5b9UL + 7;
	raise_nofile((rlim_t)4 * burst.peak + 256);
	if (burst_setup()) {
		fail("%s burst setup, %d items: %s", protocol->name, burst.base,
		     B.errors ? B.first_error : strerror(errno));
		return;
	}
	for (i = 0; i < waiters; i++)
		if (pthread_create(&waiter_at(i)->thread, NULL, proto_waiter,
				   waiter_at(i))) {
			fail("pthread_create of reader %d", i);
			return;
		}
	if (protocol->started)
		protocol->started();
	if (pthread_create(&wthread, NULL, burst_writer, NULL) ||
	    pthread_create(&burst.deleter, NULL, burst_deleter, NULL)) {
		fail("pthread_create");
		return;
	}
	pthread_join(burst.deleter, NULL);
	unfreed = atomic_load(&B.pending);
	atomic_store(&B.quit, true);
	pthread_join(wthread, NULL);
	if (eventfd_write(P.quitfd, 1))
		error_at("write of quitfd: %s", strerror(errno));
	for (i = 0; i < waiters; i++)
		pthread_join(waiter_at(i)->thread, NULL);
	atomic_store(&B.drained, true);
	if (unfreed && protocol->unfreed)
		protocol->unfreed();

	quarantine_empty();
	mem_now(&after);
	malloc_trim(0);
	mem_now(&trimmed);

	totals(&t);
	if (atomic_load(&B.errors))
		fail("%s, %d readers: %lu unexpected errors, first: %s",
		     protocol->name, waiters, atomic_load(&B.errors),
		     B.first_error);
	if (!protocol->unsafe && t.late)
		fail("%s, %d readers: %lu late touches in a safe protocol",
		     protocol->name, waiters, t.late);
	burst_report(waiters, unfreed, &after, &trimmed);
	if (protocol->report)
		protocol->report(waiters, &t);
	burst_teardown();
}

/* The child's exit status is its verdict; none inherits another's heap */
static void run_burst_apart(const struct protocol *protocol, int waiters,
			    int timeout)
{
	int status;
	pid_t pid;

	if (protocol->needs_disable && !has_disable)
		return;		/* said once, in main() */
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		fail("fork: %s", strerror(errno));
		return;
	}
	if (!pid) {
		run_burst(protocol, waiters, timeout);
		fflush(stdout);
		_exit(exit_status);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		fail("%s burst: its process did not exit", protocol->name);
	else if (WEXITSTATUS(status))
		exit_status = 1;
}

/* SIGUSR1 only interrupts a waiter's epoll_wait() */
static void on_kick(int sig)
{
	(void)sig;
}

/*
 * -M burst: every protocol, reader count and timeout, -r times over, each
 * round starting with the next protocol
 */
void run_bursts(void)
{
	struct sigaction sa = { .sa_handler = on_kick };
	int run, i, t, j;

	if (opt.nr_sizes != 2 || opt.sizes[0] >= opt.sizes[1] ||
	    opt.sizes[1] > MAX_SAMPLES) {
		fail("-M burst: -n takes the items before and after the burst and its peak (at most %ld): 1000,100000",
		     MAX_SAMPLES);
		return;
	}
	burst.base = opt.sizes[0];
	burst.peak = opt.sizes[1];
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	out("# burst: %d items, %d at the peak, buffers %lu B to %lu KiB; writes %ld/s (0: flat out)",
	    burst.base, burst.peak, 1UL << BUF_MIN_SHIFT,
	    (1UL << BUF_MAX_SHIFT) / 1024, opt.write_rate);
	out("kind,protocol,readers,items,peak_items,deletions,p50_us,p99_us,max_us,all_freed_ms,unfreed,buffers_peak_kib,peak_rss_kib,peak_heap_kib,rss_kib,heap_kib,arena_kib,trimmed_rss_kib,dels,del_ms,del_clock_ms");
	for (run = 0; run < opt.runs; run++)
		for (t = 0; t < opt.nr_timeouts; t++)
			for (i = 0; i < opt.nr_waiters; i++)
				for (j = 0; j < opt.nr_protocols; j++)
					run_burst_apart(opt.protocols[(j +
						opt.first + run) %
						opt.nr_protocols],
						opt.waiters[i],
						opt.timeouts[t]);
}
