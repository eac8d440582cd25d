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
 * than idle_us.  A seeky flow (its requests mostly far from where its
 * previous one ended) gains no locality from the wait, only the slot: it
 * is anticipated only when depth leaves the others at least
 * FQ_ANTIC_SEEKY_DEPTH - 1 slots (with fewer, holding one costs more than
 * it saves, and the flow spends its turn in one burst and then waits a
 * whole round: worse latency, seen in the simulator's W2 and ANTIC).  A flow that thinks longer (a process between bursts, a
 * reader behind a slow consumer, any reader of a fast device) is not
 * waited for: it gets its place back when it returns (fq_drr_place()),
 * without idling the disk.
 */
#include "fq_internal.h"

enum {
	FQ_TTIME_MIN_SAMPLES = 2,	/* gaps seen before anticipating */
	FQ_TTIME_SLACK_NS = 50000,	/* added to 2 x think time [ns] */
	FQ_TTIME_MAX_NS = 1000000000,	/* a longer gap counts as this */
	FQ_SEEK_SECTORS = 800,		/* farther than this is a seek */
	FQ_SEQ_PCT = 50,		/* sequential from this share of near */
	FQ_ANTIC_SEEKY_DEPTH = 4,	/* seeky flows: depth at least this */
	FQ_ANTIC_BOOST_DEPTH = 2,	/* boosted seeky flows (fq_boost.c) */
};

/* How far @rq starts from where @fqf's last request ended, as a sample. */
static void fq_antic_seek(struct fq_flow *fqf, const struct fq_req *rq)
{
	u64 d = rq->sector > fqf->next_sector ?
		rq->sector - fqf->next_sector : fqf->next_sector - rq->sector;
	u32 near = d > FQ_SEEK_SECTORS ? 0 : 100;

	/* 3/4 old: a new flow (0) is seeky until three requests say not */
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
	if (!fqf->ttime_n)
		fqf->ttime_ns = (u32)gap;
	else
		fqf->ttime_ns = (u32)(((u64)fqf->ttime_ns * 7 + gap) / 8);
	if (fqf->ttime_n < 255)
		fqf->ttime_n++;
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
		if (svc > FQ_TTIME_MAX_NS)
			svc = FQ_TTIME_MAX_NS;
		fqf->svc_ns = fqf->svc_ns ?
			      (u32)(((u64)fqf->svc_ns * 7 + svc) / 8) : (u32)svc;
	}
	if (fqf->inflight || fqf->nr_queued || fqf->nr_batch)
		return;
	if (rq->flags & FQ_REQ_SYNC)
		fqf->done_ns = now_ns ? now_ns : 1;
	if (fqs->antic == fqf)
		fqf->antic_until = now_ns + fq_antic_window(fqs, fqf);
}

/* How long to wait for @fqf's next request [ns]; 0 = do not wait. */
u64 fq_antic_window(const struct fq_sched *fqs, const struct fq_flow *fqf)
{
	u64 cap = (u64)fqs->idle_us * 1000;
	u64 w;

	if (!cap || fqf->ttime_n < FQ_TTIME_MIN_SAMPLES ||
	    fqf->ttime_ns > cap || fqf->ttime_ns >= fqf->svc_ns)
		return 0;
	if (fqf->seq_pct < FQ_SEQ_PCT && fqs->depth_now <
	    (fq_flow_lane(fqs, fqf) ? FQ_ANTIC_BOOST_DEPTH : FQ_ANTIC_SEEKY_DEPTH))
		return 0;
	w = 2 * (u64)fqf->ttime_ns + FQ_TTIME_SLACK_NS;
	return w < cap ? w : cap;
}
