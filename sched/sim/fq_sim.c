// SPDX-License-Identifier: GPL-2.0
/*
 * fq_sim.c - replay synthetic workloads against a modelled device and
 * print per-flow throughput, latency p50/p99 and Jain's fairness index.
 *
 *   fq_sim [--seed N] [--secs S] [--only W1|W2|W3|W4|W5|W7|COST]
 *   fq_sim [--seed N] --only DEVICES|DEV|DEPTH|DEVCOST|ANTIC|STARTUP|BENCH
 *
 * The DEVICES sections (not run by default; SIM-DEVICES.md) put the
 * scheduler in front of the device models of sim_dev.h, where the
 * scheduler's depth and the device's concurrency are separate numbers.
 *
 * Device model: D requests served in parallel, each taking
 * SIM_COST_REQ_NS + bytes * SIM_COST_BYTE_PS / 1000; the scheduler's depth
 * is D.  A flow keeps "depth" requests outstanding; after a completion it
 * issues the next one "think" ns later.  Everything except the COST table
 * (wall-clock CPU time) is a pure function of the seed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fq_sched.h"
#include "sim.h"
#include "sim_dev.h"
#include "sim_family.h"
#include "sim_wb.h"

#define SIM_COST_REQ_NS		100000ull	/* fixed cost per request */
#define SIM_COST_BYTE_PS	1000ull		/* 1 ns per byte (1 GB/s) */


struct sim_req {
	struct fq_req rq;
	int flow;
	u64 submit_ns;
	struct sim_req *next_free;
};


static u64 sim_rand(struct sim *sm)
{
	sm->rng ^= sm->rng << 13;
	sm->rng ^= sm->rng >> 7;
	sm->rng ^= sm->rng << 17;
	return sm->rng;
}

static int ev_less(const struct sim_ev *a, const struct sim_ev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void ev_push(struct sim *sm, u64 t, int type, void *p, int flow)
{
	size_t i = sm->nheap++;
	struct sim_ev e = { t, sm->evseq++, type, p, flow }, tmp;

	if (sm->nheap > sm->maxheap) {
		sm->maxheap = sm->maxheap ? sm->maxheap * 2 : 1024;
		sm->heap = realloc(sm->heap, sm->maxheap * sizeof(e));
	}
	sm->heap[i] = e;
	while (i && ev_less(&sm->heap[i], &sm->heap[(i - 1) / 2])) {
		tmp = sm->heap[i];
		sm->heap[i] = sm->heap[(i - 1) / 2];
		sm->heap[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
}

static struct sim_ev ev_pop(struct sim *sm)
{
	struct sim_ev top = sm->heap[0], tmp;
	size_t i = 0, c;

	sm->heap[0] = sm->heap[--sm->nheap];
	for (;;) {
		c = 2 * i + 1;
		if (c >= sm->nheap)
			break;
		if (c + 1 < sm->nheap && ev_less(&sm->heap[c + 1], &sm->heap[c]))
			c++;
		if (!ev_less(&sm->heap[c], &sm->heap[i]))
			break;
		tmp = sm->heap[i];
		sm->heap[i] = sm->heap[c];
		sm->heap[c] = tmp;
		i = c;
	}
	return top;
}

static u64 svc_ns(u32 bytes)
{
	return SIM_COST_REQ_NS + (u64)bytes * SIM_COST_BYTE_PS / 1000;
}


/*
 * Queue @rq, and grow the flow table when the core wants it, as fairq.ko's
 * work item and fairq-nbd do (here at once).
 */
static void sim_enqueue(struct fq_sched *s, struct fq_req *rq, u64 now)
{
	fq_sched_enqueue(s, rq, now);
	if (fq_sched_table_want(s))
		fq_sched_table_resize(s);
}
static void sim_issue(struct sim *sm, int fi)
{
	struct sim_flow *f = &sm->f[fi];
	struct sim_req *r = sm->free;

	sm->free = r->next_free;
	memset(&r->rq, 0, sizeof(r->rq));
	r->rq.key = f->key;
	r->rq.bytes = f->bytes;
	r->rq.flags = f->flags;
	r->rq.ioprio = f->ioprio;
	r->rq.sector = (sim_rand(sm) % (1ull << 30)) & ~7ull;
	r->flow = fi;
	r->submit_ns = sm->now;
	sim_enqueue(sm->s, &r->rq, sm->now);
}

static void sim_pump(struct sim *sm)
{
	struct fq_req *rq;
	u64 t;

	while ((rq = fq_sched_dispatch(sm->s, sm->now)))
		ev_push(sm, sm->now + svc_ns(rq->bytes), EV_DONE, rq, 0);
	t = fq_sched_next_event(sm->s, sm->now);
	if (t > sm->now && t != sm->last_timer) {
		ev_push(sm, t, EV_TIMER, NULL, 0);
		sm->last_timer = t;
	}
}

static void sim_done(struct sim *sm, struct sim_req *r)
{
	struct sim_flow *f = &sm->f[r->flow];
	int fi = r->flow;

	fq_sched_complete(sm->s, &r->rq, 0, sm->now);
	if (sm->now >= sm->warm_ns) {
		f->done_reqs++;
		f->done_bytes += r->rq.bytes;
		if (f->nlat == f->maxlat) {
			f->maxlat = f->maxlat ? f->maxlat * 2 : 4096;
			f->lat = realloc(f->lat, f->maxlat * sizeof(u64));
		}
		f->lat[f->nlat++] = sm->now - r->submit_ns;
	}
	r->next_free = sm->free;
	sm->free = r;
	if (f->think_ns)
		ev_push(sm, sm->now + f->think_ns, EV_ARRIVE, NULL, fi);
	else
		sim_issue(sm, fi);
}

struct sim_cfg {
	const char *policy;
	int depth;		/* device parallelism = scheduler depth */
	const char *fairness;
	const char *idle_us;
	const char *buckets;	/* sfq buckets, NULL = default */
	u64 secs_ms;		/* simulated time [ms] */
};

/* A run starts at time 0 with an empty event heap and a seeded PRNG. */
static void sim_start_clock(struct sim *sm, u64 secs_ms, u64 seed)
{
	sm->rng = seed * 0x9E3779B97F4A7C15ull + 7;
	sm->now = 0;
	sm->nheap = 0;
	sm->last_timer = 0;
	sm->end_ns = secs_ms * MS;
	sm->warm_ns = sm->end_ns / 10;
}

static void sim_run(struct sim *sm, const struct sim_cfg *c, u64 seed)
{
	char buf[16];
	struct sim_ev e;
	size_t total = 0;
	int i, j;

	sm->s = sim_sched_create(c->policy, seed);
	snprintf(buf, sizeof(buf), "%d", c->depth);
	fq_sched_set(sm->s, "depth", buf);
	fq_sched_set(sm->s, "fairness", c->fairness ? c->fairness : "requests");
	if (c->idle_us)
		fq_sched_set(sm->s, "idle_us", c->idle_us);
	if (c->buckets)
		fq_sched_set(sm->s, "buckets", c->buckets);
	for (i = 0; i < sm->nflows; i++)
		total += (size_t)sm->f[i].depth;
	sm->reqs = calloc(total, sizeof(*sm->reqs));
	sm->free = NULL;
	for (i = 0; i < (int)total; i++) {
		sm->reqs[i].next_free = sm->free;
		sm->free = &sm->reqs[i];
	}
	sim_start_clock(sm, c->secs_ms, seed);
	for (i = 0; i < sm->nflows; i++)
		for (j = 0; j < sm->f[i].depth; j++)
			sim_issue(sm, i);
	sim_pump(sm);
	while (sm->nheap && sm->heap[0].t <= sm->end_ns) {
		e = ev_pop(sm);
		sm->now = e.t;
		if (e.type == EV_DONE)
			sim_done(sm, (struct sim_req *)e.p);
		else if (e.type == EV_ARRIVE)
			sim_issue(sm, e.flow);
		sim_pump(sm);
	}
	fq_sched_stats(sm->s, &sm->st_end);
	/* teardown: take back what is queued, let the device finish */
	while (fq_sched_drain(sm->s))
		;
	while (sm->nheap) {
		e = ev_pop(sm);
		if (e.type == EV_DONE)
			fq_sched_complete(sm->s, e.p, 0, e.t);
	}
	fq_sched_destroy(sm->s);
	free(sm->reqs);
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

double pct(struct sim_flow *f, double p)
{
	size_t i;

	if (!f->nlat)
		return 0;
	qsort(f->lat, f->nlat, sizeof(u64), cmp_u64);
	i = (size_t)(p * (double)(f->nlat - 1) + 0.5);
	return (double)f->lat[i] / 1000.0;	/* us */
}

struct fq_sched *sim_sched_create(const char *policy, u64 seed)
{
	struct fq_sched *s = fq_sched_create(policy, seed);

	if (s && !strcmp(policy, "fifo"))
		fq_sched_set(s, "writeback", "fair");
	return s;
}

double sim_price_us(const struct fq_stats *st, bool write, u32 bytes)
{
	return (st->cost_a_ns[write] +
		st->cost_b_ps_per_byte[write] * bytes / 1000) / 1e3;
}

double window_s(const struct sim *sm)
{
	return (double)(sm->end_ns - sm->warm_ns) / 1e9;
}

/* Jain's index of per-flow bytes/s divided by weight. */
static double jain(const struct sim *sm)
{
	double sum = 0, sq = 0, x;
	int i;

	for (i = 0; i < sm->nflows; i++) {
		x = (double)sm->f[i].done_bytes / sm->f[i].weight;
		sum += x;
		sq += x * x;
	}
	return sq > 0 ? sum * sum / (sm->nflows * sq) : 0;
}

void sim_reset_results(struct sim *sm)
{
	int i;

	for (i = 0; i < sm->nflows; i++) {
		free(sm->f[i].lat);
		sm->f[i].lat = NULL;
		sm->f[i].nlat = sm->f[i].maxlat = 0;
		sm->f[i].done_reqs = sm->f[i].done_bytes = 0;
		sm->f[i].dev_ns = 0;
	}
}

void sim_flows(struct sim *sm, int n)
{
	free(sm->f);
	sm->f = calloc((size_t)n, sizeof(*sm->f));
	sm->nflows = n;
}

void sim_flow(struct sim *sm, int i, int depth, u32 bytes,
	      u32 flags, u16 ioprio, u64 think_ns)
{
	struct sim_flow *f = &sm->f[i];
	u32 lvl = FQ_IOPRIO_LEVEL(ioprio);

	f->key = 1000 + (u64)i;
	f->depth = depth;
	f->bytes = bytes;
	f->flags = flags;
	f->ioprio = ioprio;
	f->think_ns = think_ns;
	f->weight = ioprio ? 8 - lvl : 4;
}

double total_mbs(const struct sim *sm)
{
	u64 b = 0;
	int i;

	for (i = 0; i < sm->nflows; i++)
		b += sm->f[i].done_bytes;
	return (double)b / window_s(sm) / 1e6;
}

static double total_iops(const struct sim *sm)
{
	u64 n = 0;
	int i;

	for (i = 0; i < sm->nflows; i++)
		n += sm->f[i].done_reqs;
	return (double)n / window_s(sm);
}

static const char *const policies[] = { "fifo", "cfq", "sfq" };

/* One table row per flow per policy. */
static void print_flows(struct sim *sm, const char *pol,
			const char *const *names)
{
	double tot = total_mbs(sm);
	int i;

	for (i = 0; i < sm->nflows; i++) {
		struct sim_flow *f = &sm->f[i];
		double mbs = (double)f->done_bytes / window_s(sm) / 1e6;

		printf("| %s | %s | %.2f | %.1f%% | %.0f | %.0f |",
		       pol, names[i], mbs, tot > 0 ? 100.0 * mbs / tot : 0,
		       pct(f, 0.50), pct(f, 0.99));
		if (i == 0)
			printf(" %.4f | %.1f |\n", jain(sm), tot);
		else
			printf(" | |\n");
	}
}

static void table_head(const char *title)
{
	printf("\n%s\n\n", title);
	printf("| policy | flow | MB/s | share | p50 us | p99 us | Jain | total MB/s |\n");
	printf("|---|---|---|---|---|---|---|---|\n");
}

static void w1(struct sim *sm, u64 seed, u64 ms)
{
	static const char *const names[] = { "A 4K", "B 4K", "C 4K", "D 4K" };
	struct sim_cfg c = { .depth = 4, .secs_ms = ms };
	int p, i;

	table_head("W1: 4 flows, each 32 outstanding, random 4 KiB sync reads, device D=4");
	for (p = 0; p < 3; p++) {
		sim_flows(sm, 4);
		for (i = 0; i < 4; i++)
			sim_flow(sm, i, 32, 4096, FQ_REQ_SYNC, 0, 0);
		c.policy = policies[p];
		sim_run(sm, &c, seed);
		print_flows(sm, policies[p], names);
		sim_reset_results(sm);
	}
}

static void w3(struct sim *sm, u64 seed, u64 ms)
{
	static const char *const names[] = { "4K x32", "1M x32" };
	static const char *const fair[] = { "bytes", "requests" };
	struct sim_cfg c = { .depth = 4, .secs_ms = ms };
	char pol[32];
	int p, k;

	table_head("W3: 4 KiB flow vs 1 MiB flow, each 32 outstanding, device D=4");
	for (k = 0; k < 2; k++) {
		for (p = 0; p < 3; p++) {
			if (k == 1 && p == 0)
				continue;
			sim_flows(sm, 2);
			sim_flow(sm, 0, 32, 4096, FQ_REQ_SYNC, 0, 0);
			sim_flow(sm, 1, 32, 1 << 20, FQ_REQ_SYNC, 0, 0);
			c.policy = policies[p];
			c.fairness = fair[k];
			sim_run(sm, &c, seed);
			snprintf(pol, sizeof(pol), "%s%s", policies[p],
				 p ? (k ? " requests" : " bytes") : "");
			print_flows(sm, pol, names);
			sim_reset_results(sm);
		}
	}
}

static void w4(struct sim *sm, u64 seed, u64 ms)
{
	static const char *const names[] = { "level 0 (w8)", "level 4 (w4)",
				       "level 7 (w1)" };
	static const int lvl[3] = { 0, 4, 7 };
	struct sim_cfg c = { .depth = 4, .secs_ms = ms };
	double tot, share, want;
	int p, i;

	printf("\nW4: weights, BE levels 0 / 4 / 7, each 32 outstanding, random 4 KiB, device D=4\n\n");
	printf("| policy | flow | MB/s | share | weight share | share/weight share | p99 us |\n");
	printf("|---|---|---|---|---|---|---|\n");
	for (p = 0; p < 3; p++) {
		sim_flows(sm, 3);
		for (i = 0; i < 3; i++)
			sim_flow(sm, i, 32, 4096, FQ_REQ_SYNC,
				 FQ_IOPRIO(FQ_CLASS_BE, lvl[i]), 0);
		c.policy = policies[p];
		sim_run(sm, &c, seed);
		tot = total_mbs(sm);
		for (i = 0; i < 3; i++) {
			struct sim_flow *f = &sm->f[i];
			double mbs = (double)f->done_bytes / window_s(sm) / 1e6;

			share = 100.0 * mbs / tot;
			want = 100.0 * f->weight / 13.0;
			printf("| %s | %s | %.2f | %.1f%% | %.1f%% | %.3f | %.0f |\n",
			       policies[p], names[i], mbs, share, want,
			       share / want, pct(f, 0.99));
		}
		sim_reset_results(sm);
	}
}

static void w2_one(struct sim *sm, u64 seed, u64 ms, const char *pol,
		   int depth, const char *idle, double p99_alone)
{
	struct sim_cfg c = { .policy = pol, .depth = depth, .idle_us = idle,
			     .secs_ms = ms };
	double tot, s_mbs;

	sim_flows(sm, 2);
	sim_flow(sm, 0, 1, 4096, FQ_REQ_SYNC, 0, 20 * US);
	sim_flow(sm, 1, 32, 4096, FQ_REQ_SYNC, 0, 0);
	sim_run(sm, &c, seed);
	tot = total_mbs(sm);
	s_mbs = (double)sm->f[0].done_bytes / window_s(sm) / 1e6;
	printf("| %d | %s | %s | %.1f%% | %.0f | %.0f | %.2f | %.0f | %.1f |\n",
	       depth, pol, idle ? idle : "default", 100.0 * s_mbs / tot,
	       pct(&sm->f[0], 0.50), pct(&sm->f[0], 0.99),
	       pct(&sm->f[0], 0.99) / p99_alone, total_iops(sm), tot);
	sim_reset_results(sm);
}

static void w2(struct sim *sm, u64 seed, u64 ms)
{
	static const int depths[3] = { 1, 4, 16 };
	struct sim_cfg c = { .policy = "cfq", .secs_ms = ms };
	double alone;
	int d, p;

	printf("\nW2: sync flow S (1 outstanding, next request 20 us after each completion) vs flow B (32 outstanding), random 4 KiB; idle_us 0 (off), 5000, and the default\n\n");
	printf("| depth | policy | idle_us | S share | S p50 us | S p99 us | S p99 / alone | total IOPS | total MB/s |\n");
	printf("|---|---|---|---|---|---|---|---|---|\n");
	for (d = 0; d < 3; d++) {
		c.depth = depths[d];
		sim_flows(sm, 1);
		sim_flow(sm, 0, 1, 4096, FQ_REQ_SYNC, 0, 20 * US);
		sim_run(sm, &c, seed);
		alone = pct(&sm->f[0], 0.99);
		printf("| %d | S alone | - | 100%% | %.0f | %.0f | 1.00 | %.0f | %.1f |\n",
		       depths[d], pct(&sm->f[0], 0.50), alone, total_iops(sm),
		       total_mbs(sm));
		sim_reset_results(sm);
		for (p = 0; p < 3; p++) {
			w2_one(sm, seed, ms, policies[p], depths[d], "0", alone);
			if (p) {
				w2_one(sm, seed, ms, policies[p], depths[d],
				       "5000", alone);
				w2_one(sm, seed, ms, policies[p], depths[d],
				       NULL, alone);
			}
		}
	}
}

static void w5(struct sim *sm, u64 seed, u64 ms)
{
	struct sim_cfg c = { .depth = 16, .secs_ms = ms };
	double mn, mx, x, p99max;
	int p, i;

	printf("\nW5: 1,000 flows, each 1 outstanding random 4 KiB sync read (no think time), device D=16\n\n");
	printf("| policy | Jain | min MB/s | max MB/s | worst flow p99 us | total MB/s |\n");
	printf("|---|---|---|---|---|---|\n");
	for (p = 0; p < 4; p++) {
		sim_flows(sm, 1000);
		for (i = 0; i < 1000; i++)
			sim_flow(sm, i, 1, 4096, FQ_REQ_SYNC, 0, 0);
		c.policy = policies[p < 3 ? p : 2];
		c.buckets = p == 3 ? "1024" : NULL;
		sim_run(sm, &c, seed);
		mn = 1e30;
		mx = 0;
		p99max = 0;
		for (i = 0; i < 1000; i++) {
			x = (double)sm->f[i].done_bytes / window_s(sm) / 1e6;
			mn = x < mn ? x : mn;
			mx = x > mx ? x : mx;
			x = pct(&sm->f[i], 0.99);
			p99max = x > p99max ? x : p99max;
		}
		printf("| %s | %.4f | %.3f | %.3f | %.0f | %.1f |\n",
		       p == 3 ? "sfq buckets=1024" : policies[p],
		       jain(sm), mn, mx, p99max, total_mbs(sm));
		sim_reset_results(sm);
	}
}

/*
 * W7 scale: N flows, each 1 outstanding random 4 KiB read, on a device
 * of 16 servers, cfq at depth 16.  Every key has a flow of its own (up to
 * max_flows), and the memory follows the flows that exist.  A flow
 * drains between its requests; one that owes a debt is kept, not built
 * again at its next request, so the flows created per I/O stay far
 * below one.
 */
static void w7(struct sim *sm, u64 seed, u64 ms)
{
	static const int nf[3] = { 16, 1024, SIM_MAX_FLOWS };
	struct sim_cfg c = { .policy = "cfq", .depth = 16, .secs_ms = ms,
			     .fairness = "time" };
	const struct fq_stats *st = &sm->st_end;
	double ios;
	int n, i;

	printf("\nW7 scale: N flows, each 1 outstanding random 4 KiB sync read (no think time), device D=16, cfq at depth 16, fairness=time, max_flows at its default\n\n");
	printf("| flows | Jain | I/Os per flow | total MB/s | flows at the end | flows created per I/O | requests in the overflow flow | mem_bytes at the end | per flow |\n");
	printf("|---|---|---|---|---|---|---|---|---|\n");
	for (n = 0; n < 3; n++) {
		sim_flows(sm, nf[n]);
		for (i = 0; i < nf[n]; i++)
			sim_flow(sm, i, 1, 4096, FQ_REQ_SYNC, 0, 0);
		sim_run(sm, &c, seed);
		for (i = 0, ios = 0; i < nf[n]; i++)
			ios += (double)sm->f[i].done_bytes / 4096;
		printf("| %d | %.4f | %.1f | %.1f | %u | %.3f | %llu | %u | %.0f |\n",
		       nf[n], jain(sm), ios / nf[n], total_mbs(sm), st->flows,
		       st->c.enq_reqs ?
		       (double)st->flow_allocs / st->c.enq_reqs : 0,
		       (unsigned long long)st->overflow_enq, st->mem_bytes,
		       st->flows ? (double)st->mem_bytes / st->flows : 0);
		sim_reset_results(sm);
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct cost_run {
	struct fq_sched *s;
	struct fq_req *ring[64];
	unsigned int head, tail;
	u64 now, rng;
};

/* @n times: complete the oldest in flight, enqueue it again, dispatch. */
static void cost_loop(struct cost_run *cr, int n)
{
	struct fq_req *rq;
	int i;

	for (i = 0; i < n; i++) {
		cr->now += 1000;
		rq = cr->ring[cr->head++ & 63];
		fq_sched_complete(cr->s, rq, 0, cr->now);
		cr->rng ^= cr->rng << 13;
		cr->rng ^= cr->rng >> 7;
		cr->rng ^= cr->rng << 17;
		rq->sector = cr->rng & 0xffffff8;
		fq_sched_enqueue(cr->s, rq, cr->now);
		while ((rq = fq_sched_dispatch(cr->s, cr->now)))
			cr->ring[cr->tail++ & 63] = rq;
	}
}

/*
 * CPU cost of enqueue + dispatch + complete per request with @nflows
 * flows backlogged (2 requests each), depth 32.  After a warm-up, the
 * best of 5 timed runs (the host is shared; the minimum is the cost).
 */
static double cost_one(const char *pol, int nflows, u64 seed, u32 *mem)
{
	enum { WARM = 200000, RUN = 200000, REPEAT = 5 };
	struct fq_req *reqs = calloc((size_t)nflows * 2, sizeof(*reqs));
	struct cost_run cr = { .rng = seed | 1 };
	struct fq_req *rq;
	struct fq_stats st;
	double t0, best = 1e30;
	int i;

	cr.s = sim_sched_create(pol, seed);
	for (i = 0; i < nflows * 2; i++) {
		reqs[i].key = (u64)(i % nflows) * 7919 + 1;
		reqs[i].bytes = 4096;
		reqs[i].flags = FQ_REQ_SYNC;
		reqs[i].sector = (u64)i * 8;
		sim_enqueue(cr.s, &reqs[i], cr.now);
	}
	while ((rq = fq_sched_dispatch(cr.s, cr.now)))
		cr.ring[cr.tail++ & 63] = rq;
	cost_loop(&cr, WARM);
	for (i = 0; i < REPEAT; i++) {
		t0 = now_s();
		cost_loop(&cr, RUN);
		t0 = now_s() - t0;
		best = t0 < best ? t0 : best;
	}
	fq_sched_stats(cr.s, &st);
	*mem = st.mem_bytes;
	while (fq_sched_drain(cr.s))
		;
	while (cr.head != cr.tail)
		fq_sched_complete(cr.s, cr.ring[cr.head++ & 63], 0, cr.now);
	fq_sched_destroy(cr.s);
	free(reqs);
	return best * 1e9 / RUN;
}

static void cost(u64 seed)
{
	static const int nf[4] = { 10, 100, 1000, 10000 };
	double ns[3][4];
	u32 mem[4] = { 0 }, m, base;
	struct fq_sched *fresh = fq_sched_create("cfq", seed);
	struct fq_stats st;
	int p, i;

	fq_sched_stats(fresh, &st);
	base = st.mem_bytes;
	fq_sched_destroy(fresh);

	printf("\nW5 cost: enqueue + dispatch + complete per request [ns of thread CPU time on this host, best of 5], "
	       "every flow backlogged, depth 32, max_flows at its default\n\n");
	printf("| policy | 10 flows | 100 flows | 1,000 flows | 10,000 flows |\n");
	printf("|---|---|---|---|---|\n");
	for (p = 0; p < 3; p++) {
		for (i = 0; i < 4; i++) {
			ns[p][i] = cost_one(policies[p], nf[i], seed, &m);
			if (!strcmp(policies[p], "cfq"))
				mem[i] = m;
		}
		printf("| %s | %.0f | %.0f | %.0f | %.0f |\n", policies[p],
		       ns[p][0], ns[p][1], ns[p][2], ns[p][3]);
	}
	printf("\nMemory (cfq; flows are created as keys appear, the flow table grows with them): "
	       "struct fq_flow %zu bytes, a new instance %u bytes; with", fq_sched_flow_size(), base);
	for (i = 0; i < 4; i++)
		printf("%s %d flows %u (%.0f more per flow)", i ? "," : "",
		       nf[i], mem[i], (double)(mem[i] - base) / nf[i]);
	printf("\n");
}

/*
 * ---- Device sections: the scheduler's depth vs the device's concurrency.
 *
 * The scheduler sends requests to a sim_dev model (sim_dev.h) instead of
 * serving them itself: what it lets below waits in the device's own FIFO.
 * An adaptive row runs the core at depth=auto (seeded with the row's
 * depth, at most its depth_max) and a "device time" row at fairness=time:
 * the core's own controller and cost model, fed by fq_sched_complete(),
 * as in the kernel driver.
 */


static void dev_set_depth(struct sim *sm, struct dev_run *dr, u32 d)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%u", d);
	fq_sched_set(sm->s, "depth", buf);
	dr->depth = d;
}

/* @f's burst of read-ahead before its next request, as far as reqs last */
static void dev_issue_ra(struct sim *sm, struct dev_run *dr, int fi)
{
	struct sim_flow *f = &sm->f[fi];
	struct dev_req *r;
	int i;

	for (i = 0; i < SIM_RA_BURST && dr->free; i++) {
		r = dr->free;
		dr->free = r->next_free;
		memset(&r->rq, 0, sizeof(r->rq));
		r->rq.key = f->key;
		r->rq.bytes = 4096;
		r->rq.flags = FQ_REQ_SYNC | FQ_REQ_RAHEAD;
		r->rq.sector = (sim_rand(sm) % (1ull << 30)) & ~7ull;
		r->io.sector = r->rq.sector;
		r->io.bytes = r->rq.bytes;
		r->io.write = false;
		r->io.priv = r;
		r->flow = fi;
		r->ra = true;
		r->submit_ns = sm->now;
		sim_enqueue(sm->s, &r->rq, sm->now);
	}
}

static bool dev_async_write(const struct sim_flow *f)
{
	return (f->flags & (FQ_REQ_WRITE | FQ_REQ_SYNC)) == FQ_REQ_WRITE;
}

static void dev_issue(struct sim *sm, struct dev_run *dr, int fi)
{
	struct sim_flow *f = &sm->f[fi];
	struct dev_req *r;

	if (f->limit && f->issued >= f->limit)
		return;
	if (f->ra_every && f->issued % f->ra_every == 0)
		dev_issue_ra(sm, dr, fi);
	r = dr->free;
	dr->free = r->next_free;
	r->ra = false;
	memset(&r->rq, 0, sizeof(r->rq));
	r->rq.key = f->key_per_req ? f->key + ((u64)f->issued << 20) : f->key;
	r->rq.bytes = f->vary_size ? f->bytes * (1 + f->issued % 4) : f->bytes;
	r->rq.flags = f->flags;
	r->rq.ioprio = f->ioprio;
	if (dev_async_write(f)) {
		/* a flusher: cut where the core says, wait for room */
		if (!f->piece)
			f->piece = fq_sched_async_piece(sm->s, r->rq.bytes);
		r->rq.bytes = f->piece;
		if (!fq_sched_may_queue(sm->s, &r->rq)) {
			r->next_free = dr->free;
			dr->free = r;
			f->refused++;
			return;
		}
		f->piece = 0;
	}
	f->issued++;
	if (f->sequential) {
		r->rq.sector = f->next_sector;
		f->next_sector += r->rq.bytes / 512;
	} else {
		r->rq.sector = (sim_rand(sm) % (1ull << 30)) & ~7ull;
	}
	r->io.sector = r->rq.sector;
	r->io.bytes = r->rq.bytes;
	r->io.write = f->flags & FQ_REQ_WRITE;
	r->io.priv = r;
	r->flow = fi;
	r->submit_ns = sm->now;
	sim_enqueue(sm->s, &r->rq, sm->now);
}

/* Async writers the core refused: their requests again, while it takes them. */
static void dev_refused(struct sim *sm, struct dev_run *dr)
{
	struct sim_flow *f;
	int i;

	for (i = 0; i < sm->nflows; i++) {
		f = &sm->f[i];
		while (f->refused) {
			u32 left = --f->refused;

			dev_issue(sm, dr, i);
			if (f->refused > left)
				break;	/* refused again */
		}
	}
}

static void dev_pump(struct sim *sm, struct dev_run *dr)
{
	struct fq_req *rq;
	struct dev_req *r;
	u64 t;

	dev_refused(sm, dr);
	while ((rq = fq_sched_dispatch(sm->s, sm->now))) {
		r = (struct dev_req *)((char *)rq - offsetof(struct dev_req, rq));
		if (dr->c->transit_ns)
			ev_push(sm, sm->now + dr->c->transit_ns, EV_DEVSUB, r, 0);
		else
			sim_dev_submit(&dr->dev, &r->io, sm->now);
	}
	t = fq_sched_next_event(sm->s, sm->now);
	if (t > sm->now && t != sm->last_timer) {
		ev_push(sm, t, EV_TIMER, NULL, 0);
		sm->last_timer = t;
	}
}

static void dev_done(struct sim *sm, struct dev_run *dr, struct dev_req *r)
{
	struct sim_flow *f = &sm->f[r->flow];
	int fi = r->flow;
	struct fq_stats st;

	fq_sched_complete(sm->s, &r->rq, 0, sm->now);
	if (dr->c->adaptive) {
		fq_sched_stats(sm->s, &st);
		dr->depth = st.depth_now;
	}
	if (r->ra) {
		r->next_free = dr->free;
		dr->free = r;
		return;
	}
	f->completed++;
	f->last_done_ns = sm->now;
	if (sm->now >= sm->warm_ns) {
		f->done_reqs++;
		f->done_bytes += r->io.bytes;
		f->dev_ns += r->io.done_ns - r->io.start_ns;
		if (f->nlat == f->maxlat) {
			f->maxlat = f->maxlat ? f->maxlat * 2 : 4096;
			f->lat = realloc(f->lat, f->maxlat * sizeof(u64));
		}
		f->lat[f->nlat++] = sm->now - r->submit_ns;
		dr->depth_sum += dr->depth;
		dr->depth_n++;
		if (dr->depth < dr->depth_lo)
			dr->depth_lo = dr->depth;
		if (dr->depth > dr->depth_hi)
			dr->depth_hi = dr->depth;
	}
	r->next_free = dr->free;
	dr->free = r;
	if (f->think_ns)
		ev_push(sm, sm->now + f->think_ns, EV_ARRIVE, NULL, fi);
	else
		dev_issue(sm, dr, fi);
}

/*
 * window_ns: begin the measuring window once warm_ms has passed and
 * warm_reqs requests have completed in a row with no flow boosted (after
 * secs_ms, whatever the boost does), and start the flows that wait for it.
 */
static void dev_window(struct sim *sm, struct dev_run *dr)
{
	const struct dev_cfg *c = dr->c;
	struct fq_stats st;
	bool boosted;
	u64 done = 0;
	int i, j;

	if (sm->now < c->warm_ms * MS)
		return;
	for (i = 0; i < sm->nflows; i++)
		done += sm->f[i].completed;
	fq_sched_stats(sm->s, &st);
	boosted = st.boost_starts > st.boost_end_time + st.boost_end_budget +
		  st.boost_end_kind + st.boost_end_size + st.boost_end_depth;
	if (boosted)
		dr->calm_from = done + 1;
	if (boosted ? sm->now < c->secs_ms * MS :
	    done < (dr->calm_from ? dr->calm_from - 1 : 0) + c->warm_reqs)
		return;
	dr->window_from_ns = sm->now;
	dr->boost_left = boosted;
	sm->warm_ns = sm->now;
	sm->end_ns = sm->now + c->window_ns;
	for (i = 0; i < sm->nflows; i++) {
		if (sm->f[i].start_ns != SIM_START_WINDOW)
			continue;
		sm->f[i].start_ns = sm->now;
		for (j = 0; j < sm->f[i].depth; j++)
			dev_issue(sm, dr, i);
	}
}

void dev_run(struct sim *sm, struct dev_run *dr, const struct sim_dev *model,
	     const struct dev_cfg *c, u64 seed)
{
	struct sim_ev e;
	struct sim_io *io;
	size_t total = 0;
	u64 tdev, next_trace = 0;
	bool changed = false;
	int i, j;

	memset(dr, 0, sizeof(*dr));
	dr->dev = *model;
	dr->dev.svc = NULL;
	dr->dev.maxsvc = 0;
	sim_dev_reset(&dr->dev);
	dr->c = c;
	dr->depth_lo = ~0u;
	sm->s = sim_sched_create(c->policy, seed);
	fq_sched_set(sm->s, "fairness", c->fairness ? c->fairness : "requests");
	if (c->idle_us)
		fq_sched_set(sm->s, "idle_us", c->idle_us);
	if (!c->boost_ms || strcmp(c->boost_ms, "default"))
		fq_sched_set(sm->s, "boost_ms", c->boost_ms ? c->boost_ms : "0");
	if (c->adaptive) {
		char buf[16];

		snprintf(buf, sizeof(buf), "%u", c->depth_max);
		fq_sched_set(sm->s, "depth_max", buf);
		fq_sched_set(sm->s, "depth", "auto");
		fq_sched_seed_depth(sm->s, c->depth);
	} else {
		dev_set_depth(sm, dr, c->depth);
	}
	for (i = 0; c->set && c->set[i]; i += 2)
		if (fq_sched_set(sm->s, c->set[i], c->set[i + 1]))
			fprintf(stderr, "fq_sim: %s=%s refused\n", c->set[i],
				c->set[i + 1]);
	if (c->adaptive) {
		fq_sched_stats(sm->s, &dr->st);
		dr->depth = dr->st.depth_now;
	}
	for (i = 0; i < sm->nflows; i++) {
		total += (size_t)sm->f[i].depth;
		if (sm->f[i].ra_every)
			total += 4 * SIM_RA_BURST;
		sm->f[i].next_sector = (u64)i << 28;
	}
	dr->reqs = calloc(total, sizeof(*dr->reqs));
	for (i = 0; i < (int)total; i++) {
		dr->reqs[i].next_free = dr->free;
		dr->free = &dr->reqs[i];
	}
	sim_start_clock(sm, c->secs_ms, seed);
	if (c->warm_ms)
		sm->warm_ns = c->warm_ms * MS;
	if (c->window_ns) {
		/* the window begins in dev_window() */
		sm->warm_ns = UINT64_MAX;
		sm->end_ns = UINT64_MAX - 1;
	}
	for (i = 0; i < sm->nflows; i++) {
		sm->f[i].issued = sm->f[i].completed = 0;
		sm->f[i].refused = sm->f[i].piece = 0;
		for (j = 0; j < sm->f[i].depth; j++) {
			if (sm->f[i].start_ns == SIM_START_WINDOW)
				break;
			if (sm->f[i].start_ns)
				ev_push(sm, sm->f[i].start_ns, EV_ARRIVE, NULL, i);
			else
				dev_issue(sm, dr, i);
		}
	}
	if (c->window_ns)
		dev_window(sm, dr);
	dev_pump(sm, dr);
	for (;;) {
		if (c->stop_on_limit) {
			for (i = 0; i < sm->nflows; i++)
				if (sm->f[i].limit &&
				    sm->f[i].completed < sm->f[i].limit)
					break;
			if (i == sm->nflows)
				break;
		}
		tdev = sim_dev_next(&dr->dev);
		if (sm->nheap && sm->heap[0].t < tdev) {
			if (sm->heap[0].t > sm->end_ns)
				break;
			e = ev_pop(sm);
			sm->now = e.t;
			if (e.type == EV_ARRIVE)
				dev_issue(sm, dr, e.flow);
			else if (e.type == EV_DEVSUB)
				sim_dev_submit(&dr->dev,
					       &((struct dev_req *)e.p)->io, sm->now);
			else if (e.type == EV_DEVDONE)
				dev_done(sm, dr, e.p);
		} else {
			if (tdev > sm->end_ns)
				break;
			if (tdev > sm->now)
				sm->now = tdev;
			io = sim_dev_pop(&dr->dev, sm->now);
			if (io && dr->c->transit_ns)
				ev_push(sm, sm->now + dr->c->transit_ns, EV_DEVDONE,
					io->priv, 0);
			else if (io)
				dev_done(sm, dr, io->priv);
		}
		if (c->change_ms && !changed && sm->now >= c->change_ms * MS) {
			dr->dev.servers = c->change_servers;
			changed = true;
		}
		if (c->trace && sm->now >= next_trace && dr->ntrace < DEV_TRACE) {
			dr->trace_c[dr->ntrace] = dr->dev.servers;
			dr->trace_d[dr->ntrace++] = dr->depth;
			next_trace += 100 * MS;
		}
		if (c->tick && sm->now >= next_trace) {
			c->tick(sm, dr);
			while (next_trace <= sm->now)
				next_trace += c->tick_ns;
		}
		if (c->window_ns && sm->warm_ns == UINT64_MAX)
			dev_window(sm, dr);
		dev_pump(sm, dr);
	}
	fq_sched_stats(sm->s, &dr->st);
	dr->idle_waits = dr->st.idle_waits;
	while (fq_sched_drain(sm->s))
		;
	/* requests in transit: onto the device, or completed */
	while (sm->nheap) {
		e = ev_pop(sm);
		if (e.type == EV_DEVSUB)
			sim_dev_submit(&dr->dev, &((struct dev_req *)e.p)->io,
				       sm->now);
		else if (e.type == EV_DEVDONE)
			fq_sched_complete(sm->s, &((struct dev_req *)e.p)->rq,
					  0, sm->now);
	}
	while ((tdev = sim_dev_next(&dr->dev)) != UINT64_MAX) {
		io = sim_dev_pop(&dr->dev, tdev);
		if (io)
			fq_sched_complete(sm->s, &((struct dev_req *)io->priv)->rq,
					  0, tdev);
	}
	fq_sched_destroy(sm->s);
	sim_dev_free(&dr->dev);
	free(dr->reqs);
}

/* A read of @bytes as the core's fitted model prices it [us]. */
static double dev_cost_us(const struct fq_stats *st, u32 bytes)
{
	return (st->cost_a_ns[0] + st->cost_b_ps_per_byte[0] * bytes / 1000) / 1000.0;
}

double flow_mbs(const struct sim *sm, int i)
{
	return (double)sm->f[i].done_bytes / window_s(sm) / 1e6;
}

/* The W2-like mix: S, one QD1 4 KiB random reader; three heavy flows. */
static void dev_mix(struct sim *sm, bool heavy_writes)
{
	int i;

	sim_flows(sm, 4);
	sim_flow(sm, 0, 1, 4096, FQ_REQ_SYNC, 0, 0);
	for (i = 1; i < 4; i++) {
		if (heavy_writes)
			sim_flow(sm, i, 32, 64 << 10, FQ_REQ_WRITE, 0, 0);
		else
			sim_flow(sm, i, 32, 4096, FQ_REQ_SYNC, 0, 0);
	}
}

struct dev_model {
	const char *what;
	struct sim_dev m;
	u32 c;			/* the small fixed depth to compare */
	u64 ms;			/* simulated time per run */
	bool heavy_writes;
};

static const struct dev_model dev_models[] = {
	{ "virtio + QEMU throttle",
	  { .kind = SIM_DEV_FIFO, .servers = 2, .req_ns = 100000, .byte_ps = 1000 },
	  2, 2000, false },
	{ "cloud volume",
	  { .kind = SIM_DEV_BUCKET, .servers = 64, .req_ns = 500000, .byte_ps = 1000,
	    .iops = 3000, .bps = 125000000, .burst_div = 100 },
	  2, 4000, false },
	{ "hard disk",
	  { .kind = SIM_DEV_SEEK, .servers = 1, .byte_ps = 5000, .seek_ns = 8000000,
	    .rot_ns = 8333333, .span = 1ull << 30 },
	  1, 60000, false },
	{ "SSD",
	  { .kind = SIM_DEV_SSD, .servers = 32, .req_ns = 80000, .byte_ps = 500,
	    .qd_ns = 5000 },
	  8, 2000, false },
	{ "write cache (heavy flows write 64 KiB)",
	  { .kind = SIM_DEV_WCACHE, .servers = 4, .req_ns = 100000, .byte_ps = 1000,
	    .cache_bytes = 64ull << 20, .drain_bps = 200000000 },
	  4, 4000, true },
};

/* MB/s of each flow of the mix alone: no scheduling, no depth limit. */
static void dev_alone(struct sim *sm, const struct dev_model *dm, u64 seed,
		      double *alone, int n)
{
	struct dev_cfg c = { .policy = "fifo", .depth = 4096, .secs_ms = dm->ms };
	struct sim_flow keep;
	struct dev_run dr;
	int i;

	for (i = 0; i < n; i++) {
		dev_mix(sm, dm->heavy_writes);
		keep = sm->f[i];
		sim_flows(sm, 1);
		sm->f[0] = keep;
		dev_run(sm, &dr, &dm->m, &c, seed);
		alone[i] = flow_mbs(sm, 0);
		sim_reset_results(sm);
	}
}

static void dev_table(struct sim *sm, u64 seed)
{
	struct dev_cfg cfg[7] = {
		{ .policy = "fifo", .depth = 32 },
		{ .policy = "cfq", .depth = 32 },
		{ .policy = "cfq" },
		{ .policy = "cfq", .depth = 1 },
		{ .policy = "cfq", .depth = 32, .adaptive = true, .depth_max = 128 },
		{ .policy = "cfq", .depth = 32, .adaptive = true, .depth_max = 128,
		  .fairness = "time" },
		{ .policy = "cfq", .depth = 32, .adaptive = true, .depth_max = 128,
		  .fairness = "time", .boost_ms = "default" },
	};
	double alone[4], x[4], sum, sq, mn, ref = 0, tot;
	struct dev_run dr;
	char name[128];
	unsigned int m;
	int k, i;

	printf("\nDEV: the W2-like mix on device models: S = 1 outstanding random 4 KiB read, "
	       "B1..B3 = 32 outstanding each; x N = (MB/s / MB/s alone) * 4, "
	       ">= 1.00 is at least a fair share of what the flow gets alone\n");
	for (m = 0; m < sizeof(dev_models) / sizeof(dev_models[0]); m++) {
		const struct dev_model *dm = &dev_models[m];

		dev_alone(sm, dm, seed, alone, 4);
		printf("\n%s: %s; S alone %.2f MB/s, B alone %.2f MB/s; %.1f s simulated\n\n",
		       dm->what, sim_dev_name(&dm->m, name, sizeof(name)),
		       alone[0], alone[1], dm->ms / 1000.0);
		printf("| scheduler | depth | S MB/s | S p99 us | S x N | worst B x N | Jain of x N | total MB/s | total / fifo 32 |\n");
		printf("|---|---|---|---|---|---|---|---|---|\n");
		for (k = 0; k < 7; k++) {
			if (k == 3 && dm->c == 1)
				continue;	/* the row above */
			cfg[k].secs_ms = dm->ms;
			if (!cfg[k].depth)
				cfg[k].depth = dm->c;
			dev_mix(sm, dm->heavy_writes);
			dev_run(sm, &dr, &dm->m, &cfg[k], seed);
			sum = sq = 0;
			mn = 1e30;
			for (i = 0; i < 4; i++) {
				x[i] = alone[i] > 0 ? 4 * flow_mbs(sm, i) / alone[i] : 0;
				sum += x[i];
				sq += x[i] * x[i];
				if (i && x[i] < mn)
					mn = x[i];
			}
			tot = total_mbs(sm);
			if (k == 0)
				ref = tot;
			if (cfg[k].adaptive)
				snprintf(name, sizeof(name), "adaptive%s%s %.1f [%u-%u]",
					 cfg[k].fairness ? ", device time" : "",
					 cfg[k].boost_ms ? ", boost" : "",
					 (double)dr.depth_sum / (dr.depth_n ? dr.depth_n : 1),
					 dr.depth_lo, dr.depth_hi);
			else
				snprintf(name, sizeof(name), "%u", cfg[k].depth);
			printf("| %s | %s | %.2f | %.0f | %.2f | %.2f | %.4f | %.1f | %.2f |\n",
			       cfg[k].policy, name, flow_mbs(sm, 0), pct(&sm->f[0], 0.99),
			       x[0], mn, sq > 0 ? sum * sum / (4 * sq) : 0, tot,
			       ref > 0 ? tot / ref : 0);
			sim_reset_results(sm);
			if (k == 2)
				cfg[k].depth = 0;
		}
	}
}

/* The controller alone: one backlogged reader, the depth over time. */
static void depth_table(struct sim *sm, u64 seed)
{
	static const struct { u32 from, to; } ch[] = { { 2, 8 }, { 8, 3 },
						       { 1, 24 } };
	struct sim_dev fifo = { .kind = SIM_DEV_FIFO, .req_ns = 100000,
				.byte_ps = 1000 };
	struct dev_cfg c = { .policy = "cfq", .depth = 32, .adaptive = true,
			     .depth_max = 128, .secs_ms = 2000,
			     .change_ms = 1000, .trace = true };
	static struct dev_run dr[3];
	unsigned int k;
	int t;

	printf("\nDEPTH: adaptive depth (seed 32, max 128) against a FIFO device of C servers "
	       "(100 us + 1 ns/B) whose C changes at 1.0 s; one reader keeps 64 random 4 KiB "
	       "reads outstanding; C and depth sampled every 100 ms\n\n");
	printf("| time s |");
	for (k = 0; k < 3; k++)
		printf(" C | depth |");
	printf("\n|---|");
	for (k = 0; k < 3; k++)
		printf("---|---|");
	printf("\n");
	for (k = 0; k < 3; k++) {
		fifo.servers = ch[k].from;
		c.change_servers = ch[k].to;
		sim_flows(sm, 1);
		sim_flow(sm, 0, 64, 4096, FQ_REQ_SYNC, 0, 0);
		dev_run(sm, &dr[k], &fifo, &c, seed);
		sim_reset_results(sm);
	}
	for (t = 0; t < dr[0].ntrace; t++) {
		printf("| %.1f |", t / 10.0);
		for (k = 0; k < 3; k++)
			printf(" %u | %u |", dr[k].trace_c[t], dr[k].trace_d[t]);
		printf("\n");
	}
	printf("\nDepth changes: %llu, %llu, %llu; saturated epochs judged: %llu, %llu, %llu\n",
	       (unsigned long long)dr[0].st.depth_changes,
	       (unsigned long long)dr[1].st.depth_changes,
	       (unsigned long long)dr[2].st.depth_changes,
	       (unsigned long long)dr[0].st.depth_epochs,
	       (unsigned long long)dr[1].st.depth_epochs,
	       (unsigned long long)dr[2].st.depth_epochs);
}

/*
 * Charging device time: a 1 MiB sequential reader and a 4 KiB random
 * reader, 4 outstanding each, depth 1 on one-server devices.
 */
static void devcost_table(struct sim *sm, u64 seed)
{
	static const struct { const char *what; struct sim_dev m; } devs[] = {
		{ "flash-like", { .kind = SIM_DEV_FIFO, .servers = 1,
				  .req_ns = 100000, .byte_ps = 1000 } },
		{ "hard disk", { .kind = SIM_DEV_SEEK, .servers = 1,
				 .byte_ps = 5000, .seek_ns = 8000000,
				 .rot_ns = 8333333, .span = 1ull << 30 } },
	};
	static const char *const names[2] = { "1 MiB seq", "4 KiB rand" };
	struct dev_cfg cfg[4] = {
		{ .policy = "fifo", .depth = 1 },
		{ .policy = "cfq", .depth = 1 },
		{ .policy = "cfq", .depth = 1, .fairness = "bytes" },
		{ .policy = "cfq", .depth = 1, .fairness = "time" },
	};
	static const char *const label[4] = { "fifo", "cfq requests",
					      "cfq bytes", "cfq device time" };
	double alone[2], tot_ns, x;
	struct dev_run dr;
	struct sim_flow keep;
	char name[128];
	unsigned int m;
	int k, i;

	printf("\nDEVCOST: charging device time (fq_cost) -- a 1 MiB sequential reader and "
	       "a 4 KiB random reader, 4 outstanding each, depth 1; \"device time\" = fairness=time "
	       "(the core's cost model; bytes until it exists)\n");
	for (m = 0; m < 2; m++) {
		u64 ms = m ? 20000 : 2000;

		for (i = 0; i < 2; i++) {
			struct dev_cfg c = { .policy = "fifo", .depth = 1, .secs_ms = ms };

			sim_flows(sm, 2);
			sim_flow(sm, 0, 4, 1 << 20, FQ_REQ_SYNC, 0, 0);
			sm->f[0].sequential = true;
			sim_flow(sm, 1, 4, 4096, FQ_REQ_SYNC, 0, 0);
			keep = sm->f[i];
			sim_flows(sm, 1);
			sm->f[0] = keep;
			dev_run(sm, &dr, &devs[m].m, &c, seed);
			alone[i] = flow_mbs(sm, 0);
			sim_reset_results(sm);
		}
		printf("\n%s: %s; alone: 1 MiB seq %.2f MB/s, 4 KiB rand %.2f MB/s; %.1f s simulated\n\n",
		       devs[m].what, sim_dev_name(&devs[m].m, name, sizeof(name)),
		       alone[0], alone[1], ms / 1000.0);
		printf("| charging | flow | MB/s | IOPS | device time share | x N |\n");
		printf("|---|---|---|---|---|---|\n");
		for (k = 0; k < 4; k++) {
			cfg[k].secs_ms = ms;
			sim_flows(sm, 2);
			sim_flow(sm, 0, 4, 1 << 20, FQ_REQ_SYNC, 0, 0);
			sm->f[0].sequential = true;
			sim_flow(sm, 1, 4, 4096, FQ_REQ_SYNC, 0, 0);
			dev_run(sm, &dr, &devs[m].m, &cfg[k], seed);
			tot_ns = (double)(sm->f[0].dev_ns + sm->f[1].dev_ns);
			for (i = 0; i < 2; i++) {
				x = alone[i] > 0 ? 2 * flow_mbs(sm, i) / alone[i] : 0;
				printf("| %s | %s | %.2f | %.0f | %.1f%% | %.2f |\n",
				       label[k], names[i], flow_mbs(sm, i),
				       (double)sm->f[i].done_reqs / window_s(sm),
				       tot_ns > 0 ? 100.0 * (double)sm->f[i].dev_ns / tot_ns : 0,
				       x);
			}
			if (k == 3)
				printf("\nModel fitted in that run: reads cost %.1f us + %.3f ns/B "
				       "(%s); 4 KiB %.1f us, 1 MiB %.1f us\n",
				       dr.st.cost_a_ns[0] / 1000.0,
				       dr.st.cost_b_ps_per_byte[0] / 1000.0,
				       dr.st.cost_b_ps_per_byte[0] ? "b fitted" : "b = 0",
				       dev_cost_us(&dr.st, 4096),
				       dev_cost_us(&dr.st, 1 << 20));
			sim_reset_results(sm);
		}
	}
}

/*
 * Anticipation and returning flows on the FIFO C=2 model (virtio + QEMU
 * throttle): S = one 4 KiB random sync reader, 1 outstanding, thinking
 * "think" after each completion, against B1..B3 (32 outstanding each);
 * fairq at depth 2 with anticipation off, the fixed 5000 us, and the
 * core's default.
 */
static void antic_mix(struct sim *sm, u64 think_ns)
{
	dev_mix(sm, false);
	sm->f[0].think_ns = think_ns;
}

static void antic_table(struct sim *sm, u64 seed)
{
	static const u64 thinks[] = { 0, 20 * US, 200 * US, 2 * MS };
	static const struct sim_dev m = { .kind = SIM_DEV_FIFO, .servers = 2,
					  .req_ns = 100000, .byte_ps = 1000 };
	struct dev_cfg cfg[4] = {
		{ .policy = "fifo", .depth = 32, .idle_us = "0" },
		{ .policy = "cfq", .depth = 2, .idle_us = "0" },
		{ .policy = "cfq", .depth = 2, .idle_us = "5000" },
		{ .policy = "cfq", .depth = 2 },
	};
	double alone[4], x, mn, ref = 0, tot;
	struct sim_flow keep;
	struct dev_run dr;
	unsigned int t;
	char buf[32];
	int k, i;

	printf("\nANTIC: S = 1 outstanding random 4 KiB sync read with think time, "
	       "B1..B3 = 32 outstanding each, FIFO C=2 (100 us + 1 ns/B), 4.0 s simulated; "
	       "x N = (MB/s / MB/s alone) * 4\n\n");
	printf("| S think us | scheduler | depth | idle_us | S MB/s | S x N | S p50 us | S p99 us | worst B x N | total MB/s | total / fifo 32 | idle waits |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (t = 0; t < sizeof(thinks) / sizeof(thinks[0]); t++) {
		for (i = 0; i < 4; i++) {
			struct dev_cfg c = { .policy = "fifo", .depth = 4096,
					     .secs_ms = 4000 };

			antic_mix(sm, thinks[t]);
			keep = sm->f[i];
			sim_flows(sm, 1);
			sm->f[0] = keep;
			dev_run(sm, &dr, &m, &c, seed);
			alone[i] = flow_mbs(sm, 0);
			sim_reset_results(sm);
		}
		for (k = 0; k < 4; k++) {
			cfg[k].secs_ms = 4000;
			antic_mix(sm, thinks[t]);
			dev_run(sm, &dr, &m, &cfg[k], seed);
			mn = 1e30;
			for (i = 1; i < 4; i++) {
				x = 4 * flow_mbs(sm, i) / alone[i];
				mn = x < mn ? x : mn;
			}
			tot = total_mbs(sm);
			if (k == 0)
				ref = tot;
			snprintf(buf, sizeof(buf), "%s", cfg[k].idle_us ?
				 cfg[k].idle_us : "default");
			printf("| %.0f | %s | %u | %s | %.2f | %.2f | %.0f | %.0f | %.2f | %.1f | %.2f | %llu |\n",
			       thinks[t] / 1000.0, cfg[k].policy, cfg[k].depth,
			       buf, flow_mbs(sm, 0), 4 * flow_mbs(sm, 0) / alone[0],
			       pct(&sm->f[0], 0.50), pct(&sm->f[0], 0.99), mn,
			       tot, ref > 0 ? tot / ref : 0,
			       (unsigned long long)dr.idle_waits);
			sim_reset_results(sm);
		}
	}
}

/*
 * Interactive start-up: one sync reader reads STARTUP_FILES small files
 * (4, 8, 12, 16 KiB in turn, random places), one request at a time,
 * thinking 100 us between them (3 or 6 ms in the last rows: a
 * reader slowed by the CPUs it shares), alone and while ten sequential
 * readers stream 128 KiB requests, 8 outstanding each (a 1 MiB psync read
 * split to the lower device's limit), from 2.5 s before it starts; on a
 * nullb-lat-like device (2 servers, 4 ms per request whatever its size).
 * The core at its defaults (depth=auto seeded 2, fairness=time), with the
 * interactive boost off (boost_ms=0) and on; "one key per file" gives
 * every request a new key (a process per file, as cat file by file);
 * "inode read-ahead" puts 31 read-ahead requests before every 16th
 * request of the reader (ext4 reading an inode table block's worth of
 * inodes: the other blocks ahead, then the inode's own).
 */
enum { STARTUP_FILES = 200, STARTUP_STREAMERS = 10 };

static void startup_mix(struct sim *sm, bool loaded, bool key_per_req,
			u32 ra_every, u64 think_ns)
{
	int i, n = loaded ? 1 + STARTUP_STREAMERS : 1;

	sim_flows(sm, n);
	sim_flow(sm, 0, 1, 4096, FQ_REQ_SYNC, 0, think_ns);
	sm->f[0].limit = STARTUP_FILES;
	sm->f[0].start_ns = 2500 * MS;
	sm->f[0].vary_size = true;
	sm->f[0].key_per_req = key_per_req;
	sm->f[0].ra_every = ra_every;
	for (i = 1; i < n; i++) {
		sim_flow(sm, i, 8, 128 << 10, FQ_REQ_SYNC, 0, 0);
		sm->f[i].sequential = true;
	}
}

static void startup_table(struct sim *sm, u64 seed)
{
	static const struct sim_dev m = { .kind = SIM_DEV_FIFO, .servers = 2,
					  .req_ns = 4000000 };
	static const struct {
		const char *policy, *boost;
		bool key_per_req, adaptive;
		u32 ra_every;
		u64 think_ns;
	} rows[] = {
		{ "fifo", "0", false, false, 0, 100 * US },
		{ "cfq", "0", false, true, 0, 100 * US },
		{ "cfq", "default", false, true, 0, 100 * US },
		{ "cfq", "0", true, true, 0, 100 * US },
		{ "cfq", "default", true, true, 0, 100 * US },
		{ "fifo", "0", false, false, 16, 100 * US },
		{ "cfq", "0", false, true, 16, 100 * US },
		{ "cfq", "default", false, true, 16, 100 * US },
		{ "fifo", "0", false, false, 16, 3 * MS },
		{ "cfq", "0", false, true, 16, 3 * MS },
		{ "cfq", "default", false, true, 16, 3 * MS },
		{ "cfq", "default", false, true, 16, 6 * MS },
		{ "cfq", "default", false, true, 0, 6 * MS },
	};
	double ms[2], p99 = 0, smbs = 0;
	struct dev_run dr;
	char name[128];
	unsigned int k;
	int l, i;

	printf("\nSTARTUP: interactive start-up on %s (nullb-lat: 2 in service, 4 ms each); "
	       "a sync reader reads %d small files (4-16 KiB, random), one request at a time, "
	       "100 us think time (3 or 6 ms: a reader slowed by the CPUs it shares), alone and under %d sequential readers (128 KiB, 8 outstanding "
	       "each); the core at its defaults (depth=auto seeded 2, fairness=time), fifo at depth 32\n\n",
	       sim_dev_name(&m, name, sizeof(name)), STARTUP_FILES, STARTUP_STREAMERS);
	printf("| reader | scheduler | boost_ms | alone ms | loaded ms | loaded / alone | reader p99 ms (loaded) | streamers MB/s (loaded) | mean depth |\n");
	printf("|---|---|---|---|---|---|---|---|---|\n");
	for (k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		struct dev_cfg c = { .policy = rows[k].policy, .depth = 32,
				     .fairness = "time", .secs_ms = 60000,
				     .boost_ms = rows[k].boost,
				     .stop_on_limit = true, .warm_ms = 2500 };

		if (rows[k].adaptive) {
			c.adaptive = true;
			c.depth = 2;
			c.depth_max = 256;
		}
		for (l = 0; l < 2; l++) {
			startup_mix(sm, l, rows[k].key_per_req, rows[k].ra_every,
				    rows[k].think_ns);
			dev_run(sm, &dr, &m, &c, seed);
			ms[l] = sm->f[0].completed < STARTUP_FILES ? -1 :
				(double)(sm->f[0].last_done_ns - sm->f[0].start_ns) / 1e6;
			if (l) {
				p99 = pct(&sm->f[0], 0.99) / 1000.0;
				smbs = 0;
				for (i = 1; i < sm->nflows; i++)
					smbs += (double)sm->f[i].completed *
						sm->f[i].bytes;
				smbs = smbs / ((double)sm->now / 1e9) / 1e6;
			}
			sim_reset_results(sm);
		}
		printf("| %s%s | %s | %s | %.0f | %.0f | %.2f | %.1f | %.1f | %.1f |\n",
		       rows[k].ra_every ? "one key, inode read-ahead" :
		       rows[k].key_per_req ? "one key per file" : "one key",
		       rows[k].think_ns > 3 * MS ? ", 6 ms think" :
		       rows[k].think_ns > 100 * US ? ", 3 ms think" : "",
		       rows[k].policy, rows[k].policy[1] == 'i' ? "-" :
		       rows[k].boost,
		       ms[0], ms[1], ms[0] > 0 && ms[1] > 0 ? ms[1] / ms[0] : -1,
		       p99, smbs,
		       (double)dr.depth_sum / (dr.depth_n ? dr.depth_n : 1));
	}
}

/*
 * The bench's device-bound disks and workloads W1-W3 (bench/README.md),
 * fairq at its defaults (depth=auto seeded at 4, fairness=time, boost on)
 * against plain FIFO at depth 32 (what mq-deadline's queue does there):
 * s = MB/s with the others / MB/s alone, G = min s x N, total MB/s and
 * IOPS against the FIFO's, the depth the controller chose and the cost
 * model it fitted.  w3q1 is W3 with the 4 KiB reader at queue depth 1
 * (not a bench workload; SIM-DEVICES.md says what it shows).  On nullb-lat
 * W3's 1 MiB reads reach fairq split
 * into 128 KiB requests (null_blk's max_sectors), 32 outstanding; on the
 * virtio disk they stay whole.
 */
struct bench_dev {
	struct dev_model dm;
	u32 max_bytes;		/* the lower queue's largest request */
	u64 transit_ns;		/* each way (nbd: socket and server) */
};

struct bench_wl {
	const char *name;
	int n;
	struct { int depth; u32 bytes; bool seq; } f[4];
};

static const struct bench_wl bench_wls[] = {
	{ "w1", 4, { { 32, 4096, false }, { 32, 4096, false }, { 32, 4096, false },
		     { 32, 4096, false } } },
	{ "w2", 2, { { 1, 4096, false }, { 32, 4096, false } } },
	{ "w3", 2, { { 16, 4096, false }, { 4, 1 << 20, true } } },
	{ "w3q1", 2, { { 1, 4096, false }, { 4, 1 << 20, true } } },
};

static const struct bench_dev bench_devs[] = {
	{ { "nullb-lat (null_blk: 2 in service, 4 ms each, any size)",
	    { .kind = SIM_DEV_FIFO, .servers = 2, .req_ns = 4000000, .jitter_pct = 5 },
	    2, 6000, false }, 128 << 10, 0 },
	{ { "virtio (QEMU throttle 500 IOPS, 4 MiB/s; bucket avg/10)",
	    { .kind = SIM_DEV_BUCKET, .servers = 8, .req_ns = 100000, .byte_ps = 1000,
	      .iops = 500, .bps = 4194304, .burst_div = 10, .bill_after = true },
	    2, 12000, false }, 1 << 20, 0 },
	{ { "nbd (fairq-nbd --depth 2 --latency-us 4000 --bw 4; 1 ms each way)",
	    { .kind = SIM_DEV_FIFO, .servers = 2, .req_ns = 4000000, .byte_ps = 238419,
	      .jitter_pct = 5 },
	    2, 6000, false }, 128 << 10, 1000000 },
};

static void bench_mix(struct sim *sm, const struct bench_wl *w, u32 max_bytes,
		      int only)
{
	u32 bytes, parts;
	int i, k = 0;

	sim_flows(sm, only < 0 ? w->n : 1);
	for (i = 0; i < w->n; i++) {
		if (only >= 0 && i != only)
			continue;
		bytes = w->f[i].bytes < max_bytes ? w->f[i].bytes : max_bytes;
		parts = w->f[i].bytes / bytes;
		sim_flow(sm, k, w->f[i].depth * (int)parts, bytes, FQ_REQ_SYNC, 0, 0);
		sm->f[k++].sequential = w->f[i].seq;
	}
}

static void bench_table(struct sim *sm, u64 seed)
{
	const struct dev_cfg base[2] = {
		{ .policy = "fifo", .depth = 32 },
		{ .policy = "cfq", .depth = 4, .adaptive = true, .depth_max = 256,
		  .fairness = "time", .boost_ms = "default" },
	};
	static const char *const label[2] = { "fifo, depth 32", "fairq defaults" };
	double alone[4], s, g, ref_mbs = 0, ref_iops = 0;
	struct dev_run dr;
	struct dev_cfg c;
	char name[128];
	unsigned int m, w;
	int k, i;

	printf("\nBENCH: the bench's W1-W3 on its device-bound disks; s = MB/s with the others / "
	       "alone (alone: the same scheduler), G = min s x N\n");
	for (m = 0; m < sizeof(bench_devs) / sizeof(bench_devs[0]); m++) {
		const struct dev_model *dm = &bench_devs[m].dm;
		u32 max_bytes = bench_devs[m].max_bytes;

		printf("\n%s: %s; %.1f s simulated\n\n", dm->what,
		       sim_dev_name(&dm->m, name, sizeof(name)), dm->ms / 1000.0);
		printf("| wl | scheduler | s of each flow | G | total MB/s | IOPS | total / fifo | depth mean [lo-hi] | cost 4 KiB / 128 KiB us |\n");
		printf("|---|---|---|---|---|---|---|---|---|\n");
		for (w = 0; w < sizeof(bench_wls) / sizeof(bench_wls[0]); w++) {
			const struct bench_wl *wl = &bench_wls[w];

			for (k = 0; k < 2; k++) {
				char sbuf[64] = "";
				size_t off = 0;

				c = base[k];
				c.secs_ms = dm->ms;
				c.transit_ns = bench_devs[m].transit_ns;
				for (i = 0; i < wl->n; i++) {
					bench_mix(sm, wl, max_bytes, i);
					dev_run(sm, &dr, &dm->m, &c, seed);
					alone[i] = flow_mbs(sm, 0);
					sim_reset_results(sm);
				}
				bench_mix(sm, wl, max_bytes, -1);
				dev_run(sm, &dr, &dm->m, &c, seed);
				g = 1e9;
				for (i = 0; i < wl->n; i++) {
					s = alone[i] > 0 ? flow_mbs(sm, i) / alone[i] : 0;
					if (s * wl->n < g)
						g = s * wl->n;
					off += (size_t)snprintf(sbuf + off, sizeof(sbuf) - off,
								"%s%.2f", i ? " " : "", s);
				}
				if (!k) {
					ref_mbs = total_mbs(sm);
					ref_iops = total_iops(sm);
				}
				printf("| %s | %s | %s | %.2f | %.2f | %.0f | %.2f / %.2f | %.1f [%u-%u] | %.0f / %.0f |\n",
				       wl->name, label[k], sbuf, g, total_mbs(sm),
				       total_iops(sm),
				       ref_mbs > 0 ? total_mbs(sm) / ref_mbs : 0,
				       ref_iops > 0 ? total_iops(sm) / ref_iops : 0,
				       (double)dr.depth_sum / (dr.depth_n ? dr.depth_n : 1),
				       dr.depth_lo, dr.depth_hi,
				       dev_cost_us(&dr.st, 4096),
				       dev_cost_us(&dr.st, 128 << 10));
				sim_reset_results(sm);
			}
		}
	}
}

/*
 * WRITEBACK's configurations: no scheduling to speak of, the defaults
 * (writeback=yield), and writeback=fair (async writes scheduled like any
 * other request)
 */
static const struct sim_wb_cfg wb_cfgs[] = {
	{ "fifo, depth 32", "fifo", { { "depth", "32" }, { NULL, NULL } } },
	{ "cfq, defaults", "cfq", { { NULL, NULL } } },
	{ "cfq, writeback=fair", "cfq", { { "writeback", "fair" }, { NULL, NULL } } },
};

int main(int argc, char **argv)
{
	struct sim sm = { 0 };
	const char *only = NULL;
	u64 seed = 1, ms = 2000;
	int i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--family"))
			return sim_family_main(argc, argv);
	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--seed"))
			seed = strtoull(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--secs"))
			ms = (u64)(atof(argv[i + 1]) * 1000);
		else if (!strcmp(argv[i], "--only"))
			only = argv[i + 1];
	}
	if (only && (!strcmp(only, "DEVICES") || !strcmp(only, "DEV") ||
		     !strcmp(only, "DEPTH") || !strcmp(only, "DEVCOST") ||
		     !strcmp(only, "ANTIC") || !strcmp(only, "STARTUP") ||
		     !strcmp(only, "BENCH") || !strcmp(only, "WRITEBACK")))
		printf("fq_sim --seed %llu --only %s: device models of sim_dev.h, "
		       "model and simulated time given per table (first 10%% not measured)\n",
		       (unsigned long long)seed, only);
	else
		printf("fq_sim --seed %llu: device %llu us + %llu ns/byte per request, "
		       "%.1f s simulated per run (first 10%% not measured)\n",
		       (unsigned long long)seed,
		       (unsigned long long)(SIM_COST_REQ_NS / 1000),
		       (unsigned long long)(SIM_COST_BYTE_PS / 1000), ms / 1000.0);
	if (!only || !strcmp(only, "W1"))
		w1(&sm, seed, ms);
	if (!only || !strcmp(only, "W2"))
		w2(&sm, seed, ms);
	if (!only || !strcmp(only, "W3"))
		w3(&sm, seed, ms);
	if (!only || !strcmp(only, "W4"))
		w4(&sm, seed, ms);
	if (!only || !strcmp(only, "W5"))
		w5(&sm, seed, ms);
	if (!only || !strcmp(only, "W7"))
		w7(&sm, seed, ms);
	if (!only || !strcmp(only, "COST"))
		cost(seed);
	/* device sections: only when asked for */
	if (only && (!strcmp(only, "DEVICES") || !strcmp(only, "DEV")))
		dev_table(&sm, seed);
	if (only && (!strcmp(only, "DEVICES") || !strcmp(only, "DEPTH")))
		depth_table(&sm, seed);
	if (only && (!strcmp(only, "DEVICES") || !strcmp(only, "DEVCOST")))
		devcost_table(&sm, seed);
	if (only && (!strcmp(only, "DEVICES") || !strcmp(only, "ANTIC")))
		antic_table(&sm, seed);
	if (only && (!strcmp(only, "DEVICES") || !strcmp(only, "STARTUP")))
		startup_table(&sm, seed);
	if (only && (!strcmp(only, "DEVICES") || !strcmp(only, "BENCH")))
		bench_table(&sm, seed);
	if (only && !strcmp(only, "WRITEBACK"))
		sim_wb_table(wb_cfgs, sizeof(wb_cfgs) / sizeof(wb_cfgs[0]), seed);
	sim_reset_results(&sm);
	free(sm.f);
	free(sm.heap);
	return fq_env_warnings ? 1 : 0;
}
