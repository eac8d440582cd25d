// SPDX-License-Identifier: GPL-2.0
/*
 * fq_writes.c - background writeback and the synchronous I/O it delays.
 *
 * An async write (FQ_REQ_WRITE without FQ_REQ_SYNC: the page cache's
 * writeback) has nobody waiting for it, but two kinds of waiter pay for
 * the async work around them:
 *
 *  - A commit under ordered-data journaling (write + fsync on ext4)
 *    cannot finish until every data write submitted before it has
 *    completed: whatever writeback is queued here when a commit begins is
 *    part of that commit's latency, however fairly the turns are shared.
 *  - A synchronous request that goes down behind an async one waits for
 *    it inside the device.  On a disk that charges per byte (a volume
 *    with a byte rate limit) a 128 KiB write holds the device as long as
 *    thirty 4 KiB reads.
 *
 * writeback=yield (for experiments) bounds both; the default schedules
 * async writes like any other request.  Under yield:
 *
 *  - a flow may have at most as many async writes queued in the core as
 *    the depth lets go down at once (depth_now, and never fewer than
 *    FQ_WRITES_BACKLOG); its submitter (the flusher) waits for room
 *    beyond that (fq_sched_may_queue()), as under max_queued, and the
 *    page cache keeps the rest as dirty pages, where no commit waits for
 *    them.  Unbounded, the flusher queues up to max_queued writes
 *    (hundreds of megabytes) ahead of every commit;
 *  - while synchronous I/O is active -- a sync request was queued within
 *    the last fifo_expire_async_ms: async work held back may wait that
 *    long anyway -- at most FQ_WRITES_BACKLOG async writes may be queued
 *    in all;
 *  - fq_sched_async_piece() tells the caller to cut an async write into
 *    pieces that the cost model prices at most FQ_WRITES_PIECE_COST
 *    small (4 KiB) writes: on a per-byte device a sync request then waits
 *    behind one short piece, not a long write; where a write costs no
 *    more than that whole, or the cost is per request (a fitted model
 *    with no per-byte price), nothing is cut, since pieces would only
 *    cost throughput there.
 *
 * Both follow the device: the piece from the fitted model, the backlog
 * in requests of that piece's cost.  They hold writeback behind sync I/O
 * whatever the weights say, which is why they are not the default: a
 * buffered writer of weight 400 beside a direct reader of weight 100
 * (VM test 090) gets a small fraction of the reader's bytes under the
 * flow's bound alone.
 */
#include "fq_internal.h"

enum {
	FQ_WRITES_BACKLOG = 2,		/* async requests queued, the least bound */
	FQ_WRITES_PIECE_COST = 2,	/* a piece: this many small requests */
	FQ_WRITES_ALIGN = 4096,		/* pieces are whole pages; "small" */
	FQ_WRITES_PROBE_EVERY = 8,	/* unsized model: one write in 8 cut */
};

static bool fq_rq_async_write(const struct fq_req *rq)
{
	return (rq->flags & (FQ_REQ_WRITE | FQ_REQ_SYNC)) == FQ_REQ_WRITE;
}

/* Whether a sync request was queued within the last fifo_expire_async_ms. */
static bool fq_writes_sync_active(const struct fq_sched *fqs)
{
	return fqs->sync_seen &&
	       fqs->now_ns - fqs->sync_seen_ns <
	       (u64)fqs->expire_ms[FQ_FIFO_ASYNC] * 1000000;
}

bool fq_sched_writeback_yields(const struct fq_sched *fqs)
{
	return fqs->writeback == FQ_WB_YIELD;
}

void fq_writes_enqueue(struct fq_sched *fqs, const struct fq_req *rq)
{
	if (fq_rq_async_write(rq)) {
		fqs->async_queued++;
	} else if (rq->flags & FQ_REQ_SYNC) {
		fqs->sync_seen = true;
		fqs->sync_seen_ns = fqs->now_ns;
	}
}

void fq_writes_unqueue(struct fq_sched *fqs, const struct fq_req *rq)
{
	if (fq_rq_async_write(rq))
		fqs->async_queued--;
}

/*
 * Whether @rq's flow already has as many requests queued as the depth
 * lets go down at once: async writes queued beyond that only lengthen
 * what a journal commit waits for.
 */
static bool fq_writes_flow_backlogged(struct fq_sched *fqs,
				      const struct fq_req *rq)
{
	const struct fq_flow *fqf = fqs->pol->find(fqs, rq);
	u32 bound = fqs->depth_now;

	if (bound < FQ_WRITES_BACKLOG)
		bound = FQ_WRITES_BACKLOG;
	return fqf && fqf->nr_queued + fqf->nr_batch >= bound;
}

bool fq_writes_may_queue(struct fq_sched *fqs, const struct fq_req *rq)
{
	if (fqs->writeback != FQ_WB_YIELD || !fq_rq_async_write(rq))
		return true;
	if (fq_writes_flow_backlogged(fqs, rq) ||
	    (fq_writes_sync_active(fqs) &&
	     fqs->async_queued >= FQ_WRITES_BACKLOG)) {
		fqs->st.async_held++;
		return false;
	}
	return true;
}

u32 fq_sched_async_piece(struct fq_sched *fqs, u32 bytes)
{
	const struct fq_cost *fc = &fqs->fc;
	u64 small, whole, bar, a, b, piece;

	if (fqs->writeback != FQ_WB_YIELD || bytes < 2 * FQ_WRITES_ALIGN ||
	    !fq_writes_sync_active(fqs) || !fq_cost_ns(fc, bytes, true))
		return bytes;
	if (!fq_cost_sized(fc, true)) {
		/*
		 * One write size seen so far: a price per byte and one per
		 * request cannot be told apart.  Cut every
		 * FQ_WRITES_PROBE_EVERY-th write in two, so that the fit
		 * sees sizes vary; the rule below then applies.
		 */
		if (fqs->async_probe++ % FQ_WRITES_PROBE_EVERY)
			return bytes;
		piece = bytes / 2;
		fqs->st.async_cut++;
		return piece - piece % FQ_WRITES_ALIGN;
	}
	small = fq_cost_ns(fc, FQ_WRITES_ALIGN, true);
	whole = fq_cost_ns(fc, bytes, true);
	bar = FQ_WRITES_PIECE_COST * small;
	a = fq_cost_a_ns(fc, true);
	b = fq_cost_b_ps_per_byte(fc, true);
	/* no price per byte: a piece would cost as much as the whole */
	if (whole <= bar || !b)
		return bytes;
	/* a + b * piece = bar */
	piece = bar > a ? div64_u64((bar - a) * 1000, b) : 0;
	piece -= piece % FQ_WRITES_ALIGN;
	if (piece < FQ_WRITES_ALIGN)
		piece = FQ_WRITES_ALIGN;
	if (piece >= bytes)
		return bytes;
	fqs->st.async_cut++;
	return (u32)piece;
}
