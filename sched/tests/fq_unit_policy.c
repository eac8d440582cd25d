// SPDX-License-Identifier: GPL-2.0
/*
 * fq_unit_policy.c - the dispatch order of each policy: cfq's turns of
 * quantum requests and its sector-sorted batches, sfq's one request per
 * bucket per turn (collisions, perturbation, a change of the bucket
 * count, buckets in the flow table), fifo's enqueue order.
 */
#include "fq_unit.h"

static void t_cfq_round_robin(void)
{
	u64 keys[60];
	int i, n;

	th_new("cfq");
	th_set("depth", "1");
	th_set("quantum", "1");
	for (i = 0; i < 60; i++)
		th_enq((u64)(i % 3) + 100, (u64)i * 8, 4096, SYNC, 0);
	n = th_run(60, keys);
	CHECK_EQ(n, 60);
	for (i = 0; i < 60; i++)
		CHECK_EQ(keys[i], 100 + i % 3);
	th_free();
}

static void t_cfq_quantum(void)
{
	u64 keys[48];
	int i;

	th_new("cfq");
	th_set("depth", "1");
	th_set("quantum", "4");
	for (i = 0; i < 16; i++) {
		th_enq(1, (u64)i, 4096, SYNC, 0);
		th_enq(2, (u64)i, 4096, SYNC, 0);
		th_enq(3, (u64)i, 4096, SYNC, 0);
	}
	CHECK_EQ(th_run(48, keys), 48);
	/* turns of 4: 1111 2222 3333 1111 ... */
	for (i = 0; i < 48; i++)
		CHECK_EQ(keys[i], 1 + (i / 4) % 3);
	th_free();
}

static void t_cfq_sorted_batch(void)
{
	static const u64 sect[8] = { 700, 100, 500, 300, 800, 200, 600, 400 };
	struct fq_req *rq;
	u64 last = 0;
	int i;

	th_new("cfq");
	th_set("depth", "8");
	for (i = 0; i < 8; i++)
		th_enq(5, sect[i], 4096, SYNC, 0);
	for (i = 0; i < 8; i++) {
		rq = th_disp();
		CHECK(rq != NULL);
		if (!rq)
			break;
		CHECK(rq->sector > last);
		last = rq->sector;
	}
	CHECK(th_disp() == NULL);	/* depth 8 reached */
	CHECK_EQ(last, 800);
	th_free();
}

static void t_cfq_batch_bounded_by_quantum(void)
{
	struct fq_req *rq;
	int i, k1 = 0, k2 = 0;

	/*
	 * depth 32, quantum 8: the first batch holds two turns of each flow
	 * (8 + 8 + 8 + 8), sorted by sector, so flow 1's (lower sectors)
	 * come first; the batch never holds more than the turns allow.
	 */
	th_new("cfq");
	for (i = 0; i < 40; i++) {
		th_enq(1, 1000 - (u64)i, 4096, SYNC, 0);
		th_enq(2, 2000 - (u64)i, 4096, SYNC, 0);
	}
	for (i = 0; i < 32; i++) {
		rq = th_disp();
		CHECK(rq != NULL);
		if (!rq)
			break;
		if (rq->key == 1)
			k1++;
		else
			k2++;
		CHECK_EQ(rq->key, i < 16 ? 1 : 2);
	}
	CHECK_EQ(k1, 16);
	CHECK_EQ(k2, 16);
	CHECK(th_disp() == NULL);
	th_free();
}

static void t_sfq_one_per_bucket(void)
{
	u64 keys[4], got[40];
	int i, j, seen[4];

	th_new("sfq");
	th_set("depth", "4");
	sfq_distinct_keys(keys, 4);
	for (i = 0; i < 10; i++)
		for (j = 0; j < 4; j++)
			th_enq(keys[j], (u64)(1000 - i * 10 - j), 4096, SYNC, 0);
	/* every batch of 4 has each bucket exactly once, sorted by sector */
	for (i = 0; i < 10; i++) {
		struct fq_req *rq[4];
		u64 last = 0;

		memset(seen, 0, sizeof(seen));
		for (j = 0; j < 4; j++) {
			rq[j] = th_disp();
			CHECK(rq[j] != NULL);
			if (!rq[j])
				return;
			got[i * 4 + j] = rq[j]->key;
			CHECK(rq[j]->sector >= last);
			last = rq[j]->sector;
		}
		CHECK(th_disp() == NULL);
		for (j = 0; j < 4; j++) {
			int k;

			for (k = 0; k < 4; k++)
				if (got[i * 4 + j] == keys[k])
					seen[k]++;
			th_done(rq[j], 0);
		}
		for (j = 0; j < 4; j++)
			CHECK_EQ(seen[j], 1);
	}
	th_free();
}

static void t_sfq_collision(void)
{
	u64 keys[2], k;
	int i, a = 0;
	u64 order[20];

	th_new("sfq");
	th_set("depth", "1");
	/* two keys in the same bucket share it: one FIFO between them */
	keys[0] = 1;
	for (k = 2; sfq_bucket(k) != sfq_bucket(1); k++)
		;
	keys[1] = k;
	for (i = 0; i < 10; i++)
		th_enq(keys[0], (u64)i, 4096, SYNC, 0);
	for (i = 0; i < 10; i++)
		th_enq(keys[1], (u64)i, 4096, SYNC, 0);
	CHECK(th.r[0].flow == th.r[10].flow);
	CHECK_EQ(th_run(20, order), 20);
	for (i = 0; i < 10; i++)
		a += order[i] == keys[0];
	CHECK_EQ(a, 10);	/* the first key's requests came first */
	th_free();
}

static void t_sfq_perturbation(void)
{
	struct fq_stats st;
	int i, moved = 0, n;

	th_new("sfq");
	th_set("perturb_ms", "10");
	th_set("depth", "4");
	for (i = 0; i < 64; i++)
		th_enq((u64)i, (u64)i, 4096, SYNC, 0);
	CHECK_EQ(fq_sched_next_event(th.s, th.now), 10 * MS);
	th.now = 11 * MS;
	for (i = 0; i < 64; i++)
		th_enq((u64)i, (u64)i + 100, 4096, SYNC, 0);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.perturbations, 1);
	for (i = 0; i < 64; i++)
		moved += th.r[i].flow != th.r[64 + i].flow;

	CHECK(moved > 32);		/* most keys changed bucket */
	n = th_run(1000, NULL);
	CHECK_EQ(n, 128);		/* nothing stranded */
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.queued, 0);
	CHECK_EQ(st.c.done_reqs, 128);
	th_free();
}

static void t_sfq_buckets_change(void)
{
	int i;

	th_new("sfq");
	for (i = 0; i < 100; i++)
		th_enq((u64)i % 17, (u64)i, 4096, SYNC, 0);
	th_set("buckets", "8");
	for (i = 0; i < 100; i++)
		CHECK(th.r[i].flow->key < 8);
	for (i = 0; i < 20; i++)
		th_enq((u64)i, (u64)i, 4096, SYNC, 0);
	th_set("buckets", "1");
	CHECK_EQ(th.r[0].flow, th.r[119].flow);
	CHECK_EQ(fq_check_invariants(th.s), 0);
	CHECK_EQ(th_run(1000, NULL), 120);
	th_free();
}

/* sfq's buckets live in the same table: 4,096 of them, then a switch. */
static void t_sfq_buckets_table(void)
{
	struct fq_stats st;
	u64 i;

	th_new("sfq");
	th_set("depth", "1");
	th_set("buckets", "4096");
	for (i = 0; i < 20000; i++)
		th_enq(i, i, 4096, SYNC, 0);
	CHECK_EQ(fq_sched_table_resize(th.s), 0);
	CHECK_EQ(fq_check_invariants(th.s), 0);
	fq_sched_stats(th.s, &st);
	CHECK(st.flows > 4000 && st.flows <= 4096);
	CHECK_EQ(st.overflow_enq, 0);
	th_set("policy", "cfq");	/* every bucket becomes a flow per key */
	CHECK_EQ(fq_check_invariants(th.s), 0);
	fq_sched_stats(th.s, &st);
	CHECK(st.flows >= 19999);	/* one may be in flight as an orphan */
	CHECK_EQ(th_run(40000, NULL), 20000);
	th_free();
}

static void t_fifo_policy(void)
{
	struct fq_req *rq;
	int i;

	th_new("fifo");
	th_set("depth", "2");
	for (i = 0; i < 20; i++)
		th_enq((u64)(i % 4), (u64)(100 - i), 4096, 0,
		       i & 1 ? RT(0) : IDLE);
	for (i = 0; i < 20; i++) {
		rq = th_disp();
		CHECK(rq == &th.r[i]);
		if (rq)
			th_done(rq, 0);
	}
	th_free();
}

static const struct fq_test_case cases[] = {
	{ "cfq_round_robin", t_cfq_round_robin },
	{ "cfq_quantum", t_cfq_quantum },
	{ "cfq_sorted_batch", t_cfq_sorted_batch },
	{ "cfq_batch_bounded_by_quantum", t_cfq_batch_bounded_by_quantum },
	{ "sfq_one_per_bucket", t_sfq_one_per_bucket },
	{ "sfq_collision", t_sfq_collision },
	{ "sfq_perturbation", t_sfq_perturbation },
	{ "sfq_buckets_change", t_sfq_buckets_change },
	{ "sfq_buckets_table", t_sfq_buckets_table },
	{ "fifo_policy", t_fifo_policy },
};

const struct fq_test_suite fq_unit_policy = { cases, ARRAY_SIZE(cases) };
