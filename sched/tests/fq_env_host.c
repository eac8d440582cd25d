// SPDX-License-Identifier: GPL-2.0
/*
 * fq_env_host.c - the host side of fq_env.h: WARN_ON_ONCE() reporting.
 * Test programs fail when fq_env_warnings is not zero.
 */
#include <stdio.h>
#include "fq_env.h"

unsigned long fq_env_warnings;
int fq_env_warn_expected;	/* tests that provoke a warning set this */

void fq_env_warn(const char *file, int line, const char *cond)
{
	fq_env_warnings++;
	fprintf(stderr, "%s: %s:%d: %s\n",
		fq_env_warn_expected ? "expected warning" : "WARNING",
		file, line, cond);
}
