// SPDX-License-Identifier: GPL-2.0
/*
 * glusterfs_driver - GlusterFS's epoll event pool under churn, through its
 * own API (gf_event_pool_new, gf_event_register, gf_event_handled,
 * gf_event_unregister_close, gf_event_dispatch), as patches/glusterfs/
 * leaves it.
 *
 * A connection is a socket pair: one end registered with the pool, the
 * other written by the writers. Its state (struct conn) is what the
 * handler gets as data. The pool's pollers run the handler; the churners
 * unregister connections at random while events fire and register new
 * ones in their place. gf_event_unregister_close() answers 1 when the
 * kernel's EPOLL_CTL_DISABLE said the fd was idle: the connection's state
 * is released at once (the DISABLE path). Any other answer is the
 * fallback: the kernel lacks the op, or a poller holds the event, and the
 * pool's API has no way to say when its handler is done, so the state is
 * held until the pool is torn down.
 *
 * Released state goes to a quarantine: it is poisoned and kept, never
 * reused, and every handler entry and exit checks it. A touch of released state is counted; any one fails the run.
 *
 * -b breaks the DISABLE path on purpose (the negative control): every
 * connection is released as soon as it is unregistered, whatever the
 * answer, so a handler running on it is caught.
 *
 * Output: one summary line,
 *   glusterfs_driver: unregisters=U disable=D fallback=F touches=T
 *     held_bytes=B release_us=R events=E
 * held_bytes: the state the fallback holds when the churn stops;
 * release_us: the mean time from the unregister call to the release, on
 * the DISABLE path. Exit status: 0 no touch, 1 a touch, 2 a setup error.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "glusterfs/glusterfs.h"
#include "glusterfs/globals.h"
#include "glusterfs/mem-pool.h"
#include "glusterfs/gf-event.h"

#define CONN_LIVE	0x600dcafeU
#define CONN_POISON	0xdeadbeefU

struct conn {
	unsigned int tag;
	int fd;			/* registered with the pool */
	int peer;		/* written by the writers */
	int idx;
	size_t size;
	char *buf;		/* the per-connection buffers */
	struct conn *next;	/* on the held list, or the quarantine */
};

static struct event_pool *pool;
static int nconns = 64, nthreads = 8, total = 20000, broken;

/* The live connections; a slot's lock keeps a writer off a connection
 * that a churner is taking away */
static struct slot {
	pthread_mutex_t lock;
	struct conn *conn;
} *slots;

static atomic_long unregisters, disable_path, fallback_path, touches, events;
static atomic_long release_ns;
static atomic_int stop;

static pthread_mutex_t lists_lock = PTHREAD_MUTEX_INITIALIZER;
static struct conn *held, *quarantine;
static long held_bytes;

static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Poison the state and keep it, never reused: a later touch reads the
 * poison (the buffers are kept too, so that a handler caught in them
 * writes to memory no one else has) */
static void release(struct conn *c)
{
	__atomic_store_n(&c->tag, CONN_POISON, __ATOMIC_RELAXED);
	memset(c->buf, 0x6b, c->size);
	pthread_mutex_lock(&lists_lock);
	c->next = quarantine;
	quarantine = c;
	pthread_mutex_unlock(&lists_lock);
}

static void hold(struct conn *c)
{
	pthread_mutex_lock(&lists_lock);
	c->next = held;
	held = c;
	held_bytes += sizeof(*c) + c->size;
	pthread_mutex_unlock(&lists_lock);
}

static int checked(struct conn *c)
{
	if (__atomic_load_n(&c->tag, __ATOMIC_RELAXED) == CONN_LIVE)
		return 1;
	atomic_fetch_add(&touches, 1);
	return 0;
}

static void handler(int fd, int idx, int gen, void *data, int poll_in,
		    int poll_out, int poll_err, int thread_died)
{
	struct conn *c = data;
	char b[64];
	size_t i;

	(void)poll_out;
	(void)poll_err;
	if (thread_died || !checked(c))
		return;
	atomic_fetch_add(&events, 1);
	if (poll_in)
		while (read(fd, b, sizeof(b)) > 0)
			;
	/* the handler's work on the connection's buffers */
	for (i = 0; i < c->size; i += 64)
		c->buf[i]++;
	if (!checked(c))
		return;
	/* the last touch of c: after this another poller may own it */
	gf_event_handled(pool, fd, idx, gen);
}

static struct conn *conn_new(void)
{
	struct conn *c = calloc(1, sizeof(*c));
	int sv[2];

	if (!c || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv)) {
		perror("glusterfs_driver: connection");
		exit(2);
	}
	c->tag = CONN_LIVE;
	c->fd = sv[0];
	c->peer = sv[1];
	c->size = 256 + (size_t)(rand() % 16) * 256;
	c->buf = calloc(1, c->size);
	if (!c->buf) {
		perror("glusterfs_driver: buffer");
		exit(2);
	}
	c->idx = gf_event_register(pool, c->fd, handler, c, 1, 0, 0);
	if (c->idx < 0) {
		fprintf(stderr, "glusterfs_driver: gf_event_register failed\n");
		exit(2);
	}
	return c;
}

/* Take c out of the pool: 1 from the pool is the DISABLE path */
static void conn_unregister(struct conn *c)
{
	long t0 = now_ns();
	int ret;

	ret = gf_event_unregister_close(pool, c->fd, c->idx);
	close(c->peer);
	atomic_fetch_add(&unregisters, 1);
	if (ret == 1)
		atomic_fetch_add(&disable_path, 1);
	else
		atomic_fetch_add(&fallback_path, 1);
	if (ret == 1 || broken) {
		release(c);
		atomic_fetch_add(&release_ns, now_ns() - t0);
	} else {
		hold(c);
	}
}

static void *writer(void *arg)
{
	unsigned int seed = (unsigned int)(long)arg;

	while (!atomic_load(&stop)) {
		struct slot *s = &slots[rand_r(&seed) % nconns];

		pthread_mutex_lock(&s->lock);
		if (s->conn && write(s->conn->peer, "x", 1) < 0 &&
		    errno != EAGAIN) {
			perror("glusterfs_driver: write");
			exit(2);
		}
		pthread_mutex_unlock(&s->lock);
	}
	return NULL;
}

static void *churner(void *arg)
{
	unsigned int seed = (unsigned int)(long)arg;

	while (atomic_load(&unregisters) < total) {
		struct slot *s = &slots[rand_r(&seed) % nconns];
		struct conn *c;

		pthread_mutex_lock(&s->lock);
		c = s->conn;
		s->conn = NULL;
		pthread_mutex_unlock(&s->lock);
		if (!c)
			continue;
		conn_unregister(c);
		c = conn_new();
		pthread_mutex_lock(&s->lock);
		s->conn = c;
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

int main(int argc, char **argv)
{
	pthread_t w[2], ch[2], d;
	glusterfs_ctx_t *ctx;
	long releases;
	int opt, i;

	while ((opt = getopt(argc, argv, "bn:t:u:")) != -1) {
		switch (opt) {
		case 'b':
			broken = 1;
			break;
		case 'n':
			nconns = atoi(optarg);
			break;
		case 't':
			nthreads = atoi(optarg);
			break;
		case 'u':
			total = atoi(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: %s [-b] [-n conns] [-t pollers] [-u unregisters]\n",
				argv[0]);
			return 2;
		}
	}

	mem_pools_init();
	ctx = glusterfs_ctx_new();
	if (!ctx || glusterfs_globals_init(ctx)) {
		fprintf(stderr, "glusterfs_driver: no glusterfs context\n");
		return 2;
	}
	THIS->ctx = ctx;
	pool = gf_event_pool_new(16384, nthreads);
	if (!pool) {
		fprintf(stderr, "glusterfs_driver: gf_event_pool_new failed\n");
		return 2;
	}
	slots = calloc(nconns, sizeof(*slots));
	if (!slots)
		return 2;
	for (i = 0; i < nconns; i++) {
		pthread_mutex_init(&slots[i].lock, NULL);
		slots[i].conn = conn_new();
	}
	if (pthread_create(&d, NULL, dispatcher, NULL))
		return 2;
	for (i = 0; i < 2; i++)
		if (pthread_create(&w[i], NULL, writer, (void *)(long)(i + 1)) ||
		    pthread_create(&ch[i], NULL, churner, (void *)(long)(i + 7)))
			return 2;
	for (i = 0; i < 2; i++)
		pthread_join(ch[i], NULL);
	atomic_store(&stop, 1);
	for (i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	/* let handlers that were running finish, on held state */
	usleep(200000);

	releases = atomic_load(&disable_path) + (broken ? atomic_load(&fallback_path) : 0);
	printf("glusterfs_driver: unregisters=%ld disable=%ld fallback=%ld touches=%ld held_bytes=%ld release_us=%.1f events=%ld%s\n",
	       atomic_load(&unregisters), atomic_load(&disable_path),
	       atomic_load(&fallback_path), atomic_load(&touches), held_bytes,
	       releases ? atomic_load(&release_ns) / 1000.0 / releases : 0.0,
	       atomic_load(&events), broken ? " (broken: -b)" : "");
	fflush(stdout);
	/* the pollers never return: leave without tearing the pool down */
	_exit(atomic_load(&touches) ? 1 : 0);
}
