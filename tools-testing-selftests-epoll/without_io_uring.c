// SPDX-License-Identifier: GPL-2.0
/*
 * without_io_uring - run a program with io_uring taken away from it.
 *
 *   without_io_uring [-e] PROG [ARG...]
 *
 * The selftest's io_uring clauses skip when io_uring_setup(2) fails with
 * ENOSYS (a kernel without CONFIG_IO_URING) or EPERM (io_uring disabled
 * by sysctl). That skip is the test's own decision, in user space, so it
 * can be proved without a kernel built without io_uring: take io_uring
 * away from the test process and exec it.
 *
 * By default a seccomp filter answers io_uring_setup() with ENOSYS, as a
 * kernel without CONFIG_IO_URING does, and allows every other syscall.
 * It is installed with prctl() rather than seccomp(2), which Linux 3.6
 * does not have; filters through prctl() are there since 3.5.
 *
 * With -e, kernel.io_uring_disabled (Linux 6.6 and later) is set to 2:
 * io_uring_setup() then fails with EPERM for every process, root
 * included. That is system-wide and stays after PROG exits: it is meant
 * for a guest that is thrown away.
 *
 * Either way, before the exec the wrapper calls io_uring_setup() itself
 * and goes on only if it fails with the expected errno: it never runs
 * PROG claiming io_uring is gone when it is not. Any failure of the
 * wrapper's own exits with status 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __x86_64__
#error "x86_64 only: the filter matches AUDIT_ARCH_X86_64 and its numbers"
#endif

#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif

#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

#define DISABLED_SYSCTL "/proc/sys/kernel/io_uring_disabled"

static const char *me = "without_io_uring";

static void usage(void)
{
	fprintf(stderr, "usage: %s [-e] PROG [ARG...]\n", me);
	exit(2);
}

/*
 * io_uring_setup() answers ENOSYS; every other syscall is allowed.
 *
 * A syscall of another ABI (i386 through int 0x80, say) kills the thread
 * (killing the whole process is from 4.14): its numbers are not x86_64's,
 * so allowing it could let io_uring_setup through under another number,
 * and answering ENOSYS to all of it would fail in ways far from the
 * cause. Failing closed and loudly is better.
 * x32 shares AUDIT_ARCH_X86_64 and io_uring_setup's number, with the x32
 * bit set: it is matched as well.
 */
static void install_filter(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			 __X32_SYSCALL_BIT | __NR_io_uring_setup, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
	};
	struct sock_fprog prog = {
		.len = sizeof(filter) / sizeof(filter[0]),
		.filter = filter,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		fprintf(stderr, "%s: PR_SET_NO_NEW_PRIVS: %s\n", me,
			strerror(errno));
		exit(2);
	}
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		fprintf(stderr, "%s: PR_SET_SECCOMP: %s\n", me,
			strerror(errno));
		exit(2);
	}
}

/* kernel.io_uring_disabled = 2: io_uring_setup() is EPERM for everyone */
static void disable_by_sysctl(void)
{
	ssize_t n;
	int fd;

	fd = open(DISABLED_SYSCTL, O_WRONLY);
	if (fd < 0 && errno == ENOENT) {
		fprintf(stderr,
			"%s: no %s (kernel before 6.6, or without io_uring)\n",
			me, DISABLED_SYSCTL);
		exit(2);
	}
	if (fd < 0) {
		fprintf(stderr, "%s: open %s: %s\n", me, DISABLED_SYSCTL,
			strerror(errno));
		exit(2);
	}
	n = write(fd, "2\n", 2);
	if (n != 2) {
		fprintf(stderr, "%s: write 2 to %s: %s\n", me,
			DISABLED_SYSCTL, n < 0 ? strerror(errno) : "short");
		exit(2);
	}
	if (close(fd)) {
		fprintf(stderr, "%s: close %s: %s\n", me, DISABLED_SYSCTL,
			strerror(errno));
		exit(2);
	}
}

/* The negative control: io_uring_setup() must fail with @want (@name) */
static void check_gone(int want, const char *name)
{
	struct io_uring_params p;
	long fd;
	int err;

	memset(&p, 0, sizeof(p));
	fd = syscall(__NR_io_uring_setup, 1, &p);
	if (fd >= 0) {
		fprintf(stderr,
			"%s: io_uring_setup() still works (fd %ld), want %s\n",
			me, fd, name);
		close(fd);
		exit(2);
	}
	err = errno;
	if (err != want) {
		fprintf(stderr,
			"%s: io_uring_setup() failed: %s (errno %d), want %s\n",
			me, strerror(err), err, name);
		exit(2);
	}
}

int main(int argc, char *argv[])
{
	int by_sysctl = 0;
	int c;

	/* "+": options end at PROG, whose own options are left alone */
	while ((c = getopt(argc, argv, "+e")) != -1) {
		switch (c) {
		case 'e':
			by_sysctl = 1;
			break;
		default:
			usage();
		}
	}
	if (optind >= argc)
		usage();

	if (by_sysctl) {
		disable_by_sysctl();
		check_gone(EPERM, "EPERM");
	} else {
		install_filter();
		check_gone(ENOSYS, "ENOSYS");
	}

	execvp(argv[optind], &argv[optind]);
	fprintf(stderr, "%s: exec %s: %s\n", me, argv[optind],
		strerror(errno));
	return 2;
}
