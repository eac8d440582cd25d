// SPDX-License-Identifier: GPL-2.0
/*
 * fq_depth.c - adaptive depth: a hill climber on throughput and latency.
 * See fq_depth.h for what it does and why; this file is the how.
 *
 * Divisions of u64 values go through div64_u64() (fq_env.h).
 */
#include "fq_depth.h"

/*
 * Kinds of constants as in fq_depth.h.  Kind: arithmetic, clamps that keep a
 * priced epoch within 64 bits (fq_depth_rate()); none binds on a device
 * (2^32 completions, 64 GiB, 1 s per request in one epoch).
 */
#define FQ_DEPTH_N_MAX		(1ull << 32)
#define FQ_DEPTH_BYTES_MAX	(1ull << 36)
#define FQ_DEPTH_REQ_NS_MAX	(1ull << 30)
#define FQ_DEPTH_BYTE_PRICE_MAX	(1ull << 26)	/* 1 ms per byte */
#define FQ_DEPTH_WORK_MAX	(1ull << 39)	/* per epoch, so << 24 fits */
#define FQ_DEPTH_STEP_MAX	(1u << 30)
/*
 * Epochs a sum holds at most (older ones fade: the mix drifts).  Kind: fitted:
 * chosen for a knee hidden in noise (a network disk under an emulator,
 * the unit case noisy_knee), with TRIAL_MAX.  Family: at 4 and 16, 219
 * and 213 cases fail against 210, within its noise; its devices' jitter
 * (up to 10 %) does not make such a knee.
 */
#define FQ_DEPTH_SUM_MAX	8
/*
 * Epochs a move is tried for at most while the noise hides the verdict.
 * Kind: fitted, with SUM_MAX (noisy_knee).  Family: at 2 and 8, 214 and 210
 * fail, within its noise.
 */
#define FQ_DEPTH_TRIAL_MAX	4

static u64 fq_depth_clamp(u64 v, u64 max)
{
	return v < max ? v : max;
}

/* @p's work at today's prices, per 2^-24 ns of its length */
static u64 fq_depth_rate(const struct fq_depth *dc,
			 const struct fq_depth_point *p)
{
	u64 work = 0;
	int i;

	if (!p->el)
		return 0;
	for (i = 0; i < 2; i++) {
		work += fq_depth_clamp(p->w.n[i], FQ_DEPTH_N_MAX) *
			fq_depth_clamp(dc->req_ns[i], FQ_DEPTH_REQ_NS_MAX);
		work += fq_depth_clamp(p->w.bytes[i], FQ_DEPTH_BYTES_MAX) *
			fq_depth_clamp(dc->byte_price[i], FQ_DEPTH_BYTE_PRICE_MAX) >> 16;
	}
	return div64_u64(fq_depth_clamp(work, FQ_DEPTH_WORK_MAX) << 24, p->el);
}

static void fq_depth_open(struct fq_depth *dc, u64 now_ns, u64 full_ns)
{
	dc->cur.start_ns = now_ns;
	dc->cur.n = 0;
	dc->cur.w = (struct fq_depth_work){ };
	dc->cur.lat_sum = 0;
	dc->cur.full_start = full_ns;
	dc->cur.unseen = false;
	dc->cur.reserved = false;
}

static void fq_depth_set(struct fq_depth *dc, u32 depth)
{
	if (depth == dc->depth)
		return;
	/* the requests in flight now were sent under the old limit */
	dc->skip = depth > dc->depth ? depth : dc->depth;
	dc->depth = depth;
	dc->changes++;
	dc->at_n = 0;
}

/*
 * Add the epoch @p (@reserved: fq_depth_reserved()) to the sum of the
 * epochs at its depth (dc->at), and its kind to dc->at_kinds.  While
 * held, a sum is of epochs with a reserve or of epochs without: slots
 * kept idle lower the rate, and a probe upward would otherwise be
 * compared with a rate the reserve held down and look like a gain: a
 * two-server device would climb to 5 while a light reader is boosted
 * (unit case reserved_mixed).  A move is kept up only between sums of
 * one kind, the same (fq_depth_judge()).
 */
static void fq_depth_sum(struct fq_depth *dc, const struct fq_depth_point *p,
			 bool reserved)
{
	struct fq_depth_point *a = &dc->at;
	u8 kind = reserved ? FQ_DEPTH_K_RES : FQ_DEPTH_K_FREE;
	int i;

	if (!dc->at_n || a->depth != p->depth ||
	    (!dc->moved && dc->at_kinds != kind)) {
		*a = *p;
		dc->at_n = 1;
		dc->at_kinds = kind;
		return;
	}
	dc->at_kinds |= kind;
	if (dc->at_n == FQ_DEPTH_SUM_MAX) {
		/* the oldest fades: keep (MAX - 1) / MAX of the sums */
		for (i = 0; i < 2; i++) {
			a->w.n[i] -= a->w.n[i] / FQ_DEPTH_SUM_MAX;
			a->w.bytes[i] -= a->w.bytes[i] / FQ_DEPTH_SUM_MAX;
		}
		a->el -= a->el / FQ_DEPTH_SUM_MAX;
	} else {
		dc->at_n++;
	}
	for (i = 0; i < 2; i++) {
		a->w.n[i] += p->w.n[i];
		a->w.bytes[i] += p->w.bytes[i];
	}
	a->el += p->el;
	a->lat = p->lat;
	a->rate = fq_depth_rate(dc, a);
}

/* The square root of @v, rounded down. */
static u64 fq_depth_isqrt(u64 v)
{
	u64 r = 0, bit = 1ull << 62;

	while (bit > v)
		bit >>= 2;
	for (; bit; bit >>= 2) {
		if (v >= r + bit) {
			v -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
	}
	return r;
}

/*
 * The smallest relative gain [1/1024] two sums of @a and @b epochs can
 * show: 1/64, or twice the noise of single epochs (dc->noise) times
 * sqrt((1/a + 1/b) / 2): a sum's noise falls as the square root of its
 * count.  Kind: device, the bar follows the noise measured on the
 * device.  The factor 2, kind: family; at 1, 225 cases fail (103
 * start-ups), at 4, 227 (seq-rand and readers-writer worse), against 210.
 * The floor of 1/64, kind: family; at 1/128, 207 fail, within its noise.
 */
static u32 fq_depth_thr_sums(const struct fq_depth *dc, u32 a, u32 b)
{
	u64 scale, thr;

	a = a ? a : 1;
	b = b ? b : 1;
	scale = fq_depth_isqrt(div64_u64((u64)(a + b) << 20, 2ull * a * b));
	thr = 2ull * dc->noise * scale >> 10;
	return thr > 1024 / 64 ? (u32)thr : 1024 / 64;
}

/*
 * A step must be large enough that the gain it has to show stands out of
 * the noise: step / from * gain_frac >= threshold.
 */
static u32 fq_depth_min_step(const struct fq_depth *dc, u32 from)
{
	u64 step = div_u64((u64)from *
			   fq_depth_thr_sums(dc, FQ_DEPTH_SUM_MAX,
					     FQ_DEPTH_TRIAL_MAX),
			   dc->gain_frac);

	return step > 1 ? (u32)step : 1;
}

/*
 * @p (a sum of @n epochs, of the kinds dc->at holds) is what the next move
 * is judged against.
 */
static void fq_depth_ref(struct fq_depth *dc, const struct fq_depth_point *p,
			 u32 n)
{
	dc->prev = *p;
	dc->prev_n = n;
	dc->prev_kinds = dc->at_kinds;
}

/* Go to prev.depth + dir * step; false when the bounds leave no room. */
static bool fq_depth_try(struct fq_depth *dc)
{
	u32 from = dc->prev.depth, to, step;
	u32 lo = dc->depth_min;

	if (dc->cur.reserved && dc->known_min > lo)
		lo = dc->known_min;
	if (dc->dir < 0 && from <= lo)
		return false;

	step = fq_depth_min_step(dc, from);
	if (step < dc->step)
		step = dc->step;
	if (dc->dir > 0)
		to = dc->depth_max - from > step ? from + step : dc->depth_max;
	else
		to = from - lo > step ? from - step : lo;
	if (to == from)
		return false;
	dc->moved = true;
	fq_depth_set(dc, to);
	return true;
}

/* Stay at prev.depth; the next saturated epoch becomes the reference. */
static void fq_depth_hold(struct fq_depth *dc)
{
	dc->dir = 0;
	dc->moved = false;
	dc->have_ref = false;
	dc->held = 0;
	/*
	 * A search for lost capacity that found none: the latency is the
	 * device's own now (slower requests, not a queue); learn it again.
	 */
	if (dc->trig_depth && dc->prev.depth >= dc->trig_depth)
		dc->lat_min = 0;
	dc->trig_depth = 0;
	dc->hold_step = fq_depth_min_step(dc, dc->prev.depth);
	fq_depth_set(dc, dc->prev.depth);
	/* the epochs that measured prev.depth go on counting */
	dc->at = dc->prev;
	dc->at_n = dc->prev_n;
	dc->at_kinds = dc->prev_kinds;
}

/*
 * The move from prev.depth did not pay (or the bounds forbid it): retry
 * with step 1, then the other direction, then hold.
 */
static void fq_depth_reject(struct fq_depth *dc)
{
	for (;;) {
		if (dc->step > 1) {
			dc->step = 1;
		} else {
			if (dc->dir > 0)
				dc->tried_up = true;
			else
				dc->tried_down = true;
			if (dc->tried_up && dc->tried_down) {
				fq_depth_hold(dc);
				return;
			}
			dc->dir = -dc->dir;
		}
		if (fq_depth_try(dc))
			return;
	}
}

/* @p (a sum of @n epochs) is the new reference; go on, twice as far. */
static void fq_depth_accept(struct fq_depth *dc,
			    const struct fq_depth_point *p, u32 n)
{
	fq_depth_ref(dc, p, n);
	dc->tried_up = false;
	dc->tried_down = false;
	if (dc->step < FQ_DEPTH_STEP_MAX)
		dc->step *= 2;
	if (!fq_depth_try(dc))
		fq_depth_reject(dc);
}

/* Start a search from @p (a sum of @n epochs) in direction @dir, step 1. */
static void fq_depth_search(struct fq_depth *dc,
			    const struct fq_depth_point *p, u32 n, s32 dir)
{
	fq_depth_ref(dc, p, n);
	dc->dir = dir;
	dc->step = 1;
	dc->held = 0;
	dc->tried_up = false;
	dc->tried_down = dir > 0;	/* a failed probe up means hold */
	if (!fq_depth_try(dc))
		fq_depth_reject(dc);
}

enum fq_depth_verdict {
	FQ_DEPTH_LOSS,		/* it did not pay */
	FQ_DEPTH_UNSURE,	/* the noise could hide either answer */
	FQ_DEPTH_GAIN,		/* it paid */
};

/*
 * Did the depths from @lo (a sum of @nl epochs) to @hi (@nh) buy at least
 * @frac of the throughput they would in the linear region, and more than
 * the noise?  rate(hi) / rate(lo) - 1 >= frac * (depth(hi) / depth(lo) -
 * 1), in 1/1024ths.  Unsure when the gain falls short of either bar by
 * no more than the noise: more epochs would tell.  Once no more are to
 * come (@last), the sums' gain is taken as it is, if it exceeds 1/64.
 */
static enum fq_depth_verdict
fq_depth_verdict(const struct fq_depth *dc, const struct fq_depth_point *lo,
		 u32 nl, const struct fq_depth_point *hi, u32 nh, u32 frac,
		 bool last)
{
	u64 r, gain, bar = (u64)frac * (hi->depth - lo->depth);
	u32 thr;

	if (!lo->rate)
		return hi->rate ? FQ_DEPTH_GAIN : FQ_DEPTH_LOSS;
	if (hi->rate <= lo->rate)
		return FQ_DEPTH_LOSS;
	r = div64_u64(hi->rate * 1024, lo->rate);
	/* kind: arithmetic, a gain of 1024x and more counts as that */
	gain = r > 1024 + (1u << 20) ? 1u << 20 : r - 1024;
	thr = last ? 1024 / 64 : fq_depth_thr_sums(dc, nl, nh);
	if (gain >= thr && gain * lo->depth >= bar)
		return FQ_DEPTH_GAIN;
	if (!last && (gain + thr) * lo->depth >= bar)
		return FQ_DEPTH_UNSURE;
	return FQ_DEPTH_LOSS;
}

/*
 * Two epochs in a row at one depth: how far apart their rates were.
 * Kind: device, the rates measured; averaged 3/4 old (family: at 7/8
 * old, 202 cases fail against 210, within its noise), a change capped
 * at one (arithmetic).
 */
static void fq_depth_noise(struct fq_depth *dc, const struct fq_depth_point *p)
{
	u64 a = p->rate, b = dc->last.rate, dev;

	if (dc->last.depth == p->depth && b) {
		dev = div64_u64((a > b ? a - b : b - a) * 1024, b);
		if (dev > 1024)
			dev = 1024;
		dc->noise = (u32)((3ull * dc->noise + dev) / 4);
	}
	dc->last = *p;
}

static void fq_depth_judge(struct fq_depth *dc, u64 now_ns)
{
	struct fq_depth_point p;
	u64 el = now_ns - dc->cur.start_ns;
	u64 full = dc->last_full > dc->cur.full_start ?
		   dc->last_full - dc->cur.full_start : 0;
	bool slow;

	if (dc->cur.unseen) {
		/*
		 * Work went by unreported: the rate would miss it.  Nothing
		 * learned, and a move just made stays to be judged by the
		 * next epoch that sees everything: the work goes by while the
		 * depth had room, but also drains below for a while after the
		 * depth filled up again, when this epoch may well have been
		 * saturated; held as an unsaturated epoch holds it, a move up
		 * would stay unjudged far above the device's concurrency
		 * (unit case unseen_move).
		 */
		dc->unseen_epochs++;
		return;
	}
	if (full * 4 < el * 3) {
		/*
		 * The demand, not the depth, set the pace: nothing learned.
		 * Saturated: full at least 3/4 of the epoch.  Kind: family; at 1/2
		 * not one of its 1,200 verdicts changes; its epochs are full
		 * nearly throughout or far from it.
		 */
		dc->idle_epochs++;
		if (dc->moved) {
			if (dc->depth < dc->prev.depth) {
				dc->prev.depth = dc->depth;
				dc->prev_n = 0;	/* not its epochs */
			}
			fq_depth_hold(dc);
		}
		return;
	}
	p.depth = dc->depth;
	p.w = dc->cur.w;
	p.el = el ? el : 1;
	p.rate = fq_depth_rate(dc, &p);
	/* the epochs it is compared with, at the same prices */
	dc->prev.rate = fq_depth_rate(dc, &dc->prev);
	dc->at.rate = fq_depth_rate(dc, &dc->at);
	dc->last.rate = fq_depth_rate(dc, &dc->last);
	dc->ref.rate = fq_depth_rate(dc, &dc->ref);
	p.lat = div64_u64(dc->cur.lat_sum, dc->cur.n);
	dc->epochs++;
	if (dc->cur.reserved)
		dc->reserved_epochs++;
	if (!dc->lat_min || p.lat < dc->lat_min)
		dc->lat_min = p.lat;

	/*
	 * Kind: device, the latency floor is the device's own, measured; "slow"
	 * is a quarter above it.  Family: at a half above, 204 cases fail
	 * against 210, within its noise.
	 */
	slow = dc->lat_min && p.lat > dc->lat_min + dc->lat_min / 4 &&
	       p.lat >= dc->lat_floor_ns;
	if (!dc->moved && !slow)
		fq_depth_noise(dc, &p);	/* a latency jump is not noise */
	else
		dc->last = p;
	fq_depth_sum(dc, &p, dc->cur.reserved);
	if (!dc->have_prev) {
		/* a few epochs at the seed (noise figures), then search */
		fq_depth_ref(dc, &dc->at, dc->at_n);
		if (dc->epochs < FQ_DEPTH_SEED_EPOCHS)
			return;
		/*
		 * then halve: a halving must cost a quarter of the rate to be
		 * undone, which no epoch's noise does; small steps come later.
		 * Kind: family; starting with a step of 1 instead, 208 cases fail
		 * against 210, within its noise (the seed is at most
		 * FQ_SCHED_DEPTH_SEED, so the halving is a step of 1 or 2).
		 */
		dc->have_prev = true;
		dc->dir = -1;
		dc->step = p.depth / 2 ? p.depth / 2 : 1;
		if (!fq_depth_try(dc))
			fq_depth_reject(dc);
		return;
	}
	if (dc->moved) {
		/* the epochs at the new depth (at) against those at prev */
		bool up = p.depth > dc->prev.depth;
		const struct fq_depth_point *lo = up ? &dc->prev : &dc->at;
		const struct fq_depth_point *hi = up ? &dc->at : &dc->prev;
		u32 nl = up ? dc->prev_n : dc->at_n;
		u32 nh = up ? dc->at_n : dc->prev_n;
		/* sums of one kind each, and the same: rates to compare */
		bool same = dc->at_kinds == dc->prev_kinds &&
			    dc->at_kinds != (FQ_DEPTH_K_FREE | FQ_DEPTH_K_RES);
		enum fq_depth_verdict v;
		bool keep;

		v = fq_depth_verdict(dc, lo, nl, hi, nh, dc->gain_frac, false);
		if (v == FQ_DEPTH_UNSURE) {
			if (dc->at_n < FQ_DEPTH_TRIAL_MAX && (!up || same))
				return;	/* one more epoch at this depth */
			v = fq_depth_verdict(dc, lo, nl, hi, nh,
					     dc->gain_frac, true);
		}
		dc->moved = false;
		if (up)
			keep = same && v == FQ_DEPTH_GAIN;
		else
			keep = v != FQ_DEPTH_GAIN;
		if (!dc->cur.reserved && !up) {
			/*
			 * below prev.depth the throughput is known to fall: by
			 * at least half of linear (a server idled), not by
			 * what a throttle's noise does to one epoch.  Kind: fitted:
			 * known_min and its bar of a half (512) were chosen
			 * for start-up on a two-server disk (unit case
			 * reserved_floor).  Family: without the floor 3 of
			 * its 1,200 verdicts change, with a bar of a quarter
			 * none: it neither needs nor refutes it.
			 */
			if (!keep && dc->prev.depth > dc->known_min &&
			    fq_depth_verdict(dc, lo, nl, hi, nh, 512, false) ==
			    FQ_DEPTH_GAIN)
				dc->known_min = dc->prev.depth;
			else if (keep && p.depth < dc->known_min)
				dc->known_min = 0;
		}
		if (keep && up && dc->cur.reserved) {
			/*
			 * A reserve's gain is one step's: no further.  Kind: fitted
			 * on start-up beside streamers (SIM-DEVICES.md STARTUP,
			 * 6 ms think).  Family: letting such a move double as
			 * others do makes 7 more cases fail (sync-deep,
			 * qd-ladder) and none pass; its depth=auto failures
			 * after a boost (FAMILY, "Why they fail") trace to
			 * the same slow climb.
			 */
			fq_depth_ref(dc, &dc->at, dc->at_n);
			fq_depth_hold(dc);
			return;
		}
		if (keep) {
			fq_depth_accept(dc, &dc->at, dc->at_n);
			return;
		}
		if (dc->cur.reserved && !same) {
			/* no step up from here: down, or hold */
			dc->tried_up = true;
			if (dc->dir > 0)
				dc->step = 1;
		}
		fq_depth_reject(dc);
		return;
	}
	/* held */
	if (!dc->have_ref) {
		dc->ref = p;
		dc->have_ref = true;
		dc->held = 0;
		return;
	}
	dc->held++;
	if (slow && p.rate <= dc->ref.rate + dc->ref.rate / 8) {
		/*
		 * Latency grew, throughput did not (by an eighth): the device
		 * lost capacity.  Search down from the second such epoch (the
		 * first may be half before the change: no reference).
		 * Kind: family; with a quarter for the eighth 215 cases fail, from
		 * the fourth epoch 202, against 210: within its noise.
		 */
		if (++dc->slow_epochs < 2)
			return;
		dc->slow_epochs = 0;
		dc->trig_depth = p.depth;
		if (!dc->cur.reserved)
			dc->known_min = 0;	/* the device changed */
		fq_depth_search(dc, &p, 1, -1);
		return;
	}
	dc->slow_epochs = 0;
	if (fq_depth_min_step(dc, p.depth) * 2 <= dc->hold_step) {
		/*
		 * Held after coarse steps; the noise has settled: refine.
		 * Kind: family; refining only once the step has fallen to
		 * a quarter, 207 cases fail against 210, within its noise.
		 */
		dc->hold_step = fq_depth_min_step(dc, p.depth);
		fq_depth_search(dc, &dc->at, dc->at_n, -1);
		return;
	}
	if (dc->held >= dc->probe_epochs && dc->depth < dc->depth_max)
		fq_depth_search(dc, &dc->at, dc->at_n, 1);
}

/*
 * Completions per epoch, at least: enough for a few per slot, and more on
 * a noisy device (a rate's error shrinks as the square root of the count:
 * noise 1/16 -> 2x, 1/4 -> 5x).  Kind: device, it follows the depth and the
 * noise measured; the 8 + 2 per slot, family: at 4 + 1, 222
 * cases fail against 210 (33 more, 21 fewer), at the edge of its noise.
 */
static u64 fq_depth_epoch_n(const struct fq_depth *dc)
{
	return (8 + 2ull * dc->depth) * (1 + dc->noise / 64);
}

void fq_depth_init(struct fq_depth *dc, u32 seed, u32 depth_max)
{
	*dc = (struct fq_depth){ .depth_min = 1 };
	dc->depth_max = depth_max ? depth_max : 1;
	dc->epoch_ns = FQ_DEPTH_EPOCH_NS;
	dc->probe_epochs = FQ_DEPTH_PROBE_EPOCHS;
	dc->gain_frac = FQ_DEPTH_GAIN_FRAC;
	/* FQ_DEPTH_NOISE_PRIOR until epochs at one depth show otherwise */
	dc->noise = FQ_DEPTH_NOISE_PRIOR;
	/*
	 * until the caller prices work, a byte is worth one ns.  Kind:
	 * arithmetic, the unit only: both sides of a comparison are priced
	 * alike, so any price per byte gives the same verdicts
	 */
	dc->byte_price[0] = 1 << 16;
	dc->byte_price[1] = 1 << 16;
	dc->depth = seed < 1 ? 1 : seed > dc->depth_max ? dc->depth_max : seed;
	dc->prev.depth = dc->depth;
	dc->dir = 1;
	dc->step = 1;
	/* the first completions are a warm-up: no epoch is open yet */
	dc->skip = dc->depth;
}

void fq_depth_unseen(struct fq_depth *dc)
{
	dc->cur.unseen = true;
}

void fq_depth_reserved(struct fq_depth *dc)
{
	dc->cur.reserved = true;
}

void fq_depth_price(struct fq_depth *dc, bool write, u64 req_ns,
		    u64 byte_price)
{
	dc->req_ns[write] = req_ns;
	dc->byte_price[write] = byte_price;
}

u32 fq_depth_complete(struct fq_depth *dc, u64 now_ns, u64 lat_ns, u32 bytes,
		      bool write, u64 full_ns)
{
	if (dc->closing && now_ns != dc->last_ns) {
		/*
		 * The epoch ended with the completions at last_ns: a burst of
		 * completions at one time is never split between epochs
		 */
		dc->closing = false;
		fq_depth_judge(dc, dc->last_ns);
		if (!dc->skip)
			fq_depth_open(dc, dc->last_ns, dc->last_full);
	}
	if (dc->skip) {
		if (--dc->skip == 0)
			fq_depth_open(dc, now_ns, full_ns);
		return dc->depth;
	}
	/* the rest of the burst that opened the epoch belongs before it */
	if (now_ns == dc->cur.start_ns)
		return dc->depth;
	dc->cur.n++;
	dc->cur.w.n[write]++;
	dc->cur.w.bytes[write] += bytes;
	dc->cur.lat_sum += lat_ns;
	dc->last_ns = now_ns;
	dc->last_full = full_ns;
	if (!dc->closing && now_ns - dc->cur.start_ns >= dc->epoch_ns &&
	    dc->cur.n >= fq_depth_epoch_n(dc))
		dc->closing = true;
	return dc->depth;
}
