/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ntirpc_driver's clients (ntirpc_clients.c): what main() sets before it
 * starts them, and what they count.
 */
#ifndef NTIRPC_CLIENTS_H
#define NTIRPC_CLIENTS_H

#include <stdatomic.h>
#include <stdint.h>

/* The RPC program the service registers, and its version */
#define PROG	0x20004848
#define VERS	1

struct clients {
	char path[108];		/* the service's AF_UNIX socket */
	int repro;		/* -r: never close before the reply */
	long maxconns;		/* -n: connects in all; 0: until stopped */
	atomic_int *stop;	/* set: every client goes */
	atomic_long conns;	/* connects */
	atomic_long replies;
	atomic_long refused;	/* closed by the server before a reply */
};

extern struct clients clients;

/* A connection to the service: its fd, or -1 (refused, or no fd left) */
int client_connect(void);
/* A NULL call, record marked: 0, or -1 */
int call(int fd, uint32_t xid);
/* Its reply within 500 ms: 0; -1 none; -2 closed on us */
int reply(int fd);
/* A client thread; @arg: its seed, as a long */
void *client(void *arg);

#endif /* NTIRPC_CLIENTS_H */
