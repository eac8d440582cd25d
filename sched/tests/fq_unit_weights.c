// SPDX-License-Identifier: GPL-2.0
/*
 * fq_unit_weights.c - shares: fairness=bytes against requests, weights
 * from ioprio levels and explicit ones (and their changes), the order of
 * the RT, BE and IDLE classes, and a dataless request's charge.
 */
#include <stdlib.h>
#include "fq_unit.h"

/* Two flows backlogged, depth 1: bytes dispatched by each in @n turns. */
static void drr_two_sizes(const char *policy, const char *fairness,
			  u64 *b1, u64 *b2)
{
	struct fq_req *rq;
	u64 k[2] = { 1, 2 };
	int i, s1 = 0, s2 = 0;

	th_new(policy);
	th_set("depth", "1");
	th_set("fairness", fairness);
	/*
	 * the turns alone: the 4 KiB flow would start boosted (fq_boost.c),
	 * a grant of up to two turns' worth ahead, 6 % of this short run
	 */
	th_set("boost_ms", "0");
	if (!strcmp(policy, "sfq"))
		sfq_distinct_keys(k, 2);
	*b1 = *b2 = 0;
	for (i = 0; i < 3000; i++) {
		if (s1 < 4 + i / 64) {
			th_enq(k[0], (u64)i, 4096, SYNC, 0);
			s1++;
		}
		if (s2 < 4) {
			th_enq(k[1], (u64)i, 1 << 20, SYNC, 0);
			s2++;
		}
		rq = th_disp();
		if (!rq)
			break;
		if (rq->key == k[0]) {
			*b1 += rq->bytes;
			s1--;
		} else {
			*b2 += rq->bytes;
			s2--;
		}
		th_done(rq, 0);
		if (th.n > TH_REQS - 4)
			break;
	}
	th_free();
}

static void t_drr_bytes(void)
{
	static const char *const pol[] = { "cfq", "sfq" };
	u64 b1, b2;
	int i;

	for (i = 0; i < 2; i++) {
		drr_two_sizes(pol[i], "bytes", &b1, &b2);
		/* equal bytes within 5% */
		CHECK(b1 * 100 >= b2 * 95 && b2 * 100 >= b1 * 95);
		drr_two_sizes(pol[i], "requests", &b1, &b2);
		/* requests mode: equal requests, so 256x the bytes */
		CHECK(b2 >= b1 * 200);
	}
}

static void weights_run(const char *policy, const char *fairness, int *cnt)
{
	static const int lvl[3] = { 0, 4, 7 };
	u64 k[3] = { 11, 12, 13 };
	struct fq_req *rq;
	int i, j, q[3] = { 0 };

	th_new(policy);
	th_set("depth", "1");
	th_set("fairness", fairness);
	th_set("quantum_bytes", "32768");	/* whole rounds in the run */
	if (!strcmp(policy, "sfq"))
		sfq_distinct_keys(k, 3);
	for (i = 0; i < 3; i++)
		cnt[i] = 0;
	for (i = 0; i < 2600; i++) {
		for (j = 0; j < 3; j++) {
			while (q[j] < 4) {
				th_enq(k[j], (u64)i, 4096, SYNC,
				       BE(lvl[j]));
				q[j]++;
			}
		}
		rq = th_disp();
		CHECK(rq != NULL);
		if (!rq)
			break;
		for (j = 0; j < 3; j++)
			if (rq->key == k[j]) {
				cnt[j]++;
				q[j]--;
			}
		th_done(rq, 0);
	}
	th_free();
}

static void t_weights(void)
{
	static const char *const pol[] = { "cfq", "sfq" };
	static const char *const fair[] = { "requests", "bytes" };
	int cnt[3], p, f, total;

	for (p = 0; p < 2; p++) {
		for (f = 0; f < 2; f++) {
			weights_run(pol[p], fair[f], cnt);
			total = cnt[0] + cnt[1] + cnt[2];
			/* weights 8:4:1 -> 8/13, 4/13, 1/13, within 3% */
			CHECK(abs(cnt[0] * 13 - total * 8) * 100 <= total * 8 * 3);
			CHECK(abs(cnt[1] * 13 - total * 4) * 100 <= total * 4 * 3);
			CHECK(abs(cnt[2] * 13 - total * 1) * 100 <= total * 1 * 3);
		}
	}
	CHECK_EQ(fq_level_weight(0), 200);
	CHECK_EQ(fq_level_weight(4), FQ_WEIGHT_DEFAULT);
	CHECK_EQ(fq_level_weight(7), 25);
}

/*
 * Two backlogged flows at depth 1, @w[i] explicit weights (0: from the
 * level @lvl[i]), requests of @bytes[i]; @n dispatches.  Fills @got with
 * what each was served: requests, or bytes when @fairness is "bytes".
 */
struct wpair {
	u16 w[2];
	int lvl[2];
	u32 bytes[2];
};

static void wpair_run(const char *policy, const char *fairness,
		      const struct wpair *wp, int n, u64 *got)
{
	u64 k[2] = { 21, 22 };
	struct fq_req *rq;
	int i, j, q[2] = { 0 };

	th_new(policy);
	th_set("depth", "1");
	th_set("fairness", fairness);
	th_set("quantum_bytes", "32768");
	if (!strcmp(policy, "sfq"))
		sfq_distinct_keys(k, 2);
	got[0] = got[1] = 0;
	for (i = 0; i < n; i++) {
		for (j = 0; j < 2; j++) {
			while (q[j] < 4) {
				th_enq_w(k[j], (u64)i, wp->bytes[j], SYNC,
					 BE(wp->lvl[j]), wp->w[j]);
				q[j]++;
			}
		}
		rq = th_disp();
		CHECK(rq != NULL);
		if (!rq)
			break;
		j = rq->key == k[1];
		got[j] += strcmp(fairness, "bytes") ? 1 : rq->bytes;
		q[j]--;
		th_done(rq, 0);
		if (th.n > TH_REQS - 8)
			break;
	}
	th_free();
}

/* @a : @b within @pct percent of @ra : @rb */
static bool ratio_near(u64 a, u64 b, u64 ra, u64 rb, u64 pct)
{
	u64 want = (a + b) * ra / (ra + rb);

	return a * 100 >= want * (100 - pct) && a * 100 <= want * (100 + pct);
}

/* Explicit weights 100 and 400 share 1:4 in every policy and mode. */
static void t_explicit_weights(void)
{
	static const char *const pol[] = { "cfq", "sfq" };
	static const struct wpair same = { { 100, 400 }, { 4, 4 }, { 4096, 4096 } };
	/* bytes mode: the heavy flow's requests are 16x smaller */
	static const struct wpair sizes = { { 100, 400 }, { 4, 4 }, { 65536, 4096 } };
	u64 got[2];
	int p;

	for (p = 0; p < 2; p++) {
		wpair_run(pol[p], "requests", &same, 4000, got);
		CHECK(ratio_near(got[0], got[1], 1, 4, 3));
		wpair_run(pol[p], "bytes", &same, 4000, got);
		CHECK(ratio_near(got[0], got[1], 1, 4, 3));
		wpair_run(pol[p], "bytes", &sizes, 7000, got);
		CHECK(ratio_near(got[0], got[1], 1, 4, 5));
	}
}

/*
 * An explicit weight overrides the level (BE level 0 at weight 100
 * against level 7 at weight 300: 1:3); 0 keeps the level's weight (level
 * 4 = weight 100 against explicit 100: 1:1); the extremes 1 and 1000
 * are served, the light one rarely but never starved.
 */
static void t_weight_vs_level(void)
{
	static const struct wpair over = { { 100, 300 }, { 0, 7 }, { 4096, 4096 } };
	static const struct wpair eq = { { 0, 100 }, { 4, 0 }, { 4096, 4096 } };
	static const struct wpair ext = { { 1, 1000 }, { 4, 4 }, { 4096, 4096 } };
	static const char *const pol[] = { "cfq", "sfq" };
	u64 got[2];
	int p;

	for (p = 0; p < 2; p++) {
		wpair_run(pol[p], "requests", &over, 4000, got);
		CHECK(ratio_near(got[0], got[1], 1, 3, 3));
		wpair_run(pol[p], "requests", &eq, 4000, got);
		CHECK(ratio_near(got[0], got[1], 1, 1, 3));
		wpair_run(pol[p], "requests", &ext, 8000, got);
		/* 8000 / 1001 = 8: at least half, at most twice that */
		CHECK(got[0] >= 4 && got[0] <= 16);
	}
}

/*
 * A busy flow's explicit weight changes with its next request (an
 * administrator changing a cgroup's weight); a weight above the maximum
 * counts as the maximum; stats report the weight served at.
 */
static void t_weight_change(void)
{
	struct fq_flow_info fi[2];
	struct fq_req *rq;
	int i, j, q[2] = { 0 }, n[2] = { 0 };

	th_new("cfq");
	th_set("depth", "1");
	for (i = 0; i < 2000; i++) {
		/* flow 1 at 100, then 400 from dispatch 1000 on; flow 2 at 100 */
		for (j = 0; j < 2; j++) {
			for (; q[j] < 4; q[j]++)
				th_enq_w((u64)j + 1, (u64)i, 4096, SYNC, 0,
					 j == 0 && i >= 1000 ? 400 : 100);
		}
		rq = th_disp();
		CHECK(rq != NULL);
		if (!rq)
			break;
		j = rq->key == 2;
		q[j]--;
		if (i >= 1100)
			n[j]++;
		th_done(rq, 0);
	}
	CHECK(ratio_near((u64)n[0], (u64)n[1], 4, 1, 5));
	th_free();

	th_new("cfq");
	th_enq_w(5, 0, 4096, SYNC, 0, 60000);
	th_enq_w(6, 0, 4096, SYNC, BE(0), 0);
	CHECK_EQ(fq_sched_flows(th.s, fi, 2), 2);
	for (i = 0; i < 2; i++)
		CHECK_EQ(fi[i].weight, fi[i].key == 5 ? FQ_WEIGHT_MAX : 200);
	th_free();
}

static void t_class_order(void)
{
	static const char *const pol[] = { "cfq", "sfq" };
	u64 keys[40];
	int p, i, n;

	for (p = 0; p < 2; p++) {
		th_new(pol[p]);
		th_set("depth", "1");
		for (i = 0; i < 10; i++) {
			th_enq(3, (u64)i, 4096, SYNC, IDLE);
			th_enq(2, (u64)i, 4096, SYNC, BE(0));
			th_enq(1, (u64)i, 4096, SYNC, RT(7));
		}
		n = th_run(40, keys);
		CHECK_EQ(n, 20);	/* IDLE waits for idle_grace_ms */
		for (i = 0; i < 10; i++)
			CHECK_EQ(keys[i], 1);
		for (i = 10; i < 20; i++)
			CHECK_EQ(keys[i], 2);
		CHECK_EQ(fq_sched_next_event(th.s, th.now), 200 * MS);
		th.now = 199 * MS;
		CHECK(th_disp() == NULL);
		th.now = 200 * MS;
		n = th_run(40, keys);
		CHECK_EQ(n, 10);
		CHECK_EQ(keys[0], 3);
		th_free();
	}
}

static void t_idle_class_alone(void)
{
	struct fq_req *rq;

	/* no other class ever had work: IDLE goes at once */
	th_new("cfq");
	rq = th_enq(1, 0, 4096, 0, IDLE);
	CHECK(th_disp() == rq);
	th_free();
}

static void t_idle_class_no_expiry(void)
{
	struct fq_req *rq;
	int i;

	th_new("cfq");
	th_set("depth", "1");
	th_enq(9, 0, 4096, SYNC, IDLE);
	for (i = 0; i < 40; i++) {
		th_enq(1, (u64)i, 4096, SYNC, BE(4));
		rq = th_disp();
		CHECK(rq && rq->key == 1);
		th.now += 100 * MS;	/* 4 s in all: far past any expiry */
		if (rq)
			th_done(rq, 0);
	}
	th_free();
}

static void t_class_upgrade(void)
{
	struct fq_req *rq;
	int i;

	th_new("cfq");
	th_set("depth", "1");
	for (i = 0; i < 4; i++) {
		th_enq(1, (u64)i, 4096, SYNC, BE(4));
		th_enq(2, (u64)i, 4096, SYNC, BE(4));
	}
	th_enq(2, 99, 4096, SYNC, RT(4));	/* flow 2 becomes RT */
	for (i = 0; i < 5; i++) {
		rq = th_disp();
		CHECK(rq && rq->key == 2);
		if (rq)
			th_done(rq, 0);
	}
	th_free();
}

/*
 * A dataless request (discard) counts as FQ_NODATA_BYTES whatever its
 * range: under fairness=bytes a flow of 1 GiB discards and a flow of
 * 4 KiB writes alternate turns of the same size.  Charged by its range, a
 * discard would put its flow 2^18 turns in debt (the writer would get
 * every other slot).
 */
static void t_nodata_charge(void)
{
	struct fq_stats st;
	int cnt[2] = { 0, 0 };
	struct fq_req *rq;
	int i;

	th_new("cfq");
	th_set("depth", "1");
	th_set("fairness", "bytes");
	th_set("quantum_bytes", "16384");
	for (i = 0; i < 100; i++) {
		th_enq(1, 1000000 + (u64)i * 2097152, 1u << 30,
		       FQ_REQ_WRITE | FQ_REQ_NODATA, 0);
		th_enq(2, (u64)i * 8, 4096, FQ_REQ_WRITE, 0);
	}
	for (i = 0; i < 100; i++) {
		rq = th_disp();
		CHECK(rq != NULL);
		if (!rq)
			break;
		cnt[rq->key - 1]++;
		th_done(rq, 0);
	}
	CHECK(cnt[0] >= 46 && cnt[0] <= 54);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.c.enq_reqs, 200);
	CHECK_EQ(st.c.enq_bytes, 200 * 4096);
	CHECK_EQ(st.c.done_bytes, 100 * 4096);
	CHECK_EQ(st.c.done_reqs, 100);
	th_free();
}

static const struct fq_test_case cases[] = {
	{ "drr_bytes", t_drr_bytes },
	{ "weights", t_weights },
	{ "explicit_weights", t_explicit_weights },
	{ "weight_vs_level", t_weight_vs_level },
	{ "weight_change", t_weight_change },
	{ "class_order", t_class_order },
	{ "idle_class_alone", t_idle_class_alone },
	{ "idle_class_no_expiry", t_idle_class_no_expiry },
	{ "class_upgrade", t_class_upgrade },
	{ "nodata_charge", t_nodata_charge },
};

const struct fq_test_suite fq_unit_weights = { cases, ARRAY_SIZE(cases) };
