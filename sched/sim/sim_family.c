// SPDX-License-Identifier: GPL-2.0
/*
 * sim_family.c - the device family: the core at its defaults on random
 * devices (sim_dev.h's MIXED model, every feature drawn from a seed), the
 * standard mixes on each, and the property each case must hold.
 *
 * For each mix on each device:
 *
 *   s_i    flow i's requests/s in the mix over its requests/s alone on
 *          the device (plain FIFO, no depth limit: what the device gives
 *          it with nothing else there);
 *   G      min over the flows of s_i / share_i, share_i = w_i / sum w
 *          (BENCH's G = min s x N, with weights);
 *   work   sum over the flows of requests/s over the requests/s of that
 *          kind of request (size, sequential or not, read or write) alone
 *          at queue depth 64: the fraction of the device's capacity used,
 *          each request priced by the device itself, so that 1 MiB and
 *          4 KiB requests, a throttle's IOPS and bytes, seeks and a write
 *          cache count as the device counts them;
 *   total  fairq's work over the best work of a plain FIFO at a fixed
 *          depth of 1, 2, 4, ..., 64 (the ceiling: the best a depth alone
 *          can do, without scheduling);
 *   start-up   the time a reader takes for FAM_FILES small files, one at
 *          a time, beside streaming readers, over its time alone.
 *
 * The property: G >= FAM_G_MIN, total >= FAM_TOTAL_MIN, start-up <=
 * FAM_START_MAX.  fairq runs at the core's defaults (cfq, depth=auto
 * seeded with the device's queue depth, fairness=time, the boost on),
 * measured in steady state: its window begins once FAM_WARM_REQS
 * requests have completed in a row with no flow boosted, and every run
 * starts with the device as a sustained load leaves it (its bucket
 * empty, its write cache half full).  Every figure is a pure function of
 * the seed and the device's number.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sim.h"
#include "sim_family.h"

/* the property (SIM-DEVICES.md, "FAMILY") */
#define FAM_G_MIN	0.90
#define FAM_TOTAL_MIN	0.95
#define FAM_START_MAX	1.50

enum {
	FAM_MAX_FLOWS = 11,
	FAM_NMIX = 6,
	FAM_REQS = 300,		/* a window: the least flow's completions at its share */
	FAM_MAX_REQS = 60000,	/* a window: completions of the fastest flow alone, at most */
	FAM_WARM_REQS = 20000,	/* fairq's warm-up: completions, at least */
	FAM_SAT_DEPTH = 64,	/* the depth that prices a kind of request */
	FAM_FILES = 200,	/* start-up: the reader's requests */
	FAM_START_CAP = 10,	/* start-up: a run ends at this many times alone */
	FAM_NFIFO = 7,		/* FIFO depths 1, 2, 4, ..., 64 */
	FAM_DEPTH_MAX = 256,	/* depth_max's default */
	FAM_SETS = 16,		/* --set pairs */
};

enum { FAM_FAIL_G = 1, FAM_FAIL_TOTAL = 2, FAM_FAIL_START = 4 };

struct fam_flow {
	u32 depth;		/* requests outstanding */
	u32 bytes;		/* larger than the device takes: split, depth x parts */
	bool seq;		/* sequential */
	bool write;		/* an async write (writeback); else a sync read */
	u32 think_us;		/* after each completion */
	bool prio;		/* BE at level, else no ioprio (weight 100) */
	u8 level;
};

struct fam_mix {
	const char *name;
	const char *what;
	int n;
	bool startup;		/* f[0] is the start-up reader, the rest its load */
	struct fam_flow f[FAM_MAX_FLOWS];
};

#define FAM_RAND(d)	{ .depth = (d), .bytes = 4096 }
#define FAM_STREAM	{ .depth = 8, .bytes = 128 << 10, .seq = true }
#define FAM_BE(l)	{ .depth = 32, .bytes = 4096, .prio = true, .level = (l) }

static const struct fam_mix fam_mixes[FAM_NMIX] = {
	{ "sync-deep", "a random 4 KiB reader at QD1 (20 us think) beside three at QD32",
	  4, false, { { .depth = 1, .bytes = 4096, .think_us = 20 },
		      FAM_RAND(32), FAM_RAND(32), FAM_RAND(32) } },
	{ "seq-rand", "random 4 KiB reads at QD16 beside sequential 1 MiB reads at QD4",
	  2, false, { FAM_RAND(16), { .depth = 4, .bytes = 1 << 20, .seq = true } } },
	{ "qd-ladder", "random 4 KiB readers at QD 1, 2, 4, 8, 16, 32",
	  6, false, { FAM_RAND(1), FAM_RAND(2), FAM_RAND(4), FAM_RAND(8),
		      FAM_RAND(16), FAM_RAND(32) } },
	{ "weights", "random 4 KiB readers at QD32, BE levels 0, 4, 7 (weights 200, 100, 25)",
	  3, false, { FAM_BE(0), FAM_BE(4), FAM_BE(7) } },
	{ "startup", "200 small files (4-16 KiB, random) read one at a time, 100 us think, "
	  "beside 10 sequential 128 KiB readers at QD8",
	  11, true, { { .depth = 1, .bytes = 4096, .think_us = 100 },
		      FAM_STREAM, FAM_STREAM, FAM_STREAM, FAM_STREAM, FAM_STREAM,
		      FAM_STREAM, FAM_STREAM, FAM_STREAM, FAM_STREAM, FAM_STREAM } },
	{ "readers-writer", "two random 4 KiB readers at QD4 beside a sequential 128 KiB "
	  "async writer at QD32",
	  3, false, { FAM_RAND(4), FAM_RAND(4),
		      { .depth = 32, .bytes = 128 << 10, .seq = true, .write = true } } },
};

struct fam_dev {
	u32 k;			/* its number in the family */
	struct sim_dev m;	/* SIM_DEV_MIXED */
	u32 qdepth;		/* requests it takes (C..): seeds depth=auto */
	u32 max_bytes;		/* the largest request it takes */
	u64 transit_ns;		/* each way between fairq and the device */
};

/* One case's figures (shared memory between the workers and the parent). */
struct fam_res {
	bool done;
	u8 fail;		/* FAM_FAIL_* */
	bool boost_left;	/* the window began with a flow still boosted */
	u8 holds_with;		/* --why: 1 << FAM_VAR_*, the variants it holds with */
	double s[FAM_MAX_FLOWS];
	double g, work, fifo_work, total;
	u32 fifo_depth;		/* the best FIFO's */
	double alone_ms, loaded_ms, startup;
	double depth_mean;
	u32 depth_lo, depth_hi;
	double from_ms, window_ms;	/* fairq's measuring window */
	/*
	 * fairq's cost model at the end: a 4 KiB read, the mix's largest
	 * request (a write if the mix writes) [us]
	 */
	double cost_small, cost_large;
	u32 large;			/* that request's size */
	bool large_write;
	u64 stalls;			/* the write cache's flush stalls in fairq's run */
};

struct fam_ctx {
	struct sim sm;
	u64 seed;
	const char *set[2 * FAM_SETS + 1];	/* --set pairs, NULL-ended */
	bool trace;
	bool why;		/* a failing case again with each rule changed */
};

/* ---- the devices */

static u64 fam_next(u64 *x)
{
	u64 z = (*x += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static double fam_u(u64 *x)
{
	return (double)(fam_next(x) >> 11) / 9007199254740992.0;
}

/* log-uniform in [lo, hi) */
static double fam_log(u64 *x, double lo, double hi)
{
	return lo * exp(log(hi / lo) * fam_u(x));
}

/*
 * The device's time for one request of @bytes, servers busy [ns]: its
 * cost and, when random on a seek device, the mean positioning (random
 * sectors over the span: E sqrt|u - v| = 8/15, half a revolution).
 */
static double fam_svc_ns(const struct fam_dev *d, u32 bytes, bool seq, bool write)
{
	const struct sim_dev *m = &d->m;
	double c = (double)m->req_ns + (double)bytes * (double)m->byte_ps / 1000;

	if (write && m->cache_bytes)
		return c / 8;
	if (m->seek_ns && !seq)
		c += (double)m->seek_ns * (0.1 + 0.9 * 8.0 / 15.0) +
		     (double)m->rot_ns / 2;
	return c;
}

/*
 * Device @k of the family of @seed.  Every draw is made whatever the
 * earlier ones gave, so a feature's parameters do not depend on whether
 * another feature is on.
 */
static void fam_device(u64 seed, u32 k, struct fam_dev *d)
{
	u64 x = seed * 0xD1B54A32D192ED03ull + k;
	struct sim_dev *m = &d->m;
	double c, qd, req, per_req, rate, jit, seek, rot, seek_on, knee, knee_on;
	double iops_frac, cross, burst, bill, thr_on, cache_sz, drain, cache_on;
	double maxb, transit, transit_on, raw;

	fam_next(&x);
	c = fam_log(&x, 1, 65);
	qd = fam_u(&x);
	req = fam_log(&x, 50e3, 8e6);
	per_req = fam_u(&x);
	rate = fam_log(&x, 80e6, 4e9);
	jit = fam_u(&x);
	seek_on = fam_u(&x);
	seek = fam_log(&x, 1e6, 12e6);
	rot = fam_u(&x);
	knee_on = fam_u(&x);
	knee = fam_log(&x, 0.005, 0.1);
	thr_on = fam_u(&x);
	iops_frac = fam_log(&x, 0.1, 0.8);
	cross = fam_log(&x, 8192, 1 << 20);
	burst = fam_u(&x);
	bill = fam_u(&x);
	cache_on = fam_u(&x);
	cache_sz = fam_u(&x);
	drain = fam_u(&x);
	maxb = fam_u(&x);
	transit_on = fam_u(&x);
	transit = fam_log(&x, 20e3, 1e6);

	memset(d, 0, sizeof(*d));
	d->k = k;
	m->kind = SIM_DEV_MIXED;
	m->servers = c >= 64 ? 64 : (u32)c;
	/* a queue of 2, 4 or 8 x its servers */
	d->qdepth = m->servers << (1 + (u32)(qd * 3));
	if (d->qdepth > FAM_DEPTH_MAX)
		d->qdepth = FAM_DEPTH_MAX;
	/* every run starts with the device as a sustained load leaves it */
	m->steady_start = true;
	m->req_ns = (u64)req;
	/* one in six costs the same whatever the size (null_blk) */
	m->byte_ps = per_req < 1.0 / 6 ? 0 : (u64)(1e12 / rate);
	m->jitter_pct = (u32)(jit * 11);
	if (seek_on < 0.25) {
		m->seek_ns = (u64)seek;
		m->rot_ns = (u64)(rot * 8.4e6);
		m->span = 1ull << 30;
	}
	if (knee_on < 0.25)
		m->qd_ns = (u64)((double)m->req_ns * knee);
	if (thr_on < 0.5) {
		/*
		 * 10-80 % of its 4 KiB IOPS; the byte limit binds from a size
		 * of 8 KiB - 1 MiB on
		 */
		raw = m->servers * 1e9 / fam_svc_ns(d, 4096, false, false);
		m->iops = (u64)(raw * iops_frac) + 1;
		m->bps = (u64)((double)m->iops * cross);
		m->burst_div = burst < 1.0 / 3 ? 2 : burst < 2.0 / 3 ? 10 : 100;
		m->bill_after = bill < 1.0 / 3;
	}
	if (cache_on < 1.0 / 3) {
		/* 4-256 MiB, destaged at 20-100 % of its sequential bandwidth */
		m->cache_bytes = (4ull << 20) << (u32)(cache_sz * 7);
		raw = m->servers * (128 << 10) * 1e9 /
		      ((double)m->req_ns + (128 << 10) * (double)m->byte_ps / 1000);
		if (m->bps && (double)m->bps < raw)
			raw = (double)m->bps;
		m->drain_bps = (u64)(raw * (0.2 + 0.8 * drain)) + 1;
	}
	d->max_bytes = (128u << 10) << (u32)(maxb * 4);
	if (transit_on < 0.2)
		d->transit_ns = (u64)transit;
}

static void fam_dev_name(const struct fam_dev *d, char *buf, size_t len)
{
	char m[256];
	int n;

	n = snprintf(buf, len, "%s; queue %u, largest request %u KiB",
		     sim_dev_name(&d->m, m, sizeof(m)), d->qdepth, d->max_bytes >> 10);
	if (d->transit_ns && n < (int)len)
		snprintf(buf + n, len - n, ", %.0f us each way", (double)d->transit_ns / 1e3);
}

/* ---- the mixes */

static u32 fam_bytes(const struct fam_dev *d, const struct fam_flow *f)
{
	return f->bytes < d->max_bytes ? f->bytes : d->max_bytes;
}

static double fam_share(const struct fam_mix *mx, int i)
{
	double w = 0;
	int j;

	for (j = 0; j < mx->n; j++)
		w += mx->f[j].prio ? 8 - mx->f[j].level : 4;
	return (mx->f[i].prio ? 8 - mx->f[i].level : 4) / w;
}

/* @f's requests/s alone, estimated from the model (it sizes windows only) */
static double fam_rate_est(const struct fam_dev *d, const struct fam_flow *f,
			   u32 depth)
{
	u32 bytes = fam_bytes(d, f);
	double svc = fam_svc_ns(d, bytes, f->seq, f->write);
	double lat = svc + 2.0 * (double)d->transit_ns + f->think_us * 1e3;
	double conc = depth < d->m.servers ? depth : d->m.servers;
	double r = fmin(depth / lat, conc / svc) * 1e9;

	if (d->m.iops)
		r = fmin(r, (double)d->m.iops);
	if (d->m.bps)
		r = fmin(r, (double)d->m.bps / bytes);
	if (f->write && d->m.cache_bytes)
		r = fmin(r, (double)d->m.drain_bps / bytes);
	return r;
}

static u32 fam_depth(const struct fam_dev *d, const struct fam_flow *f)
{
	return f->depth * (f->bytes / fam_bytes(d, f));
}

/*
 * The measuring window [ns]: long enough for every flow to complete
 * FAM_REQS requests at its share, at most FAM_MAX_REQS completions of the
 * fastest flow alone, at least 20 of the slowest request's latencies.
 */
static u64 fam_window(const struct fam_dev *d, const struct fam_mix *mx)
{
	double w = 0, cap = 1e30, lo = 0, r, lat;
	int i;

	for (i = 0; i < mx->n; i++) {
		const struct fam_flow *f = &mx->f[i];

		r = fam_rate_est(d, f, fam_depth(d, f));
		w = fmax(w, FAM_REQS / (r * fam_share(mx, i)));
		cap = fmin(cap, FAM_MAX_REQS / r);
		lat = fam_svc_ns(d, fam_bytes(d, f), f->seq, f->write) +
		      2.0 * (double)d->transit_ns;
		lo = fmax(lo, 20 * lat / 1e9);
	}
	w = fmax(fmin(w, cap), lo);
	return (u64)(fmax(w, 1e-3) * 1e9);
}

/*
 * The flows of @mx on @sm: every flow, or only flow @only; @deep > 0
 * gives it that depth and no think time (the request's price).
 */
static void fam_flows(struct sim *sm, const struct fam_dev *d,
		      const struct fam_mix *mx, int only, u32 deep)
{
	const struct fam_flow *f;
	struct sim_flow *sf;
	int i, k = 0;

	sim_flows(sm, only < 0 ? mx->n : 1);
	for (i = 0; i < mx->n; i++) {
		if (only >= 0 && i != only)
			continue;
		f = &mx->f[i];
		sim_flow(sm, k, (int)(deep ? deep : fam_depth(d, f)), fam_bytes(d, f),
			 f->write ? FQ_REQ_WRITE : FQ_REQ_SYNC,
			 f->prio ? FQ_IOPRIO(FQ_CLASS_BE, f->level) : 0,
			 deep ? 0 : f->think_us * US);
		sf = &sm->f[k++];
		sf->sequential = f->seq;
		if (mx->startup && i == 0 && !deep) {
			sf->limit = FAM_FILES;
			sf->vary_size = true;
		}
	}
}

static bool fam_same(const struct fam_flow *a, const struct fam_flow *b)
{
	return a->depth == b->depth && a->bytes == b->bytes && a->seq == b->seq &&
	       a->write == b->write && a->think_us == b->think_us;
}

static bool fam_same_kind(const struct fam_flow *a, const struct fam_flow *b)
{
	return a->bytes == b->bytes && a->seq == b->seq && a->write == b->write;
}

static double fam_rate(const struct sim *sm, int i)
{
	return (double)sm->f[i].done_reqs / window_s(sm);
}

/*
 * How long the device takes to reach its steady state under @mx [ns]: it
 * starts with its throttle's bucket empty and its write cache half full
 * (sim_dev.steady_start); when the mix writes, the cache's size at its
 * destage rate.  Every run of a case measures after at least this long.
 */
static u64 fam_transient(const struct fam_dev *d, const struct fam_mix *mx)
{
	const struct sim_dev *m = &d->m;
	double t = 0;
	int i;

	for (i = 0; i < mx->n; i++)
		if (mx->f[i].write && m->cache_bytes)
			t = fmax(t, (double)m->cache_bytes / (double)m->drain_bps * 1e9);
	return (u64)t;
}

/* plain FIFO at @depth (4096: no limit), measured after @warm */
static void fam_cfg_fifo(struct dev_cfg *c, const struct fam_dev *d, u32 depth,
			 u64 window, u64 warm)
{
	memset(c, 0, sizeof(*c));
	c->policy = "fifo";
	c->depth = depth;
	c->transit_ns = d->transit_ns;
	c->window_ns = window;
	c->warm_ms = (warm + MS - 1) / MS;
	c->secs_ms = c->warm_ms;
}

/* fairq at the core's defaults, and the --set tunables */
static void fam_cfg_fairq(struct dev_cfg *c, const char *const *set,
			  const struct fam_dev *d, u64 window, u64 warm)
{
	fam_cfg_fifo(c, d, d->qdepth, window, warm);
	/*
	 * and a warm-up in which depth=auto and the cost model settle: a
	 * run starts with the device's queue depth as depth's seed, no cost
	 * model and every flow new, as a device does once
	 */
	c->warm_reqs = FAM_WARM_REQS;
	c->policy = "cfq";
	c->adaptive = true;
	c->depth_max = FAM_DEPTH_MAX;
	c->fairness = "time";
	c->boost_ms = "default";
	c->set = set;
	/* the window waits for the boost (boost_ms) to end, a second more */
	c->secs_ms = c->warm_ms + 4000;
}

/* ---- the trace (--trace): the fairq run of one case, in steps */

static u64 fam_trace_last[FAM_MAX_FLOWS];
static struct fq_stats fam_trace_st;

static void fam_tick(const struct sim *sm, const struct dev_run *dr)
{
	struct fq_stats st;
	int i;

	fq_sched_stats(sm->s, &st);
	printf("| %.1f | %u | %u + %u | %llu | %llu | %llu |",
	       (double)sm->now / 1e6, st.depth_now, dr->dev.nsvc, dr->dev.nq,
	       (unsigned long long)(st.boost_starts - st.boost_end_time -
				    st.boost_end_budget - st.boost_end_kind -
				    st.boost_end_size - st.boost_end_depth),
	       (unsigned long long)(st.idle_waits - fam_trace_st.idle_waits),
	       (unsigned long long)(st.depth_reserved_epochs -
				    fam_trace_st.depth_reserved_epochs));
	for (i = 0; i < sm->nflows && i < FAM_MAX_FLOWS; i++) {
		printf(" %llu", (unsigned long long)(sm->f[i].completed -
						     fam_trace_last[i]));
		fam_trace_last[i] = sm->f[i].completed;
	}
	printf(" |\n");
	fam_trace_st = st;
}

static void fam_trace_begin(struct dev_cfg *c, u64 span_ns)
{
	memset(fam_trace_last, 0, sizeof(fam_trace_last));
	memset(&fam_trace_st, 0, sizeof(fam_trace_st));
	c->tick = fam_tick;
	c->tick_ns = span_ns / 50 ? span_ns / 50 : 1;
	printf("\n| ms | depth | device: in service + queued | boosted flows | idle waits | reserved epochs | completions of each flow |\n");
	printf("|---|---|---|---|---|---|---|\n");
}

/* ---- one case */

/* What a case's fairq runs are compared with, run once per case. */
struct fam_ref {
	u64 window, warm;		/* [ns] */
	double alone[FAM_MAX_FLOWS];	/* requests/s */
	double sat[FAM_MAX_FLOWS];	/* requests/s of the kind at FAM_SAT_DEPTH */
	double alone_ms;		/* start-up */
};

static void fam_steady_ref(struct fam_ctx *ctx, const struct fam_dev *d,
			   const struct fam_mix *mx, struct fam_ref *ref,
			   struct fam_res *res)
{
	u64 window = fam_window(d, mx), warm = fam_transient(d, mx);
	u32 depth, total_depth = 0, prev = 0;
	struct sim *sm = &ctx->sm;
	struct dev_run dr;
	struct dev_cfg c;
	double work;
	int i, j, k;

	if (warm < window / 4)
		warm = window / 4;
	ref->window = window;
	ref->warm = warm;
	for (i = 0; i < mx->n; i++) {
		total_depth += fam_depth(d, &mx->f[i]);
		for (j = 0; j < i && !fam_same(&mx->f[j], &mx->f[i]); j++)
			;
		if (j < i) {
			ref->alone[i] = ref->alone[j];
		} else {
			fam_cfg_fifo(&c, d, 4096, window, warm);
			fam_flows(sm, d, mx, i, 0);
			dev_run(sm, &dr, &d->m, &c, ctx->seed);
			ref->alone[i] = fam_rate(sm, 0);
			sim_reset_results(sm);
		}
		for (j = 0; j < i && !fam_same_kind(&mx->f[j], &mx->f[i]); j++)
			;
		if (j < i) {
			ref->sat[i] = ref->sat[j];
		} else {
			fam_cfg_fifo(&c, d, 4096, window, warm);
			fam_flows(sm, d, mx, i, FAM_SAT_DEPTH);
			dev_run(sm, &dr, &d->m, &c, ctx->seed);
			ref->sat[i] = fam_rate(sm, 0);
			sim_reset_results(sm);
		}
	}
	res->fifo_work = 0;
	for (k = 0; k < FAM_NFIFO; k++) {
		depth = 1u << k;
		/* deeper than every request there is: the same as the last */
		if (prev >= total_depth)
			break;
		prev = depth;
		fam_cfg_fifo(&c, d, depth, window, warm);
		fam_flows(sm, d, mx, -1, 0);
		dev_run(sm, &dr, &d->m, &c, ctx->seed);
		for (i = 0, work = 0; i < mx->n; i++)
			work += ref->sat[i] > 0 ? fam_rate(sm, i) / ref->sat[i] : 0;
		if (work > res->fifo_work) {
			res->fifo_work = work;
			res->fifo_depth = depth;
		}
		sim_reset_results(sm);
	}
}

/* what fairq's run @dr chose: depth, window, cost model */
static void fam_res_run(struct fam_res *res, const struct fam_dev *d,
			const struct fam_mix *mx, const struct dev_run *dr)
{
	const struct fq_stats *st = &dr->st;
	int i, w;

	res->depth_mean = (double)dr->depth_sum / (dr->depth_n ? dr->depth_n : 1);
	res->depth_lo = dr->depth_lo;
	res->depth_hi = dr->depth_hi;
	res->boost_left = dr->boost_left;
	res->from_ms = (double)dr->window_from_ns / 1e6;
	res->stalls = dr->dev.stalls;
	res->large = 4096;
	res->large_write = false;
	for (i = 0; i < mx->n; i++) {
		if (fam_bytes(d, &mx->f[i]) > res->large ||
		    (mx->f[i].write && !res->large_write)) {
			res->large = fam_bytes(d, &mx->f[i]);
			res->large_write = mx->f[i].write;
		}
	}
	w = res->large_write;
	res->cost_small = sim_price_us(st, false, 4096);
	res->cost_large = sim_price_us(st, w, res->large);
}

/* fairq, with the tunables @set, against the references: G and total */
static void fam_steady(struct fam_ctx *ctx, const struct fam_dev *d,
		       const struct fam_mix *mx, const struct fam_ref *ref,
		       const char *const *set, struct fam_res *res)
{
	struct sim *sm = &ctx->sm;
	struct dev_run dr;
	struct dev_cfg c;
	double r;
	int i;

	fam_cfg_fairq(&c, set, d, ref->window, ref->warm);
	if (ctx->trace)
		fam_trace_begin(&c, c.warm_ms * MS + ref->window);
	fam_flows(sm, d, mx, -1, 0);
	dev_run(sm, &dr, &d->m, &c, ctx->seed);
	res->g = 1e9;
	res->work = 0;
	for (i = 0; i < mx->n; i++) {
		r = fam_rate(sm, i);
		res->s[i] = ref->alone[i] > 0 ? r / ref->alone[i] : 0;
		res->g = fmin(res->g, res->s[i] / fam_share(mx, i));
		res->work += ref->sat[i] > 0 ? r / ref->sat[i] : 0;
	}
	fam_res_run(res, d, mx, &dr);
	res->window_ms = (double)ref->window / 1e6;
	sim_reset_results(sm);
	res->total = res->fifo_work > 0 ? res->work / res->fifo_work : 0;
	res->fail = 0;
	if (res->g < FAM_G_MIN)
		res->fail |= FAM_FAIL_G;
	if (res->total < FAM_TOTAL_MIN)
		res->fail |= FAM_FAIL_TOTAL;
}

/*
 * Start-up: the streamers run from 0, the reader starts when fairq's
 * measuring window would begin (after its warm-up); alone it starts on an
 * idle device (its throttle's bucket empty, as the load would leave it:
 * the ratio is about scheduling, not about the burst).  A run ends when the reader is done, or FAM_START_CAP times
 * its time alone after it started.
 */
static double fam_startup_run(struct fam_ctx *ctx, const struct fam_dev *d,
			      const struct fam_mix *mx, const struct dev_cfg *c,
			      struct dev_run *dr)
{
	struct sim *sm = &ctx->sm;
	double ms;

	fam_flows(sm, d, mx, c->adaptive ? -1 : 0, 0);
	sm->f[0].start_ns = SIM_START_WINDOW;
	dev_run(sm, dr, &d->m, c, ctx->seed);
	ms = sm->f[0].completed < FAM_FILES ? -1 :
	     (double)(sm->f[0].last_done_ns - sm->f[0].start_ns) / 1e6;
	sim_reset_results(sm);
	return ms;
}

static void fam_startup_ref(struct fam_ctx *ctx, const struct fam_dev *d,
			    const struct fam_mix *mx, struct fam_ref *ref)
{
	struct dev_run dr;
	struct dev_cfg c;

	fam_cfg_fifo(&c, d, 4096, UINT64_MAX / 2, 0);
	c.stop_on_limit = true;
	ref->alone_ms = fam_startup_run(ctx, d, mx, &c, &dr);
}

static void fam_startup(struct fam_ctx *ctx, const struct fam_dev *d,
			const struct fam_mix *mx, const struct fam_ref *ref,
			const char *const *set, struct fam_res *res)
{
	u64 cap = (u64)(FAM_START_CAP * ref->alone_ms * 1e6);
	struct dev_run dr;
	struct dev_cfg c;

	fam_cfg_fairq(&c, set, d, cap, fam_transient(d, mx));
	c.stop_on_limit = true;
	if (ctx->trace)
		fam_trace_begin(&c, cap / 5);
	res->alone_ms = ref->alone_ms;
	res->loaded_ms = fam_startup_run(ctx, d, mx, &c, &dr);
	res->startup = res->loaded_ms < 0 ? FAM_START_CAP :
		       res->loaded_ms / ref->alone_ms;
	fam_res_run(res, d, mx, &dr);
	res->window_ms = res->loaded_ms;
	res->fail = res->startup > FAM_START_MAX ? FAM_FAIL_START : 0;
}

/*
 * A failing case again with one rule changed (--why): the variants it
 * holds with say which rule's decision the failure is.
 */
enum { FAM_VAR_DEPTH, FAM_VAR_IDLE, FAM_VAR_BOOST, FAM_VAR_REQUESTS, FAM_NVAR };

static const char *const fam_var_name[FAM_NVAR] = {
	"depth=best FIFO's", "idle_us=0", "boost_ms=0", "fairness=requests",
};

static void fam_why(struct fam_ctx *ctx, const struct fam_dev *d,
		    const struct fam_mix *mx, const struct fam_ref *ref,
		    struct fam_res *res)
{
	const char *set[2 * FAM_SETS + 3];
	struct fam_res r;
	char depth[16];
	bool trace = ctx->trace;
	int v, n;

	ctx->trace = false;
	for (n = 0; ctx->set[n]; n++)
		set[n] = ctx->set[n];
	/* start-up: the device's servers, the depth a FIFO needs there */
	snprintf(depth, sizeof(depth), "%u", mx->startup ? d->m.servers : res->fifo_depth);
	for (v = 0; v < FAM_NVAR; v++) {
		set[n] = v == FAM_VAR_DEPTH ? "depth" : v == FAM_VAR_IDLE ? "idle_us" :
			 v == FAM_VAR_BOOST ? "boost_ms" : "fairness";
		set[n + 1] = v == FAM_VAR_DEPTH ? depth : v == FAM_VAR_REQUESTS ?
			     "requests" : "0";
		set[n + 2] = NULL;
		r = *res;
		if (mx->startup)
			fam_startup(ctx, d, mx, ref, set, &r);
		else
			fam_steady(ctx, d, mx, ref, set, &r);
		if (!r.fail)
			res->holds_with |= 1u << v;
	}
	ctx->trace = trace;
}

static void fam_case(struct fam_ctx *ctx, const struct fam_dev *d, int m,
		     struct fam_res *res)
{
	const struct fam_mix *mx = &fam_mixes[m];
	struct fam_ref ref;

	memset(res, 0, sizeof(*res));
	if (mx->startup) {
		fam_startup_ref(ctx, d, mx, &ref);
		fam_startup(ctx, d, mx, &ref, ctx->set, res);
	} else {
		fam_steady_ref(ctx, d, mx, &ref, res);
		fam_steady(ctx, d, mx, &ref, ctx->set, res);
	}
	if (res->fail && ctx->why)
		fam_why(ctx, d, mx, &ref, res);
	res->done = true;
}

/* ---- causes */

/*
 * The likely cause of a failing case, as far as its figures tell: the
 * first of these that applies.  The rules read the device's model and
 * fairq's choices; SIM-DEVICES.md ("FAMILY") shows traces behind them.
 */
enum fam_cause {
	FAM_C_DEPTH,		/* it holds at the best FIFO's depth (--why) */
	FAM_C_STALL,		/* the write cache stalled the device */
	FAM_C_SEEK,		/* a sequential flow on a seek device */
	FAM_C_BILL,		/* a throttle that bills a request's bytes to the next */
	FAM_C_COST,		/* the cost model's price ratio is off the device's */
	FAM_C_HALF,		/* start-up: alone the reader uses over half the depth */
	FAM_C_KNEE,		/* start-up: the requests in the device slow each one */
	FAM_C_QUEUE,		/* start-up: depth above what the device serves at once */
	FAM_C_OTHER,
	FAM_NCAUSE,
};

static const char *const fam_cause_name[FAM_NCAUSE] = {
	"depth=auto's choice", "write-cache flush stalls", "seek: sequential locality",
	"throttle billed after", "cost model's prices", "start-up: half of the device's depth",
	"start-up: the knee's latency", "start-up: queue inside the device", "other",
};

/*
 * How much of the device the start-up reader uses alone (4-16 KiB reads),
 * of the servers fairq's depth lets it have: at depth 1 a reader that
 * keeps the one request in flight most of the time alone gets only what
 * the boost grants it beside the streamers, half.
 */
static double fam_reader_use(const struct fam_dev *d, const struct fam_res *r)
{
	const struct sim_dev *m = &d->m;
	double rate = FAM_FILES / (r->alone_ms / 1e3), svc = 0, u;
	int k;

	for (k = 1; k <= 4; k++)
		svc += fam_svc_ns(d, 4096u * k, false, false) / 4 / 1e9;
	u = rate * svc / fmin(m->servers, fmax(1, floor(r->depth_mean + 0.5)));
	if (m->iops)
		u = fmax(u, rate / (double)m->iops);
	if (m->bps)
		u = fmax(u, rate * 10240 / (double)m->bps);
	return u;
}

/* requests the device serves at once for 4 KiB reads */
static double fam_need(const struct fam_dev *d)
{
	double n = d->m.servers;

	if (d->m.iops)
		n = fmin(n, (double)d->m.iops * fam_svc_ns(d, 4096, false, false) / 1e9);
	return fmax(n, 1);
}

static enum fam_cause fam_cause(const struct fam_dev *d, const struct fam_mix *mx,
				const struct fam_res *r)
{
	bool seq = false, sizes = false, writes = false;
	double want, got;
	int i;

	if (mx->startup) {
		if (fam_reader_use(d, r) > 0.5)
			return FAM_C_HALF;
		if ((double)d->m.qd_ns * r->depth_mean >
		    0.25 * fam_svc_ns(d, 4096, false, false))
			return FAM_C_KNEE;
		if (r->depth_mean > fam_need(d) + 1)
			return FAM_C_QUEUE;
		return FAM_C_OTHER;
	}
	if (r->holds_with & (1u << FAM_VAR_DEPTH))
		return FAM_C_DEPTH;
	for (i = 0; i < mx->n; i++) {
		seq |= mx->f[i].seq;
		writes |= mx->f[i].write;
		sizes |= mx->f[i].bytes != mx->f[0].bytes;
	}
	if (writes && r->stalls)
		return FAM_C_STALL;
	if (seq && d->m.seek_ns)
		return FAM_C_SEEK;
	if ((sizes || writes) && d->m.bill_after)
		return FAM_C_BILL;
	if (sizes || writes) {
		want = fam_svc_ns(d, r->large, false, r->large_write) /
		       fam_svc_ns(d, 4096, false, false);
		got = r->cost_small > 0 ? r->cost_large / r->cost_small : 0;
		if (got < want / 1.25 || got > want * 1.25)
			return FAM_C_COST;
	}
	return FAM_C_OTHER;
}

/* ---- printing */

/* --why: the variants a failing case holds with */
static void fam_print_why(const struct fam_res *r)
{
	int v, n = 0;

	printf("; holds with ");
	for (v = 0; v < FAM_NVAR; v++)
		if (r->holds_with & (1u << v))
			printf("%s%s", n++ ? ", " : "", fam_var_name[v]);
	if (!n)
		printf("none of the %d variants", FAM_NVAR);
}

static void fam_print_case(const struct fam_dev *d, const struct fam_mix *mx,
			   const struct fam_res *r, bool why)
{
	char sbuf[128] = "", win[64], cost[96];
	size_t off = 0;
	int i;

	snprintf(win, sizeof(win), "%.0f + %.0f%s", r->from_ms, r->window_ms,
		 r->boost_left ? ", boost on" : "");
	snprintf(cost, sizeof(cost), "%.0f / %.0f (%.0f / %.0f)", r->cost_small,
		 r->cost_large, fam_svc_ns(d, 4096, false, false) / 1e3,
		 fam_svc_ns(d, r->large, false, r->large_write) / 1e3);
	if (mx->startup) {
		printf("| %s | - | - | - | %.1f [%u-%u] | %.0f / %.0f ms (%s%.2f) | %s | %s | %s",
		       mx->name, r->depth_mean, r->depth_lo, r->depth_hi,
		       r->alone_ms, r->loaded_ms, r->loaded_ms < 0 ? ">= " : "",
		       r->startup, win, cost, r->fail ? "**fails**" : "holds");
		if (why && r->fail)
			fam_print_why(r);
		printf(" |\n");
		return;
	}
	for (i = 0; i < mx->n; i++)
		off += (size_t)snprintf(sbuf + off, sizeof(sbuf) - off, "%s%.2f",
					i ? " " : "", r->s[i]);
	printf("| %s | %s | %.2f | %.2f (%.2f / %.2f at depth %u) | %.1f [%u-%u] | - | %s | %s | %s%s%s",
	       mx->name, sbuf, r->g, r->total, r->work, r->fifo_work, r->fifo_depth,
	       r->depth_mean, r->depth_lo, r->depth_hi, win, cost,
	       r->fail ? "**fails**" : "holds",
	       r->fail & FAM_FAIL_G ? ": G" : "",
	       r->fail & FAM_FAIL_TOTAL ? (r->fail & FAM_FAIL_G ? ", total" : ": total") : "");
	if (why && r->fail)
		fam_print_why(r);
	printf(" |\n");
}

static void fam_print_head(void)
{
	printf("| mix | s of each flow | G | total (work: fairq / best FIFO) | fairq depth mean [lo-hi] | start-up alone / loaded (ratio) | fairq window ms (from + length) | fairq's cost of a 4 KiB read / the largest request us (the device's time) | property |\n");
	printf("|---|---|---|---|---|---|---|---|---|\n");
}

static void fam_print_set(const struct fam_ctx *ctx)
{
	int i;

	for (i = 0; ctx->set[i]; i += 2)
		printf(" --set %s=%s", ctx->set[i], ctx->set[i + 1]);
}

static void fam_summary(const struct fam_ctx *ctx, const struct fam_res *res,
			u32 n, int only)
{
	char name[512];
	struct fam_dev d;
	u32 k, pass, fails = 0, kg, kt, ks;
	double g, t, s;
	int m, c;

	printf("\n| mix | devices holding | worst G (device) | worst total (device) | worst start-up / alone (device) |\n");
	printf("|---|---|---|---|---|\n");
	for (m = 0; m < FAM_NMIX; m++) {
		if (only >= 0 && m != only)
			continue;
		pass = 0;
		g = t = 1e9;
		s = 0;
		kg = kt = ks = 0;
		for (k = 0; k < n; k++) {
			const struct fam_res *r = &res[k * FAM_NMIX + m];

			pass += !r->fail;
			if (fam_mixes[m].startup) {
				if (r->startup > s) {
					s = r->startup;
					ks = k;
				}
				continue;
			}
			if (r->g < g) {
				g = r->g;
				kg = k;
			}
			if (r->total < t) {
				t = r->total;
				kt = k;
			}
		}
		if (fam_mixes[m].startup)
			printf("| %s | %u / %u | - | - | %.2f (%u) |\n",
			       fam_mixes[m].name, pass, n, s, ks);
		else
			printf("| %s | %u / %u | %.2f (%u) | %.2f (%u) | - |\n",
			       fam_mixes[m].name, pass, n, g, kg, t, kt);
	}
	for (k = 0; k < n; k++)
		for (m = 0; m < FAM_NMIX; m++)
			fails += res[k * FAM_NMIX + m].fail != 0;
	if (!fails) {
		printf("\nEvery case holds: G >= %.2f, total >= %.2f, start-up <= %.2f x alone.\n",
		       FAM_G_MIN, FAM_TOTAL_MIN, FAM_START_MAX);
		return;
	}
	printf("\n%u cases fail (G >= %.2f, total >= %.2f, start-up <= %.2f x alone); "
	       "their likely causes%s:\n\n| cause |", fails, FAM_G_MIN, FAM_TOTAL_MIN,
	       FAM_START_MAX, ctx->why ? "" : " (without --why: none is put down to the depth)");
	for (m = 0; m < FAM_NMIX; m++)
		if (only < 0 || m == only)
			printf(" %s |", fam_mixes[m].name);
	printf("\n|---|");
	for (m = 0; m < FAM_NMIX; m++)
		if (only < 0 || m == only)
			printf("---|");
	printf("\n");
	for (c = 0; c < FAM_NCAUSE; c++) {
		printf("| %s |", fam_cause_name[c]);
		for (m = 0; m < FAM_NMIX; m++) {
			if (only >= 0 && m != only)
				continue;
			for (k = 0, pass = 0; k < n; k++) {
				const struct fam_res *r = &res[k * FAM_NMIX + m];

				if (r->fail) {
					fam_device(ctx->seed, k, &d);
					pass += fam_cause(&d, &fam_mixes[m], r) == (enum fam_cause)c;
				}
			}
			printf(" %u |", pass);
		}
		printf("\n");
	}
	printf("\n");
	for (k = 0; k < n; k++) {
		for (m = 0; m < FAM_NMIX; m++) {
			const struct fam_res *r = &res[k * FAM_NMIX + m];

			if (!r->fail)
				continue;
			fam_device(ctx->seed, k, &d);
			fam_dev_name(&d, name, sizeof(name));
			if (fam_mixes[m].startup)
				printf("- device %u, %s: start-up %s%.2f x alone (%.0f / %.0f ms), fairq depth %.1f; %s",
				       k, fam_mixes[m].name, r->loaded_ms < 0 ? ">= " : "",
				       r->startup, r->alone_ms, r->loaded_ms, r->depth_mean, name);
			else
				printf("- device %u, %s: G %.2f, total %.2f (best FIFO at depth %u), fairq depth %.1f; %s",
				       k, fam_mixes[m].name, r->g, r->total, r->fifo_depth,
				       r->depth_mean, name);
			printf("; likely cause: %s", fam_cause_name[fam_cause(&d, &fam_mixes[m], r)]);
			if (ctx->why)
				fam_print_why(r);
			printf("\n");
			printf("  `fq_sim --family --seed %llu --device %u --mix %s",
			       (unsigned long long)ctx->seed, k, fam_mixes[m].name);
			fam_print_set(ctx);
			printf("`\n");
		}
	}
}

/* ---- main */

static int fam_usage(void)
{
	fprintf(stderr, "usage: fq_sim --family [--n N] [--seed S] [--device K] [--mix NAME] "
		"[--trace] [--why] [--jobs J] [--set NAME=VALUE]...\n");
	return 2;
}

static bool fam_all_hold(const struct fam_res *res, u32 n)
{
	u32 i;

	for (i = 0; i < n * FAM_NMIX; i++)
		if (res[i].fail)
			return false;
	return true;
}

int sim_family_main(int argc, char **argv)
{
	static struct fam_ctx ctx;
	struct fam_res *res;
	struct fam_dev d;
	char name[512], *eq;
	u32 n = 200, jobs = 2, dev = ~0u, k, lo, hi, nset = 0;
	int i, m, only = -1, status, bad = 0;
	pid_t *pid;
	size_t size;

	ctx.seed = 1;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--family"))
			continue;
		if (!strcmp(argv[i], "--trace")) {
			ctx.trace = true;
			continue;
		}
		if (!strcmp(argv[i], "--why")) {
			ctx.why = true;
			continue;
		}
		if (i + 1 >= argc)
			return fam_usage();
		if (!strcmp(argv[i], "--n"))
			n = (u32)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seed"))
			ctx.seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--device"))
			dev = (u32)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--jobs"))
			jobs = (u32)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--mix")) {
			for (m = 0; m < FAM_NMIX; m++)
				if (!strcmp(argv[i + 1], fam_mixes[m].name))
					only = m;
			if (only < 0)
				return fam_usage();
			i++;
		} else if (!strcmp(argv[i], "--set") && nset < FAM_SETS &&
			   strchr(argv[i + 1], '=')) {
			eq = strchr(argv[++i], '=');
			*eq = 0;
			ctx.set[2 * nset] = argv[i];
			ctx.set[2 * nset++ + 1] = eq + 1;
		} else {
			return fam_usage();
		}
	}
	if (!n || !jobs || (ctx.trace && (dev == ~0u || only < 0)))
		return fam_usage();

	if (dev != ~0u) {
		/* one device: its parameters and its cases, with figures */
		static struct fam_res r[FAM_NMIX];

		fam_device(ctx.seed, dev, &d);
		fam_dev_name(&d, name, sizeof(name));
		printf("fq_sim --family --seed %llu --device %u", (unsigned long long)ctx.seed, dev);
		fam_print_set(&ctx);
		printf(": %s\n", name);
		for (m = 0; m < FAM_NMIX; m++) {
			if (only >= 0 && m != only)
				continue;
			fam_case(&ctx, &d, m, &r[m]);
		}
		printf("\n");
		fam_print_head();
		for (m = 0; m < FAM_NMIX; m++)
			if (only < 0 || m == only)
				fam_print_case(&d, &fam_mixes[m], &r[m], ctx.why);
		sim_reset_results(&ctx.sm);
		free(ctx.sm.f);
		free(ctx.sm.heap);
		if (fq_env_warnings)
			return 1;
		return fam_all_hold(r, 1) ? 0 : 1;
	}

	size = (size_t)n * FAM_NMIX * sizeof(*res);
	res = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid = calloc(jobs, sizeof(*pid));
	if (res == MAP_FAILED || !pid) {
		perror("fq_sim");
		return 1;
	}
	printf("fq_sim --family --seed %llu --n %u", (unsigned long long)ctx.seed, n);
	fam_print_set(&ctx);
	printf(": %u random devices (sim_family.c), fairq at its defaults; per mix, "
	       "G = min s / share, total = work / the best fixed-depth FIFO's, start-up = "
	       "time beside streamers / alone\n", n);
	fflush(stdout);
	for (i = 0; i < (int)jobs; i++) {
		pid[i] = fork();
		if (pid[i] < 0) {
			perror("fq_sim: fork");
			return 1;
		}
		if (pid[i])
			continue;
		/* worker i: a contiguous share of the devices */
		lo = (u32)((u64)n * i / jobs);
		hi = (u32)((u64)n * (i + 1) / jobs);
		for (k = lo; k < hi; k++) {
			fam_device(ctx.seed, k, &d);
			for (m = 0; m < FAM_NMIX; m++)
				if (only < 0 || m == only)
					fam_case(&ctx, &d, m, &res[k * FAM_NMIX + m]);
		}
		_exit(fq_env_warnings ? 1 : 0);
	}
	for (i = 0; i < (int)jobs; i++) {
		if (waitpid(pid[i], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			bad = 1;
	}
	if (bad) {
		fprintf(stderr, "fq_sim: a worker failed (a warning of the core, or a crash)\n");
		return 1;
	}
	fam_summary(&ctx, res, n, only);
	i = fam_all_hold(res, n) ? 0 : 1;
	munmap(res, size);
	free(pid);
	return i;
}
