// SPDX-License-Identifier: GPL-2.0
/*
 * fq_fifo.c - the fifo policy: the oldest request first, across all
 * flows.  Classes, weights, rounds and anticipation do not apply (depth
 * and the bounded wait do, trivially); flows still exist per key, mapped
 * as cfq maps them (fq_cfq.c), for the statistics.  Flows are never put
 * on a class's lists, so drained ones go straight back to the pool.
 */
#include "fq_internal.h"

/* The oldest queued request: the fifo order needs no time. */
static struct fq_req *fq_fifo_pick(struct fq_sched *fqs, u64 now_ns)
{
	(void)now_ns;
	return fq_oldest(fqs);
}

const struct fq_policy fq_fifo_policy = {
	.name = "fifo",
	.map = fq_cfq_map,
	.unmap = fq_cfq_unmap,
	.find = fq_cfq_find,
	.pick = fq_fifo_pick,
};
