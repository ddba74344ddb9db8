// SPDX-License-Identifier: GPL-2.0
/*
 * EPOLL_CTL_DISABLE: its contract, one test per clause in every state an
 * EPOLLONESHOT item can be in. Every assertion holds whatever the
 * scheduler does; epoll_disable_stress has the server's load.
 *
 * The item fixture is one EPOLLONESHOT item in a fresh set: a socketpair
 * (plain or EPOLLET), or another epoll set watching one. Its states are
 * armed and idle, armed and queued (ready, not yet collected), delivered
 * (handed to epoll_wait()), disabled, re-armed by EPOLL_CTL_MOD, deleted.
 * For each, the test checks DISABLE's answer and what epoll_wait() reports
 * afterwards, whatever data arrives: after a 0 answer, nothing until MOD.
 * handoff takes the EBUSY path of the protocol with the owner held at a
 * barrier, so that it runs the same way on any number of CPUs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "epoll_disable.h"

/* Does the epoll fd itself poll readable: is an item queued and ready? */
static bool set_ready(int ep)
{
	struct pollfd p = { .fd = ep, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
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
 * A disabled item has a state of its own: a second DISABLE answers
 * EALREADY, since the first caller owns the deletion and a second must not
 * delete (and free) the item again, nor wait for an owner that does not
 * exist. EPOLL_CTL_MOD ends the state: delivered again, the item is EBUSY.
 */
TEST_F(item, disabled)
{
	EXPECT_EQ(0, disable(self->ep, self->fd));
	EXPECT_EQ(EALREADY, disable(self->ep, self->fd));
	EXPECT_EQ(EALREADY, disable(self->ep, self->fd));
	expect_silent_until_mod(_metadata, self->ep, self->fd, self->sv[1],
				variant->events);
	EXPECT_EQ(EBUSY, disable(self->ep, self->fd));
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
 * the lock, stops the item, gets EBUSY and lets go; the waiter, its owner,
 * released, finds it stopped and deletes it, exactly once. A kernel
 * answering 0 here would have the canceller delete, and free, the item
 * under its owner.
 */
struct handoff {
	pthread_barrier_t handed, release;
	struct item_guard item;
	int ep, fd;
	int got, deletions, del_err;
};

static void *handoff_waiter(void *arg)
{
	struct handoff *h = arg;
	struct epoll_event ev;

	h->got = epoll_wait(h->ep, &ev, 1, 5000);
	pthread_barrier_wait(&h->handed);
	pthread_barrier_wait(&h->release);
	if (owner_lock(&h->item) == ITEM_STOPPED) {
		h->del_err = ctl(h->ep, EPOLL_CTL_DEL, h->fd);
		h->deletions++;
	}
	pthread_mutex_unlock(&h->item.lock);
	return NULL;
}

TEST_F(item, handoff)
{
	struct handoff h = { .ep = self->ep, .fd = self->fd };
	pthread_t t;
	int err;

	ASSERT_EQ(1, put_byte(self->sv[1]));
	item_guard_init(&h.item);
	pthread_barrier_init(&h.handed, NULL, 2);
	pthread_barrier_init(&h.release, NULL, 2);
	ASSERT_EQ(0, pthread_create(&t, NULL, handoff_waiter, &h));

	pthread_barrier_wait(&h.handed);
	pthread_mutex_lock(&h.item.lock);
	err = cancel_locked(&h.item, self->ep, self->fd);
	pthread_mutex_unlock(&h.item.lock);
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
 * round exactly one of them gets it. Which one goes first is the
 * scheduler's choice, so the test prints how often each did and requires
 * nothing of it ('make soak' does, over many runs). So that both orders
 * are likely on any number of CPUs, in one round of four one side sleeps a
 * millisecond first: the collector in one, DISABLE in the next.
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

/* An EPOLLEXCLUSIVE item cannot be EPOLLONESHOT, so it is refused too */
TEST(exclusive)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLEXCLUSIVE };
	int ep, sv[2];

	ep = epoll_create1(0);
	ASSERT_GE(ep, 0);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev));
	EXPECT_EQ(EINVAL, disable(ep, sv[0]));
	EXPECT_EQ(1, put_byte(sv[1]));
	EXPECT_EQ(1, reported(ep));
	close(sv[0]);
	close(sv[1]);
	close(ep);
}

TEST(error_codes)
{
	int ep, sv[2];

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
	close(ep);
}

/*
 * A file that cannot be polled is refused before any op is looked at. A
 * memfd is such a file on every filesystem /tmp may be on (one on FUSE or
 * virtiofs can poll).
 */
TEST(not_pollable)
{
	int ep, file;

	file = memfd_create("epoll_disable_test", 0);
	if (file < 0 && errno == ENOSYS)
		SKIP(return, "no memfd_create() (Linux < 3.17)");
	ASSERT_GE(file, 0);
	ep = epoll_create1(0);
	ASSERT_GE(ep, 0);
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

/* -l and -h run no test, so they need no probe (6.12's harness on) */
static bool runs_tests(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-l") || !strcmp(argv[i], "-h"))
			return false;
	return true;
}

int main(int argc, char **argv)
{
	if (runs_tests(argc, argv) && !have_disable())
		ksft_exit_skip("EPOLL_CTL_DISABLE not supported by this kernel\n");
	/* The tests run in children: let no line wait in a buffer */
	setvbuf(stdout, NULL, _IOLBF, 0);
	return test_harness_run(argc, argv);
}
