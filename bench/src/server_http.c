// SPDX-License-Identifier: GPL-2.0
/*
 * The server's HTTP (server_http.h): a connection's requests read,
 * split at their blank line and each answered with the same short
 * response, keep-alive, as wrk asks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "server.h"
#include "server_http.h"

static const char response[] =
	"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
	"Content-Length: 3\r\n\r\nok\n";

/* Bytes the client sent that the server has not taken as a request */
bool has_unread(struct conn *c)
{
	int n = 0;

	return c->len || (!ioctl(c->it.c.fd[0], FIONREAD, &n) && n > 0);
}

/* Answer one request; false if the socket is gone. Must hold the lock. */
static bool answer(struct conn *c)
{
	size_t off = 0;
	ssize_t n;

	if (opt.fault == FAULT_DROP &&
	    atomic_load(&S.requests) % DROP_EVERY == 0)
		return true;
	while (off < sizeof(response) - 1) {
		n = send(c->it.c.fd[0], response + off,
			 sizeof(response) - 1 - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			inc(&S.send_failed);
			return false;
		}
		off += n;
	}
	inc(&S.answered);
	return true;
}

/* Take the complete requests out of c->buf. Must hold the item's lock. */
static bool serve(struct conn *c)
{
	char *end;
	size_t used;

	while ((end = memmem(c->buf, c->len, "\r\n\r\n", 4))) {
		used = end + 4 - c->buf;
		memmove(c->buf, c->buf + used, c->len - used);
		c->len -= used;
		inc(&S.requests);
		if (!answer(c))
			return false;
	}
	return c->len < sizeof(c->buf);
}

/*
 * Read and answer what the client sent; false if it went away (or sent
 * more than a request can hold). Must hold the item's lock.
 */
bool receive(struct conn *c)
{
	ssize_t n;

	for (;;) {
		n = recv(c->it.c.fd[0], c->buf + c->len,
			 sizeof(c->buf) - c->len, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		if (n > 0) {
			c->len += n;
			if (serve(c))
				continue;
		}
		return false;
	}
}
