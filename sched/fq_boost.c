// SPDX-License-Identifier: GPL-2.0
/*
 * fq_boost.c - the interactive boost: a new flow that behaves like a
 * program starting up (synchronous, one or a few small requests at a
 * time) is served ahead of the bulk flows of its class, within bounds.
 *
 * Why: with N flows sharing the disk fairly, a reader that issues one
 * small request at a time gets its turn every round, but each of its
 * requests waits for a round of the others.  Cold-reading a few hundred
 * small files under ten streaming readers then takes several times as
 * long as alone.  BFQ answers with weight raising of new and soft
 * real-time queues; this is the same idea in this core's terms.  On the
 * device family (make -C sched family) boost_ms=0 makes 44 more of its
 * 200 start-ups fail; at the defaults 83 still do (SIM-DEVICES.md FAMILY:
 * mostly where the reader alone keeps more than half of fairq's depth
 * busy, which tokens bounded by the others' service cannot give it).
 *
 * Start: a flow of the cfq policy (one flow per key) created for a key
 * the flow memory does not know is boosted for boost_ms.  A key the
 * memory knows takes its boost from there: a flow that lost its boost
 * does not get it back by being reaped and coming back.
 *
 * What it gets: while boosted and queued (BE class only: RT goes first
 * anyway, IDLE must not), its requests go before the class's rounds,
 * boosted flows in turn, as long as the class's boost tokens are
 * positive.  Service of any other flow of the class adds its cost to the
 * tokens, service of a boosted flow -- by the boost or by its turns --
 * takes its cost away (fq_boost_account(); the tokens stay within
 * FQ_BOOST_BURST base turns' credit either way): boosted flows together
 * get at most as much as the others, i.e. at most half the class while
 * the others are busy, plus the burst.  With two flows that is exactly
 * the fair share (W2 keeps its shares); with eleven it is what a
 * one-request-at-a-time reader can use on a two-server disk.  When every
 * busy flow is boosted (W5's thousand QD1 readers) nobody earns tokens
 * and all are served by their turns.  What the boost serves is not
 * charged to the flow's turns: a bounded grant, not a loan paid back
 * later (a long-lived reader would otherwise be punished once its boost
 * ends).
 *
 * End, whichever comes first:
 *  - boost_ms after it started (wall time);
 *  - FQ_BOOST_MAX_SERVED requests served by the boost (on a fast device
 *    that is a short time, as BFQ's raising time shrinks with the
 *    device's rate);
 *  - the flow turns greedy: a request that is async or a write, larger
 *    than FQ_BOOST_MAX_BYTES, or that makes more than FQ_BOOST_MAX_REQS
 *    of its requests outstanding (queued or in flight): a streaming or
 *    deep reader (W1, W3, W4, a psync 1 MiB reader split into 128 KiB
 *    pieces) loses it at its first requests.  Read-ahead (FQ_REQ_RAHEAD)
 *    is not counted as outstanding, queued or in flight, and never turns
 *    a flow greedy by number: to read an inode ext4 first reads up
 *    to 31 other blocks of the inode table ahead, one 4 KiB bio each,
 *    then the inode's own block; page-cache read-ahead comes in bursts
 *    too.  Counted, they would end a starting program's boost at its
 *    first inode.  A lost boost stays lost, in the flow memory too.
 *
 * Anticipation (fq_antic.c, fq_drr.c) waits for a flow served by the
 * boost at any depth, seeky or not (others: from 4), through a longer think
 * time than others (fq_antic_window()), and the other flows keep out of
 * a reserve of slots while its request is in flight and during its
 * window: its next request must find a server free, not queue behind
 * bulk requests inside the device (a depth above the device's
 * concurrency).  The reserve (1 to depth - 1) is learnt from the boosted
 * requests' service times, see fq_boost_complete().
 */
#include "fq_internal.h"

/*
 * Kinds as in fq_depth.h (sched/README.md, "Constants").  The family's
 * steady-state mixes are measured after every boost has ended, so only
 * its startup mix (200 small files beside ten streamers) shows these;
 * 83 of its 200 start-ups fail at the defaults.  The figures below were
 * taken against 93 (210 cases in all), before boosted flows were
 * anticipated at any depth.
 */
enum {
	/*
	 * Outstanding requests (read-ahead not counted): more is greedy.
	 * Kind: fitted: deep readers (queue
	 * depth 8 and more) lose it at once, a program's few parallel
	 * reads keep it.  Family: at 2 and 8, 213 and 207 cases fail
	 * against 210 (start-up 93 and 91 of 93), neutral.
	 */
	FQ_BOOST_MAX_REQS = 4,
	/*
	 * A larger request is greedy: a psync 1 MiB reader split into
	 * 128 KiB pieces loses the boost at its first.  Kind: fitted: the
	 * bench's devices split a 1 MiB read at 128 KiB.  The family does
	 * not exercise it: at 64 KiB not one verdict changes (no mix
	 * has a boosted read between 64 and 128 KiB).
	 */
	FQ_BOOST_MAX_BYTES = 128 << 10,
	/*
	 * Token cap, in base turns' credit, either way: a burst the boost
	 * may run ahead of the others' service.  Kind: family; at 1 and 4, 208
	 * and 202 cases fail against 210 (start-up 92 and 91), neutral.
	 */
	FQ_BOOST_BURST = 2,
	/*
	 * Fast completions in a row that give a slot of the reserve back.
	 * Kind: fitted (fq_boost_complete()).  Family: at 8 and 32, 211 either
	 * way, neutral.
	 */
	FQ_BOOST_GOOD_RUN = 16,
	/*
	 * Slow (2x) completions in a row that grow the reserve.  Kind:
	 * fitted (fq_boost_complete()).  Family: at 1 and 4, 207 and 210, neutral.
	 */
	FQ_BOOST_SLOW_RUN = 2,
	/*
	 * Requests a boost serves at most: on a fast device the boost ends
	 * sooner than boost_ms, as BFQ's raising time shrinks with the
	 * device's rate.  Kind: fitted: 2048 is a few seconds of a program
	 * starting up on a disk of a few hundred IOPS.  Family: at 1024 and
	 * 4096, 212 and 206, neutral (its start-up reads 200 files).
	 */
	FQ_BOOST_MAX_SERVED = 2048,
};

/* @fqf was just taken from the pool for a key the memory did not know. */
void fq_boost_new(struct fq_sched *fqs, struct fq_flow *fqf)
{
	if (!fqs->boost_ms || !(fqf->flags & FQ_FF_HASHED))
		return;
	fqf->boost_until = fqs->now_ns + (u64)fqs->boost_ms * 1000000;
	fqs->st.boost_starts++;
	fq_env_trace_boost_start(fqs, fqf->key);
}

/*
 * End @fqf's boost for reason @why (enum fq_boost_end); @count is the
 * stats counter of that reason.
 */
static void fq_boost_stop(struct fq_sched *fqs, struct fq_flow *fqf,
			  u64 *count, enum fq_boost_end why)
{
	fqf->boost_until = 0;
	fqf->flags &= ~FQ_FF_LANE;
	fq_list_del(&fqf->boost_link);
	(*count)++;
	fq_env_trace_boost_end(fqs, fqf->key, why, fqf->boost_reqs);
}

/*
 * @rq was just queued on @fqf (counted in nr_queued): end the boost if it
 * is over or the flow turned greedy.
 */
void fq_boost_check(struct fq_sched *fqs, struct fq_flow *fqf,
		    const struct fq_req *rq)
{
	struct fq_stats *st = &fqs->st;

	if (!fqf->boost_until)
		return;
	if (!fq_flow_boosted(fqs, fqf))
		fq_boost_stop(fqs, fqf, &st->boost_end_time, FQ_BOOST_END_TIME);
	else if (!(rq->flags & FQ_REQ_SYNC) || (rq->flags & FQ_REQ_WRITE))
		fq_boost_stop(fqs, fqf, &st->boost_end_kind, FQ_BOOST_END_KIND);
	else if (rq->bytes > FQ_BOOST_MAX_BYTES)
		fq_boost_stop(fqs, fqf, &st->boost_end_size, FQ_BOOST_END_SIZE);
	else if (!(rq->flags & FQ_REQ_RAHEAD) &&
		 fqf->nr_queued + fqf->nr_batch - fqf->nr_ra + fqf->inflight -
		 fqf->ra_inflight > FQ_BOOST_MAX_REQS)
		fq_boost_stop(fqs, fqf, &st->boost_end_depth,
			      FQ_BOOST_END_DEPTH);
}

/* @fqf just became busy in its class (fq_drr_place()). */
void fq_boost_place(struct fq_sched *fqs, struct fq_flow *fqf)
{
	if (fqf->ci == FQ_CI_BE && fq_flow_boosted(fqs, fqf))
		fq_list_add_tail(&fqf->boost_link, &fqs->cq[fqf->ci].boost);
}

/*
 * @fqf of class @cq is served @cost by the rounds (its turn, or an
 * expired request): another flow's service earns the boosted ones as
 * much, a boosted flow's spends it like its boosted service does, so that
 * the two together stay within the others' service (at most FQ_BOOST_BURST
 * base turns ahead or behind).
 */
void fq_boost_account(struct fq_sched *fqs, struct fq_classq *cq,
		      const struct fq_flow *fqf, s64 cost)
{
	s64 cap = FQ_BOOST_BURST * fq_drr_base_allowance(fqs);

	if (fq_flow_boosted(fqs, fqf))
		cq->boost_tokens -= cost;
	else
		cq->boost_tokens += cost;
	if (cq->boost_tokens > cap)
		cq->boost_tokens = cap;
	if (cq->boost_tokens < -cap)
		cq->boost_tokens = -cap;
}

/* The boosted flow of @cq to serve now, or NULL (none, or no tokens). */
struct fq_flow *fq_boost_first(struct fq_sched *fqs, struct fq_classq *cq)
{
	struct fq_flow *fqf;

	while (!fq_list_empty(&cq->boost) && cq->boost_tokens > 0) {
		fqf = fq_entry(cq->boost.next, struct fq_flow, boost_link);
		if (fq_flow_boosted(fqs, fqf))
			return fqf;
		fq_boost_stop(fqs, fqf, &fqs->st.boost_end_time,
			      FQ_BOOST_END_TIME);
	}
	return NULL;
}

/* @fqf, from fq_boost_first(), is served @cost: the next one's turn. */
void fq_boost_spend(struct fq_sched *fqs, struct fq_classq *cq,
		    struct fq_flow *fqf, s64 cost)
{
	fqf->flags |= FQ_FF_LANE;
	cq->boost_tokens -= cost;
	fq_list_del(&fqf->boost_link);
	fqs->st.boost_served++;
	if (++fqf->boost_reqs >= FQ_BOOST_MAX_SERVED) {
		/* the last one it gets: its budget is spent */
		fqf->boost_until = 0;
		fqs->st.boost_end_budget++;
		fq_env_trace_boost_end(fqs, fqf->key, FQ_BOOST_END_BUDGET,
				       fqf->boost_reqs);
		return;
	}
	fq_list_add_tail(&fqf->boost_link, &cq->boost);
}

/*
 * The slots kept for a boosted flow anticipation waits for: the reserve,
 * at most depth - 1 (the others keep one), at least one.
 */
u32 fq_boost_slots(const struct fq_sched *fqs)
{
	u32 r = fqs->boost_reserve;

	if (r >= fqs->depth_now)	/* the others keep one slot */
		r = fqs->depth_now - 1;
	if (!r)				/* depth 1: as any anticipation */
		r = 1;
	return r;
}

/*
 * Whether the others must keep out of the slots reserved for @fqf, the
 * boosted flow anticipation waits for: they may have depth - reserve in
 * flight (at least one), never the slots its next request will need.
 * Requests passed through (fq_sched_pass()) are the others' too.
 */
bool fq_boost_reserved(const struct fq_sched *fqs, const struct fq_flow *fqf)
{
	u32 others = fq_busy(fqs) - fqf->inflight + fqs->nr_batch -
		     fqf->nr_batch;

	return others + fq_boost_slots(fqs) >= fqs->depth_now;
}

/*
 * A request of @fqf completed after @svc_ns below.  Two boosted requests
 * in a row that took twice as long as the fastest one seen queued behind
 * at least a whole request of the others inside the device (the depth is
 * above the device's own concurrency): the reserve doubles, plus one, up to
 * depth - 1, so that at a depth far above the device's servers (a
 * depth=auto that found deeper no slower, as where the host's CPUs, not
 * the device, set the throughput) a few slow requests free the device
 * for it, not one slot per slow request.  FQ_BOOST_GOOD_RUN
 * near the fastest in a row give one back.  The floor rises by 1/256 per
 * sample, so that it follows a device that got slower (kind: family; at 1/64
 * neutral, 210 cases fail either way); under depth=auto
 * the controller's latency floor (fq_depth.h) counts too, since at a
 * depth above the device's concurrency every boosted request may queue.
 * A device whose latency rises with its queue (an SSD) grows the
 * reserve too: the others then keep fewer slots while a flow is
 * boosted, which the boost's bounds (boost_ms, FQ_BOOST_MAX_SERVED) keep
 * short.  Why twice, not half as long again: on a disk that needs one
 * more request in flight than it has servers (a network disk behind its
 * socket: 2 servers, 3 in flight), a boosted request waits for part of
 * one other at the knee, 1.5x now and then, and a reserve grown for each
 * such one would leave the others one slot and the device short of
 * the requests it needs in flight.  Why two in a row: a single slow
 * request on a noisy host (2-2.5x the floor with a server free, now and
 * then) must not take the reserve from 1 to depth - 1 for
 * the FQ_BOOST_GOOD_RUN fast ones it takes to give a slot back; a queue
 * inside the device makes every boosted request slow, not one.
 * One at 3x or more (a write cache's flush stall) counts at once.
 * Near the fastest: within an eighth of the floor.
 *
 * Kind: device, the floor is the fastest boosted request measured on the device
 * (and depth=auto's latency floor).  Kind: fitted, the factors, twice and three
 * times the floor, two in a row, doubling plus one, within an eighth,
 * were chosen on the bench's two-server disks (a network disk under an
 * emulator, nullb-lat).  Family, each changed alone, neutral: slow from
 * 3x, 210 cases fail; from 1.5x, 205 (5 fewer, 4 of them start-ups, none
 * more); without the 3x stall, growing by one instead of doubling, or
 * good within a quarter, 210 (not one verdict changes in the first and
 * the last).  None of these moves the family's failing start-ups by more
 * than 4 (89-94 of 200): its start-up failures (SIM-DEVICES.md FAMILY)
 * do not trace to them.
 */
void fq_boost_complete(struct fq_sched *fqs, struct fq_flow *fqf,
		       const struct fq_req *rq, u64 svc_ns)
{
	u32 most = fqs->depth_now > 1 ? fqs->depth_now - 1 : 1;
	u64 floor = fqs->boost_svc_floor;
	u32 r;

	if (!fq_flow_lane(fqs, fqf) || !(rq->flags & FQ_REQ_SYNC))
		return;
	floor += floor / 256;
	if (!floor || svc_ns < floor)
		floor = svc_ns ? svc_ns : 1;
	fqs->boost_svc_floor = floor;
	/* depth=auto knows the device's latency without a queue */
	if (!fqs->depth && fqs->dc.lat_min && fqs->dc.lat_min < floor)
		floor = fqs->dc.lat_min;
	if (svc_ns >= 2 * floor) {
		fqs->boost_good = 0;
		if (++fqs->boost_slow < FQ_BOOST_SLOW_RUN &&
		    svc_ns < 3 * floor)
			return;
		r = 2 * fqs->boost_reserve + 1;
		fqs->boost_reserve = r < most ? r : most;
		return;
	}
	fqs->boost_slow = 0;
	if (svc_ns <= floor + floor / 8 &&
	    ++fqs->boost_good >= FQ_BOOST_GOOD_RUN) {
		if (fqs->boost_reserve > 1)
			fqs->boost_reserve--;
		fqs->boost_good = 0;
	}
}
