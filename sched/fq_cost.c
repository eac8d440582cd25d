// SPDX-License-Identifier: GPL-2.0
/*
 * fq_cost.c - online fit of the per-device cost model of fq_cost.h.
 *
 * Units inside: x1 = a direction's share of an epoch's completions in
 * 1/64ths (0..64), x2 = its KiB per completion (0..4096), y = device time
 * per completion in 16 ns (0..2^25, 537 ms: a 1 MiB read at 4 MiB/s is
 * 250 ms, and a clamp below the times a slow disk really takes would
 * bend the fit for as long as they last).  With sums
 * decaying to at most 16 epochs' worth (s11 < 2^16, s12 < 2^22,
 * s22 < 2^28, s1y < 2^35, s2y < 2^41), every product below stays under
 * 2^58.
 * Divisions are of u64 values by u64 values, through div64_u64()
 * (fq_env.h).
 */
#include "fq_cost.h"

#define FQ_COST_X1		64ull		/* x1 of a whole epoch */
#define FQ_COST_X2_MAX		4096ull		/* KiB per completion */
#define FQ_COST_Y_MAX		(1ull << 25)	/* 16 ns units per completion */
#define FQ_COST_B_F		4ull		/* b shown: F above this */

void fq_cost_init(struct fq_cost *fc)
{
	*fc = (struct fq_cost){ .open = false };
}

/* q * @mul / @den without overflow for q * den < 2^63, mul <= 2^10. */
static u64 fq_cost_scale(u64 num, u64 den, u64 mul)
{
	u64 rem, q = div64_u64_rem(num, den, &rem);

	return q * mul + div64_u64(rem * mul, den);
}

/*
 * Whether the fit a + b x2 explains the epochs' times better than the
 * mean a alone by more than the noise does: the residual sum of squares
 * the per-byte term removes, against FQ_COST_B_F times the residual's
 * variance (an F test with one degree of freedom: t > 2 for b, with
 * the decayed count of epochs, at most 16, as the sample's size).
 * A per-request device with noisy epochs fits some b by chance, and a
 * b once charged shifts the mix of sizes served so that the next epochs
 * seem to confirm it: a few slow epochs (a depth probe below the
 * device's servers) would price a 124 KiB piece well above a 4 KiB read
 * on a device that takes 4 ms for either, and serve the larger flow
 * less for seconds.  The price of the test: a device whose per-byte
 * cost is real but small against its noise (a seek disk's transfer
 * time) is charged per request.
 * Sums of squares by the least-squares identities; each product stays
 * below 2^61 for times and sizes in range (syy < 2^54), and garbage
 * can only make the answer wrong.
 */
static bool fq_cost_b_shown(const struct fq_cost_dir *cd, u64 a, u64 b)
{
	u64 m = cd->sw / 16, fit, mean_only, sse, gain, rem;

	if (m < 4)
		return false;
	mean_only = cd->s1y * div64_u64_rem(cd->s1y, cd->s11, &rem);
	mean_only += div64_u64(cd->s1y * rem, cd->s11);
	fit = fq_cost_scale(cd->s1y, FQ_COST_X1, a) +
	      fq_cost_scale(cd->s2y, 1024, b);
	sse = cd->syy > fit ? cd->syy - fit : 0;
	mean_only = cd->syy > mean_only ? cd->syy - mean_only : 0;
	gain = mean_only > sse ? mean_only - sse : 0;
	return gain * (m - 2) > FQ_COST_B_F * sse;
}

static void fq_cost_refit(struct fq_cost_dir *cd)
{
	s64 det, nb;
	u64 by;

	det = (s64)(cd->s11 * cd->s22) - (s64)(cd->s12 * cd->s12);
	if (!cd->s11)
		return;
	/*
	 * Sizes (nearly) proportional to counts: only the mean cost is
	 * known.  Keep b (0 until sizes have once varied) and refit a so
	 * that the mean comes out right.
	 */
	if (det <= 0 || (u64)det * 64 < cd->s11 * cd->s22) {
		by = cd->b * cd->s12 / 1024;
		cd->a = cd->s1y > by ?
			fq_cost_scale(cd->s1y - by, cd->s11, FQ_COST_X1) : 0;
		return;
	}
	/*
	 * b from Cramer's rule, then a from the first normal equation
	 * (a s11 + b s12 = s1y): Cramer's numerator for a, s22 * s1y, would
	 * not fit 64 bits at a slow disk's per-completion times.
	 */
	nb = (s64)(cd->s11 * cd->s2y) - (s64)(cd->s12 * cd->s1y);
	cd->sized = true;
	cd->b = nb > 0 ? fq_cost_scale((u64)nb, (u64)det, 1024) : 0;
	by = cd->b * cd->s12 / 1024;
	cd->a = cd->s1y > by ?
		fq_cost_scale(cd->s1y - by, cd->s11, FQ_COST_X1) : 0;
	if (!cd->b || fq_cost_b_shown(cd, cd->a, cd->b))
		return;
	/* b is noise: a per-request price, the mean */
	cd->b = 0;
	cd->a = fq_cost_scale(cd->s1y, cd->s11, FQ_COST_X1);
}

/* The device time [16 ns per completion] @cd predicts for x1, x2. */
static u64 fq_cost_pred(const struct fq_cost_dir *cd, u64 x1, u64 x2)
{
	return cd->a * x1 / FQ_COST_X1 + cd->b * x2 / 1024;
}

/*
 * What the epoch's time per completion owes to direction @o, for the
 * fit of the other direction to subtract.  A direction with a model
 * predicts its own; one without borrows the other's, as fq_cost_ns()
 * charges it; while neither has one, each owes the time in proportion
 * to its completions.  Subtracting a prediction fitted from a handful of
 * epochs instead (0 before the first) hands the direction fitted first
 * the whole time: a 4 KiB reader and 128 KiB writeback starting together
 * on a throttled volume had reads priced at 33 ms and writes at 0.25 ms
 * when the model formed (the volume takes about 2 and 31).
 */
static u64 fq_cost_owed(const struct fq_cost *fc, int o, const u64 *x1,
			const u64 *x2, u64 y)
{
	u64 bytes;

	if (fc->d[o].epochs >= FQ_COST_EPOCHS_MIN)
		return fq_cost_pred(&fc->d[o], x1[o], x2[o]);
	if (fc->d[!o].epochs < FQ_COST_EPOCHS_MIN)
		return div_u64(y * x1[o], FQ_COST_X1);
	/* its mean request at the borrowed price, in 16 ns per completion */
	bytes = div_u64(fc->bytes_dir[o], fc->n_dir[o]);
	return div64_u64(fq_cost_ns(fc, (u32)bytes, o) * fc->n_dir[o],
			 16ull * fc->n);
}

/* An epoch of @t ns was fitted: the dither's phase goes on, or swaps. */
static void fq_cost_phase(struct fq_cost *fc, u64 t)
{
	fc->epoch_ns = fc->epoch_ns ? (fc->epoch_ns * 7 + t) / 8 : t;
	fc->mixed = fc->n_dir[0] && fc->n_dir[1];
	if (!fc->mixed)
		return;
	fc->phase_ns += t;
	if (fc->phase_ns >= FQ_COST_DITHER_EPOCHS * fc->epoch_ns) {
		fc->dear_write = !fc->dear_write;
		fc->phase_ns = 0;
	}
}

static void fq_cost_epoch(struct fq_cost *fc, u64 now_ns)
{
	u64 x1[2], x2[2], y, yd;
	int d;

	if (fc->limited * 4 < fc->n * 3 || fc->unseen)
		return;		/* the device may have idled: T is not its time */
	y = div_u64((now_ns - fc->start_ns) / 16, fc->n);
	if (y > FQ_COST_Y_MAX)
		y = FQ_COST_Y_MAX;
	for (d = 0; d < 2; d++) {
		x1[d] = div_u64(fc->n_dir[d] * FQ_COST_X1, fc->n);
		x2[d] = div_u64(fc->bytes_dir[d] >> 10, fc->n);
		if (x2[d] > FQ_COST_X2_MAX)
			x2[d] = FQ_COST_X2_MAX;
	}
	fc->epochs++;
	fq_cost_phase(fc, now_ns - fc->start_ns);
	for (d = 0; d < 2; d++) {
		struct fq_cost_dir *cd = &fc->d[d];
		u64 other = fc->n_dir[!d] ? fq_cost_owed(fc, !d, x1, x2, y) : 0;

		if (!fc->n_dir[d])
			continue;
		yd = y > other ? y - other : 0;
		cd->s11 -= cd->s11 >> 4;
		cd->s12 -= cd->s12 >> 4;
		cd->s22 -= cd->s22 >> 4;
		cd->s1y -= cd->s1y >> 4;
		cd->s2y -= cd->s2y >> 4;
		cd->s11 += x1[d] * x1[d];
		cd->s12 += x1[d] * x2[d];
		cd->s22 += x2[d] * x2[d];
		cd->s1y += x1[d] * yd;
		cd->s2y += x2[d] * yd;
		cd->syy -= cd->syy >> 4;
		cd->syy += yd * yd;
		cd->sw -= cd->sw >> 4;
		cd->sw += 16;
		cd->sn -= cd->sn >> 4;
		cd->sb -= cd->sb >> 4;
		cd->sn += fc->n_dir[d];
		cd->sb += fc->bytes_dir[d];
		cd->epochs++;
		fq_cost_refit(cd);
	}
}

void fq_cost_complete(struct fq_cost *fc, u64 now_ns, u32 bytes, bool write,
		      bool limited)
{
	if (!fc->open) {
		/* the first completion only opens the epoch */
		fc->open = true;
		fc->start_ns = now_ns;
		return;
	}
	fc->n++;
	fc->n_dir[write]++;
	fc->bytes_dir[write] += bytes;
	fc->limited += limited;
	if (fc->n < FQ_COST_EPOCH_N || now_ns == fc->start_ns)
		return;
	fq_cost_epoch(fc, now_ns);
	fc->start_ns = now_ns;
	fc->n = 0;
	fc->n_dir[0] = 0;
	fc->n_dir[1] = 0;
	fc->bytes_dir[0] = 0;
	fc->bytes_dir[1] = 0;
	fc->limited = 0;
	fc->unseen = false;
}

void fq_cost_unseen(struct fq_cost *fc)
{
	fc->unseen = true;
}

static const struct fq_cost_dir *fq_cost_model(const struct fq_cost *fc,
					       bool write)
{
	if (fc->d[write].epochs >= FQ_COST_EPOCHS_MIN)
		return &fc->d[write];
	if (fc->d[!write].epochs >= FQ_COST_EPOCHS_MIN)
		return &fc->d[!write];
	return NULL;
}

bool fq_cost_sized(const struct fq_cost *fc, bool write)
{
	const struct fq_cost_dir *cd = fq_cost_model(fc, write);

	return cd && cd->sized;
}

u64 fq_cost_ns(const struct fq_cost *fc, u32 bytes, bool write)
{
	const struct fq_cost_dir *cd = fq_cost_model(fc, write);

	u64 mean;

	if (!cd)
		return 0;
	/*
	 * Sizes have never varied between epochs (one size, or a scheduler
	 * serving the sizes in a fixed ratio): b is unknown and a is the
	 * mean cost.  Charge that mean in proportion to the bytes, around
	 * the direction's mean request size (x2 / x1 in KiB per 1/X1): one
	 * size still costs a, and mixed sizes are served in a varying mix,
	 * which is what lets the fit tell a from b.  Charging every size
	 * the mean would keep the ratio fixed, and b unknown, for ever.
	 */
	if (!cd->sized && cd->sn) {
		mean = div64_u64(cd->sb, cd->sn);
		if (mean)
			return div64_u64(cd->a * 16 * bytes, mean);
	}
	/* b is per KiB in 16/1024 ns: per byte that is b / 65536 ns */
	return cd->a * 16 + cd->b * bytes / 65536;
}

bool fq_cost_price(const struct fq_cost *fc, bool write, u64 *req_ns,
		   u64 *byte_price)
{
	const struct fq_cost_dir *cd = fq_cost_model(fc, write);

	if (!cd)
		return false;
	*req_ns = cd->a * 16;
	*byte_price = cd->b;
	return true;
}

u32 fq_cost_dither(const struct fq_cost *fc, bool write)
{
	if (!fc->mixed)
		return 64;
	return fc->dear_write == write ? FQ_COST_DITHER_DEAR :
					 64 * 64 / FQ_COST_DITHER_DEAR;
}

u64 fq_cost_a_ns(const struct fq_cost *fc, bool write)
{
	const struct fq_cost_dir *cd = fq_cost_model(fc, write);

	return cd ? cd->a * 16 : 0;
}

u64 fq_cost_b_ps_per_byte(const struct fq_cost *fc, bool write)
{
	const struct fq_cost_dir *cd = fq_cost_model(fc, write);

	return cd ? cd->b * 1000 / 65536 : 0;
}
