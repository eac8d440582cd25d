// SPDX-License-Identifier: GPL-2.0
/*
 * fq_cfq.c - the cfq policy: one flow per key, served by class, weighted
 * round robin and turn (fq_drr.c).  Flows are found by key in the flow
 * table (fq_flow.c), O(1) expected; fifo maps requests the same way.  A
 * flow is created on first use and freed when drained (see fq_flow.c for
 * the exceptions).
 */
#include "fq_internal.h"

void fq_cfq_unmap(struct fq_sched *fqs, struct fq_flow *fqf)
{
	fq_table_del(fqs, fqf);
}

/* The flow of @rq's key, or NULL if it has none now. */
struct fq_flow *fq_cfq_find(struct fq_sched *fqs, const struct fq_req *rq)
{
	return fq_table_find(fqs, rq->key);
}

/* The flow of @rq's key, created if need be; the overflow flow if none left. */
struct fq_flow *fq_cfq_map(struct fq_sched *fqs, const struct fq_req *rq)
{
	struct fq_flow *fqf;

	fqf = fq_table_find(fqs, rq->key);
	if (fqf)
		return fqf;
	fqf = fq_flow_new(fqs, rq->key, FQ_FF_HASHED);
	if (!fqf)
		return &fqs->overflow;
	fq_table_add(fqs, fqf);
	return fqf;
}

const struct fq_policy fq_cfq_policy = {
	.name = "cfq",
	.map = fq_cfq_map,
	.unmap = fq_cfq_unmap,
	.find = fq_cfq_find,
	.activate = fq_drr_activate,
	.expire = fq_drr_charge,
	.owed = fq_drr_owed,
	.pick = fq_drr_pick,
	.next_event = fq_drr_next_event,
};
