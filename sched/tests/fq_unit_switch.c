// SPDX-License-Identifier: GPL-2.0
/*
 * fq_unit_switch.c - changes with requests queued and in flight:
 * policy, depth and fairness switches, drain, and a completion of a
 * request that was not dispatched.
 */
#include "fq_unit.h"

static void t_policy_switch(void)
{
	static const char *const seq[] = { "sfq", "fifo", "cfq", "sfq", "cfq" };
	struct fq_req *held[10];
	struct fq_stats st;
	unsigned int i;
	int got = 0, n;

	th_new("cfq");
	th_set("depth", "64");
	for (i = 0; i < 60; i++)
		th_enq(i % 5, i, 4096, (i & 1) ? SYNC : 0,
		       (i % 7 == 0) ? RT(2) : BE(i & 7));
	for (i = 0; i < 10; i++)
		held[i] = th_disp();
	for (i = 0; i < 5; i++) {
		th_set("policy", seq[i]);
		CHECK_EQ(fq_check_invariants(th.s), 0);
		fq_sched_stats(th.s, &st);
		CHECK_EQ(st.queued, 50);
		CHECK_EQ(st.inflight, 10);
	}
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.policy_switches, 5);
	for (i = 0; i < 10; i++)
		th_done(held[i], 0);
	n = th_run(100, NULL);
	got += n;
	CHECK_EQ(got, 50);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.c.done_reqs, 60);
	CHECK_EQ(st.c.disp_reqs, 60);
	CHECK_EQ(st.flows, 0);
	th_free();
}

static void t_policy_switch_fifo_order(void)
{
	struct fq_req *rq;
	int i;

	th_new("cfq");
	th_set("depth", "1");
	for (i = 0; i < 30; i++)
		th_enq((u64)(i % 3), (u64)(100 - i), 4096, SYNC,
		       i < 15 ? BE(7) : RT(0));
	th_set("policy", "fifo");
	for (i = 0; i < 30; i++) {
		rq = th_disp();
		CHECK(rq == &th.r[i]);	/* enqueue order, classes ignored */
		if (rq)
			th_done(rq, 0);
	}
	th_free();
}

static void t_drain(void)
{
	struct fq_req *rq, *held[5];
	struct fq_stats st;
	int i;

	th_new("cfq");
	for (i = 0; i < 20; i++)
		th_enq((u64)(i % 4), (u64)(50 - i), 4096, SYNC,
		       (i % 3) ? BE(4) : IDLE);
	th_set("depth", "5");
	for (i = 0; i < 5; i++)
		held[i] = th_disp();
	/* the first batch may hold requests not yet returned: drain them too */
	for (i = 0; (rq = fq_sched_drain(th.s)); i++) {
		CHECK(rq->state == FQ_RS_DONE);
		if (i > 0)
			CHECK(rq->seq > th.r[0].seq);
	}
	CHECK_EQ(i, 15);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.queued, 0);
	CHECK_EQ(st.inflight, 5);
	CHECK(th_disp() == NULL);
	for (i = 0; i < 5; i++)
		th_done(held[i], 0);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.flows, 0);
	th_free();
}

static void t_drain_order(void)
{
	struct fq_req *rq;
	int i;

	th_new("sfq");
	for (i = 0; i < 30; i++)
		th_enq((u64)(i % 5), (u64)i, 4096, (i & 1) ? SYNC : 0,
		       (i % 4) ? BE(4) : IDLE);
	for (i = 0; i < 30; i++) {
		rq = fq_sched_drain(th.s);
		CHECK(rq == &th.r[i]);
	}
	CHECK(fq_sched_drain(th.s) == NULL);
	th_free();
}

/*
 * depth auto -> a number -> auto, and fairness and policy, while requests
 * are queued and in flight: every request still completes exactly once,
 * and a number below what is in flight holds dispatch until it drains.
 */
static void t_depth_switch_keeps_all(void)
{
	static const char *const sets[][2] = {
		{ "depth", "2" }, { "fairness", "bytes" }, { "depth", "auto" },
		{ "policy", "sfq" }, { "depth", "9" }, { "fairness", "time" },
		{ "depth", "auto" }, { "policy", "fifo" }, { "depth", "1" },
		{ "policy", "cfq" }, { "depth", "auto" },
	};
	struct fq_stats st;
	unsigned int i, k, done = 0;
	struct fq_req *rq;

	th_new_defaults("cfq");
	for (i = 0; i < 400; i++)
		th_enq(i % 5, i * 8, 4096u << (i % 4), i % 3 ? SYNC : 0, 0);
	for (k = 0; k < ARRAY_SIZE(sets); k++) {
		while (th_disp())
			;
		CHECK((u32)th.nin <= (th.s->depth_now > 32 ? th.s->depth_now : 32));
		th_set(sets[k][0], sets[k][1]);
		if (!strcmp(sets[k][1], "1"))
			CHECK(th_disp() == NULL || th.nin <= 1);
		/* complete half of what is in flight */
		for (i = th.nin / 2; i > 0; i--) {
			th.now += 100 * US;
			th_done(th.inflight[0], 0);
			done++;
		}
	}
	while (th.nin || th.s->queued) {
		rq = th_disp();
		if (!rq) {
			CHECK(th.nin > 0);
			if (!th.nin)
				break;
			th.now += 100 * US;
			th_done(th.inflight[0], 0);
			done++;
		}
	}
	CHECK_EQ(done, 400);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.c.enq_reqs, 400);
	CHECK_EQ(st.c.done_reqs, 400);
	CHECK_EQ(st.queued, 0);
	CHECK_EQ(st.inflight, 0);
	th_get("depth", "auto\n");
	th_free();
}

static void t_complete_bad_state(void)
{
	struct fq_req *rq;
	unsigned long w = fq_env_warnings;

	th_new("cfq");
	rq = th_enq(1, 0, 4096, 0, 0);
	fq_env_warn_expected = 1;
	fq_sched_complete(th.s, rq, 0, 0);	/* not dispatched */
	fq_env_warn_expected = 0;
	CHECK_EQ(fq_env_warnings, w + 1);
	fq_env_warnings = w;			/* expected */
	CHECK_EQ(th.s->queued, 1);
	th_free();
}

static const struct fq_test_case cases[] = {
	{ "policy_switch", t_policy_switch },
	{ "policy_switch_fifo_order", t_policy_switch_fifo_order },
	{ "drain", t_drain },
	{ "drain_order", t_drain_order },
	{ "depth_switch_keeps_all", t_depth_switch_keeps_all },
	{ "complete_bad_state", t_complete_bad_state },
};

const struct fq_test_suite fq_unit_switch = { cases, ARRAY_SIZE(cases) };
