// SPDX-License-Identifier: GPL-2.0
/*
 * fq_unit_time.c - fairness=time: shares of device time by the cost
 * model (fq_cost.c), the exchange rate used before a model exists, and
 * the charge asked when a request goes down.
 */
#include <stdlib.h>
#include "fq_unit.h"

/*
 * A single-server device under the unit harness: requests go one at a
 * time (the caller sets depth 1), each takes @a_ns + @b_ps * bytes /
 * 1000; every flow keeps its requests outstanding (re-queued when done).
 * Returns the device time each key got between @from_ns and @to_ns.
 */
struct dev_flow {
	u64 key;
	u32 bytes;
	int qd;
	u32 flags;		/* 0: SYNC (reads) */
	u64 got_ns;
};

static void dev_run(struct dev_flow *f, int nf, u64 a_ns, u64 b_ps,
		    u64 from_ns, u64 to_ns)
{
	struct fq_req *busy = NULL, *rq;
	u64 done_at = 0, cost;
	int i, j;

	for (i = 0; i < nf; i++)
		for (j = 0; j < f[i].qd; j++)
			th_enq(f[i].key, (u64)(i * 1000000 + j * 4096),
			       f[i].bytes, f[i].flags ? f[i].flags : SYNC, 0);
	while (th.now < to_ns) {
		if (!busy) {
			busy = th_disp();
			CHECK(busy != NULL);
			if (!busy)
				return;
			done_at = th.now + a_ns + busy->bytes * b_ps / 1000;
		}
		th.now = done_at;
		rq = busy;
		busy = NULL;
		cost = a_ns + rq->bytes * b_ps / 1000;
		for (i = 0; i < nf; i++)
			if (f[i].key == rq->key && th.now > from_ns)
				f[i].got_ns += cost;
		th_done(rq, 0);
		/* the same slot comes back at once: the flow stays backlogged */
		fq_sched_enqueue(th.s, rq, th.now);
	}
	while (th.nin)
		th_done(th.inflight[0], 0);
}

/*
 * fairness=time: a 1 MiB reader and a 4 KiB reader, both backlogged, on
 * a device where a request costs 100 us + 1 ns per byte (1 MiB: 1149 us,
 * 4 KiB: 104 us), get about the same device time once the cost model
 * exists (requests would give the 1 MiB reader 11 times the 4 KiB one's,
 * bytes a 23rd of it); the model finds a and b.
 */
static void t_fair_time(void)
{
	struct dev_flow f[2] = {
		{ .key = 1, .bytes = 1u << 20, .qd = 4 },
		{ .key = 2, .bytes = 4096, .qd = 4 },
	};
	struct fq_stats st;
	double ratio;

	th_new_defaults("cfq");
	th_set("depth", "1");
	dev_run(f, 2, 100 * US, 1000, 1000 * MS, 5000 * MS);
	fq_sched_stats(th.s, &st);
	ratio = (double)f[0].got_ns / (double)(f[1].got_ns ? f[1].got_ns : 1);
	if (getenv("FQ_UNIT_SHOW") || ratio < 0.8 || ratio > 1.25)
		fprintf(stderr, "  1 MiB / 4 KiB device time %.3f (%llu / %llu ns)\n",
			ratio, (unsigned long long)f[0].got_ns,
			(unsigned long long)f[1].got_ns);
	CHECK(ratio >= 0.8 && ratio <= 1.25);
	CHECK(st.cost_epochs >= FQ_COST_EPOCHS_MIN);
	CHECK(st.cost_a_ns[0] >= 80 * US && st.cost_a_ns[0] <= 120 * US);
	CHECK(st.cost_b_ps_per_byte[0] >= 800 && st.cost_b_ps_per_byte[0] <= 1200);
	/* writes never seen: they borrow the reads' model */
	CHECK_EQ(st.cost_a_ns[1], st.cost_a_ns[0]);
	th_free();

	/* the same under fairness=bytes: the 4 KiB reader gets far more */
	f[0].got_ns = f[1].got_ns = 0;
	th_new_defaults("cfq");
	th_set("depth", "1");
	th_set("fairness", "bytes");
	dev_run(f, 2, 100 * US, 1000, 1000 * MS, 5000 * MS);
	CHECK(f[1].got_ns > 4 * f[0].got_ns);
	th_free();
}

/*
 * fairness=time: a 4 KiB sync reader and 128 KiB async writes, both
 * backlogged and starting together, on a device where a request costs
 * 2 ms + 238 ns per byte (a 4 MiB/s volume: 4 KiB 3.0 ms, 128 KiB
 * 33.2 ms) get about the same device time, each priced near what it
 * costs.  How the first epochs' time is split between reads and writes
 * must not depend on which direction is fitted first, and the split a
 * fixed ratio of the two cannot correct, the dither corrects.
 */
static void t_fair_time_directions(void)
{
	struct dev_flow f[2] = {
		{ .key = 1, .bytes = 4096, .qd = 1 },
		{ .key = 2, .bytes = 128u << 10, .qd = 4, .flags = FQ_REQ_WRITE },
	};
	struct fq_req r = { .bytes = 4096 };
	struct fq_req w = { .bytes = 128u << 10, .flags = FQ_REQ_WRITE };
	u64 pr, pw, tr = 2000 * US + 4096ull * 238, tw = 2000 * US + (128ull << 10) * 238;
	double ratio;

	th_new_defaults("cfq");
	th_set("depth", "1");
	dev_run(f, 2, 2000 * US, 238000, 5000 * MS, 60000 * MS);
	ratio = (double)f[0].got_ns / (double)(f[1].got_ns ? f[1].got_ns : 1);
	pr = fq_charge_ns(th.s, &r);
	pw = fq_charge_ns(th.s, &w);
	if (getenv("FQ_UNIT_SHOW") || ratio < 0.75 || ratio > 1.33 ||
	    pr * 4 < tr * 3 || pr * 4 > tr * 5 || pw * 4 < tw * 3 || pw * 4 > tw * 5)
		fprintf(stderr, "  reader / writer device time %.3f; prices %llu / %llu ns (device %llu / %llu)\n",
			ratio, (unsigned long long)pr, (unsigned long long)pw,
			(unsigned long long)tr, (unsigned long long)tw);
	CHECK(ratio >= 0.75 && ratio <= 1.33);
	CHECK(pr * 4 >= tr * 3 && pr * 4 <= tr * 5);
	CHECK(pw * 4 >= tw * 3 && pw * 4 <= tw * 5);
	th_free();
}

/*
 * Before the model exists a request is charged its bytes at quantum_bytes
 * per quantum_us, and the figures read 0.  The charge is asked when the
 * request goes down: one queued before a change is charged at the rate
 * of the time it is served.
 */
static void t_fair_time_fallback(void)
{
	struct fq_req *a, *b;
	struct fq_stats st;

	th_new_defaults("cfq");
	th_get("fairness", "time\n");
	th_get("quantum_us", "1000\n");
	a = th_enq(1, 0, 4096, SYNC, 0);
	b = th_enq(2, 8, 1u << 20, SYNC, 0);
	CHECK_EQ(fq_charge_ns(th.s, a), 4096ull * 1000 * 1000 / (512 << 10));
	CHECK_EQ(fq_charge_ns(th.s, b), 2000 * US);
	CHECK_EQ(a->bytes, 4096);
	th_set("quantum_us", "10");
	CHECK_EQ(fq_charge_ns(th.s, a), 78);
	CHECK_EQ(fq_charge_ns(th.s, b), 20 * US);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.cost_a_ns[0], 0);
	CHECK_EQ(st.cost_b_ps_per_byte[0], 0);
	CHECK_EQ(st.cost_epochs, 0);
	CHECK_EQ(st.lat_floor_ns, 0);
	th_free();
}

/*
 * A request queued before the cost model exists is charged what the
 * model says when it goes down, not the exchange rate of the time it was
 * queued: a 1 MiB read queued first (2 ms at the exchange rate), then a
 * model learnt from saturated epochs of a disk that takes 2 ms plus
 * 238 ns per byte (4 MiB/s): the read goes down owing a quarter of a
 * second, over a hundred 1 ms turns.  Charged at enqueue it would owe
 * two turns (fq_charge_ns() says why that matters).
 */
static void t_charge_at_dispatch(void)
{
	struct fq_classq *cq;
	struct fq_req *big, *rq;
	u64 model;
	u32 bytes;
	int i;

	th_new_defaults("cfq");
	th_set("depth", "1");
	big = th_enq(1, 0, 1u << 20, SYNC, 0);
	CHECK_EQ(fq_charge_ns(th.s, big), 2000 * US);
	for (i = 0; i < 600; i++) {
		bytes = (i * 7) % 13 < 2 ? 1u << 20 : 4096;
		th.now += 2 * MS + (u64)bytes * 238;
		fq_cost_complete(&th.s->fc, th.now, bytes, false, true);
	}
	model = fq_cost_ns(&th.s->fc, 1u << 20, false);
	CHECK(model > 200 * MS && model < 300 * MS);
	CHECK_EQ(fq_charge_ns(th.s, big), model);
	rq = th_disp();
	CHECK(rq == big);
	if (rq == big) {
		cq = &th.s->cq[big->flow->ci];
		CHECK(fq_round_diff(big->flow->round, cq->round) > 100);
	}
	th_free();
}

static const struct fq_test_case cases[] = {
	{ "fair_time", t_fair_time },
	{ "fair_time_directions", t_fair_time_directions },
	{ "fair_time_fallback", t_fair_time_fallback },
	{ "charge_at_dispatch", t_charge_at_dispatch },
};

const struct fq_test_suite fq_unit_time = { cases, ARRAY_SIZE(cases) };
