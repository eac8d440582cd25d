// SPDX-License-Identifier: GPL-2.0
/*
 * fairq_trace.c - the object that holds fairq's trace events
 * (fairq_trace.h), and what their records need: an op as letters, and
 * bytes as the core counts them.
 */
#include "fairq.h"

/* what the core counts for @rq (fq_rq_bytes()) */
static u32 fairq_trace_bytes(const struct fq_req *rq)
{
	return rq->flags & FQ_REQ_NODATA ? FQ_NODATA_BYTES : rq->bytes;
}

/* @op: R or W (D without data), then S if sync, A if read-ahead */
static void fairq_trace_op(char *op, u32 flags)
{
	int i = 0;

	if (flags & FQ_REQ_NODATA)
		op[i++] = 'D';
	else
		op[i++] = flags & FQ_REQ_WRITE ? 'W' : 'R';
	if (flags & FQ_REQ_SYNC)
		op[i++] = 'S';
	if (flags & FQ_REQ_RAHEAD)
		op[i++] = 'A';
	op[i] = '\0';
}

#define CREATE_TRACE_POINTS
#include "fairq_trace.h"
