// SPDX-License-Identifier: GPL-2.0
/*
 * fq_drr.c - priority classes, weighted deficit round robin, anticipation
 * and sorted dispatch batches: the operations the cfq and sfq policies
 * share (fq_cfq.c, fq_sfq.c).
 *
 * Each class (RT, BE, IDLE) keeps its busy flows in rounds.  A flow
 * entering a round is credited quantum * weight cost units; serving a
 * request costs FQ_WEIGHT_BASE units per request (fairness=requests), per
 * byte (fairness=bytes) or per ns of its modelled device time
 * (fairness=time: fq_charge_ns(), a quantum being quantum_us), so a flow of weight 100 gets one quantum
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
 * ends (or when the pool needs them); so do drained flows that owe a debt,
 * until the round they are credited for is over.
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

/*
 * fairness=time: fq_charge_ns() <= 2^40, times at most 2 (the dither), so
 * this is below 2^48.  The dither (fq_cost_dither()) is the turns' alone:
 * what anticipation and the boost compare stays the model's.
 */
static s64 fq_cost(const struct fq_sched *fqs, const struct fq_req *rq)
{
	u64 ns;

	if (fqs->fairness == FQ_FAIR_BYTES)
		return (s64)fq_rq_bytes(rq) * FQ_WEIGHT_BASE;
	if (fqs->fairness == FQ_FAIR_TIME) {
		ns = fq_charge_ns(fqs, rq) *
		     fq_cost_dither(&fqs->fc, rq->flags & FQ_REQ_WRITE) / 64;
		return (s64)(ns ? ns : 1) * FQ_WEIGHT_BASE;
	}
	return FQ_WEIGHT_BASE;
}

/* A turn's credit per unit of weight [cost units]. */
static u64 fq_quantum(const struct fq_sched *fqs)
{
	u64 q;

	if (fqs->fairness == FQ_FAIR_BYTES)
		q = fqs->quantum_bytes;
	else if (fqs->fairness == FQ_FAIR_TIME)
		q = (u64)fqs->quantum_us * 1000;
	else if (fqs->pol->one_request_turns)
		q = 1;		/* one request per bucket per round (seed) */
	else
		q = fqs->quantum;
	return q;
}

/*
 * A turn's credit for @fqf.  With more than FQ_ROUND_FLOWS flows' worth of
 * weight busy in its class, every turn shrinks in proportion, so a round
 * still grants about FQ_ROUND_FLOWS turns' credit in all and weights keep
 * their ratios.  Otherwise a round of 10,000 flows, each taking a whole
 * turn in one burst (a flow at queue depth 1 returns with credit left and
 * goes again), would last longer than any measurement, and which flows
 * got their turn in it would show as unfairness (the simulator's W7
 * table, 10,000 flows at fairness=time).  A credit below a request's
 * cost is a debt settled by skipping rounds (fq_drr_settle()), still
 * O(1).
 */
static s64 fq_allowance(const struct fq_sched *fqs, const struct fq_flow *fqf)
{
	const u64 cap = (u64)FQ_ROUND_FLOWS * FQ_WEIGHT_BASE;
	u64 a = fq_quantum(fqs) * fqf->weight;
	u32 wsum;

	if (fqf->ci >= FQ_PRIO_COUNT)
		return (s64)a;
	wsum = fqs->cq[fqf->ci].wsum;
	if (wsum > cap)
		a = div_u64(a * cap, wsum);
	return a ? (s64)a : 1;
}

/* How many requests like @rq one turn of @fqf serves, at least one. */
u32 fq_drr_turn_reqs(const struct fq_sched *fqs, const struct fq_flow *fqf,
		     const struct fq_req *rq)
{
	s64 cost = fq_cost(fqs, rq);
	u64 n = div64_u64((u64)fq_allowance(fqs, fqf), cost > 0 ? (u64)cost : 1);

	if (n > 0xffffffffu)
		return 0xffffffffu;
	return n ? (u32)n : 1;
}

/* The credit of a turn at FQ_WEIGHT_BASE [cost units]. */
s64 fq_drr_base_allowance(const struct fq_sched *fqs)
{
	return (s64)(fq_quantum(fqs) * FQ_WEIGHT_BASE);
}

void fq_classq_init(struct fq_classq *cq)
{
	u32 i;

	fq_list_init(&cq->cur);
	fq_list_init(&cq->next);
	for (i = 0; i < FQ_IDLE_WHEEL; i++)
		fq_list_init(&cq->idle[i]);
	for (i = 0; i < FQ_LATER_WHEEL; i++) {
		fq_list_init(&cq->later[i]);
		cq->later_n[i] = 0;
	}
	for (i = 0; i < FQ_LATER_WHEEL / 64; i++)
		cq->later_map[i] = 0;
	fq_list_init(&cq->far);
	fq_list_init(&cq->far_done);
	fq_list_init(&cq->refile);
	cq->nr_later = 0;
	cq->nr_far = 0;
	fq_list_init(&cq->boost);
	cq->boost_tokens = 0;
	cq->nr_busy = 0;
	cq->wsum = 0;
	cq->round_work = 0;
}

/*
 * A flow out of credit takes as many rounds' credit as its debt needs,
 * at once: deficit + k * allowance > 0 with k computed, not looped (a
 * weight-1 flow of 1 MiB requests in bytes mode needs 200 rounds).  Its
 * round moves k rounds on: it is served again when the class gets there.
 */
static void fq_drr_settle(struct fq_sched *fqs, struct fq_flow *fqf)
{
	s64 a = fq_allowance(fqs, fqf);
	u64 k;

	if (fqf->deficit > 0)
		return;
	k = div64_u64((u64)(-fqf->deficit), (u64)a) + 1;
	fqf->deficit += (s64)k * a;
	fqf->round += (u32)k;
}

/*
 * The debtors' lists (fq_internal.h): later[] by round up to
 * FQ_LATER_WHEEL - 1 rounds ahead, far beyond.  later_n[] counts the
 * flows of each list and later_map[] has a bit set for each list that
 * has any, so that a new round takes its list whole and the class finds
 * the earliest round by a few words, never by a walk.
 */
static u32 fq_later_bucket(u32 round)
{
	return round & (FQ_LATER_WHEEL - 1);
}

/* Index of the lowest bit set in @x != 0 (de Bruijn: no libgcc, no loop). */
static u32 fq_ctz64(u64 x)
{
	static const u8 pos[64] = {
		0, 1, 2, 53, 3, 7, 54, 27, 4, 38, 41, 8, 34, 55, 48, 28,
		62, 5, 39, 46, 44, 42, 22, 9, 24, 35, 59, 56, 49, 18, 29, 11,
		63, 52, 6, 26, 37, 40, 33, 47, 61, 45, 43, 21, 23, 58, 17, 10,
		51, 25, 36, 32, 60, 20, 57, 16, 50, 31, 19, 15, 30, 14, 13, 12,
	};

	return pos[((x & (~x + 1)) * 0x022fdd63cc95386dull) >> 58];
}

/*
 * How many rounds from @round on, at most @span, to the first one whose
 * list of later[] has flows (@span: none).
 */
static u32 fq_later_next(struct fq_sched *fqs, const struct fq_classq *cq,
			 u32 round, u32 span)
{
	u32 off = 0, b;
	u64 bits;

	while (off < span) {
		fqs->pick_steps++;
		b = fq_later_bucket(round + off);
		bits = cq->later_map[b / 64] >> (b % 64);
		if (bits) {
			off += fq_ctz64(bits);
			break;
		}
		off += 64 - b % 64;
	}
	return off < span ? off : span;
}

static void fq_later_file(struct fq_classq *cq, struct fq_flow *fqf)
{
	u32 b = fq_later_bucket(fqf->round);

	fq_list_add_tail(&fqf->link, &cq->later[b]);
	cq->later_n[b]++;
	cq->later_map[b / 64] |= 1ull << (b % 64);
	fqf->later_far = false;
}

/* The flows of later[@b] are gone: the caller took the list whole. */
static void fq_later_took(struct fq_classq *cq, u32 b)
{
	cq->nr_later -= cq->later_n[b];
	cq->later_n[b] = 0;
	cq->later_map[b / 64] &= ~(1ull << (b % 64));
}

static void fq_later_add(struct fq_classq *cq, struct fq_flow *fqf)
{
	if (!cq->nr_later || fq_round_diff(fqf->round, cq->later_min) < 0)
		cq->later_min = fqf->round;
	cq->nr_later++;
	if (fq_round_diff(fqf->round, cq->round) < FQ_LATER_WHEEL) {
		fq_later_file(cq, fqf);
		return;
	}
	if (!cq->nr_far || fq_round_diff(fqf->round, cq->far_min) < 0)
		cq->far_min = fqf->round;
	if (fq_list_empty(&cq->far_done) ||
	    fq_round_diff(fqf->round, cq->far_done_min) < 0)
		cq->far_done_min = fqf->round;
	cq->nr_far++;
	fq_list_add_tail(&fqf->link, &cq->far_done);
	fqf->later_far = true;
}

/* Whether @fqf is on its class's later[] or far (credited after next). */
bool fq_flow_on_later(const struct fq_sched *fqs, const struct fq_flow *fqf)
{
	return fqf->where == FQ_FW_BUSY &&
	       fq_round_diff(fqf->round, fqs->cq[fqf->ci].round) >= 2;
}

/* @fqf leaves later[] or far: the caller takes its link off. */
void fq_later_leave(struct fq_classq *cq, const struct fq_flow *fqf)
{
	u32 b = fq_later_bucket(fqf->round);

	cq->nr_later--;
	if (fqf->later_far) {
		cq->nr_far--;
		return;
	}
	if (!--cq->later_n[b])
		cq->later_map[b / 64] &= ~(1ull << (b % 64));
}

/*
 * One step through far: the next flow not looked at in this pass goes
 * to later[] if it is near enough, else to far_done; at the end of a
 * pass far_min is the earliest round left.  False when far is empty.
 * A class files FQ_CHORE_STEPS at every pick, so a pass over F debtors
 * takes F / FQ_CHORE_STEPS picks, and a debtor near enough is filed
 * before its round comes (FQ_LATER_WHEEL - 2 rounds from then) unless
 * the class skips rounds faster than that.
 */
static bool fq_far_step(struct fq_sched *fqs, struct fq_classq *cq)
{
	struct fq_flow *fqf;

	if (!cq->nr_far)
		return false;
	fqs->pick_steps++;
	if (fq_list_empty(&cq->far)) {
		cq->far_min = cq->far_done_min;
		fq_list_splice_tail(&cq->far_done, &cq->far);
		return true;
	}
	fqf = fq_entry(cq->far.next, struct fq_flow, link);
	fq_list_del(&fqf->link);
	if (fq_round_diff(fqf->round, cq->round) < FQ_LATER_WHEEL) {
		cq->nr_far--;
		fq_later_file(cq, fqf);
		return true;
	}
	if (fq_list_empty(&cq->far_done) ||
	    fq_round_diff(fqf->round, cq->far_done_min) < 0)
		cq->far_done_min = fqf->round;
	fq_list_add_tail(&fqf->link, &cq->far_done);
	return true;
}

/* Put a busy @fqf credited for a future round on that round's list. */
static void fq_drr_queue_ahead(struct fq_classq *cq, struct fq_flow *fqf,
			       bool head)
{
	s32 d = fq_round_diff(fqf->round, cq->round);

	if (d <= 1) {
		if (head)
			fq_list_add_head(&fqf->link, &cq->next);
		else
			fq_list_add_tail(&fqf->link, &cq->next);
		return;
	}
	fq_later_add(cq, fqf);
}

/*
 * A new round: debtors credited for it (after a skip) join the current
 * round, those credited for the next one the next; each a list taken
 * whole.  Far debtors due by then were filed into later[] before; should
 * the pass over far lag (the class skipped rounds faster), it is
 * finished here first.  Then later_min is the earliest round left: the
 * first list of later[] with flows, or far's bound if earlier.  Only
 * when a debtor is due (cq->later_min says so).
 */
static void fq_classq_later_due(struct fq_sched *fqs, struct fq_classq *cq)
{
	u32 b, j;

	if (!cq->nr_later || fq_round_diff(cq->later_min, cq->round + 1) > 0)
		return;
	while (cq->nr_far && fq_round_diff(cq->far_min, cq->round + 1) <= 0)
		fq_far_step(fqs, cq);
	for (j = 0; j < 2; j++) {
		b = fq_later_bucket(cq->round + j);
		fq_list_splice_tail(&cq->later[b], j ? &cq->next : &cq->cur);
		fq_later_took(cq, b);
	}
	if (!cq->nr_later)
		return;
	j = 2 + fq_later_next(fqs, cq, cq->round + 2, FQ_LATER_WHEEL - 2);
	cq->later_min = cq->round + j;
	if (cq->nr_far && (j == FQ_LATER_WHEEL ||
			   fq_round_diff(cq->far_min, cq->later_min) < 0))
		cq->later_min = cq->far_min;
}

/*
 * Put a flow that has queued requests on its class's rounds.  A flow's
 * round and credit are its virtual time: the round it may next be served
 * in and how much of that round's service it has left.  The class's
 * round is the virtual time of the slowest backlogged flows (a round ends
 * only when every flow of it has spent its credit or drained), so no flow
 * is served more than one round's credit ahead of them.
 *  - unused credit in the current round: head of the current round, so
 *    it continues its turn at once (it was only briefly empty);
 *  - unused credit in the round that just ended (its requests were in
 *    flight when it ended): that credit plus this round's, head of the
 *    current round (a flow served last in every round would otherwise
 *    lose most of every other round);
 *  - credited for a later round (its turn is spent, or it owes a debt):
 *    it waits for that round, even if it was freed meanwhile (the flow
 *    memory of fq_flow.c keeps its round);
 *  - back after a pause (its round is over and it has nothing left of
 *    it): it has had less than its share while away, so it starts at the
 *    current virtual time -- the head of the current round -- with one
 *    round's credit, never more (start-time fair queueing's
 *    max(own finish, virtual time)); it does not lose its place, and
 *    cannot bank credit while away;
 *  - new (never placed in this class): tail of the current round with
 *    one round's credit.
 * A flow joins the current round at most once per round, so a round is
 * bounded by the flows there are and nobody in the next one is starved.
 */
/*
 * @fqf starts its share of the current round afresh: count it in the
 * round's work at the class's average so far, so that its arrival does
 * not make the others look ahead (pacing, fq_drr_ahead()).
 */
static void fq_drr_join_round(struct fq_classq *cq, struct fq_flow *fqf)
{
	if (cq->wsum)
		cq->round_work += div_u64(cq->round_work, cq->wsum) *
				  fqf->weight;
}

static void fq_drr_place(struct fq_sched *fqs, struct fq_flow *fqf)
{
	struct fq_classq *cq = &fqs->cq[fqf->ci];
	s32 d = fq_round_diff(fqf->round, cq->round);
	s64 a;

	if (fqf->flags & FQ_FF_FRESH) {
		fqf->flags &= ~FQ_FF_FRESH;
		fqf->deficit = fq_allowance(fqs, fqf);
		fqf->round = cq->round;
		fq_drr_join_round(cq, fqf);
		fq_list_add_tail(&fqf->link, &cq->cur);
	} else if (d == 0 && fqf->deficit > 0) {
		/*
		 * turns shrank since this credit was granted (the class
		 * filled up): no more than a turn of now
		 */
		a = fq_allowance(fqs, fqf);
		if (fqf->deficit > a && (u64)a < fq_quantum(fqs) * fqf->weight)
			fqf->deficit = a;
		fqf->flags |= FQ_FF_PACED;
		fq_list_add_head(&fqf->link, &cq->cur);
	} else if (d == -1 && fqf->deficit > 0) {
		fqf->deficit += fq_allowance(fqs, fqf);
		fqf->round = cq->round;
		fqf->flags |= FQ_FF_PACED;
		fq_drr_join_round(cq, fqf);
		fq_list_add_head(&fqf->link, &cq->cur);
	} else if (d >= 0) {
		/* this round's credit spent (anticipation ended its turn) */
		if (d == 0) {
			fqf->deficit += fq_allowance(fqs, fqf);
			fqf->round++;
		}
		fq_drr_settle(fqs, fqf);
		fq_drr_queue_ahead(cq, fqf, true);
	} else {
		fqf->deficit = fq_allowance(fqs, fqf);
		fqf->round = cq->round;
		fqf->flags |= FQ_FF_PACED;
		fq_drr_join_round(cq, fqf);
		fq_list_add_head(&fqf->link, &cq->cur);
	}
	fqf->where = FQ_FW_BUSY;
	cq->nr_busy++;
	cq->wsum += fqf->weight;
	fq_boost_place(fqs, fqf);
}

static void fq_drr_set_prio(struct fq_flow *fqf,
			    u16 ioprio, u32 ci, u32 weight)
{
	if (ci != fqf->ci) {
		/* claims belong to a class's rounds: none in the new one */
		fqf->ci = ci;
		fqf->flags |= FQ_FF_FRESH;
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
	fq_boost_check(fqs, fqf, rq);
	if (fqf->where == FQ_FW_BUSY) {
		if (ci < fqf->ci) {
			fq_flow_unlink(fqs, fqf);
			fq_drr_set_prio(fqf, prio, ci, w);
			fq_drr_place(fqs, fqf);
		} else if (ci == fqf->ci && fq_weight_changes(fqf, rq, w)) {
			fqs->cq[ci].wsum += w - fqf->weight;
			fq_drr_set_prio(fqf, prio, ci, w);
		}
		return;
	}
	fq_flow_unlink(fqs, fqf);	/* off an idle list, if on one */
	if ((!fqf->nr_batch && !fqf->inflight) || ci < fqf->ci ||
	    (ci == fqf->ci && fq_weight_changes(fqf, rq, w)))
		fq_drr_set_prio(fqf, prio, ci, w);
	fq_drr_place(fqs, fqf);
}

/*
 * fq_drr_charge - @fqf is served @rq: spend its credit; when the credit
 * of its round is spent, credit the rounds it needs (fq_drr_settle()) and
 * end the turn.  A flow charged while credited for a later round (an
 * expired request) only moves further on.
 */
void fq_drr_charge(struct fq_sched *fqs, struct fq_flow *fqf,
		   const struct fq_req *rq)
{
	struct fq_classq *cq = &fqs->cq[fqf->ci];
	s64 cost = fq_cost(fqs, rq);

	if (fqf->round == cq->round)
		cq->round_work += (u64)cost;
	fq_boost_account(fqs, cq, fqf, cost);
	fqf->deficit -= cost;
	if (fqf->deficit > 0)
		return;
	fqf->flags &= ~FQ_FF_PACED;
	if (fq_flow_on_later(fqs, fqf))		/* an expired request */
		fq_later_leave(cq, fqf);
	fq_drr_settle(fqs, fqf);
	if (fqf->where == FQ_FW_BUSY) {
		fq_list_del(&fqf->link);
		fq_drr_queue_ahead(cq, fqf, false);
	}
}

/*
 * fq_drr_owed - the ->owed() of cfq and sfq: @fqf's credit is for its
 * class's current round (or an earlier one), so its turn has not come
 * yet in this round.  A flow credited for a later round has had its
 * turn, or owes a debt (an expired request it was charged for): expiring
 * its head again would give it more than its weight asks, every round.
 * On a slow disk that would be the whole schedule: a 1 MiB read at
 * 4 MiB/s outlasts fifo_expire_sync_ms, so the 1 MiB reader would expire
 * every turn and take nearly all the device time (unit case
 * expiry_billed_after).
 * A flow held back by a busier higher class is always owed: its class's
 * rounds do not move while that class is served, and the bounded wait
 * is what lets it through (once per wait, every time).
 */
bool fq_drr_owed(const struct fq_sched *fqs, const struct fq_flow *fqf)
{
	u32 ci;

	if (fqf->ci >= FQ_PRIO_COUNT)
		return true;
	for (ci = 0; ci < fqf->ci; ci++)
		if (fqs->cq[ci].nr_busy)
			return true;
	return fq_round_diff(fqf->round, fqs->cq[fqf->ci].round) <= 0;
}

/*
 * fq_drr_behind - @fqf (drained) is behind every busy flow of its class:
 * none has credit for the current or the next round, and the earliest
 * debtor is credited for a round after @fqf's.  Serving a debtor now
 * would move the class to the debtor's round, past @fqf's claim: the
 * debtor would get service it owes for while @fqf only thinks.
 */
bool fq_drr_behind(const struct fq_sched *fqs, const struct fq_flow *fqf)
{
	const struct fq_classq *cq = &fqs->cq[fqf->ci];

	if (fqf->ci >= FQ_PRIO_COUNT || !fq_list_empty(&cq->cur) ||
	    !fq_list_empty(&cq->next) || !cq->nr_later)
		return false;
	return fq_round_diff(cq->later_min, fqf->round) > 0;
}

/*
 * The drained flows on @idle are to be kept (filed again) or freed anew:
 * they join cq->refile, which fq_refile_step() works through.
 */
static void fq_classq_refile_idle(struct fq_classq *cq, struct fq_node *idle)
{
	fq_list_splice_tail(idle, &cq->refile);
}

/*
 * One flow of cq->refile kept or freed; false when there is none.  A
 * flow waiting there is still idle and found by its key; if its claim
 * went stale meanwhile it is dead (fq_flow_dead()), freed when found.
 */
static bool fq_refile_step(struct fq_sched *fqs, struct fq_classq *cq)
{
	struct fq_flow *fqf;

	if (fq_list_empty(&cq->refile))
		return false;
	fqs->pick_steps++;
	fqf = fq_entry(cq->refile.next, struct fq_flow, link);
	fq_flow_unlink(fqs, fqf);
	fq_flow_release(fqs, fqf);
	return true;
}

/*
 * The class entered a new round: claims two rounds old go, flows parked
 * on that list (credited further ahead than the wheel) are filed again.
 */
static void fq_classq_age_idle(struct fq_classq *cq)
{
	fq_classq_refile_idle(cq, &cq->idle[fq_idle_bucket(cq->round - 2)]);
}

/*
 * The class's share of the work carried over: FQ_CHORE_STEPS of far
 * debtors to file and of idle flows to file again or free.
 */
static void fq_classq_chores(struct fq_sched *fqs, struct fq_classq *cq)
{
	u32 i;

	for (i = 0; i < FQ_CHORE_STEPS && fq_far_step(fqs, cq); i++)
		;
	for (i = 0; i < FQ_CHORE_STEPS && fq_refile_step(fqs, cq); i++)
		;
}

/*
 * The current round is over: the next one starts, stale claims go.  When
 * no flow is credited for the next round either, only debtors are left:
 * the class skips straight to the first round one of them is credited
 * for (claims of the skipped rounds are stale), without looping more
 * than once round the wheel of idle lists.
 */
static void fq_classq_next_round(struct fq_sched *fqs, struct fq_classq *cq)
{
	s32 skip = 0;
	u32 i;

	if (fq_list_empty(&cq->next) && cq->nr_later)
		skip = fq_round_diff(cq->later_min, cq->round + 1);
	for (i = 0; (s32)i < skip && i < FQ_IDLE_WHEEL; i++) {
		cq->round++;
		fq_classq_age_idle(cq);
	}
	if (skip > (s32)i) {
		cq->round += (u32)skip - i;
		for (i = 0; i < FQ_IDLE_WHEEL; i++)
			fq_classq_refile_idle(cq, &cq->idle[i]);
	}
	cq->round++;
	cq->round_work = 0;
	fq_classq_age_idle(cq);
	fq_list_splice_tail(&cq->next, &cq->cur);
	/* debtors credited for this round (after a skip) or the next one */
	fq_classq_later_due(fqs, cq);
}

/*
 * A sync flow drained: anticipate its next request if it is still within
 * its turn (cfq: credit left in the current round; an sfq turn is a
 * single request, so there a sync bucket is anticipated whenever it
 * drains) and its think time says the next request is near
 * (fq_antic_window(), fq_antic.c).
 */
static void fq_antic_start(struct fq_sched *fqs, struct fq_flow *fqf,
			   const struct fq_req *rq)
{
	u32 round = fqs->cq[fqf->ci].round;
	bool in_turn = fqf->round == round && fqf->deficit > 0;
	struct fq_flow *old;

	if (fqs->pol->one_request_turns && fqf->round == round + 1)
		in_turn = true;
	if (fq_flow_lane(fqs, fqf))
		in_turn = true;	/* served by the boost, not by its turn */
	fqf->flags &= ~FQ_FF_BEHIND;
	if (fq_drr_behind(fqs, fqf)) {
		in_turn = true;
		fqf->flags |= FQ_FF_BEHIND;
	}
	if (!(rq->flags & FQ_REQ_SYNC) || (fqf->flags & FQ_FF_ORPHAN) ||
	    !in_turn || !fq_antic_window(fqs, fqf))
		return;
	if (fq_antic_served(fqs, fqf, rq)) {
		fqs->st.idle_served++;
		return;
	}
	old = fqs->antic;
	fqs->antic = fqf;
	/* the flow waited for so far, kept on no list for that, may go */
	if (old && old != fqf)
		fq_flow_maybe_release(fqs, old);
	fqs->antic_blocked = false;
	fqf->antic_until = 0;
}

/*
 * Pacing of a flow that came back to the head of the current round (a
 * reader with one request at a time, a process with think time): it may
 * go first only while its service in this round, less the request it is
 * about to get, is at most the class's average so far (per unit of
 * weight); else the flow behind it goes.  Without this, such a flow
 * spends its turn's credit in one burst at the start of a round and then
 * waits a whole round; with it, its credit is spread over the round as
 * start-time fair queueing would spread it, and no request of its waits
 * out a whole round (the simulator's ANTIC rows with think time 0).
 */
static bool fq_drr_ahead(const struct fq_sched *fqs,
			 const struct fq_classq *cq, const struct fq_flow *fqf)
{
	const struct fq_req *rq;
	s64 used;

	if (!(fqf->flags & FQ_FF_PACED) || fqf->round != cq->round ||
	    !cq->wsum || fqf->link.next == &cq->cur)
		return false;
	rq = fq_entry(fqf->queue.next, struct fq_req, node);
	used = fq_allowance(fqs, fqf) - fqf->deficit - fq_cost(fqs, rq);
	if (used <= 0)
		return false;
	return div_u64((u64)used, fqf->weight) >
	       div_u64(cq->round_work, cq->wsum);
}

static struct fq_req *fq_classq_pick(struct fq_sched *fqs,
				     struct fq_classq *cq)
{
	bool boosted, later_was_empty;
	struct fq_flow *fqf;
	struct fq_req *rq;
	u32 later_min;

	fq_classq_chores(fqs, cq);
	/* a boosted flow (fq_boost.c) first, else by round and turn */
	fqf = fq_boost_first(fqs, cq);
	boosted = fqf != NULL;
	while (!fqf) {
		fqs->pick_steps++;
		if (fq_list_empty(&cq->cur))
			fq_classq_next_round(fqs, cq);
		if (fq_list_empty(&cq->cur))
			continue;	/* a skip by a stale later_min */
		fqf = fq_entry(cq->cur.next, struct fq_flow, link);
		if (fq_drr_ahead(fqs, cq, fqf))
			fqf = fq_entry(fqf->link.next, struct fq_flow, link);
		if (!WARN_ON_ONCE(fqf->deficit <= 0))
			break;
		/* never: fq_drr_charge() settles every debt */
		fq_drr_settle(fqs, fqf);
		fq_list_del(&fqf->link);
		fq_drr_queue_ahead(cq, fqf, false);
		fqf = NULL;
	}
	rq = fq_entry(fqf->queue.next, struct fq_req, node);
	fq_list_del(&rq->node);
	fqf->nr_queued--;
	fq_flow_head_update(fqs, fqf);
	later_min = cq->later_min;
	later_was_empty = !cq->nr_later;
	if (boosted) {
		fq_boost_spend(fqs, cq, fqf, fq_cost(fqs, rq));
	} else {
		fqf->flags &= ~FQ_FF_LANE;
		fq_drr_charge(fqs, fqf, rq);
	}
	if (!fqf->nr_queued) {
		fq_flow_unlink(fqs, fqf);
		/* a drained debtor was on cq->later only for that moment */
		if (!later_was_empty)
			cq->later_min = later_min;
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
	if (fqf->where == FQ_FW_IDLE)
		fq_flow_unlink(fqs, fqf);
	if (fqf->where == FQ_FW_NONE && fq_flow_idle(fqf))
		fq_flow_release(fqs, fqf);
}

/*
 * Whether the class is held for fqs->antic now; cancels the anticipation
 * when it is over.  A flow in its turn: never while its own requests are
 * in flight (it cannot issue the next one before they complete, and the
 * others may use the device meanwhile); after its last completion, for
 * its window, the others may still dispatch while a slot is left for it
 * (the waiting flow only ever needs one), and the class is held only
 * when that slot is all there is.  A flow behind the class's debtors
 * (fq_drr_behind()): from its dispatch to the end of its window the
 * debtors keep at most the injection limit below (fq_antic.c says why
 * its own request in flight counts too), for at most its hold_until
 * while that request is below.  A boosted flow (fq_boost.c) keeps its
 * reserve of slots from the others, while its request is in flight
 * too: its next request must not queue behind theirs inside the device.
 */
static bool fq_antic_holds(struct fq_sched *fqs, u64 now_ns)
{
	struct fq_flow *fqf = fqs->antic;
	bool own = fqf->inflight || fqf->nr_batch;
	bool behind, lane;

	if (fqf->nr_queued || !fqs->idle_us) {
		fq_antic_cancel(fqs);
		return false;
	}
	if (!own && (!fqf->antic_until || now_ns >= fqf->antic_until)) {
		fq_antic_cancel(fqs);
		return false;
	}
	/*
	 * behind the debtors (for how long: fq_antic_behind_on()): they keep
	 * at most the injection limit below (requests passed through,
	 * fq_sched_pass(), are theirs too)
	 */
	behind = fq_antic_behind_on(fqf, now_ns) && fq_drr_behind(fqs, fqf) &&
		 fq_busy(fqs) + fqs->nr_batch - fqf->inflight - fqf->nr_batch >=
		 fqs->inject;
	lane = fq_flow_lane(fqs, fqf);
	if (lane) {
		if (!fq_boost_reserved(fqs, fqf))
			return false;
	} else if (!behind && (own ||
		   fq_busy(fqs) + fqs->nr_batch + 1 < fqs->depth_now)) {
		return false;
	}
	fqs->held = behind;
	fqs->reserve_held = lane;
	if (!fqs->antic_blocked) {
		fqs->antic_blocked = true;
		fqs->st.idle_waits++;
	}
	return true;
}

static bool fq_idle_class_allowed(const struct fq_sched *fqs, u64 now_ns)
{
	if (fqs->nonidle_busy || fqs->passing)
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
	u32 room = fqs->depth_now - fq_busy(fqs);
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
	else if (fqf && (fqf->flags & FQ_FF_BEHIND) && fqf->hold_until > now_ns)
		t = fqf->hold_until;	/* a hold while its request is below */
	if (fqs->cq[FQ_CI_IDLE].nr_busy && !fqs->nonidle_busy &&
	    !fqs->passing && fqs->nonidle_seen) {
		grace = fqs->nonidle_ns + (u64)fqs->grace_ms * 1000000;
		if (grace > now_ns)
			t = fq_time_min(t, grace);
	}
	return t;
}
