// SPDX-License-Identifier: GPL-2.0
/*
 * fq_unit_depth.c - the dispatch depth: a fixed one, "auto" and its
 * seed and depth_max, the flag that says the depth limits, and
 * depth=auto under a device that completes in bursts.
 */
#include "fq_unit.h"

static void t_depth(void)
{
	struct fq_flow_info fi[4];
	struct fq_req *rq[8];
	struct fq_stats st;
	unsigned int n;
	int i;

	th_new("cfq");
	th_set("depth", "4");
	for (i = 0; i < 10; i++)
		th_enq((u64)(i & 1), (u64)i, 4096, SYNC, 0);
	for (i = 0; i < 4; i++) {
		rq[i] = th_disp();
		CHECK(rq[i] != NULL);
	}
	CHECK(th_disp() == NULL);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.inflight, 4);
	CHECK_EQ(st.queued, 6);
	n = fq_sched_flows(th.s, fi, 4);
	CHECK_EQ(n, 2);
	CHECK_EQ(fi[0].inflight + fi[1].inflight, 4);
	CHECK_EQ(fi[0].queued + fi[1].queued, 6);
	th_done(rq[0], 0);
	CHECK(th_disp() != NULL);
	CHECK(th_disp() == NULL);
	th_set("depth", "1");		/* lower than in flight: nothing goes */
	th_done(rq[1], 0);
	CHECK(th_disp() == NULL);
	th_free();
}

/* "auto" and numbers, both ways; 0 and junk are refused. */
static void t_depth_auto_parse(void)
{
	th_new_defaults(NULL);
	th_get("depth", "auto\n");
	CHECK_EQ(th.s->depth_now, FQ_SCHED_DEPTH_SEED);
	th_set("depth", "7");
	th_get("depth", "7\n");
	CHECK_EQ(th.s->depth_now, 7);
	th_set("depth", "auto\n");
	th_get("depth", "auto\n");
	/* the controller starts again from the depth in force */
	CHECK_EQ(th.s->depth_now, 7);
	CHECK_EQ(th.s->dc.depth, 7);
	CHECK_EQ(fq_sched_set(th.s, "depth", "0"), -ERANGE);
	CHECK_EQ(fq_sched_set(th.s, "depth", "4097"), -ERANGE);
	CHECK_EQ(fq_sched_set(th.s, "depth", "Auto"), -EINVAL);
	CHECK_EQ(fq_sched_set(th.s, "depth", "auto7"), -EINVAL);
	CHECK_EQ(fq_sched_set(th.s, "depth", "auto\n\n"), -EINVAL);
	th_get("depth", "auto\n");
	th_set("depth", "4096");
	th_get("depth", "4096\n");
	th_free();
}

/*
 * A burst of completions before the caller refills (fairq.ko refills from
 * a work item) still counts as limited by the depth: the flag holds from
 * the dispatch that filled the depth until one finds room or nothing.
 */
static void t_depth_full_burst(void)
{
	struct fq_req *rq[4];
	int i;

	th_new(NULL);
	th_set("depth", "4");
	for (i = 0; i < 10; i++)
		th_enq(1, (u64)i * 8, 4096, SYNC, 0);
	for (i = 0; i < 4; i++)
		rq[i] = th_disp();
	CHECK(th.s->depth_full);
	for (i = 0; i < 3; i++)
		th_done(rq[i], 0);	/* a burst: no dispatch in between */
	CHECK(th.s->depth_full);
	while (th_disp())
		;
	CHECK(th.s->depth_full);	/* refilled to the depth */
	th_set("depth", "64");
	while (th_disp())
		;
	CHECK_EQ(th.nin, 7);		/* room, nothing left: not limited */
	CHECK(!th.s->depth_full);
	th_free();
}

/*
 * depth=auto started at 32 (above the seed cap: auto restarts from the
 * fixed depth in force) under a demand of 33 (one reader keeping 32
 * outstanding, one at queue depth 1) on a throttled device: a FIFO
 * inside, and every 1 ms the throttle releases the next 10
 * requests at once (QEMU's throttle group completes in bursts).  The core
 * refills after each completion of a burst, as the driver does, and each
 * process sends its next request 10 us after the burst.  So within a
 * burst only the first completion finds work waiting in the core, yet the
 * depth is what limits.  Within 2 s the depth must be down to [1, 20]
 * (at most two bursts; at 32 every request would queue inside the
 * device, where the core cannot order it), and the QD1 reader's requests
 * must then spend less than 3 ms below (32 queued would be 3.2 ms).
 */
static void t_depth_auto_demand_at_seed(void)
{
	static struct fq_req rq[33], *dev[33], *back[33];
	unsigned int head = 0, n = 0, nback, i, k;
	u64 tick, light_svc = 0, light_n = 0;
	struct fq_req *r;

	th_new_defaults(NULL);
	th_set("depth", "32");		/* auto from 32, above the seed cap */
	th_set("depth", "auto");
	CHECK_EQ(th.s->depth_now, 32);
	for (i = 0; i < 33; i++) {
		rq[i].key = i < 32 ? 1 : 2;
		rq[i].sector = (u64)i * 4096;
		rq[i].bytes = 4096;
		rq[i].flags = SYNC;
		fq_sched_enqueue(th.s, &rq[i], th.now);
	}
	while ((r = fq_sched_dispatch(th.s, th.now)))
		dev[(head + n++) % 33] = r;
	for (tick = 1; tick <= 4000; tick++) {
		th.now = tick * MS;
		nback = 0;
		for (k = 0; k < 10 && n; k++) {
			r = dev[head];
			head = (head + 1) % 33;
			n--;
			if (r->key == 2 && tick > 2000) {
				light_svc += th.now - r->dispatch_ns;
				light_n++;
			}
			fq_sched_complete(th.s, r, 0, th.now);
			back[nback++] = r;
			while ((r = fq_sched_dispatch(th.s, th.now)))
				dev[(head + n++) % 33] = r;
		}
		if (tick == 2000)
			CHECK(th.s->depth_now <= 20);
		th.now += 10 * US;
		for (i = 0; i < nback; i++) {
			back[i]->sector += 33 * 4096;
			fq_sched_enqueue(th.s, back[i], th.now);
		}
		while ((r = fq_sched_dispatch(th.s, th.now)))
			dev[(head + n++) % 33] = r;
	}
	fprintf(stderr, "  depth %u, %llu epochs, QD1 reader %llu us below\n",
		th.s->depth_now, (unsigned long long)th.s->dc.epochs,
		(unsigned long long)(light_n ? light_svc / light_n / US : 0));
	CHECK(th.s->depth_now <= 20);
	CHECK(light_n > 100);
	CHECK(light_svc < light_n * 3 * MS);
	while ((r = fq_sched_drain(th.s)))
		;
	while (n) {
		fq_sched_complete(th.s, dev[head], 0, th.now);
		head = (head + 1) % 33;
		n--;
	}
	CHECK_EQ(fq_check_invariants(th.s), 0);
	fq_sched_destroy(th.s);
	th.s = NULL;
}

/*
 * depth_max bounds auto (and only auto); the seed is the lower depth
 * capped at FQ_SCHED_DEPTH_SEED, clamped to depth_max.
 */
static void t_depth_max_seed(void)
{
	struct fq_stats st;

	th_new_defaults(NULL);
	th_get("depth_max", "256\n");
	fq_sched_seed_depth(th.s, 100000);
	CHECK_EQ(th.s->depth_now, FQ_SCHED_DEPTH_SEED);
	fq_sched_seed_depth(th.s, 0);
	CHECK_EQ(th.s->depth_now, 1);
	fq_sched_seed_depth(th.s, 2);
	CHECK_EQ(th.s->depth_now, 2);
	fq_sched_seed_depth(th.s, 64);
	CHECK_EQ(th.s->depth_now, FQ_SCHED_DEPTH_SEED);
	th_set("depth", "32");			/* auto again: starts from 32 */
	th_set("depth", "auto");
	CHECK_EQ(th.s->depth_now, 32);
	th_set("depth_max", "8");		/* below the depth: down to it */
	CHECK_EQ(th.s->depth_now, 8);
	CHECK_EQ(th.s->dc.depth_max, 8);
	fq_sched_seed_depth(th.s, 64);
	CHECK_EQ(th.s->depth_now, FQ_SCHED_DEPTH_SEED < 8 ?
		 FQ_SCHED_DEPTH_SEED : 8);
	th_set("depth", "8");
	th_set("depth", "auto");
	th_set("depth_max", "16");		/* above: the depth stays */
	CHECK_EQ(th.s->depth_now, 8);
	CHECK_EQ(th.s->dc.depth_max, 16);
	CHECK_EQ(fq_sched_set(th.s, "depth_max", "0"), -ERANGE);
	CHECK_EQ(fq_sched_set(th.s, "depth_max", "4097"), -ERANGE);
	th_set("depth", "100");		/* a number is not bounded by it */
	CHECK_EQ(th.s->depth_now, 100);
	fq_sched_seed_depth(th.s, 3);		/* nor seeded */
	CHECK_EQ(th.s->depth_now, 100);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.depth_now, 100);
	CHECK_EQ(st.depth_auto, 0);
	th_set("depth", "auto");
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.depth_auto, 1);
	CHECK_EQ(st.depth_now, 16);	/* from 100, at most depth_max */
	th_free();
}

static const struct fq_test_case cases[] = {
	{ "depth", t_depth },
	{ "depth_auto_parse", t_depth_auto_parse },
	{ "depth_max_seed", t_depth_max_seed },
	{ "depth_full_burst", t_depth_full_burst },
	{ "depth_auto_demand_at_seed", t_depth_auto_demand_at_seed },
};

const struct fq_test_suite fq_unit_depth = { cases, ARRAY_SIZE(cases) };
