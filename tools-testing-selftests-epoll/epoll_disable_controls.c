// SPDX-License-Identifier: GPL-2.0
/*
 * epoll_disable_controls - wrong kernels, emulated in user space, for the
 * selftest's negative controls.
 *
 * Linked under epoll_disable_stress.c with -Wl,--wrap=epoll_ctl and
 * -Wl,--wrap=epoll_wait, these wrappers change what the test's own calls
 * answer, as the environment says; with none of it set they change
 * nothing. The program's first DISABLE, the probe's, gets the kernel's
 * own answer, so that busy's is not taken for a wrong op's, but under
 * naive: its op never reaches the kernel, which may have none. The
 * selftest itself has no knob that breaks it on purpose.
 *
 *   EPOLL_DISABLE_CONTROL=naive  DISABLE answers 0 and does nothing: the
 *       canceller deletes at once, as it must without the op (EPOLL_CTL_DEL
 *       under the item lock), under an owner that holds the event
 *   EPOLL_DISABLE_CONTROL=busy   DISABLE does its work but answers EBUSY
 *       where it answered 0: a disarmed item that nobody holds, and that
 *       nobody deletes
 *   EPOLL_DISABLE_CONTROL=rearm  every 64th EPOLL_CTL_MOD answers 0 and
 *       does nothing: a lost re-arm, whose bytes are never read
 *   EPOLL_DISABLE_DELAY_US=N     sleep N us after epoll_wait() hands out an
 *       event, widening the window in which the item can be deleted under
 *       the thread that holds it
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>

#include "epoll_disable.h"

int __real_epoll_ctl(int ep, int op, int fd, struct epoll_event *ev);
int __real_epoll_wait(int ep, struct epoll_event *evs, int max, int ms);
int __wrap_epoll_ctl(int ep, int op, int fd, struct epoll_event *ev);
int __wrap_epoll_wait(int ep, struct epoll_event *evs, int max, int ms);

static const char *control(void)
{
	const char *c = getenv("EPOLL_DISABLE_CONTROL");

	return c ? c : "";
}

int __wrap_epoll_ctl(int ep, int op, int fd, struct epoll_event *ev)
{
	static atomic_ulong mods, disables;
	int ret;

	if (op == EPOLL_CTL_DISABLE && !strcmp(control(), "naive"))
		return 0;
	if (op == EPOLL_CTL_DISABLE && !atomic_fetch_add(&disables, 1))
		return __real_epoll_ctl(ep, op, fd, ev);
	if (op == EPOLL_CTL_MOD && !strcmp(control(), "rearm") &&
	    atomic_fetch_add(&mods, 1) % 64 == 63)
		return 0;
	ret = __real_epoll_ctl(ep, op, fd, ev);
	if (op == EPOLL_CTL_DISABLE && !ret && !strcmp(control(), "busy")) {
		errno = EBUSY;
		return -1;
	}
	return ret;
}

int __wrap_epoll_wait(int ep, struct epoll_event *evs, int max, int ms)
{
	const char *delay = getenv("EPOLL_DISABLE_DELAY_US");
	int n = __real_epoll_wait(ep, evs, max, ms);
	int saved = errno;
	struct timespec ts;
	long us;

	if (n > 0 && delay) {
		us = atol(delay);
		ts.tv_sec = us / 1000000L;
		ts.tv_nsec = us % 1000000L * 1000L;
		nanosleep(&ts, NULL);
	}
	errno = saved;
	return n;
}
