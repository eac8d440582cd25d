// SPDX-License-Identifier: GPL-2.0
/*
 * fq_unit_turns.c - cfq's rounds over time: a new flow joins the next
 * round, a returning one starts in the current one, credit is never
 * banked, a debt survives a reap and the work under the lock does not
 * grow with the debtors, drained debtors keep
 * their flows, and a round's credit is bounded under many flows.
 */
#include "fq_unit.h"

/*
 * A flow that comes back after a pause longer than a round (a reader
 * with think time) starts at the head of the current round -- it is not
 * sent behind everybody -- with one round's credit, never more.
 */
static void t_returning_flow(void)
{
	struct fq_req *rq;
	u64 keys[16];
	int i;

	th_new("cfq");
	th_set("depth", "1");
	th_set("quantum", "4");
	th_set("idle_us", "0");
	th_set("boost_ms", "0");	/* the rounds alone, see boost_* */
	for (i = 0; i < 200; i++)
		th_enq(2, (u64)i, 4096, 0, 0);
	th_run(2, NULL);
	rq = th_enq(1, 0, 4096, SYNC, 0);
	CHECK_EQ(th_run(3, keys), 3);
	CHECK_EQ(keys[0], 2);			/* a new flow: after the turn */
	CHECK_EQ(keys[1], 2);
	CHECK_EQ(keys[2], 1);
	th_run(22, NULL);			/* 5.5 rounds without flow 1 */
	th_enq(1, 8, 4096, SYNC, 0);
	CHECK_EQ(th_run(1, keys), 1);
	CHECK_EQ(keys[0], 1);			/* back: served at once */
	th_run(20, NULL);
	for (i = 0; i < 10; i++)
		th_enq(1, (u64)(16 + i), 4096, SYNC, 0);
	CHECK_EQ(th_run(8, keys), 8);
	for (i = 0; i < 4; i++)			/* one turn, no banked credit */
		CHECK_EQ(keys[i], 1);
	CHECK_EQ(keys[4], 2);
	(void)rq;
	th_free();
}

/*
 * Coming and going banks nothing: flow 1 issues bursts of 1..12 requests
 * after pauses of 0..40 dispatches against the always-backlogged flow 2
 * (quantum 4).  While flow 2 is backlogged, flow 1 never gets more than
 * two turns' credit (the carried one and the current) in a row, however
 * long it was away; and over the run it gets no more than half.
 */
static void t_no_banking(void)
{
	struct fq_req *rq;
	u64 rng = 12345;
	int i, run = 0, worst = 0, pause = 0, n1 = 0, q2 = 0, q1 = 0;

	th_new("cfq");
	th_set("depth", "1");
	th_set("quantum", "4");
	for (i = 0; i < 3000 && th.n < TH_REQS - 16; i++) {
		while (q2 < 8) {
			th_enq(2, (u64)th.n, 4096, 0, 0);
			q2++;
		}
		if (!q1 && pause-- <= 0) {
			int k, burst;

			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			burst = 1 + (int)((rng >> 33) % 12);
			pause = (int)((rng >> 45) % 41);
			for (k = 0; k < burst; k++)
				th_enq(1, (u64)th.n, 4096, SYNC, 0);
			q1 = burst;
		}
		rq = th_disp();
		CHECK(rq != NULL);
		if (!rq)
			break;
		if (rq->key == 1) {
			q1--;
			n1++;
			run++;
			worst = run > worst ? run : worst;
		} else {
			q2--;
			run = 0;
		}
		th.now += 10 * US;
		th_done(rq, 0);
	}
	CHECK(worst <= 2 * 4);
	CHECK(n1 * 2 <= i + 8);
	th_free();
}

/*
 * A debt of many rounds costs no loop: 128 weight-1 flows of 1 MiB
 * requests in bytes mode (200 rounds of credit per request) with
 * weights 1..4; the pick looks at O(flows) entries at most, not at
 * rounds x flows (a loop over the rounds owed: about 25,600 per
 * dispatch).  Credited 6,400 rounds ahead and more, every debtor is
 * beyond the wheel of later[] (fq_internal.h): with nobody nearer the
 * class takes its next round from one pass over them, O(flows).
 */
static void t_debt_loop_bounded(void)
{
	struct fq_req *rq;
	u64 before, steps, worst = 0;
	int i;

	th_new("cfq");
	th_set("depth", "1");
	th_set("fairness", "bytes");
	th_set("quantum_bytes", "4096");
	for (i = 0; i < 128; i++) {
		th_enq_w((u64)i, 0, 1 << 20, 0, 0, (u16)(1 + i % 4));
		th_enq_w((u64)i, 1, 1 << 20, 0, 0, (u16)(1 + i % 4));
	}
	for (i = 0; i < 600; i++) {
		before = th.s->pick_steps;
		rq = th_disp();
		CHECK(rq != NULL);
		if (!rq)
			break;
		steps = th.s->pick_steps - before;
		worst = steps > worst ? steps : worst;
		th_done(rq, 0);
		fq_sched_enqueue(th.s, rq, th.now);	/* stays backlogged */
	}
	CHECK(worst <= 2 * 128 + 8);
	th_free();
}

/* The worst list steps of one call, by kind (debt_steps()). */
struct debt_steps {
	u64 enq, disp, done, reap, work;
	u32 freed;		/* flows one completion gave back, at most */
	u32 ahead;		/* the most rounds a debtor was credited ahead */
};

static void debt_note(u64 *worst, u64 before)
{
	u64 n = th.s->pick_steps - before;

	if (n > *worst)
		*worst = n;
}

/*
 * @nf readers at queue depth 1, 4 KiB each, at the defaults but depth 4
 * (fairness=time, quantum_us 1000), a completion every 100 us: past
 * FQ_ROUND_FLOWS busy flows a turn's credit is below a request's cost,
 * so every request leaves its flow in debt, up to about nf / 320 rounds
 * ahead (beyond the wheel of FQ_IDLE_WHEEL rounds from about 20,000
 * flows).  One flow in eight thinks for 2 ms after each completion: the
 * idle lists hold drained debtors all along.  The list steps
 * (fqs->pick_steps) of every enqueue, dispatch call and completion are
 * counted after the first @nf completions, for 4 x @nf more; then every
 * flow stops, the device goes idle and its flows are reaped (the
 * caller's work item: fq_sched_reap() by 64).
 */
static void debt_steps(u32 nf, struct debt_steps *w)
{
	struct fq_req *r = calloc(nf, sizeof(*r));
	struct fq_req **below = calloc(4, sizeof(*below));
	u32 *think = calloc(nf, sizeof(*think));
	u64 *wake = calloc(nf, sizeof(*wake));
	u32 i, nb = 0, th_head = 0, th_tail = 0, done = 0, k;
	bool stop = false, measure;
	struct fq_req *rq;
	u32 flows;
	u64 before;

	memset(w, 0, sizeof(*w));
	th_new_defaults("cfq");
	th_set("depth", "4");
	if (!r || !below || !think || !wake || !th.s)
		goto out;
	for (i = 0; i < nf; i++) {
		r[i].key = 1000 + i;
		r[i].bytes = 4096;
		r[i].flags = SYNC;
		r[i].sector = (u64)i * 8;
		fq_sched_enqueue(th.s, &r[i], th.now);
	}
	for (;;) {
		measure = done >= nf && !stop;
		while (nb < 4) {
			before = th.s->pick_steps;
			rq = fq_sched_dispatch(th.s, th.now);
			if (measure)
				debt_note(&w->disp, before);
			if (!rq)
				break;
			below[nb++] = rq;
		}
		if (!nb)
			break;
		th.now += 100 * US;
		rq = below[0];
		memmove(below, below + 1, --nb * sizeof(*below));
		before = th.s->pick_steps;
		flows = th.s->nr_flows;
		fq_sched_complete(th.s, rq, 0, th.now);
		if (measure || stop)
			debt_note(stop ? &w->reap : &w->done, before);
		if (flows > th.s->nr_flows && flows - th.s->nr_flows > w->freed)
			w->freed = flows - th.s->nr_flows;
		while (fq_sched_reap_want(th.s)) {
			before = th.s->pick_steps;
			fq_sched_reap(th.s, 64);
			debt_note(&w->work, before);
		}
		done++;
		stop = done >= 5 * nf;
		k = (u32)(rq - r);
		if (stop)
			continue;
		if (k % 8 == 0) {
			/* thinks: back in 2 ms (a ring, in order of waking) */
			think[th_tail++ % nf] = k;
			wake[k] = th.now + 2 * MS;
		} else {
			before = th.s->pick_steps;
			fq_sched_enqueue(th.s, rq, th.now);
			debt_note(&w->enq, before);
		}
		while (th_head != th_tail && wake[think[th_head % nf]] <= th.now) {
			rq = &r[think[th_head++ % nf]];
			before = th.s->pick_steps;
			fq_sched_enqueue(th.s, rq, th.now);
			debt_note(&w->enq, before);
		}
		if (rq->flow && rq->flow->ci < FQ_PRIO_COUNT &&
		    fq_round_diff(rq->flow->round,
				  th.s->cq[rq->flow->ci].round) > (s32)w->ahead)
			w->ahead = (u32)fq_round_diff(rq->flow->round,
					th.s->cq[rq->flow->ci].round);
	}
	/* thinkers still thinking never come back: the device is idle */
	CHECK_EQ(th.s->queued, 0);
	CHECK_EQ(th.s->nr_flows, 0);
	CHECK_EQ(fq_check_invariants(th.s), 0);
out:
	th_free();
	free(r);
	free(below);
	free(think);
	free(wake);
}

/*
 * The work under the lock is O(1) in the flows: the worst steps of one
 * enqueue, dispatch call, completion (the one that reaps included) and
 * reap call are the same at 10 and at 65,536 flows in debt, within a
 * bound of their own (the lists a pick takes whole or steps through,
 * FQ_CHORE_STEPS at a time, and the lists of the wheel), and a
 * completion frees a few flows at most, however many an idle device
 * leaves (the caller's work item frees the rest).  Tried: a round change
 * that walks every debtor (dispatch steps 852, 9,986, 65,532 from 1,000
 * flows on), and a reap that frees every drained flow in the completion
 * that finds the device idle: both fail here.
 */
static void t_debt_steps_flat(void)
{
	static const u32 nfs[] = { 10, 100, 1000, 10000, 65536 };
	const u64 bound = 4 * (2 * FQ_CHORE_STEPS + FQ_IDLE_WHEEL + 8);
	struct debt_steps w, most = { 0 };
	u32 i;

	for (i = 0; i < ARRAY_SIZE(nfs); i++) {
		debt_steps(nfs[i], &w);
		printf("  %5u flows (debt up to %u rounds ahead): worst steps enqueue %llu, dispatch %llu, completion %llu, reaping completion %llu, reap call %llu; flows freed by one completion %u\n",
		       nfs[i], w.ahead, (unsigned long long)w.enq,
		       (unsigned long long)w.disp, (unsigned long long)w.done,
		       (unsigned long long)w.reap, (unsigned long long)w.work,
		       w.freed);
		if (i == ARRAY_SIZE(nfs) - 1)
			CHECK(w.ahead > FQ_IDLE_WHEEL);	/* far debtors seen */
		CHECK(w.enq <= bound && w.disp <= bound && w.done <= bound &&
		      w.reap <= bound && w.work <= 64);
		/* the free of many flows is the work item's, not the irq's */
		CHECK(w.freed <= 2 * FQ_CHORE_STEPS + 1);
		/* and no growth from 1,000 flows on */
		if (i >= 2) {
			CHECK(w.disp <= most.disp + 2 * FQ_CHORE_STEPS);
			CHECK(w.done <= most.done + 2 * FQ_CHORE_STEPS);
			CHECK(w.reap <= most.reap + 2 * FQ_CHORE_STEPS);
		}
		if (w.disp > most.disp)
			most.disp = w.disp;
		if (w.done > most.done)
			most.done = w.done;
		if (w.reap > most.reap)
			most.reap = w.reap;
	}
}

/* A debt is not forgiven when the flow is reaped and comes back. */
static void t_debt_survives_reap(void)
{
	struct fq_req *rq;
	u64 keys[64];
	int i;

	th_new("cfq");
	th_set("depth", "1");
	th_set("fairness", "bytes");
	th_set("quantum_bytes", "4096");
	th_set("idle_us", "0");
	rq = th_enq_w(1, 0, 1 << 20, 0, 0, 1);	/* 2,560 rounds of credit */
	CHECK(th_disp() == rq);
	th_done(rq, 0);				/* idle device: reaped */
	CHECK_EQ(th.s->nr_flows, 0);
	th_enq_w(1, 2048, 1 << 20, 0, 0, 1);
	for (i = 0; i < 64; i++)
		th_enq(2, (u64)i, 4096, 0, 0);
	CHECK_EQ(th_run(64, keys), 64);
	for (i = 0; i < 64; i++)		/* flow 1 still owes */
		CHECK_EQ(keys[i], 2);
	CHECK_EQ(th_run(1, keys), 1);		/* then it is served */
	CHECK_EQ(keys[0], 1);
	th_free();
}

/*
 * Many flows at queue depth 1 keep their place and their debts: @nf
 * readers, half at weight 200 and half at 100, each sending its next
 * request as soon as the last completes, depth 4.  Past FQ_ROUND_FLOWS
 * a turn's credit is below a request's cost, so each request leaves its
 * flow credited for a later round as it drains (at quantum 1 and 2,048
 * flows, further ahead than the wheel of idle lists).  Such a flow is
 * kept, not freed: freed, it would have to come back from the flow
 * memory of FQ_MEM_SLOTS (64) slots, which cannot hold them all, and a
 * flow would be allocated for nearly every request.  Checks the shares
 * by weight (of the last 3/4 of @n completions) and the flows created.
 */
static void th_debtors_run(int nf, const char *quantum, int n)
{
	enum { DEPTH = 4 };
	static struct fq_req rq[2048];
	struct fq_req *ring[DEPTH], *r;
	u64 served[2] = { 0, 0 };
	unsigned int head = 0, tail = 0;
	struct fq_stats st;
	int i;

	th_new("cfq");
	th_set("depth", "4");
	th_set("quantum", quantum);
	th_set("idle_us", "0");
	th_set("boost_ms", "0");
	for (i = 0; i < nf; i++) {
		rq[i] = (struct fq_req){ .key = (u64)i + 1, .bytes = 4096,
					 .flags = SYNC,
					 .weight = i < nf / 2 ? 200 : 100 };
		fq_sched_enqueue(th.s, &rq[i], th.now);
	}
	for (i = 0; i < n; i++) {
		while (tail - head < DEPTH &&
		       (r = fq_sched_dispatch(th.s, th.now)))
			ring[tail++ % DEPTH] = r;
		CHECK(tail != head);
		if (tail == head)
			break;
		r = ring[head++ % DEPTH];
		th.now += 10 * US;
		fq_sched_complete(th.s, r, 0, th.now);
		if (i >= n / 4)
			served[r->weight == 200 ? 0 : 1]++;
		r->sector += 8;
		fq_sched_enqueue(th.s, r, th.now);
	}
	CHECK_EQ(fq_check_invariants(th.s), 0);
	fq_sched_stats(th.s, &st);
	printf("  %d flows, quantum %s: weight 200 : 100 served %llu : %llu, flows created %llu\n",
	       nf, quantum, (unsigned long long)served[0],
	       (unsigned long long)served[1],
	       (unsigned long long)st.flow_allocs);
	CHECK(served[0] * 100 >= served[1] * 180);
	CHECK(served[0] * 100 <= served[1] * 220);
	CHECK(st.flow_allocs <= (u64)nf + (u64)nf / 8);
	while (head != tail)
		fq_sched_complete(th.s, ring[head++ % DEPTH], 0, th.now);
	th_free();
}

static void t_drained_debtors_kept(void)
{
	th_debtors_run(256, "8", 40000);
	th_debtors_run(2048, "1", 80000);
}

/* A flow issuing one request at a time keeps its turn (no idling). */
static void t_claim_keeps_turn(void)
{
	struct fq_req *rq;
	int i, s = 0;

	th_new("cfq");
	th_set("depth", "1");
	for (i = 0; i < 200; i++)
		th_enq(2, (u64)i, 4096, 0, 0);
	for (i = 0; i < 100; i++) {
		rq = th_disp();
		CHECK(rq != NULL);
		if (!rq)
			break;
		th_done(rq, 0);
		if (rq->key == 1)
			s++;
		if (!(i & 1))
			th_enq(1, (u64)i, 4096, SYNC, 0);
	}
	/* flow 1 is served each time it has a request: 50 % */
	CHECK(s >= 48);
	th_free();
}

/*
 * A new flow joins the next round: it does not cut into a turn.  (The
 * rounds alone: a boosted new flow does, see the boost_* cases.)
 */
static void t_new_flow_waits_turn(void)
{
	u64 keys[8];
	int i;

	th_new("cfq");
	th_set("depth", "1");
	th_set("quantum", "4");
	th_set("boost_ms", "0");
	for (i = 0; i < 8; i++)
		th_enq(1, (u64)i, 4096, SYNC, 0);
	CHECK_EQ(th_run(1, keys), 1);
	th_enq(2, 0, 4096, SYNC, 0);
	th_enq(2, 1, 4096, SYNC, 0);
	CHECK_EQ(th_run(8, keys), 8);
	/* flow 1 finishes its turn of 4, then flow 2's, then flow 1 */
	CHECK_EQ(keys[0], 1);
	CHECK_EQ(keys[1], 1);
	CHECK_EQ(keys[2], 1);
	CHECK_EQ(keys[3], 2);
	CHECK_EQ(keys[4], 2);
	CHECK_EQ(keys[5], 1);
	th_free();
}

/*
 * Many flows with one request each, completed in dispatch order by a
 * 4-wide device: every flow gets the same service (no phase lock in
 * which a flow is always in flight when a round ends).
 */
static void many_single_flows(const char *policy)
{
	enum { NF = 100, D = 16, WARM = 4000, RUN = 40000 };
	struct fq_req *q[D], *rq;
	int cnt[NF] = { 0 }, i, n = 0, mn, mx;

	th_new(policy);
	th_set("depth", "16");
	th_set("buckets", "4096");
	for (i = 0; i < NF; i++)
		th_enq((u64)i, 0, 4096, SYNC, 0);
	for (i = 0; i < D; i++)
		q[i] = th_disp();
	for (i = 0; i < WARM + RUN; i++) {
		rq = q[i % D];
		if (!rq)
			break;
		th.now += 7 * US;
		th_done(rq, 0);
		if (i >= WARM) {
			cnt[rq->key]++;
			n++;
		}
		fq_sched_enqueue(th.s, rq, th.now);	/* same request again */
		q[i % D] = th_disp();
	}
	mn = mx = cnt[0];
	for (i = 0; i < NF; i++) {
		mn = cnt[i] < mn ? cnt[i] : mn;
		mx = cnt[i] > mx ? cnt[i] : mx;
	}
	/* 40000 completions over 100 flows: 400 each, within 5 % */
	CHECK_EQ(n, RUN);
	CHECK(mn * 100 >= 400 * 95);
	CHECK(mx * 100 <= 400 * 105);
	for (i = 0; i < D; i++)
		th.inflight[i] = q[i];
	th.nin = D;
	th_free();
}

static void t_many_single_flows(void)
{
	many_single_flows("cfq");
	many_single_flows("sfq");
}

/*
 * A round's credit is bounded: 1,000 flows at queue depth 1 (each sends
 * its next request as the last completes) on a 16-wide device, in
 * requests mode at quantum 8.  Were each flow granted a whole turn, a
 * flow that came back with credit would go again, 8 in a row, while most
 * waited a round of 8,000 requests: after 4,000 completions about half
 * the flows would have had none and half 8.  Bounded, every flow has 2
 * to 6 (4 on average).  The first 32 flows, placed before the class
 * filled up, are granted whole turns: a flow back within its round keeps
 * no more than a turn of now.
 */
static void t_round_bounded(void)
{
	static u32 done[1000];
	struct fq_req *ring[64], *rq;
	u32 lo = ~0u, hi = 0, head = 0, tail = 0;
	int i;

	memset(done, 0, sizeof(done));
	th_new("cfq");
	th_set("depth", "16");
	th_set("boost_ms", "0");
	for (i = 0; i < 1000; i++)
		th_enq((u64)i, (u64)i * 8, 4096, SYNC, 0);
	for (i = 0; i < 4000; i++) {
		while ((rq = th_disp()))
			ring[tail++ & 63] = rq;
		th.now += 10 * US;
		rq = ring[head++ & 63];		/* the oldest completes */
		done[rq->key]++;
		th_done(rq, 0);
		th_enq(rq->key, rq->sector + 8, 4096, SYNC, 0);
	}
	for (i = 0; i < 1000; i++) {
		lo = done[i] < lo ? done[i] : lo;
		hi = done[i] > hi ? done[i] : hi;
	}
	printf("  1,000 QD1 flows, 4,000 completions: %u to %u each\n", lo, hi);
	CHECK(lo >= 2);
	CHECK(hi <= 6);
	th_free();
}

static const struct fq_test_case cases[] = {
	{ "returning_flow", t_returning_flow },
	{ "no_banking", t_no_banking },
	{ "debt_loop_bounded", t_debt_loop_bounded },
	{ "debt_steps_flat", t_debt_steps_flat },
	{ "debt_survives_reap", t_debt_survives_reap },
	{ "drained_debtors_kept", t_drained_debtors_kept },
	{ "claim_keeps_turn", t_claim_keeps_turn },
	{ "new_flow_waits_turn", t_new_flow_waits_turn },
	{ "many_single_flows", t_many_single_flows },
	{ "round_bounded", t_round_bounded },
};

const struct fq_test_suite fq_unit_turns = { cases, ARRAY_SIZE(cases) };
