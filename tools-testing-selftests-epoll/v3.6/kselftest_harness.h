/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kselftest_harness.h - the part of the kselftest harness (Linux 4.5 and
 * later) that the epoll selftest uses, for a tree that predates it.
 *
 * The same macros, the same meaning: FIXTURE(), FIXTURE_VARIANT(),
 * FIXTURE_VARIANT_ADD(), FIXTURE_SETUP(), FIXTURE_TEARDOWN(), TEST(),
 * TEST_F(), TEST_F_TIMEOUT(), the EXPECT_*() and ASSERT_*() checks with an
 * optional TH_LOG() after them, SKIP(), ksft_print_msg(), ksft_exit_skip()
 * and ksft_exit_fail_msg(). Each test runs in a child of its own, under a
 * timeout, and gives one TAP line; the status is 0 if none failed, else 1.
 */
#ifndef __KSELFTEST_HARNESS_H
#define __KSELFTEST_HARNESS_H

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define KSFT_PASS	0
#define KSFT_FAIL	1
#define KSFT_SKIP	4

#define TEST_TIMEOUT_DEFAULT	30

struct __fixture_metadata;

struct __test_metadata {
	const char *name;
	void (*fn)(struct __test_metadata *t, const void *variant);
	int timeout;
	bool passed, skip, trigger, setup_done;
	char *reason;		/* why it skipped; the parent reads it */
	jmp_buf env;
	struct __test_metadata *next;
};

struct __fixture_variant_metadata {
	const char *name;
	const void *data;
	struct __fixture_variant_metadata *next;
};

struct __fixture_metadata {
	const char *name;
	bool registered;
	struct __fixture_variant_metadata *variants;
	struct __test_metadata *tests;
	struct __fixture_metadata *next;
};

static struct __fixture_metadata *__fixtures;
static struct __fixture_metadata __global_fixture __attribute__((unused)) = {
	.name = "global",
};

static inline void __register_fixture(struct __fixture_metadata *f)
{
	struct __fixture_metadata **p = &__fixtures;

	if (f->registered)
		return;
	while (*p)
		p = &(*p)->next;
	*p = f;
	f->registered = true;
}

static inline void __register_variant(struct __fixture_metadata *f,
				      struct __fixture_variant_metadata *v)
{
	struct __fixture_variant_metadata **p = &f->variants;

	while (*p)
		p = &(*p)->next;
	*p = v;
}

static inline void __register_test(struct __fixture_metadata *f,
				   struct __test_metadata *t)
{
	struct __test_metadata **p = &f->tests;

	__register_fixture(f);
	while (*p)
		p = &(*p)->next;
	*p = t;
}

static inline void ksft_print_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("# ");
	vprintf(fmt, ap);
	va_end(ap);
}

static inline void ksft_exit_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("1..0 # SKIP ");
	vprintf(fmt, ap);
	va_end(ap);
	exit(KSFT_SKIP);
}

static inline void ksft_exit_fail_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("Bail out! ");
	vprintf(fmt, ap);
	va_end(ap);
	exit(KSFT_FAIL);
}

#define TH_LOG(fmt, ...)						\
	fprintf(stderr, "# %s:%d:%s:" fmt "\n", __FILE__, __LINE__,	\
		_metadata->name, ##__VA_ARGS__)

#define SKIP(statement, fmt, ...) do {					\
	snprintf(_metadata->reason, 256, fmt, ##__VA_ARGS__);		\
	fprintf(stderr, "#      SKIP      %s\n", _metadata->reason);	\
	_metadata->skip = true;						\
	statement;							\
} while (0)

#define FIXTURE_DATA(f)		struct _test_data_##f
#define FIXTURE_VARIANT(f)	struct _fixture_variant_##f

#define FIXTURE(f)							\
	FIXTURE_VARIANT(f);						\
	static struct __fixture_metadata _##f##_fixture = { .name = #f }; \
	static void __attribute__((constructor)) _##f##_register(void)	\
	{								\
		__register_fixture(&_##f##_fixture);			\
	}								\
	FIXTURE_DATA(f)

#define FIXTURE_SETUP(f)						\
	static void f##_setup(struct __test_metadata *_metadata,	\
			      struct _test_data_##f *self,		\
			      const struct _fixture_variant_##f *variant)

#define FIXTURE_TEARDOWN(f)						\
	static void f##_teardown(struct __test_metadata *_metadata,	\
				 struct _test_data_##f *self,		\
				 const struct _fixture_variant_##f *variant)

#define FIXTURE_VARIANT_ADD(f, v)					\
	extern FIXTURE_VARIANT(f) _##f##_##v##_data;			\
	static struct __fixture_variant_metadata _##f##_##v##_variant = { \
		.name = #v, .data = &_##f##_##v##_data,			\
	};								\
	static void __attribute__((constructor))			\
	_##f##_##v##_register(void)					\
	{								\
		__register_variant(&_##f##_fixture,			\
				   &_##f##_##v##_variant);		\
	}								\
	FIXTURE_VARIANT(f) _##f##_##v##_data =

#define __TEST_REGISTER(f, t, run, secs)				\
	static struct __test_metadata _##f##_##t##_test = {		\
		.name = #t, .fn = run, .timeout = secs,			\
	};								\
	static void __attribute__((constructor))			\
	_##f##_##t##_register(void)					\
	{								\
		__register_test(&f, &_##f##_##t##_test);		\
	}

#define TEST(t)								\
	static void t(struct __test_metadata *_metadata);		\
	static void _##t##_run(struct __test_metadata *_metadata,	\
			       const void __attribute__((unused)) *v)	\
	{								\
		if (!setjmp(_metadata->env))				\
			t(_metadata);					\
	}								\
	__TEST_REGISTER(__global_fixture, t, _##t##_run,		\
			TEST_TIMEOUT_DEFAULT)				\
	static void t(struct __test_metadata __attribute__((unused)) *_metadata)

#define TEST_F(f, t)	TEST_F_TIMEOUT(f, t, TEST_TIMEOUT_DEFAULT)

#define TEST_F_TIMEOUT(f, t, secs)					\
	static void f##_##t(struct __test_metadata *_metadata,		\
			    struct _test_data_##f *self,		\
			    const struct _fixture_variant_##f *variant); \
	static void _##f##_##t##_run(struct __test_metadata *_metadata,	\
				     const void *variant)		\
	{								\
		FIXTURE_DATA(f) self;					\
									\
		memset(&self, 0, sizeof(self));				\
		if (!setjmp(_metadata->env)) {				\
			f##_setup(_metadata, &self, variant);		\
			_metadata->setup_done = true;			\
			if (_metadata->passed && !_metadata->skip)	\
				f##_##t(_metadata, &self, variant);	\
		}							\
		if (_metadata->setup_done)				\
			f##_teardown(_metadata, &self, variant);	\
	}								\
	__TEST_REGISTER(_##f##_fixture, t, _##f##_##t##_run, secs)	\
	static void f##_##t(						\
		struct __test_metadata __attribute__((unused)) *_metadata, \
		struct _test_data_##f __attribute__((unused)) *self,	\
		const struct _fixture_variant_##f __attribute__((unused)) *variant)

/* A failed check: say so, mark the test failed; true */
static inline bool __check_failed(struct __test_metadata *t,
				  const char *file, int line, const char *what,
				  long long exp, long long seen)
{
	fprintf(stderr, "# %s:%d:%s:Expected %s (%lld, %lld)\n", file, line,
		t->name, what, exp, seen);
	t->passed = false;
	return true;
}

/* After a failed check and its TH_LOG(): an ASSERT ends the test */
static inline void __check_done(struct __test_metadata *t, bool fatal)
{
	t->trigger = false;
	if (fatal)
		longjmp(t->env, 1);
}

/* Each operand is evaluated once; the statement after, if any, on failure */
#define __CHECK(expected, seen, op, fatal)				\
	for (_metadata->trigger = ({					\
		__typeof__(expected) __exp = (expected);		\
		__typeof__(seen) __seen = (seen);			\
		!(__exp op __seen) &&					\
		__check_failed(_metadata, __FILE__, __LINE__,		\
			       #expected " " #op " " #seen,		\
			       (long long)__exp, (long long)__seen);	\
	     });							\
	     _metadata->trigger; __check_done(_metadata, fatal))

#define EXPECT_EQ(expected, seen)	__CHECK(expected, seen, ==, false)
#define EXPECT_NE(expected, seen)	__CHECK(expected, seen, !=, false)
#define EXPECT_GT(expected, seen)	__CHECK(expected, seen, >, false)
#define EXPECT_GE(expected, seen)	__CHECK(expected, seen, >=, false)
#define EXPECT_TRUE(seen)		__CHECK(0, seen, !=, false)
#define EXPECT_FALSE(seen)		__CHECK(0, seen, ==, false)
#define ASSERT_EQ(expected, seen)	__CHECK(expected, seen, ==, true)
#define ASSERT_NE(expected, seen)	__CHECK(expected, seen, !=, true)
#define ASSERT_GE(expected, seen)	__CHECK(expected, seen, >=, true)
#define ASSERT_TRUE(seen)		__CHECK(0, seen, !=, true)

/* Run one test in a child; its TAP line */
static inline int __run_test(struct __fixture_metadata *f,
			     struct __fixture_variant_metadata *v,
			     struct __test_metadata *t, int n)
{
	const char *sep = v ? "." : "";
	const char *vname = v ? v->name : "";
	int status = 0;
	pid_t pid;

	t->reason[0] = '\0';
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (!pid) {
		t->passed = true;
		alarm(t->timeout);
		t->fn(t, v ? v->data : NULL);
		fflush(stdout);
		_exit(t->skip ? KSFT_SKIP : t->passed ? KSFT_PASS : KSFT_FAIL);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		printf("not ok %d %s%s%s.%s # could not run it\n", n, f->name,
		       sep, vname, t->name);
		return KSFT_FAIL;
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		printf("# %s: timed out after %d s\n", t->name, t->timeout);
	else if (WIFSIGNALED(status))
		printf("# %s: killed by signal %d\n", t->name,
		       WTERMSIG(status));
	if (WIFEXITED(status) && WEXITSTATUS(status) == KSFT_SKIP) {
		printf("ok %d %s%s%s.%s # SKIP %s\n", n, f->name, sep, vname,
		       t->name, t->reason);
		return KSFT_SKIP;
	}
	status = WIFEXITED(status) ? WEXITSTATUS(status) : KSFT_FAIL;
	printf("%s %d %s%s%s.%s\n", status ? "not ok" : "ok", n, f->name, sep,
	       vname, t->name);
	return status ? KSFT_FAIL : KSFT_PASS;
}

static inline int test_harness_run(int __attribute__((unused)) argc,
				   char __attribute__((unused)) **argv)
{
	int n = 0, pass = 0, fail = 0, skip = 0, ret;
	struct __fixture_variant_metadata *v;
	struct __fixture_metadata *f;
	struct __test_metadata *t;
	char *reason;

	reason = mmap(NULL, 256, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (reason == MAP_FAILED) {
		perror("mmap");
		return KSFT_FAIL;
	}
	/* A fixture runs its tests once per variant, or once if it has none */
	for (f = __fixtures; f; f = f->next) {
		v = f->variants;
		do {
			for (t = f->tests; t; t = t->next)
				n++;
		} while (v && (v = v->next));
	}
	printf("TAP version 13\n1..%d\n", n);
	n = 0;
	for (f = __fixtures; f; f = f->next) {
		v = f->variants;
		do {
			for (t = f->tests; t; t = t->next) {
				t->reason = reason;
				ret = __run_test(f, v, t, ++n);
				pass += ret == KSFT_PASS;
				fail += ret == KSFT_FAIL;
				skip += ret == KSFT_SKIP;
			}
		} while (v && (v = v->next));
	}
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n",
	       pass, fail, skip);
	munmap(reason, 256);
	return fail ? KSFT_FAIL : KSFT_PASS;
}

#endif /* __KSELFTEST_HARNESS_H */
