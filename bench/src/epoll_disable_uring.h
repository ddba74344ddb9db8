/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The io_uring way of doing what EPOLL_CTL_DISABLE does, for the bench and
 * the server to hold the op against: the raw system calls and
 * <linux/io_uring.h> (the guest's programs are static, and Debian has no
 * static liburing), and no more of io_uring than that needs.
 *
 * The names are epoll_disable.h's. Each waiter has a ring of its own, the
 * item's home: the item's poll request (IORING_OP_POLL_ADD, multishot)
 * lives there, and the waiter is the only thread that submits to it and
 * reaps it (IORING_SETUP_SINGLE_ISSUER, and DEFER_TASKRUN where the kernel
 * has it). A canceller, which may not touch another thread's ring, sends
 * the home waiter a message (IORING_OP_MSG_RING) from a ring of its own:
 * "arm this item" or "cancel it". The waiter cancels the poll
 * (IORING_OP_ASYNC_CANCEL) and frees the item when it reaps the poll's
 * terminal completion, the one without IORING_CQE_F_MORE: after it the
 * ring posts nothing more for the item, and the waiter reaps its ring in
 * order, so nothing it reaps later names the item. No lock is needed: each
 * item is one waiter's, from its arming to its free.
 *
 * A completion's user_data is an item's address with its low bits telling
 * what it is (an item is at least 8-byte aligned): the item's poll, a
 * message, or the cancel's own answer, which names no item to touch.
 */
#ifndef EPOLL_DISABLE_URING_H
#define EPOLL_DISABLE_URING_H

#include <errno.h>
#include <linux/io_uring.h>
#include <linux/time_types.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "epoll_disable_util.h"

#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup	425
#define __NR_io_uring_enter	426
#endif

/* What a completion's user_data names, in its low bits */
enum ring_tag {
	TAG_POLL,	/* the item's poll: an event, or its end */
	TAG_ARM,	/* message: arm the item */
	TAG_CANCEL,	/* message: cancel the item */
	TAG_REMOVED,	/* the cancel's answer: no item to touch */
	TAG_MASK = 3,
};

static inline uint64_t ring_data(const void *p, enum ring_tag tag)
{
	return (uintptr_t)p | tag;
}

static inline void *ring_ptr(uint64_t data)
{
	return (void *)(uintptr_t)(data & ~(uint64_t)TAG_MASK);
}

static inline enum ring_tag ring_tag(uint64_t data)
{
	return data & TAG_MASK;
}

/* One thread's ring; @sys counts its io_uring_enter() calls */
struct ring {
	int fd;
	unsigned int sq_entries, cq_entries, sq_mask, cq_mask;
	unsigned int *sq_head, *sq_tail, *sq_array, *cq_head, *cq_tail;
	unsigned int tail;	/* SQEs written, published at submit */
	unsigned int pending;	/* written, not yet submitted */
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
	void *map;
	size_t map_len, sqes_len;
	atomic_ulong *sys;
};

static inline unsigned int *ring_word(struct ring *r, __u32 off)
{
	return (unsigned int *)((char *)r->map + off);
}

/* Bytes of memory the ring maps: the protocol's, per ring */
static inline size_t ring_bytes(const struct ring *r)
{
	return r->map_len + r->sqes_len;
}

static inline void ring_close(struct ring *r)
{
	if (r->sqes && r->sqes != MAP_FAILED)
		munmap(r->sqes, r->sqes_len);
	if (r->map && r->map != MAP_FAILED)
		munmap(r->map, r->map_len);
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}

/*
 * A ring of @sq SQEs and @cq CQEs for the calling thread, its only
 * submitter; without the newer setup flags where the kernel lacks them.
 * 0 or an errno.
 */
static inline int ring_open(struct ring *r, unsigned int sq, unsigned int cq,
			    atomic_ulong *sys)
{
	static const unsigned int tries[] = {
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN,
		0,
	};
	struct io_uring_params p;
	size_t sq_len, cq_len;
	unsigned int i;

	memset(r, 0, sizeof(*r));
	r->sys = sys;
	for (i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		memset(&p, 0, sizeof(p));
		p.flags = tries[i] | IORING_SETUP_CQSIZE;
		p.cq_entries = cq;
		r->fd = syscall(__NR_io_uring_setup, sq, &p);
		if (r->fd >= 0 || errno != EINVAL)
			break;
	}
	if (r->fd < 0)
		return errno;
	if (!(p.features & IORING_FEAT_SINGLE_MMAP) ||
	    !(p.features & IORING_FEAT_NODROP)) {
		ring_close(r);
		return EOPNOTSUPP;
	}
	sq_len = p.sq_off.array + p.sq_entries * sizeof(__u32);
	cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	r->map_len = sq_len > cq_len ? sq_len : cq_len;
	r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	r->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
	r->sqes = mmap(NULL, r->sqes_len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (r->map == MAP_FAILED || r->sqes == MAP_FAILED) {
		ring_close(r);
		return ENOMEM;
	}
	r->sq_entries = p.sq_entries;
	r->cq_entries = p.cq_entries;
	r->sq_mask = *ring_word(r, p.sq_off.ring_mask);
	r->cq_mask = *ring_word(r, p.cq_off.ring_mask);
	r->sq_head = ring_word(r, p.sq_off.head);
	r->sq_tail = ring_word(r, p.sq_off.tail);
	r->sq_array = ring_word(r, p.sq_off.array);
	r->cq_head = ring_word(r, p.cq_off.head);
	r->cq_tail = ring_word(r, p.cq_off.tail);
	r->cqes = (struct io_uring_cqe *)((char *)r->map + p.cq_off.cqes);
	r->tail = *r->sq_tail;
	return 0;
}

/*
 * io_uring_enter(): submit what was written, and with @wait wait for a
 * completion, for at most @timeout_ms (-1: no limit). The number
 * submitted, or -errno; -ETIME and -EINTR are a wait that ended empty.
 */
static inline int ring_enter(struct ring *r, bool wait, int timeout_ms)
{
	struct __kernel_timespec ts = {
		.tv_sec = timeout_ms / 1000,
		.tv_nsec = (timeout_ms % 1000) * 1000000L,
	};
	struct io_uring_getevents_arg arg = { .ts = (uintptr_t)&ts };
	unsigned int flags = 0;
	void *argp = NULL;
	size_t argsz = 0;
	long ret;

	__atomic_store_n(r->sq_tail, r->tail, __ATOMIC_RELEASE);
	if (wait) {
		flags |= IORING_ENTER_GETEVENTS;
		if (timeout_ms >= 0) {
			flags |= IORING_ENTER_EXT_ARG;
			argp = &arg;
			argsz = sizeof(arg);
		}
	}
	if (r->sys)
		atomic_fetch_add_explicit(r->sys, 1, memory_order_relaxed);
	ret = syscall(__NR_io_uring_enter, r->fd, r->pending, wait ? 1 : 0,
		      flags, argp, argsz);
	if (ret < 0)
		return -errno;
	r->pending -= ret < r->pending ? ret : r->pending;
	return ret;
}

/* The next SQE, zeroed; submits the ring first when it is full */
static inline struct io_uring_sqe *ring_sqe(struct ring *r)
{
	struct io_uring_sqe *sqe;
	int ret;

	while (r->tail - __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE) >=
	       r->sq_entries) {
		ret = ring_enter(r, false, 0);
		if (ret < 0 && ret != -EAGAIN && ret != -EBUSY &&
		    ret != -EINTR)
			return NULL;
	}
	sqe = &r->sqes[r->tail & r->sq_mask];
	memset(sqe, 0, sizeof(*sqe));
	r->sq_array[r->tail & r->sq_mask] = r->tail & r->sq_mask;
	r->tail++;
	r->pending++;
	return sqe;
}

/* The oldest completion not reaped yet, or NULL */
static inline struct io_uring_cqe *ring_peek(struct ring *r)
{
	unsigned int head = *r->cq_head;

	if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
		return NULL;
	return &r->cqes[head & r->cq_mask];
}

/* Done with the completion ring_peek() gave */
static inline void ring_seen(struct ring *r)
{
	__atomic_store_n(r->cq_head, *r->cq_head + 1, __ATOMIC_RELEASE);
}

/* Arm @fd's multishot POLLIN poll, its completions naming @item */
static inline bool ring_poll(struct ring *r, int fd, void *item)
{
	struct io_uring_sqe *sqe = ring_sqe(r);

	if (!sqe)
		return false;
	sqe->opcode = IORING_OP_POLL_ADD;
	sqe->fd = fd;
	sqe->poll32_events = POLLIN;
	sqe->len = IORING_POLL_ADD_MULTI;
	sqe->user_data = ring_data(item, TAG_POLL);
	return true;
}

/*
 * Cancel @item's poll: the poll ends with -ECANCELED (or with the event
 * it had posted already), without IORING_CQE_F_MORE. The cancel's own
 * answer comes back only if it failed, tagged TAG_REMOVED: -ENOENT, the
 * poll had ended already, and its last completion is in the ring or
 * reaped (so the answer must not touch the item).
 *
 * IORING_OP_ASYNC_CANCEL, not IORING_OP_POLL_REMOVE: a remove that meets
 * the poll while a wakeup is being handled fails (-EALREADY) and leaves a
 * multishot poll armed, to be asked again, where a cancel marks the poll
 * cancelled whoever handles it, and the poll ends.
 */
static inline bool ring_cancel(struct ring *r, void *item)
{
	struct io_uring_sqe *sqe = ring_sqe(r);

	if (!sqe)
		return false;
	sqe->opcode = IORING_OP_ASYNC_CANCEL;
	sqe->addr = ring_data(item, TAG_POLL);
	sqe->flags = IOSQE_CQE_SKIP_SUCCESS;
	sqe->user_data = ring_data(item, TAG_REMOVED);
	return true;
}

/*
 * Post a completion of @data to the ring @to_fd, from this thread's
 * ring; this ring hears of it only if it failed (res < 0, user_data
 * @data)
 */
static inline bool ring_msg(struct ring *r, int to_fd, uint64_t data)
{
	struct io_uring_sqe *sqe = ring_sqe(r);

	if (!sqe)
		return false;
	sqe->opcode = IORING_OP_MSG_RING;
	sqe->fd = to_fd;
	sqe->addr = IORING_MSG_DATA;
	sqe->off = data;
	sqe->flags = IOSQE_CQE_SKIP_SUCCESS;
	sqe->user_data = data;
	return true;
}

/*
 * A waiter's ring, the home of the items it polls, with the count of the
 * messages the other threads sent it. Only the waiter submits to the ring
 * and reaps it; the others read @fd and add to @sent.
 */
struct ring_home {
	struct ring ring;
	atomic_int fd;		/* the ring's, for the senders; -1: none */
	atomic_ulong sent;	/* messages sent to it */
	unsigned long received;	/* of those, reaped */
	long ending;		/* polls cancelled, their end not reaped */
	int cancel_err;		/* a cancel's failure other than -ENOENT */
};

/*
 * What the waiter does with what it reaps, each given the waiter's @arg
 * and the item the completion names
 */
struct home_ops {
	void (*arm)(void *arg, void *item);	/* message: poll the item */
	void (*cancel)(void *arg, void *item);	/* message: cancel its poll */
	void (*event)(void *arg, void *item,	/* its poll's completion */
		      const struct io_uring_cqe *cqe);
};

/*
 * Set up the calling waiter's ring with @quitfd's poll in it (oneshot,
 * its completion naming no item), and publish the ring's fd, -1 if it
 * failed. 0 or an errno.
 */
static inline int home_open(struct ring_home *h, unsigned int sq,
			    unsigned int cq, atomic_ulong *sys, int quitfd)
{
	struct io_uring_sqe *sqe;
	int err;

	err = ring_open(&h->ring, sq, cq, sys);
	if (!err) {
		sqe = ring_sqe(&h->ring);
		sqe->opcode = IORING_OP_POLL_ADD;
		sqe->fd = quitfd;
		sqe->poll32_events = POLLIN;
		sqe->user_data = ring_data(NULL, TAG_POLL);
	}
	atomic_store(&h->fd, err ? -1 : h->ring.fd);
	return err;
}

/* One completion the waiter reaped, handed to @ops; true for quitfd's */
static inline bool home_reap(struct ring_home *h,
			     const struct io_uring_cqe *cqe,
			     const struct home_ops *ops, void *arg)
{
	void *item = ring_ptr(cqe->user_data);

	switch (ring_tag(cqe->user_data)) {
	case TAG_ARM:
		h->received++;
		ops->arm(arg, item);
		break;
	case TAG_CANCEL:
		h->received++;
		ops->cancel(arg, item);
		break;
	case TAG_REMOVED:
		/* -ENOENT: the poll had ended, its last completion frees */
		if (cqe->res != -ENOENT)
			h->cancel_err = cqe->res;
		break;
	case TAG_POLL:
		if (!item)
			return true;
		ops->event(arg, item, cqe);
		break;
	default:
		break;
	}
	return false;
}

/*
 * The waiter's loop: reap each completion, in the ring's order, and wait
 * for more, at most @wait_ms at a time. Once quitfd's has come, the loop
 * ends as soon as every message sent to this waiter is reaped and every
 * poll it cancelled has ended, or a second later. 0, or the -errno of an
 * io_uring_enter() that failed.
 */
static inline int home_run(struct ring_home *h, int wait_ms,
			   const struct home_ops *ops, void *arg)
{
	struct io_uring_cqe *cqe;
	long long quit_by = 0;
	int ret;

	for (;;) {
		while ((cqe = ring_peek(&h->ring))) {
			if (home_reap(h, cqe, ops, arg) && !quit_by)
				quit_by = now_ns() + 1000000000LL;
			ring_seen(&h->ring);
		}
		if (quit_by && ((h->received == atomic_load(&h->sent) &&
				 !h->ending) || now_ns() > quit_by))
			return 0;
		ret = ring_enter(&h->ring, true, quit_by ? 10 : wait_ms);
		if (ret < 0 && ret != -ETIME && ret != -EINTR &&
		    ret != -EAGAIN && ret != -EBUSY)
			return ret;
	}
}

/* Queue, in the sender's ring @r, a message of @data to the waiter @to */
static inline bool home_send(struct ring *r, struct ring_home *to,
			     uint64_t data)
{
	if (!ring_msg(r, atomic_load(&to->fd), data))
		return false;
	atomic_fetch_add(&to->sent, 1);
	return true;
}

/*
 * Submit the messages queued in @r: 0, the -errno of the submit, or the
 * res of the first message that failed (every failure is reaped)
 */
static inline int ring_flush(struct ring *r)
{
	struct io_uring_cqe *cqe;
	int ret;

	do
		ret = ring_enter(r, false, 0);
	while (ret == -EINTR || ret == -EAGAIN || ret == -EBUSY);
	if (ret > 0)
		ret = 0;
	while ((cqe = ring_peek(r))) {
		if (!ret)
			ret = cqe->res;
		ring_seen(r);
	}
	return ret;
}

#endif
