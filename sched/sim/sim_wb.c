// SPDX-License-Identifier: GPL-2.0
/*
 * sim_wb.c - the WRITEBACK table of the simulator: a bulk buffered copy
 * beside a commit log or a synchronous reader, on the device models of
 * sim_dev.h, through the core at its defaults.
 *
 * The copy is background writeback: async writes of WB_PIECE bytes,
 * submitted by a flusher that always has dirty pages and stops only
 * when the core says so (fq_sched_may_queue(), the back-pressure fairq.ko
 * applies to a submitter).
 *
 * A commit (write + fdatasync) is the caller's own 4 KiB sync data
 * write, then the journal's 4 KiB sync write (the journal thread: a flow
 * of its own, as jbd2 is under classify=tgid).  Under ordered-data
 * journaling that writes data in place (ext4 data=ordered without
 * unwritten extents, "ordered data" rows) the journal first waits for
 * every data write submitted before the commit began (here, every async
 * write the flusher had submitted by then).  ext4's default (delayed
 * allocation into unwritten extents, dioread_nolock) and xfs commit no
 * other file's data: the plain "commit log" rows.  The commit's latency
 * is from its first step to the journal write's end.
 *
 * The sync reader is a 4 KiB random reader at queue depth 1.
 *
 * Each process's slowdown s is its rate in the mix over its rate alone
 * on the same device and configuration; G = min s / share, the share
 * being 1/2, or weight over the weights' sum when the copy is given
 * weight 400 against the reader's 100 (a buffered writer of a heavier
 * cgroup beside a direct reader, as VM test 090 has it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fq_sched.h"
#include "sim.h"
#include "sim_wb.h"

#define WB_MS		1000000ull
#define WB_PIECE	(128u << 10)	/* a writeback bio */
#define WB_SMALL	4096u
#define WB_RING		(1u << 16)	/* async writes tracked for ordering */
#define WB_REQS		4096		/* requests the run may have out */
#define WB_HEAVY	400		/* a copy's weight against 100 */

enum wb_kind { WB_COPY, WB_DATA, WB_JOURNAL, WB_READ };
enum { WB_KEY_COPY = 1, WB_KEY_SYNC = 2, WB_KEY_JOURNAL = 3 };

struct wb_req {
	struct fq_req rq;
	struct sim_io io;
	enum wb_kind kind;
	u32 idx;			/* WB_COPY: its submission number */
	struct wb_req *next_free;
};

struct wb_run {
	struct fq_sched *s;
	struct sim_dev dev;
	struct wb_req *reqs, *free;
	u64 now, warm_ns, end_ns, timer_ns;
	u64 seed;
	bool copy_on, sync_on;
	u32 copy_weight;		/* the copy's weight, 0 = its level's */
	enum wb_kind sync_kind;		/* WB_DATA (commits) or WB_READ */
	bool ordered;			/* commits wait for earlier data */
	u64 copy_sector, copy_bytes;	/* in the window */
	u32 copy_piece;			/* cut, waiting for room (0: none) */
	/* ordering: copy writes submitted, and the first one not yet done */
	u32 a_issued, a_low;
	bool a_done[WB_RING];
	/* the commit or read in progress */
	bool waiting_order;		/* between data write and journal */
	u32 barrier;			/* a_issued when the commit began */
	u64 op_start;
	u64 ops, *lat;
	u32 nlat, maxlat;
};

static u64 wb_rand(struct wb_run *w)
{
	w->seed ^= w->seed << 13;
	w->seed ^= w->seed >> 7;
	w->seed ^= w->seed << 17;
	return w->seed;
}

static struct wb_req *wb_get(struct wb_run *w, enum wb_kind kind, u32 bytes)
{
	struct wb_req *r = w->free;

	if (!r)
		return NULL;
	w->free = r->next_free;
	memset(&r->rq, 0, sizeof(r->rq));
	memset(&r->io, 0, sizeof(r->io));
	r->kind = kind;
	r->rq.bytes = bytes;
	switch (kind) {
	case WB_COPY:
		r->rq.key = WB_KEY_COPY;
		r->rq.flags = FQ_REQ_WRITE;
		r->rq.weight = w->copy_weight;
		r->rq.sector = w->copy_sector;
		w->copy_sector += bytes / 512;
		break;
	case WB_DATA:
		r->rq.key = WB_KEY_SYNC;
		r->rq.flags = FQ_REQ_WRITE | FQ_REQ_SYNC;
		r->rq.sector = (1ull << 30) + (wb_rand(w) % (1ull << 20)) * 8;
		break;
	case WB_JOURNAL:
		r->rq.key = WB_KEY_JOURNAL;
		r->rq.flags = FQ_REQ_WRITE | FQ_REQ_SYNC;
		r->rq.sector = (3ull << 29) + (wb_rand(w) % (1ull << 16)) * 8;
		break;
	case WB_READ:
		r->rq.key = WB_KEY_SYNC;
		r->rq.flags = FQ_REQ_SYNC;
		r->rq.sector = (wb_rand(w) % (1ull << 27)) * 8;
		break;
	}
	r->io.sector = r->rq.sector;
	r->io.bytes = bytes;
	r->io.write = kind != WB_READ;
	r->io.priv = r;
	return r;
}

static void wb_put(struct wb_run *w, struct wb_req *r)
{
	r->next_free = w->free;
	w->free = r;
}

/* The flusher: submit copy writes while the core takes them. */
static void wb_flush(struct wb_run *w)
{
	struct wb_req *r;

	while (w->copy_on && w->a_issued - w->a_low < WB_RING / 2) {
		if (!w->copy_piece)
			w->copy_piece = fq_sched_async_piece(w->s, WB_PIECE);
		r = wb_get(w, WB_COPY, w->copy_piece);
		if (!r)
			return;
		if (!fq_sched_may_queue(w->s, &r->rq)) {
			wb_put(w, r);
			return;
		}
		w->copy_piece = 0;
		r->idx = w->a_issued++;
		w->a_done[r->idx % WB_RING] = false;
		fq_sched_enqueue(w->s, &r->rq, w->now);
	}
}

static void wb_sync_start(struct wb_run *w)
{
	struct wb_req *r = wb_get(w, w->sync_kind, WB_SMALL);

	if (!r)
		return;
	w->op_start = w->now;
	w->barrier = w->ordered ? w->a_issued : w->a_low;
	fq_sched_enqueue(w->s, &r->rq, w->now);
}

static void wb_journal(struct wb_run *w)
{
	struct wb_req *r = wb_get(w, WB_JOURNAL, WB_SMALL);

	w->waiting_order = false;
	if (r)
		fq_sched_enqueue(w->s, &r->rq, w->now);
}

static void wb_op_done(struct wb_run *w)
{
	if (w->now >= w->warm_ns) {
		w->ops++;
		if (w->nlat == w->maxlat) {
			w->maxlat = w->maxlat ? 2 * w->maxlat : 4096;
			w->lat = realloc(w->lat, w->maxlat * sizeof(*w->lat));
		}
		w->lat[w->nlat++] = w->now - w->op_start;
	}
	wb_sync_start(w);
}

static void wb_done(struct wb_run *w, struct wb_req *r)
{
	fq_sched_complete(w->s, &r->rq, 0, w->now);
	switch (r->kind) {
	case WB_COPY:
		if (w->now >= w->warm_ns)
			w->copy_bytes += r->rq.bytes;
		w->a_done[r->idx % WB_RING] = true;
		while (w->a_low != w->a_issued && w->a_done[w->a_low % WB_RING])
			w->a_low++;
		if (w->waiting_order && w->a_low >= w->barrier)
			wb_journal(w);
		break;
	case WB_DATA:
		if (w->a_low >= w->barrier)
			wb_journal(w);
		else
			w->waiting_order = true;
		break;
	case WB_JOURNAL:
	case WB_READ:
		wb_op_done(w);
		break;
	}
	wb_put(w, r);
}

static void wb_pump(struct wb_run *w)
{
	struct fq_req *rq;
	u64 t;

	wb_flush(w);
	while ((rq = fq_sched_dispatch(w->s, w->now))) {
		struct wb_req *r = (struct wb_req *)((char *)rq -
						     offsetof(struct wb_req, rq));

		sim_dev_submit(&w->dev, &r->io, w->now);
		wb_flush(w);
	}
	t = fq_sched_next_event(w->s, w->now);
	w->timer_ns = t > w->now ? t : UINT64_MAX;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

struct wb_result {
	double copy_mbs, ops_s, p99_ms;
	double read_ms, write_ms;	/* fairq's price of a read, a piece */
};

static void wb_run(const struct sim_dev *model, const struct sim_wb_cfg *c,
		   bool copy, bool sync, enum wb_kind sync_kind, bool ordered,
		   u32 copy_weight, u64 ms, u64 seed, struct wb_result *res)
{
	struct wb_run *w = calloc(1, sizeof(*w));
	struct fq_stats st;
	struct sim_io *io;
	struct fq_req *rq;
	u64 tdev;
	int i;

	w->dev = *model;
	w->dev.svc = NULL;
	w->dev.maxsvc = 0;
	sim_dev_reset(&w->dev);
	w->seed = seed | 1;
	w->s = sim_sched_create(c->policy, seed);
	for (i = 0; c->set[i][0]; i++)
		fq_sched_set(w->s, c->set[i][0], c->set[i][1]);
	fq_sched_seed_depth(w->s, model->servers);
	w->reqs = calloc(WB_REQS, sizeof(*w->reqs));
	for (i = 0; i < WB_REQS; i++)
		wb_put(w, &w->reqs[i]);
	w->end_ns = ms * WB_MS;
	w->warm_ns = w->end_ns / 10;
	w->copy_on = copy;
	w->copy_weight = copy_weight;
	w->sync_on = sync;
	w->sync_kind = sync_kind;
	w->ordered = ordered;
	w->timer_ns = UINT64_MAX;
	if (sync)
		wb_sync_start(w);
	wb_pump(w);
	for (;;) {
		tdev = sim_dev_next(&w->dev);
		if (w->timer_ns < tdev) {
			if (w->timer_ns > w->end_ns)
				break;
			w->now = w->timer_ns;
		} else {
			if (tdev > w->end_ns)
				break;
			if (tdev > w->now)
				w->now = tdev;
			while ((io = sim_dev_pop(&w->dev, w->now)))
				wb_done(w, io->priv);
		}
		wb_pump(w);
	}
	res->copy_mbs = w->copy_bytes / ((w->end_ns - w->warm_ns) / 1e9) / 1e6;
	res->ops_s = w->ops / ((w->end_ns - w->warm_ns) / 1e9);
	res->p99_ms = 0;
	if (w->nlat) {
		qsort(w->lat, w->nlat, sizeof(*w->lat), cmp_u64);
		res->p99_ms = w->lat[(u32)(0.99 * (w->nlat - 1))] / 1e6;
	}
	fq_sched_stats(w->s, &st);
	res->read_ms = sim_price_us(&st, false, WB_SMALL) / 1e3;
	res->write_ms = sim_price_us(&st, true, WB_PIECE) / 1e3;
	while ((rq = fq_sched_drain(w->s)))
		;
	while ((tdev = sim_dev_next(&w->dev)) != UINT64_MAX) {
		io = sim_dev_pop(&w->dev, tdev);
		if (io)
			fq_sched_complete(w->s, &((struct wb_req *)io->priv)->rq,
					  0, tdev);
	}
	fq_sched_destroy(w->s);
	sim_dev_free(&w->dev);
	free(w->reqs);
	free(w->lat);
	free(w);
}

struct wb_model {
	const char *what;
	struct sim_dev m;
	u64 ms;
};

static const struct wb_model wb_models[] = {
	{ "throttled volume (500 IOPS, 4 MiB/s, billed after)",
	  { .kind = SIM_DEV_BUCKET, .servers = 8, .req_ns = 100000,
	    .iops = 500, .bps = 4 << 20, .burst_div = 100, .bill_after = true },
	  20000 },
	{ "two servers x 4 ms",
	  { .kind = SIM_DEV_FIFO, .servers = 2, .req_ns = 4000000 },
	  10000 },
	{ "SSD",
	  { .kind = SIM_DEV_SSD, .servers = 32, .req_ns = 80000, .byte_ps = 500,
	    .qd_ns = 5000 },
	  10000 },
};

/*
 * @weight: the copy's weight against the other process's 100 (0: both
 * at the default level); G = min over the two of s / its share.
 */
static void wb_mix(const struct sim_wb_cfg *c, enum wb_kind kind,
		   bool ordered, u32 weight, const struct wb_model *wm, u64 seed)
{
	double sc, ss, g, copy_share = 0.5;
	struct wb_result copy, sync, both;
	char what[48];

	wb_run(&wm->m, c, true, false, kind, ordered, weight, wm->ms, seed,
	       &copy);
	wb_run(&wm->m, c, false, true, kind, ordered, weight, wm->ms, seed,
	       &sync);
	wb_run(&wm->m, c, true, true, kind, ordered, weight, wm->ms, seed,
	       &both);
	sc = copy.copy_mbs > 0 ? both.copy_mbs / copy.copy_mbs : 0;
	ss = sync.ops_s > 0 ? both.ops_s / sync.ops_s : 0;
	if (weight)
		copy_share = weight / (weight + 100.0);
	g = sc / copy_share < ss / (1 - copy_share) ?
	    sc / copy_share : ss / (1 - copy_share);
	snprintf(what, sizeof(what), "%s%s%s",
		 kind == WB_DATA ? "commit log" : "sync reader",
		 ordered ? ", ordered data" : "",
		 weight == WB_HEAVY ? ", copy at weight 400" : "");
	printf("| %s | %s | %.2f | %.2f (%.2f) | %.0f | %.0f (%.2f) | %.2f | %.1f | %.1f | %.2f / %.2f |\n",
	       c->what, what,
	       copy.copy_mbs, both.copy_mbs, sc, sync.ops_s, both.ops_s, ss, g,
	       sync.p99_ms, both.p99_ms, both.read_ms, both.write_ms);
}

void sim_wb_table(const struct sim_wb_cfg *cfgs, int ncfg, u64 seed)
{
	char name[96];
	size_t m;
	int i;

	printf("\n## WRITEBACK: a bulk buffered copy beside a commit log or a sync reader\n");
	for (m = 0; m < sizeof(wb_models) / sizeof(wb_models[0]); m++) {
		printf("\n%s: %s, %.0f s simulated per run\n\n", wb_models[m].what,
		       sim_dev_name(&wb_models[m].m, name, sizeof(name)),
		       wb_models[m].ms / 1000.0);
		printf("| config | beside the copy | copy alone MB/s | copy in the mix MB/s (s) "
		       "| ops/s alone | ops/s in the mix (s) | G | p99 ms alone | p99 ms in the mix "
		       "| fairq's price in the mix, ms: 4 KiB / 128 KiB write |\n");
		printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
		for (i = 0; i < ncfg; i++) {
			wb_mix(&cfgs[i], WB_DATA, false, 0, &wb_models[m], seed);
			wb_mix(&cfgs[i], WB_DATA, true, 0, &wb_models[m], seed);
			wb_mix(&cfgs[i], WB_READ, false, 0, &wb_models[m], seed);
			wb_mix(&cfgs[i], WB_READ, false, WB_HEAVY, &wb_models[m],
			       seed);
		}
	}
}
