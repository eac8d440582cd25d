// SPDX-License-Identifier: GPL-2.0
/*
 * fq_unit_expiry.c - bounded wait (fifo_expire_sync_ms,
 * fifo_expire_async_ms): a request served by its deadline under RT, every
 * time and oldest first; expiry counted from the front of a flow and not
 * for a flow ahead of its share; weights kept when everything expires;
 * the next deadline as the next event.
 */
#include "fq_unit.h"

static void t_expiry_sync(void)
{
	struct fq_req *rq, *old;
	struct fq_stats st;
	int i;

	th_new("cfq");
	th_set("depth", "1");
	old = th_enq(2, 0, 4096, SYNC, BE(4));
	for (i = 0; i < 400; i++) {
		th_enq(1, (u64)i, 4096, SYNC, RT(0));
		rq = th_disp();
		CHECK(rq != NULL);
		if (!rq)
			break;
		if (rq == old)
			break;
		th.now += 1 * MS;
		th_done(rq, 0);
	}
	/* RT starves BE until the BE request is 250 ms old */
	CHECK(rq == old);
	CHECK_EQ(rq->dispatch_ns, 250 * MS);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.c.expired, 1);
	th_free();
}

/*
 * The bound holds every time, not once: under an RT flow that always has
 * a request queued, a BE flow with 8 queued gets one out by deadline
 * about every fifo_expire_sync_ms (250 ms): at least 18 in 5 s, many
 * more than one turn's credit.  Its class's rounds do not move while
 * RT is served, so "owed service" must not be judged by them then.
 */
static void t_expiry_rt_repeats(void)
{
	struct fq_req *rq;
	int i, be = 0;

	th_new("cfq");
	th_set("depth", "1");
	for (i = 0; i < 8; i++)
		th_enq(2, (u64)i * 8, 4096, SYNC, BE(4));
	for (i = 0; i < 5000; i++) {
		th_enq(1, (u64)(1000 + i) * 8, 4096, SYNC, RT(0));
		rq = th_disp();
		CHECK(rq != NULL);
		if (!rq)
			break;
		if (rq->key == 2) {
			be++;
			th_enq(2, (u64)(9000 + i) * 8, 4096, SYNC, BE(4));
		}
		th.now += 1 * MS;
		th_done(rq, 0);
	}
	fprintf(stderr, "  BE by deadline under RT: %d in 5 s\n", be);
	CHECK(be >= 18);
	th_free();
}

static void t_expiry_async_oldest_first(void)
{
	struct fq_req *rq, *a, *b, *c;
	int i;

	th_new("cfq");
	th_set("depth", "1");
	th_set("quantum", "1024");
	a = th_enq(2, 0, 4096, 0, BE(4));		/* async, t=0 */
	th.now = 1 * MS;
	for (i = 0; i < 50; i++)			/* async RT, t=1 */
		th_enq(1, (u64)i, 4096, 0, RT(0));
	th.now = 100 * MS;
	b = th_enq(3, 0, 4096, SYNC, BE(4));		/* sync, t=100 */
	c = th_enq(4, 0, 4096, SYNC, BE(4));		/* sync, t=100 */
	th.now = 300 * MS;
	for (i = 1; i <= 4; i++) {	/* others served meanwhile: RT */
		rq = th_disp();
		CHECK(rq == &th.r[i]);
		if (rq)
			th_done(rq, 0);
	}
	th.now = 360 * MS;
	/* sync b, c expired (250 ms); async a not yet (1000 ms) */
	rq = th_disp();
	CHECK(rq == b);
	th_done(rq, 0);
	rq = th_disp();
	CHECK(rq == c);
	th_done(rq, 0);
	rq = th_disp();
	CHECK(rq && rq->key == 1);
	th_done(rq, 0);
	th.now = 1000 * MS;
	rq = th_disp();
	CHECK(rq == a);
	th_done(rq, 0);
	th.now = 2000 * MS;
	/* the RT flow goes on in enqueue order */
	for (i = 6; i < 14; i++) {
		rq = th_disp();
		CHECK(rq == &th.r[i]);
		if (rq)
			th_done(rq, 0);
	}
	th_free();
}

/*
 * A deep flow's own backlog is not a reason to jump the queue: flow 1 has
 * 40 sync requests queued on a disk serving one per 15 ms, so each of
 * them waits far longer than fifo_expire_sync_ms (250 ms) behind its own
 * flow; flow 2 always has one request queued.  Expiry counts from the
 * front of the flow, so the round robin still alternates the two.
 */
static void t_expiry_own_backlog(void)
{
	struct fq_req *rq, *r2;
	unsigned int n2 = 0, i;
	struct fq_stats st;

	th_new("cfq");
	th_set("depth", "1");
	th_set("quantum", "1");
	for (i = 0; i < 40; i++)
		th_enq(1, i, 4096, SYNC, 0);
	r2 = th_enq(2, 1000, 4096, SYNC, 0);
	for (i = 0; i < 60; i++) {
		rq = th_disp();
		CHECK(rq != NULL);
		if (!rq)
			break;
		th.now += 15 * MS;
		th_done(rq, 0);
		if (rq == r2) {
			n2++;
			r2 = th_enq(2, 1000 + i, 4096, SYNC, 0);
		} else {
			th_enq(1, 100 + i, 4096, SYNC, 0);
		}
	}
	/* alternating: 30 of 60; a fifo by age would give flow 2 one in 41 */
	CHECK(n2 >= 29);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.c.expired, 0);
	th_free();
}

/*
 * A 1 MiB reader (4 queued) and a 4 KiB reader (16 queued) at depth 1 on
 * a 4 MiB/s disk for 30 s, at the defaults (fairness=time): a request of
 * b bytes costs 2 ms + b at 4 MiB/s (1 MiB: 252 ms).  @billed_after: as
 * behind a throttle that bills bytes after the fact (QEMU's), a request
 * completes after 2 ms + the previous request's bytes, so the 1 MiB read
 * itself is quick and whatever comes next pays for it.  Each flow's
 * device time is its requests' cost.
 */
static void th_slow_disk(bool billed_after, u64 busy[2], struct fq_stats *st)
{
	static struct fq_req rq[20];
	u64 t, prev_bytes = 0;
	struct fq_req *r;

	th_new_defaults("cfq");
	th_set("depth", "1");
	memset(rq, 0, sizeof(rq));
	busy[0] = busy[1] = 0;
	th_enq_mixed(rq, 20);
	while (th.now < 30000 * MS) {
		r = fq_sched_dispatch(th.s, th.now);
		if (!r) {
			t = fq_sched_next_event(th.s, th.now);
			CHECK(t > th.now);
			if (t <= th.now)
				break;
			th.now = t;
			continue;
		}
		busy[r->key - 1] += 2 * MS + (u64)r->bytes * 1000 * MS / (4 << 20);
		th.now += 2 * MS + (billed_after ? prev_bytes : r->bytes) *
			  1000 * MS / (4 << 20);
		prev_bytes = r->bytes;
		fq_sched_complete(th.s, r, 0, th.now);
		r->sector += 20ull << 20;
		fq_sched_enqueue(th.s, r, th.now);
	}
	fq_sched_stats(th.s, st);
	fprintf(stderr, "  %s: 1 MiB reader %llu ms, 4 KiB reader %llu ms of device time, %llu expired, %llu deferred; model %llu us + %llu ps/B\n",
		billed_after ? "billed after" : "billed itself",
		(unsigned long long)(busy[0] / MS),
		(unsigned long long)(busy[1] / MS),
		(unsigned long long)st->c.expired,
		(unsigned long long)st->expire_deferred,
		(unsigned long long)(st->cost_a_ns[0] / 1000),
		(unsigned long long)st->cost_b_ps_per_byte[0]);
	while ((r = fq_sched_drain(th.s)))
		;
	CHECK_EQ(fq_check_invariants(th.s), 0);
	fq_sched_destroy(th.s);
	th.s = NULL;
}

/*
 * fairness=time on a slow disk with mixed sizes: the 1 MiB reader waits
 * about 250 ms between its turns by design, and its requests must not
 * expire for that (expired every turn, both flows would go out in
 * arrival order, and nearly all the device time to the 1 MiB reader).
 * Each flow gets 35-65 % of the device time, and the cost model prices
 * 1 MiB within 10 % of its 252 ms: each completion's time counts whole,
 * since a cap on it would price the 1 MiB read below its cost and tilt
 * the shares towards it.
 */
static void t_expiry_slow_turns(void)
{
	struct fq_stats st;
	u64 busy[2], mib;

	th_slow_disk(false, busy, &st);
	CHECK(busy[0] * 100 >= (busy[0] + busy[1]) * 35);
	CHECK(busy[1] * 100 >= (busy[0] + busy[1]) * 35);
	mib = st.cost_a_ns[0] + st.cost_b_ps_per_byte[0] * (1 << 20) / 1000;
	CHECK(mib >= 227 * MS && mib <= 277 * MS);
}

/*
 * The same behind a throttle that bills a request's bytes after it: the
 * 4 KiB read after a 1 MiB read takes 252 ms, and the 1 MiB reader's
 * next head has waited past fifo_expire_sync_ms by then.  A flow ahead
 * of its share (its credit for a later round) must not expire again
 * (fq_drr_owed()): without that rule the 1 MiB reader would go by
 * deadline at every turn, and the 4 KiB reader get a handful of its
 * 3 ms requests per 252 ms one.  Device time 35-65 %.
 */
static void t_expiry_billed_after(void)
{
	struct fq_stats st;
	u64 busy[2];

	th_slow_disk(true, busy, &st);
	CHECK(busy[0] * 100 >= (busy[0] + busy[1]) * 35);
	CHECK(busy[1] * 100 >= (busy[0] + busy[1]) * 35);
	CHECK(st.expire_deferred > 0);
}

/*
 * The next deadline is the earliest head's, once others were served since
 * it became first (FQ_EXPIRE_MIN_DISPATCHES); before that a dispatch, not
 * a deadline, is what comes next.
 */
static void t_expiry_next_event(void)
{
	struct fq_req *rq;
	int i;

	th_new("cfq");
	th_set("depth", "1");
	th_enq(1, 0, 4096, 0, IDLE);
	th_enq(2, 0, 4096, SYNC, BE(4));
	th_enq(3, 0, 4096, 0, BE(4));
	for (i = 0; i < 4; i++)
		th_enq(5, (u64)i, 4096, SYNC, RT(0));
	CHECK_EQ(fq_sched_next_event(th.s, 0), 0);
	for (i = 0; i < 4; i++) {
		rq = th_disp();
		CHECK(rq && rq->key == 5);
		if (!rq)
			break;
		th.now += 1 * MS;
		th_done(rq, 0);
	}
	CHECK_EQ(fq_sched_next_event(th.s, th.now), 250 * MS);
	th_free();
}

/* Expiry respects weights: weight 1 against 1000, everything expired. */
static void t_expiry_weights(void)
{
	struct fq_req *rq;
	int i, n1 = 0, q[2] = { 0, 0 };

	th_new("cfq");
	th_set("depth", "1");
	th_set("fifo_expire_sync_ms", "1");
	for (i = 0; i < 4000; i++) {
		while (q[0] < 4) {
			th_enq_w(1, (u64)i, 4096, SYNC, 0, 1);
			q[0]++;
		}
		while (q[1] < 4) {
			th_enq_w(2, (u64)i, 4096, SYNC, 0, 1000);
			q[1]++;
		}
		rq = th_disp();
		CHECK(rq != NULL);
		if (!rq)
			break;
		q[rq->key == 1 ? 0 : 1]--;
		n1 += rq->key == 1;
		th.now += 500 * US;		/* a slow disk: all expire */
		th_done(rq, 0);
		if (th.n > TH_REQS - 4)
			break;
	}
	/* weight share 0.1 %; expired once per 128 ms: at most ~0.5 % */
	CHECK(i >= 4000 - 8);
	CHECK(n1 * 1000 <= i * 5);
	CHECK(n1 >= 1);				/* still bounded: not starved */
	th_free();
}

static const struct fq_test_case cases[] = {
	{ "expiry_sync", t_expiry_sync },
	{ "expiry_async_oldest_first", t_expiry_async_oldest_first },
	{ "expiry_next_event", t_expiry_next_event },
	{ "expiry_rt_repeats", t_expiry_rt_repeats },
	{ "expiry_slow_turns", t_expiry_slow_turns },
	{ "expiry_billed_after", t_expiry_billed_after },
	{ "expiry_own_backlog", t_expiry_own_backlog },
	{ "expiry_weights", t_expiry_weights },
};

const struct fq_test_suite fq_unit_expiry = { cases, ARRAY_SIZE(cases) };
