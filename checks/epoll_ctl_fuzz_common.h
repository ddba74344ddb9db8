/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every file of the fuzzer shares (epoll_ctl_fuzz_common.c): the
 * options, the per-thread state and its random numbers, the pool of
 * files, what the contract allows, the probe's findings, the helpers'
 * errors, the TAP lines.  epoll_ctl_fuzz.c is main(), which calls the
 * others: epoll_ctl_fuzz_calls.c the fuzz, epoll_ctl_fuzz_load.c the
 * load beside it and the pool's setup, epoll_ctl_fuzz_seq.c the
 * sequential phase.  None of them calls main()'s file.
 */
#ifndef EPOLL_CTL_FUZZ_COMMON_H
#define EPOLL_CTL_FUZZ_COMMON_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#define KSFT_PASS	0
#define KSFT_FAIL	1

/* Every item's data: this tag in the high half, its pool slot in the low */
#define DATA_TAG	0xe9011dadULL
#define DATA(slot)	(DATA_TAG << 32 | (unsigned int)(slot))

#define MAX_THREADS	64
#define MAX_REPORTS	8
/* Results counted one by one: 0 and errno 1 .. EHWPOISON; then "other" */
#define NR_RESULTS	134

struct fuzz_opt {
	unsigned long ops;
	int threads;
	int waiters;
	unsigned int seed;
	int timeout;
	bool narrow;
	bool wrong_model;
};

extern struct fuzz_opt opt;

/* The ops are counted by class */
enum { C_ADD, C_DEL, C_MOD, C_DISABLE, C_UNKNOWN, NR_CLASSES };

struct thread {
	pthread_t tid;
	unsigned long long rng;
	/* fuzzers */
	unsigned long ops;
	atomic_ulong done;
	atomic_int cur_op, cur_ep, cur_fd, cur_ptr;
	atomic_uint cur_events;
	unsigned long count[NR_CLASSES][NR_RESULTS + 1];
	unsigned long unexpected;
	/* helpers */
	unsigned long calls, events;
	atomic_bool finished;
};

/* What the kernel sees when it looks the fd up */
enum kind {
	K_EPOLL,
	K_SOCK,
	K_EVENTFD,
	K_PIPE_R,
	K_PIPE_W,
	K_FILE,		/* open, but cannot be polled */
	K_CLOSED,
};

struct slot {
	const char *name;
	enum kind kind;
	int group;	/* > 0: closed and re-created by the churner */
	int fd;
};

enum {
	S_EP_A,
	S_EP_B,
	S_EP_OUTER,
	S_EP_INNER,
	S_EP_CHURN,
	S_SOCK_A0,
	S_SOCK_A1,
	S_SOCK_B0,
	S_SOCK_B1,
	S_EVENTFD,
	S_EVENTFD_CHURN,
	S_PIPE_R,
	S_PIPE_W,
	S_PIPE_CHURN_R,
	S_PIPE_CHURN_W,
	S_FILE,
	S_DEVNULL,
	S_CLOSED,
	S_HUGE,
	S_NEG,
	NR_SLOTS
};

/* The epoll sets come first: epfd is mostly picked from them */
#define NR_EPOLL	(S_EP_CHURN + 1)

/* The churner's groups of slots, re-created together */
enum { G_NONE, G_EPOLL, G_SOCK, G_EVENTFD, G_PIPE, NR_GROUPS };

/* The event pointers; from P_NULL on, reading them faults */
enum { P_GOOD, P_MISALIGNED, P_NULL, P_PROT_NONE, P_ONE, P_STRADDLE, NR_PTRS };

/* The pool of files, the event pages, the helpers' stop flag */
extern struct slot pool[NR_SLOTS];
extern char *guard;		/* a read-write page, then a PROT_NONE one */
extern long page_size;
extern atomic_bool stop;

unsigned long long outcome(int e);
unsigned long long outcomes(int op, int ptr, enum kind ep, enum kind fd,
			    bool same);
unsigned long long rnd(struct thread *th);
/* A helper thread's error: counted, the first kept */
void helper_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern atomic_ulong helper_errors;
extern char helper_error_msg[256];

/* What the probe found (print_probe()) */
extern bool has_disable;		/* EPOLL_CTL_DISABLE is op 4 */
extern bool unknown_reads_event;	/* an unknown op copies its event */

/* The TAP lines: their count, those that failed, and one more */
extern int test_no, nr_failed;
void result(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

unsigned int below(struct thread *th, unsigned int n);
void seed_thread(struct thread *th, unsigned int n);
const char *err_name(int err, char *buf, size_t len);

#endif /* EPOLL_CTL_FUZZ_COMMON_H */
