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

/*
 * fq_test_run - run @cases (only the one named argv[1], if given); a case
 * fails on a failed CHECK or a core warning.  Prints one line per case
 * and "SUITE: N passed, N failed"; returns the exit status.
 */
static inline int fq_test_run(const char *suite,
			      const struct fq_test_case *cases, unsigned int n,
			      int argc, char **argv)
{
	unsigned int i, passed = 0, failed = 0;

	for (i = 0; i < n; i++) {
		if (argc > 1 && strcmp(argv[1], cases[i].name))
			continue;
		fq_test_failed = 0;
		fq_env_warnings = 0;
		cases[i].fn();
		if (fq_test_failed || fq_env_warnings) {
			printf("FAIL %s\n", cases[i].name);
			failed++;
		} else {
			printf("ok   %s\n", cases[i].name);
			passed++;
		}
	}
	printf("%s: %u passed, %u failed\n", suite, passed, failed);
	return failed ? 1 : 0;
}

/* Checks the core's internal invariants; returns the number broken. */
int fq_check_invariants(struct fq_sched *fqs);

#endif /* FQ_TEST_H */
