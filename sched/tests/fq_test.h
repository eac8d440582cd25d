/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fq_test.h - a tiny test harness for the sched/ core on the host.
 *
 * CHECK() records a failure and carries on (it never returns or jumps);
 * a test case fails when any CHECK failed or the core warned.  The clock
 * is the harness's own variable: no sleeps, no real time.
 */
#ifndef FQ_TEST_H
#define FQ_TEST_H

#include <stdio.h>
#include <string.h>
#include "fq_internal.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

extern int fq_test_failed;	/* failures in the running case */
extern int fq_env_warn_expected;	/* fq_env_host.c */

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fq_test_failed++;					\
		fprintf(stderr, "  %s:%d: CHECK(%s) failed\n",		\
			__FILE__, __LINE__, #cond);			\
	}								\
} while (0)

#define CHECK_EQ(a, b) do {						\
	long long __a = (long long)(a), __b = (long long)(b);		\
	if (__a != __b) {						\
		fq_test_failed++;					\
		fprintf(stderr, "  %s:%d: %s == %lld, expected %s == %lld\n", \
			__FILE__, __LINE__, #a, __a, #b, __b);		\
	}								\
} while (0)

struct fq_test_case {
	const char *name;
	void (*fn)(void);
};

/* A table of cases: one program may run several (fq_unit: a subject each). */
struct fq_test_suite {
	const struct fq_test_case *cases;
	unsigned int n;
};

/*
 * fq_test_run_suites - run the cases of @suites in order (only the one
 * named argv[1], if given); a case fails on a failed CHECK or a core
 * warning.  Prints one line per case and "NAME: N passed, N failed";
 * returns the exit status.
 */
static inline int fq_test_run_suites(const char *name,
				     const struct fq_test_suite *const *suites,
				     unsigned int nsuites, int argc,
				     char **argv)
{
	unsigned int passed = 0, failed = 0, i, k;
	const struct fq_test_case *c;

	for (k = 0; k < nsuites; k++) {
		for (i = 0; i < suites[k]->n; i++) {
			c = &suites[k]->cases[i];
			if (argc > 1 && strcmp(argv[1], c->name))
				continue;
			fq_test_failed = 0;
			fq_env_warnings = 0;
			c->fn();
			if (fq_test_failed || fq_env_warnings) {
				printf("FAIL %s\n", c->name);
				failed++;
			} else {
				printf("ok   %s\n", c->name);
				passed++;
			}
		}
	}
	printf("%s: %u passed, %u failed\n", name, passed, failed);
	return failed ? 1 : 0;
}

/* fq_test_run - the same for one table of @n @cases. */
static inline int fq_test_run(const char *suite,
			      const struct fq_test_case *cases, unsigned int n,
			      int argc, char **argv)
{
	const struct fq_test_suite one = { cases, n };
	const struct fq_test_suite *const list[] = { &one };

	return fq_test_run_suites(suite, list, 1, argc, argv);
}

/* Checks the core's internal invariants; returns the number broken. */
int fq_check_invariants(struct fq_sched *fqs);

#endif /* FQ_TEST_H */
