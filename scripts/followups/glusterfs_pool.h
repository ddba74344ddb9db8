/* SPDX-License-Identifier: GPL-2.0 */
/*
 * glusterfs_pool.h - what the GlusterFS programs here share: GlusterFS's
 * epoll event pool, set up through its own API, its dispatcher thread, and
 * the table of live connections that the writers and a program's churners
 * share.  Each program (glusterfs_driver.c, glusterfs_slot_race.c) has its
 * own struct conn, handler and churner; a slot keeps the end the writers
 * write beside the connection, so the writers need neither.
 *
 * Locking: a slot's lock covers its conn and peer.  A churner takes the
 * connection out of its slot under it (slot_take()) before it unregisters
 * it, so no writer writes to a peer that is being closed.
 */
#ifndef GLUSTERFS_POOL_H
#define GLUSTERFS_POOL_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "glusterfs/glusterfs.h"
#include "glusterfs/globals.h"
#include "glusterfs/mem-pool.h"
#include "glusterfs/gf-event.h"

struct conn;

struct slot {
	pthread_mutex_t lock;
	struct conn *conn;	/* NULL while a churner replaces it */
	int peer;		/* the end the writers write */
};

static struct event_pool *pool;
static struct slot *slots;
static int nconns, nthreads = 8;
static atomic_int stop;		/* the writers stop */

static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* The connection of slot s, taken out of it: NULL if another churner has it */
static struct conn *slot_take(struct slot *s)
{
	struct conn *c;

	pthread_mutex_lock(&s->lock);
	c = s->conn;
	s->conn = NULL;
	pthread_mutex_unlock(&s->lock);
	return c;
}

static void slot_put(struct slot *s, struct conn *c, int peer)
{
	pthread_mutex_lock(&s->lock);
	s->conn = c;
	s->peer = peer;
	pthread_mutex_unlock(&s->lock);
}

/* A writer: a byte to a live connection picked at random, until stop */
static void *writer(void *arg)
{
	unsigned int seed = (unsigned int)(long)arg;

	while (!atomic_load(&stop)) {
		struct slot *s = &slots[rand_r(&seed) % nconns];

		pthread_mutex_lock(&s->lock);
		if (s->conn && write(s->peer, "x", 1) < 0 && errno != EAGAIN) {
			perror("write");
			exit(2);
		}
		pthread_mutex_unlock(&s->lock);
	}
	return NULL;
}

static void *dispatcher(void *arg)
{
	(void)arg;
	gf_event_dispatch(pool);
	return NULL;
}

/*
 * The pool with nthreads pollers, dispatched from a thread of its own, and
 * nconns connections from new_conn(), which gives each one's peer.  0, or
 * 2 with the reason on stderr: the exit status of a setup error.
 */
static int pool_start(const char *prog, struct conn *(*new_conn)(int *peer))
{
	glusterfs_ctx_t *ctx;
	pthread_t d;
	int i, peer;

	mem_pools_init();
	ctx = glusterfs_ctx_new();
	if (!ctx || glusterfs_globals_init(ctx)) {
		fprintf(stderr, "%s: no glusterfs context\n", prog);
		return 2;
	}
	THIS->ctx = ctx;
	pool = gf_event_pool_new(16384, nthreads);
	slots = calloc(nconns, sizeof(*slots));
	if (!pool || !slots) {
		fprintf(stderr, "%s: no event pool\n", prog);
		return 2;
	}
	for (i = 0; i < nconns; i++) {
		pthread_mutex_init(&slots[i].lock, NULL);
		slots[i].conn = new_conn(&peer);
		slots[i].peer = peer;
	}
	if (pthread_create(&d, NULL, dispatcher, NULL)) {
		fprintf(stderr, "%s: no dispatcher thread\n", prog);
		return 2;
	}
	return 0;
}

#endif
