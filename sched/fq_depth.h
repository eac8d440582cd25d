/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fq_depth.h - adaptive depth: how many requests to keep in flight below.
 *
 * fairq can only order what it still holds.  Every request it lets past
 * its queue waits in the lower device in arrival order, so the depth
 * should be just large enough to keep the device saturated and no larger.
 * That point (the device's knee) is not known in advance and moves: a
 * cloud volume's throttle, a disk's write cache filling, a RAID rebuild.
 * struct fq_depth finds it from what the caller already sees -- when each
 * request completed and how long it was below -- and keeps finding it.
 *
 * The controller works in epochs (at least epoch_ns and 8 + 2 * depth
 * completions, times 1 + noise / (1/16) on a noisy device).  Only a
 * saturated epoch teaches it anything: one during at least 3/4 of which
 * the depth was full, as many requests in flight as it allows (otherwise
 * the demand, not the depth, set the throughput, as BQL only grows its
 * limit when the queue ran dry while work was waiting).  The signal is
 * time, summed by the caller, not a count of completions that found work
 * waiting: a throttled virtio disk completes in bursts (QEMU releases ten
 * at a time), and within a burst only the first completion finds work
 * waiting above while the depth was full for all but microseconds of the
 * epoch.  With a demand just above the seed (32 deep requests and one
 * reader at queue depth 1, against a seed of 32) a count would never see
 * a saturated epoch: the controller would stay at its seed, all 33 would
 * queue inside the device and fairq could order none of them (unit case
 * demand_at_seed).  A demand equal to the depth is saturated
 * too: a move down makes work wait above, a move up shows no gain and
 * is undone.  Work the caller held back from slots it reserves for
 * another flow counts as full too, but such an epoch is compared only
 * with others of its kind (fq_depth_reserved()).
 * From each saturated epoch it
 * takes the throughput (work per second, work priced by the caller:
 * modelled device time, or bytes until it sets a price) and the mean
 * completion latency, and hill-climbs:
 *
 *   - from the seed: FQ_DEPTH_SEED_EPOCHS epochs measured, then a
 *     halving (to undo it an epoch must show a quarter less throughput,
 *     more than noise does);
 *   - a move up is kept when it bought at least gain_frac (default a
 *     quarter) of the throughput it would have in the linear region
 *     (depth +25 % -> throughput +6.25 %); a move down is kept when it
 *     cost less than that;
 *   - a kept move doubles the next step in the same direction (fast
 *     search); a reverted one retries with step 1, and when a step-1 move
 *     fails both ways the depth is held;
 *   - noise is the rate change between consecutive epochs at one depth
 *     (averaged; 1/16 assumed until measured).  A move is judged on sums
 *     of epochs, not single ones: the epochs at the depth it left (up
 *     to 8 summed while held there, the oldest fading) against those at
 *     the new depth.  A gain under 1/64 or 2 x noise x sqrt((1/a + 1/b)
 *     / 2) for sums of a and b epochs does not count; while the gain
 *     falls short of either bar by less than that, the move stays for
 *     one more epoch, up to 4, and then the sums' gain is taken as it is
 *     (above 1/64).  Where one depth does 16 % more than the next lower
 *     one and epochs at one depth differ by 7 % (a network disk under an
 *     emulator's noise), a single epoch's verdict is a coin toss; sums
 *     of epochs tell the two apart (unit case noisy_knee).
 *     A step is large enough that the gain it must show clears the
 *     threshold of 8 epochs against 4: on a steady device steps of 1
 *     below depth 32 and of depth / 16 above; a hold reached with coarser
 *     steps is refined once the noise figure has come down;
 *   - while held: one step deeper every probe_epochs epochs (the device
 *     may have gained capacity), and a search downwards after two epochs
 *     whose latency is a quarter above the latency floor (the lowest
 *     epoch mean seen: the device's latency without a queue) while the
 *     throughput did not rise by an eighth since the hold began (the
 *     device lost capacity) -- unless the latency is under lat_floor_ns,
 *     which the caller accepts whatever the depth.  A search that finds
 *     no shallower depth worth keeping means the requests themselves got
 *     slower: the floor is learnt again.
 *
 * On a device with C servers behind a FIFO this holds C (probing C + 1);
 * on one whose latency does not rise with depth it climbs to depth_max.
 * After every change the next max(old, new) completions are not measured:
 * they belong to the old depth.  An epoch ends only where the completion
 * time changes: a burst of completions at one time (servers finishing
 * together) is never split between two epochs.
 *
 * No locking: the caller serialises calls per instance (fairq under its
 * device lock).  No allocation, no clock reads, integer arithmetic only.
 */
#ifndef FQ_DEPTH_H
#define FQ_DEPTH_H

#include "fq_env.h"

/*
 * The controller's constants.  Each comment says its kind (sched/README.md,
 * "Constants", has the table and how the family was run): device (follows
 * from a figure the controller measures on the device), family (a margin
 * with a reason of its own, run on the device family, make -C sched
 * family, halved and doubled and no better there), fitted (chosen on one
 * workload on one disk; what the family shows is said), arithmetic (a
 * scale or bound of the integer arithmetic, no behaviour).  "Within the
 * family's noise": a change that reaches its mixes flips some 20
 * near-threshold cases of the 1,200 each way, and a net change of up to
 * about 10 failing cases is that, not the constant.  The figures in
 * these comments were taken against 210 failing cases at the defaults
 * (200 since boosted flows are anticipated at any depth).
 */
enum {
	/*
	 * Shortest epoch.  Kind: family; at 2.5 and 10 ms 206 and 214 cases fail
	 * against 210, within its noise.  An epoch also waits for enough
	 * completions for the device's depth and noise (fq_depth_epoch_n()),
	 * which is what scales it to a device.
	 */
	FQ_DEPTH_EPOCH_NS = 5000000,
	/*
	 * Held epochs between probes one deeper: how soon a device that
	 * gained capacity is noticed, against a probe's cost.  Kind: family; at 8
	 * and 32, 201 and 218 fail, within its noise (8 a little better).
	 */
	FQ_DEPTH_PROBE_EPOCHS = 16,
	/*
	 * A move up must buy a quarter of the gain it would have in the
	 * linear region (256/1024).  Kind: family; at an eighth 225 fail, at a half
	 * 232 (seq-rand and readers-writer worse either way): the family
	 * supports a quarter.
	 */
	FQ_DEPTH_GAIN_FRAC = 256,
	/*
	 * Epochs measured at the seed, for the first noise figures, before
	 * the halving.  Kind: family; at 8, 207 fail, within its noise.
	 */
	FQ_DEPTH_SEED_EPOCHS = 4,
	/* kind: arithmetic, bits of prev_kinds and at_kinds, the kinds of a sum */
	FQ_DEPTH_K_FREE = 1,		/* a sum has an epoch without a reserve */
	FQ_DEPTH_K_RES = 2,		/* ... one with (fq_depth_reserved()) */
	/*
	 * Rate noise assumed until two epochs at one depth measure it: 1/16
	 * (64/1024); the measured figure replaces it at 1/4 per epoch.
	 * Kind: family; at 1/32 and 1/8, 210 and 199 fail, within its noise.
	 */
	FQ_DEPTH_NOISE_PRIOR = 64,
};

/* Work completed, per direction ([0] reads, [1] writes). */
struct fq_depth_work {
	u64 n[2];		/* requests */
	u64 bytes[2];
};

/* One epoch's sums. */
struct fq_depth_epoch {
	u64 start_ns;		/* first completion counted */
	u64 n;			/* completions */
	struct fq_depth_work w;	/* the work they did */
	u64 lat_sum;		/* completion latencies [ns], summed */
	u64 full_start;		/* caller's full_ns when it opened */
	bool unseen;		/* work went by unreported (fq_depth_unseen()) */
	bool reserved;		/* work kept out of a reserve (fq_depth_reserved()) */
};

/*
 * A measured epoch, the reference for the next decision.  Its rate is
 * its work priced at the prices of the moment (fq_depth_price()),
 * recomputed whenever it is compared: two epochs are always compared at
 * one price.
 */
struct fq_depth_point {
	u32 depth;
	struct fq_depth_work w;
	u64 el;			/* its length [ns] */
	u64 rate;		/* priced work [ns] per 2^-24 ns */
	u64 lat;		/* mean completion latency [ns] */
};

struct fq_depth {
	/* configuration: fq_depth_init() sets defaults, the caller may change */
	u32 depth_min;		/* >= 1 */
	u32 depth_max;		/* >= depth_min */
	u64 epoch_ns;		/* shortest epoch [ns] */
	u64 lat_floor_ns;	/* never shrink for latency below this [ns] */
	u32 probe_epochs;	/* held epochs between probes one deeper */
	u32 gain_frac;		/* 1..1024: share of linear gain a move must show */
	/* the price of work (fq_depth_price()), per direction */
	u64 req_ns[2];		/* per request [ns] */
	u64 byte_price[2];	/* per byte [2^-16 ns] */

	/* state */
	u32 depth;		/* the limit now */
	s32 dir;		/* +1 climbing, -1 descending, 0 held */
	u32 step;		/* size of the move being tried */
	bool moved;		/* depth != prev.depth: next epoch judges it */
	bool have_prev;		/* prev holds a measurement */
	bool have_ref;		/* ref holds a held-depth measurement */
	bool tried_up;		/* step-1 move up failed from prev.depth */
	bool tried_down;	/* step-1 move down failed from prev.depth */
	u32 held;		/* epochs held since the last probe */
	u32 hold_step;		/* smallest step when the hold began */
	u32 skip;		/* completions still belonging to an old depth */
	bool closing;		/* epoch long enough: ends at the next new time */
	u64 last_ns;		/* time of the last completion counted */
	u64 last_full;		/* caller's full_ns at that completion */
	u32 noise;		/* epoch-to-epoch rate change at one depth [1/1024] */
	struct fq_depth_point last;	/* the previous epoch judged */
	u64 lat_min;		/* latency floor: lowest epoch mean [ns], 0 = relearn */
	u32 slow_epochs;	/* held epochs in a row with the latency up */
	u32 trig_depth;		/* depth a search for lost capacity began at */
	u32 known_min;		/* below it an epoch with no reserve lost rate */
	struct fq_depth_point prev;	/* the depth we moved from */
	u32 prev_n;		/* epochs summed in prev */
	u8 prev_kinds;		/* FQ_DEPTH_K_* of the epochs summed in prev */
	struct fq_depth_point at;	/* epochs at the depth now, summed */
	u32 at_n;		/* how many (the oldest fade past 8) */
	u8 at_kinds;		/* FQ_DEPTH_K_* of the epochs summed in at */
	struct fq_depth_point ref;	/* the held depth when hold began */
	struct fq_depth_epoch cur;

	/* figures */
	u64 epochs;		/* saturated epochs judged */
	u64 idle_epochs;	/* epochs the demand did not fill the depth */
	u64 unseen_epochs;	/* epochs with work unreported (fq_depth_unseen()) */
	u64 reserved_epochs;	/* judged epochs with a reserve (fq_depth_reserved()) */
	u64 changes;		/* depth changes */
};

/*
 * fq_depth_init - start at @seed requests in flight (the lower device's
 * queue depth is a good seed: it is what the device offers), never more
 * than @depth_max.  Both are clamped to [1, @depth_max].
 */
void fq_depth_init(struct fq_depth *dc, u32 seed, u32 depth_max);

/*
 * fq_depth_complete - one request of @bytes (@write or not) completed at
 * @now_ns after @lat_ns below (dispatch to completion).  @full_ns: how
 * long, summed up to @now_ns since the caller began (never going down),
 * the depth was full: at least as many requests in flight as the depth
 * allowed.  Returns the depth to use from now on.
 */
u32 fq_depth_complete(struct fq_depth *dc, u64 now_ns, u64 lat_ns, u32 bytes,
		      bool write, u64 full_ns);

/*
 * fq_depth_price - what a request of direction @write is worth from now
 * on: @req_ns per request plus @byte_price [2^-16 ns] per byte (fairq:
 * the cost model's device time; until a price is set a byte is worth one
 * ns, so throughput is bytes per second).  Every rate compared, the
 * epochs already measured included, is priced anew, so prices may change
 * at any time.  Why not bytes for ever: on a device whose cost is per
 * request (4 KiB and 124 KiB reads taking 4 ms each), a deeper depth
 * that shifts the mix towards larger requests looks faster in bytes,
 * and the depth would climb with the device serving no faster (unit
 * case mix_shift).  Why not the device time of each request summed as
 * it completes: the model moves as it learns (a tenth within a few
 * epochs), and two epochs summed at different prices would compare the
 * model's drift, not the depths (unit case price_change).
 */
void fq_depth_price(struct fq_depth *dc, bool write, u64 req_ns,
		    u64 byte_price);

/*
 * fq_depth_unseen - requests below the caller's limit are completing that
 * it does not report (fairq.ko's pass-through, sent while the depth had
 * room): the open epoch misses their work, so its rate says nothing about
 * the depth.  It is not judged (counted in unseen_epochs), and a move
 * made before it is judged by the next epoch that is not unseen.
 */
void fq_depth_unseen(struct fq_depth *dc);

/*
 * fq_depth_reserved - the caller kept work out of slots it reserves for
 * another flow (fairq's interactive boost: a flow's next request must
 * find a server free).  That time counts as full in @full_ns (the depth,
 * less its reserve, held the work back), so a device whose depth is
 * never full while a flow is boosted still teaches the controller
 * something.  Its rate is lowered by the slots kept idle, so it is
 * compared only with epochs that had a reserve too: a move up is kept
 * only when the sums at both depths are of one kind and the same (an
 * epoch without a reserve would show a gain the reserve's idle slots
 * made), and one kept with a reserve is held there, one step, not
 * doubled: the depth it adds goes to the others, whose requests the
 * boosted flow's next one may then queue behind (the reserve grows
 * when it does, fq_boost.c).  A move down goes no lower than a depth
 * from which an epoch without a reserve showed a move down losing half
 * of linear throughput or more, as an idled server does (known_min):
 * there the reserve would leave the others too few slots (on two
 * servers that streamers settle at 2, a boosted reader's reserved
 * epochs would take the depth to 1, where each of its requests waits
 * for a streamer's: unit case reserved_floor).  The epochs summed at a
 * held depth are all of one kind, with a reserve or without (fq_depth.c's
 * fq_depth_sum()).  Why reserved epochs may climb: were they only to
 * take the depth down, a move down kept on one noisy verdict (the
 * seed's halving, judged on a device still warming up, short of the
 * bar by less than its noise) would stay below the knee for the whole
 * boost, every epoch of which is reserved (unit case reserved).
 */
void fq_depth_reserved(struct fq_depth *dc);

/* Epochs closed that saw all the work, judged or not: it grows by one each. */
static inline u64 fq_depth_seen_epochs(const struct fq_depth *dc)
{
	return dc->epochs + dc->idle_epochs;
}

#endif /* FQ_DEPTH_H */
