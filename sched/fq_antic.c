// SPDX-License-Identifier: GPL-2.0
/*
 * fq_antic.c - think time and the anticipation window.
 *
 * A sync flow's think time is the gap between the completion that left
 * it with nothing queued or in flight and its next request: a moving
 * average (7/8 old, 1/8 new) per flow, kept in the flow memory when the
 * flow goes back to the pool (fq_flow.c), so a reader that the device
 * idles between requests keeps its estimate.
 *
 * Anticipation (fq_drr.c) waits for a flow that drained within its turn
 * only when the wait is likely to pay: the flow has shown its think time
 * (FQ_TTIME_MIN_SAMPLES gaps), it is at most idle_us, and shorter than
 * the flow's own requests take on the device (its sync service time, a
 * moving average too) -- otherwise the slot kept free would stay idle
 * longer than the request it saves the flow from waiting for.  The
 * window is then twice the think time plus a little slack, never more
 * than idle_us.  A flow served by the interactive boost (fq_boost.c) is
 * waited for up to FQ_ANTIC_BOOST_CAP_MULT x idle_us while its think
 * time is below FQ_ANTIC_BOOST_SVC_MULT x its service time: what the
 * wait saves it is a slot behind the others' requests, not its own, and
 * a program starting up thinks longer when the CPUs are shared with the
 * readers it competes with; waited for only up to idle_us, each of its
 * requests would queue behind a bulk request inside the device.  Such
 * holds last no longer than the boost does (boost_ms,
 * FQ_BOOST_MAX_SERVED requests).
 *
 * A seeky flow (its requests mostly far from where its previous one
 * ended) gains no locality from the wait, only the slot: it is
 * anticipated only when depth leaves the others at least
 * FQ_ANTIC_SEEKY_DEPTH - 1 slots (with fewer, holding one costs more
 * than it saves, and the flow spends its turn in one burst and then
 * waits a whole round: worse latency for it, an idle slot for the
 * others).  A boosted flow is anticipated at any depth, seeky or not:
 * the slot is what the boost is for, and at depth 1 (one request in
 * service, a disk with no queue of its own) each of its reads would
 * otherwise wait for a whole request of the others; its holds end with
 * the boost.  A flow that thinks longer (a process between bursts, a reader
 * behind a slow consumer, any reader of a fast device) is not waited
 * for: it gets its place back when it returns (fq_drr_place()), without
 * idling the disk.
 *
 * A flow behind every busy flow of its class in virtual time (the others
 * are all debtors credited for later rounds, fq_drr_behind()) is waited
 * for whatever its seeks, and while its own request is in flight too:
 * serving a debtor then would put a request the debtor has not paid for
 * between this flow's two, and on a FIFO device or a throttle that bills
 * a request's bytes to the one after it (QEMU's), the flow's next
 * request waits for it.  How many of the others' requests may still go
 * below meanwhile is the injection limit (BFQ's idea): it is learnt from
 * the sync flows' own service times, the time a request took when no
 * other request went down since the flow's previous one against the time
 * it took when some did; more than 1.5x lowers the limit below what was
 * sent, no slowdown with the limit used raises it by one.
 *
 * None of this is done for a flow that already gets its share of what
 * it would get alone (fq_antic_served()): a reader at queue depth 1
 * whose requests come back about as fast as alone loses nothing when
 * the others keep the device busy, and holding them for it would cost
 * their throughput for a share it already has.
 */
#include "fq_internal.h"

/*
 * Kinds as in fq_depth.h (sched/README.md, "Constants").  Every figure
 * these thresholds compare is the flow's own, measured on the device (its
 * think time, service time, response time, seeks); the constants are the
 * margins and averaging weights.  On the device family idle_us=0 makes
 * 42 more of its 1,200 cases fail (43 more start-ups, one sync-deep
 * fewer).
 */
enum {
	/*
	 * Think-time gaps seen before anticipating: one gap may be a pause,
	 * not a think time.  Kind: family; at 1 and 4, 208 and 211 cases fail
	 * against 210, neutral.
	 */
	FQ_TTIME_MIN_SAMPLES = 2,
	/*
	 * Added to 2 x think time for the window [ns]: a flow whose think
	 * time is near 0 still gets a window longer than the host's
	 * latency to issue.  Kind: fitted.  Family: at 0 and 200 us not one
	 * verdict changes (its flows' think times are 20 and 100 us or
	 * none).
	 */
	FQ_TTIME_SLACK_NS = 50000,
	/*
	 * A longer gap counts as this.  Kind: arithmetic: it fits the u32 fields
	 * and is the longest window any setting allows (10 x idle_us at
	 * idle_us's maximum of 100 ms), so a longer gap means the same.
	 */
	FQ_TTIME_MAX_NS = 1000000000,
	/*
	 * Farther than this (400 KiB) is a seek.  Kind: fitted (CFQ's
	 * figure for a rotating disk).  Family: at 100 KiB not one verdict
	 * changes; its flows are sequential or random over the whole device.
	 */
	FQ_SEEK_SECTORS = 800,
	/*
	 * Sequential from this share of near requests.  Kind: family; at 75 %
	 * not one verdict changes.
	 */
	FQ_SEQ_PCT = 50,
	/*
	 * Seeky flows are waited for from this depth.  Kind: family; at 2 and 8,
	 * 210 and 211 cases fail, neutral.
	 */
	FQ_ANTIC_SEEKY_DEPTH = 4,
	/*
	 * A slowdown by injection from this [%] ...  Kind: fitted (a FIFO disk
	 * and a throttle that bills after: the slowdown a request of the
	 * others' adds).  Family: at 125 and 200 % not one verdict changes;
	 * no mix there holds a flow behind debtors long enough to matter.
	 */
	FQ_INJECT_SLOWER_PCT = 150,
	/*
	 * ... and by more than this [ns]: the jitter of a fast device's
	 * service time is no slowdown.  Kind: fitted.  Family: at 0 not one
	 * verdict changes.
	 */
	FQ_INJECT_SLACK_NS = 50000,
	/*
	 * Boosted: waited for up to idle_us x this ...  Kind: fitted, on start-up
	 * with 3 and 6 ms of think time (a reader sharing the CPUs;
	 * SIM-DEVICES.md STARTUP).  Family: not exercised (its start-up
	 * thinks 100 us): at 1 and 5 not one verdict changes.
	 */
	FQ_ANTIC_BOOST_CAP_MULT = 10,
	/*
	 * ... while the think time is under this x service.  Kind: fitted,
	 * with the cap.  Family: at 1 and 2, 211 and 210 cases fail, neutral.
	 */
	FQ_ANTIC_BOOST_SVC_MULT = 4,
	/*
	 * Response time: 1/64 new, so that one long wait (a 4 KiB read
	 * behind a 1 MiB one, 84x longer) counts for as long as it took;
	 * 1/8 would forget it within 16 reads and release the holds that
	 * guard the reader (unit case hold_behind_billed_after).  Kind: fitted to
	 * that case (a throttle that bills after).  Family: at 1/16, 211
	 * cases fail, neutral.
	 */
	FQ_RESP_AVG = 64,
	/*
	 * Largest request lately: 1/256 less a request.  Kind: fitted, with
	 * FQ_BIG_MULT.  Family: at 1/64 not one verdict changes.
	 */
	FQ_BIG_DECAY = 256,
	/*
	 * Served: no request above 2 x its own lately.  Kind: fitted (a 4 KiB
	 * reader beside a 1 MiB one on a throttle that bills after).
	 * Family: at 4 not one verdict changes.
	 */
	FQ_BIG_MULT = 2,
};

/* How far @rq starts from where @fqf's last request ended, as a sample. */
static void fq_antic_seek(struct fq_flow *fqf, const struct fq_req *rq)
{
	u64 d = rq->sector > fqf->next_sector ?
		rq->sector - fqf->next_sector : fqf->next_sector - rq->sector;
	u32 near = d > FQ_SEEK_SECTORS ? 0 : 100;

	/*
	 * 3/4 old: a new flow (0) is seeky until three requests say not.
	 * Kind: fitted; not varied on the family (FQ_SEQ_PCT and
	 * FQ_SEEK_SECTORS, which it feeds, change no verdict there).
	 */
	fqf->seq_pct = (u8)((3 * (u32)fqf->seq_pct + near) / 4);
	fqf->next_sector = rq->sector + (rq->bytes >> 9);
}

/*
 * @rq was queued on @fqf: a seek sample, and if the flow was idle after
 * a sync completion, a think-time sample.
 */
void fq_antic_enqueue(struct fq_sched *fqs, struct fq_flow *fqf,
		      const struct fq_req *rq)
{
	u64 gap;

	fq_antic_seek(fqf, rq);

	if (!fqf->done_ns || fqf->nr_queued != 1 || fqf->nr_batch ||
	    fqf->inflight) {
		return;
	}
	gap = fqs->now_ns > fqf->done_ns ? fqs->now_ns - fqf->done_ns : 0;
	if (gap > FQ_TTIME_MAX_NS)
		gap = FQ_TTIME_MAX_NS;
	fqf->done_ns = 0;
	/*
	 * Kind: device, the flow's own gaps, 7/8 old.  Family: at 3/4 old not
	 * one verdict changes.
	 */
	if (!fqf->ttime_n)
		fqf->ttime_ns = (u32)gap;
	else
		fqf->ttime_ns = (u32)(((u64)fqf->ttime_ns * 7 + gap) / 8);
	if (fqf->ttime_n < 255)		/* kind: arithmetic, a u8 */
		fqf->ttime_n++;
}

/*
 * A sync request of @fqf, all it had below or queued, took @svc: learn
 * from it what the others' requests sent meanwhile cost this flow.
 */
static void fq_antic_inject_learn(struct fq_sched *fqs, struct fq_flow *fqf,
				  u64 svc)
{
	u64 alone = fqf->svc_alone_ns;
	u32 sent = fqf->inj_before;

	if (!sent) {
		fqf->svc_alone_ns = alone ? (u32)((alone * 7 + svc) / 8) : (u32)svc;
		return;
	}
	if (!alone)
		return;
	if (svc * 100 > alone * FQ_INJECT_SLOWER_PCT &&
	    svc > alone + FQ_INJECT_SLACK_NS) {
		if (fqs->inject >= sent)
			fqs->inject = sent - 1;
	} else if (sent >= fqs->inject && fqs->inject < fqs->depth_now) {
		fqs->inject++;
	}
}

/*
 * @fqf sends @rq down: the largest request lately (what one more request
 * of the others may cost a flow, fq_antic_served()), how many of the
 * others' went since its last, and how long the others may be held for
 * it while it is below: four bounded waits of a sync request
 * (4 x fifo_expire_sync_ms), or twice what it takes alone if that is
 * longer.  A request below for longer is stuck (a retry, a dead path),
 * and holding the others would only idle the disk.  One queued behind
 * the others' earlier requests is not stuck: on a disk throttled to
 * 4 MiB/s, three 1 MiB reads ahead of it take 750 ms, and a bound of
 * one wait (250 ms) would release the 1 MiB reader every time and halve
 * the 4 KiB reader's share.  Kind: device, the flow's time alone,
 * measured; the four waits are fitted to that throttle.  Family: with one wait
 * not one verdict changes.
 */
void fq_antic_dispatch(struct fq_sched *fqs, struct fq_flow *fqf,
		       const struct fq_req *rq, u64 now_ns)
{
	u32 others = (u32)fqs->dispatches - fqf->last_disp - 1;
	u64 alone = fqf->svc_alone_ns ? fqf->svc_alone_ns : fqf->svc_ns;
	u64 bound, c = fq_charge_ns(fqs, rq);

	fqs->big_ns -= fqs->big_ns / FQ_BIG_DECAY;
	if (c > fqs->big_ns)
		fqs->big_ns = c;

	fqf->inj_before = others > 255 ? 255 : (u8)others;	/* arithmetic: u8 */
	fqf->last_disp = (u32)fqs->dispatches;
	bound = (u64)fqs->expire_ms[0] * 4000000;
	if (bound < 2 * alone)
		bound = 2 * alone;
	fqf->hold_until = now_ns + bound;
}

/*
 * Whether the others may be held for @fqf as a flow behind the class's
 * debtors at @now_ns (fq_antic_holds() asks the rest: that a debtor is
 * busy, and how many of theirs are below): anticipated as behind, and
 * while its own request is below, no later than hold_until (one still in
 * the batch has none yet: it is set as the request goes down, and the
 * old one would let debtors into the same batch).  A debtor drained
 * within the injection limit is not busy, but its next request is held
 * as soon as it comes.
 */
bool fq_antic_behind_on(const struct fq_flow *fqf, u64 now_ns)
{
	return (fqf->flags & FQ_FF_BEHIND) &&
	       (!fqf->inflight || fqf->nr_batch || now_ns < fqf->hold_until);
}

/*
 * A sync request of @fqf took @svc below while the others were held for
 * it: a low quantile of such times, what fq_antic_served() takes for its
 * service time alone.  It falls an eighth of the way to a faster sample
 * and rises 1/32 on a slower one: a request that queued inside the
 * device all the same (the reserve of a boosted flow grows for it,
 * fq_boost_complete()) does not make the flow's time alone look longer.
 * Kind: device, the flow's own service times; the weights (1/8 down,
 * 1/32 up) are fitted; family: at 1/2 down not one verdict changes.
 */
static void fq_antic_held_learn(struct fq_flow *fqf, u64 svc)
{
	u64 h = fqf->svc_held_ns;

	if (!h)
		h = svc;
	else if (svc < h)
		h -= (h - svc) / 8;
	else
		h = svc < h + h / 32 ? svc : h + h / 32;
	fqf->svc_held_ns = (u32)h;
}

/*
 * @rq of @fqf completed: a sync flow left with nothing to do starts a
 * think-time gap, and the anticipation for it (if any) its window.
 */
void fq_antic_complete(struct fq_sched *fqs, struct fq_flow *fqf,
		       const struct fq_req *rq, u64 now_ns)
{
	u64 svc = now_ns > rq->dispatch_ns ? now_ns - rq->dispatch_ns : 0;

	if (rq->flags & FQ_REQ_SYNC) {
		u64 resp = now_ns > rq->enqueue_ns ? now_ns - rq->enqueue_ns : 0;

		if (svc > FQ_TTIME_MAX_NS)
			svc = FQ_TTIME_MAX_NS;
		if (resp > FQ_TTIME_MAX_NS)
			resp = FQ_TTIME_MAX_NS;
		/* kind: device, the flow's service time on it, 7/8 old */
		fqf->svc_ns = fqf->svc_ns ?
			      (u32)(((u64)fqf->svc_ns * 7 + svc) / 8) : (u32)svc;
		fqf->resp_ns = fqf->resp_ns ?
			       (u32)(((u64)fqf->resp_ns * (FQ_RESP_AVG - 1) +
				      resp) / FQ_RESP_AVG) : (u32)resp;
		/* below with the others held for it (fq_drr.c's holds) */
		if (fqs->antic == fqf && (fq_flow_lane(fqs, fqf) ||
					  (fqf->flags & FQ_FF_BEHIND)))
			fq_antic_held_learn(fqf, svc);
		/* a flow that waits for this request: what holds are for */
		if (!fqf->inflight && !fqf->nr_queued && !fqf->nr_batch)
			fq_antic_inject_learn(fqs, fqf, svc);
	}
	if (fqf->inflight || fqf->nr_queued || fqf->nr_batch)
		return;
	if (rq->flags & FQ_REQ_SYNC)
		fqf->done_ns = now_ns ? now_ns : 1;
	if (fqs->antic == fqf) {
		u64 w = fq_antic_window(fqs, fqf);

		fqf->antic_until = now_ns + w;
		fq_env_trace_antic(fqs, fqf->key, w);
	}
}

/* How long to wait for @fqf's next request [ns]; 0 = do not wait. */
u64 fq_antic_window(const struct fq_sched *fqs, const struct fq_flow *fqf)
{
	u64 cap = (u64)fqs->idle_us * 1000;
	u64 svc = fqf->svc_ns;
	u64 w;

	if (fq_flow_lane(fqs, fqf)) {
		cap *= FQ_ANTIC_BOOST_CAP_MULT;
		svc *= FQ_ANTIC_BOOST_SVC_MULT;
	}
	if (!cap || fqf->ttime_n < FQ_TTIME_MIN_SAMPLES ||
	    fqf->ttime_ns > cap || fqf->ttime_ns >= svc)
		return 0;
	if (!(fqf->flags & FQ_FF_BEHIND) && !fq_flow_lane(fqs, fqf) &&
	    fqf->seq_pct < FQ_SEQ_PCT && fqs->depth_now < FQ_ANTIC_SEEKY_DEPTH)
		return 0;
	/* kind: device, twice the flow's own think time (its spread) */
	w = 2 * (u64)fqf->ttime_ns + FQ_TTIME_SLACK_NS;
	return w < cap ? w : cap;
}

/*
 * Whether @fqf, a sync flow that just drained with @rq, already gets its
 * share of what it would get alone, by its own figures: a request done
 * every think time plus response time (queued to completed; a slow
 * average, FQ_RESP_AVG), where alone it would take its think time plus
 * its service time alone -- the least of the time with no other request
 * sent since its previous one and a low quantile of the time with the
 * others held for it (fq_antic_held_learn()).  Their ratio is its
 * slowdown s; its share is its weight over the class's busy weight with
 * it.  At or above its share, holding the others for it (a window, a
 * hold behind the debtors) would buy it more than its share with the
 * device's throughput: on a device that needs more requests in flight
 * than it has servers, the holds idle the slots that keep it busy and
 * buy the reader nothing it is owed.  Below its share, or before the
 * figures exist, it is held for: the holds come and go with its
 * slowdown.
 *
 * Not while a request lately was more than FQ_BIG_MULT x its own: one of
 * the others' let in then costs it many of its requests (a 1 MiB read
 * ahead of a 4 KiB reader's next: 84 of them), which its average forgets
 * before the larger flow's debt is paid, and the holds that guard it
 * (fq_drr_behind()) would come and go, letting the larger flow's
 * requests in between its own (on a FIFO device, or a throttle that bills
 * a request's bytes to the next one).
 * Nor in its interactive boost: the boost is a grant above the share,
 * for a bounded time (fq_boost.c), and a starting program held for only
 * while below its share would wait behind the bulk flows' requests
 * again.
 */
bool fq_antic_served(const struct fq_sched *fqs, const struct fq_flow *fqf,
		     const struct fq_req *rq)
{
	u64 alone = fqf->svc_alone_ns, resp = fqf->resp_ns;
	u64 w = fqf->weight, wsum = fqs->cq[fqf->ci].wsum + fqf->weight;

	if (!alone || (fqf->svc_held_ns && fqf->svc_held_ns < alone))
		alone = fqf->svc_held_ns;
	if (!alone || !resp || fq_flow_lane(fqs, fqf) ||
	    fqs->big_ns > FQ_BIG_MULT * fq_charge_ns(fqs, rq))
		return false;
	/* (ttime + alone) / (ttime + resp) >= w / wsum */
	return (fqf->ttime_ns + alone) * wsum >= (fqf->ttime_ns + resp) * w;
}
