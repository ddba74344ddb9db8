/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The server's driver of the protocols (server_conn.c), for main() and
 * the server's threads: the struct driver, the protocols it can run, and
 * a connection's way in and out.
 */
#ifndef EPOLL_DISABLE_SERVER_CONN_H
#define EPOLL_DISABLE_SERVER_CONN_H

#include <stddef.h>

#include "server.h"

extern const struct driver conn_driver;
/* The protocol of that name if the server can run it, or NULL */
const struct protocol *conn_protocol(const char *name);
/* Those it can run, '|' between them */
void conn_protocol_names(char *buf, size_t len);
/* A new connection on @fd, not yet in the books, the table or the set */
struct conn *conn_new(int fd);
/* The plain way in: the table, then the set, before a waiter can close it */
void conn_enter(struct item *it);
/* Close @it from outside the waiters: with it->g.lock held, dropped */
void reap(struct item *it);
/* Back to malloc, what the quarantine holds: no thread may look */
void conn_quarantine_drain(void);

#endif /* EPOLL_DISABLE_SERVER_CONN_H */
