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

/* Checks the core's internal invariants; returns the number broken. */
int fq_check_invariants(struct fq_sched *fqs);

#endif /* FQ_TEST_H */
