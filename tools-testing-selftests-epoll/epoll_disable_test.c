// SPDX-License-Identifier: GPL-2.0
/*
 * epoll_disable_test - delete EPOLLONESHOT items from a set that many
 * threads wait on, with EPOLL_CTL_DISABLE and the "delete when done"
 * protocol, and check that nothing is touched after it is deleted.
 *
 * Readers block in epoll_wait() on one set of AF_UNIX socketpairs, all
 * EPOLLIN | EPOLLONESHOT (every other one also EPOLLET); a writer writes
 * to them round-robin. Each item has a mutex, a stop flag and a count of
 * its deletions. During the load, as a server closes connections while it
 * serves others, four deleters each pick an item, make it ready, delete it
 * and add a new item on the file numbers just freed. Then the main thread
 * checks that every byte written reached a reader or was left in a deleted
 * item, and deletes every item left while the writer keeps writing. Each
 * deletion goes:
 *
 *   lock item; stop = 1;
 *   EPOLL_CTL_DISABLE == 0      -> nobody was handed the event: delete now
 *   EPOLL_CTL_DISABLE == EBUSY  -> a reader holds the event; it sees stop
 *                                  under the item lock and deletes the item
 *   unlock item
 *
 * Deleted items are not freed but kept with a poisoned tag until all threads
 * are gone, so that a reader that touches an item after its deletion (a
 * use-after-free in a real program) is counted instead of crashing.
 *
 * The test passes if every item was deleted exactly once, no item was touched
 * after its deletion, no data was lost, and EBUSY was answered, each time
 * followed by the owner's delete. "-m naive" deletes the way one must without
 * the op (EPOLL_CTL_DEL under the item lock); with "-d" widening the window
 * between epoll_wait() returning and the reader taking the item lock, that
 * protocol must be caught. "-f" breaks the readers on purpose to show that the
 * other checks can fail too.
 *
 * Before the load, each clause of the op's contract is checked on its own,
 * through epoll_ctl(2) and, for the three answers, through io_uring's
 * IORING_OP_EPOLL_CTL; without io_uring in the kernel those clauses skip.
 * Two of them take the protocol's paths on purpose: a waiter held after it
 * was handed the event makes the canceller get EBUSY and deletes the item
 * itself, and DISABLE racing epoll_wait() must see each side win.
 *
 * Exit status follows kselftest: 0 pass, 1 fail, 4 skip (no
 * EPOLL_CTL_DISABLE in this kernel).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <sched.h>
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
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Not in the C library's <sys/epoll.h>; the value is the kernel's ABI. */
#ifndef EPOLL_CTL_DISABLE
#define EPOLL_CTL_DISABLE 4
#endif

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#define KSFT_PASS	0
#define KSFT_FAIL	1
#define KSFT_SKIP	4

#define ITEM_LIVE	0x600dcafeU
#define ITEM_POISON	0xdeadbeefU

#define WAKEUP_CLASS	"/sys/class/wakeup"

/* How long the main thread waits for the readers to catch up, in ms */
#define SETTLE_MS	(5000 + opt.items)
/* The deletions are spread over this long, so that each meets the load */
#define CANCEL_MS	1000
/* Threads that delete and re-create items during the load, and their pace */
#define DELETERS	4
#define DELETE_EVERY_US	2000

enum protocol { PROTO_DISABLE, PROTO_NAIVE };
enum fault { FAULT_NONE, FAULT_REARM, FAULT_DELETE };

struct item {
	pthread_mutex_t lock;
	int fd[2];		/* fd[0] is watched; the writer uses fd[1] */
	unsigned int tag;	/* ITEM_LIVE, or ITEM_POISON once deleted */
	bool stop;		/* a deleter wants this item gone */
	unsigned int events;	/* mask the item is (re-)armed with */
	int deletions;
	struct item *next;	/* every item ever made, for the final count */
};

static struct {
	int items;
	int readers;
	int seconds;
	unsigned int seed;
	enum protocol protocol;
	enum fault fault;
	int delay_us;
} opt = {
	.items = 500,
	.readers = 100,
	.seconds = 2,
	.seed = 1,
	.protocol = PROTO_DISABLE,
	.fault = FAULT_NONE,
	.delay_us = 0,
};

static int epfd, quitfd;
/* Each slot's current item; deleted items stay on all_items, poisoned */
static struct item **slots;
static struct item *all_items;
static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool deleters_quit;
static atomic_ulong recreated, bytes_closed;

static struct item *slot_get(int i)
{
	return __atomic_load_n(&slots[i], __ATOMIC_ACQUIRE);
}

static void slot_set(int i, struct item *it)
{
	__atomic_store_n(&slots[i], it, __ATOMIC_RELEASE);
}

static atomic_bool writer_pause, writer_paused, writer_quit;
static atomic_ulong bytes_written, bytes_read, events_handled;
static atomic_ulong late_touches, deleted, owner_deletes, rearm_dropped;
static atomic_ulong disable_ok, disable_busy;
static atomic_ulong errors;
static char first_error[256];
static pthread_mutex_t error_lock = PTHREAD_MUTEX_INITIALIZER;

static void error_at(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&error_lock);
	if (!atomic_fetch_add(&errors, 1)) {
		va_start(ap, fmt);
		vsnprintf(first_error, sizeof(first_error), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&error_lock);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000L, (us % 1000000L) * 1000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Called with it->lock held: the one place where an item is deleted. */
static void item_delete(struct item *it)
{
	if (epoll_ctl(epfd, EPOLL_CTL_DEL, it->fd[0], NULL))
		error_at("EPOLL_CTL_DEL of fd %d: %s", it->fd[0],
			 strerror(errno));
	it->tag = ITEM_POISON;
	it->deletions++;
	atomic_fetch_add(&deleted, 1);
}

static int item_arm(struct item *it, int op)
{
	struct epoll_event ev = { .events = it->events, .data.ptr = it };

	return epoll_ctl(epfd, op, it->fd[0], &ev);
}

/* Called with it->lock held, for an event this reader was handed. */
static void item_handle(struct item *it)
{
	char buf[256];
	ssize_t n;

	while ((n = read(it->fd[0], buf, sizeof(buf))) > 0)
		atomic_fetch_add(&bytes_read, n);
	if (n < 0 && errno != EAGAIN)
		error_at("read of fd %d: %s", it->fd[0], strerror(errno));

	if (atomic_fetch_add(&events_handled, 1) % 64 == 63 &&
	    opt.fault == FAULT_REARM) {
		atomic_fetch_add(&rearm_dropped, 1);
		return;
	}
	if (item_arm(it, EPOLL_CTL_MOD))
		error_at("EPOLL_CTL_MOD of fd %d: %s", it->fd[0],
			 strerror(errno));
}

static void *reader(void *arg)
{
	struct epoll_event ev;
	struct item *it;
	int n;

	(void)arg;
	for (;;) {
		n = epoll_wait(epfd, &ev, 1, 1000);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			error_at("epoll_wait: %s", strerror(errno));
			return NULL;
		}
		if (n == 0)
			continue;
		it = ev.data.ptr;
		if (!it)
			return NULL;	/* quitfd: the test is over */

		/* The window in which the item may be deleted under us */
		if (opt.delay_us)
			sleep_us(opt.delay_us);

		pthread_mutex_lock(&it->lock);
		if (it->tag != ITEM_LIVE) {
			atomic_fetch_add(&late_touches, 1);
		} else if (it->stop && opt.fault != FAULT_DELETE) {
			/* DISABLE said EBUSY: we own the event, we delete */
			item_delete(it);
			atomic_fetch_add(&owner_deletes, 1);
		} else {
			item_handle(it);
		}
		pthread_mutex_unlock(&it->lock);
	}
}

/* Called with it->lock held: one byte for the item's reader */
static void put(struct item *it, char c)
{
	if (write(it->fd[1], &c, 1) == 1)
		atomic_fetch_add(&bytes_written, 1);
	else if (errno != EAGAIN)
		error_at("write of fd %d: %s", it->fd[1], strerror(errno));
}

static void *writer(void *arg)
{
	unsigned long i;
	struct item *it;
	char c = 'x';

	(void)arg;
	for (i = 0; !atomic_load(&writer_quit); i++) {
		if (atomic_load(&writer_pause)) {
			atomic_store(&writer_paused, true);
			sleep_us(1000);
			continue;
		}
		atomic_store(&writer_paused, false);
		it = slot_get(i % opt.items);
		pthread_mutex_lock(&it->lock);
		if (it->tag == ITEM_LIVE)
			put(it, c);
		pthread_mutex_unlock(&it->lock);
		if (i % opt.items == 0)
			sched_yield();
	}
	return NULL;
}

/*
 * Delete one item that this thread was not handed, by the chosen protocol.
 * Called with it->lock held.
 */
static void cancel_locked(struct item *it)
{
	it->stop = true;
	if (opt.protocol == PROTO_NAIVE) {
		item_delete(it);
	} else if (!epoll_ctl(epfd, EPOLL_CTL_DISABLE, it->fd[0], NULL)) {
		atomic_fetch_add(&disable_ok, 1);
		item_delete(it);
	} else if (errno == EBUSY) {
		atomic_fetch_add(&disable_busy, 1);
	} else {
		error_at("EPOLL_CTL_DISABLE of fd %d: %s", it->fd[0],
			 strerror(errno));
	}
}

static void cancel(struct item *it)
{
	pthread_mutex_lock(&it->lock);
	cancel_locked(it);
	pthread_mutex_unlock(&it->lock);
}

/*
 * Does this kernel have EPOLL_CTL_DISABLE? An armed oneshot item answers 0
 * where it has. A kernel without it rejects op 4 as an unknown op
 * (EINVAL), after copying an event for it if it copies one for every op
 * but EPOLL_CTL_DEL (EFAULT for a NULL event). An unknown op is EINVAL even
 * for an fd that is not in the set, where the op answers ENOENT: that
 * tells a kernel that only copies no event for it (the series' first
 * patch alone) from one that has the op but refuses an armed item.
 * Anything else is a kernel that claims the op but gets it wrong, which is
 * a failure, not a skip.
 */
static int probe(char *why, size_t len)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT };
	int ep, sv[2], err, ret = KSFT_FAIL;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		snprintf(why, len, "socketpair: %s", strerror(errno));
		return KSFT_FAIL;
	}
	ep = epoll_create1(0);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev)) {
		snprintf(why, len, "epoll setup: %s", strerror(errno));
		goto out;
	}
	if (!epoll_ctl(ep, EPOLL_CTL_DISABLE, sv[0], NULL)) {
		ret = KSFT_PASS;
	} else if (errno == EINVAL) {
		err = epoll_ctl(ep, EPOLL_CTL_DISABLE, sv[1], NULL) ? errno : 0;
		if (err == EINVAL) {
			snprintf(why, len,
				 "EPOLL_CTL_DISABLE not supported by this kernel (an unknown op, read without an event)");
			ret = KSFT_SKIP;
		} else {
			snprintf(why, len,
				 "op 4: EINVAL for an armed item, %s for an fd not in the set",
				 err ? strerror(err) : "0");
		}
	} else if (errno != EFAULT) {
		snprintf(why, len,
			 "op 4 with a NULL event: %s, expected 0, EINVAL or EFAULT",
			 strerror(errno));
	} else if (!epoll_ctl(ep, EPOLL_CTL_DISABLE, sv[0], &ev)) {
		snprintf(why, len,
			 "op 4 works but reads its event argument (EFAULT for NULL)");
	} else if (errno == EINVAL) {
		snprintf(why, len,
			 "EPOLL_CTL_DISABLE not supported by this kernel");
		ret = KSFT_SKIP;
	} else {
		snprintf(why, len, "op 4 with an event: %s, expected EINVAL",
			 strerror(errno));
	}
out:
	if (ep >= 0)
		close(ep);
	close(sv[0]);
	close(sv[1]);
	return ret;
}

static void raise_nofile(void)
{
	rlim_t need = 2 * (rlim_t)opt.items + 64;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= need)
		return;
	rl.rlim_cur = need;
	if (rl.rlim_max < need)
		rl.rlim_max = need;	/* root only; fails quietly otherwise */
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		getrlimit(RLIMIT_NOFILE, &rl);
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* A new item for slot @i, in the set, armed; NULL with errno set if not */
static struct item *item_new(int i)
{
	struct item *it = calloc(1, sizeof(*it));

	if (!it)
		return NULL;
	pthread_mutex_init(&it->lock, NULL);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		       0, it->fd)) {
		free(it);
		return NULL;
	}
	it->tag = ITEM_LIVE;
	it->events = EPOLLIN | EPOLLONESHOT | (i % 2 ? EPOLLET : 0);
	pthread_mutex_lock(&all_lock);
	it->next = all_items;
	all_items = it;
	pthread_mutex_unlock(&all_lock);
	if (item_arm(it, EPOLL_CTL_ADD))
		return NULL;	/* on all_items: counted as never deleted */
	return it;
}

/*
 * Wait until @it, which a deleter cancelled, is deleted: at once if
 * DISABLE said 0, or by the reader that holds its event. Then close its
 * socketpair, counting the bytes left in it, so that the numbers can be
 * reused by the next item. False if it is still there after SETTLE_MS.
 */
static bool item_retire(struct item *it)
{
	long deadline = now_ms() + SETTLE_MS;
	int pending = 0;
	bool gone;

	for (;;) {
		pthread_mutex_lock(&it->lock);
		gone = it->deletions;
		if (gone) {
			if (!ioctl(it->fd[0], FIONREAD, &pending))
				atomic_fetch_add(&bytes_closed, pending);
			close(it->fd[0]);
			close(it->fd[1]);
			it->fd[0] = -1;
			it->fd[1] = -1;
		}
		pthread_mutex_unlock(&it->lock);
		if (gone)
			return true;
		if (now_ms() > deadline)
			return false;
		sleep_us(100);
	}
}

/*
 * A deleter, as a server closes connections while it serves others: every
 * DELETE_EVERY_US it picks one of its slots, makes the item ready (a
 * connection that just got data), cancels it, waits until it is deleted,
 * and puts a new item in the slot, on the file numbers just freed. Every
 * other time the data comes while the deleter holds the item lock, so
 * that a reader handed the event waits for the lock right then, whatever
 * the number of CPUs: the moment DISABLE answers EBUSY for.
 */
static void *deleter(void *arg)
{
	int id = (int)(long)arg;
	/* This deleter's slots: id, id + DELETERS, id + 2 * DELETERS, ... */
	int mine = (opt.items - id + DELETERS - 1) / DELETERS;
	unsigned int seed = opt.seed * DELETERS + id;
	struct item *it;
	int i;

	while (mine > 0 && !atomic_load(&deleters_quit)) {
		i = id + DELETERS * (rand_r(&seed) % mine);
		it = slot_get(i);
		pthread_mutex_lock(&it->lock);
		put(it, 'y');
		if (rand_r(&seed) % 2) {
			pthread_mutex_unlock(&it->lock);
			sched_yield();
			pthread_mutex_lock(&it->lock);
		} else {
			sched_yield();
		}
		cancel_locked(it);
		pthread_mutex_unlock(&it->lock);
		if (!item_retire(it))
			return NULL;	/* the final count says so */
		it = item_new(i);
		if (!it) {
			error_at("re-creating item %d: %s", i, strerror(errno));
			return NULL;
		}
		slot_set(i, it);
		atomic_fetch_add(&recreated, 1);
		sleep_us(DELETE_EVERY_US);
	}
	return NULL;
}

static int setup(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct item *it;
	int i;

	raise_nofile();
	epfd = epoll_create1(EPOLL_CLOEXEC);
	quitfd = eventfd(0, EFD_CLOEXEC);
	if (epfd < 0 || quitfd < 0)
		return -1;
	/* Level-triggered and never re-armed: wakes every reader at the end */
	ev.data.ptr = NULL;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, quitfd, &ev))
		return -1;

	slots = calloc(opt.items, sizeof(*slots));
	if (!slots)
		return -1;
	for (i = 0; i < opt.items; i++) {
		it = item_new(i);
		if (!it)
			return -1;
		slot_set(i, it);
	}
	return 0;
}

/* Wait until cond() holds or SETTLE_MS pass; true if it holds. */
static bool settle(bool (*cond)(void))
{
	long deadline = now_ms() + SETTLE_MS;

	while (!cond()) {
		if (now_ms() > deadline)
			return false;
		sleep_us(1000);
	}
	return true;
}

static bool writer_is_paused(void)
{
	return atomic_load(&writer_paused);
}

static bool all_read(void)
{
	return atomic_load(&bytes_read) + atomic_load(&bytes_closed) ==
	       atomic_load(&bytes_written);
}

static bool all_deleted(void)
{
	return atomic_load(&deleted) >=
	       (unsigned long)opt.items + atomic_load(&recreated);
}

static void shuffle(int *v, int n, unsigned int seed)
{
	int i, j, t;

	srand(seed);
	for (i = n - 1; i > 0; i--) {
		j = rand() % (i + 1);
		t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
}

static int test_no;
static int failed, skipped;

static void result(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d ", ok ? "ok" : "not ok", ++test_no);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	failed += !ok;
}

/*
 * The contract, one clause at a time. Each clause returns NULL if the
 * kernel kept it, or what went wrong; "SKIP ..." if it cannot be checked
 * here.
 */

/* One socketpair registered in a fresh set: sv[0] is watched. */
struct fixture {
	int ep;
	int sv[2];
};

static const char *fixture_init(struct fixture *f, unsigned int events)
{
	struct epoll_event ev = { .events = events };

	f->sv[0] = -1;
	f->sv[1] = -1;
	f->ep = epoll_create1(EPOLL_CLOEXEC);
	if (f->ep < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
		       f->sv) ||
	    epoll_ctl(f->ep, EPOLL_CTL_ADD, f->sv[0], &ev))
		return "fixture setup failed";
	return NULL;
}

static void fixture_fini(struct fixture *f)
{
	if (f->sv[0] >= 0)
		close(f->sv[0]);
	if (f->sv[1] >= 0)
		close(f->sv[1]);
	if (f->ep >= 0)
		close(f->ep);
}

/* 0 or the errno of an epoll_ctl() op given no event */
static int ctl_err(int ep, int op, int fd)
{
	return epoll_ctl(ep, op, fd, NULL) ? errno : 0;
}

/* EPOLL_CTL_DISABLE takes no event */
static int disable_fd(int ep, int fd)
{
	return ctl_err(ep, EPOLL_CTL_DISABLE, fd);
}

static int rearm_fd(int ep, int fd, unsigned int events)
{
	struct epoll_event ev = { .events = events };

	return epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev) ? errno : 0;
}

/* How many events epoll_wait() hands out right now (0 or 1) */
static int collect(int ep)
{
	struct epoll_event ev;

	return epoll_wait(ep, &ev, 1, 0);
}

static bool put_byte(int fd)
{
	return write(fd, "x", 1) == 1;
}

static char why_buf[160];

/* Is an errno-or-0 result what the contract says? If not, say why. */
static bool expect(int got, int want, const char *what)
{
	if (got == want)
		return true;
	snprintf(why_buf, sizeof(why_buf), "%s: got %s, expected %s", what,
		 got ? strerror(got) : "0", want ? strerror(want) : "0");
	return false;
}

/* Does epoll_wait() hand out @want events right now? If not, say why. */
static bool expect_events(int ep, int want, const char *what)
{
	int n = collect(ep);

	if (n == want)
		return true;
	snprintf(why_buf, sizeof(why_buf),
		 "%s: epoll_wait returned %d, expected %d", what, n, want);
	return false;
}

static const char *armed_body(struct fixture *f)
{
	if (!expect(disable_fd(f->ep, f->sv[0]), 0, "DISABLE of an armed item"))
		return why_buf;
	return NULL;
}

static const char *silenced_body(struct fixture *f)
{
	if (!expect(disable_fd(f->ep, f->sv[0]), 0, "DISABLE"))
		return why_buf;
	if (!put_byte(f->sv[1]))
		return "write failed";
	if (!expect_events(f->ep, 0, "data after DISABLE"))
		return why_buf;
	return NULL;
}

static const char *rearm_body(struct fixture *f)
{
	if (!expect(disable_fd(f->ep, f->sv[0]), 0, "DISABLE"))
		return why_buf;
	if (!put_byte(f->sv[1]))
		return "write failed";
	if (!expect(rearm_fd(f->ep, f->sv[0], EPOLLIN | EPOLLONESHOT), 0,
		    "EPOLL_CTL_MOD"))
		return why_buf;
	if (!expect_events(f->ep, 1, "pending data after the re-arm"))
		return why_buf;
	return NULL;
}

static const char *del_body(struct fixture *f)
{
	if (!expect(disable_fd(f->ep, f->sv[0]), 0, "DISABLE"))
		return why_buf;
	if (!expect(ctl_err(f->ep, EPOLL_CTL_DEL, f->sv[0]), 0,
		    "EPOLL_CTL_DEL after DISABLE"))
		return why_buf;
	if (!expect(disable_fd(f->ep, f->sv[0]), ENOENT, "DISABLE after DEL"))
		return why_buf;
	return NULL;
}

static const char *ready_body(struct fixture *f)
{
	if (!put_byte(f->sv[1]))
		return "write failed";
	if (!expect(disable_fd(f->ep, f->sv[0]), 0, "DISABLE of a ready item"))
		return why_buf;
	if (!expect_events(f->ep, 0, "the ready item after DISABLE"))
		return why_buf;
	return NULL;
}

static const char *delivered_body(struct fixture *f)
{
	if (!put_byte(f->sv[1]))
		return "write failed";
	if (!expect_events(f->ep, 1, "the event"))
		return why_buf;
	if (!expect(disable_fd(f->ep, f->sv[0]), EBUSY,
		    "DISABLE of a delivered item"))
		return why_buf;
	return NULL;
}

/*
 * The protocol's EBUSY path, taken in every run: a waiter is handed the
 * item's event and held before it takes the item's lock; the canceller
 * takes the lock, marks the item "stop", gets EBUSY and lets go; the
 * waiter, released, finds the mark and deletes the item, exactly once. A
 * kernel that answered 0 here would have the canceller delete, and free,
 * the item under the waiter.
 */
static struct {
	pthread_barrier_t handed, release;
	pthread_mutex_t lock;
	struct fixture *f;
	bool stop;
	int got, deletions, del_err;
} handoff;

static void *handoff_waiter(void *arg)
{
	struct epoll_event ev;

	(void)arg;
	handoff.got = epoll_wait(handoff.f->ep, &ev, 1, 5000);
	pthread_barrier_wait(&handoff.handed);
	pthread_barrier_wait(&handoff.release);
	pthread_mutex_lock(&handoff.lock);
	if (handoff.stop) {
		handoff.del_err = ctl_err(handoff.f->ep, EPOLL_CTL_DEL,
					  handoff.f->sv[0]);
		handoff.deletions++;
	}
	pthread_mutex_unlock(&handoff.lock);
	return NULL;
}

static const char *handoff_body(struct fixture *f)
{
	pthread_t t;
	int err;

	handoff.f = f;
	handoff.stop = false;
	handoff.got = 0;
	handoff.deletions = 0;
	handoff.del_err = 0;
	if (!put_byte(f->sv[1]))
		return "write failed";
	pthread_mutex_init(&handoff.lock, NULL);
	pthread_barrier_init(&handoff.handed, NULL, 2);
	pthread_barrier_init(&handoff.release, NULL, 2);
	if (pthread_create(&t, NULL, handoff_waiter, NULL))
		return "pthread_create failed";

	pthread_barrier_wait(&handoff.handed);
	pthread_mutex_lock(&handoff.lock);
	handoff.stop = true;
	err = disable_fd(f->ep, f->sv[0]);
	pthread_mutex_unlock(&handoff.lock);
	pthread_barrier_wait(&handoff.release);

	pthread_join(t, NULL);
	pthread_barrier_destroy(&handoff.handed);
	pthread_barrier_destroy(&handoff.release);
	pthread_mutex_destroy(&handoff.lock);
	if (handoff.got != 1)
		return "the waiter was not handed the event";
	if (!expect(err, EBUSY, "DISABLE while a waiter holds the event"))
		return why_buf;
	if (handoff.deletions != 1)
		return "the waiter did not delete the item";
	if (!expect(handoff.del_err, 0, "the waiter's EPOLL_CTL_DEL"))
		return why_buf;
	if (!expect(disable_fd(f->ep, f->sv[0]), ENOENT,
		    "DISABLE after the waiter's delete"))
		return why_buf;
	return NULL;
}

/*
 * A disabled item looks like a delivered one: its event bits are clear. So
 * a second DISABLE answers EBUSY, which is right: the first caller already
 * owns the deletion, and a second must not delete (and free) it again.
 */
static const char *twice_body(struct fixture *f)
{
	if (!expect(disable_fd(f->ep, f->sv[0]), 0, "first DISABLE"))
		return why_buf;
	if (!expect(disable_fd(f->ep, f->sv[0]), EBUSY, "second DISABLE"))
		return why_buf;
	return NULL;
}

static const char *no_oneshot_body(struct fixture *f)
{
	if (!expect(disable_fd(f->ep, f->sv[0]), EINVAL,
		    "DISABLE of an item without EPOLLONESHOT"))
		return why_buf;
	if (!put_byte(f->sv[1]))
		return "write failed";
	if (!expect_events(f->ep, 1, "the item after the refused DISABLE"))
		return why_buf;
	return NULL;
}

static const char *error_codes_body(struct fixture *f)
{
	char path[] = "/tmp/epoll_disable_test.XXXXXX";
	int file, closed[2], err;

	if (!expect(disable_fd(f->ep, f->sv[1]), ENOENT, "fd not in the set"))
		return why_buf;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, closed))
		return "socketpair failed";
	close(closed[0]);
	close(closed[1]);
	if (!expect(disable_fd(f->ep, closed[0]), EBADF, "closed fd"))
		return why_buf;
	if (!expect(disable_fd(f->sv[0], f->sv[1]), EINVAL,
		    "epfd not an epoll fd"))
		return why_buf;
	if (!expect(disable_fd(f->ep, f->ep), EINVAL, "fd == epfd"))
		return why_buf;

	file = mkstemp(path);
	if (file < 0)
		return "mkstemp failed";
	unlink(path);
	err = disable_fd(f->ep, file);
	close(file);
	if (!expect(err, EPERM, "a regular file"))
		return why_buf;
	return NULL;
}

static const char *unknown_body(struct fixture *f)
{
	if (!expect(ctl_err(f->ep, 5, f->sv[0]), EINVAL, "op 5"))
		return why_buf;
	if (!expect(ctl_err(f->ep, -1, f->sv[0]), EINVAL, "op -1"))
		return why_buf;
	return NULL;
}

static const char *event_body(struct fixture *f)
{
	void *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	int err;

	if (page == MAP_FAILED)
		return "mmap failed";
	err = epoll_ctl(f->ep, EPOLL_CTL_DISABLE, f->sv[0], page) ? errno : 0;
	munmap(page, 4096);
	if (!expect(err, 0, "DISABLE with an unreadable event pointer"))
		return why_buf;
	return NULL;
}

/* An epoll set is itself pollable: disable one that another set watches */
static const char *nested_body(struct fixture *inner)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT };
	const char *why = NULL;
	int outer;

	outer = epoll_create1(EPOLL_CLOEXEC);
	if (outer < 0 || epoll_ctl(outer, EPOLL_CTL_ADD, inner->ep, &ev)) {
		why = "nested setup failed";
		goto out;
	}
	if (disable_fd(outer, inner->ep)) {
		why = "DISABLE of an armed nested set failed";
		goto out;
	}
	if (rearm_fd(outer, inner->ep, EPOLLIN | EPOLLONESHOT) ||
	    !put_byte(inner->sv[1]) || collect(outer) != 1) {
		why = "the nested set was not reported after the re-arm";
		goto out;
	}
	if (disable_fd(outer, inner->ep) != EBUSY)
		why = "DISABLE of a delivered nested set did not say EBUSY";
out:
	if (outer >= 0)
		close(outer);
	return why;
}

/*
 * The wakeup source of an EPOLLWAKEUP item is active while the item is on
 * the ready list. Watch a FIFO with a name of our own, so that its wakeup
 * source can be found under /sys/class/wakeup, and check that DISABLE of
 * the ready item releases it.
 */
static int wakeup_active_ms(const char *name)
{
	char path[128], buf[128];
	int i, ms = -1;
	FILE *fp;

	for (i = 0; i < 4096 && ms < 0; i++) {
		snprintf(path, sizeof(path), WAKEUP_CLASS "/wakeup%d/name", i);
		fp = fopen(path, "r");
		if (!fp)
			continue;
		if (fgets(buf, sizeof(buf), fp) &&
		    !strncmp(buf, name, strlen(name)) &&
		    buf[strlen(name)] == '\n') {
			fclose(fp);
			snprintf(path, sizeof(path),
				 WAKEUP_CLASS "/wakeup%d/active_time_ms", i);
			fp = fopen(path, "r");
			if (fp && fscanf(fp, "%d", &ms) != 1)
				ms = -1;
		}
		if (fp)
			fclose(fp);
	}
	return ms;
}

static const char *wakeup_source(struct fixture *unused)
{
	struct epoll_event ev = {
		.events = EPOLLIN | EPOLLONESHOT | EPOLLWAKEUP,
	};
	char name[64], path[96];
	const char *why = NULL;
	int ep, fd = -1, ms;

	(void)unused;
	if (access(WAKEUP_CLASS, F_OK))
		return "SKIP no /sys/class/wakeup (Linux < 5.4 or !PM_SLEEP)";
	snprintf(name, sizeof(name), "epoll-disable-%d", (int)getpid());
	snprintf(path, sizeof(path), "/tmp/%s", name);
	unlink(path);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep >= 0 && !mkfifo(path, 0600))
		fd = open(path, O_RDWR | O_NONBLOCK);
	if (fd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) {
		why = "FIFO setup failed";
		goto out;
	}
	if (wakeup_active_ms(name) < 0) {
		why = "SKIP the item has no wakeup source (CAP_BLOCK_SUSPEND?)";
		goto out;
	}
	if (!put_byte(fd)) {
		why = "write failed";
		goto out;
	}
	sleep_us(20000);
	ms = wakeup_active_ms(name);
	if (ms <= 0) {
		snprintf(why_buf, sizeof(why_buf),
			 "the ready item's wakeup source is idle (%d ms)", ms);
		why = why_buf;
		goto out;
	}
	if (disable_fd(ep, fd)) {
		why = "DISABLE of the ready item failed";
		goto out;
	}
	ms = wakeup_active_ms(name);
	if (ms != 0) {
		snprintf(why_buf, sizeof(why_buf),
			 "wakeup source active after DISABLE (%d ms)", ms);
		why = why_buf;
	}
out:
	if (fd >= 0)
		close(fd);
	if (ep >= 0)
		close(ep);
	unlink(path);
	return why;
}

/*
 * DISABLE against an epoll_wait() that collects the same ready item: in
 * every round exactly one of them gets it, and over the rounds each side
 * gets it first some of the time. Where the two really run in parallel
 * either can win any round, but nothing makes a given CPU pair, or one
 * CPU, take both orders: in one round of four one side sleeps for a
 * millisecond first, the collector in one, DISABLE in the next, so that
 * each order is taken in some rounds whatever the scheduler does.
 */
#define RACE_ROUNDS	2000
#define RACE_HOLD_US	1000

static struct {
	pthread_barrier_t go, done;
	int ep;
	int round;
	int got;
	bool quit;
} race;

static void *race_collector(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_barrier_wait(&race.go);
		if (race.quit)
			return NULL;
		if (race.round % 8 == 3)
			sleep_us(RACE_HOLD_US);
		race.got = collect(race.ep);
		pthread_barrier_wait(&race.done);
	}
}

static const char *race_body(struct fixture *f)
{
	int round, err, both = 0, neither = 0, other = 0;
	int disable_won = 0, wait_won = 0;
	pthread_t t;

	race.ep = f->ep;
	race.quit = false;
	pthread_barrier_init(&race.go, NULL, 2);
	pthread_barrier_init(&race.done, NULL, 2);
	if (pthread_create(&t, NULL, race_collector, NULL))
		return "pthread_create failed";
	/* The byte is never read: every re-arm makes the item ready again */
	if (!put_byte(f->sv[1]))
		return "write failed";
	for (round = 0; round < RACE_ROUNDS; round++) {
		if (rearm_fd(f->ep, f->sv[0], EPOLLIN | EPOLLONESHOT)) {
			other++;
			break;
		}
		race.round = round;
		pthread_barrier_wait(&race.go);
		if (round % 8 == 7)
			sleep_us(RACE_HOLD_US);
		err = disable_fd(f->ep, f->sv[0]);
		pthread_barrier_wait(&race.done);
		if (err && err != EBUSY)
			other++;
		else if (!err && race.got == 1)
			both++;
		else if (err == EBUSY && race.got == 0)
			neither++;
		else if (!err)
			disable_won++;
		else
			wait_won++;
	}
	race.quit = true;
	pthread_barrier_wait(&race.go);
	pthread_join(t, NULL);
	pthread_barrier_destroy(&race.go);
	pthread_barrier_destroy(&race.done);
	printf("# race: %d rounds, DISABLE first %d, epoll_wait first %d\n",
	       round, disable_won, wait_won);
	if (both || neither || other || !disable_won || !wait_won) {
		snprintf(why_buf, sizeof(why_buf),
			 "%d rounds: %d both got it, %d neither, %d errors, DISABLE first %d, epoll_wait first %d",
			 round, both, neither, other, disable_won, wait_won);
		return why_buf;
	}
	return NULL;
}

/*
 * The op through io_uring: IORING_OP_EPOLL_CTL hands its op to
 * do_epoll_ctl(), and copies an event only where ep_op_has_event() says
 * so, so DISABLE must answer there as it does in epoll_ctl(2), as the res
 * of its completion. One submission at a time on a ring of one entry,
 * with the raw system calls; the SQE's event pointer is NULL.
 */
struct ring {
	int fd;
	struct io_uring_params p;
	void *rings;
	size_t rings_len, sqes_len;
	struct io_uring_sqe *sqes;
};

static void ring_fini(struct ring *r)
{
	if (r->sqes != MAP_FAILED)
		munmap(r->sqes, r->sqes_len);
	if (r->rings != MAP_FAILED)
		munmap(r->rings, r->rings_len);
	if (r->fd >= 0)
		close(r->fd);
}

static const char *ring_init(struct ring *r)
{
	size_t sq_len, cq_len;

	memset(&r->p, 0, sizeof(r->p));
	r->rings = MAP_FAILED;
	r->sqes = MAP_FAILED;
	r->fd = syscall(__NR_io_uring_setup, 1, &r->p);
	if (r->fd < 0 && errno == ENOSYS)
		return "SKIP no io_uring in this kernel (CONFIG_IO_URING=n)";
	if (r->fd < 0 && errno == EPERM)
		return "SKIP io_uring is disabled (kernel.io_uring_disabled)";
	if (r->fd < 0)
		return "io_uring_setup failed";
	/* Since 5.4 one mapping holds both rings; the op is from 5.6 */
	if (!(r->p.features & IORING_FEAT_SINGLE_MMAP))
		return "io_uring without IORING_FEAT_SINGLE_MMAP";
	sq_len = r->p.sq_off.array + r->p.sq_entries * sizeof(__u32);
	cq_len = r->p.cq_off.cqes +
		 r->p.cq_entries * sizeof(struct io_uring_cqe);
	r->rings_len = sq_len > cq_len ? sq_len : cq_len;
	r->rings = mmap(NULL, r->rings_len, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	r->sqes_len = r->p.sq_entries * sizeof(*r->sqes);
	r->sqes = mmap(NULL, r->sqes_len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (r->rings == MAP_FAILED || r->sqes == MAP_FAILED)
		return "mmap of the io_uring rings failed";
	return NULL;
}

/* A field of the shared rings, at the offset io_uring_setup() gave */
static unsigned int *ring_word(struct ring *r, __u32 off)
{
	return (unsigned int *)((char *)r->rings + off);
}

/*
 * Submit one IORING_OP_EPOLL_CTL and reap its completion: 0 or the errno
 * its res carries, or -1 if the ring itself failed.
 */
static int uring_ctl(struct ring *r, int ep, int op, int fd,
		     struct epoll_event *ev)
{
	unsigned int *sq_tail = ring_word(r, r->p.sq_off.tail);
	unsigned int *cq_head = ring_word(r, r->p.cq_off.head);
	unsigned int *cq_tail = ring_word(r, r->p.cq_off.tail);
	unsigned int sq_mask = *ring_word(r, r->p.sq_off.ring_mask);
	unsigned int cq_mask = *ring_word(r, r->p.cq_off.ring_mask);
	struct io_uring_cqe *cqe;
	unsigned int head, tail;
	int res;

	memset(r->sqes, 0, sizeof(*r->sqes));
	r->sqes->opcode = IORING_OP_EPOLL_CTL;
	r->sqes->fd = ep;
	r->sqes->len = op;
	r->sqes->off = fd;
	r->sqes->addr = (uintptr_t)ev;
	r->sqes->user_data = op;
	tail = *sq_tail;
	ring_word(r, r->p.sq_off.array)[tail & sq_mask] = 0;
	__atomic_store_n(sq_tail, tail + 1, __ATOMIC_RELEASE);

	if (syscall(__NR_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS,
		    NULL, 0) != 1)
		return -1;
	head = *cq_head;
	if (head == __atomic_load_n(cq_tail, __ATOMIC_ACQUIRE))
		return -1;
	cqe = (struct io_uring_cqe *)((char *)r->rings + r->p.cq_off.cqes) +
	      (head & cq_mask);
	res = cqe->user_data == (__u64)op ? -cqe->res : -1;
	__atomic_store_n(cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

/* One op through io_uring on the fixture's item: is its res @want? */
static const char *uring_expect(struct fixture *f, int op,
				struct epoll_event *ev, int want,
				const char *what)
{
	const char *why;
	struct ring r;
	int err;

	why = ring_init(&r);
	if (!why) {
		err = uring_ctl(&r, f->ep, op, f->sv[0], ev);
		if (err < 0)
			why = "io_uring_enter did not complete the SQE";
		else if (!expect(err, want, what))
			why = why_buf;
	}
	ring_fini(&r);
	return why;
}

static const char *uring_armed_body(struct fixture *f)
{
	return uring_expect(f, EPOLL_CTL_DISABLE, NULL, 0,
			    "io_uring DISABLE of an armed item");
}

static const char *uring_delivered_body(struct fixture *f)
{
	if (!put_byte(f->sv[1]))
		return "write failed";
	if (!expect_events(f->ep, 1, "the armed item"))
		return why_buf;
	return uring_expect(f, EPOLL_CTL_DISABLE, NULL, EBUSY,
			    "io_uring DISABLE of a delivered item");
}

/*
 * EINVAL is also what io_uring says of an opcode it does not know: first
 * show that EPOLL_CTL_MOD goes through.
 */
static const char *uring_no_oneshot_body(struct fixture *f)
{
	struct epoll_event ev = { .events = EPOLLIN };
	const char *why;

	why = uring_expect(f, EPOLL_CTL_MOD, &ev, 0, "io_uring EPOLL_CTL_MOD");
	if (why)
		return why;
	return uring_expect(f, EPOLL_CTL_DISABLE, NULL, EINVAL,
			    "io_uring DISABLE of an item without EPOLLONESHOT");
}

#define ONESHOT		(EPOLLIN | EPOLLONESHOT)

static const struct clause {
	const char *name;
	unsigned int events;	/* of the fixture's item */
	const char *(*check)(struct fixture *f);
} clauses[] = {
	{ "armed item: DISABLE returns 0",
	  ONESHOT, armed_body },
	{ "disabled item: new data is not reported",
	  ONESHOT, silenced_body },
	{ "disabled item: EPOLL_CTL_MOD re-arms it, pending data is reported",
	  ONESHOT, rearm_body },
	{ "disabled item: EPOLL_CTL_DEL succeeds",
	  ONESHOT, del_body },
	{ "ready, uncollected item: DISABLE returns 0 and unqueues it",
	  ONESHOT, ready_body },
	{ "delivered item: DISABLE returns EBUSY",
	  ONESHOT, delivered_body },
	{ "waiter holds the event: canceller gets EBUSY, waiter deletes",
	  ONESHOT, handoff_body },
	{ "second DISABLE returns EBUSY",
	  ONESHOT, twice_body },
	{ "EPOLLET armed item: DISABLE returns 0",
	  ONESHOT | EPOLLET, armed_body },
	{ "EPOLLET delivered item: DISABLE returns EBUSY",
	  ONESHOT | EPOLLET, delivered_body },
	{ "level-triggered item without EPOLLONESHOT: EINVAL, still works",
	  EPOLLIN, no_oneshot_body },
	{ "edge-triggered item without EPOLLONESHOT: EINVAL, still works",
	  EPOLLIN | EPOLLET, no_oneshot_body },
	{ "ENOENT, EBADF, EINVAL (not epoll, fd == epfd), EPERM (not pollable)",
	  ONESHOT, error_codes_body },
	{ "unknown ops 5 and -1 with a NULL event: EINVAL",
	  ONESHOT, unknown_body },
	{ "the event argument is not read",
	  ONESHOT, event_body },
	{ "nested epoll set: armed 0, delivered EBUSY",
	  EPOLLIN, nested_body },
	{ "EPOLLWAKEUP: DISABLE of a ready item releases its wakeup source",
	  ONESHOT, wakeup_source },
	{ "DISABLE racing epoll_wait: exactly one gets the event",
	  ONESHOT, race_body },
	{ "io_uring: armed item: DISABLE completes with res 0",
	  ONESHOT, uring_armed_body },
	{ "io_uring: delivered item: DISABLE completes with res -EBUSY",
	  ONESHOT, uring_delivered_body },
	{ "io_uring: item without EPOLLONESHOT: res -EINVAL, MOD res 0",
	  EPOLLIN, uring_no_oneshot_body },
};

#define NR_CLAUSES	((int)ARRAY_SIZE(clauses))

static void check_contract(void)
{
	const char *why;
	int i;

	for (i = 0; i < NR_CLAUSES; i++) {
		struct fixture f;

		why = fixture_init(&f, clauses[i].events);
		if (!why)
			why = clauses[i].check(&f);
		fixture_fini(&f);
		if (why && !strncmp(why, "SKIP ", 5)) {
			printf("ok %d %s # SKIP %s\n", ++test_no,
			       clauses[i].name, why + 5);
			skipped++;
		} else {
			result(!why, "%s%s%s", clauses[i].name,
			       why ? ": " : "", why ? why : "");
		}
	}
}

static void print_usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-n items] [-t readers] [-s seconds] [-S seed]\n"
		"          [-m disable|naive] [-d delay_us] [-f rearm|delete]\n"
		"  -n  socketpairs in the set (default %d)\n"
		"  -t  reader threads in epoll_wait() (default %d)\n"
		"  -s  seconds of load before the deletions (default %d)\n"
		"  -S  seed of the deletion order (default %u)\n"
		"  -m  deletion protocol: disable (EPOLL_CTL_DISABLE) or naive\n"
		"      (EPOLL_CTL_DEL under the item lock; must be caught)\n"
		"  -d  readers sleep this long between epoll_wait() and taking\n"
		"      the item lock, to widen the race window (default 0)\n"
		"  -f  break the readers on purpose: rearm drops every 64th\n"
		"      re-arm, delete ignores the stop flag (must be caught)\n",
		prog, opt.items, opt.readers, opt.seconds, opt.seed);
	exit(KSFT_FAIL);
}

static int number(const char *s, int min, const char *prog)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > INT_MAX)
		print_usage(prog);
	return v;
}

static void parse(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "n:t:s:S:m:d:f:h")) != -1) {
		switch (c) {
		case 'n':
			opt.items = number(optarg, 1, argv[0]);
			break;
		case 't':
			opt.readers = number(optarg, 1, argv[0]);
			break;
		case 's':
			opt.seconds = number(optarg, 0, argv[0]);
			break;
		case 'S':
			opt.seed = number(optarg, 0, argv[0]);
			break;
		case 'm':
			if (!strcmp(optarg, "disable"))
				opt.protocol = PROTO_DISABLE;
			else if (!strcmp(optarg, "naive"))
				opt.protocol = PROTO_NAIVE;
			else
				print_usage(argv[0]);
			break;
		case 'd':
			opt.delay_us = number(optarg, 0, argv[0]);
			break;
		case 'f':
			if (!strcmp(optarg, "rearm"))
				opt.fault = FAULT_REARM;
			else if (!strcmp(optarg, "delete"))
				opt.fault = FAULT_DELETE;
			else
				print_usage(argv[0]);
			break;
		default:
			print_usage(argv[0]);
		}
	}
	if (optind != argc)
		print_usage(argv[0]);
}

int main(int argc, char **argv)
{
	unsigned long once = 0, never = 0, twice = 0, left = 0, lost;
	const char *busy_name =
		"EBUSY answered, and each owner deleted its item";
	unsigned long busy, owners;
	pthread_t *threads, wthread, dthreads[DELETERS];
	bool drained, all_gone, contract;
	struct item *it;
	char why[160];
	int i, avail;
	int *order;

	parse(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	printf("# %d items, %d readers, %d s, seed %u, ",
	       opt.items, opt.readers, opt.seconds, opt.seed);
	printf("protocol %s, delay %d us%s\n",
	       opt.protocol == PROTO_NAIVE ? "naive" : "disable", opt.delay_us,
	       opt.fault == FAULT_REARM ? ", fault rearm" :
	       opt.fault == FAULT_DELETE ? ", fault delete" : "");

	/* The naive protocol needs no kernel support: it runs anywhere */
	if (opt.protocol == PROTO_DISABLE) {
		avail = probe(why, sizeof(why));
		if (avail == KSFT_SKIP) {
			printf("1..0 # SKIP %s\n", why);
			return KSFT_SKIP;
		}
		if (avail != KSFT_PASS) {
			printf("1..1\nnot ok 1 EPOLL_CTL_DISABLE probe: %s\n",
			       why);
			return KSFT_FAIL;
		}
	}

	/* The contract is checked where the op is, unless a run is rigged */
	contract = opt.protocol == PROTO_DISABLE && opt.fault == FAULT_NONE;
	printf("1..%d\n", 5 + (contract ? NR_CLAUSES : 0));
	if (contract)
		check_contract();

	if (setup()) {
		result(false, "setup: %s", strerror(errno));
		return KSFT_FAIL;
	}
	threads = calloc(opt.readers, sizeof(*threads));
	order = calloc(opt.items, sizeof(*order));
	if (!threads || !order)
		return KSFT_FAIL;
	for (i = 0; i < opt.readers; i++)
		if (pthread_create(&threads[i], NULL, reader, NULL))
			return KSFT_FAIL;
	if (pthread_create(&wthread, NULL, writer, NULL))
		return KSFT_FAIL;
	for (i = 0; i < DELETERS; i++)
		if (pthread_create(&dthreads[i], NULL, deleter,
				   (void *)(long)i))
			return KSFT_FAIL;

	/*
	 * Load, with items deleted and re-created under it; then show that
	 * every byte written so far reached a reader or was in a socketpair
	 * when its item was deleted
	 */
	sleep_us(opt.seconds * 1000000L);
	atomic_store(&deleters_quit, true);
	for (i = 0; i < DELETERS; i++)
		pthread_join(dthreads[i], NULL);
	atomic_store(&writer_pause, true);
	drained = settle(writer_is_paused) && settle(all_read);
	lost = atomic_load(&bytes_written) - atomic_load(&bytes_read) -
	       atomic_load(&bytes_closed);

	/*
	 * Delete every item while the writer keeps the events coming: let the
	 * load pick up again, then pace the deletions so that each one can
	 * meet a reader that was just handed that item's event.
	 */
	atomic_store(&writer_pause, false);
	for (i = 0; i < opt.items; i++)
		order[i] = i;
	shuffle(order, opt.items, opt.seed);
	sleep_us(CANCEL_MS * 100L);
	for (i = 0; i < opt.items; i++) {
		cancel(slot_get(order[i]));
		sleep_us(CANCEL_MS * 1000L / opt.items);
	}
	all_gone = settle(all_deleted);

	atomic_store(&writer_quit, true);
	pthread_join(wthread, NULL);
	if (eventfd_write(quitfd, 1))
		error_at("write of quitfd: %s", strerror(errno));
	for (i = 0; i < opt.readers; i++)
		pthread_join(threads[i], NULL);

	for (it = all_items; it; it = it->next) {
		int pending = 0;

		once += it->deletions == 1;
		never += it->deletions == 0;
		twice += it->deletions > 1;
		if (it->fd[0] >= 0 && !ioctl(it->fd[0], FIONREAD, &pending))
			left += pending;
	}
	busy = atomic_load(&disable_busy);
	owners = atomic_load(&owner_deletes);

	printf("# events %lu, items deleted and re-created under load %lu\n",
	       atomic_load(&events_handled), atomic_load(&recreated));
	printf("# DISABLE 0/EBUSY %lu/%lu, owner deletes %lu, ",
	       atomic_load(&disable_ok), busy, owners);
	printf("re-arms dropped %lu\n", atomic_load(&rearm_dropped));
	printf("# bytes written %lu, read %lu, ", atomic_load(&bytes_written),
	       atomic_load(&bytes_read));
	printf("in deleted items %lu, left in sockets %lu\n",
	       atomic_load(&bytes_closed), left);
	if (atomic_load(&errors))
		printf("# %lu unexpected errors, first: %s\n",
		       atomic_load(&errors), first_error);

	result(!atomic_load(&errors), "no unexpected errors");
	result(once == opt.items + atomic_load(&recreated) && all_gone,
	       "every item deleted exactly once (%lu once, %lu never, %lu more than once)",
	       once, never, twice);
	result(!atomic_load(&late_touches),
	       "no item touched after its deletion (%lu late touches)",
	       atomic_load(&late_touches));
	result(drained && atomic_load(&bytes_written) ==
	       atomic_load(&bytes_read) + atomic_load(&bytes_closed) + left,
	       "no data lost (%lu bytes unread after the load)", lost);
	if (opt.protocol == PROTO_NAIVE) {
		printf("ok %d %s # SKIP the naive protocol does not DISABLE\n",
		       ++test_no, busy_name);
		skipped++;
	} else {
		result(busy && owners == busy,
		       "%s (EBUSY %lu, owner deletes %lu)", busy_name, busy,
		       owners);
	}
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n",
	       test_no - failed - skipped, failed, skipped);

	for (it = all_items; it; it = it->next) {
		if (it->fd[0] >= 0) {
			close(it->fd[0]);
			close(it->fd[1]);
		}
	}
	return failed ? KSFT_FAIL : KSFT_PASS;
}
