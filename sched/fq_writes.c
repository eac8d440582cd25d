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
 *    queued or in flight, and none queued within the last
 *    fifo_expire_async_ms) at least as many as
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
 *    cost throughput there.  Before a model exists the pieces are of
 *    one to eight pages (fq_writes_unmodelled_piece()): a model takes
 *    FQ_COST_EPOCHS_MIN epochs of completions, half a minute of whole
 *    1 MiB writes on a slow volume, and the pieces' completions form it
 *    within a second.
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
 * 192.  FQ_WRITES_ALIGN arithmetic: a page.  Measured against 194
 * cases and the throttled volume's commit log 0.73 and reader G 0.98:
 * FQ_WRITES_PROBE_SIZES family, 1 / 2 / 6 sizes: 195 / 194 / 194,
 * reader G 0.95 / 0.92 / 0.84.  FQ_WRITES_PROBE_MODELS family, 1 / 16:
 * 194 / 194, reader G 0.90 / 0.98.
 */
enum {
	FQ_WRITES_TURNS = 2,		/* async queued per flow, in its turns */
	FQ_WRITES_PIECE_COST = 2,	/* a piece: this many small requests */
	FQ_WRITES_ALIGN = 4096,		/* pieces are whole pages; "small" */
	FQ_WRITES_PROBE_EVERY = 8,	/* unsized model: one write in 8 cut */
	FQ_WRITES_PROBE_SIZES = 4,	/* no model: pieces of 1, 2, 4, 8 pages */
	FQ_WRITES_PROBE_MODELS = 4,	/* no model: pieces for 4 models, at most */
};

static bool fq_rq_async_write(const struct fq_req *rq)
{
	return (rq->flags & (FQ_REQ_WRITE | FQ_REQ_SYNC)) == FQ_REQ_WRITE;
}

/*
 * Whether sync I/O is active: a sync request is queued or in flight, or
 * one was queued within the last fifo_expire_async_ms.  The first alone
 * would miss a commit log's next step, the second alone the step that
 * waits: a commit that waits a second behind whole writes must not make
 * them look unopposed, or nothing is ever cut.
 */
static bool fq_writes_sync_active(const struct fq_sched *fqs)
{
	return fqs->sync_out || (fqs->sync_seen &&
	       fqs->now_ns - fqs->sync_seen_ns <
	       (u64)fqs->expire_ms[FQ_FIFO_ASYNC] * 1000000);
}

bool fq_sched_sync_waiting(const struct fq_sched *fqs)
{
	return fqs->sync_out;
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
		fqs->sync_out++;
	}
}

void fq_writes_done(struct fq_sched *fqs, const struct fq_req *rq)
{
	if (rq->flags & FQ_REQ_SYNC)
		fqs->sync_out--;
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

/*
 * No model of the device yet: it needs FQ_COST_EPOCHS_MIN saturated
 * epochs of FQ_COST_EPOCH_N completions, half a minute of writeback on
 * a volume that takes four 1 MiB writes a second, and until then a sync
 * request may wait behind whole writes for seconds.  Cut async writes
 * to pieces of one to FQ_WRITES_PROBE_SIZES pages, a size per epoch's
 * worth of pieces so that the fit sees the sizes vary between epochs:
 * the pieces' completions form the model sooner, and the model then
 * decides (a disk that charges per request is not cut any more).  At
 * most FQ_WRITES_PROBE_MODELS models' worth of pieces in all: a device
 * that the flows never saturate forms no model and is not cut for ever.
 */
static u32 fq_writes_unmodelled_piece(struct fq_sched *fqs, u32 bytes)
{
	u32 n = fqs->async_unmodelled;
	u32 piece;

	if (n >= FQ_WRITES_PROBE_MODELS * FQ_COST_EPOCHS_MIN * FQ_COST_EPOCH_N)
		return bytes;
	piece = FQ_WRITES_ALIGN << (n / FQ_COST_EPOCH_N % FQ_WRITES_PROBE_SIZES);
	if (piece >= bytes)
		return bytes;
	fqs->async_unmodelled++;
	fqs->st.async_cut++;
	return piece;
}

u32 fq_sched_async_piece(struct fq_sched *fqs, u32 bytes)
{
	const struct fq_cost *fc = &fqs->fc;
	u64 small, whole, bar, a, b, piece;

	if (fqs->writeback != FQ_WB_YIELD || bytes < 2 * FQ_WRITES_ALIGN ||
	    !fq_writes_sync_active(fqs))
		return bytes;
	if (!fq_cost_ns(fc, bytes, true))
		return fq_writes_unmodelled_piece(fqs, bytes);
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
