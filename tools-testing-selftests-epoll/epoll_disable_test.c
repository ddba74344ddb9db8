// SPDX-License-Identifier: GPL-2.0
/*
 * EPOLL_CTL_DISABLE: its contract, a test per state of an EPOLLONESHOT
 * item (armed and idle, queued, delivered, disabled, deleted), each state
 * asked twice and checked after each answer, whatever data arrives, on
 * each kind of file a server registers: a socket, a pipe, an eventfd, a
 * timerfd and another epoll set. epoll_disable_stress has a server's load.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/io_uring.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>

#include "kselftest_harness.h"
#include "epoll_disable.h"

/* Does the epoll fd itself poll readable: is an item queued and ready? */
static bool set_ready(int ep)
{
	struct pollfd p = { .fd = ep, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

enum kind { SOCKET, PIPE, EVENTFD, TIMERFD, NESTED };

/* A file of a kind; poke() makes it ready, through peer if it has one */
struct item_file {
	enum kind kind;
	int fd, peer;
};

/*
 * One EPOLLONESHOT item in a fresh set, a file of each kind (a socket
 * also edge-triggered)
 */
FIXTURE(item) {
	int ep;
	struct item_file file;
};

FIXTURE_VARIANT(item) {
	enum kind kind;
	unsigned int events;
};

FIXTURE_VARIANT_ADD(item, socket) {
	.kind = SOCKET,
	.events = EPOLLIN | EPOLLONESHOT,
};

FIXTURE_VARIANT_ADD(item, socket_et) {
	.kind = SOCKET,
	.events = EPOLLIN | EPOLLONESHOT | EPOLLET,
};

FIXTURE_VARIANT_ADD(item, pipe) {
	.kind = PIPE,
	.events = EPOLLIN | EPOLLONESHOT,
};

FIXTURE_VARIANT_ADD(item, eventfd) {
	.kind = EVENTFD,
	.events = EPOLLIN | EPOLLONESHOT,
};

FIXTURE_VARIANT_ADD(item, timerfd) {
	.kind = TIMERFD,
	.events = EPOLLIN | EPOLLONESHOT,
};

FIXTURE_VARIANT_ADD(item, epoll) {
	.kind = NESTED,
	.events = EPOLLIN | EPOLLONESHOT,
};

FIXTURE_SETUP(item)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int p[2];

	self->file.kind = variant->kind;
	self->file.peer = -1;
	switch (variant->kind) {
	case SOCKET:
		ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, p));
		self->file.fd = p[0];
		self->file.peer = p[1];
		break;
	case PIPE:
		ASSERT_EQ(0, pipe2(p, O_NONBLOCK));
		self->file.fd = p[0];
		self->file.peer = p[1];
		break;
	case EVENTFD:
		self->file.fd = eventfd(0, EFD_NONBLOCK);
		break;
	case TIMERFD:
		self->file.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
		break;
	case NESTED:
		/* a set whose one level-triggered socket the peer writes to */
		self->file.fd = epoll_create1(0);
		ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, p));
		ASSERT_EQ(0, epoll_ctl(self->file.fd, EPOLL_CTL_ADD, p[0], &ev));
		self->file.peer = p[1];
		break;
	}
	ASSERT_NE(-1, self->file.fd);
	self->ep = epoll_create1(0);
	ev.events = variant->events;
	ASSERT_EQ(0, epoll_ctl(self->ep, EPOLL_CTL_ADD, self->file.fd, &ev));
}

/* Each test runs in a process of its own: what it opens goes with it */
FIXTURE_TEARDOWN(item)
{
}

/* Make the item's file readable, or more so: true once it is */
static bool poke(const struct item_file *f)
{
	struct itimerspec soon = { .it_value = { .tv_nsec = 1 } };
	struct pollfd p = { .fd = f->fd, .events = POLLIN };
	uint64_t one = 1;

	switch (f->kind) {
	case EVENTFD:
		return write(f->fd, &one, sizeof(one)) == sizeof(one);
	case TIMERFD:
		/* the expiry's wakeup has reached the set once poll() sees it */
		return timerfd_settime(f->fd, 0, &soon, NULL) == 0 &&
		       poll(&p, 1, 5000) == 1;
	default:
		return write(f->peer, "x", 1) == 1;
	}
}

/*
 * Disabled: EALREADY, asked twice, as the first caller owns the deletion;
 * silent whatever data arrives. MOD ends the state: the pending data is
 * reported, and the item, delivered again, is EBUSY.
 */
static void expect_disabled(struct __test_metadata *_metadata, int ep,
			    const struct item_file *f, unsigned int events)
{
	int i;

	for (i = 0; i < 2; i++) {
		EXPECT_EQ(EALREADY, disable(ep, f->fd));
		EXPECT_TRUE(poke(f));
		EXPECT_EQ(0, reported(ep));
		EXPECT_FALSE(set_ready(ep));
	}
	EXPECT_EQ(0, rearm(ep, f->fd, events));
	EXPECT_EQ(1, reported(ep));
	EXPECT_EQ(EBUSY, disable(ep, f->fd));
}

/* Nobody was handed the event: 0, and the caller may delete the item */
TEST_F(item, armed_idle)
{
	EXPECT_EQ(0, disable(self->ep, self->file.fd));
	expect_disabled(_metadata, self->ep, &self->file, variant->events);
}

/* Ready but not collected: 0, and the item leaves the ready list */
TEST_F(item, armed_queued)
{
	ASSERT_TRUE(poke(&self->file));
	EXPECT_TRUE(set_ready(self->ep));
	EXPECT_EQ(0, disable(self->ep, self->file.fd));
	expect_disabled(_metadata, self->ep, &self->file, variant->events);
}

/*
 * Handed to a waiter: EBUSY, asked twice, the item still held and silent;
 * the owner's MOD re-arms it, queued with the pending data, and DISABLE
 * disarms it then.
 */
TEST_F(item, delivered)
{
	int i;

	ASSERT_TRUE(poke(&self->file));
	ASSERT_EQ(1, reported(self->ep));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(EBUSY, disable(self->ep, self->file.fd));
		EXPECT_TRUE(poke(&self->file));
		EXPECT_EQ(0, reported(self->ep));
	}
	EXPECT_EQ(0, rearm(self->ep, self->file.fd, variant->events));
	EXPECT_TRUE(set_ready(self->ep));
	EXPECT_EQ(0, disable(self->ep, self->file.fd));
	expect_disabled(_metadata, self->ep, &self->file, variant->events);
}

/* A file not in the set: ENOENT, twice; the set's item stays armed */
TEST_F(item, not_in_set)
{
	int other = eventfd(0, 0);

	EXPECT_EQ(ENOENT, disable(self->ep, other));
	EXPECT_EQ(ENOENT, disable(self->ep, other));
	EXPECT_TRUE(poke(&self->file));
	EXPECT_EQ(1, reported(self->ep));
}

TEST_F(item, deleted)
{
	EXPECT_EQ(0, ctl(self->ep, EPOLL_CTL_DEL, self->file.fd));
	EXPECT_EQ(ENOENT, disable(self->ep, self->file.fd));
	EXPECT_EQ(ENOENT, disable(self->ep, self->file.fd));
	EXPECT_TRUE(poke(&self->file));
	EXPECT_EQ(0, reported(self->ep));
}

/* epoll_ctl(2)'s errno for DISABLE given @ev: 0 if it succeeded */
static int disable_event(int ep, int fd, void *ev)
{
	return epoll_ctl(ep, EPOLL_CTL_DISABLE, fd, ev) ? errno : 0;
}

/* The mask /proc/self/fdinfo shows for @fd in @ep, or -1 */
static long long fdinfo_events(int ep, int fd)
{
	long long events = -1;
	char path[64], line[256];
	unsigned int mask;
	FILE *fp;
	int tfd;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", ep);
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	while (events < 0 && fgets(line, sizeof(line), fp))
		if (sscanf(line, "tfd: %d events: %x", &tfd, &mask) == 2 &&
		    tfd == fd)
			events = mask;
	fclose(fp);
	return events;
}

/*
 * fdinfo shows a disabled item's mask as it is: no event bits and no
 * EPOLLONESHOT, only the other flags it was armed with (EPOLLET,
 * EPOLLWAKEUP), a form no other item has; after MOD, the mask MOD gave it
 */
TEST_F(item, fdinfo)
{
	long long armed = variant->events | EPOLLERR | EPOLLHUP;

	if (fdinfo_events(self->ep, self->file.fd) < 0)
		SKIP(return, "no items in an epoll fd's fdinfo (Linux < 3.8, or no /proc)");
	EXPECT_EQ(armed, fdinfo_events(self->ep, self->file.fd));
	EXPECT_EQ(0, disable(self->ep, self->file.fd));
	EXPECT_EQ(variant->events & EPOLLET, fdinfo_events(self->ep, self->file.fd));
	ASSERT_EQ(0, rearm(self->ep, self->file.fd, variant->events));
	EXPECT_EQ(armed, fdinfo_events(self->ep, self->file.fd));
}

/*
 * An event, readable or not, is refused before anything is looked up, so
 * that a later kernel can give it a meaning: EINVAL, even for a bad file
 * descriptor, and the item is still armed
 */
TEST_F(item, event_refused)
{
	void *ev = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int other = eventfd(0, 0), i;

	ASSERT_NE(MAP_FAILED, ev);
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(EINVAL, disable_event(self->ep, self->file.fd, ev));
		EXPECT_EQ(EINVAL, disable_event(self->ep, other, ev));
		EXPECT_EQ(EINVAL, disable_event(self->ep, -1, ev));
		EXPECT_EQ(EINVAL, disable_event(-1, self->file.fd, ev));
		ASSERT_EQ(0, mprotect(ev, 4096, PROT_NONE));
	}
	EXPECT_EQ(0, disable(self->ep, self->file.fd));
	expect_disabled(_metadata, self->ep, &self->file, variant->events);
}

/* Only a oneshot item can be disabled: refused, it still reports; and more */
TEST(refused)
{
	unsigned int events[] = { EPOLLIN, EPOLLIN | EPOLLET,
				  EPOLLIN | EPOLLEXCLUSIVE };
	int ep, sv[2], file, i, j;
	struct epoll_event ev;

	for (i = 0; i < 3; i++) {
		ep = epoll_create1(0);
		ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
		ev.events = events[i];
		ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev));
		for (j = 0; j < 2; j++) {
			EXPECT_EQ(EINVAL, disable(ep, sv[0]));
			EXPECT_EQ(1, write(sv[1], "x", 1));
			EXPECT_EQ(1, reported(ep));
		}
	}
	EXPECT_EQ(EINVAL, disable(sv[0], sv[1]));
	EXPECT_EQ(EINVAL, disable(ep, ep));
	EXPECT_EQ(EINVAL, ctl(ep, EPOLL_CTL_DISABLE + 1, sv[0]));
	/* A file that cannot be polled (a memfd, from 3.17) is refused first */
	file = memfd_create("epoll_disable_test", 0);
	if (file >= 0)
		EXPECT_EQ(EPERM, disable(ep, file));
	close(sv[1]);
	EXPECT_EQ(EBADF, disable(ep, sv[1]));
	EXPECT_EQ(EBADF, disable(sv[1], ep));
}

/*
 * IORING_OP_EPOLL_CTL answers as epoll_ctl(2), in its completion's res: a
 * ring of one entry, on the raw system calls, and an EPOLLONESHOT item
 */
static struct {
	int fd;
	struct io_uring_params p;
	char *rings;
	struct io_uring_sqe *sqe;
} ring;

FIXTURE(uring) {
	int ep, sv[2];
};

FIXTURE_SETUP(uring)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT };

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, self->sv));
	self->ep = epoll_create1(0);
	ASSERT_EQ(0, epoll_ctl(self->ep, EPOLL_CTL_ADD, self->sv[0], &ev));
}

FIXTURE_TEARDOWN(uring)
{
}

/* A word of the rings, at the offset io_uring_setup() gave */
#define RING(off)	((unsigned int *)(ring.rings + ring.p.off))

/* DISABLE of @fd in @ep, the SQE's addr @addr: 0 or the errno of its res */
static int uring_disable(int ep, int fd, __u64 addr)
{
	unsigned int head = *RING(cq_off.head);
	struct io_uring_cqe *cqe;
	int res;

	*ring.sqe = (struct io_uring_sqe){
		.opcode = IORING_OP_EPOLL_CTL, .fd = ep,
		.len = EPOLL_CTL_DISABLE, .off = fd, .addr = addr,
	};
	*RING(sq_off.array) = 0;
	__atomic_store_n(RING(sq_off.tail), *RING(sq_off.tail) + 1,
			 __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, ring.fd, 1, 1, IORING_ENTER_GETEVENTS,
		    NULL, 0) != 1 ||
	    head == __atomic_load_n(RING(cq_off.tail), __ATOMIC_ACQUIRE))
		return -1;
	cqe = (struct io_uring_cqe *)(ring.rings + ring.p.cq_off.cqes) +
	      (head & *RING(cq_off.ring_mask));
	res = cqe->res;
	__atomic_store_n(RING(cq_off.head), head + 1, __ATOMIC_RELEASE);
	return -res;
}

/* An event refused first, as by epoll_ctl(2); then each state's answer */
TEST_F(uring, answers)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT };
	int fd = self->sv[0];

	/* Here, not in the setup: 6.1's harness runs a test its setup skips */
	ring.fd = syscall(__NR_io_uring_setup, 1, &ring.p);
	if (ring.fd < 0 && (errno == ENOSYS || errno == EPERM))
		SKIP(return, "%s", errno == ENOSYS ? "no io_uring in this kernel" :
		     "io_uring is disabled (kernel.io_uring_disabled)");
	ASSERT_GE(ring.fd, 0);
	/* Both rings in one mapping (5.4) that the SQ array ends */
	ASSERT_NE(0U, ring.p.features & IORING_FEAT_SINGLE_MMAP);
	ring.rings = mmap(NULL, ring.p.sq_off.array + sizeof(__u32),
			  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
			  ring.fd, IORING_OFF_SQ_RING);
	ASSERT_NE(MAP_FAILED, ring.rings);
	ring.sqe = mmap(NULL, sizeof(*ring.sqe), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_POPULATE, ring.fd, IORING_OFF_SQES);
	ASSERT_NE(MAP_FAILED, ring.sqe);
	EXPECT_EQ(EINVAL, uring_disable(self->ep, fd, (uintptr_t)&ev));
	EXPECT_EQ(EINVAL, uring_disable(self->ep, self->sv[1], (uintptr_t)&ev));
	EXPECT_EQ(EINVAL, uring_disable(self->ep, -1, (uintptr_t)&ev));
	EXPECT_EQ(0, uring_disable(self->ep, fd, 0));
	EXPECT_EQ(EALREADY, uring_disable(self->ep, fd, 0));
	EXPECT_EQ(1, write(self->sv[1], "x", 1));
	EXPECT_EQ(0, reported(self->ep));
	ASSERT_EQ(0, rearm(self->ep, fd, EPOLLIN | EPOLLONESHOT));
	ASSERT_EQ(1, reported(self->ep));
	EXPECT_EQ(EBUSY, uring_disable(self->ep, fd, 0));
	ASSERT_EQ(0, rearm(self->ep, fd, EPOLLIN));
	EXPECT_EQ(EINVAL, uring_disable(self->ep, fd, 0));
	EXPECT_EQ(1, reported(self->ep));
	ASSERT_EQ(0, ctl(self->ep, EPOLL_CTL_DEL, fd));
	EXPECT_EQ(ENOENT, uring_disable(self->ep, fd, 0));
}

/*
 * The wakeup source of an EPOLLWAKEUP item, named after its file (here a
 * FIFO), is active while the item is queued: DISABLE must release it
 */
static int wakeup_active_ms(const char *name)
{
	DIR *dir = opendir("/sys/class/wakeup");
	char p[PATH_MAX], buf[64];
	struct dirent *d;
	int ms = -1;
	FILE *fp;

	while (dir && ms < 0 && (d = readdir(dir))) {
		snprintf(p, sizeof(p), "/sys/class/wakeup/%s/name", d->d_name);
		fp = fopen(p, "r");
		if (fp && fgets(buf, sizeof(buf), fp) && !strcmp(buf, name)) {
			fclose(fp);
			snprintf(p, sizeof(p), "/sys/class/wakeup/%s/active_time_ms",
				 d->d_name);
			fp = fopen(p, "r");
			if (fp && fscanf(fp, "%d", &ms) != 1)
				ms = -1;
		}
		if (fp)
			fclose(fp);
	}
	if (dir)
		closedir(dir);
	return ms;
}

TEST(wakeup_source)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT | EPOLLWAKEUP };
	char dir[PATH_MAX], path[PATH_MAX + 64], name[64];
	int ep = epoll_create1(0), fd;

	if (access("/sys/class/wakeup", F_OK))
		SKIP(return, "no /sys/class/wakeup (Linux < 5.4, or no PM_SLEEP)");
	snprintf(dir, sizeof(dir), "%s/epoll_disable.XXXXXX", getenv("TMPDIR") ?: P_tmpdir);
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(name, sizeof(name), "epoll-disable-%d", (int)getpid());
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ASSERT_EQ(0, mkfifo(path, 0600));
	fd = open(path, O_RDWR | O_NONBLOCK);
	unlink(path);
	rmdir(dir);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	strcat(name, "\n");
	if (wakeup_active_ms(name) < 0)
		SKIP(return, "the item has no wakeup source (CAP_BLOCK_SUSPEND?)");
	ASSERT_EQ(1, write(fd, "x", 1));
	usleep(20000);
	EXPECT_GT(wakeup_active_ms(name), 0);
	EXPECT_EQ(0, disable(ep, fd));
	EXPECT_EQ(0, wakeup_active_ms(name));
}

/* Not TEST_HARNESS_MAIN: on a kernel without the op it would exit 0 */
int main(int argc, char **argv)
{
	enum probe_found found;
	char why[96];

	found = probe_for_disable(argc, argv, why, sizeof(why));
	if (found == NO_DISABLE)
		ksft_exit_skip("%s\n", why);
	if (found == PROBE_FAILED)
		ksft_exit_fail_msg("%s\n", why);
	setvbuf(stdout, NULL, _IOLBF, 0);
	return test_harness_run(argc, argv);
}
