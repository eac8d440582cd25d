// SPDX-License-Identifier: GPL-2.0
/*
 * fq_sfq.c - the sfq policy: bucket = hash(key, seed) & (buckets - 1); a
 * bucket is a flow, found by its index in the flow table (fq_flow.c),
 * created when it first gets a request and freed when drained, served by
 * class and weighted round robin (fq_drr.c) one request per turn.  The seed is re-drawn from the core's
 * own PRNG every perturb_ms, so two heavy keys that collide do not stay
 * together.
 */
#include "fq_internal.h"

static void fq_sfq_unmap(struct fq_sched *fqs, struct fq_flow *fqf)
{
	fq_table_del(fqs, fqf);
}

static u32 fq_sfq_index(const struct fq_sched *fqs, const struct fq_req *rq)
{
	return (u32)(fq_hash64(rq->key, fqs->hash_seed) & (fqs->buckets - 1));
}

/* The bucket of @rq's key, or NULL if it is empty now. */
static struct fq_flow *fq_sfq_find(struct fq_sched *fqs,
				   const struct fq_req *rq)
{
	return fq_table_find(fqs, fq_sfq_index(fqs, rq));
}

/* The bucket of @rq's key, created if need be; the overflow flow if none left. */
static struct fq_flow *fq_sfq_map(struct fq_sched *fqs,
				  const struct fq_req *rq)
{
	u32 idx = fq_sfq_index(fqs, rq);
	struct fq_flow *fqf = fq_table_find(fqs, idx);

	if (fqf)
		return fqf;
	fqf = fq_flow_new(fqs, idx, FQ_FF_BUCKET);
	if (!fqf)
		return &fqs->overflow;
	fq_table_add(fqs, fqf);
	return fqf;
}

/* Draw the next sfq hash seed from the core's PRNG (splitmix64 steps). */
static void fq_sfq_reseed(struct fq_sched *fqs)
{
	fqs->prng += 0x9E3779B97F4A7C15ull;
	fqs->hash_seed = fq_hash64(fqs->prng, 0);
}

/*
 * fq_sfq_perturb - draw a new hash seed every perturb_ms.  Buckets keep
 * their slot and their queued requests (nothing is stranded: they stay
 * on the round robin); only keys enqueued from now on hash differently.
 */
static void fq_sfq_perturb(struct fq_sched *fqs, u64 now_ns)
{
	u64 period = (u64)fqs->perturb_ms * 1000000;

	if (!period)
		return;
	if (!fqs->perturb_next) {
		fqs->perturb_next = now_ns + period;
		return;
	}
	if (now_ns < fqs->perturb_next)
		return;
	fq_sfq_reseed(fqs);
	fqs->st.perturbations++;
	fqs->perturb_next = now_ns + period;
}

/* The round robin's events, and the next perturbation while busy. */
static u64 fq_sfq_next_event(struct fq_sched *fqs, u64 now_ns)
{
	u64 t = fq_drr_next_event(fqs, now_ns);

	if (fqs->perturb_ms && (fqs->queued || fqs->inflight))
		t = fq_time_min(t, fqs->perturb_next);
	return t;
}

const struct fq_policy fq_sfq_policy = {
	.name = "sfq",
	.map = fq_sfq_map,
	.unmap = fq_sfq_unmap,
	.find = fq_sfq_find,
	.init = fq_sfq_reseed,
	.tick = fq_sfq_perturb,
	.activate = fq_drr_activate,
	.expire = fq_drr_charge,
	.owed = fq_drr_owed,
	.pick = fq_drr_pick,
	.next_event = fq_sfq_next_event,
	.one_request_turns = true,
	.uses_buckets = true,
};
