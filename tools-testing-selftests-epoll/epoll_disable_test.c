// SPDX-License-Identifier: GPL-2.0
/*
 * EPOLL_CTL_DISABLE: its contract, one test per clause in every state an
 * EPOLLONESHOT item can be in, and a server's load deleting items through
 * it while many threads wait on the set.
 *
 * The item fixture is one EPOLLONESHOT item in a fresh set: a socketpair
 * (plain or EPOLLET), or another epoll set watching one. Its states are
 * armed and idle, armed and queued (ready, not yet collected), delivered
 * (handed to epoll_wait()), disabled, re-armed by EPOLL_CTL_MOD, deleted.
 * For each, the test checks DISABLE's answer and what epoll_wait() reports
 * afterwards, whatever data arrives: after a 0 answer, nothing until MOD.
 *
 * The server test is the protocol the op exists for. Readers block in
 * epoll_wait() on one set of socketpairs; a writer keeps them busy; four
 * deleters delete items under the load and re-create them on the file
 * numbers just freed; then every item left is deleted. A deletion is:
 *
 *   lock item; stop = 1;
 *   EPOLL_CTL_DISABLE == 0      -> nobody was handed the event: delete now
 *   EPOLL_CTL_DISABLE == EBUSY  -> a reader holds the event; it sees stop
 *                                  under the item lock and deletes the item
 *   unlock item
 *
 * Deleted items keep a poisoned tag instead of being freed, so that a
 * reader touching one (a use-after-free in a real server) is counted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <poll.h>
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

#include "kselftest_harness.h"

/* Not in the C library's <sys/epoll.h>; the value is the kernel's ABI. */
#ifndef EPOLL_CTL_DISABLE
#define EPOLL_CTL_DISABLE 4
#endif

/* 0 or the errno of an epoll_ctl() op given no event */
static int ctl(int ep, int op, int fd)
{
	return epoll_ctl(ep, op, fd, NULL) ? errno : 0;
}

/* EPOLL_CTL_DISABLE takes no event */
static int disable(int ep, int fd)
{
	return ctl(ep, EPOLL_CTL_DISABLE, fd);
}

static int rearm(int ep, int fd, unsigned int events)
{
	struct epoll_event ev = { .events = events };

	return epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev) ? errno : 0;
}

/* How many events epoll_wait() hands out right now (0 or 1) */
static int reported(int ep)
{
	struct epoll_event ev;

	return epoll_wait(ep, &ev, 1, 0);
}

/* Does the epoll fd itself poll readable: is an item queued and ready? */
static bool set_ready(int ep)
{
	struct pollfd p = { .fd = ep, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static int put_byte(int fd)
{
	return write(fd, "x", 1);
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000L, (us % 1000000L) * 1000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* One EPOLLONESHOT item in a fresh set; sv[1] makes it ready */
FIXTURE(item) {
	int ep;
	int fd;		/* the item: sv[0], or the set that watches it */
	int inner;
	int sv[2];
};

FIXTURE_VARIANT(item) {
	unsigned int events;
	bool nested;
};

FIXTURE_VARIANT_ADD(item, oneshot) {
	.events = EPOLLIN | EPOLLONESHOT,
};

FIXTURE_VARIANT_ADD(item, oneshot_et) {
	.events = EPOLLIN | EPOLLONESHOT | EPOLLET,
};

/* An epoll set is itself pollable, and can be an item of another */
FIXTURE_VARIANT_ADD(item, nested) {
	.events = EPOLLIN | EPOLLONESHOT,
	.nested = true,
};

FIXTURE_SETUP(item)
{
	struct epoll_event ev = { .events = variant->events };
	struct epoll_event in = { .events = EPOLLIN };

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
				self->sv));
	self->ep = epoll_create1(0);
	ASSERT_GE(self->ep, 0);
	self->fd = self->sv[0];
	self->inner = -1;
	if (variant->nested) {
		self->inner = epoll_create1(0);
		ASSERT_GE(self->inner, 0);
		ASSERT_EQ(0, epoll_ctl(self->inner, EPOLL_CTL_ADD, self->sv[0],
				       &in));
		self->fd = self->inner;
	}
	ASSERT_EQ(0, epoll_ctl(self->ep, EPOLL_CTL_ADD, self->fd, &ev));
}

FIXTURE_TEARDOWN(item)
{
	close(self->ep);
	if (self->inner >= 0)
		close(self->inner);
	close(self->sv[0]);
	close(self->sv[1]);
}

/*
 * After DISABLE answered 0 the item stays silent, whatever data arrives,
 * until EPOLL_CTL_MOD re-arms it; then the pending data is reported.
 */
static void expect_silent_until_mod(struct __test_metadata *_metadata,
				    int ep, int fd, int peer,
				    unsigned int events)
{
	EXPECT_EQ(1, put_byte(peer));
	EXPECT_EQ(0, reported(ep));
	EXPECT_FALSE(set_ready(ep));
	EXPECT_EQ(0, rearm(ep, fd, events));
	EXPECT_EQ(1, reported(ep));
}

/* Nobody was handed the event: 0, and the caller may delete the item */
TEST_F(item, armed_idle)
{
	EXPECT_EQ(0, disable(self->ep, self->fd));
	expect_silent_until_mod(_metadata, self->ep, self->fd, self->sv[1],
				variant->events);
}

/* Ready but not collected: 0, and the item leaves the ready list */
TEST_F(item, armed_queued)
{
	ASSERT_EQ(1, put_byte(self->sv[1]));
	EXPECT_TRUE(set_ready(self->ep));
	EXPECT_EQ(0, disable(self->ep, self->fd));
	EXPECT_FALSE(set_ready(self->ep));
	EXPECT_EQ(0, reported(self->ep));
	expect_silent_until_mod(_metadata, self->ep, self->fd, self->sv[1],
				variant->events);
}

/* A waiter was handed the event: EBUSY; it deletes the item when done */
TEST_F(item, delivered)
{
	ASSERT_EQ(1, put_byte(self->sv[1]));
	ASSERT_EQ(1, reported(self->ep));
	EXPECT_EQ(EBUSY, disable(self->ep, self->fd));
	EXPECT_EQ(1, put_byte(self->sv[1]));
	EXPECT_EQ(0, reported(self->ep));
	EXPECT_EQ(0, ctl(self->ep, EPOLL_CTL_DEL, self->fd));
}

/*
 * A disabled item looks like a delivered one, its event bits clear: a
 * second DISABLE answers EBUSY, and must, since the first caller owns the
 * deletion and a second must not delete (and free) the item again.
 */
TEST_F(item, disabled)
{
	EXPECT_EQ(0, disable(self->ep, self->fd));
	EXPECT_EQ(EBUSY, disable(self->ep, self->fd));
	expect_silent_until_mod(_metadata, self->ep, self->fd, self->sv[1],
				variant->events);
}

/* MOD after delivery arms the item again, queued if data is pending */
TEST_F(item, rearmed)
{
	ASSERT_EQ(1, put_byte(self->sv[1]));
	ASSERT_EQ(1, reported(self->ep));
	ASSERT_EQ(0, rearm(self->ep, self->fd, variant->events));
	EXPECT_TRUE(set_ready(self->ep));
	EXPECT_EQ(0, disable(self->ep, self->fd));
	EXPECT_EQ(0, reported(self->ep));
	expect_silent_until_mod(_metadata, self->ep, self->fd, self->sv[1],
				variant->events);
	ASSERT_EQ(0, rearm(self->ep, self->fd, variant->events));
	EXPECT_EQ(0, disable(self->ep, self->fd));
}

TEST_F(item, deleted)
{
	EXPECT_EQ(0, disable(self->ep, self->fd));
	EXPECT_EQ(0, ctl(self->ep, EPOLL_CTL_DEL, self->fd));
	EXPECT_EQ(ENOENT, disable(self->ep, self->fd));
	EXPECT_EQ(1, put_byte(self->sv[1]));
	EXPECT_EQ(0, reported(self->ep));
	EXPECT_EQ(ENOENT, rearm(self->ep, self->fd, variant->events));
}

/* DISABLE takes no event: an unreadable pointer is not read */
TEST_F(item, event_not_read)
{
	void *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);

	ASSERT_NE(MAP_FAILED, page);
	EXPECT_EQ(0, epoll_ctl(self->ep, EPOLL_CTL_DISABLE, self->fd, page));
	munmap(page, 4096);
}

/*
 * The EBUSY path of the protocol, deterministically: a waiter is handed
 * the event and held before it takes the item's lock; the canceller takes
 * the lock, marks the item, gets EBUSY and lets go; the waiter, released,
 * finds the mark and deletes the item, exactly once. A kernel answering 0
 * here would have the canceller delete, and free, the item under the
 * waiter.
 */
struct handoff {
	pthread_barrier_t handed, release;
	pthread_mutex_t lock;
	int ep, fd;
	bool stop;
	int got, deletions, del_err;
};

static void *handoff_waiter(void *arg)
{
	struct handoff *h = arg;
	struct epoll_event ev;

	h->got = epoll_wait(h->ep, &ev, 1, 5000);
	pthread_barrier_wait(&h->handed);
	pthread_barrier_wait(&h->release);
	pthread_mutex_lock(&h->lock);
	if (h->stop) {
		h->del_err = ctl(h->ep, EPOLL_CTL_DEL, h->fd);
		h->deletions++;
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

TEST_F(item, handoff)
{
	struct handoff h = { .ep = self->ep, .fd = self->fd };
	pthread_t t;
	int err;

	ASSERT_EQ(1, put_byte(self->sv[1]));
	pthread_mutex_init(&h.lock, NULL);
	pthread_barrier_init(&h.handed, NULL, 2);
	pthread_barrier_init(&h.release, NULL, 2);
	ASSERT_EQ(0, pthread_create(&t, NULL, handoff_waiter, &h));

	pthread_barrier_wait(&h.handed);
	pthread_mutex_lock(&h.lock);
	h.stop = true;
	err = disable(self->ep, self->fd);
	pthread_mutex_unlock(&h.lock);
	pthread_barrier_wait(&h.release);
	pthread_join(t, NULL);

	ASSERT_EQ(1, h.got);
	EXPECT_EQ(EBUSY, err);
	EXPECT_EQ(1, h.deletions);
	EXPECT_EQ(0, h.del_err);
	EXPECT_EQ(ENOENT, disable(self->ep, self->fd));
}

/*
 * DISABLE against an epoll_wait() collecting the same ready item: in every
 * round exactly one of them gets it, and over the rounds each side gets it
 * first. Nothing makes a given pair of CPUs, or one CPU, take both orders,
 * so in one round of four one side sleeps a millisecond first: the
 * collector in one, DISABLE in the next.
 */
#define RACE_ROUNDS	2000
#define RACE_HOLD_US	1000

struct race {
	pthread_barrier_t go, done;
	int ep, round, got;
	bool quit;
};

static void *race_collector(void *arg)
{
	struct race *r = arg;

	for (;;) {
		pthread_barrier_wait(&r->go);
		if (r->quit)
			return NULL;
		if (r->round % 8 == 3)
			sleep_us(RACE_HOLD_US);
		r->got = reported(r->ep);
		pthread_barrier_wait(&r->done);
	}
}

TEST_F(item, race)
{
	int both = 0, neither = 0, errors = 0, disable_won = 0, wait_won = 0;
	struct race r = { .ep = self->ep };
	int round, err;
	pthread_t t;

	pthread_barrier_init(&r.go, NULL, 2);
	pthread_barrier_init(&r.done, NULL, 2);
	ASSERT_EQ(0, pthread_create(&t, NULL, race_collector, &r));
	/* The byte is never read: every re-arm makes the item ready again */
	ASSERT_EQ(1, put_byte(self->sv[1]));
	for (round = 0; round < RACE_ROUNDS; round++) {
		if (rearm(self->ep, self->fd, variant->events)) {
			errors++;
			break;
		}
		r.round = round;
		pthread_barrier_wait(&r.go);
		if (round % 8 == 7)
			sleep_us(RACE_HOLD_US);
		err = disable(self->ep, self->fd);
		pthread_barrier_wait(&r.done);
		if (err && err != EBUSY)
			errors++;
		else if (!err && r.got == 1)
			both++;
		else if (err == EBUSY && r.got == 0)
			neither++;
		else if (!err)
			disable_won++;
		else
			wait_won++;
	}
	r.quit = true;
	pthread_barrier_wait(&r.go);
	pthread_join(t, NULL);
	ksft_print_msg("race: %d rounds, DISABLE first %d, epoll_wait first %d\n",
		       round, disable_won, wait_won);
	EXPECT_EQ(0, both);
	EXPECT_EQ(0, neither);
	EXPECT_EQ(0, errors);
	EXPECT_GT(disable_won, 0);
	EXPECT_GT(wait_won, 0);
}

/*
 * The op through io_uring: IORING_OP_EPOLL_CTL hands its op to
 * do_epoll_ctl() and copies an event only where ep_op_has_event() says so,
 * so DISABLE answers there as in epoll_ctl(2), in its completion's res.
 * One submission at a time on a ring of one entry, with the raw system
 * calls; the SQE's event pointer is NULL.
 */
struct ring {
	int fd;
	struct io_uring_params p;
	void *rings;
	size_t rings_len, sqes_len;
	struct io_uring_sqe *sqes;
};

static void ring_close(struct ring *r)
{
	if (r->sqes != MAP_FAILED)
		munmap(r->sqes, r->sqes_len);
	if (r->rings != MAP_FAILED)
		munmap(r->rings, r->rings_len);
	if (r->fd >= 0)
		close(r->fd);
}

/* 0, or KSFT_SKIP or KSFT_FAIL and why; closed again if not 0 */
static int ring_open(struct ring *r, const char **why)
{
	size_t sq_len, cq_len;

	memset(&r->p, 0, sizeof(r->p));
	r->rings = MAP_FAILED;
	r->sqes = MAP_FAILED;
	r->fd = syscall(__NR_io_uring_setup, 1, &r->p);
	if (r->fd < 0 && (errno == ENOSYS || errno == EPERM)) {
		*why = errno == ENOSYS ? "no io_uring in this kernel" :
		       "io_uring is disabled (kernel.io_uring_disabled)";
		return KSFT_SKIP;
	}
	*why = "io_uring_setup failed";
	if (r->fd < 0)
		return KSFT_FAIL;
	/* Since 5.4 one mapping holds both rings; the op is from 5.6 */
	*why = "io_uring without IORING_FEAT_SINGLE_MMAP";
	if (!(r->p.features & IORING_FEAT_SINGLE_MMAP)) {
		ring_close(r);
		return KSFT_FAIL;
	}
	sq_len = r->p.sq_off.array + r->p.sq_entries * sizeof(__u32);
	cq_len = r->p.cq_off.cqes +
		 r->p.cq_entries * sizeof(struct io_uring_cqe);
	r->rings_len = sq_len > cq_len ? sq_len : cq_len;
	r->rings = mmap(NULL, r->rings_len, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	r->sqes_len = r->p.sq_entries * sizeof(*r->sqes);
	r->sqes = mmap(NULL, r->sqes_len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (r->rings == MAP_FAILED || r->sqes == MAP_FAILED) {
		*why = "mmap of the io_uring rings failed";
		ring_close(r);
		return KSFT_FAIL;
	}
	return 0;
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

/* ring_epoll_ctl() when this kernel has no io_uring for the test */
#define NO_URING	(-2)

/*
 * One IORING_OP_EPOLL_CTL on a ring of its own: the errno its completion
 * carries (0 for success); else NO_URING or -1, and why.
 */
static int ring_epoll_ctl(int ep, int op, int fd, struct epoll_event *ev,
			  const char **why)
{
	struct ring r;
	int ret;

	ret = ring_open(&r, why);
	if (ret)
		return ret == KSFT_SKIP ? NO_URING : -1;
	ret = uring_ctl(&r, ep, op, fd, ev);
	if (ret < 0)
		*why = "io_uring_enter did not complete the SQE";
	ring_close(&r);
	return ret;
}

TEST_F(item, uring_armed)
{
	const char *why = "";
	int err;

	err = ring_epoll_ctl(self->ep, EPOLL_CTL_DISABLE, self->fd, NULL, &why);
	if (err == NO_URING)
		SKIP(return, "%s", why);
	EXPECT_EQ(0, err) TH_LOG("%s", why);
	expect_silent_until_mod(_metadata, self->ep, self->fd, self->sv[1],
				variant->events);
}

TEST_F(item, uring_delivered)
{
	const char *why = "";
	int err;

	ASSERT_EQ(1, put_byte(self->sv[1]));
	ASSERT_EQ(1, reported(self->ep));
	err = ring_epoll_ctl(self->ep, EPOLL_CTL_DISABLE, self->fd, NULL, &why);
	if (err == NO_URING)
		SKIP(return, "%s", why);
	EXPECT_EQ(EBUSY, err) TH_LOG("%s", why);
}

/* One item without EPOLLONESHOT in a fresh set */
FIXTURE(plain) {
	int ep;
	int sv[2];
};

FIXTURE_VARIANT(plain) {
	unsigned int events;
};

FIXTURE_VARIANT_ADD(plain, level) {
	.events = EPOLLIN,
};

FIXTURE_VARIANT_ADD(plain, edge) {
	.events = EPOLLIN | EPOLLET,
};

FIXTURE_SETUP(plain)
{
	struct epoll_event ev = { .events = variant->events };

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
				self->sv));
	self->ep = epoll_create1(0);
	ASSERT_GE(self->ep, 0);
	ASSERT_EQ(0, epoll_ctl(self->ep, EPOLL_CTL_ADD, self->sv[0], &ev));
}

FIXTURE_TEARDOWN(plain)
{
	close(self->ep);
	close(self->sv[0]);
	close(self->sv[1]);
}

/* Only an EPOLLONESHOT item can be disabled; the refusal changes nothing */
TEST_F(plain, refused)
{
	EXPECT_EQ(EINVAL, disable(self->ep, self->sv[0]));
	EXPECT_EQ(1, put_byte(self->sv[1]));
	EXPECT_EQ(1, reported(self->ep));
}

/* EINVAL is also io_uring's answer to an op it lacks: MOD goes through */
TEST_F(plain, uring_refused)
{
	struct epoll_event ev = { .events = variant->events };
	const char *why = "";
	int err;

	err = ring_epoll_ctl(self->ep, EPOLL_CTL_MOD, self->sv[0], &ev, &why);
	if (err == NO_URING)
		SKIP(return, "%s", why);
	EXPECT_EQ(0, err) TH_LOG("%s", why);
	err = ring_epoll_ctl(self->ep, EPOLL_CTL_DISABLE, self->sv[0], NULL,
			     &why);
	EXPECT_EQ(EINVAL, err) TH_LOG("%s", why);
}

TEST(error_codes)
{
	char path[] = "/tmp/epoll_disable_test.XXXXXX";
	int ep, sv[2], file;

	ep = epoll_create1(0);
	ASSERT_GE(ep, 0);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	EXPECT_EQ(ENOENT, disable(ep, sv[0]));
	EXPECT_EQ(EINVAL, disable(sv[0], sv[1]));
	EXPECT_EQ(EINVAL, disable(ep, ep));
	close(sv[0]);
	close(sv[1]);
	EXPECT_EQ(EBADF, disable(ep, sv[0]));
	EXPECT_EQ(EBADF, disable(sv[0], ep));

	file = mkstemp(path);
	ASSERT_GE(file, 0);
	unlink(path);
	EXPECT_EQ(EPERM, disable(ep, file));
	close(file);
	close(ep);
}

/* The ops past DISABLE are still unknown, event or not */
TEST(unknown_ops)
{
	int ep, sv[2];

	ep = epoll_create1(0);
	ASSERT_GE(ep, 0);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	EXPECT_EQ(EINVAL, ctl(ep, EPOLL_CTL_DISABLE + 1, sv[0]));
	EXPECT_EQ(EINVAL, ctl(ep, -1, sv[0]));
	close(sv[0]);
	close(sv[1]);
	close(ep);
}

/*
 * The wakeup source of an EPOLLWAKEUP item is active while the item is
 * ready and queued. Watch a FIFO with a name of our own, so that its
 * wakeup source can be found under /sys/class/wakeup: DISABLE of the
 * queued item must unqueue it, and so release the source.
 */
#define WAKEUP_CLASS	"/sys/class/wakeup"

/* The active time of the wakeup source called @name, or -1 */
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

TEST(wakeup_source)
{
	struct epoll_event ev = {
		.events = EPOLLIN | EPOLLONESHOT | EPOLLWAKEUP,
	};
	char name[64], path[96];
	int ep, fd;

	if (access(WAKEUP_CLASS, F_OK))
		SKIP(return, "no " WAKEUP_CLASS " (Linux < 5.4, or no PM_SLEEP)");
	snprintf(name, sizeof(name), "epoll-disable-%d", (int)getpid());
	snprintf(path, sizeof(path), "/tmp/%s", name);
	unlink(path);
	ASSERT_EQ(0, mkfifo(path, 0600));
	fd = open(path, O_RDWR | O_NONBLOCK);
	unlink(path);
	ASSERT_GE(fd, 0);
	ep = epoll_create1(0);
	ASSERT_GE(ep, 0);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	if (wakeup_active_ms(name) < 0)
		SKIP(goto out, "the item has no wakeup source (CAP_BLOCK_SUSPEND?)");

	ASSERT_EQ(1, put_byte(fd));
	sleep_us(20000);
	EXPECT_GT(wakeup_active_ms(name), 0);
	EXPECT_EQ(0, disable(ep, fd));
	EXPECT_EQ(0, wakeup_active_ms(name));
out:
	close(ep);
	close(fd);
}

/*
 * The server. Each connection is an item of the set, with a lock, a stop
 * flag and a count of its deletions; a slot holds a connection until a
 * deleter replaces it.
 */
#ifndef SERVER_ITEMS
#define SERVER_ITEMS	500
#endif
#ifndef SERVER_READERS
#define SERVER_READERS	100
#endif
#ifndef SERVER_LOAD_MS
#define SERVER_LOAD_MS	2000
#endif
#define DELETERS	4
#define DELETE_EVERY_US	2000
/* The final deletions are spread over this long, each meeting the load */
#define CANCEL_MS	1000
/* How long to wait for the readers to catch up */
#define SETTLE_MS	(5000 + SERVER_ITEMS)

#define CONN_LIVE	0x600dcafeU
#define CONN_POISON	0xdeadbeefU

struct conn {
	pthread_mutex_t lock;
	int fd[2];		/* fd[0] is watched; the writer uses fd[1] */
	unsigned int tag;	/* CONN_LIVE, or CONN_POISON once deleted */
	bool stop;		/* a deleter wants this item gone */
	unsigned int events;
	int deletions;
	struct conn *next;	/* every item ever made, for the final count */
};

static struct {
	int ep, quitfd;
	struct conn *slot[SERVER_ITEMS];
	struct conn *all;
	pthread_mutex_t all_lock;
	atomic_bool pause, paused, quit, deleters_quit;
	atomic_ulong written, read, closed, handled, recreated;
	atomic_ulong deleted, late_touches, owner_deletes;
	atomic_ulong disable_ok, disable_busy, errors;
	char first_error[256];
	pthread_mutex_t error_lock;
} srv = {
	.all_lock = PTHREAD_MUTEX_INITIALIZER,
	.error_lock = PTHREAD_MUTEX_INITIALIZER,
};

static void error_at(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&srv.error_lock);
	if (!atomic_fetch_add(&srv.errors, 1)) {
		va_start(ap, fmt);
		vsnprintf(srv.first_error, sizeof(srv.first_error), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&srv.error_lock);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static struct conn *slot_get(int i)
{
	return __atomic_load_n(&srv.slot[i], __ATOMIC_ACQUIRE);
}

static void slot_set(int i, struct conn *it)
{
	__atomic_store_n(&srv.slot[i], it, __ATOMIC_RELEASE);
}

/* Called with it->lock held: the one place where an item is deleted */
static void conn_delete(struct conn *it)
{
	if (epoll_ctl(srv.ep, EPOLL_CTL_DEL, it->fd[0], NULL))
		error_at("EPOLL_CTL_DEL of fd %d: %s", it->fd[0],
			 strerror(errno));
	it->tag = CONN_POISON;
	it->deletions++;
	atomic_fetch_add(&srv.deleted, 1);
}

static int conn_arm(struct conn *it, int op)
{
	struct epoll_event ev = { .events = it->events, .data.ptr = it };

	return epoll_ctl(srv.ep, op, it->fd[0], &ev);
}

/* Called with it->lock held, for an event this reader was handed */
static void conn_handle(struct conn *it)
{
	char buf[256];
	ssize_t n;

	while ((n = read(it->fd[0], buf, sizeof(buf))) > 0)
		atomic_fetch_add(&srv.read, n);
	if (n < 0 && errno != EAGAIN)
		error_at("read of fd %d: %s", it->fd[0], strerror(errno));
	atomic_fetch_add(&srv.handled, 1);
	if (conn_arm(it, EPOLL_CTL_MOD))
		error_at("EPOLL_CTL_MOD of fd %d: %s", it->fd[0],
			 strerror(errno));
}

static void *reader(void *arg)
{
	struct epoll_event ev;
	struct conn *it;
	int n;

	for (;;) {
		n = epoll_wait(srv.ep, &ev, 1, 1000);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			error_at("epoll_wait: %s", strerror(errno));
			return arg;
		}
		if (n == 0)
			continue;
		it = ev.data.ptr;
		if (!it)
			return arg;	/* quitfd: the test is over */

		/* Here the item may be deleted under us, but for the op */
		pthread_mutex_lock(&it->lock);
		if (it->tag != CONN_LIVE) {
			atomic_fetch_add(&srv.late_touches, 1);
		} else if (it->stop) {
			/* DISABLE said EBUSY: we hold the event, we delete */
			conn_delete(it);
			atomic_fetch_add(&srv.owner_deletes, 1);
		} else {
			conn_handle(it);
		}
		pthread_mutex_unlock(&it->lock);
	}
}

/* Called with it->lock held: one byte for the item's reader */
static void put(struct conn *it, char c)
{
	if (write(it->fd[1], &c, 1) == 1)
		atomic_fetch_add(&srv.written, 1);
	else if (errno != EAGAIN)
		error_at("write of fd %d: %s", it->fd[1], strerror(errno));
}

static void *writer(void *arg)
{
	struct conn *it;
	unsigned long i;

	for (i = 0; !atomic_load(&srv.quit); i++) {
		if (atomic_load(&srv.pause)) {
			atomic_store(&srv.paused, true);
			sleep_us(1000);
			continue;
		}
		atomic_store(&srv.paused, false);
		it = slot_get(i % SERVER_ITEMS);
		pthread_mutex_lock(&it->lock);
		if (it->tag == CONN_LIVE)
			put(it, 'x');
		pthread_mutex_unlock(&it->lock);
		if (i % SERVER_ITEMS == 0)
			sched_yield();
	}
	return arg;
}

/* Delete an item this thread was not handed. Called with it->lock held. */
static void cancel_locked(struct conn *it)
{
	it->stop = true;
	if (!epoll_ctl(srv.ep, EPOLL_CTL_DISABLE, it->fd[0], NULL)) {
		atomic_fetch_add(&srv.disable_ok, 1);
		conn_delete(it);
	} else if (errno == EBUSY) {
		atomic_fetch_add(&srv.disable_busy, 1);
	} else {
		error_at("EPOLL_CTL_DISABLE of fd %d: %s", it->fd[0],
			 strerror(errno));
	}
}

/* A new item for slot @i, in the set, armed; NULL with errno set if not */
static struct conn *conn_new(int i)
{
	struct conn *it = calloc(1, sizeof(*it));

	if (!it)
		return NULL;
	pthread_mutex_init(&it->lock, NULL);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		       0, it->fd)) {
		free(it);
		return NULL;
	}
	it->tag = CONN_LIVE;
	it->events = EPOLLIN | EPOLLONESHOT | (i % 2 ? EPOLLET : 0);
	pthread_mutex_lock(&srv.all_lock);
	it->next = srv.all;
	srv.all = it;
	pthread_mutex_unlock(&srv.all_lock);
	if (conn_arm(it, EPOLL_CTL_ADD))
		return NULL;	/* on srv.all: counted as never deleted */
	return it;
}

/*
 * Wait until @it, which a deleter cancelled, is deleted: at once if
 * DISABLE said 0, else by the reader that holds its event. Then close its
 * socketpair, counting the bytes left in it, so that the numbers can be
 * reused. False if it is still there after SETTLE_MS.
 */
static bool conn_retire(struct conn *it)
{
	long deadline = now_ms() + SETTLE_MS;
	int pending = 0;
	bool gone;

	for (;;) {
		pthread_mutex_lock(&it->lock);
		gone = it->deletions;
		if (gone) {
			if (!ioctl(it->fd[0], FIONREAD, &pending))
				atomic_fetch_add(&srv.closed, pending);
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
 * A deleter, as a server closes connections while serving others: every
 * DELETE_EVERY_US it picks one of its slots, makes the item ready (a
 * connection that just got data), cancels it, waits until it is deleted,
 * and puts a new item in the slot on the file numbers just freed. Every
 * other time the data comes while the deleter holds the item lock, so
 * that a reader handed the event waits for the lock right then, whatever
 * the number of CPUs: the moment DISABLE answers EBUSY for.
 */
static void *deleter(void *arg)
{
	int id = (int)(long)arg;
	/* This deleter's slots: id, id + DELETERS, id + 2 * DELETERS, ... */
	int mine = (SERVER_ITEMS - id + DELETERS - 1) / DELETERS;
	unsigned int seed = id + 1;
	struct conn *it;
	int i;

	while (mine > 0 && !atomic_load(&srv.deleters_quit)) {
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
		if (!conn_retire(it))
			return NULL;	/* the final count says so */
		it = conn_new(i);
		if (!it) {
			error_at("re-creating item %d: %s", i, strerror(errno));
			return NULL;
		}
		slot_set(i, it);
		atomic_fetch_add(&srv.recreated, 1);
		sleep_us(DELETE_EVERY_US);
	}
	return NULL;
}

/* Wait until cond() holds or SETTLE_MS pass; true if it holds */
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
	return atomic_load(&srv.paused);
}

static bool all_read(void)
{
	return atomic_load(&srv.read) + atomic_load(&srv.closed) ==
	       atomic_load(&srv.written);
}

static bool all_deleted(void)
{
	return atomic_load(&srv.deleted) >=
	       SERVER_ITEMS + atomic_load(&srv.recreated);
}

FIXTURE(server) {
	pthread_t readers[SERVER_READERS];
	pthread_t writer, deleters[DELETERS];
};

FIXTURE_SETUP(server)
{
	rlim_t need = 2 * SERVER_ITEMS + 64;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	struct rlimit rl;
	int i;

	/* Two fds an item; raise the soft limit, and the hard one if root */
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_cur < need) {
		rl.rlim_cur = need;
		rl.rlim_max = rl.rlim_max < need ? need : rl.rlim_max;
		ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	}
	srv.ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_GE(srv.ep, 0);
	srv.quitfd = eventfd(0, EFD_CLOEXEC);
	ASSERT_GE(srv.quitfd, 0);
	/* Level-triggered and never re-armed: wakes every reader at the end */
	ASSERT_EQ(0, epoll_ctl(srv.ep, EPOLL_CTL_ADD, srv.quitfd, &ev));
	for (i = 0; i < SERVER_ITEMS; i++) {
		srv.slot[i] = conn_new(i);
		ASSERT_NE(NULL, srv.slot[i]);
	}
}

FIXTURE_TEARDOWN(server)
{
	struct conn *it;

	for (it = srv.all; it; it = it->next) {
		if (it->fd[0] >= 0) {
			close(it->fd[0]);
			close(it->fd[1]);
		}
	}
	close(srv.quitfd);
	close(srv.ep);
}

/* Deterministic, so that each run deletes the items in the same order */
static void shuffle(int *v, int n)
{
	unsigned int seed = 1;
	int i, j, t;

	for (i = n - 1; i > 0; i--) {
		j = rand_r(&seed) % (i + 1);
		t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
}

/*
 * Load, with items deleted and re-created under it; then every byte
 * written must have reached a reader or been in its item's socket when
 * the item was deleted: a lost wakeup leaves bytes unread. Then delete
 * every item while the writer keeps the events coming, paced so that each
 * deletion can meet a reader that was just handed that item's event.
 */
TEST_F_TIMEOUT(server, load, 300)
{
	unsigned long once = 0, never = 0, twice = 0, left = 0, made;
	unsigned long busy, owners, late, unread;
	int order[SERVER_ITEMS];
	bool drained, all_gone;
	struct conn *it;
	int i;

	for (i = 0; i < SERVER_READERS; i++)
		ASSERT_EQ(0, pthread_create(&self->readers[i], NULL, reader,
					    NULL));
	ASSERT_EQ(0, pthread_create(&self->writer, NULL, writer, NULL));
	for (i = 0; i < DELETERS; i++)
		ASSERT_EQ(0, pthread_create(&self->deleters[i], NULL, deleter,
					    (void *)(long)i));

	sleep_us(SERVER_LOAD_MS * 1000L);
	atomic_store(&srv.deleters_quit, true);
	for (i = 0; i < DELETERS; i++)
		pthread_join(self->deleters[i], NULL);
	atomic_store(&srv.pause, true);
	drained = settle(writer_is_paused) && settle(all_read);
	unread = atomic_load(&srv.written) - atomic_load(&srv.read) -
		 atomic_load(&srv.closed);

	atomic_store(&srv.pause, false);
	for (i = 0; i < SERVER_ITEMS; i++)
		order[i] = i;
	shuffle(order, SERVER_ITEMS);
	sleep_us(CANCEL_MS * 100L);
	for (i = 0; i < SERVER_ITEMS; i++) {
		it = slot_get(order[i]);
		pthread_mutex_lock(&it->lock);
		cancel_locked(it);
		pthread_mutex_unlock(&it->lock);
		sleep_us(CANCEL_MS * 1000L / SERVER_ITEMS);
	}
	all_gone = settle(all_deleted);

	atomic_store(&srv.quit, true);
	pthread_join(self->writer, NULL);
	ASSERT_EQ(0, eventfd_write(srv.quitfd, 1));
	for (i = 0; i < SERVER_READERS; i++)
		pthread_join(self->readers[i], NULL);

	for (it = srv.all; it; it = it->next) {
		int pending = 0;

		once += it->deletions == 1;
		never += it->deletions == 0;
		twice += it->deletions > 1;
		if (it->fd[0] >= 0 && !ioctl(it->fd[0], FIONREAD, &pending))
			left += pending;
	}
	made = SERVER_ITEMS + atomic_load(&srv.recreated);
	busy = atomic_load(&srv.disable_busy);
	owners = atomic_load(&srv.owner_deletes);
	late = atomic_load(&srv.late_touches);

	ksft_print_msg("%d items, %d readers, %d ms: %lu events, %lu connections re-created\n",
		       SERVER_ITEMS, SERVER_READERS, SERVER_LOAD_MS,
		       atomic_load(&srv.handled), atomic_load(&srv.recreated));
	ksft_print_msg("DISABLE 0/EBUSY %lu/%lu, owner deletes %lu, late touches %lu\n",
		       atomic_load(&srv.disable_ok), busy, owners, late);
	ksft_print_msg("bytes written %lu, read %lu, in deleted items %lu, left in sockets %lu\n",
		       atomic_load(&srv.written), atomic_load(&srv.read),
		       atomic_load(&srv.closed), left);

	EXPECT_EQ(0UL, atomic_load(&srv.errors))
		TH_LOG("unexpected errors, the first: %s", srv.first_error);
	EXPECT_TRUE(all_gone && once == made)
		TH_LOG("every item deleted exactly once: %lu of %lu, %lu never, %lu twice",
		       once, made, never, twice);
	EXPECT_EQ(0UL, late)
		TH_LOG("no item touched after its deletion: %lu late touches",
		       late);
	EXPECT_TRUE(drained)
		TH_LOG("every byte read or deleted with its item: %lu unread after the load",
		       unread);
	EXPECT_NE(0UL, busy)
		TH_LOG("EBUSY answered under the load: never");
	EXPECT_EQ(busy, owners)
		TH_LOG("each EBUSY followed by the owner's delete: EBUSY %lu, owner deletes %lu",
		       busy, owners);
}

/*
 * Does this kernel know op 4? One without it rejects the op as unknown
 * (EINVAL), after copying an event for it if it copies one for every op
 * but EPOLL_CTL_DEL (EFAULT for a NULL event). An unknown op is EINVAL
 * even for an fd not in the set, where the op answers ENOENT: that tells
 * a kernel that only stopped copying the event (the series' first patch
 * alone) from one that has the op. Any other answer is the op's, and the
 * tests judge it.
 */
static bool have_disable(void)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT };
	int ep, sv[2], err = 0, absent = 0;

	ep = epoll_create1(0);
	if (ep < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return true;	/* let the tests say what is wrong */
	if (!epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev)) {
		err = disable(ep, sv[0]);
		absent = disable(ep, sv[1]);
		if (err == EFAULT)
			err = epoll_ctl(ep, EPOLL_CTL_DISABLE, sv[0], &ev) ?
			      errno : 0;
	}
	close(sv[0]);
	close(sv[1]);
	close(ep);
	return !(err == EINVAL && (absent == EINVAL || absent == EFAULT));
}

int main(int argc, char **argv)
{
	if (!have_disable())
		ksft_exit_skip("EPOLL_CTL_DISABLE not supported by this kernel\n");
	/* The tests run in children: let no line wait in a buffer */
	setvbuf(stdout, NULL, _IOLBF, 0);
	return test_harness_run(argc, argv);
}
