// SPDX-License-Identifier: GPL-2.0
/*
 * fq_flow.c - the flow pool, flow lookup (cfq: hash by key; sfq: bucket
 * by hash(key, perturbation)), flow release, sfq perturbation and the
 * rebuild that a policy, fairness, buckets or max_flows change runs.
 *
 * All flows come from one pool of max_flows allocated up front; the pool
 * never grows.  When it is empty a new key first reclaims a drained flow
 * that only keeps a round robin claim, else it shares the overflow flow.
 */
#include "fq_internal.h"

/* cfq hash chains: at least two per flow, so chains stay short. */
static u32 fq_hash_bits_for(u32 max_flows)
{
	u32 bits = 1;

	while ((1u << bits) < 2 * max_flows)
		bits++;
	return bits;
}

size_t fq_pool_mem(u32 max_flows)
{
	return (size_t)max_flows * sizeof(struct fq_flow) +
	       ((size_t)1 << fq_hash_bits_for(max_flows)) *
	       sizeof(struct fq_flow *) +
	       (size_t)max_flows * sizeof(struct fq_flow *);
}

static void fq_pool_arrays_free(struct fq_pool *p)
{
	fq_free(p->pool);
	fq_free(p->hash);
	fq_free(p->bucket);
	p->pool = NULL;
	p->hash = NULL;
	p->bucket = NULL;
}

/* Allocate the arrays for a pool of @max_flows; installs nothing. */
int fq_pool_alloc(struct fq_pool *p, u32 max_flows)
{
	p->max = max_flows;
	p->hash_bits = fq_hash_bits_for(max_flows);
	p->pool = fq_zalloc((size_t)max_flows * sizeof(struct fq_flow));
	p->hash = fq_zalloc(((size_t)1 << p->hash_bits) *
			    sizeof(struct fq_flow *));
	p->bucket = fq_zalloc((size_t)max_flows * sizeof(struct fq_flow *));
	if (!p->pool || !p->hash || !p->bucket) {
		fq_pool_arrays_free(p);
		return -ENOMEM;
	}
	return 0;
}

/* Make @p the pool of @fqs (every flow free). */
void fq_pool_install(struct fq_sched *fqs, struct fq_pool *p)
{
	u32 i;

	fqs->pool = p->pool;
	fqs->hash = p->hash;
	fqs->bucket = p->bucket;
	fqs->hash_bits = p->hash_bits;
	fqs->max_flows = p->max;
	fqs->free = NULL;
	for (i = p->max; i-- > 0;) {
		fqs->pool[i].where = FQ_FW_FREE;
		fqs->pool[i].hnext = fqs->free;
		fqs->free = &fqs->pool[i];
	}
	fqs->nr_flows = 0;
}

void fq_pool_free(struct fq_sched *fqs)
{
	struct fq_pool p = {
		.pool = fqs->pool, .hash = fqs->hash, .bucket = fqs->bucket,
	};

	fq_pool_arrays_free(&p);
	fqs->pool = NULL;
	fqs->hash = NULL;
	fqs->bucket = NULL;
	fqs->free = NULL;
}

static struct fq_flow **fq_hash_slot(struct fq_sched *fqs, u64 key)
{
	return &fqs->hash[hash_64(key, fqs->hash_bits)];
}

static void fq_flow_unhash(struct fq_sched *fqs, struct fq_flow *fqf)
{
	struct fq_flow **pp;

	if (fqf->flags & FQ_FF_HASHED) {
		for (pp = fq_hash_slot(fqs, fqf->key); *pp; pp = &(*pp)->hnext) {
			if (*pp == fqf) {
				*pp = fqf->hnext;
				break;
			}
		}
	} else if (fqf->flags & FQ_FF_BUCKET) {
		if (fqs->bucket[fqf->key] == fqf)
			fqs->bucket[fqf->key] = NULL;
	}
	fqf->flags &= ~(FQ_FF_HASHED | FQ_FF_BUCKET);
	fqf->hnext = NULL;
}

/* Return an idle, unlisted flow to the pool. */
static void fq_flow_free(struct fq_sched *fqs, struct fq_flow *fqf)
{
	if (WARN_ON_ONCE(fqf->flags & FQ_FF_OVERFLOW))
		return;
	if (fqs->antic == fqf)
		fqs->antic = NULL;
	fq_flow_unhash(fqs, fqf);
	fqf->flags = 0;
	fqf->where = FQ_FW_FREE;
	fqf->hnext = fqs->free;
	fqs->free = fqf;
	fqs->nr_flows--;
}

/* Take an idle-listed flow off its list and give it back to the pool. */
static void fq_flow_release_now(struct fq_sched *fqs, struct fq_flow *fqf)
{
	fq_flow_unlink(fqs, fqf);
	fq_flow_free(fqs, fqf);
}

/* Free the oldest drained flow that only keeps a claim; false if none. */
static bool fq_flow_reclaim(struct fq_sched *fqs)
{
	struct fq_node *idle;
	int ci, i;

	for (ci = FQ_PRIO_COUNT - 1; ci >= 0; ci--) {
		for (i = 0; i < FQ_IDLE_LISTS; i++) {
			idle = &fqs->cq[ci].idle[i];
			if (fq_list_empty(idle))
				continue;
			fq_flow_release_now(fqs,
				fq_entry(idle->next, struct fq_flow, link));
			return true;
		}
	}
	return false;
}

static struct fq_flow *fq_flow_new(struct fq_sched *fqs, u64 key, u8 flags)
{
	struct fq_flow *fqf;

	if (!fqs->free && !fq_flow_reclaim(fqs))
		return NULL;
	fqf = fqs->free;
	fqs->free = fqf->hnext;
	*fqf = (struct fq_flow){ .key = key, .flags = flags,
				 .where = FQ_FW_NONE, .ci = FQ_PRIO_COUNT,
				 .weight = FQ_WEIGHT_BASE };
	fq_list_init(&fqf->queue);
	fq_list_init(&fqf->link);
	fqs->nr_flows++;
	fqs->st.flow_allocs++;
	return fqf;
}

static struct fq_flow *fq_sfq_lookup(struct fq_sched *fqs, u64 key)
{
	u32 idx = (u32)(fq_hash64(key, fqs->hash_seed) & (fqs->buckets - 1));
	struct fq_flow *fqf = fqs->bucket[idx];

	if (fqf)
		return fqf;
	fqf = fq_flow_new(fqs, idx, FQ_FF_BUCKET);
	if (!fqf)
		return &fqs->overflow;
	fqs->bucket[idx] = fqf;
	return fqf;
}

static struct fq_flow *fq_cfq_lookup(struct fq_sched *fqs, u64 key)
{
	struct fq_flow **slot = fq_hash_slot(fqs, key);
	struct fq_flow *fqf;

	for (fqf = *slot; fqf; fqf = fqf->hnext)
		if (fqf->key == key)
			return fqf;
	fqf = fq_flow_new(fqs, key, FQ_FF_HASHED);
	if (!fqf)
		return &fqs->overflow;
	/* fq_flow_new() may have reclaimed a flow of this very chain */
	fqf->hnext = *slot;
	*slot = fqf;
	return fqf;
}

/* The flow @rq belongs to under the current policy; never NULL. */
struct fq_flow *fq_flow_lookup(struct fq_sched *fqs, struct fq_req *rq)
{
	if (fqs->policy == FQ_POL_SFQ)
		return fq_sfq_lookup(fqs, rq->key);
	return fq_cfq_lookup(fqs, rq->key);
}

/*
 * fq_flow_release - @fqf is idle (nothing queued, batched or in flight)
 * and on no list: keep it while it has a round robin claim (or is the
 * flow anticipation waits for), else give it back to the pool.
 */
void fq_flow_release(struct fq_sched *fqs, struct fq_flow *fqf)
{
	int slot;

	if (fqf->flags & FQ_FF_OVERFLOW)
		return;
	slot = fq_flow_idle_slot(fqs, fqf);
	if ((fqf->flags & FQ_FF_ORPHAN) || fqs->policy == FQ_POL_FIFO ||
	    slot < 0) {
		fq_flow_free(fqs, fqf);
		return;
	}
	fq_list_add_tail(&fqf->link, &fqs->cq[fqf->ci].idle[slot]);
	fqf->where = FQ_FW_IDLE;
}

void fq_flow_maybe_release(struct fq_sched *fqs, struct fq_flow *fqf)
{
	if (fqf->where == FQ_FW_NONE && fq_flow_idle(fqf))
		fq_flow_release(fqs, fqf);
}

/*
 * fq_flows_reap - the device went idle: claims protect nobody any more,
 * so every drained flow goes back to the pool ("freed when drained").
 */
void fq_flows_reap(struct fq_sched *fqs)
{
	struct fq_node *idle;
	u32 ci, i;

	fqs->antic = NULL;
	for (ci = 0; ci < FQ_PRIO_COUNT; ci++) {
		for (i = 0; i < FQ_IDLE_LISTS; i++) {
			idle = &fqs->cq[ci].idle[i];
			while (!fq_list_empty(idle))
				fq_flow_release_now(fqs,
					fq_entry(idle->next, struct fq_flow,
						 link));
		}
	}
}

/* Draw the next sfq hash seed from the core's PRNG (splitmix64 steps). */
void fq_sfq_reseed(struct fq_sched *fqs)
{
	fqs->prng += 0x9E3779B97F4A7C15ull;
	fqs->hash_seed = fq_hash64(fqs->prng, 0);
}

/*
 * fq_sfq_perturb - draw a new hash seed every perturb_ms.  Buckets keep
 * their slot and their queued requests (nothing is stranded: they stay
 * on the round robin); only keys enqueued from now on hash differently.
 */
void fq_sfq_perturb(struct fq_sched *fqs, u64 now_ns)
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

/* Detach every queued request from its flow (they stay on fqs->fifo). */
static void fq_rebuild_detach(struct fq_sched *fqs)
{
	struct fq_node *n;
	u32 i;

	for (i = 0; i < FQ_FIFO_COUNT; i++) {
		for (n = fqs->fifo[i].next; n != &fqs->fifo[i]; n = n->next)
			fq_list_del(&fq_entry(n, struct fq_req, fifo)->node);
	}
	fq_list_init(&fqs->batch);
	fqs->nr_batch = 0;
}

/* Free every flow; flows with requests in flight become orphans. */
static void fq_rebuild_flows(struct fq_sched *fqs)
{
	struct fq_flow *fqf;
	u32 i;

	fqs->antic = NULL;
	for (i = 0; i < fqs->max_flows; i++) {
		fqf = &fqs->pool[i];
		if (fqf->where == FQ_FW_FREE)
			continue;
		fq_list_init(&fqf->link);
		fq_list_init(&fqf->queue);
		fqf->where = FQ_FW_NONE;
		fqf->nr_queued = 0;
		fqf->nr_batch = 0;
		if (!fqf->inflight) {
			fq_flow_free(fqs, fqf);
			continue;
		}
		fq_flow_unhash(fqs, fqf);
		fqf->flags |= FQ_FF_ORPHAN;
	}
	fqf = &fqs->overflow;
	fq_list_init(&fqf->link);
	fq_list_init(&fqf->queue);
	fqf->where = FQ_FW_NONE;
	fqf->nr_queued = 0;
	fqf->nr_batch = 0;
	fqf->ci = FQ_PRIO_COUNT;
	for (i = 0; i < FQ_PRIO_COUNT; i++) {
		fq_classq_init(&fqs->cq[i]);
		fqs->cq[i].round += 2;	/* every old claim is stale */
	}
}

/* Queue the detached requests again, oldest first (merge by seq). */
static void fq_rebuild_requeue(struct fq_sched *fqs)
{
	struct fq_node *cur[FQ_FIFO_COUNT];
	struct fq_req *rq, *best;
	u32 i;

	for (i = 0; i < FQ_FIFO_COUNT; i++)
		cur[i] = fqs->fifo[i].next;
	for (;;) {
		best = NULL;
		for (i = 0; i < FQ_FIFO_COUNT; i++) {
			if (cur[i] == &fqs->fifo[i])
				continue;
			rq = fq_entry(cur[i], struct fq_req, fifo);
			if (!best || rq->seq < best->seq)
				best = rq;
		}
		if (!best)
			break;
		i = fq_rq_fifo(best);
		cur[i] = cur[i]->next;
		fq_req_insert(fqs, best);
	}
}

/*
 * fq_sched_rebuild - take every queued request off its flow, free the
 * flows (keeping those with requests in flight as orphans until they
 * complete), optionally replace the pool by one of @new_max_flows, and
 * queue the requests again in enqueue order under the current policy and
 * tunables.  They keep their enqueue time, so their expiry.  Changing the
 * pool size needs nothing in flight (-EBUSY); -ENOMEM changes nothing.
 */
int fq_sched_rebuild(struct fq_sched *fqs, u32 new_max_flows)
{
	struct fq_pool np = { 0 };
	int ret;

	if (new_max_flows != fqs->max_flows) {
		if (fqs->inflight)
			return -EBUSY;
		ret = fq_pool_alloc(&np, new_max_flows);
		if (ret)
			return ret;
	}
	fq_rebuild_detach(fqs);
	fq_rebuild_flows(fqs);
	if (np.pool) {
		fq_pool_free(fqs);
		fq_pool_install(fqs, &np);
	}
	fq_rebuild_requeue(fqs);
	return 0;
}
