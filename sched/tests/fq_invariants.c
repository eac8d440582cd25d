// SPDX-License-Identifier: GPL-2.0
/*
 * fq_invariants.c - walk every internal structure of one fq_sched and
 * check that the counters, lists and states agree with each other.
 */
#include "fq_test.h"

static int fq_bad;

#define INV(cond) do {							\
	if (!(cond)) {							\
		fq_bad++;						\
		fprintf(stderr, "  invariant %s:%d: %s\n",		\
			__FILE__, __LINE__, #cond);			\
	}								\
} while (0)

static unsigned int list_len(const struct fq_node *h)
{
	const struct fq_node *n;
	unsigned int len = 0;

	for (n = h->next; n != h; n = n->next) {
		INV(n->next->prev == n);
		len++;
		if (len > 10000000)
			break;
	}
	return len;
}

static void check_flow(struct fq_sched *fqs, struct fq_flow *f,
		       unsigned int *batch, unsigned int *inflight)
{
	struct fq_node *n;
	struct fq_req *rq;
	unsigned int len = 0, ra = 0;

	for (n = f->queue.next; n != &f->queue; n = n->next) {
		rq = fq_entry(n, struct fq_req, node);
		INV(rq->state == FQ_RS_QUEUED);
		INV(rq->flow == f);
		len++;
		ra += !!(rq->flags & FQ_REQ_RAHEAD);
	}
	INV(len == f->nr_queued);
	/* read-ahead counted while queued or in the batch */
	for (n = fqs->batch.next; n != &fqs->batch; n = n->next) {
		rq = fq_entry(n, struct fq_req, node);
		ra += rq->flow == f && (rq->flags & FQ_REQ_RAHEAD);
	}
	INV(ra == f->nr_ra);
	/* the first queued request is filed on the heads list of its kind */
	rq = f->nr_queued ? fq_entry(f->queue.next, struct fq_req, node) : NULL;
	INV(f->head == rq);
	INV((rq && fq_rq_fifo(rq) != FQ_FIFO_IDLE) ==
	    (f->head_link.next != &f->head_link));
	*batch += f->nr_batch;
	*inflight += f->inflight;
	if (!fqs->pol->activate) {
		/* a policy that never places flows on a class's lists */
		INV(f->where == FQ_FW_NONE);
		return;
	}
	switch (f->where) {
	case FQ_FW_BUSY:
		INV(f->nr_queued > 0);
		INV(f->ci < FQ_PRIO_COUNT);
		INV(fq_round_diff(f->round, fqs->cq[f->ci].round) >= 0);
		INV(f->deficit > 0);
		break;
	case FQ_FW_IDLE:
		INV(fq_flow_idle(f));
		INV(!(f->flags & FQ_FF_OVERFLOW));
		break;
	case FQ_FW_NONE:
		INV(f->nr_queued == 0);
		/* idle on no list: the overflow flow, or the one waited for */
		INV(!fq_flow_idle(f) || (f->flags & FQ_FF_OVERFLOW) ||
		    f == fqs->antic);
		break;
	default:
		INV(0);
	}
}

static void check_classes(struct fq_sched *fqs)
{
	struct fq_classq *cq;
	struct fq_flow *f;
	struct fq_node *n;
	unsigned int ci, busy, i, j, len, later, far;
	struct fq_node *h;

	for (ci = 0; ci < FQ_PRIO_COUNT; ci++) {
		cq = &fqs->cq[ci];
		busy = 0;
		for (n = cq->cur.next; n != &cq->cur; n = n->next) {
			f = fq_entry(n, struct fq_flow, link);
			INV(f->where == FQ_FW_BUSY && f->ci == ci);
			INV(f->round == cq->round);
			busy++;
		}
		for (n = cq->next.next; n != &cq->next; n = n->next) {
			f = fq_entry(n, struct fq_flow, link);
			INV(f->where == FQ_FW_BUSY && f->ci == ci);
			INV(f->round == cq->round + 1);
			busy++;
		}
		/*
		 * debtors: credited for a round after next, none due unseen;
		 * on the list of their round while near, else on far
		 */
		later = 0;
		for (i = 0; i < FQ_LATER_WHEEL; i++) {
			len = 0;
			for (n = cq->later[i].next; n != &cq->later[i];
			     n = n->next) {
				f = fq_entry(n, struct fq_flow, link);
				INV(f->where == FQ_FW_BUSY && f->ci == ci);
				INV(fq_round_diff(f->round, cq->round) >= 2);
				INV(fq_round_diff(f->round, cq->round) <
				    FQ_LATER_WHEEL);
				INV((f->round & (FQ_LATER_WHEEL - 1)) == i);
				INV(!f->later_far);
				INV(fq_round_diff(f->round, cq->later_min) >= 0);
				len++;
			}
			INV(len == cq->later_n[i]);
			INV(!len == !(cq->later_map[i / 64] &
				      (1ull << (i % 64))));
			later += len;
		}
		far = 0;
		for (j = 0; j < 2; j++) {
			h = j ? &cq->far_done : &cq->far;
			for (n = h->next; n != h; n = n->next) {
				f = fq_entry(n, struct fq_flow, link);
				INV(f->where == FQ_FW_BUSY && f->ci == ci);
				INV(fq_round_diff(f->round, cq->round) >= 2);
				INV(f->later_far);
				INV(fq_round_diff(f->round, cq->later_min) >= 0);
				INV(fq_round_diff(f->round, cq->far_min) >= 0);
				INV(!j || fq_round_diff(f->round,
							cq->far_done_min) >= 0);
				far++;
			}
		}
		INV(far == cq->nr_far);
		INV(later + far == cq->nr_later);
		busy += later + far;
		INV(busy == cq->nr_busy);
		/* idle flows to file again or free: drained, of this class */
		for (n = cq->refile.next; n != &cq->refile; n = n->next) {
			f = fq_entry(n, struct fq_flow, link);
			INV(f->where == FQ_FW_IDLE && f->ci == ci);
			INV(f->reap_gen == fqs->reap_gen);
		}
		/* boosted (fq_boost.c): busy flows of the BE class, queued */
		i = 0;
		for (n = cq->boost.next; n != &cq->boost; n = n->next) {
			f = fq_entry(n, struct fq_flow, boost_link);
			INV(f->where == FQ_FW_BUSY && f->ci == ci);
			INV(ci == FQ_CI_BE && f->boost_until && f->nr_queued);
			i++;
		}
		INV(i <= busy);
		/*
		 * idle: on the list of their round, from the round just
		 * ended on, or parked elsewhere while that is far ahead
		 */
		for (i = 0; i < FQ_IDLE_WHEEL; i++) {
			for (n = cq->idle[i].next; n != &cq->idle[i];
			     n = n->next) {
				f = fq_entry(n, struct fq_flow, link);
				INV(f->where == FQ_FW_IDLE && f->ci == ci);
				INV(fq_round_diff(f->round, cq->round) >= -1);
				INV(fq_idle_bucket(f->round) == i ||
				    fq_round_diff(f->round, cq->round) >= 0);
			}
		}
	}
}

/* Heads lists: flows with a waiting first request, in head_ns order. */
static void check_heads(struct fq_sched *fqs)
{
	struct fq_flow *f, *prev;
	struct fq_node *n;
	unsigned int i;

	for (i = 0; i < FQ_FIFO_IDLE * FQ_EXPIRE_SCALES; i++) {
		struct fq_node *h = &fqs->heads[i / FQ_EXPIRE_SCALES]
					       [i % FQ_EXPIRE_SCALES];

		prev = NULL;
		for (n = h->next; n != h; n = n->next) {
			f = fq_entry(n, struct fq_flow, head_link);
			INV(f->nr_queued > 0 && f->head);
			INV(f->head && fq_rq_fifo(f->head) == i / FQ_EXPIRE_SCALES);
			INV(!prev || prev->head_ns <= f->head_ns);
			INV(f->head_ns <= fqs->now_ns);
			prev = f;
		}
	}
}

static void check_requests(struct fq_sched *fqs)
{
	struct fq_req *rq, *prev;
	struct fq_node *n;
	unsigned int i, total = 0, len = 0;
	u64 sector = 0;

	for (i = 0; i < FQ_FIFO_COUNT; i++) {
		prev = NULL;
		for (n = fqs->fifo[i].next; n != &fqs->fifo[i]; n = n->next) {
			rq = fq_entry(n, struct fq_req, fifo);
			INV(rq->state == FQ_RS_QUEUED ||
			    rq->state == FQ_RS_BATCH);
			INV(fq_rq_fifo(rq) == i);
			INV(!prev || prev->seq < rq->seq);
			prev = rq;
			total++;
		}
	}
	INV(total == fqs->queued);
	for (n = fqs->batch.next; n != &fqs->batch; n = n->next) {
		rq = fq_entry(n, struct fq_req, node);
		INV(rq->state == FQ_RS_BATCH);
		INV(rq->sector >= sector);
		sector = rq->sector;
		len++;
	}
	INV(len == fqs->nr_batch);
}

static unsigned int sync_on(const struct fq_node *h)
{
	const struct fq_node *n;
	unsigned int sync = 0;

	for (n = h->next; n != h; n = n->next)
		sync += !!(fq_entry(n, struct fq_req, node)->flags & FQ_REQ_SYNC);
	return sync;
}

/* sync_out counts the sync requests queued, in the batch and in flight */
static void check_sync_out(struct fq_sched *fqs)
{
	unsigned int sync = sync_on(&fqs->batch) + sync_on(&fqs->overflow.queue);
	const struct fq_node *n;

	for (n = fqs->flows.next; n != &fqs->flows; n = n->next)
		sync += sync_on(&fq_entry(n, struct fq_flow, all)->queue);
	INV(sync <= fqs->sync_out);
	INV(fqs->sync_out <= sync + fqs->inflight);
}

int fq_check_invariants(struct fq_sched *fqs)
{
	unsigned int i, used = 0, batch = 0, inflight = 0, queued = 0;
	unsigned int mapped = 0, chained;
	struct fq_flow *f;
	struct fq_node *n;

	fq_bad = 0;
	/* fqs->flows holds exactly the flows that exist */
	for (n = fqs->flows.next; n != &fqs->flows && used <= fqs->nr_flows;
	     n = n->next) {
		f = fq_entry(n, struct fq_flow, all);
		INV(n->next->prev == n);
		INV(f->where != FQ_FW_FREE);
		used++;
		check_flow(fqs, f, &batch, &inflight);
		queued += f->nr_queued + f->nr_batch;
		if (f->flags & FQ_FF_MAPPED) {
			INV(fq_table_lookup(fqs, f->key) == f);
			mapped++;
		}
		if (f->flags & FQ_FF_BUCKET)
			INV(f->key < fqs->buckets);
	}
	check_flow(fqs, &fqs->overflow, &batch, &inflight);
	queued += fqs->overflow.nr_queued + fqs->overflow.nr_batch;
	INV(used == fqs->nr_flows);
	for (i = 0, f = fqs->free; f && i <= FQ_FLOW_SPARE; f = f->hnext, i++)
		INV(f->where == FQ_FW_FREE);
	INV(i == fqs->nr_spare && i <= FQ_FLOW_SPARE);
	/* the table holds the mapped flows and nothing else */
	for (i = 0, chained = 0; i < (1u << fqs->table->bits); i++)
		for (f = fqs->table->chain[i]; f && chained <= used;
		     f = f->hnext, chained++)
			INV(f->where != FQ_FW_FREE && (f->flags & FQ_FF_MAPPED));
	/* ... with the one it replaces while a rehash is under way */
	for (i = 0; fqs->table_old && i < (1u << fqs->table_old->bits); i++) {
		INV(i >= fqs->rehash_pos || !fqs->table_old->chain[i]);
		for (f = fqs->table_old->chain[i]; f && chained <= used;
		     f = f->hnext, chained++)
			INV(f->where != FQ_FW_FREE && (f->flags & FQ_FF_MAPPED));
	}
	INV(chained == mapped);
	INV(batch == fqs->nr_batch);
	INV(inflight == fqs->inflight);
	INV(queued == fqs->queued);
	INV(!fqs->antic || fqs->antic->where != FQ_FW_FREE);
	INV(list_len(&fqs->batch) == fqs->nr_batch);
	/* the reap list: drained flows of before the latest reap, dead */
	for (n = fqs->reap.next; n != &fqs->reap; n = n->next) {
		f = fq_entry(n, struct fq_flow, link);
		INV(f->where == FQ_FW_IDLE && f->reap_gen != fqs->reap_gen);
		INV(fq_flow_dead(fqs, f));
	}
	check_classes(fqs);
	check_heads(fqs);
	check_requests(fqs);
	check_sync_out(fqs);
	return fq_bad;
}
