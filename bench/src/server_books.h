/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The server's books (server_books.c): each fd closed once, never a
 * reused one, and the table of connections by fd number (S.table,
 * under S.table_lock).
 */
#ifndef EPOLL_DISABLE_SERVER_BOOKS_H
#define EPOLL_DISABLE_SERVER_BOOKS_H

#include <stdbool.h>

#include "server.h"

/* A new fd number, as open in the books; false if it was open already */
bool fd_opened(struct conn *c);
/* Close the connection's fd once, as the books say (never a reused one) */
void fd_close(struct conn *c);
/* Put @it in the table, for the canceller. Must hold table_lock. */
void table_add_locked(struct item *it);
void table_remove(struct item *it);

#endif /* EPOLL_DISABLE_SERVER_BOOKS_H */
