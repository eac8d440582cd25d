// SPDX-License-Identifier: GPL-2.0
/*
 * fq_switch.c - the rebuild behind a policy, fairness or buckets
 * change: every queued request is taken off its flow and queued
 * again, in enqueue order, under the new settings.  Nothing is lost, and
 * nothing is starved: the requests first in their new flows start their
 * bounded wait again from the time of the switch.
 */
#include "fq_internal.h"

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
	for (i = 0; i < FQ_FIFO_IDLE * FQ_EXPIRE_SCALES; i++)
		fq_list_init(&fqs->heads[i / FQ_EXPIRE_SCALES][i % FQ_EXPIRE_SCALES]);
}

/* Empty @fqf's queue and links: its requests were detached already. */
static void fq_rebuild_reset(struct fq_flow *fqf)
{
	fq_list_init(&fqf->link);
	fq_list_init(&fqf->boost_link);
	fq_list_init(&fqf->queue);
	fq_flow_head_init(fqf);
	fqf->where = FQ_FW_NONE;
	fqf->nr_queued = 0;
	fqf->nr_batch = 0;
	fqf->nr_ra = 0;
}

/*
 * Free every flow; flows with requests in flight become orphans.  Walks
 * the flows that exist (fqs->flows).
 */
static void fq_rebuild_flows(struct fq_sched *fqs)
{
	struct fq_node *n, *next;
	struct fq_flow *fqf;
	u32 i;

	fqs->antic = NULL;
	for (n = fqs->flows.next; n != &fqs->flows; n = next) {
		next = n->next;		/* fq_flow_free() unlinks n */
		fqf = fq_entry(n, struct fq_flow, all);
		fq_rebuild_reset(fqf);
		if (!fqf->inflight) {
			fq_flow_free(fqs, fqf);
			continue;
		}
		fq_flow_unmap(fqs, fqf);
		fqf->flags |= FQ_FF_ORPHAN;
	}
	fq_list_init(&fqs->reap);	/* its flows were freed above */
	fq_rebuild_reset(&fqs->overflow);
	fqs->overflow.ci = FQ_PRIO_COUNT;
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
 * Take every queued request off its flow, free the flows (keeping those
 * with requests in flight as orphans until they complete) while @fqs's
 * policy is still the one that mapped them, install @pol, and queue the
 * requests again in enqueue order under @pol and the current tunables.
 * The first request of each new flow starts its bounded wait at the time
 * of the rebuild.
 */
static void fq_rebuild(struct fq_sched *fqs, const struct fq_policy *pol)
{
	fq_rebuild_detach(fqs);
	fq_rebuild_flows(fqs);
	fq_flow_mem_clear(fqs);
	fqs->pol = pol;
	fq_rebuild_requeue(fqs);
}

/*
 * fq_sched_rebuild - re-queue everything under the current policy after
 * a fairness or buckets change (see fq_rebuild() above).
 */
void fq_sched_rebuild(struct fq_sched *fqs)
{
	fq_rebuild(fqs, fqs->pol);
}

/* fq_sched_switch - make @pol the policy; every queued request moves. */
void fq_sched_switch(struct fq_sched *fqs, const struct fq_policy *pol)
{
	fq_rebuild(fqs, pol);
}
