// SPDX-License-Identifier: GPL-2.0
/*
 * libc_disable - EPOLL_CTL_DISABLE as a C library's <sys/epoll.h> gives it.
 *
 * The follow-up queues for the C libraries (patches/musl/, patches/glibc/)
 * add the op's name to <sys/epoll.h>. This program takes it from there and
 * nowhere else: it has no fallback definition, so it does not compile
 * against a library without the queue (scripts/checks/check-musl's negative
 * control on the host). Built static, it runs in the guest:
 *
 *   - an EPOLLONESHOT item that is armed answers 0, and one that was also
 *     ready is taken off the ready list: epoll_wait() reports nothing;
 *   - asked again, the disabled item answers EALREADY;
 *   - an item whose event epoll_wait() delivered answers EBUSY;
 *   - an item without EPOLLONESHOT answers EINVAL;
 *   - an event pointer is refused, EINVAL, and the item stays armed.
 *
 * Exit status as kselftest's: 0 pass, 1 a wrong answer, 4 skip (a kernel
 * without the op). The event is NULL, as the op requires. The probe:
 * DISABLE an armed EPOLLONESHOT item: 0, the op is there; EINVAL, it is an
 * unknown op, or EFAULT, a kernel that copies an event for every op but
 * EPOLL_CTL_DEL and so cannot take the NULL one; any other answer is wrong.
 * An fd not in the set would not do: a kernel whose op answered EINVAL
 * there would be taken for one without it, and nothing would be checked.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static int failed;

/* 0 or the errno of an op on fd, with no event */
static int ctl(int ep, int op, int fd)
{
	return epoll_ctl(ep, op, fd, NULL) ? errno : 0;
}

static int add(int ep, int fd, unsigned int events)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };

	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) ? errno : 0;
}

/* Events epoll_wait() hands out now, without waiting */
static int reported(int ep)
{
	struct epoll_event ev[2];

	return epoll_wait(ep, ev, 2, 0);
}

/* An answer of the op: 0, or the errno by name */
static const char *answer(int err)
{
	static const struct {
		int err;
		const char *name;
	} names[] = {
		{ 0, "0" }, { EALREADY, "EALREADY" }, { EBUSY, "EBUSY" },
		{ EINVAL, "EINVAL" }, { ENOENT, "ENOENT" }, { EFAULT, "EFAULT" },
	};
	static char other[32];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].err == err)
			return names[i].name;
	snprintf(other, sizeof(other), "errno %d", err);
	return other;
}

static void judge(const char *what, int ok, const char *got, const char *want)
{
	printf("%s %s: %s (expected %s)\n", ok ? "ok" : "not ok", what, got,
	       want);
	if (!ok)
		failed = 1;
}

/* The op answered want */
static void expect(const char *what, int got, int want)
{
	char g[32], w[32];

	snprintf(g, sizeof(g), "%s", answer(got));
	snprintf(w, sizeof(w), "%s", answer(want));
	judge(what, got == want, g, w);
}

/* epoll_wait() reported want events */
static void expect_events(const char *what, int got, int want)
{
	char g[32], w[32];

	snprintf(g, sizeof(g), "%d", got);
	snprintf(w, sizeof(w), "%d", want);
	judge(what, got == want, g, w);
}

int main(void)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT };
	int ep, a[2], b[2], c[2], probe;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("EPOLL_CTL_DISABLE is %d in <sys/epoll.h>\n", EPOLL_CTL_DISABLE);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, a) ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, b) ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, c)) {
		perror("libc_disable: setup");
		return 1;
	}

	/* The probe, on an armed item that is not ready: a[0] */
	if (add(ep, a[0], EPOLLIN | EPOLLONESHOT)) {
		perror("libc_disable: EPOLL_CTL_ADD");
		return 1;
	}
	probe = ctl(ep, EPOLL_CTL_DISABLE, a[0]);
	if (probe == EINVAL || probe == EFAULT) {
		printf("SKIP: this kernel lacks EPOLL_CTL_DISABLE (op %d with a NULL event: %s)\n",
		       EPOLL_CTL_DISABLE, answer(probe));
		return 4;
	}
	expect("the probe: an armed EPOLLONESHOT item is disabled", probe, 0);
	expect("an fd not in the set is not found",
	       ctl(ep, EPOLL_CTL_DISABLE, a[1]), ENOENT);

	/* Armed again, with EPOLL_CTL_MOD */
	if (epoll_ctl(ep, EPOLL_CTL_MOD, a[0], &ev)) {
		perror("libc_disable: EPOLL_CTL_MOD");
		return 1;
	}
	expect("an event pointer is refused",
	       epoll_ctl(ep, EPOLL_CTL_DISABLE, a[0], &ev) ? errno : 0, EINVAL);
	expect("an armed EPOLLONESHOT item is disabled",
	       ctl(ep, EPOLL_CTL_DISABLE, a[0]), 0);
	expect("a disabled item, asked again", ctl(ep, EPOLL_CTL_DISABLE, a[0]),
	       EALREADY);

	/* Armed and ready, not yet delivered: disabled and unqueued */
	if (add(ep, b[0], EPOLLIN | EPOLLONESHOT) || write(b[1], "x", 1) != 1) {
		perror("libc_disable: a ready item");
		return 1;
	}
	expect("a ready EPOLLONESHOT item is disabled",
	       ctl(ep, EPOLL_CTL_DISABLE, b[0]), 0);
	expect_events("epoll_wait() reports no disabled item", reported(ep), 0);

	/* Delivered: the caller of epoll_wait() holds the event */
	if (ctl(ep, EPOLL_CTL_DEL, b[0]) ||
	    add(ep, b[0], EPOLLIN | EPOLLONESHOT)) {
		perror("libc_disable: re-adding the ready item");
		return 1;
	}
	expect_events("epoll_wait() delivers the re-added item", reported(ep), 1);
	expect("a delivered EPOLLONESHOT item is busy",
	       ctl(ep, EPOLL_CTL_DISABLE, b[0]), EBUSY);

	/* Level-triggered: never known to be idle */
	if (add(ep, c[0], EPOLLIN)) {
		perror("libc_disable: a level-triggered item");
		return 1;
	}
	expect("an item without EPOLLONESHOT is refused",
	       ctl(ep, EPOLL_CTL_DISABLE, c[0]), EINVAL);

	printf("%s: EPOLL_CTL_DISABLE from <sys/epoll.h>\n",
	       failed ? "FAIL" : "PASS");
	return failed;
}
