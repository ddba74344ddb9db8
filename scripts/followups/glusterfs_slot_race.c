// SPDX-License-Identifier: GPL-2.0
/*
 * glusterfs_slot_race - the reproducer of patches/glusterfs/0001: a race
 * in GlusterFS's epoll event pool, on any kernel, through the pool's own
 * API alone (gf_event_pool_new, gf_event_register, gf_event_handled,
 * gf_event_unregister_close, gf_event_dispatch), so that it builds against
 * libglusterfs with the queue and without it.
 *
 * A poller that epoll_wait() handed an fd's event takes a slot reference
 * without any lock; if the fd is unregistered and its slot given to the
 * next fd before the poller checks the generation, the reuse wipes that
 * reference, and the poller's unref frees the new fd's slot while it is
 * registered. The pool then aborts on assert(slot->fd == fd), in
 * unregister or register. Here few fds are registered and unregistered
 * as fast as possible while writers keep their events firing and many
 * pollers take them, so the slots are reused all the time.
 *
 * The churn runs in a child; the parent reports how long it lasted:
 *   glusterfs_slot_race: failed after S s (signal N) unregisters=U
 *   glusterfs_slot_race: clean for S s unregisters=U
 * (the child reports its count through a pipe, once a second and at the
 * end). A handler called with another fd's data is a failure too (exit 1).
 * Exit status: 0 clean for the time given (-s, 10 s by default), 1 a
 * failure, 2 a setup error.
 */
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "glusterfs_pool.h"

struct conn {
	int fd;			/* registered with the pool */
	int peer;		/* written by the writers */
	int idx;
};

static double seconds = 10;
static atomic_long unregisters, wrong;

static double now(void)
{
	return now_ns() / 1e9;
}

static void handler(int fd, int idx, int gen, void *data, int poll_in,
		    int poll_out, int poll_err, int thread_died)
{
	struct conn *c = data;
	char b[64];

	(void)poll_out;
	(void)poll_err;
	if (thread_died)
		return;
	/* the slot's fd and data belong together */
	if (c->fd != fd)
		atomic_fetch_add(&wrong, 1);
	if (poll_in)
		while (read(fd, b, sizeof(b)) > 0)
			;
	gf_event_handled(pool, fd, idx, gen);
}

static struct conn *conn_new(int *peer)
{
	struct conn *c = calloc(1, sizeof(*c));
	int sv[2];

	if (!c || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv)) {
		perror("glusterfs_slot_race: connection");
		exit(2);
	}
	c->fd = sv[0];
	c->peer = *peer = sv[1];
	c->idx = gf_event_register(pool, c->fd, handler, c, 1, 0, 0);
	if (c->idx < 0) {
		fprintf(stderr, "glusterfs_slot_race: gf_event_register failed\n");
		exit(2);
	}
	return c;
}

/* The state is never freed: a handler late on it reads it still, so the
 * only failures are the pool's own */
static void *churner(void *arg)
{
	unsigned int seed = (unsigned int)(long)arg;

	while (!atomic_load(&stop)) {
		struct slot *s = &slots[rand_r(&seed) % nconns];
		struct conn *c = slot_take(s);
		int peer;

		if (!c)
			continue;
		gf_event_unregister_close(pool, c->fd, c->idx);
		close(c->peer);
		atomic_fetch_add(&unregisters, 1);
		c = conn_new(&peer);
		slot_put(s, c, peer);
	}
	return NULL;
}

/* The child: the pool under churn until the time is up; its count of
 * unregisters goes to the parent through fd out */
static int churn(int out)
{
	pthread_t w[2], ch[2];
	double end = now() + seconds;
	long n;
	int i;

	if (pool_start("glusterfs_slot_race", conn_new))
		return 2;
	for (i = 0; i < 2; i++)
		if (pthread_create(&w[i], NULL, writer, (void *)(long)(i + 1)) ||
		    pthread_create(&ch[i], NULL, churner, (void *)(long)(i + 7)))
			return 2;
	while (now() < end && !atomic_load(&wrong)) {
		usleep(100000);
		n = atomic_load(&unregisters);
		(void)!write(out, &n, sizeof(n));
	}
	atomic_store(&stop, 1);
	for (i = 0; i < 2; i++)
		pthread_join(ch[i], NULL);
	n = atomic_load(&unregisters);
	(void)!write(out, &n, sizeof(n));
	/* the pollers never return: leave without tearing the pool down */
	_exit(atomic_load(&wrong) ? 1 : 0);
}

int main(int argc, char **argv)
{
	double t0, took;
	long n, count = 0;
	int opt, p[2], status;
	pid_t pid;

	nconns = 4;
	while ((opt = getopt(argc, argv, "n:s:t:")) != -1) {
		switch (opt) {
		case 'n':
			nconns = atoi(optarg);
			break;
		case 's':
			seconds = atof(optarg);
			break;
		case 't':
			nthreads = atoi(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: %s [-n conns] [-s seconds] [-t pollers]\n",
				argv[0]);
			return 2;
		}
	}
	if (pipe(p))
		return 2;
	t0 = now();
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		close(p[0]);
		return churn(p[1]);
	}
	close(p[1]);
	while (read(p[0], &n, sizeof(n)) == sizeof(n))
		count = n;
	if (waitpid(pid, &status, 0) != pid)
		return 2;
	took = now() - t0;
	if (WIFSIGNALED(status)) {
		printf("glusterfs_slot_race: failed after %.2f s (signal %d) unregisters=%ld\n",
		       took, WTERMSIG(status), count);
		return 1;
	}
	if (WEXITSTATUS(status) == 1) {
		printf("glusterfs_slot_race: failed after %.2f s (a handler got another fd's data) unregisters=%ld\n",
		       took, count);
		return 1;
	}
	if (WEXITSTATUS(status)) {
		printf("glusterfs_slot_race: setup error (exit %d)\n",
		       WEXITSTATUS(status));
		return 2;
	}
	printf("glusterfs_slot_race: clean for %.2f s unregisters=%ld\n",
	       took, count);
	return 0;
}
