/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every file of the server shares (server.c): the options, a
 * connection (struct conn, around the protocols' struct item) and the
 * server's state S.  epoll_disable_server.c parses the options, runs wrk,
 * reports and checks; it calls the threads (server_threads.c) and the
 * driver (server_conn.c), which calls the books (server_books.c) and
 * the HTTP (server_http.c); none of them calls main()'s file.
 */
#ifndef EPOLL_DISABLE_SERVER_H
#define EPOLL_DISABLE_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "protocol.h"

/* Waiters wake this often without events: the deferred quiescent point */
#define WAIT_MS		10
/* Freed items stay poisoned this long (in frees) before free() */
#define QUARANTINE	16384
#define MAX_IDS		(1 << 22)
#define MAX_SAMPLES	(1 << 20)
#define REQ_MAX		1024
#define DROP_EVERY	500
#define MAX_IDLERS	64
/* uring: each ring's CQEs (P.queue_len), whatever the connections */
#define URING_CQ	1024


enum fault {
	FAULT_NONE, FAULT_LEAK_CONN, FAULT_DOUBLE_FREE, FAULT_LEAK_FD,
	FAULT_DOUBLE_CLOSE, FAULT_DROP, FAULT_EARLY_FREE, NR_FAULTS
};


struct server_opt {
	const struct protocol *protocol;
	enum fault fault;
	long waiters, idlers;
	long wrk_threads, wrk_conns, seconds;
	long idle_ms, cancel_rate, delay_us;
	const char *wrk, *prefix;
};

extern struct server_opt opt;

/*
 * A connection: the server's own, then the protocols' item (its c.fd[0]
 * is the socket, decided the reaper's decision), last, where the
 * protocol's struct that embeds it begins (P.item_off)
 */
struct conn {
	unsigned int gen;	/* the fd number's generation at accept */
	unsigned long id;
	bool cancelled;		/* closing by a canceller's decision */
	bool fd_closed;		/* closed before the free (deferred) */
	long long seen_ns;	/* last request, for the idle canceller */
	size_t len;
	char buf[REQ_MAX];
	struct item it;
};

static inline struct conn *conn_of(struct item *it)
{
	return (struct conn *)((char *)it - offsetof(struct conn, it));
}

struct wrk_figures {
	bool seen;
	double us, requests, connect, read, write, status, timeout, p50, p99;
};

struct server {
	int lfd, port;
	atomic_bool quit;

	/* the items by fd number, for the canceller: under table_lock */
	pthread_mutex_t table_lock;
	struct item **table;
	int table_size, table_hi;

	/* every fd number's generation and whether it is open: fd_lock */
	pthread_mutex_t fd_lock;
	unsigned int *fd_gen;
	unsigned char *fd_open;

	atomic_ulong accepted, closed, bad_closes, allocs, frees, bad_frees;
	atomic_ulong requests, answered, send_failed, late, stale, errors;
	atomic_ulong cancels_idle, cancels_forced, cancel_now, cancel_busy;
	atomic_ulong unread;
	atomic_ulong owner_closes, client_closes, next_id, idle_clients;
	atomic_long held;
	long held_max;
	double held_sum;
	unsigned long held_samples;
	long long cancel_from, cancel_until;

	/* reclaim latencies in ns: stats_lock */
	pthread_mutex_t stats_lock;
	long long *samples;
	unsigned long nr_samples;

	char first_error[160];
};

extern struct server S;

/* How often each connection id was freed */
extern unsigned char *freed;

/* Count one, relaxed */
void inc(atomic_ulong *c);

#endif /* EPOLL_DISABLE_SERVER_H */
