/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The server's HTTP (server_http.c): read and answer a connection's
 * requests, under the item's lock.
 */
#ifndef EPOLL_DISABLE_SERVER_HTTP_H
#define EPOLL_DISABLE_SERVER_HTTP_H

#include <stdbool.h>

#include "server.h"

/* Bytes the client sent that the server has not taken as a request */
bool has_unread(struct conn *c);
/*
 * Read and answer what the client sent; false if it went away (or sent
 * more than a request can hold). Must hold the item's lock.
 */
bool receive(struct conn *c);

#endif /* EPOLL_DISABLE_SERVER_HTTP_H */
