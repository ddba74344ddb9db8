// SPDX-License-Identifier: GPL-2.0
/*
 * What every file of the server shares (server.h): the options, which
 * main() parses (epoll_disable_server.c), the server's state S and the
 * count of frees per connection.  It calls no other file of the server.
 */
#include <stdatomic.h>
#include <pthread.h>

#include "server.h"

struct server_opt opt = {
	.wrk = "wrk",
	.prefix = "",
};

struct server S = {
	.table_lock = PTHREAD_MUTEX_INITIALIZER,
	.fd_lock = PTHREAD_MUTEX_INITIALIZER,
	.stats_lock = PTHREAD_MUTEX_INITIALIZER,
};

/* How often each connection id was freed: under the quarantine's lock */
unsigned char *freed;

void inc(atomic_ulong *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}
