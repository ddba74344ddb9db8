// SPDX-License-Identifier: GPL-2.0
/*
 * ntirpc_driver - ntirpc's svc_vc transports under churn, through its own
 * API (svc_init, svc_vc_ncreatef, svc_rqst_new_evchan,
 * svc_rqst_evchan_reg, rendezvous_cb/process_cb, svc_sendreply,
 * SVC_DESTROY), as patches/ntirpc/ leaves src/svc_rqst.c or without it.
 *
 * The server: one AF_UNIX listener registered on its own event channel
 * without affinity, so that ntirpc spreads the accepted transports round
 * robin over its event channels (-c), each channel's epoll set worked
 * by ntirpc's own svc_rqst_epoll_loop on its work pool, as in
 * NFS-Ganesha.  Every call is answered with a void reply.  idle_timeout
 * is 1 s, so svc_rqst_clean_idle() (run by the loop every 1024 wakeups)
 * destroys the transports idle that long.
 *
 * The load: clients (-t threads, ntirpc_clients.c) connect, make 1 to 3
 * NULL calls and close, some before their reply arrives, some after
 * leaving the connection idle for the cleaner; destroyers (-d threads) SVC_DESTROY
 * live transports at random from the server side while their events
 * fire.  The driver holds its own reference on every transport it is
 * told of (rendezvous_cb), and drops it when it destroys the transport
 * or sees it destroyed: that is how a user such as NFS-Ganesha keeps a
 * handle, and it makes any reference ntirpc drops twice show as a free
 * under the driver's reference (ASan: heap-use-after-free).
 *
 * What a field crash would be, counted: ASan's reports (its own exit, 1
 * here, with the report on stderr), transports not freed and fds still
 * open when the churn stops and every client is gone (10 s after), and reference
 * counts seen below zero (svc_release_it() lets one go negative, and
 * svc_vc_destroy_task() then never frees the transport).
 *
 * epoll_ctl() and epoll_wait() are the driver's: they pass every call to
 * the kernel, note which fds ntirpc has been handed an event for and not
 * rearmed yet, and count the EPOLL_CTL_DISABLE (op 4) answers ntirpc
 * gets, so that the path taken is counted without a counter in the
 * library.  del_held counts EPOLL_CTL_DELs of the fallback that came
 * while a thread held the fd's event (the unhook won ntirpc's flag race
 * against it); dis0_held counts a DISABLE answered 0 for a held event,
 * which the kernel must never do.
 *
 * -r is the reproducer of the leak patches/ntirpc/0001 fixes: one client,
 * no destroyer, every connection closed right after its call, before the
 * reply (with -n 1, one connection).
 *
 * The negative controls: -b ignores the answer (EBUSY reported to ntirpc
 * as 0); -B drops the reference of the thread holding the event at the
 * unhook that raced it (EBUSY, or a DEL while the event is held), what a
 * second owner would do.  -B must be caught; -b is reported as it is.
 *
 * Output: one summary line (-l L: "ntirpc_driver[L]:"),
 *   ntirpc_driver: conns=C calls=K replies=R refused=J destroys=D created=X
 *     freed=F alive=A fds=N negref=G freed_held=U
 *     disable=0:Z,EBUSY:B,EALREADY:E,
 *     other:O del_held=H dis0_held=W dropped=X free_us_p50=P
 *     free_us_p99=Q rss_kb=S secs=T
 * alive: transports not freed when the churn stops; fds: descriptors
 * open then beyond those before the churn; freed_held: transports ntirpc
 * freed while the driver still held its reference (a use after free to
 * come, seen without ASan); free_us: time from the
 * driver's SVC_DESTROY to ntirpc's free of that transport; conns counts
 * the clients' connects; refused: connections the server closed before
 * their first reply, destroyed by the driver or the cleaner first, or
 * closed by svc_vc_rendezvous() without a transport (it does that when
 * svc_xprt_lookup() finds the accepted fd still in its tree, as in
 * nfs-ganesha/ntirpc#261 and #265; the driver does not tell these apart).  Exit
 * status: 0 nothing held and no negative count, 1 a fault (ASan's reports
 * exit 1 too), 2 a setup error.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/svc.h>
#include <rpc/svc_rqst.h>

#include "ntirpc_clients.h"

#ifndef EPOLL_CTL_DISABLE
#define EPOLL_CTL_DISABLE 4
#endif

#define MAXX	4096

static int nchan = 4, nclients = 4, ndestroyers = 1, secs = 5, broken;
static const char *label;

static atomic_long calls, destroys, created, freed, negref;
static atomic_long freed_held;
static atomic_long dis_ok, dis_busy, dis_already, dis_other;
static atomic_int stop;

/* The transports the driver holds a reference on */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static SVCXPRT *reg[MAXX];
static int nreg;

/* Every transport not yet freed: read under the lock, the free callback
 * takes it before ntirpc frees the memory */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
struct live {
	SVCXPRT *xprt;
	long t_destroy;
};
static struct live *live;
static int nlive, maxlive;

static long *free_ns;
static atomic_long nfree_ns;
#define MAXFREE 1000000

static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void fail(const char *what)
{
	fprintf(stderr, "ntirpc_driver: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* What user space sees of each fd in ntirpc's sets: an event handed out
 * by epoll_wait() and not yet rearmed (EPOLL_CTL_MOD) or re-added */
#define MAXFD 65536
static atomic_char out[MAXFD];
static atomic_long del_held, dis0_held, dropped;

static void drop_both(int fd);

/* ntirpc's epoll_wait(): which fds it has been handed */
int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
	long r = syscall(SYS_epoll_wait, epfd, ev, max, timeout);
	int i;

	for (i = 0; i < r; i++)
		if (ev[i].data.fd >= 0 && ev[i].data.fd < MAXFD)
			atomic_store(&out[ev[i].data.fd], 1);
	return r;
}

/* ntirpc's epoll_ctl(), counted */
int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	int held = fd >= 0 && fd < MAXFD && atomic_load(&out[fd]);
	long r = syscall(SYS_epoll_ctl, epfd, op, fd, ev);
	int e = errno;

	if (!r && (op == EPOLL_CTL_MOD || op == EPOLL_CTL_ADD) && fd < MAXFD)
		atomic_store(&out[fd], 0);
	if (op == EPOLL_CTL_DEL && !r && held) {
		/* the fallback: an unhook that won the flag race against
		 * the thread holding the event */
		atomic_fetch_add(&del_held, 1);
		if (broken == 2)
			drop_both(fd);
	}
	if (op != EPOLL_CTL_DISABLE)
		return r;
	if (!r) {
		atomic_fetch_add(&dis_ok, 1);
		if (held)	/* 0 for an event user space holds */
			atomic_fetch_add(&dis0_held, 1);
	} else if (e == EBUSY) {
		atomic_fetch_add(&dis_busy, 1);
		if (broken == 2)
			drop_both(fd);
	} else if (e == EALREADY) {
		atomic_fetch_add(&dis_already, 1);
	} else {
		atomic_fetch_add(&dis_other, 1);
	}
	errno = e;
	if (r && e == EBUSY && broken == 1)
		return 0;	/* -b: the answer ignored, on purpose */
	return r;
}

/* Take a registered transport out of reg[], the driver's ref with it */
static SVCXPRT *reg_take(int i)
{
	SVCXPRT *xprt = reg[i];

	reg[i] = reg[--nreg];
	return xprt;
}

static int live_find(SVCXPRT *xprt)
{
	int i;

	for (i = 0; i < nlive; i++)
		if (live[i].xprt == xprt)
			return i;
	return -1;
}

/* -B: the unhooking thread drops the reference of the thread that holds
 * the event as well (what a second owner would do): a count that must
 * go below zero, or a free under a holder */
static void drop_both(int fd)
{
	int i;

	pthread_mutex_lock(&live_lock);
	for (i = 0; i < nlive; i++)
		if (live[i].xprt->xp_fd == fd) {
			__atomic_fetch_sub(&live[i].xprt->xp_refcnt, 1,
					   __ATOMIC_SEQ_CST);
			atomic_fetch_add(&dropped, 1);
			break;
		}
	pthread_mutex_unlock(&live_lock);
}

/* Called by svc_vc_destroy_task() before it frees the transport */
static enum xprt_stat free_user_data(SVCXPRT *xprt)
{
	long t = now_ns();
	int i;

	if (xprt->xp_refcnt < 0)
		atomic_fetch_add(&negref, 1);
	/* a free under the driver's own reference: a use after free to
	 * come, caught here without ASan (the guest's static build) */
	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < nreg; i++)
		if (reg[i] == xprt) {
			atomic_fetch_add(&freed_held, 1);
			reg_take(i);
			break;
		}
	pthread_mutex_unlock(&reg_lock);
	pthread_mutex_lock(&live_lock);
	i = live_find(xprt);
	if (i >= 0) {
		if (live[i].t_destroy) {
			long n = atomic_fetch_add(&nfree_ns, 1);

			if (n < MAXFREE)
				free_ns[n] = t - live[i].t_destroy;
		}
		live[i] = live[--nlive];
	}
	pthread_mutex_unlock(&live_lock);
	atomic_fetch_add(&freed, 1);
	return XPRT_DESTROYED;
}

static enum xprt_stat process(struct svc_req *req)
{
	atomic_fetch_add(&calls, 1);
	req->rq_msg.RPCM_ack.ar_results.where = NULL;
	req->rq_msg.RPCM_ack.ar_results.proc = (xdrproc_t) xdr_void;
	return svc_sendreply(req);
}

static enum xprt_stat rendezvous(SVCXPRT *xprt)
{
	static atomic_int set;

	/* (svc_vc_control() takes the function itself, not a pointer to
	 * it; the ops are shared by every accepted transport) */
	if (!atomic_exchange(&set, 1))
		SVC_CONTROL(xprt, SVCSET_XP_FREE_USER_DATA,
			    (void *)free_user_data);
	xprt->xp_dispatch.process_cb = process;
	atomic_fetch_add(&created, 1);
	pthread_mutex_lock(&live_lock);
	if (nlive == maxlive) {
		maxlive = maxlive ? 2 * maxlive : 1024;
		live = realloc(live, maxlive * sizeof(*live));
		if (!live)
			fail("live table");
	}
	live[nlive].xprt = xprt;
	live[nlive++].t_destroy = 0;
	pthread_mutex_unlock(&live_lock);
	/* the driver's own handle on it */
	pthread_mutex_lock(&reg_lock);
	if (nreg < MAXX) {
		SVC_REF(xprt, SVC_REF_FLAG_NONE);
		reg[nreg++] = xprt;
	}
	pthread_mutex_unlock(&reg_lock);
	return XPRT_IDLE;
}

static struct svc_req *alloc_req(SVCXPRT *xprt, XDR *xdrs)
{
	struct svc_req *req = calloc(1, sizeof(*req));

	if (!req)
		fail("request");
	SVC_REF(xprt, SVC_REF_FLAG_NONE);
	req->rq_xprt = xprt;
	req->rq_xdrs = xdrs;
	req->rq_refcnt = 1;
	return req;
}

static void free_req(struct svc_req *req, enum xprt_stat stat)
{
	(void)stat;
	SVC_RELEASE(req->rq_xprt, SVC_RELEASE_FLAG_NONE);
	free(req);
}

static void *destroyer(void *arg)
{
	unsigned int seed = (unsigned int)(long)arg;

	while (!atomic_load(&stop)) {
		SVCXPRT *xprt = NULL;
		int i;

		pthread_mutex_lock(&reg_lock);
		if (nreg)
			xprt = reg_take(rand_r(&seed) % nreg);
		pthread_mutex_unlock(&reg_lock);
		if (xprt) {
			pthread_mutex_lock(&live_lock);
			i = live_find(xprt);
			if (i >= 0)
				live[i].t_destroy = now_ns();
			pthread_mutex_unlock(&live_lock);
			SVC_DESTROY(xprt);
			atomic_fetch_add(&destroys, 1);
			SVC_RELEASE(xprt, SVC_RELEASE_FLAG_NONE);
		}
		usleep(200 + rand_r(&seed) % 800);
	}
	return NULL;
}

/* Drop the driver's ref on transports ntirpc has destroyed itself (the
 * client closed, the idle cleaner) */
static void reap(int all)
{
	SVCXPRT *out[MAXX];
	int i, n = 0;

	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < nreg;) {
		if (all || (atomic_load((_Atomic uint16_t *)&reg[i]->xp_flags) &
			    SVC_XPRT_FLAG_DESTROYED))
			out[n++] = reg_take(i);
		else
			i++;
	}
	pthread_mutex_unlock(&reg_lock);
	for (i = 0; i < n; i++) {
		if (all)
			SVC_DESTROY(out[i]);
		SVC_RELEASE(out[i], SVC_RELEASE_FLAG_NONE);
	}
}

static void *reaper(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		reap(0);
		usleep(2000);
	}
	return NULL;
}

/* Reference counts below zero on transports not yet freed */
static void *watcher(void *arg)
{
	int i;

	(void)arg;
	while (!atomic_load(&stop)) {
		pthread_mutex_lock(&live_lock);
		for (i = 0; i < nlive; i++)
			if (live[i].xprt->xp_refcnt < 0) {
				atomic_fetch_add(&negref, 1);
				live[i].xprt = NULL;	/* count once */
				live[i] = live[--nlive];
			}
		pthread_mutex_unlock(&live_lock);
		usleep(10000);
	}
	return NULL;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the DIR's own */
}

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static int cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	svc_init_params params = {
		.flags = SVC_INIT_EPOLL | SVC_INIT_NOREG_XPRTS,
		.max_connections = MAXX,
		.max_events = 256,
		.ioq_thrd_min = 2,
		.ioq_thrd_max = 64,
		.idle_timeout = 1,
	};
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	pthread_t cl[64], de[16], re, wa;
	int lfd, fds0, fds, i, opt;
	long rss0, t0, nf, alive, p50 = 0, p99 = 0, idle;
	uint32_t chan;
	SVCXPRT *lx;

	while ((opt = getopt(argc, argv, "bBc:d:l:n:rs:t:")) != -1) {
		switch (opt) {
		case 'b':
			broken = 1;
			break;
		case 'B':
			broken = 2;
			break;
		case 'c':
			nchan = atoi(optarg);
			break;
		case 'd':
			ndestroyers = atoi(optarg);
			break;
		case 'l':
			label = optarg;
			break;
		case 'n':
			clients.maxconns = atol(optarg);
			break;
		case 'r':
			/* the leak's reproducer: one client, no destroyer,
			 * every call's connection closed before its reply */
			clients.repro = 1;
			nclients = 1;
			ndestroyers = 0;
			break;
		case 's':
			secs = atoi(optarg);
			break;
		case 't':
			nclients = atoi(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: %s [-b|-B] [-c channels] [-d destroyers] [-l label] [-n conns] [-r] [-s secs] [-t clients]\n",
				argv[0]);
			return 2;
		}
	}
	if (nclients < 1 || nclients > 64 || ndestroyers < 0 ||
	    ndestroyers > 16 || nchan < 1)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	free_ns = calloc(MAXFREE, sizeof(*free_ns));
	if (!free_ns)
		fail("free times");
	if (getenv("NTIRPC_DRIVER_DEBUG")) {
		uint32_t dbg = strtoul(getenv("NTIRPC_DRIVER_DEBUG"), NULL, 0);

		tirpc_control(TIRPC_SET_DEBUG_FLAGS, &dbg);
	}
	params.channels = nchan;
	params.alloc_cb = alloc_req;
	params.free_cb = free_req;
	if (!svc_init(&params)) {
		fprintf(stderr, "ntirpc_driver: svc_init failed\n");
		return 2;
	}

	snprintf(clients.path, sizeof(clients.path), "/tmp/ntirpc_driver.%d",
		 getpid());
	unlink(clients.path);
	strcpy(sa.sun_path, clients.path);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)))
		fail("listener");
	lx = svc_vc_ncreatef(lfd, 0, 0, SVC_CREATE_FLAG_CLOSE |
			     SVC_CREATE_FLAG_LISTEN |
			     SVC_CREATE_FLAG_XPRT_NOREG);
	if (!lx) {
		fprintf(stderr, "ntirpc_driver: svc_vc_ncreatef failed\n");
		return 2;
	}
	lx->xp_dispatch.rendezvous_cb = rendezvous;
	if (svc_rqst_new_evchan(&chan, NULL, SVC_RQST_FLAG_NONE) ||
	    svc_rqst_evchan_reg(chan, lx, SVC_RQST_FLAG_XPRT_UREG)) {
		fprintf(stderr, "ntirpc_driver: no event channel\n");
		return 2;
	}
	/* warm up: ntirpc makes its channels (an epoll fd and a socket
	 * pair each) as the first transports come, before the baseline */
	for (i = 0; i < 4 * nchan; i++) {
		int fd = client_connect();

		if (fd < 0 || call(fd, i) || reply(fd))
			fail("warm-up call");
		close(fd);
	}
	usleep(50000);
	reap(1);
	for (i = 0; i < 100; i++) {
		pthread_mutex_lock(&live_lock);
		opt = nlive;
		pthread_mutex_unlock(&live_lock);
		if (!opt)
			break;
		usleep(10000);
	}
	fds0 = count_fds();
	rss0 = rss_kb();
	t0 = now_ns();

	clients.stop = &stop;
	for (i = 0; i < nclients; i++)
		if (pthread_create(&cl[i], NULL, client, (void *)(long)(i + 1)))
			fail("client thread");
	for (i = 0; i < ndestroyers; i++)
		if (pthread_create(&de[i], NULL, destroyer,
				   (void *)(long)(i + 101)))
			fail("destroyer thread");
	if (pthread_create(&re, NULL, reaper, NULL) ||
	    pthread_create(&wa, NULL, watcher, NULL))
		fail("thread");
	while (now_ns() - t0 < secs * 1000000000L &&
	       (!clients.maxconns ||
		atomic_load(&clients.conns) < clients.maxconns))
		usleep(20000);
	atomic_store(&stop, 1);
	for (i = 0; i < nclients; i++)
		pthread_join(cl[i], NULL);
	for (i = 0; i < ndestroyers; i++)
		pthread_join(de[i], NULL);
	pthread_join(re, NULL);
	pthread_join(wa, NULL);

	/* Every client is gone: each transport must go, on its own (the
	 * client's close) or from the driver's destroy of the rest; give
	 * ntirpc 10 s for it (a guest under TCG is slow) */
	reap(1);
	for (idle = 0, i = 0; idle < 1000; idle++) {
		long made = atomic_load(&created);

		usleep(10000);
		reap(1);	/* those accepted since */
		pthread_mutex_lock(&live_lock);
		opt = nlive;
		pthread_mutex_unlock(&live_lock);
		/* none left, and none accepted for 200 ms */
		i = !opt && made == atomic_load(&created) ? i + 1 : 0;
		if (i == 20)
			break;
	}
	/* the listener is the driver's too; stays, its fd counted in fds0 */
	pthread_mutex_lock(&live_lock);
	for (i = 0; i < nlive; i++) {
		SVCXPRT *x = live[i].xprt;

		if (x->xp_refcnt < 0)
			atomic_fetch_add(&negref, 1);
		if (i < 8)
			fprintf(stderr,
				"ntirpc_driver: held: fd %d xp_refcnt %d xp_flags 0x%x%s\n",
				x->xp_fd, x->xp_refcnt, x->xp_flags,
				live[i].t_destroy ? " (destroyed by the driver)" : "");
	}
	alive = nlive;
	pthread_mutex_unlock(&live_lock);
	fds = count_fds() - fds0;
	nf = atomic_load(&nfree_ns);
	if (nf > MAXFREE)
		nf = MAXFREE;
	if (nf) {
		qsort(free_ns, nf, sizeof(*free_ns), cmp);
		p50 = free_ns[nf / 2];
		p99 = free_ns[nf * 99 / 100];
	}
	printf("ntirpc_driver%s%s%s: conns=%ld calls=%ld replies=%ld refused=%ld destroys=%ld created=%ld freed=%ld alive=%ld fds=%d negref=%ld freed_held=%ld disable=0:%ld,EBUSY:%ld,EALREADY:%ld,other:%ld del_held=%ld dis0_held=%ld dropped=%ld free_us_p50=%.1f free_us_p99=%.1f rss_kb=%ld secs=%.1f%s\n",
	       label ? "[" : "", label ? label : "", label ? "]" : "",
	       atomic_load(&clients.conns), atomic_load(&calls),
	       atomic_load(&clients.replies), atomic_load(&clients.refused),
	       atomic_load(&destroys),
	       atomic_load(&created), atomic_load(&freed), alive, fds,
	       atomic_load(&negref), atomic_load(&freed_held), atomic_load(&dis_ok),
	       atomic_load(&dis_busy), atomic_load(&dis_already),
	       atomic_load(&dis_other), atomic_load(&del_held),
	       atomic_load(&dis0_held), atomic_load(&dropped), p50 / 1000.0, p99 / 1000.0,
	       rss_kb() - rss0, (now_ns() - t0) / 1e9,
	       broken == 1 ? " (broken: -b)" : broken ? " (broken: -B)" : "");
	fflush(stdout);
	unlink(clients.path);
	/* the work pool never returns: leave without svc_shutdown() */
	_exit(alive || fds > 0 || atomic_load(&negref) ||
	      atomic_load(&freed_held) ||
	      atomic_load(&dis0_held) ? 1 : 0);
}
