// SPDX-License-Identifier: GPL-2.0
/*
 * The server's books of fds and connections (server_books.h): every fd
 * number's generation and whether it is open, so that an fd is closed
 * exactly once and never a reused one, and the table of connections by
 * fd number that the reaper picks from.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server.h"
#include "server_books.h"

/* Mark @c's fd closed in the books: false if it is not open as @c's */
static bool fd_forget(struct conn *c)
{
	int fd = c->it.c.fd[0];
	bool ok;

	pthread_mutex_lock(&S.fd_lock);
	ok = S.fd_open[fd] && S.fd_gen[fd] == c->gen;
	if (ok)
		S.fd_open[fd] = 0;
	pthread_mutex_unlock(&S.fd_lock);
	return ok;
}

/* Close the connection's fd once, as the books say (never a reused one) */
void fd_close(struct conn *c)
{
	int fd = c->it.c.fd[0];

	if (c->cancelled && opt.fault == FAULT_LEAK_FD) {
		shutdown(fd, SHUT_RDWR);
		return;
	}
	if (!fd_forget(c)) {
		inc(&S.bad_closes);
		return;
	}
	inc(&S.closed);
	close(fd);
	if (c->cancelled && opt.fault == FAULT_DOUBLE_CLOSE && !fd_forget(c))
		inc(&S.bad_closes);
}

/* A new fd number, as open in the books; false if it was open already */
bool fd_opened(struct conn *c)
{
	int fd = c->it.c.fd[0];
	bool was;

	pthread_mutex_lock(&S.fd_lock);
	was = S.fd_open[fd];
	S.fd_open[fd] = 1;
	c->gen = ++S.fd_gen[fd];
	pthread_mutex_unlock(&S.fd_lock);
	inc(&S.accepted);
	return !was;
}

void table_remove(struct item *it)
{
	int fd = it->c.fd[0];

	pthread_mutex_lock(&S.table_lock);
	if (S.table[fd] != it)
		error_at("fd %d: not its connection in the table", fd);
	else
		S.table[fd] = NULL;
	pthread_mutex_unlock(&S.table_lock);
}

/* Put @it in the table, for the canceller. Must hold table_lock. */
void table_add_locked(struct item *it)
{
	int fd = it->c.fd[0];

	if (S.table[fd])
		error_at("fd %d: in the table twice", fd);
	S.table[fd] = it;
	if (fd > S.table_hi)
		S.table_hi = fd;
}
