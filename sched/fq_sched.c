// SPDX-License-Identifier: GPL-2.0
/*
 * fq_sched.c - the request path: create/destroy, enqueue, dispatch with
 * bounded wait, complete, drain, next_event; the table of policies.
 *
 * Dispatch order, each call:
 *   1. nothing while depth_now requests are in flight: the "depth"
 *      tunable, or while it is "auto" what struct fq_depth (fq_depth.c)
 *      last returned -- every completion is reported to it, and to the
 *      device cost model struct fq_cost (fq_cost.c) that fairness=time
 *      charges by;
 *   2. the oldest expired request: one that has been first in its flow's
 *      queue for fifo_expire_sync_ms (sync) or fifo_expire_async_ms
 *      (async), whatever its class, turn or the anticipation in progress.
 *      The wait counts from the front of its own flow, so a deep flow's
 *      backlog does not expire and jump the other flows (that would turn
 *      every policy into fifo on a slow disk), and only a flow the
 *      policy says is owed service expires (cfq/sfq: not one that has
 *      had its turn this round or owes for an earlier expiry, unless a
 *      higher class holds it back; its wait starts again): the bound
 *      never buys more than the weight.
 *      IDLE-class requests have no deadline;
 *   3. the policy's pick (struct fq_policy, fq_internal.h).  fifo: the
 *      oldest request.  cfq/sfq: the rest of the current batch, else a
 *      new batch of up to min(depth - inflight, FQ_BATCH_MAX) requests
 *      picked by class, round and turn (fq_drr.c), sorted by sector.  A
 *      batch is what may go down now, so the caller, dispatching until
 *      NULL, submits it together (under one plug) and the lower device
 *      can merge it.
 */
#include "fq_internal.h"

/*
 * Every policy, one line each (struct fq_policy, fq_internal.h); the
 * first is the default.  fq_policy_find() looks names up here, for
 * fq_sched_create() and the "policy" tunable.
 */
const struct fq_policy *const fq_policies[] = {
	&fq_cfq_policy,
	&fq_sfq_policy,
	&fq_fifo_policy,
	NULL
};

/* The policy called @name ('\n' allowed after it), or NULL. */
const struct fq_policy *fq_policy_find(const char *name)
{
	const struct fq_policy *const *p;

	for (p = fq_policies; *p; p++)
		if (fq_word_eq(name, (*p)->name))
			return *p;
	return NULL;
}

static void fq_overflow_init(struct fq_sched *fqs)
{
	struct fq_flow *fqf = &fqs->overflow;

	*fqf = (struct fq_flow){ .key = ~0ull, .flags = FQ_FF_OVERFLOW,
				 .where = FQ_FW_NONE, .ci = FQ_PRIO_COUNT,
				 .weight = FQ_WEIGHT_BASE };
	fq_list_init(&fqf->queue);
	fq_list_init(&fqf->link);
	fq_list_init(&fqf->boost_link);
	fq_flow_head_init(fqf);
}

static void fq_now(struct fq_sched *fqs, u64 now_ns)
{
	if (now_ns > fqs->now_ns)
		fqs->now_ns = now_ns;
}

/*
 * The depth controller counts work in the cost model's device time, once
 * there is a model (bytes until then): fq_depth_price() says why.  The
 * prices change only when the model is refitted, so they are set then
 * (while depth=auto) and when the controller (re)starts, not at every
 * completion; switching to depth=auto restarts it.
 */
static void fq_depth_priced(struct fq_sched *fqs)
{
	u64 req_ns, byte_price;
	int write;

	for (write = 0; write < 2; write++)
		if (fq_cost_price(&fqs->fc, write, &req_ns, &byte_price))
			fq_depth_price(&fqs->dc, write, req_ns, byte_price);
}

void fq_sched_depth_restart(struct fq_sched *fqs, u32 seed, u32 depth_max)
{
	u32 from = fqs->depth_now;

	fq_depth_init(&fqs->dc, seed, depth_max);
	fq_depth_priced(fqs);
	fqs->depth_now = fqs->dc.depth;
	fq_env_trace_depth(fqs, from, fqs->depth_now, FQ_DEPTH_WHY_START);
}

struct fq_sched *fq_sched_create(const char *policy, u64 seed)
{
	const struct fq_policy *pol = NULL;
	const struct fq_policy *const *pp;
	struct fq_sched *fqs;
	u32 i;

	if (policy) {
		pol = fq_policy_find(policy);
		if (!pol)
			return NULL;
	}
	fqs = fq_zalloc(sizeof(*fqs));
	if (!fqs)
		return NULL;
	fq_tunables_default(fqs);
	fq_cost_init(&fqs->fc);
	fq_sched_depth_restart(fqs, FQ_SCHED_DEPTH_SEED, fqs->depth_max);
	if (fqs->depth)
		fqs->depth_now = fqs->depth;
	if (pol) {
		fqs->pol = pol;
		while (fq_policies[fqs->policy] != pol)
			fqs->policy++;
	}
	fqs->table = fq_sched_table_alloc(FQ_TABLE_MIN_BITS);
	if (!fqs->table) {
		fq_free(fqs);
		return NULL;
	}
	fq_list_init(&fqs->flows);
	fq_list_init(&fqs->reap);
	fq_overflow_init(fqs);
	for (i = 0; i < FQ_PRIO_COUNT; i++)
		fq_classq_init(&fqs->cq[i]);
	for (i = 0; i < FQ_FIFO_COUNT; i++)
		fq_list_init(&fqs->fifo[i]);
	for (i = 0; i < FQ_FIFO_IDLE * FQ_EXPIRE_SCALES; i++)
		fq_list_init(&fqs->heads[i / FQ_EXPIRE_SCALES][i % FQ_EXPIRE_SCALES]);
	fq_list_init(&fqs->batch);
	fqs->boost_reserve = 1;
	fqs->inject = 0;	/* learns up from holding fully */
	fqs->prng = seed;
	fqs->hash_key = fq_hash64(seed, 1);
	for (pp = fq_policies; *pp; pp++)
		if ((*pp)->init)
			(*pp)->init(fqs);
	return fqs;
}

void fq_sched_seed_depth(struct fq_sched *fqs, u32 lower_depth)
{
	if (fqs->depth)
		return;
	if (lower_depth > FQ_SCHED_DEPTH_SEED)
		lower_depth = FQ_SCHED_DEPTH_SEED;
	fq_sched_depth_restart(fqs, lower_depth, fqs->depth_max);
}

void fq_sched_destroy(struct fq_sched *fqs)
{
	if (!fqs)
		return;
	WARN_ON_ONCE(fqs->queued || fqs->inflight);
	fq_flows_destroy(fqs);
	fq_free(fqs);
}

/* Put @rq on its flow under the current policy (enqueue and rebuild). */
void fq_req_insert(struct fq_sched *fqs, struct fq_req *rq)
{
	struct fq_flow *fqf = fqs->pol->map(fqs, rq);

	rq->flow = fqf;
	rq->state = FQ_RS_QUEUED;
	fq_list_add_tail(&rq->node, &fqf->queue);
	fqf->nr_queued++;
	if (rq->flags & FQ_REQ_RAHEAD)
		fqf->nr_ra++;
	fq_flow_head_update(fqs, fqf);
	fqf->c.enq_reqs++;
	fqf->c.enq_bytes += fq_rq_bytes(rq);
	fq_antic_enqueue(fqs, fqf, rq);
	if (fqs->pol->activate)
		fqs->pol->activate(fqs, fqf, rq);
	if (fqs->antic == fqf)
		fqs->antic = NULL;	/* it is back: no more waiting */
}

/*
 * What @rq costs its flow under fairness=time [ns]: the device time the
 * cost model gives it now, or, while there is no model, its bytes at the
 * exchange rate quantum_bytes per quantum_us (a turn then holds what it
 * holds under fairness=bytes).  At most 2^40 ns (18 minutes), so that
 * times FQ_WEIGHT_BASE it fits a deficit with room to spare.
 *
 * Asked when the request is charged (it goes down), not when it was
 * queued: a request queued before the model existed would otherwise keep
 * the exchange rate, which on a throttled disk prices a 1 MiB read at
 * 2 ms against the 250 ms it takes.  A 1 MiB reader's queued reads would
 * then go down nearly free, the small reader's completions, which the
 * model is fitted from, would come slowly, and the model would arrive
 * late.
 */
u64 fq_charge_ns(const struct fq_sched *fqs, const struct fq_req *rq)
{
	u32 bytes = fq_rq_bytes(rq);
	u64 ns = fq_cost_ns(&fqs->fc, bytes, rq->flags & FQ_REQ_WRITE);

	if (!ns)
		ns = div_u64((u64)bytes * fqs->quantum_us * 1000,
			     fqs->quantum_bytes);
	if (ns > 1ull << 40)
		ns = 1ull << 40;
	return ns ? ns : 1;
}

void fq_sched_enqueue(struct fq_sched *fqs, struct fq_req *rq, u64 now_ns)
{
	fq_sched_reap(fqs, FQ_CHORE_STEPS);
	fq_now(fqs, now_ns);
	if (fqs->pol->tick)
		fqs->pol->tick(fqs, now_ns);
	rq->enqueue_ns = now_ns;
	rq->dispatch_ns = 0;
	rq->seq = fqs->seq++;
	fq_list_add_tail(&rq->fifo, &fqs->fifo[fq_rq_fifo(rq)]);
	fqs->queued++;
	fq_writes_enqueue(fqs, rq);
	fqs->st.c.enq_reqs++;
	fqs->st.c.enq_bytes += fq_rq_bytes(rq);
	if (fq_rq_nonidle(rq)) {
		fqs->nonidle_busy++;
		fqs->nonidle_seen = true;
		fqs->nonidle_ns = now_ns;
	}
	fq_req_insert(fqs, rq);
	if (rq->flow == &fqs->overflow)
		fqs->st.overflow_enq++;
}

bool fq_sched_queue_full(const struct fq_sched *fqs)
{
	return fqs->queued >= fqs->max_queued;
}

bool fq_sched_may_queue(struct fq_sched *fqs, const struct fq_req *rq)
{
	const struct fq_flow *fqf;
	u32 share;

	if (fq_sched_queue_full(fqs) || !fq_writes_may_queue(fqs, rq))
		return false;
	/* up to half full, no flow is held back: no lookup either */
	if (fqs->queued < fqs->max_queued / 2)
		return true;
	fqf = fqs->pol->find(fqs, rq);
	if (!fqf)
		return true;
	/*
	 * Never more than half, even alone: the flow that comes next (a
	 * journal commit beside a writeback flood) finds room instead of
	 * waiting in line behind the flood's submitter.
	 */
	share = fqs->max_queued / (fqs->nr_flows > 2 ? fqs->nr_flows : 2);
	return fqf->nr_queued + fqf->nr_batch < (share ? share : 1);
}

/* Take a waiting request off its flow queue or the batch and its fifo. */
static void fq_req_unqueue(struct fq_sched *fqs, struct fq_req *rq)
{
	struct fq_flow *fqf = rq->flow;

	fq_list_del(&rq->node);
	fq_list_del(&rq->fifo);
	if (rq->flags & FQ_REQ_RAHEAD)
		fqf->nr_ra--;
	if (rq->state == FQ_RS_BATCH) {
		fqf->nr_batch--;
		fqs->nr_batch--;
	} else {
		fqf->nr_queued--;
		fq_flow_head_update(fqs, fqf);
		if (!fqf->nr_queued && fqf->where == FQ_FW_BUSY)
			fq_flow_unlink(fqs, fqf);
	}
	fqs->queued--;
}

static struct fq_req *fq_fifo_head(struct fq_sched *fqs, u32 i)
{
	if (fq_list_empty(&fqs->fifo[i]))
		return NULL;
	return fq_entry(fqs->fifo[i].next, struct fq_req, fifo);
}

/* The oldest waiting request of all, or NULL. */
struct fq_req *fq_oldest(struct fq_sched *fqs)
{
	struct fq_req *rq, *best = NULL;
	u32 i;

	for (i = 0; i < FQ_FIFO_COUNT; i++) {
		rq = fq_fifo_head(fqs, i);
		if (rq && (!best || rq->seq < best->seq))
			best = rq;
	}
	return best;
}

/*
 * The flow whose first request has waited longest at the front, of kind @i
 * (sync, async) and deadline scale @b (fq_flow_expire_scale()).
 */
static struct fq_flow *fq_heads_first(struct fq_sched *fqs, u32 i, u32 b)
{
	if (fq_list_empty(&fqs->heads[i][b]))
		return NULL;
	return fq_entry(fqs->heads[i][b].next, struct fq_flow, head_link);
}

static u64 fq_expire_at(const struct fq_sched *fqs, const struct fq_flow *fqf,
			u32 i, u32 b)
{
	return fqf->head_ns + ((u64)fqs->expire_ms[i] * 1000000 << b);
}

/*
 * A wait is starvation only if others were served meanwhile: at least
 * FQ_EXPIRE_MIN_DISPATCHES requests went down since @fqf's first request
 * became first.  On a slow disk one request alone can outlast the bounded
 * wait (a 1 MiB read takes 250 ms at 4 MiB/s, fifo_expire_sync_ms is 250):
 * by the clock alone every flow's head would expire behind it, every
 * request would go out by deadline in arrival order, and fairness would
 * be gone.
 */
static bool fq_expire_served_others(const struct fq_sched *fqs,
				    const struct fq_flow *fqf)
{
	return fqs->dispatches - fqf->head_disp >= FQ_EXPIRE_MIN_DISPATCHES;
}

/*
 * The expired flow-first request that has waited longest, or NULL (the
 * first of each heads list has the earliest deadline of that list).
 */
static struct fq_req *fq_expired(struct fq_sched *fqs, u64 now_ns)
{
	struct fq_flow *fqf, *best = NULL;
	u32 i, b, n;

	for (i = FQ_FIFO_SYNC; i <= FQ_FIFO_ASYNC; i++) {
		for (b = 0; b < FQ_EXPIRE_SCALES; b++) {
			for (n = 0; n < FQ_EXPIRE_RESTARTS; n++) {
				fqf = fq_heads_first(fqs, i, b);
				if (!fqf || now_ns < fq_expire_at(fqs, fqf, i, b) ||
				    !fq_expire_served_others(fqs, fqf))
					break;
				if (!fqs->pol->owed || fqs->pol->owed(fqs, fqf)) {
					if (!best || fqf->head_ns < best->head_ns)
						best = fqf;
					break;
				}
				/* ahead of its share: not starved, wait again */
				fq_flow_head_restart(fqs, fqf, now_ns);
				fqs->st.expire_deferred++;
			}
		}
	}
	return best ? best->head : NULL;
}

/*
 * Sum the time the depth was full up to @now_ns, then note whether it is
 * full from now on.  Called wherever inflight or depth_now changes; a
 * clock read a little behind the last one (another CPU's) adds nothing.
 */
static void fq_full_account(struct fq_sched *fqs, u64 now_ns)
{
	if (now_ns > fqs->full_since_ns) {
		if (fqs->full_on)
			fqs->full_ns += now_ns - fqs->full_since_ns;
		fqs->full_since_ns = now_ns;
	}
	fqs->full_on = fq_busy(fqs) && (fq_busy(fqs) >= fqs->depth_now ||
					((fqs->held || fqs->reserve_held) &&
					 fqs->queued));
}

/* @rq leaves the core's queues and goes down. */
static struct fq_req *fq_req_start(struct fq_sched *fqs, struct fq_req *rq,
				   u64 now_ns)
{
	struct fq_flow *fqf = rq->flow;
	u64 wait = now_ns > rq->enqueue_ns ? now_ns - rq->enqueue_ns : 0;

	fq_req_unqueue(fqs, rq);
	rq->state = FQ_RS_INFLIGHT;
	rq->dispatch_ns = now_ns;
	fqf->inflight++;
	if (rq->flags & FQ_REQ_RAHEAD)
		fqf->ra_inflight++;
	fqs->inflight++;
	fqs->dispatches++;
	fq_antic_dispatch(fqs, fqf, rq, now_ns);
	fqs->depth_full = fq_busy(fqs) >= fqs->depth_now;
	fq_full_account(fqs, now_ns);
	fqf->c.disp_reqs++;
	fqf->c.disp_bytes += fq_rq_bytes(rq);
	fqf->c.wait_ns_sum += wait;
	if (wait > fqf->c.wait_ns_max)
		fqf->c.wait_ns_max = wait;
	fqs->st.c.disp_reqs++;
	fqs->st.c.disp_bytes += fq_rq_bytes(rq);
	fqs->st.c.wait_ns_sum += wait;
	if (wait > fqs->st.c.wait_ns_max)
		fqs->st.c.wait_ns_max = wait;
	if (fq_rq_nonidle(rq))
		fqs->nonidle_ns = now_ns;
	return rq;
}

struct fq_req *fq_sched_dispatch(struct fq_sched *fqs, u64 now_ns)
{
	struct fq_req *rq;

	fq_sched_reap(fqs, FQ_CHORE_STEPS);
	fq_now(fqs, now_ns);
	if (fqs->pol->tick)
		fqs->pol->tick(fqs, now_ns);
	if (fq_busy(fqs) >= fqs->depth_now || !fqs->queued) {
		fqs->depth_full = fq_busy(fqs) >= fqs->depth_now;
		return NULL;
	}
	rq = fq_expired(fqs, now_ns);
	if (rq) {
		if (rq->state == FQ_RS_QUEUED && fqs->pol->expire)
			fqs->pol->expire(fqs, rq->flow, rq);
		rq->flow->c.expired++;
		fqs->st.c.expired++;
		return fq_req_start(fqs, rq, now_ns);
	}
	fqs->held = false;
	fqs->reserve_held = false;
	rq = fqs->pol->pick(fqs, now_ns);
	if (!rq) {
		if (fqs->reserve_held && !fqs->depth)
			fq_depth_reserved(&fqs->dc);
		/*
		 * held back: by a hold for a flow behind, by a boosted flow's
		 * reserve, or not by the depth.  The cost model counts only the
		 * first as a full depth: a reserve leaves slots idle, so the
		 * time between completions then is not the device's.
		 */
		fqs->depth_full = fqs->held;
		fq_full_account(fqs, now_ns);
		return NULL;
	}
	return fq_req_start(fqs, rq, now_ns);
}

void fq_sched_complete(struct fq_sched *fqs, struct fq_req *rq, int status,
		       u64 now_ns)
{
	struct fq_flow *fqf = rq->flow;
	u64 svc = now_ns > rq->dispatch_ns ? now_ns - rq->dispatch_ns : 0;
	bool write = rq->flags & FQ_REQ_WRITE;
	bool limited;

	if (WARN_ON_ONCE(rq->state != FQ_RS_INFLIGHT || !fqf))
		return;
	fq_sched_reap(fqs, FQ_CHORE_STEPS);
	/*
	 * Both models learn only from saturated stretches.  The cost model
	 * counts completions that found the depth full at the last dispatch
	 * (fqs->depth_full) and work waiting above; the controller takes
	 * the time the depth was full (fqs->full_ns: fq_depth.h says why).
	 * The controller is told each request's bytes and direction, not
	 * the device time the model gives it: it prices the work of the
	 * epochs it compares itself, all at the model's terms of the moment
	 * (fq_depth_priced(), fq_depth_price() says why).  A dataless
	 * request (a discard) has no size the cost model could use: it is
	 * left out of the model and counts as fq_rq_bytes() for the
	 * controller.
	 */
	limited = fqs->depth_full && fqs->queued > 0;
	if (!(rq->flags & FQ_REQ_NODATA)) {
		u64 fits = fqs->fc.epochs;

		fq_cost_complete(&fqs->fc, now_ns, rq->bytes, write, limited);
		if (fqs->fc.epochs != fits && !fqs->depth)
			fq_depth_priced(fqs);
	}
	fq_full_account(fqs, now_ns);
	if (!fqs->depth) {
		u32 to = fq_depth_complete(&fqs->dc, now_ns, svc,
					   fq_rq_bytes(rq), write, fqs->full_ns);

		/* a move the search tries leaves it moved, a hold not */
		fq_env_trace_depth(fqs, fqs->depth_now, to,
				   fqs->dc.moved ? FQ_DEPTH_WHY_TRY :
				   FQ_DEPTH_WHY_HOLD);
		fqs->depth_now = to;
	}
	fq_writes_done(fqs, rq);
	fqf->inflight--;
	if (rq->flags & FQ_REQ_RAHEAD)
		fqf->ra_inflight--;
	fqs->inflight--;
	fq_full_account(fqs, now_ns);
	fqf->c.done_reqs++;
	fqf->c.done_bytes += fq_rq_bytes(rq);
	fqf->c.svc_ns_sum += svc;
	fqs->st.c.done_reqs++;
	fqs->st.c.done_bytes += fq_rq_bytes(rq);
	fqs->st.c.svc_ns_sum += svc;
	if (status) {
		fqf->c.errors++;
		fqs->st.c.errors++;
	}
	if (fq_rq_nonidle(rq)) {
		fqs->nonidle_busy--;
		fqs->nonidle_ns = now_ns;
	}
	rq->state = FQ_RS_DONE;
	rq->flow = NULL;
	fq_antic_complete(fqs, fqf, rq, now_ns);
	fq_now(fqs, now_ns);
	fq_flow_head_restart(fqs, fqf, fqs->now_ns);
	fq_boost_complete(fqs, fqf, rq, svc);
	fq_flow_maybe_release(fqs, fqf);
	/* passed bios below keep the device busy: not idle yet */
	if (!fqs->queued && !fq_busy(fqs)) {
		fq_flows_reap(fqs);
		fq_sched_reap(fqs, FQ_CHORE_STEPS);
	}
}

struct fq_req *fq_sched_drain(struct fq_sched *fqs)
{
	struct fq_req *rq = fq_oldest(fqs);
	struct fq_flow *fqf;

	if (!rq)
		return NULL;
	fqf = rq->flow;
	fq_req_unqueue(fqs, rq);
	fq_writes_done(fqs, rq);
	if (fq_rq_nonidle(rq))
		fqs->nonidle_busy--;
	rq->state = FQ_RS_DONE;
	rq->flow = NULL;
	if (fqs->antic == fqf)
		fqs->antic = NULL;
	fq_flow_maybe_release(fqs, fqf);
	if (!fqs->queued && !fqs->inflight)
		fq_flows_reap(fqs);
	return rq;
}

u64 fq_sched_next_event(struct fq_sched *fqs, u64 now_ns)
{
	struct fq_flow *fqf;
	u64 t = 0;
	u32 i;

	if (fqs->pol->next_event)
		t = fqs->pol->next_event(fqs, now_ns);
	if (fqs->queued && fq_busy(fqs) < fqs->depth_now) {
		for (i = 0; i < FQ_FIFO_IDLE * FQ_EXPIRE_SCALES; i++) {
			fqf = fq_heads_first(fqs, i / FQ_EXPIRE_SCALES,
					     i % FQ_EXPIRE_SCALES);
			/* not yet starved: a dispatch will come first */
			if (fqf && fq_expire_served_others(fqs, fqf))
				t = fq_time_min(t, fq_expire_at(fqs, fqf,
						i / FQ_EXPIRE_SCALES,
						i % FQ_EXPIRE_SCALES));
		}
	}
	return t;
}

void fq_sched_pass(struct fq_sched *fqs, u32 inflight, bool seen, u64 now_ns)
{
	fq_now(fqs, now_ns);
	/* RT/BE work existed up to now: the idle grace counts from here */
	if (inflight || fqs->passing || seen) {
		fqs->nonidle_seen = true;
		if (now_ns > fqs->nonidle_ns)
			fqs->nonidle_ns = now_ns;
		/* their completions are not reported: these epochs learn nothing */
		fq_depth_unseen(&fqs->dc);
		fq_cost_unseen(&fqs->fc);
	}
	if (inflight && !fqs->depth) {
		fqs->pass_wait = true;
		fqs->pass_wait_mark = fq_depth_seen_epochs(&fqs->dc);
	}
	/* the last passed bios completed: the device went idle meanwhile */
	if ((fqs->passing || seen) && !inflight && !fqs->queued &&
	    !fqs->inflight)
		fq_flows_reap(fqs);
	fqs->passing = inflight;
	fq_full_account(fqs, now_ns);
}

u32 fq_sched_pass_depth(struct fq_sched *fqs, u64 now_ns)
{
	const struct fq_flow *fqf = fqs->antic;

	if (fqs->queued || !fqs->fastpath)
		return 0;
	if (fqs->pass_wait) {
		/* a fixed depth learns nothing; an idle device has nothing to learn */
		if (!fqs->depth && fq_busy(fqs) &&
		    fq_depth_seen_epochs(&fqs->dc) == fqs->pass_wait_mark)
			return 0;
		fqs->pass_wait = false;
	}
	if (!fqf || !fqs->idle_us || (!fqf->inflight && !fqf->nr_batch &&
				      fqf->antic_until && now_ns >= fqf->antic_until))
		return fqs->depth_now;
	/*
	 * A boosted anticipated flow keeps its reserve (fq_boost_reserved());
	 * the debtors a flow behind them is held for (fq_drr_behind()) get
	 * no slot: a debtor with nothing queued now is held again with its
	 * next request, which must come to the core for that; any other
	 * anticipated flow keeps its one slot (fq_antic_holds())
	 */
	if (fq_flow_lane(fqs, fqf))
		return fqs->depth_now - fq_boost_slots(fqs);
	if (fq_antic_behind_on(fqf, now_ns))
		return 0;
	return fqs->depth_now - 1;
}
