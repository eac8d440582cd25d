// SPDX-License-Identifier: GPL-2.0
/*
 * fq_cost_test.c - the online cost model (fq_cost.c) against devices
 * whose cost is known: a one-server device fed back to back (saturated)
 * with a random mix of sizes and directions, where a request of @bytes
 * costs a[dir] + b[dir] * bytes exactly.  Prints one line per case and
 * ends with "cost: N passed, N failed".
 */
#include <stdlib.h>
#include "fq_test.h"
#include "fq_cost.h"

int fq_test_failed;

static u64 rng = 0x9e3779b97f4a7c15ull;

static u64 rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct truth {
	u64 a_ns[2];		/* per request, reads / writes */
	u64 b_ps[2];		/* per byte [ps] */
};

static u64 true_ns(const struct truth *t, u32 bytes, bool write)
{
	return t->a_ns[write] + t->b_ps[write] * bytes / 1000;
}

/*
 * @n completions back to back on one server: sizes drawn from @sizes,
 * writes with probability @wr_pct %.
 */
static void feed(struct fq_cost *fc, const struct truth *t, u64 *now, int n,
		 const u32 *sizes, int nsizes, unsigned int wr_pct,
		 bool limited)
{
	u32 bytes;
	bool w;
	int i;

	for (i = 0; i < n; i++) {
		bytes = sizes[rnd() % (u64)nsizes];
		w = rnd() % 100 < wr_pct;
		*now += true_ns(t, bytes, w);
		fq_cost_complete(fc, *now, bytes, w, limited);
	}
}

/* |got - want| <= want * pct / 100 */
static bool near(u64 got, u64 want, u64 pct)
{
	u64 d = got > want ? got - want : want - got;

	return d * 100 <= want * pct;
}

static void check_near(const char *what, u64 got, u64 want, u64 pct)
{
	if (!near(got, want, pct)) {
		fprintf(stderr, "  %s: %llu, expected %llu +- %llu%%\n", what,
			(unsigned long long)got, (unsigned long long)want,
			(unsigned long long)pct);
		fq_test_failed++;
	}
}

/* Reads of 4 KiB .. 1 MiB on a 100 us + 1 ns/B device: a and b found. */
static void t_fit_reads(void)
{
	static const u32 sizes[] = { 4096, 16384, 65536, 262144, 1 << 20 };
	struct truth t = { { 100000, 0 }, { 1000, 0 } };
	struct fq_cost fc;
	u64 now = 0;

	fq_cost_init(&fc);
	CHECK_EQ(fq_cost_ns(&fc, 4096, false), 0);
	feed(&fc, &t, &now, 4000, sizes, 5, 0, true);
	CHECK(fc.d[0].sized);
	check_near("a", fq_cost_a_ns(&fc, false), 100000, 5);
	check_near("b", fq_cost_b_ps_per_byte(&fc, false), 1000, 5);
	check_near("4 KiB", fq_cost_ns(&fc, 4096, false), true_ns(&t, 4096, 0), 5);
	check_near("1 MiB", fq_cost_ns(&fc, 1 << 20, false),
		   true_ns(&t, 1 << 20, 0), 5);
	/* writes never seen: they borrow the reads' model */
	CHECK_EQ(fq_cost_ns(&fc, 4096, true), fq_cost_ns(&fc, 4096, false));
}

/* Reads and writes mixed, each with its own a and b. */
static void t_fit_directions(void)
{
	static const u32 sizes[] = { 4096, 65536, 524288 };
	struct truth t = { { 100000, 20000 }, { 1000, 3000 } };
	struct fq_cost fc;
	u64 now = 0;

	fq_cost_init(&fc);
	feed(&fc, &t, &now, 20000, sizes, 3, 40, true);
	check_near("read 4 KiB", fq_cost_ns(&fc, 4096, false),
		   true_ns(&t, 4096, 0), 10);
	check_near("read 512 KiB", fq_cost_ns(&fc, 524288, false),
		   true_ns(&t, 524288, 0), 10);
	check_near("write 4 KiB", fq_cost_ns(&fc, 4096, true),
		   true_ns(&t, 4096, 1), 10);
	check_near("write 512 KiB", fq_cost_ns(&fc, 524288, true),
		   true_ns(&t, 524288, 1), 10);
}

/*
 * @n completions in a fixed pattern: one 4 KiB read, then @every - 1
 * writes of 128 KiB, over and over (a scheduler serving the two in a
 * fixed ratio).
 */
static void feed_pattern(struct fq_cost *fc, const struct truth *t, u64 *now,
			 int n, int every)
{
	int i;

	for (i = 0; i < n; i++) {
		bool w = i % every != 0;
		u32 bytes = w ? 131072 : 4096;

		*now += true_ns(t, bytes, w);
		fq_cost_complete(fc, *now, bytes, w, true);
	}
}

/*
 * Both directions from the start, in a fixed ratio that no epoch varies:
 * the split between them cannot be learnt, and neither direction may
 * take the whole time (the one fitted first did, when each subtracted
 * the other's prediction from its first epoch: reads at 4x the mean,
 * writes at nearly nothing).  Each owes its completions' share: both at
 * the mean, so that a scheduler charging them serves the two alike
 * until a varying mix tells them apart.
 */
static void t_together_fixed(void)
{
	struct truth t = { { 2000000, 2000000 }, { 0, 225000 } };
	struct fq_cost fc;
	u64 now = 0, mean, r, w;

	fq_cost_init(&fc);
	feed_pattern(&fc, &t, &now, 4000, 4);
	mean = (true_ns(&t, 4096, false) + 3 * true_ns(&t, 131072, true)) / 4;
	r = fq_cost_ns(&fc, 4096, false);
	w = fq_cost_ns(&fc, 131072, true);
	check_near("4 KiB read", r, mean, 15);
	check_near("128 KiB write", w, mean, 15);
}

/*
 * The same two directions in a mix that varies (what the dither makes
 * of a scheduler's fixed ratio): the split is learnt.
 */
static void t_together_varied(void)
{
	struct truth t = { { 2000000, 2000000 }, { 0, 225000 } };
	struct fq_cost fc;
	u64 now = 0;
	int i;

	fq_cost_init(&fc);
	feed_pattern(&fc, &t, &now, 4000, 4);
	/* four epochs at one read in four, four at one in two, and again */
	for (i = 0; i < 300; i++)
		feed_pattern(&fc, &t, &now, 4 * FQ_COST_EPOCH_N, i & 1 ? 2 : 4);
	check_near("4 KiB read", fq_cost_ns(&fc, 4096, false),
		   true_ns(&t, 4096, false), 10);
	check_near("128 KiB write", fq_cost_ns(&fc, 131072, true),
		   true_ns(&t, 131072, true), 10);
}

/*
 * The dither: 64 (nothing) while one direction completes; once an epoch
 * fitted has both, one direction is dearer and the other cheaper, the
 * two swapping every FQ_COST_DITHER_EPOCHS epochs; back to 64 when the
 * mix is one direction again.
 */
static void t_dither(void)
{
	static const u32 sizes[] = { 4096 };
	struct truth t = { { 100000, 100000 }, { 0, 0 } };
	u32 cheap = 64 * 64 / FQ_COST_DITHER_DEAR, r, w, swaps = 0, prev = 0;
	struct fq_cost fc;
	u64 now = 0;
	int i;

	fq_cost_init(&fc);
	feed(&fc, &t, &now, 400, sizes, 1, 0, true);
	CHECK_EQ(fq_cost_dither(&fc, false), 64);
	CHECK_EQ(fq_cost_dither(&fc, true), 64);
	feed(&fc, &t, &now, 2 * FQ_COST_EPOCH_N, sizes, 1, 50, true);
	for (i = 0; i < 8 * FQ_COST_DITHER_EPOCHS; i++) {
		feed(&fc, &t, &now, FQ_COST_EPOCH_N, sizes, 1, 50, true);
		r = fq_cost_dither(&fc, false);
		w = fq_cost_dither(&fc, true);
		CHECK((r == FQ_COST_DITHER_DEAR && w == cheap) ||
		      (w == FQ_COST_DITHER_DEAR && r == cheap));
		swaps += prev && r != prev;
		prev = r;
	}
	CHECK(swaps >= 6 && swaps <= 8);
	feed(&fc, &t, &now, 400, sizes, 1, 100, true);
	CHECK_EQ(fq_cost_dither(&fc, false), 64);
	CHECK_EQ(fq_cost_dither(&fc, true), 64);
}

/* One size only: a and b cannot be told apart; that size is still right. */
static void t_one_size(void)
{
	static const u32 sizes[] = { 8192 };
	struct truth t = { { 250000, 0 }, { 2000, 0 } };
	struct fq_cost fc;
	u64 now = 0;

	fq_cost_init(&fc);
	feed(&fc, &t, &now, 2000, sizes, 1, 0, true);
	CHECK(!fc.d[0].sized);
	CHECK_EQ(fc.d[0].b, 0);
	check_near("8 KiB", fq_cost_ns(&fc, 8192, false), true_ns(&t, 8192, 0), 2);
}

/* The device got slower: the model follows within ~100 epochs. */
static void t_follows(void)
{
	static const u32 sizes[] = { 4096, 131072, 1 << 20 };
	struct truth t = { { 100000, 0 }, { 1000, 0 } };
	struct fq_cost fc;
	u64 now = 0;

	fq_cost_init(&fc);
	feed(&fc, &t, &now, 3000, sizes, 3, 0, true);
	t.a_ns[0] = 300000;
	t.b_ps[0] = 500;
	feed(&fc, &t, &now, 3000, sizes, 3, 0, true);
	check_near("a after", fq_cost_a_ns(&fc, false), 300000, 10);
	check_near("1 MiB after", fq_cost_ns(&fc, 1 << 20, false),
		   true_ns(&t, 1 << 20, 0), 10);
}

/*
 * Sizes in a fixed ratio (a scheduler alternating 4 KiB and 1 MiB): no
 * new information on b, which is kept; the mean stays right.
 */
static void t_fixed_mix(void)
{
	static const u32 sizes[] = { 4096, 65536, 1 << 20 };
	struct truth t = { { 100000, 0 }, { 1000, 0 } };
	struct fq_cost fc;
	u64 now = 0;
	int i;

	fq_cost_init(&fc);
	feed(&fc, &t, &now, 3000, sizes, 3, 0, true);
	CHECK(fc.d[0].sized);
	for (i = 0; i < 4000; i++) {
		u32 b = i % 2 ? 4096 : 1 << 20;

		now += true_ns(&t, b, false);
		fq_cost_complete(&fc, now, b, false, true);
	}
	check_near("b kept", fq_cost_b_ps_per_byte(&fc, false), 1000, 5);
	check_near("4 KiB", fq_cost_ns(&fc, 4096, false), true_ns(&t, 4096, 0), 5);
	check_near("1 MiB", fq_cost_ns(&fc, 1 << 20, false),
		   true_ns(&t, 1 << 20, 0), 5);
}

/*
 * A fixed ratio from the start (4 KiB and 1 MiB alternating, as a
 * scheduler charging each the same would serve them): b is never fitted,
 * so the mean cost is charged in proportion to the bytes -- 1 MiB costs
 * 256 x 4 KiB and the pair still costs what it costs -- and a mix that
 * then varies lets the fit find a and b.
 */
static void t_fixed_mix_unsized(void)
{
	static const u32 sizes[] = { 4096, 65536, 1 << 20 };
	struct truth t = { { 100000, 0 }, { 1000, 0 } };
	struct fq_cost fc;
	u64 now = 0, c4, c1m;
	int i;

	fq_cost_init(&fc);
	for (i = 0; i < 4000; i++) {
		u32 b = i % 2 ? 4096 : 1 << 20;

		now += true_ns(&t, b, false);
		fq_cost_complete(&fc, now, b, false, true);
	}
	CHECK(!fc.d[0].sized);
	c4 = fq_cost_ns(&fc, 4096, false);
	c1m = fq_cost_ns(&fc, 1 << 20, false);
	check_near("1 MiB / 4 KiB charge", c1m / (c4 ? c4 : 1), 256, 5);
	check_near("the pair", c4 + c1m,
		   true_ns(&t, 4096, 0) + true_ns(&t, 1 << 20, 0), 5);
	feed(&fc, &t, &now, 3000, sizes, 3, 0, true);
	CHECK(fc.d[0].sized);
	check_near("1 MiB once sizes varied", fq_cost_ns(&fc, 1 << 20, false),
		   true_ns(&t, 1 << 20, 0), 5);
	check_near("4 KiB once sizes varied", fq_cost_ns(&fc, 4096, false),
		   true_ns(&t, 4096, 0), 10);
}

/*
 * @epochs epochs of FQ_COST_EPOCH_N completions on a noisy device: each
 * request costs a + b * bytes (@a_ns, @b_ps) +-20 %, and one epoch in
 * four takes @slow times as long (depth=auto's probes below the
 * device's servers that the driver does not keep out of the fit), sizes
 * drawn from 4 KiB and @big.  After the first 20 epochs, counts the
 * epochs after which @big is charged above @hi_pct % of 4 KiB's charge
 * (*@above) or below @lo_pct % (*@below); returns how many were looked
 * at.
 */
static int noisy_ratio(u64 a_ns, u64 b_ps, u64 slow, u32 big, int epochs,
		       u64 lo_pct, u64 hi_pct, int *above, int *below)
{
	const u32 sizes[] = { 4096, big };
	struct fq_cost fc;
	u64 now = 0, c4, cb, f, ns;
	int e, i, seen = 0;
	u32 bytes;

	*above = 0;
	*below = 0;
	fq_cost_init(&fc);
	for (e = 0; e < epochs; e++) {
		f = rnd() % 4 ? 1 : slow;
		for (i = 0; i < FQ_COST_EPOCH_N; i++) {
			bytes = sizes[rnd() % 2];
			ns = a_ns + b_ps * bytes / 1000;
			now += ns * f * (80 + rnd() % 41) / 100;
			fq_cost_complete(&fc, now, bytes, false, true);
		}
		if (e < 20)
			continue;
		c4 = fq_cost_ns(&fc, 4096, false);
		cb = fq_cost_ns(&fc, big, false);
		seen++;
		*above += cb * 100 > c4 * hi_pct;
		*below += cb * 100 < c4 * lo_pct;
	}
	return seen;
}

/* At most 1 in 20 of @seen epochs in @bad, or the case fails, saying @what. */
static void check_rare(const char *what, int k, int bad, int seen)
{
	if (bad * 20 > seen) {
		fprintf(stderr, "  draw %d: %s after %d of %d epochs\n", k,
			what, bad, seen);
		fq_test_failed++;
	}
}

/*
 * A per-request device (nullb-lat: 2 ms of device time a request, any
 * size) whose epochs double now and then, 4 KiB and 128 KiB mixed at
 * random: whatever per-byte price the noise fits must not be charged
 * (fq_cost.c's fq_cost_b_shown() says why).  128 KiB costs at most 1.5x
 * 4 KiB after 95 % of the epochs.
 */
static void t_per_request_noisy(void)
{
	int seen, above, below, k;

	for (k = 0; k < 4; k++) {
		seen = noisy_ratio(2000000, 0, 2, 131072, 400, 0, 150,
				   &above, &below);
		check_rare("128 KiB above 1.5x 4 KiB", k, above, seen);
	}
}

/*
 * Devices whose cost has a per-byte part, with the per-request noise:
 * the price is still charged.  Virtio throttled to 4 MiB/s (1 ms +
 * 238 ps/B: 128 KiB costs 16x 4 KiB) at least 8x after 95 % of the
 * epochs, and a tenth of that per byte (2.45x) at least 1.5x.
 */
static void t_per_byte_noisy(void)
{
	int seen, above, below, k;

	for (k = 0; k < 4; k++) {
		seen = noisy_ratio(1000000, 238000, 1, 131072, 400, 800,
				   100000, &above, &below);
		check_rare("128 KiB below 8x 4 KiB", k, below, seen);
		seen = noisy_ratio(1000000, 23800, 1, 131072, 400, 150,
				   100000, &above, &below);
		check_rare("128 KiB below 1.5x 4 KiB", k, below, seen);
	}
}

/* Epochs in which the device was not saturated teach nothing. */
static void t_unsaturated(void)
{
	static const u32 sizes[] = { 4096, 1 << 20 };
	struct truth t = { { 100000, 0 }, { 1000, 0 } };
	struct fq_cost fc;
	u64 now = 0;

	fq_cost_init(&fc);
	feed(&fc, &t, &now, 5000, sizes, 2, 0, false);
	CHECK_EQ(fc.epochs, 0);
	CHECK_EQ(fq_cost_ns(&fc, 4096, false), 0);
}

/*
 * Epochs in which work went by unreported (pass-through) are not fitted:
 * their time per request would count only the reported requests.  The
 * epoch after one is.
 */
static void t_unseen(void)
{
	static const u32 sizes[] = { 4096 };
	struct truth t = { { 100000, 0 }, { 1000, 0 } };
	struct fq_cost fc;
	u64 now = 0;
	int i;

	fq_cost_init(&fc);
	feed(&fc, &t, &now, 1, sizes, 1, 0, true);	/* opens the epoch */
	for (i = 0; i < 100; i++) {
		fq_cost_unseen(&fc);
		feed(&fc, &t, &now, FQ_COST_EPOCH_N, sizes, 1, 0, true);
	}
	CHECK_EQ(fc.epochs, 0);
	feed(&fc, &t, &now, FQ_COST_EPOCH_N, sizes, 1, 0, true);
	CHECK_EQ(fc.epochs, 1);
}

/* Garbage in (any times, sizes, flags): no crash, no division by zero. */
static void t_garbage(void)
{
	struct fq_cost fc;
	u64 now = 0, r;
	int i;

	fq_cost_init(&fc);
	for (i = 0; i < 200000; i++) {
		r = rnd();
		now += r % 4 ? r % 100000000 : 0;
		fq_cost_complete(&fc, now, (u32)(rnd() >> 32), r & 1,
				 (r >> 8) % 8 != 0);
		if (i % 1000 == 0)
			(void)fq_cost_ns(&fc, (u32)r, r & 2);
	}
	CHECK(fc.epochs > 0);
	/* same time for every completion: zero-length epochs are skipped */
	fq_cost_init(&fc);
	for (i = 0; i < 1000; i++)
		fq_cost_complete(&fc, 5, 4096, false, true);
	CHECK_EQ(fc.epochs, 0);
}

static const struct fq_test_case cases[] = {
	{ "fit_reads", t_fit_reads },
	{ "fit_directions", t_fit_directions },
	{ "together_fixed", t_together_fixed },
	{ "together_varied", t_together_varied },
	{ "dither", t_dither },
	{ "one_size", t_one_size },
	{ "follows", t_follows },
	{ "fixed_mix", t_fixed_mix },
	{ "fixed_mix_unsized", t_fixed_mix_unsized },
	{ "per_request_noisy", t_per_request_noisy },
	{ "per_byte_noisy", t_per_byte_noisy },
	{ "unsaturated", t_unsaturated },
	{ "unseen", t_unseen },
	{ "garbage", t_garbage },
};

int main(int argc, char **argv)
{
	return fq_test_run("cost", cases, ARRAY_SIZE(cases), argc, argv);
}
