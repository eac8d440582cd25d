// SPDX-License-Identifier: GPL-2.0
/*
 * fq_writes.c - background writeback and the synchronous I/O it delays.
 *
 * An async write (FQ_REQ_WRITE without FQ_REQ_SYNC: the page cache's
 * writeback) has nobody waiting for it, but two kinds of waiter pay for
 * the async work around them:
 *
 *  - A commit under ordered-data journaling that writes data in place
 *    (ext4 data=ordered without unwritten extents) cannot finish until
 *    every data write submitted before it has completed: whatever
 *    writeback is queued here when a commit begins is part of that
 *    commit's latency, however fairly the turns are shared.
 *  - A synchronous request that goes down behind an async one waits for
 *    it inside the device: a reader's, and the journal's writes of every
 *    commit (ext4's default and xfs too).  On a disk that charges per
 *    byte (a volume with a byte rate limit) a 128 KiB write holds the
 *    device as long as thirty 4 KiB reads.
 *
 * writeback=yield, the default, bounds both; writeback=fair (for
 * experiments) schedules async writes like any other request.  Under
 * yield:
 *
 *  - a flow may have at most FQ_WRITES_TURNS turns' worth of async
 *    writes queued in the core (what a turn of it serves, in requests
 *    like the one at hand, twice: one turn's worth goes down while the
 *    next waits), and while no sync I/O is active (no sync request
 *    queued within the last fifo_expire_async_ms) at least as many as
 *    the depth lets go down at once (depth_now).  Its submitter (the
 *    flusher) waits for room beyond that (fq_sched_may_queue()), as
 *    under max_queued, and the page cache keeps the rest as dirty
 *    pages, where no commit waits for them.  Unbounded, the flusher
 *    queues up to half of max_queued writes (hundreds of megabytes)
 *    ahead of every commit.  A bound in turns, not in requests, keeps
 *    the flow's weight: a heavier flow's turn serves more, so it is
 *    allowed more, and it stays backlogged through its turn;
 *  - fq_sched_async_piece() tells the caller to cut an async write into
 *    pieces that the cost model prices at most FQ_WRITES_PIECE_COST
 *    small (4 KiB) writes: on a per-byte device a sync request then waits
 *    behind one short piece, not a long write; where a write costs no
 *    more than that whole, or the cost is per request (a fitted model
 *    with no per-byte price), nothing is cut, since pieces would only
 *    cost throughput there.
 *
 * Both follow the device and the weights: the piece from the fitted
 * model, the backlog in the flow's own turns.  A bound in requests (two
 * queued in all while sync I/O was active) starved heavier writers in
 * fairq.ko, where the flusher refills a flow only after it has run dry:
 * a buffered writer of weight 400 beside a direct reader of weight 100
 * (VM test 090) got 0.06 of the reader's bytes, where 4 is due; in turns
 * it gets 4.0.
 */
#include "fq_internal.h"

/*
 * Kinds (sched/README.md, Constants; family: 190 cases failing at the
 * defaults, WRITEBACK's commit log on the throttled volume 0.70):
 * FQ_WRITES_TURNS family, 1 / 4 turns: 191 / 187, commit log 0.65 /
 * 0.67; two, not one, because fairq.ko's flusher refills a flow only
 * once it has room.  FQ_WRITES_PIECE_COST family, 1 / 4: 198 / 187,
 * commit log 0.58 / 0.33.  FQ_WRITES_PROBE_EVERY family, 4 / 16: 187 /
 * 192.  FQ_WRITES_ALIGN arithmetic: a page.
 */
enum {
	FQ_WRITES_TURNS = 2,		/* async queued per flow, in its turns */
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
	if (rq->flags & FQ_REQ_SYNC) {
		fqs->sync_seen = true;
		fqs->sync_seen_ns = fqs->now_ns;
	}
}

/*
 * Whether @rq's flow already has as many async writes queued as its next
 * turns serve (and, while no sync I/O is active, as the depth lets go
 * down at once): writes queued beyond that only lengthen what a journal
 * commit and a sync request wait for.
 */
static bool fq_writes_flow_backlogged(struct fq_sched *fqs,
				      const struct fq_req *rq)
{
	const struct fq_flow *fqf = fqs->pol->find(fqs, rq);
	u64 bound;

	if (!fqf)
		return false;
	bound = (u64)FQ_WRITES_TURNS * fq_drr_turn_reqs(fqs, fqf, rq);
	if (!fq_writes_sync_active(fqs) && bound < fqs->depth_now)
		bound = fqs->depth_now;
	return fqf->nr_queued + fqf->nr_batch >= bound;
}

bool fq_writes_may_queue(struct fq_sched *fqs, const struct fq_req *rq)
{
	if (fqs->writeback != FQ_WB_YIELD || !fq_rq_async_write(rq))
		return true;
	if (fq_writes_flow_backlogged(fqs, rq)) {
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
