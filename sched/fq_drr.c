// SPDX-License-Identifier: GPL-2.0
/*
 * fq_drr.c - priority classes, weighted deficit round robin, anticipation
 * and sorted dispatch batches: the operations the cfq and sfq policies
 * share (fq_cfq.c, fq_sfq.c).
 *
 * Each class (RT, BE, IDLE) keeps its busy flows in rounds.  A flow
 * entering a round is credited quantum * weight cost units; serving a
 * request costs FQ_WEIGHT_BASE units per request (fairness=requests) or
 * per byte (fairness=bytes), so a flow of weight 100 gets one quantum
 * per turn and one of weight 400 four.  A weight too small to pay for
 * one request per round (sfq's quantum is one request) builds up credit
 * over several rounds, so the share stays weight over total weight.
 * The flow at the head of the current round is served until its credit
 * is spent (its turn); it then moves to the next round with a fresh
 * credit, keeping any debt (deficit round robin).  When the current round
 * is empty the next one becomes current.
 *
 * A flow that drains while it still has credit in the current round keeps
 * that claim: when its next request comes it goes back to the head of the
 * round and continues its turn instead of queueing behind everybody.  A
 * flow that never leaves its turn unused is thus never punished for having
 * one request at a time, and a flow that comes and goes cannot collect
 * more than its credit per round.  Drained flows with a claim wait on the
 * class's idle lists and are freed when the round their claim belongs to
 * ends (or when the pool needs them).
 *
 * Anticipation (idle_us): when a sync flow drains within its turn (sfq:
 * whenever a sync bucket drains, its turn being one request), the class
 * and the classes below it are held for it while its requests are in
 * flight and for idle_us after the last one completed.  Higher classes
 * and expired requests are never held.
 *
 * The IDLE class is served only when no RT/BE request has been queued or
 * in flight for the idle grace period (fqs->grace_ms).
 */
#include "fq_internal.h"

static const u8 fq_class_index[4] = {
	[FQ_CLASS_NONE] = FQ_CI_BE,
	[FQ_CLASS_RT] = FQ_CI_RT,
	[FQ_CLASS_BE] = FQ_CI_BE,
	[FQ_CLASS_IDLE] = FQ_CI_IDLE,
};

void fq_ioprio_split(u16 ioprio, u32 *ci, u32 *level)
{
	u32 cls = FQ_IOPRIO_CLASS(ioprio);

	if (cls == FQ_CLASS_NONE || cls > FQ_CLASS_IDLE) {
		*ci = FQ_CI_BE;
		*level = 4;
		return;
	}
	*ci = fq_class_index[cls];
	*level = FQ_IOPRIO_LEVEL(ioprio);
}

/* Level 0 (highest) .. 7 -> weight 200 .. 25; level 4 -> FQ_WEIGHT_BASE. */
u32 fq_level_weight(u32 level)
{
	return FQ_LEVEL_WEIGHT_STEP * (8 - (level & 7));
}

/* The weight @rq asks for: its own, else its level's (@level). */
u32 fq_rq_weight(const struct fq_req *rq, u32 level)
{
	if (!rq->weight)
		return fq_level_weight(level);
	return rq->weight < FQ_WEIGHT_MAX ? rq->weight : FQ_WEIGHT_MAX;
}

/*
 * A request of weight @w for a flow already served at a weight: an
 * explicit weight replaces the flow's, a derived one only raises it.
 */
static bool fq_weight_changes(const struct fq_flow *fqf,
			      const struct fq_req *rq, u32 w)
{
	return rq->weight ? w != fqf->weight : w > fqf->weight;
}

static s64 fq_cost(const struct fq_sched *fqs, const struct fq_req *rq)
{
	if (fqs->fairness == FQ_FAIR_BYTES)
		return (s64)fq_rq_bytes(rq) * FQ_WEIGHT_BASE;
	return FQ_WEIGHT_BASE;
}

static s64 fq_allowance(const struct fq_sched *fqs, const struct fq_flow *fqf)
{
	u64 q;

	if (fqs->fairness == FQ_FAIR_BYTES)
		q = fqs->quantum_bytes;
	else if (fqs->pol->one_request_turns)
		q = 1;		/* one request per bucket per round (seed) */
	else
		q = fqs->quantum;
	return (s64)(q * fqf->weight);
}

void fq_classq_init(struct fq_classq *cq)
{
	fq_list_init(&cq->cur);
	fq_list_init(&cq->next);
	fq_list_init(&cq->idle[FQ_IDLE_PREV]);
	fq_list_init(&cq->idle[FQ_IDLE_CUR]);
	fq_list_init(&cq->idle[FQ_IDLE_NEXT]);
	cq->nr_busy = 0;
}

/*
 * Put a flow that has queued requests on its class's rounds:
 *  - unused credit in the current round: head of the current round, so
 *    it continues its turn at once (it was only briefly empty);
 *  - unused credit in the round that just ended (its requests were in
 *    flight when it ended): that credit plus this round's, head of the
 *    current round (a flow served last in every round would otherwise
 *    lose most of every other round);
 *  - credited for the next round: head of the next round;
 *  - otherwise (new, or its claim went stale): like any flow that spent
 *    its turn, tail of the next round with a fresh credit, keeping debt.
 * Only flows that took part in the previous or current round can join
 * the current one, each with at most one credit, so a round is bounded
 * and nobody in the next round is starved.
 */
static void fq_drr_place(struct fq_sched *fqs, struct fq_flow *fqf)
{
	struct fq_classq *cq = &fqs->cq[fqf->ci];
	u32 d = fqf->round - cq->round;

	if (d == 0 && fqf->deficit > 0) {
		fq_list_add_head(&fqf->link, &cq->cur);
	} else if (d == (u32)-1 && fqf->deficit > 0) {
		fqf->deficit += fq_allowance(fqs, fqf);
		fqf->round = cq->round;
		fq_list_add_head(&fqf->link, &cq->cur);
	} else if (d == 1) {
		fq_list_add_head(&fqf->link, &cq->next);
	} else {
		if (fqf->deficit > 0)
			fqf->deficit = 0;
		fqf->deficit += fq_allowance(fqs, fqf);
		fqf->round = cq->round + 1;
		fq_list_add_tail(&fqf->link, &cq->next);
	}
	fqf->where = FQ_FW_BUSY;
	cq->nr_busy++;
}

static void fq_drr_set_prio(struct fq_sched *fqs, struct fq_flow *fqf,
			    u16 ioprio, u32 ci, u32 weight)
{
	if (ci != fqf->ci) {
		/* claims belong to a class's rounds: none in the new one */
		fqf->ci = ci;
		fqf->round = fqs->cq[ci].round + 2;
	}
	fqf->ioprio = ioprio;
	fqf->weight = weight;
}

static u16 fq_ioprio_norm(u32 ci, u32 level)
{
	static const u8 cls[FQ_PRIO_COUNT] = {
		[FQ_CI_RT] = FQ_CLASS_RT,
		[FQ_CI_BE] = FQ_CLASS_BE,
		[FQ_CI_IDLE] = FQ_CLASS_IDLE,
	};

	return FQ_IOPRIO(cls[ci], level);
}

/*
 * fq_drr_activate - @rq was just added to @fqf's queue.  A flow that
 * becomes busy takes the request's class and weight; a busy flow is only
 * ever upgraded to a better class (which moves it), and its weight, that
 * of its next credit, changes as fq_weight_changes() says.
 */
void fq_drr_activate(struct fq_sched *fqs, struct fq_flow *fqf,
		     const struct fq_req *rq)
{
	u32 ci, level, w;
	u16 prio;

	fq_ioprio_split(rq->ioprio, &ci, &level);
	prio = fq_ioprio_norm(ci, level);
	w = fq_rq_weight(rq, level);
	if (fqf->where == FQ_FW_BUSY) {
		if (ci < fqf->ci) {
			fq_flow_unlink(fqs, fqf);
			fq_drr_set_prio(fqs, fqf, prio, ci, w);
			fq_drr_place(fqs, fqf);
		} else if (ci == fqf->ci && fq_weight_changes(fqf, rq, w)) {
			fq_drr_set_prio(fqs, fqf, prio, ci, w);
		}
		return;
	}
	fq_flow_unlink(fqs, fqf);	/* off an idle list, if on one */
	if ((!fqf->nr_batch && !fqf->inflight) || ci < fqf->ci ||
	    (ci == fqf->ci && fq_weight_changes(fqf, rq, w)))
		fq_drr_set_prio(fqs, fqf, prio, ci, w);
	fq_drr_place(fqs, fqf);
}

/*
 * fq_drr_charge - @fqf is served @rq: spend its credit; when the credit
 * of this round is spent, credit the next round and end the turn.
 */
void fq_drr_charge(struct fq_sched *fqs, struct fq_flow *fqf,
		   const struct fq_req *rq)
{
	struct fq_classq *cq = &fqs->cq[fqf->ci];

	fqf->deficit -= fq_cost(fqs, rq);
	if (fqf->round != cq->round || fqf->deficit > 0)
		return;
	fqf->deficit += fq_allowance(fqs, fqf);
	fqf->round = cq->round + 1;
	if (fqf->where == FQ_FW_BUSY) {
		fq_list_del(&fqf->link);
		fq_list_add_tail(&fqf->link, &cq->next);
	}
}

/* The current round is over: the next one starts, stale claims go. */
static void fq_classq_next_round(struct fq_sched *fqs, struct fq_classq *cq)
{
	struct fq_node *prev = &cq->idle[FQ_IDLE_PREV];
	struct fq_flow *fqf;

	cq->round++;
	while (!fq_list_empty(prev)) {
		fqf = fq_entry(prev->next, struct fq_flow, link);
		fq_flow_unlink(fqs, fqf);
		fq_flow_release(fqs, fqf);
	}
	fq_list_splice_tail(&cq->idle[FQ_IDLE_CUR], prev);
	fq_list_splice_tail(&cq->idle[FQ_IDLE_NEXT], &cq->idle[FQ_IDLE_CUR]);
	fq_list_splice_tail(&cq->next, &cq->cur);
}

/*
 * A sync flow drained: hold the turn for it if it is still within its
 * turn (cfq: credit left in the current round).  An sfq turn is a single
 * request, so there a sync bucket is held for whenever it drains: the
 * other buckets then get one request per round each while it thinks.
 */
static void fq_antic_start(struct fq_sched *fqs, struct fq_flow *fqf,
			   const struct fq_req *rq)
{
	u32 round = fqs->cq[fqf->ci].round;
	bool in_turn = fqf->round == round && fqf->deficit > 0;

	if (fqs->pol->one_request_turns && fqf->round == round + 1)
		in_turn = true;
	if (!fqs->idle_us || !(rq->flags & FQ_REQ_SYNC) ||
	    (fqf->flags & FQ_FF_ORPHAN) || !in_turn)
		return;
	fqs->antic = fqf;
	fqs->antic_blocked = false;
	fqf->antic_until = 0;
}

static struct fq_req *fq_classq_pick(struct fq_sched *fqs,
				     struct fq_classq *cq)
{
	struct fq_flow *fqf;
	struct fq_req *rq;

	for (;;) {
		if (fq_list_empty(&cq->cur))
			fq_classq_next_round(fqs, cq);
		fqf = fq_entry(cq->cur.next, struct fq_flow, link);
		if (fqf->deficit > 0)
			break;
		/* entered with debt: one more round of credit */
		fqf->deficit += fq_allowance(fqs, fqf);
		fqf->round = cq->round + 1;
		fq_list_del(&fqf->link);
		fq_list_add_tail(&fqf->link, &cq->next);
	}
	rq = fq_entry(fqf->queue.next, struct fq_req, node);
	fq_list_del(&rq->node);
	fqf->nr_queued--;
	fq_flow_head_update(fqs, fqf);
	fq_drr_charge(fqs, fqf, rq);
	if (!fqf->nr_queued) {
		fq_flow_unlink(fqs, fqf);
		fq_antic_start(fqs, fqf, rq);
	}
	return rq;
}

static void fq_antic_cancel(struct fq_sched *fqs)
{
	struct fq_flow *fqf = fqs->antic;

	fqs->antic = NULL;
	if (fqf->round == fqs->cq[fqf->ci].round && fqf->deficit > 0)
		fqf->deficit = 0;	/* the turn is over */
	if (fqf->where == FQ_FW_IDLE) {
		fq_flow_unlink(fqs, fqf);
		fq_flow_release(fqs, fqf);
	}
}

/* True while the turn is held for fqs->antic; cancels it when it ends. */
static bool fq_antic_holds(struct fq_sched *fqs, u64 now_ns)
{
	struct fq_flow *fqf = fqs->antic;

	if (fqf->nr_queued || !fqs->idle_us) {
		fq_antic_cancel(fqs);
		return false;
	}
	if (!fqf->inflight && !fqf->nr_batch &&
	    (!fqf->antic_until || now_ns >= fqf->antic_until)) {
		fq_antic_cancel(fqs);
		return false;
	}
	if (!fqs->antic_blocked) {
		fqs->antic_blocked = true;
		fqs->st.idle_waits++;
	}
	return true;
}

static bool fq_idle_class_allowed(const struct fq_sched *fqs, u64 now_ns)
{
	if (fqs->nonidle_busy)
		return false;
	if (!fqs->nonidle_seen)
		return true;
	return now_ns >= fqs->nonidle_ns + (u64)fqs->grace_ms * 1000000;
}

/*
 * Take the next request by class, round and turn, or NULL when nothing
 * may go now.  The request is off its flow's queue and charged; the
 * caller puts it on the dispatch batch.
 */
static struct fq_req *fq_drr_pick_one(struct fq_sched *fqs, u64 now_ns)
{
	struct fq_classq *cq;
	u32 ci;

	for (ci = 0; ci < FQ_PRIO_COUNT; ci++) {
		cq = &fqs->cq[ci];
		if (fqs->antic && fqs->antic->ci <= ci &&
		    fq_antic_holds(fqs, now_ns))
			return NULL;
		if (!cq->nr_busy)
			continue;
		if (ci == FQ_CI_IDLE && !fq_idle_class_allowed(fqs, now_ns))
			return NULL;
		return fq_classq_pick(fqs, cq);
	}
	return NULL;
}

/* Insert into the batch in sector order (stable for equal sectors). */
static void fq_batch_add(struct fq_sched *fqs, struct fq_req *rq)
{
	struct fq_node *pos = fqs->batch.prev;

	while (pos != &fqs->batch &&
	       fq_entry(pos, struct fq_req, node)->sector > rq->sector)
		pos = pos->prev;
	fq_list_insert(&rq->node, pos, pos->next);
	rq->state = FQ_RS_BATCH;
	rq->flow->nr_batch++;
	fqs->nr_batch++;
}

static void fq_batch_fill(struct fq_sched *fqs, u64 now_ns)
{
	u32 room = fqs->depth - fqs->inflight;
	struct fq_req *rq;

	if (room > FQ_BATCH_MAX)
		room = FQ_BATCH_MAX;
	while (room--) {
		rq = fq_drr_pick_one(fqs, now_ns);
		if (!rq)
			break;
		fq_batch_add(fqs, rq);
	}
}

/*
 * fq_drr_pick - the ->pick() of cfq and sfq: the first request of the
 * dispatch batch.  When the batch is empty, a new one is picked: up to
 * min(depth - inflight, FQ_BATCH_MAX) requests by class, round and turn,
 * sorted by sector, so that the caller submits them together.
 */
struct fq_req *fq_drr_pick(struct fq_sched *fqs, u64 now_ns)
{
	if (fq_list_empty(&fqs->batch))
		fq_batch_fill(fqs, now_ns);
	if (fq_list_empty(&fqs->batch))
		return NULL;
	return fq_entry(fqs->batch.next, struct fq_req, node);
}

/* When anticipation or the idle grace period ends, or 0. */
u64 fq_drr_next_event(struct fq_sched *fqs, u64 now_ns)
{
	struct fq_flow *fqf = fqs->antic;
	u64 t = 0, grace;

	if (fqf && !fqf->inflight && !fqf->nr_batch && fqf->antic_until)
		t = fqf->antic_until;
	if (fqs->cq[FQ_CI_IDLE].nr_busy && !fqs->nonidle_busy &&
	    fqs->nonidle_seen) {
		grace = fqs->nonidle_ns + (u64)fqs->grace_ms * 1000000;
		if (grace > now_ns)
			t = fq_time_min(t, grace);
	}
	return t;
}
