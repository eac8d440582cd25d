// SPDX-License-Identifier: GPL-2.0
/*
 * fq_flow.c - the flow pool: allocation, release of drained flows, reclaim
 * and reap.  Lookup is per policy: fq_cfq.c (hash by key) and fq_sfq.c
 * (bucket by hash(key, perturbation)).
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

void fq_flow_unhash(struct fq_sched *fqs, struct fq_flow *fqf)
{
	if (fqf->flags & FQ_FF_HASHED)
		fq_cfq_unhash(fqs, fqf);
	else if (fqf->flags & FQ_FF_BUCKET)
		fq_sfq_unmap(fqs, fqf);
	fqf->flags &= ~(FQ_FF_HASHED | FQ_FF_BUCKET);
	fqf->hnext = NULL;
}

/* Return an idle, unlisted flow to the pool. */
void fq_flow_free(struct fq_sched *fqs, struct fq_flow *fqf)
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

/* A zeroed flow from the pool (reclaiming if need be), or NULL. */
struct fq_flow *fq_flow_new(struct fq_sched *fqs, u64 key, u8 flags)
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
	fq_flow_head_init(fqf);
	fqs->nr_flows++;
	fqs->st.flow_allocs++;
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

