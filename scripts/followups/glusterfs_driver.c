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
 * ones in their place, with gf_event_unregister_close_release(): the
 * pool calls the driver's release with the connection's state where
 * GlusterFS itself closes the fd, at the last reference to its slot
 * (patches/glusterfs/0002), on every kernel: the fallback. Where the
 * kernel's EPOLL_CTL_DISABLE said the fd was idle, the pool has called it
 * before it returns 1 (0003): the DISABLE path.
 *
 * Released state goes to a quarantine: it is poisoned and kept, never
 * reused, and every handler entry and exit checks it. A touch of released
 * state is counted; any one fails the run.
 *
 * -b breaks the release on purpose (the negative control): every
 * connection is released as soon as its unregister returns, whatever the
 * answer, so a handler running on it is caught.
 *
 * Output: one summary line,
 *   glusterfs_driver: unregisters=U disable=D fallback=F touches=T
 *     at_once_disable=A at_once_fallback=A unreleased=N
 *     held_max=B held_mean=B held_after=B
 *     disable_p50_us=P disable_p99_us=P fallback_p50_us=P fallback_p99_us=P
 *     events=E
 * at_once_*: releases that came before the unregister returned, per path;
 * held_*: the state unregistered and not yet released (what the driver
 * holds beyond its live connections), sampled every millisecond during
 * the churn (max, mean) and once 200 ms after it; unreleased: connections
 * still not released then; *_p50_us, *_p99_us: the time from the
 * unregister call to the release, per path. Exit status: 0 no touch, 1 a
 * touch, 2 a setup error.
 */
#include <string.h>
#include <sys/socket.h>

#include "glusterfs_pool.h"

#define CONN_LIVE	0x600dcafeU
#define CONN_POISON	0xdeadbeefU

struct conn {
	unsigned int tag;
	int fd;			/* registered with the pool */
	int peer;		/* written by the writers */
	int idx;
	size_t size;
	char *buf;		/* the per-connection buffers */
	long t_unreg;		/* when its unregister was called, ns */
	long delay;		/* from then to the release, ns */
	atomic_int released;
	int disable;		/* the unregister answered 1 */
	int at_once;		/* released before the unregister returned */
	struct conn *next;	/* on the quarantine */
};

static int total = 20000, broken;

static atomic_long unregisters, disable_path, fallback_path, touches, events;
static atomic_long held_bytes, unreleased;

static pthread_mutex_t lists_lock = PTHREAD_MUTEX_INITIALIZER;
static struct conn *quarantine;

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

/* The pool's release callback (and -b's): once per connection */
static void conn_release(void *data)
{
	struct conn *c = data;

	if (atomic_exchange(&c->released, 1))
		return;
	c->delay = now_ns() - c->t_unreg;
	atomic_fetch_sub(&held_bytes, (long)(sizeof(*c) + c->size));
	atomic_fetch_sub(&unreleased, 1);
	release(c);
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

static struct conn *conn_new(int *peer)
{
	struct conn *c = calloc(1, sizeof(*c));
	int sv[2];

	if (!c || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv)) {
		perror("glusterfs_driver: connection");
		exit(2);
	}
	c->tag = CONN_LIVE;
	c->fd = sv[0];
	c->peer = *peer = sv[1];
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
	int ret;

	atomic_fetch_add(&held_bytes, (long)(sizeof(*c) + c->size));
	atomic_fetch_add(&unreleased, 1);
	c->t_unreg = now_ns();
	ret = gf_event_unregister_close_release(pool, c->fd, c->idx,
						conn_release);
	if (ret < 0) {
		fprintf(stderr, "glusterfs_driver: gf_event_unregister_close_release failed\n");
		exit(2);
	}
	c->at_once = atomic_load(&c->released);
	c->disable = ret == 1;
	close(c->peer);
	atomic_fetch_add(&unregisters, 1);
	if (ret == 1)
		atomic_fetch_add(&disable_path, 1);
	else
		atomic_fetch_add(&fallback_path, 1);
	if (broken)
		conn_release(c);
}

static void *churner(void *arg)
{
	unsigned int seed = (unsigned int)(long)arg;

	while (atomic_load(&unregisters) < total) {
		struct slot *s = &slots[rand_r(&seed) % nconns];
		struct conn *c = slot_take(s);
		int peer;

		if (!c)
			continue;
		conn_unregister(c);
		c = conn_new(&peer);
		slot_put(s, c, peer);
	}
	return NULL;
}

/* The state held, unregistered and not yet released, every millisecond */
static long held_max, held_sum, held_samples;

static void *sampler(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		long b = atomic_load(&held_bytes);

		if (b > held_max)
			held_max = b;
		held_sum += b;
		held_samples++;
		usleep(1000);
	}
	return NULL;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* p50 and p99 of the delays of the released connections on one path, µs */
static void percentiles(int disable, double *p50, double *p99)
{
	long *d, n = 0, max = atomic_load(&unregisters) + 1;
	struct conn *c;

	*p50 = *p99 = -1;
	d = malloc(max * sizeof(*d));
	if (!d)
		return;
	pthread_mutex_lock(&lists_lock);
	for (c = quarantine; c && n < max; c = c->next)
		if (c->disable == disable)
			d[n++] = c->delay;
	pthread_mutex_unlock(&lists_lock);
	if (n) {
		qsort(d, n, sizeof(*d), cmp_long);
		*p50 = d[(n - 1) / 2] / 1000.0;
		*p99 = d[(n * 99 - 1) / 100] / 1000.0;
	}
	free(d);
}

static long at_once(int disable)
{
	struct conn *c;
	long n = 0;

	pthread_mutex_lock(&lists_lock);
	for (c = quarantine; c; c = c->next)
		n += c->disable == disable && c->at_once;
	pthread_mutex_unlock(&lists_lock);
	return n;
}

int main(int argc, char **argv)
{
	pthread_t w[2], ch[2], sm;
	double dp50, dp99, fp50, fp99;
	int opt, i;

	nconns = 64;
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

	if (pool_start("glusterfs_driver", conn_new))
		return 2;
	if (pthread_create(&sm, NULL, sampler, NULL))
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
	pthread_join(sm, NULL);
	/* let handlers that were running finish, and their releases come */
	usleep(200000);

	percentiles(1, &dp50, &dp99);
	percentiles(0, &fp50, &fp99);
	printf("glusterfs_driver: unregisters=%ld disable=%ld fallback=%ld touches=%ld at_once_disable=%ld at_once_fallback=%ld unreleased=%ld held_max=%ld held_mean=%ld held_after=%ld disable_p50_us=%.1f disable_p99_us=%.1f fallback_p50_us=%.1f fallback_p99_us=%.1f events=%ld%s\n",
	       atomic_load(&unregisters), atomic_load(&disable_path),
	       atomic_load(&fallback_path), atomic_load(&touches),
	       at_once(1), at_once(0), atomic_load(&unreleased), held_max,
	       held_samples ? held_sum / held_samples : 0,
	       atomic_load(&held_bytes), dp50, dp99, fp50, fp99,
	       atomic_load(&events), broken ? " (broken: -b)" : "");
	fflush(stdout);
	/* the pollers never return: leave without tearing the pool down */
	_exit(atomic_load(&touches) ? 1 : 0);
}
