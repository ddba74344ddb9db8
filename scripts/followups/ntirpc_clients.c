// SPDX-License-Identifier: GPL-2.0
/*
 * ntirpc_driver's clients (ntirpc_clients.h): each connects to the
 * service's socket over and over, makes one to three NULL calls, and
 * closes the connection, sometimes before the reply, sometimes leaving
 * it idle for ntirpc's cleaner; they count what they met in clients.
 * They use no ntirpc API: only the socket, as a remote client would.
 */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ntirpc_clients.h"

struct clients clients;

static long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* A NULL call, record marked */
int call(int fd, uint32_t xid)
{
	uint32_t m[11] = {
		htonl(0x80000000 | 40), htonl(xid), 0, htonl(2),
		htonl(PROG), htonl(VERS), 0, 0, 0, 0, 0
	};

	return write(fd, m, sizeof(m)) == sizeof(m) ? 0 : -1;
}

int reply(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char b[256];

	if (poll(&p, 1, 500) != 1)
		return -1;
	return read(fd, b, sizeof(b)) > 0 ? 0 : -2;	/* closed on us */
}

int client_connect(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	if (fd < 0) {
		/*
		 * The fd limit reached: ntirpc without 0001 leaks a transport's
		 * fd with each failed write, and a guest's 1024 fill up within
		 * the run.  The client waits for fds, as for a refused connect;
		 * the leak shows in alive= at the end.
		 */
		if (errno == EMFILE || errno == ENFILE)
			return -1;
		fprintf(stderr, "ntirpc_driver: client socket: %s\n",
			strerror(errno));
		exit(2);
	}
	strcpy(sa.sun_path, clients.path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

void *client(void *arg)
{
	unsigned int seed = (unsigned int)(long)arg;
	int idle[4] = { -1, -1, -1, -1 };
	long idle_t[4] = { 0 };
	uint32_t xid = seed << 20;
	int i, n;

	while (!atomic_load(clients.stop) &&
	       (!clients.maxconns || atomic_load(&clients.conns) < clients.maxconns)) {
		int fd = client_connect();
		int r = clients.repro ? 0 : rand_r(&seed) % 16;

		if (fd < 0) {
			usleep(1000);
			continue;
		}
		atomic_fetch_add(&clients.conns, 1);
		n = 1 + rand_r(&seed) % 3;
		for (i = 0; i < n; i++) {
			if (call(fd, ++xid))
				break;
			if (r == 0)
				break;	/* close before the reply */
			switch (reply(fd)) {
			case 0:
				atomic_fetch_add(&clients.replies, 1);
				break;
			case -2:
				/* closed by the server before any reply: the
				 * transport never made (see the header) */
				if (!i)
					atomic_fetch_add(&clients.refused, 1);
				break;
			}
		}
		if (r == 1) {
			/* left idle: the cleaner's, or closed in 3 s */
			i = rand_r(&seed) % 4;
			if (idle[i] >= 0)
				close(idle[i]);
			idle[i] = fd;
			idle_t[i] = mono_ns();
			continue;
		}
		close(fd);
		for (i = 0; i < 4; i++)
			if (idle[i] >= 0 &&
			    mono_ns() - idle_t[i] > 3000000000L) {
				close(idle[i]);
				idle[i] = -1;
			}
	}
	for (i = 0; i < 4; i++)
		if (idle[i] >= 0)
			close(idle[i]);
	return NULL;
}
