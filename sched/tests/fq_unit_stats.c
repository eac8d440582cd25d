// SPDX-License-Identifier: GPL-2.0
/*
 * fq_unit_stats.c - fq_sched_stats() and the flows list: the counters,
 * the busiest-first list, and the walk over the flows that exist, in
 * steps with flows coming and going between them.
 */
#include "fq_unit.h"

static void t_stats(void)
{
	struct fq_flow_info fi[3];
	struct fq_req *rq;
	struct fq_stats st;
	unsigned int n;
	int i;

	th_new("cfq");
	th_set("depth", "1");
	for (i = 0; i < 3; i++)
		th_enq(1, (u64)i, 4096, SYNC, 0);
	th_enq(2, 0, 65536, SYNC, BE(1));
	th_enq(3, 0, 512, SYNC, 0);
	for (i = 0; i < 5; i++) {
		th.now += 10 * MS;
		rq = th_disp();
		CHECK(rq != NULL);
		if (!rq)
			break;
		th.now += 1 * MS;
		th_done(rq, rq->key == 3 ? -5 : 0);
	}
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.c.enq_reqs, 5);
	CHECK_EQ(st.c.enq_bytes, 3 * 4096 + 65536 + 512);
	CHECK_EQ(st.c.disp_bytes, st.c.enq_bytes);
	CHECK_EQ(st.c.done_bytes, st.c.enq_bytes);
	CHECK_EQ(st.c.errors, 1);
	CHECK_EQ(st.c.svc_ns_sum, 5 * MS);
	CHECK_EQ(st.c.wait_ns_max, 54 * MS);
	CHECK_EQ(st.c.wait_ns_sum, (10 + 21 + 32 + 43 + 54) * MS);
	/* flows on demand: a few flows and a small table, not a pool */
	CHECK(st.mem_bytes < sizeof(struct fq_sched) + 64 * 1024);
	CHECK(fq_sched_flow_size() >= sizeof(struct fq_flow));
	/* flows are freed when drained: fill them again to list them */
	for (i = 0; i < 3; i++)
		th_enq((u64)i + 1, 0, 4096, SYNC, 0);
	n = fq_sched_flows(th.s, fi, 3);
	CHECK_EQ(n, 3);
	th_free();

	th_new("cfq");
	th_set("depth", "8");
	th_enq(1, 0, 4096, SYNC, 0);
	th_enq(2, 0, 65536, SYNC, BE(1));
	th_enq(3, 0, 512, SYNC, 0);
	th_enq(3, 1, 512, SYNC, 0);
	for (i = 0; i < 4; i++)
		th_disp();
	n = fq_sched_flows(th.s, fi, 3);
	CHECK_EQ(n, 3);
	CHECK_EQ(fi[0].key, 2);			/* busiest first */
	CHECK_EQ(fi[0].weight, 175);		/* level 1 */
	CHECK_EQ(fi[0].ioprio, BE(1));
	CHECK_EQ(fi[1].key, 1);
	CHECK_EQ(fi[2].key, 3);
	CHECK_EQ(fi[2].inflight, 2);
	CHECK_EQ(fi[2].c.disp_bytes, 1024);
	CHECK_EQ(fq_sched_flows(th.s, fi, 1), 1);
	CHECK_EQ(fi[0].key, 2);
	th_free();
}

/*
 * The reference the flows walk is checked against: @f into the list
 * @out of *@n of at most @max, by bytes dispatched, then key.
 */
static void ref_insert(const struct fq_flow *f, struct fq_flow_info *out,
		       unsigned int *n, unsigned int max)
{
	unsigned int i = *n;

	if (i == max) {
		if (out[max - 1].c.disp_bytes > f->c.disp_bytes ||
		    (out[max - 1].c.disp_bytes == f->c.disp_bytes &&
		     out[max - 1].key < f->key))
			return;
		i = max - 1;
	} else {
		(*n)++;
	}
	while (i > 0 && (out[i - 1].c.disp_bytes < f->c.disp_bytes ||
			 (out[i - 1].c.disp_bytes == f->c.disp_bytes &&
			  out[i - 1].key > f->key))) {
		out[i] = out[i - 1];
		i--;
	}
	out[i].key = f->key;
	out[i].queued = f->nr_queued + f->nr_batch;
	out[i].inflight = f->inflight;
	out[i].c = f->c;
}

/*
 * A walk of its own: every chain of the flow table (no orphans here),
 * then the overflow flow.
 */
static unsigned int ref_walk(struct fq_sched *s, struct fq_flow_info *out,
			     unsigned int max)
{
	unsigned int n = 0, i;
	struct fq_flow *f;

	for (i = 0; i < (1u << s->table->bits); i++)
		for (f = s->table->chain[i]; f; f = f->hnext)
			ref_insert(f, out, &n, max);
	if (s->overflow.c.enq_reqs || s->overflow.inflight)
		ref_insert(&s->overflow, out, &n, max);
	return n;
}

static void same_lists(const struct fq_flow_info *a, unsigned int na,
		       const struct fq_flow_info *b, unsigned int nb)
{
	unsigned int i;

	CHECK_EQ(na, nb);
	for (i = 0; i < na && i < nb; i++) {
		CHECK_EQ(a[i].key, b[i].key);
		CHECK_EQ(a[i].queued, b[i].queued);
		CHECK_EQ(a[i].inflight, b[i].inflight);
		CHECK_EQ(a[i].c.disp_bytes, b[i].c.disp_bytes);
		CHECK_EQ(a[i].c.enq_reqs, b[i].c.enq_reqs);
	}
}

/*
 * The flows walk visits the flows that exist: with max_flows 65536 and 3
 * flows it visits 3, and it lists what a walk over every chain of the
 * flow table lists (same order: bytes dispatched, then key).
 */
static void t_flows_walk_existing(void)
{
	struct fq_flow_info a[16], b[16];
	struct fq_flows_walk w;
	unsigned int n;
	int i;

	th_new("cfq");
	th_set("max_flows", "65536");
	th_set("depth", "4");
	th_enq(7, 0, 4096, SYNC, 0);
	th_enq(8, 8, 65536, SYNC, BE(1));
	th_enq(9, 16, 512, SYNC, 0);
	th_enq(9, 17, 512, SYNC, 0);
	for (i = 0; i < 3; i++)
		th_disp();
	fq_sched_flows_begin(th.s, &w, a, 16);
	CHECK(!fq_sched_flows_step(th.s, &w, ~0u));
	CHECK_EQ(w.visited, 3);
	CHECK_EQ(w.n, 3);
	n = ref_walk(th.s, b, 16);
	same_lists(a, w.n, b, n);
	CHECK_EQ(a[0].key, 8);
	th_free();

	/* 300 flows of distinct and equal byte counts, the top 16 */
	th_new("cfq");
	th_set("max_flows", "65536");
	th_set("depth", "4096");
	for (i = 0; i < 300; i++)
		th_enq((u64)(1000 + i * 7 % 300), (u64)i,
		       512u * (1 + (u32)i % 37), SYNC, 0);
	for (i = 0; i < 200; i++)
		th_disp();
	n = fq_sched_flows(th.s, a, 16);
	same_lists(a, n, b, ref_walk(th.s, b, 16));
	CHECK_EQ(n, 16);
	th_free();
}

/*
 * In steps, with the caller's lock dropped between them: flows freed and
 * created meanwhile.  Every flow that lives through the walk is listed
 * once; none twice; a later walk ends an earlier one.
 */
static void t_flows_walk_steps(void)
{
	struct fq_flow_info a[64], b[4];
	struct fq_flows_walk w, w2;
	struct fq_req *rq[40];
	unsigned int i, j, steps = 0;
	bool seen;

	th_new("cfq");
	th_set("depth", "64");
	for (i = 0; i < 40; i++)
		th_enq(100 + i, i, 4096, SYNC, 0);
	for (i = 0; i < 40; i++)
		rq[i] = th_disp();
	fq_sched_flows_begin(th.s, &w, a, 64);
	while (fq_sched_flows_step(th.s, &w, 3)) {
		steps++;
		/* between steps: one flow goes, a new one comes */
		if (steps < 10) {
			th_done(rq[steps * 4], 0);
			th_enq(500 + steps, 0, 4096, SYNC, 0);
		}
		CHECK(steps < 100);
		if (steps >= 100)
			break;
	}
	CHECK(steps >= 40 / 3);
	CHECK(w.visited <= 40 + 9);
	/* each of the 40 - 9 survivors exactly once, no key twice */
	for (i = 0; i < 40; i++) {
		bool gone = i % 4 == 0 && i / 4 >= 1 && i / 4 < 10;

		seen = false;
		for (j = 0; j < w.n; j++)
			if (a[j].key == 100 + i) {
				CHECK(!seen);
				seen = true;
			}
		if (!gone)
			CHECK(seen);
	}
	for (i = 0; i < w.n; i++)
		for (j = i + 1; j < w.n; j++)
			CHECK(a[i].key != a[j].key);
	CHECK_EQ(fq_check_invariants(th.s), 0);

	/* a second walk begun ends the first */
	fq_sched_flows_begin(th.s, &w, a, 64);
	CHECK(fq_sched_flows_step(th.s, &w, 1));
	fq_sched_flows_begin(th.s, &w2, b, 4);
	CHECK(!fq_sched_flows_step(th.s, &w, 1));
	CHECK_EQ(w.n, 1);
	while (fq_sched_flows_step(th.s, &w2, 5))
		;
	CHECK_EQ(w2.n, 4);
	th_free();
}

static const struct fq_test_case cases[] = {
	{ "stats", t_stats },
	{ "flows_walk_existing", t_flows_walk_existing },
	{ "flows_walk_steps", t_flows_walk_steps },
};

const struct fq_test_suite fq_unit_stats = { cases, ARRAY_SIZE(cases) };
