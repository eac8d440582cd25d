// SPDX-License-Identifier: GPL-2.0
/*
 * fq_unit_pass.c - pass-through (fq_sched_pass, fq_sched_pass_depth):
 * requests the caller sends down without queueing them hold depth slots,
 * count as RT/BE work for the IDLE class, and wait for anticipation, the
 * boost's reserve, a hold behind debtors and a depth=auto epoch.
 */
#include "fq_unit.h"

/*
 * Requests passed through hold depth slots: the core fills only what is
 * left, and gives a slot back only when the caller reports fewer.
 */
static void t_pass_depth_slots(void)
{
	struct fq_req *rq[4];
	struct fq_stats st;
	int i;

	th_new("cfq");
	th_set("depth", "4");
	CHECK_EQ(fq_sched_pass_depth(th.s, th.now), 4);
	fq_sched_pass(th.s, 3, true, th.now);
	for (i = 0; i < 4; i++)
		th_enq(1, (u64)i, 4096, SYNC, BE(4));
	CHECK_EQ(fq_sched_pass_depth(th.s, th.now), 0);	/* queued */
	rq[0] = th_disp();
	CHECK(rq[0] != NULL);
	CHECK(th_disp() == NULL);		/* 3 passing + 1 = depth */
	CHECK(fq_sched_next_event(th.s, th.now) == 0);
	fq_sched_pass(th.s, 1, false, th.now);	/* two of them completed */
	rq[1] = th_disp();
	rq[2] = th_disp();
	CHECK(rq[1] && rq[2]);
	CHECK(th_disp() == NULL);
	fq_sched_pass(th.s, 0, false, th.now);
	rq[3] = th_disp();
	CHECK(rq[3] != NULL);
	CHECK(th_disp() == NULL);
	/* the depth lowered below what is in flight: nothing goes */
	th_set("depth", "2");
	for (i = 0; i < 4; i++)
		th_done(rq[i], 0);
	CHECK_EQ(fq_sched_pass_depth(th.s, th.now), 2);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.c.enq_reqs, 4);		/* the caller counts its own */
	/* passed requests' work is unreported: no epoch open now learns */
	CHECK(th.s->dc.cur.unseen && th.s->fc.unseen);
	CHECK_EQ(st.c.done_reqs, 4);
	CHECK_EQ(st.inflight, 0);
	th_free();
}

/* Passed-through requests are RT/BE work: IDLE waits its grace after. */
static void t_pass_idle_grace(void)
{
	struct fq_req *rq, *idle;

	th_new("cfq");
	th_set("idle_grace_ms", "10");
	fq_sched_pass(th.s, 2, true, th.now);
	idle = th_enq(9, 0, 4096, 0, IDLE);
	CHECK_EQ(fq_sched_pass_depth(th.s, th.now), 0);
	th.now += 50 * MS;
	CHECK(th_disp() == NULL);		/* still in flight */
	CHECK(fq_sched_next_event(th.s, th.now) == 0);
	fq_sched_pass(th.s, 0, false, th.now);	/* the last one completed */
	CHECK(th_disp() == NULL);
	CHECK_EQ(fq_sched_next_event(th.s, th.now), th.now + 10 * MS);
	th.now += 10 * MS;
	CHECK(th_disp() == idle);
	th_done(idle, 0);
	th_free();

	/* none in flight, but some went down: the grace counts from then */
	th_new("cfq");
	th_set("idle_grace_ms", "10");
	fq_sched_pass(th.s, 0, true, th.now);
	idle = th_enq(9, 0, 4096, 0, IDLE);
	CHECK(th_disp() == NULL);
	th.now += 10 * MS;
	rq = th_disp();
	CHECK(rq == idle);
	th_free();

	/* nothing passed through: IDLE alone goes at once */
	th_new("cfq");
	fq_sched_pass(th.s, 0, false, th.now);
	idle = th_enq(9, 0, 4096, 0, IDLE);
	CHECK(th_disp() == idle);
	th_free();
}

/* An anticipated flow keeps one slot from pass-through too. */
static void t_pass_anticipation(void)
{
	struct fq_req *s;

	th_new("cfq");
	th_set("depth", "4");
	th_set("idle_us", "1000");
	th_teach(1, 4, 200, 100, 0);		/* think 100 us, service 200 us */
	s = th_enq(1, 0, 4096, SYNC, 0);
	th_enq(2, 0, 4096, 0, 0);
	CHECK(th_disp() == s);			/* flow 1 drained: anticipated */
	CHECK(th_disp() != NULL);
	CHECK_EQ(fq_sched_pass_depth(th.s, th.now), 3);
	th.now += 200 * US;
	th_done(s, 0);
	CHECK_EQ(fq_sched_pass_depth(th.s, th.now), 3);	/* its window */
	th.now += 250 * US;
	CHECK_EQ(fq_sched_pass_depth(th.s, th.now), 4);	/* ran out */
	th_set("idle_us", "0");
	CHECK_EQ(fq_sched_pass_depth(th.s, th.now), 4);
	th_set("fastpath", "off");		/* every request scheduled */
	CHECK_EQ(fq_sched_pass_depth(th.s, th.now), 0);
	th_get("fastpath", "off\n");
	th_set("fastpath", "on");
	CHECK_EQ(fq_sched_pass_depth(th.s, th.now), 4);
	th_free();
}

/*
 * Passed-through requests below keep the device busy: the last of the
 * core's own completing then does not end the anticipation (the device
 * is not idle); the report that none is below any more does.
 */
static void t_pass_busy_not_idle(void)
{
	struct fq_req *s;
	struct fq_flow *fqf;

	th_new("cfq");
	th_set("depth", "4");
	th_set("idle_us", "1000");
	th_teach(1, 4, 200, 100, 0);		/* think 100 us, service 200 us */
	fq_sched_pass(th.s, 2, true, th.now);	/* flow 2's, passed */
	s = th_enq(1, 400000, 4096, SYNC, 0);
	CHECK(th_disp() == s);
	fqf = s->flow;
	th.now += 200 * US;
	th_done(s, 0);
	CHECK(th.s->antic == fqf);		/* its window, 2 still below */
	CHECK_EQ(fq_sched_pass_depth(th.s, th.now), 3);
	fq_sched_pass(th.s, 0, false, th.now);	/* they completed */
	CHECK(th.s->antic == NULL);		/* idle: reaped */
	CHECK_EQ(fq_sched_pass_depth(th.s, th.now), 4);
	th_free();
}

/*
 * depth=auto: requests passed through still below when the core took
 * over make pass-through wait until the controller has closed an epoch
 * it saw whole (a demand near the depth would otherwise flip between the
 * modes and leave it blind), or until the device is idle.  A fixed depth
 * does not wait.  The core keeps its depth full (every request
 * dispatched, none queued), one completion per 100 us.
 */
static void t_pass_wait_epoch(void)
{
	u64 seen;
	int i, n = 0;

	th_new_defaults("cfq");			/* depth=auto */
	fq_sched_pass(th.s, 3, true, th.now);	/* the depth filled up */
	CHECK_EQ(fq_sched_pass_depth(th.s, th.now), 0);
	th.now += 100 * US;
	fq_sched_pass(th.s, 0, false, th.now);	/* they drained */
	seen = fq_depth_seen_epochs(&th.s->dc);
	while (fq_depth_seen_epochs(&th.s->dc) == seen && n < 4000) {
		for (i = th.nin; i < (int)th.s->depth_now; i++)
			th_enq((u64)i % 2, (u64)n++ * 8, 4096, SYNC, BE(4));
		while (th_disp())
			;
		CHECK_EQ(fq_sched_pass_depth(th.s, th.now), 0);
		th.now += 100 * US;
		th_done(th.inflight[0], 0);
	}
	CHECK(fq_depth_seen_epochs(&th.s->dc) > seen);
	while (th_disp())
		;
	CHECK(th.nin > 0 && !th.s->queued);
	CHECK_EQ(fq_sched_pass_depth(th.s, th.now), th.s->depth_now);
	/* again, then the device goes idle: nothing left to learn */
	fq_sched_pass(th.s, 2, true, th.now);
	CHECK_EQ(fq_sched_pass_depth(th.s, th.now), 0);
	while (th.nin) {
		th.now += 100 * US;
		th_done(th.inflight[0], 0);
	}
	fq_sched_pass(th.s, 0, false, th.now);
	CHECK_EQ(fq_sched_pass_depth(th.s, th.now), th.s->depth_now);
	th_free();

	th_new("cfq");				/* depth=32: nothing to learn */
	fq_sched_pass(th.s, 3, true, th.now);
	CHECK_EQ(fq_sched_pass_depth(th.s, th.now), 32);
	th_free();
}

/*
 * A boosted flow, anticipated, keeps its reserve of slots from
 * pass-through, and passed-through requests are the others' in it.
 */
static void t_pass_boost_reserve(void)
{
	struct fq_req *rq, *s, *b;
	int i;

	th_new("cfq");
	th_set("depth", "4");
	th_set("idle_us", "1000");
	th_teach(1, 4, 200, 100, 0);	/* new (boosted), by its turns */
	for (i = 0; i < 32; i++) {	/* async (no boost): earns tokens */
		th_enq(10, (u64)i * 8, 4096, 0, 0);
		rq = th_disp();
		CHECK(rq && rq->key == 10);
		th.now += 1 * US;
		if (rq)
			th_done(rq, 0);
	}
	s = th_enq(1, 400000, 4096, SYNC, 0);	/* where th_teach ended */
	CHECK(th_disp() == s);
	CHECK(th.s->antic == s->flow && fq_flow_lane(th.s, s->flow));
	CHECK_EQ(fq_sched_pass_depth(th.s, th.now), 3);	/* reserve 1 */
	th.s->boost_reserve = 2;
	CHECK_EQ(fq_sched_pass_depth(th.s, th.now), 2);
	/* 2 passed through + its reserve of 2 = depth: the others wait */
	fq_sched_pass(th.s, 2, true, th.now);
	b = th_enq(10, 512, 4096, 0, 0);
	CHECK(th_disp() == NULL);
	fq_sched_pass(th.s, 1, false, th.now);
	CHECK(th_disp() == b);
	th_free();
}

/*
 * A flow behind the class's debtors (fq_drr_behind()) is held for while
 * its own request is below and through its window: the debtors keep at
 * most the injection limit below.  A debtor drained within that limit
 * leaves nothing queued, but its next request is still held by the
 * core, so pass-through must not send it down meanwhile: no slot is
 * passed until the hold is over (its hold_until while the request is
 * below, then the end of its window).
 */
static void t_pass_hold_behind(void)
{
	struct fq_req *s, *b[3];
	struct fq_flow *fqf;

	th_debtor_setup(b);
	th_set("depth", "2");
	s = th_enq(1, 400000, 4096, SYNC, 0);
	CHECK(th_disp() == s);		/* flow 1 drained: behind flow 2 */
	fqf = s->flow;
	CHECK(th.s->antic == fqf && (fqf->flags & FQ_FF_BEHIND));
	th_set("depth", "4");
	CHECK(th_disp() == NULL);	/* held: injection limit 0 */
	CHECK_EQ(fq_sched_pass_depth(th.s, th.now), 0);	/* queued */
	th.s->inject = 2;		/* as if learnt: 2 of the others below */
	CHECK(th_disp() == b[1]);	/* within the limit; nothing queued */
	CHECK_EQ(th.s->queued, 0);
	CHECK_EQ(fq_sched_pass_depth(th.s, th.now), 0);
	/* what pass-through would have sent down: the core holds it */
	b[2] = th_enq(2, (1u << 22) + 4096, 1u << 20, SYNC, 0);
	CHECK(th_disp() == NULL);
	CHECK_EQ(fq_sched_next_event(th.s, th.now), fqf->hold_until);
	/* its request below past hold_until: the others go, passed ones too */
	th.now = fqf->hold_until;
	CHECK(th_disp() == b[2]);
	CHECK_EQ(fq_sched_pass_depth(th.s, th.now), 3);
	/* its window: held for again, to its end */
	th_done(s, 0);
	CHECK(fqf->antic_until > th.now);
	CHECK_EQ(fq_sched_pass_depth(th.s, th.now), 0);
	th.now = fqf->antic_until;
	CHECK_EQ(fq_sched_pass_depth(th.s, th.now), 4);
	th_free();
}

static const struct fq_test_case cases[] = {
	{ "pass_depth_slots", t_pass_depth_slots },
	{ "pass_idle_grace", t_pass_idle_grace },
	{ "pass_anticipation", t_pass_anticipation },
	{ "pass_busy_not_idle", t_pass_busy_not_idle },
	{ "pass_wait_epoch", t_pass_wait_epoch },
	{ "pass_boost_reserve", t_pass_boost_reserve },
	{ "pass_hold_behind", t_pass_hold_behind },
};

const struct fq_test_suite fq_unit_pass = { cases, ARRAY_SIZE(cases) };
