// SPDX-License-Identifier: GPL-2.0
/*
 * epoll_disable_server - a keep-alive HTTP/1.1 server that closes its
 * connections from outside its waiters, under wrk's load.
 *
 * N waiters wait in epoll_wait() on one set, each connection an
 * EPOLLIN | EPOLLONESHOT item (epoll_disable.h's roles) that its owner,
 * the waiter handed its event, serves and re-arms. An acceptor adds
 * connections; a canceller closes those idle longer than -i and -r more a
 * second at random, with the protocol -p names (proto_<name>.c, as the
 * bench runs them; not global). The output keeps the words scripts read:
 * a waiter is a "worker", the canceller the "reaper", its close a "reap".
 *
 * It runs wrk (-W) against itself for -d seconds, then checks, a TAP line
 * each: no state touched after its free, every connection freed once,
 * every fd closed once, no request lost that wrk saw no error for, and
 * closes made under load. -B breaks one check on purpose; -P prefixes the
 * figures' line. bench/README says what each check and control does.
 *
 * Exit: 0 all checks passed, 1 one failed, 4 wrk is missing.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "protocols.h"
#include "server.h"
#include "server_conn.h"
#include "server_threads.h"


static const char wrk_script[] =
	"done = function(s, lat, req)\n"
	"  local e = s.errors\n"
	"  local f = string.rep(\",%.0f\", 9)\n"
	"  io.write(string.format(\"wrk\" .. f .. \"\\n\", s.duration,\n"
	"    s.requests, e.connect, e.read, e.write, e.status, e.timeout,\n"
	"    lat:percentile(50), lat:percentile(99)))\n"
	"end\n";


/* In enum fault's order */
static const char *const fault_names[NR_FAULTS] = {
	"none", "leak-conn", "double-free", "leak-fd", "double-close", "drop",
	"early-free",
};



/* The options that take a number: its range, and its value without one */

static const struct {
	char c;
	long *v;
	long min, max, dflt;
} numbers[] = {
	{ 't', &opt.waiters, 1, 1024, 8 },
	{ 'I', &opt.idlers, 0, MAX_IDLERS, 4 },
	{ 'c', &opt.wrk_conns, 1, 10000, 64 },
	{ 'T', &opt.wrk_threads, 1, 64, 2 },
	{ 'd', &opt.seconds, 2, 3600, 5 },
	{ 'i', &opt.idle_ms, 1, 3600000, 250 },
	{ 'r', &opt.cancel_rate, 0, 1000000, 200 },
	{ 'w', &opt.delay_us, 0, 1000000, 0 },
};

/* An item: a client's connection */

static pid_t spawn_wrk(const char *script, int *rfd)
{
	char t[16], c[16], d[16], url[64];
	int p[2];
	pid_t pid;

	snprintf(t, sizeof(t), "%ld", opt.wrk_threads);
	snprintf(c, sizeof(c), "%ld", opt.wrk_conns);
	snprintf(d, sizeof(d), "%lds", opt.seconds);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", S.port);
	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		execlp(opt.wrk, opt.wrk, "-t", t, "-c", c, "-d", d,
		       "--timeout", "5s", "-s", script, url, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	*rfd = p[0];
	return pid;
}

/* Run wrk to the end and take its figures; its exit status */
static int run_wrk(struct wrk_figures *w)
{
	char script[] = "/tmp/epoll_disable_server.XXXXXX", line[512];
	int fd, status = -1;
	FILE *f;
	pid_t pid;

	fd = mkstemp(script);
	if (fd < 0 || write(fd, wrk_script, sizeof(wrk_script) - 1) !=
		      (ssize_t)sizeof(wrk_script) - 1) {
		out("# wrk script: %s", strerror(errno));
		return -1;
	}
	close(fd);
	pid = spawn_wrk(script, &fd);
	if (pid < 0) {
		out("# cannot run wrk: %s", strerror(errno));
		unlink(script);
		return -1;
	}
	f = fdopen(fd, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "wrk,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf",
			   &w->us, &w->requests, &w->connect, &w->read,
			   &w->write, &w->status, &w->timeout, &w->p50,
			   &w->p99) == 9)
			w->seen = true;
	if (f)
		fclose(f);
	waitpid(pid, &status, 0);
	unlink(script);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}


static double pct_us(double p)
{
	if (!S.nr_samples)
		return 0;
	return S.samples[(unsigned long)(p * (S.nr_samples - 1))] / 1e3;
}

static int nr_checks;

static bool check(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - %s\n", ok ? "" : "not ", ++nr_checks, name);
	if (!ok) {
		printf("#   ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		putchar('\n');
	}
	return ok;
}

#define N(x)	atomic_load(&S.x)

/* Checks 4's: every request answered, or lost where wrk saw an error */
static bool requests_ok(const struct wrk_figures *w, char *why, size_t len)
{
	double errs = w->connect + w->read + w->write;

	if (!w->seen)
		snprintf(why, len, "wrk printed no figures");
	else if (N(requests) != N(answered) + N(send_failed))
		snprintf(why, len, "%lu requests read, %lu answered, %lu answers failed",
			 N(requests), N(answered), N(send_failed));
	else if (w->timeout || w->status)
		snprintf(why, len, "wrk: %.0f timeouts, %.0f error statuses",
			 w->timeout, w->status);
	else if (w->requests > N(answered))
		snprintf(why, len, "wrk counted %.0f answers, %lu were sent",
			 w->requests, N(answered));
	else if (errs < N(unread))
		snprintf(why, len, "%lu connections reaped on an unread request, wrk saw %.0f socket errors",
			 N(unread), errs);
	else
		return true;
	return false;
}

static int report(const struct wrk_figures *w)
{
	double secs = (S.cancel_until - S.cancel_from) / 1e9;
	double wsecs = w->us / 1e6;
	unsigned long cancels = N(cancels_idle) + N(cancels_forced);
	double held = S.held_samples ? S.held_sum / S.held_samples : 0;
	char why[200];
	bool ok = true;

	qsort(S.samples, S.nr_samples, sizeof(*S.samples), cmp_ll);
	out("# wrk: %.0f requests, %.0f/s, latency p50 %.0f us p99 %.0f us; socket errors: connect %.0f read %.0f write %.0f, timeouts %.0f, error statuses %.0f",
	    w->requests, wsecs > 0 ? w->requests / wsecs : 0, w->p50, w->p99,
	    w->connect, w->read, w->write, w->timeout, w->status);
	out("# server: %lu connections (%lu idle clients), %lu requests, %lu answered; %lu closed by the client",
	    N(allocs), N(idle_clients), N(requests), N(answered),
	    N(client_closes));
	out("# reaper: %lu reaps (%lu idle, %lu forced, %lu on an unread request): %lu closed at once, %lu closed by their worker (EBUSY; uring: all)",
	    cancels, N(cancels_idle), N(cancels_forced), N(unread),
	    N(cancel_now),
	    N(owner_closes));
	out("# reclaim latency p50 %.0f us p99 %.0f us; held awaiting reclaim %.1f on average, %ld at most; %lu stale events, %lu late touches",
	    pct_us(0.5), pct_us(0.99), held, S.held_max, N(stale), N(late));
	out("%sserver,%s,%ld,%ld,%ld,%ld,%ld,%.0f,%.0f,%.0f,%.1f,%.0f,%.0f,%.1f,%ld,%lu,%lu",
	    opt.prefix, opt.protocol->name, opt.waiters,
	    opt.wrk_conns, opt.seconds, opt.idle_ms, opt.cancel_rate,
	    wsecs > 0 ? w->requests / wsecs : 0,
	    w->p50, w->p99, secs > 0 ? cancels / secs : 0, pct_us(0.5),
	    pct_us(0.99), held, S.held_max, N(cancel_busy), N(late));

	ok &= check(!N(late), "no connection state touched after it was freed",
		    "%lu late touches", N(late));
	ok &= check(N(allocs) == N(frees) && !N(bad_frees),
		    "every connection freed exactly once",
		    "%lu connections, %lu freed, %lu frees of a freed one",
		    N(allocs), N(frees), N(bad_frees));
	ok &= check(N(accepted) == N(closed) && !N(bad_closes),
		    "every fd closed exactly once",
		    "%lu accepted, %lu closed, %lu closes of a closed fd",
		    N(accepted), N(closed), N(bad_closes));
	ok &= check(requests_ok(w, why, sizeof(why)),
		    "no request lost that wrk did not see an error for",
		    "%s", why);
	ok &= check(N(cancels_forced) > 0 && w->requests > 0 &&
		    (N(cancels_idle) > 0 || !opt.idlers),
		    "connections reaped under load",
		    "%lu forced and %lu idle reaps, %.0f requests",
		    N(cancels_forced), N(cancels_idle), w->requests);
	if (N(errors)) {
		out("# %lu errors, the first: %s", N(errors), S.first_error);
		ok = false;
	}
	printf("1..%d\n", nr_checks);
	return ok ? 0 : 1;
}

static void print_usage(const char *prog)
{
	char names[256];

	conn_protocol_names(names, sizeof(names));
	fprintf(stderr,
		"usage: %s [-p %s] [-t workers] [-I idle clients]\n"
		"          [-c conns] [-T wrk threads] [-d seconds] [-i idle ms]\n"
		"          [-r reaps/s] [-w delay us] [-W wrk] [-P prefix]\n"
		"          [-B leak-conn|double-free|leak-fd|double-close|drop|early-free]\n",
		prog, names);
	exit(2);
}

static int pick(const char *s, const char *const *names, int n,
		const char *prog)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	print_usage(prog);
	return 0;
}

static const struct protocol *pick_protocol(const char *s, const char *prog)
{
	const struct protocol *p = conn_protocol(s);

	if (!p)
		print_usage(prog);
	return p;
}

/* -c N, for a @c of the numbers table: false if @c is none of them */
static bool set_number(int c, const char *s, const char *prog)
{
	char *end;
	long v;
	size_t i;

	for (i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		if (numbers[i].c != c)
			continue;
		v = strtol(s, &end, 10);
		if (*end || end == s || v < numbers[i].min ||
		    v > numbers[i].max)
			print_usage(prog);
		*numbers[i].v = v;
		return true;
	}
	return false;
}

static void read_options(int argc, char **argv)
{
	size_t i;
	int c;

	for (i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++)
		*numbers[i].v = numbers[i].dflt;
	while ((c = getopt(argc, argv, "p:t:I:c:T:d:i:r:w:B:W:P:")) != -1) {
		if (c == 'p')
			opt.protocol = pick_protocol(optarg, argv[0]);
		else if (c == 'B')
			opt.fault = pick(optarg, fault_names, NR_FAULTS,
					 argv[0]);
		else if (c == 'W')
			opt.wrk = optarg;
		else if (c == 'P')
			opt.prefix = optarg;
		else if (!set_number(c, optarg, argv[0]))
			print_usage(argv[0]);
	}
	if (optind != argc || opt.wrk_conns < opt.wrk_threads)
		print_usage(argv[0]);
}

int main(int argc, char **argv)
{
	struct wrk_figures w = { 0 };
	pthread_t acc, can, idl;
	char why[128];
	int i, rc, have;

	driver = &conn_driver;
	read_options(argc, argv);
	if (!opt.protocol)
		opt.protocol = protocol_named("disable");
	have = disable_usable(why, sizeof(why));
	if (have < 0) {
		out("not ok 1 - EPOLL_CTL_DISABLE probe: %s", why);
		return 1;
	}
	if (!have && opt.protocol->needs_disable) {
		out("# %s: deferred reclamation instead", why);
		opt.protocol = protocol_named("deferred");
	}
	out("# protocol %s, %ld workers; wrk: %ld threads, %ld connections, %ld s; reaper: idle %ld ms, %ld forced closes/s%s%s",
	    opt.protocol->name, opt.waiters, opt.wrk_threads,
	    opt.wrk_conns, opt.seconds, opt.idle_ms, opt.cancel_rate,
	    opt.fault ? "; broken on purpose: " : "",
	    opt.fault ? fault_names[opt.fault] : "");
	if (setup())
		return 1;
	for (i = 0; i < opt.waiters; i++)
		if (pthread_create(&waiter_at(i)->thread, NULL, worker,
				   waiter_at(i))) {
			out("# pthread_create: %s", strerror(errno));
			return 1;
		}
	/* uring: every ring set up before a message is sent to it */
	if (opt.protocol->started)
		opt.protocol->started();
	/* close until a second before wrk stops, not while it winds down */
	S.cancel_from = now_ns();
	S.cancel_until = S.cancel_from + (opt.seconds - 1) * 1000000000LL;
	if (pthread_create(&acc, NULL, acceptor, NULL) ||
	    pthread_create(&can, NULL, reaper, NULL) ||
	    pthread_create(&idl, NULL, idler, NULL)) {
		out("# pthread_create: %s", strerror(errno));
		return 1;
	}
	rc = run_wrk(&w);
	stop(acc, can, idl);
	if (rc == 127 && !w.seen) {
		out("# SKIP %s not found: install wrk", opt.wrk);
		return 4;
	}
	if (rc)
		out("# wrk exited %d", rc);
	return report(&w) || rc ? 1 : 0;
}

