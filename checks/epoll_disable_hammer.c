// SPDX-License-Identifier: GPL-2.0
/*
 * epoll_disable_hammer - one EPOLLONESHOT item, disarmed and re-armed
 * while its file wakes it up, for make test-kcsan.
 *
 * One thread writes a byte to the item's socket and reads it back, over
 * and over: every write runs ep_poll_callback(), which reads the item's
 * event mask under ep->lock. The other thread asks EPOLL_CTL_DISABLE and
 * re-arms the item with EPOLL_CTL_MOD, over and over. Nobody calls
 * epoll_wait(), so the item is always armed when DISABLE comes: each call
 * disarms it, and each MOD writes the mask anew. That is where a disarm
 * outside ep->lock would race with the callback, as often as a test can
 * make it, and where KCSAN must see it.
 *
 * On a kernel without the op, DISABLE fails (EFAULT, for its NULL event)
 * and the MODs still race with the callback as they do upstream: the same
 * load for the kernel without the series. It only reports what it did;
 * it is not a test.
 *
 *   epoll_disable_hammer [seconds]	(default 10)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "epoll_disable_util.h"

static int ep, sv[2];
static atomic_bool stop;
static unsigned long writes, disarmed, busy, failed, first_errno;

/* Wake the item up: write into its socket, then drain it again */
static void *wake(void *arg)
{
	char c = 'x';

	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (write(sv[1], &c, 1) == 1)
			writes++;
		while (read(sv[0], &c, 1) == 1)
			;
	}
	return NULL;
}

/* Disarm the item, re-arm it, again */
static void *disarm(void *arg)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT };

	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (!epoll_ctl(ep, EPOLL_CTL_DISABLE, sv[0], NULL))
			disarmed++;
		else if (errno == EBUSY)
			busy++;
		else if (!failed++)
			first_errno = errno;
		if (epoll_ctl(ep, EPOLL_CTL_MOD, sv[0], &ev)) {
			perror("EPOLL_CTL_MOD");
			exit(1);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT };
	int seconds = argc > 1 ? atoi(argv[1]) : 10;
	pthread_t w, d;

	if (seconds <= 0) {
		fprintf(stderr, "usage: %s [seconds]\n", argv[0]);
		return 2;
	}
	ep = epoll_create1(0);
	if (ep < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev)) {
		perror("setup");
		return 1;
	}
	if (pthread_create(&w, NULL, wake, NULL) ||
	    pthread_create(&d, NULL, disarm, NULL)) {
		perror("pthread_create");
		return 1;
	}
	sleep(seconds);
	atomic_store(&stop, true);
	pthread_join(w, NULL);
	pthread_join(d, NULL);
	printf("# %d s: %lu writes, DISABLE: %lu disarmed, %lu EBUSY, %lu failed%s%s\n",
	       seconds, writes, disarmed, busy, failed, failed ? ": " : "",
	       failed ? strerror(first_errno) : "");
	printf("# hammer done\n");
	return 0;
}
