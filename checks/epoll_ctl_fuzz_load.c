// SPDX-License-Identifier: GPL-2.0
/*
 * The fuzzer's load beside the fuzz: waiters that collect the items'
 * events, a writer that makes them ready, a churner that closes and
 * re-creates groups of files on their numbers, and the setup of the pool
 * of files and the event pages.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "epoll_disable_util.h"
#include "epoll_ctl_fuzz_common.h"
#include "epoll_ctl_fuzz_load.h"

static const int group_slot[NR_GROUPS] = {
	[G_EPOLL] = S_EP_CHURN,
	[G_SOCK] = S_SOCK_B0,
	[G_EVENTFD] = S_EVENTFD_CHURN,
	[G_PIPE] = S_PIPE_CHURN_R,
};

/* Take what is in a file, so that it can become ready again */
static void drain(int slot)
{
	char buf[64];

	switch (pool[slot].kind) {
	case K_SOCK:
	case K_PIPE_R:
	case K_EVENTFD:
		/* Empty, or closed by the churner: no matter */
		if (read(pool[slot].fd, buf, sizeof(buf)) < 0)
			return;
		break;
	default:
		break;
	}
}

/* Every item was given DATA(slot) by ADD or MOD: is this one of them? */
static void check_event(struct thread *th, int ep,
			const struct epoll_event *ev)
{
	unsigned long long data = ev->data.u64;

	if (data >> 32 != DATA_TAG || (data & 0xffffffffU) >= NR_SLOTS) {
		helper_error("epoll_wait on %s: data %#llx, which no item has",
			     pool[ep].name, data);
		return;
	}
	if (below(th, 2))
		drain(data & 0xffffffffU);
}

void *waiter(void *arg)
{
	struct thread *th = arg;
	struct epoll_event evs[8];
	int i, n, s;

	while (!atomic_load(&stop)) {
		s = below(th, NR_EPOLL);
		n = epoll_wait(pool[s].fd, evs, 1 + below(th, ARRAY_SIZE(evs)),
			       below(th, 3));
		th->calls++;
		if (n < 0 && (errno == EINTR ||
			      (pool[s].group && errno == EBADF)))
			continue;
		if (n < 0) {
			helper_error("epoll_wait on %s: %s", pool[s].name,
				     strerror(errno));
			continue;
		}
		th->events += n;
		for (i = 0; i < n; i++)
			check_event(th, s, &evs[i]);
	}
	atomic_store(&th->finished, true);
	return NULL;
}

/* Make the files ready, and not: write to them and read from them */
void *writer(void *arg)
{
	struct thread *th = arg;
	const struct slot *s;
	char c = 'x';
	int ret;

	while (!atomic_load(&stop)) {
		s = &pool[below(th, NR_SLOTS)];
		switch (s->kind) {
		case K_SOCK:
			if (below(th, 3))
				ret = write(s->fd, &c, 1);
			else
				drain(s - pool);
			break;
		case K_PIPE_W:
			ret = write(s->fd, &c, 1);
			break;
		case K_EVENTFD:
			if (below(th, 3))
				ret = eventfd_write(s->fd, 1);
			else
				drain(s - pool);
			break;
		case K_PIPE_R:
			drain(s - pool);
			break;
		default:
			continue;
		}
		(void)ret;	/* full, or the peer re-created: no matter */
		if (++th->calls % 8 == 0)
			sleep_us(20);
	}
	atomic_store(&th->finished, true);
	return NULL;
}

/* A new file (or two) of the kind of a churner's group */
static int create(int group, int fd[2])
{
	fd[1] = -1;
	switch (group) {
	case G_EPOLL:
		fd[0] = epoll_create1(0);
		return fd[0] < 0 ? -1 : 0;
	case G_SOCK:
		return socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fd);
	case G_EVENTFD:
		fd[0] = eventfd(0, EFD_NONBLOCK);
		return fd[0] < 0 ? -1 : 0;
	case G_PIPE:
		return pipe2(fd, O_NONBLOCK);
	}
	return -1;
}

static int add(int ep, int fd, unsigned int events)
{
	struct epoll_event ev = { .events = events, .data.u64 = DATA(fd) };

	return epoll_ctl(pool[ep].fd, EPOLL_CTL_ADD, pool[fd].fd, &ev);
}

/*
 * Re-create a group's files in place: dup2() new ones onto their numbers,
 * at once or after closing the old ones. No other thread opens a file once
 * the fuzz runs, so nothing else can take a number while it is closed.
 */
static void churn(struct thread *th, int group)
{
	int first = group_slot[group], n = group == G_SOCK ||
					   group == G_PIPE ? 2 : 1;
	int fd[2], i;

	if (create(group, fd)) {
		helper_error("re-creating %s: %s", pool[first].name,
			     strerror(errno));
		return;
	}
	if (below(th, 2)) {
		for (i = 0; i < n; i++)
			close(pool[first + i].fd);
		sched_yield();
	}
	for (i = 0; i < n; i++) {
		if (dup2(fd[i], pool[first + i].fd) < 0)
			helper_error("dup2 onto %s: %s", pool[first + i].name,
				     strerror(errno));
		close(fd[i]);
	}
	/*
	 * This ADD may fail as any may: a fuzzer was quicker (EEXIST), or
	 * the fuzzers' nesting gave the socket too many wakeup paths (EINVAL)
	 */
	if (group == G_EPOLL &&
	    add(S_EP_CHURN, S_SOCK_A0, EPOLLIN | EPOLLONESHOT) &&
	    !(outcomes(EPOLL_CTL_ADD, P_GOOD, K_EPOLL, K_SOCK, false) &
	      outcome(errno)))
		helper_error("ADD to the re-created epoll set: %s",
			     strerror(errno));
	th->calls++;
}

void *churner(void *arg)
{
	struct thread *th = arg;

	while (!atomic_load(&stop)) {
		churn(th, 1 + below(th, NR_GROUPS - 1));
		sleep_us(50);
	}
	atomic_store(&th->finished, true);
	return NULL;
}

static int setup_slot(int first, int group)
{
	int fd[2];

	if (create(group, fd))
		return -1;
	pool[first].fd = fd[0];
	if (fd[1] >= 0)
		pool[first + 1].fd = fd[1];
	return 0;
}

const char *setup(void)
{
	static const int watched[] = {
		S_SOCK_A0, S_SOCK_A1, S_EVENTFD, S_PIPE_R, S_SOCK_B0,
	};
	char path[] = "/tmp/epoll_ctl_fuzz.XXXXXX";
	struct rlimit rl;
	unsigned int i;
	int s, hi;

	for (s = S_EP_A; s <= S_EP_CHURN; s++)
		if (setup_slot(s, G_EPOLL))
			return "epoll_create1";
	if (setup_slot(S_SOCK_A0, G_SOCK) || setup_slot(S_SOCK_B0, G_SOCK))
		return "socketpair";
	if (setup_slot(S_EVENTFD, G_EVENTFD) ||
	    setup_slot(S_EVENTFD_CHURN, G_EVENTFD))
		return "eventfd";
	if (setup_slot(S_PIPE_R, G_PIPE) || setup_slot(S_PIPE_CHURN_R, G_PIPE))
		return "pipe2";
	pool[S_FILE].fd = mkstemp(path);
	if (pool[S_FILE].fd < 0)
		return "mkstemp";
	unlink(path);
	pool[S_DEVNULL].fd = open("/dev/null", O_RDWR);
	if (pool[S_DEVNULL].fd < 0)
		return "open /dev/null";

	/* A closed fd well above the others: nothing will be given it */
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return "getrlimit";
	hi = rl.rlim_cur > 1024 ? 1023 : (int)rl.rlim_cur - 1;
	errno = 0;
	if (hi <= pool[S_DEVNULL].fd + 16 || fcntl(hi, F_GETFD) != -1 ||
	    errno != EBADF)
		return "finding a closed fd";
	pool[S_CLOSED].fd = hi;

	/*
	 * Some items to start with: A watches with EPOLLONESHOT, B without;
	 * the outer set watches the inner one, which watches a socket.
	 */
	for (i = 0; i < ARRAY_SIZE(watched); i++)
		if (add(S_EP_A, watched[i], EPOLLIN | EPOLLONESHOT) ||
		    add(S_EP_B, watched[i], EPOLLIN | EPOLLOUT))
			return "EPOLL_CTL_ADD";
	if (add(S_EP_A, S_PIPE_W, EPOLLOUT | EPOLLONESHOT | EPOLLET) ||
	    add(S_EP_INNER, S_SOCK_A1, EPOLLIN) ||
	    add(S_EP_OUTER, S_EP_INNER, EPOLLIN | EPOLLONESHOT) ||
	    add(S_EP_OUTER, S_SOCK_A0, EPOLLIN | EPOLLONESHOT) ||
	    add(S_EP_CHURN, S_SOCK_A0, EPOLLIN | EPOLLONESHOT))
		return "EPOLL_CTL_ADD";

	page_size = sysconf(_SC_PAGESIZE);
	guard = mmap(NULL, 2 * page_size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (guard == MAP_FAILED || mprotect(guard + page_size, page_size,
					    PROT_NONE))
		return "mmap";
	return NULL;
}
