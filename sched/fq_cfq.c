// SPDX-License-Identifier: GPL-2.0
/*
 * fq_cfq.c - the cfq policy: one flow per key, served by class, weighted
 * round robin and turn (fq_drr.c).  Flows are found through a chained
 * hash table of at least two chains per pool flow, so a lookup is O(1)
 * expected; fifo maps requests the same way.  A flow is created on first
 * use from the pool and freed when drained (see fq_flow.c for the
 * exceptions).
 */
#include "fq_internal.h"

static struct fq_flow **fq_hash_slot(struct fq_sched *fqs, u64 key)
{
	/* seeded, so keys cannot be chosen to share one chain */
	return &fqs->hash[fq_hash64(key, fqs->hash_key) &
			  ((1ull << fqs->hash_bits) - 1)];
}

void fq_cfq_unmap(struct fq_sched *fqs, struct fq_flow *fqf)
{
	struct fq_flow **pp;

	for (pp = fq_hash_slot(fqs, fqf->key); *pp; pp = &(*pp)->hnext) {
		if (*pp == fqf) {
			*pp = fqf->hnext;
			return;
		}
	}
}

/* The flow of @rq's key, or NULL if it has none now. */
struct fq_flow *fq_cfq_find(struct fq_sched *fqs, const struct fq_req *rq)
{
	struct fq_flow *fqf;

	for (fqf = *fq_hash_slot(fqs, rq->key); fqf; fqf = fqf->hnext)
		if (fqf->key == rq->key)
			return fqf;
	return NULL;
}

/* The flow of @rq's key, created if need be; the overflow flow if none left. */
struct fq_flow *fq_cfq_map(struct fq_sched *fqs, const struct fq_req *rq)
{
	struct fq_flow **slot = fq_hash_slot(fqs, rq->key);
	struct fq_flow *fqf;

	fqf = fq_cfq_find(fqs, rq);
	if (fqf)
		return fqf;
	fqf = fq_flow_new(fqs, rq->key, FQ_FF_HASHED);
	if (!fqf)
		return &fqs->overflow;
	/* fq_flow_new() may have reclaimed a flow of this very chain */
	fqf->hnext = *slot;
	*slot = fqf;
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
