/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fq_cost.h - what a request costs the device, learnt online.
 *
 * Fair shares of a disk are shares of its time, and a request's time is
 * not its bytes (a 1 MiB sequential read and a 4 KiB random read cost
 * about the same on a hard disk) nor one unit each (on flash the 1 MiB
 * read costs a hundred times more).  struct fq_cost models a request of
 * a given direction as
 *
 *	cost = a[dir] + b[dir] * bytes
 *
 * in nanoseconds of whole-device time, and fits a and b from what the
 * caller sees anyway: completions.  In an epoch during which the device
 * was saturated (most completions found the depth full and work waiting
 * above) the device spent the whole epoch on the requests that completed,
 * so for that epoch, per completion,
 *
 *	T / n = a_r * n_r / n + b_r * bytes_r / n + a_w * n_w / n + b_w * bytes_w / n
 *
 * Each direction's (a, b) is the least-squares fit of these equations
 * over the recent epochs (sums decay by 1/16 per epoch), with the other
 * direction's current prediction subtracted; a direction without a model
 * yet is predicted by the other's model, and while neither has one, each
 * owes the epoch's time in proportion to its completions (fq_cost.c says
 * why).  Reads and writes served in a fixed ratio cannot be told apart
 * either, and a scheduler charging by the model serves them in the ratio
 * the model sets: so while both directions complete, fq_cost_dither()
 * makes one dearer and the other cheaper in turns, and the mix the fit
 * sees varies.  Epochs are short (16
 * completions) so that the mix of sizes varies from one to the next;
 * when it does not (every request the same size, or a scheduler that
 * serves the sizes in a fixed ratio), a and b cannot be told apart: the
 * fit keeps b (0 until sizes once varied) and refits a to the mean cost,
 * which is still right for the mix there is.  A fitted b is charged only
 * when it explains the epochs' times better than the mean alone by more
 * than their noise does (an F test, fq_cost.c); else b is 0 and a the
 * mean: noise must not put a price on bytes that a device does not
 * charge.  A direction never seen borrows the other's model.
 *
 * Integer arithmetic only, 64-bit: the regressors are per completion and
 * clamped (mix in 1/64ths, at most 4 MiB and 537 ms per completion) so
 * that every product of sums fits.  No locking: the caller serialises.
 */
#ifndef FQ_COST_H
#define FQ_COST_H

#include "fq_env.h"

enum {
	FQ_COST_EPOCH_N = 16,		/* completions per epoch, at least */
	FQ_COST_EPOCHS_MIN = 8,		/* saturated epochs before a model */
	/*
	 * The dearer direction's price while both complete, in 64ths (the
	 * cheaper one's is 64 x 64 / this).  Kind: family: 188 of its 1,200
	 * cases fail, 198 without the dither (64), 185 at 80, 202 at 128;
	 * over seeds 1 and 2 its readers-writer mix's mean min(G, 1) is
	 * 0.925, 0.905 without, 0.920 at 80 (and the simulator's throttled
	 * reader beside writeback G 0.89, 0.74 at 80).
	 */
	FQ_COST_DITHER_DEAR = 96,
	/*
	 * A phase of the dither lasts this many epochs' time.  Kind: family:
	 * at 2 and 8, 196 and 191 cases fail, neutral.
	 */
	FQ_COST_DITHER_EPOCHS = 4,
};

/* One direction's sums and fit. */
struct fq_cost_dir {
	/*
	 * decayed sums over epochs: x1 = share of completions [1/64],
	 * x2 = KiB per completion, y = device time per completion [16 ns]
	 */
	u64 s11, s12, s22, s1y, s2y, syy;
	u64 sw;			/* decayed epochs [1/16]: at most 256 */
	u64 sn, sb;		/* decayed requests and bytes (mean size) */
	u64 a;			/* per request [16 ns] */
	u64 b;			/* per KiB [16 ns / 1024] */
	u32 epochs;		/* epochs in which this direction completed */
	bool sized;		/* sizes varied once: b was fitted */
};

struct fq_cost {
	struct fq_cost_dir d[2];	/* [0] reads, [1] writes */
	/* the open epoch */
	u64 start_ns;
	u32 n, n_dir[2], limited;
	u64 bytes_dir[2];
	bool open;
	bool unseen;		/* work went by unreported (fq_cost_unseen()) */
	bool mixed;		/* the last epoch fitted had both directions */
	bool dear_write;	/* the dither's phase: writes are the dearer */
	u64 phase_ns;		/* time fitted in this phase */
	u64 epoch_ns;		/* an epoch's time, 7/8 old */
	/* figures */
	u64 epochs;		/* saturated epochs fitted */
};

void fq_cost_init(struct fq_cost *fc);

/*
 * fq_cost_complete - a request of @bytes (@write or not) completed at
 * @now_ns; @limited: the depth was full and work was waiting above (the
 * device never went short of work during the epoch; stricter than
 * fq_depth_complete()'s full depth).
 */
void fq_cost_complete(struct fq_cost *fc, u64 now_ns, u32 bytes, bool write,
		      bool limited);

/*
 * fq_cost_unseen - requests completed (or will) in the open epoch that
 * the caller does not report (fairq.ko's pass-through): the epoch's time
 * per request would count only the others', so it is not fitted.
 */
void fq_cost_unseen(struct fq_cost *fc);

/*
 * fq_cost_ns - the modelled device time of a request [ns], or 0 while no
 * model exists yet (fewer than FQ_COST_EPOCHS_MIN saturated epochs): the
 * caller then charges what it charged before (bytes or requests).
 */
u64 fq_cost_ns(const struct fq_cost *fc, u32 bytes, bool write);

/*
 * fq_cost_price - the fitted terms for direction @write: *@req_ns per
 * request and *@byte_price [2^-16 ns] per byte; false, and nothing
 * written, while no model exists yet.  Until sizes once varied b is 0
 * and a the mean cost per request: a price per request, where
 * fq_cost_ns() charges that mean in proportion to the bytes (the depth
 * controller's unit must not grow with the size of what it lets in).
 */
bool fq_cost_price(const struct fq_cost *fc, bool write, u64 *req_ns,
		   u64 *byte_price);

/*
 * fq_cost_sized - whether direction @write's model has seen sizes vary,
 * so that its b is fitted (and may be 0: a price per request); false
 * while no model exists.
 */
bool fq_cost_sized(const struct fq_cost *fc, bool write);

/*
 * fq_cost_dither - what to charge direction @write now, in 64ths of its
 * fq_cost_ns(): 64 unless the last epoch fitted completed both reads and
 * writes; then one direction is dearer and the other cheaper by the same
 * factor, swapping after FQ_COST_DITHER_EPOCHS epochs' worth of time
 * (time, not epochs: the phase that makes the smaller requests cheap
 * completes its epochs faster, and would be the shorter one).  Only
 * fitted epochs count: while mixed work never saturates the device the
 * phase holds, one direction dearer (advancing it with every epoch
 * made 375 of the family's 2,400 cases over seeds 1 and 2 fail against
 * 369, and no named table better).
 */
u32 fq_cost_dither(const struct fq_cost *fc, bool write);

/* The fitted terms, for figures: per request [ns] and per byte [ps]. */
u64 fq_cost_a_ns(const struct fq_cost *fc, bool write);
u64 fq_cost_b_ps_per_byte(const struct fq_cost *fc, bool write);

#endif /* FQ_COST_H */
