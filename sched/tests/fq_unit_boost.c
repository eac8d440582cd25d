// SPDX-License-Identifier: GPL-2.0
/*
 * fq_unit_boost.c - the interactive boost (fq_boost.c): a new small
 * sync reader served first, the ways it loses the boost, read-ahead, its
 * bounded share, and the reserve of slots the others keep out of.
 */
#include "fq_unit.h"

enum { TB_BULK = 10 };		/* bulk flows: keys 10 .. 10 + TB_BULK - 1 */

/*
 * Dispatch and complete one request, 1 ms of clock each; a bulk flow
 * served gets another request queued (they stay 8 deep: greedy, never
 * boosted).  Returns the key served, 0 if nothing was dispatched.
 */
static u64 tb_step(void)
{
	struct fq_req *rq = th_disp();
	u64 key;

	if (!rq)
		return 0;
	key = rq->key;
	th.now += MS;
	th_done(rq, 0);
	if (key >= 10 && key < 10 + TB_BULK)
		th_enq(key, (u64)th.n * 8, 4096, SYNC, 0);
	return key;
}

/* @nbulk bulk flows, 8 requests queued each, then @warm dispatches. */
static void tb_setup(int nbulk, int warm, const char *boost_ms)
{
	int k, i;

	th_new("cfq");
	th_set("depth", "1");
	th_set("quantum", "4");
	th_set("idle_us", "0");
	if (boost_ms)
		th_set("boost_ms", boost_ms);
	for (k = 0; k < nbulk; k++)
		for (i = 0; i < 8; i++)
			th_enq(10 + (u64)k, (u64)(k * 64 + i) * 8, 4096, SYNC, 0);
	for (i = 0; i < warm; i++)
		tb_step();
}

/*
 * @key reads @n times one 4 KiB sync request and then thinks for three
 * bulk dispatches: the most dispatches one of its requests waited for
 * (1 = served by the very next dispatch).  @bytes, @flags: its requests.
 */
static int tb_reader(u64 key, int n, u32 bytes, u32 flags)
{
	int r, waited, worst = 0;

	for (r = 0; r < n; r++) {
		th_enq(key, (u64)(key * 1000 + r) * 64, bytes, flags, 0);
		for (waited = 1; waited < 200 && tb_step() != key; waited++)
			;
		worst = waited > worst ? waited : worst;
		tb_step();
		tb_step();
		tb_step();
	}
	return worst;
}

/*
 * A new one-request-at-a-time reader against ten backlogged flows (quantum
 * 4, depth 1): boosted, every one of its requests goes at the next
 * dispatch; without the boost (boost_ms=0) one waits for the others' turns
 * (a round is 40 requests).  After boost_ms the boost is over.
 */
static void t_boost_interactive(void)
{
	struct fq_stats st;
	int worst;

	tb_setup(TB_BULK, 40, NULL);
	worst = tb_reader(1, 30, 4096, SYNC);
	CHECK_EQ(worst, 1);
	/* the stats: eleven new keys, the bulk ones greedy at once */
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.boost_starts, TB_BULK + 1);
	CHECK_EQ(st.boost_end_depth, TB_BULK);
	CHECK_EQ(st.boost_served, 30);
	CHECK_EQ(st.boost_end_time + st.boost_end_budget + st.boost_end_kind +
		 st.boost_end_size, 0);
	th_free();

	tb_setup(TB_BULK, 40, "0");
	worst = tb_reader(1, 30, 4096, SYNC);
	CHECK(worst >= 10);
	th_free();

	/* bounded in time: 50 ms, a dispatch is 1 ms */
	tb_setup(TB_BULK, 40, "50");
	CHECK_EQ(tb_reader(1, 10, 4096, SYNC), 1);	/* 40 ms */
	tb_reader(1, 5, 4096, SYNC);			/* past 50 ms */
	CHECK(tb_reader(1, 30, 4096, SYNC) >= 10);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.boost_end_time, 1);
	th_free();
}

/*
 * A boosted reader is waited for at any depth, seeky or not: at depth 1,
 * after each of its random reads (think 100 us, 1 ms service), the one
 * slot stays free through its think time, so that its next read does not
 * queue behind a bulk one.  Without the boost a seeky reader at depth 1
 * is not waited for (fq_unit_antic.c's anticipation_seeky): nothing is
 * held.  Returns the completions of the reader after which no bulk
 * request went (of 12, from the fourth on: the think time is learnt).
 * Not all 9: once its reads come back as fast as alone, the reader has
 * its share and is not waited for (fq_antic_served()) until it has not.
 */
static int tb_seeky_held(const char *boost_ms)
{
	int i, w, held = 0;

	tb_setup(TB_BULK, 40, boost_ms);
	th_set("idle_us", "1000");
	for (i = 0; i < 12; i++) {
		th_enq(1, (u64)(i * 100003 + 17) * 64, 4096, SYNC, 0);
		for (w = 0; w < 200 && tb_step() != 1; w++)
			;
		if (i >= 3 && tb_step() == 0)
			held++;
		th.now += 100 * US;
	}
	th_free();
	return held;
}

static void t_boost_antic_depth1(void)
{
	CHECK(tb_seeky_held(NULL) >= 4);
	CHECK_EQ(tb_seeky_held("0"), 0);
}

/*
 * A greedy flow loses its boost for good: more than 4 requests outstanding,
 * a request above 128 KiB, an async one.  Afterwards it reads one small
 * request at a time and is not served first any more (a well-behaved new
 * flow beside it is); a reap of the idle device does not give it back.
 */
static void t_boost_greedy(void)
{
	struct fq_stats st;
	int i;

	tb_setup(TB_BULK, 45, NULL);	/* in the middle of a round */
	for (i = 0; i < 5; i++)		/* 5 outstanding */
		th_enq(1, (u64)(100 + i) * 8, 4096, SYNC, 0);
	CHECK(tb_step() != 1);		/* joins the round's tail */
	th_enq(2, 0, 256 << 10, SYNC, 0);	/* too large */
	th_enq(3, 0, 4096, 0, 0);		/* async */
	/* why each ended, in the stats (the bulk flows: by depth too) */
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.boost_end_depth, TB_BULK + 1);
	CHECK_EQ(st.boost_end_size, 1);
	CHECK_EQ(st.boost_end_kind, 1);
	for (i = 0; i < 100; i++)
		tb_step();
	CHECK(tb_reader(1, 30, 4096, SYNC) >= 10);
	CHECK(tb_reader(2, 30, 4096, SYNC) >= 10);
	CHECK(tb_reader(3, 30, 4096, SYNC) >= 10);
	CHECK_EQ(tb_reader(4, 30, 4096, SYNC), 1);	/* control */
	th_free();

	/* a reap does not give it back: the flow memory keeps the loss */
	th_new("cfq");
	th_set("depth", "1");
	th_set("quantum", "4");
	th_set("idle_us", "0");
	for (i = 0; i < 5; i++)
		th_enq(1, (u64)i * 8, 4096, SYNC, 0);
	CHECK_EQ(th_run(5, NULL), 5);	/* the device is idle: flow 1 reaped */
	for (i = 0; i < TB_BULK * 8; i++)
		th_enq(10 + (u64)(i % TB_BULK), (u64)(50 + i) * 8, 4096, SYNC, 0);
	for (i = 0; i < 45; i++)
		tb_step();
	CHECK(tb_reader(1, 30, 4096, SYNC) >= 10);
	th_free();
}

/*
 * Read-ahead does not make a flow greedy: a new reader whose first
 * request comes after 31 read-ahead requests (ext4 reads the inode table
 * ahead, then the inode's block) keeps its boost and is served first.
 * The same 32 requests without the read-ahead flag end it.
 */
static void t_boost_readahead(void)
{
	int i, ra;

	for (ra = 1; ra >= 0; ra--) {
		tb_setup(TB_BULK, 45, NULL);
		for (i = 0; i < 31; i++)
			th_enq(1, (u64)(100 + i) * 8, 4096,
			       SYNC | (ra ? FQ_REQ_RAHEAD : 0), 0);
		th_enq(1, 8, 4096, SYNC, 0);
		CHECK_EQ(tb_step() == 1, ra);	/* boosted: at once */
		for (i = 0; i < 200; i++)
			tb_step();
		if (ra)
			CHECK_EQ(tb_reader(1, 30, 4096, SYNC), 1);
		else
			CHECK(tb_reader(1, 30, 4096, SYNC) >= 10);
		CHECK_EQ(fq_check_invariants(th.s), 0);
		th_free();
	}
}

/*
 * Read-ahead in flight is not outstanding either: at depth 8 a boosted
 * reader's burst of eight read-ahead requests goes down at once, and the
 * request it queues while they are below keeps its boost.
 */
static void t_boost_readahead_inflight(void)
{
	struct fq_stats st;
	int i;

	th_new("cfq");
	th_set("depth", "8");
	for (i = 0; i < 8; i++)
		th_enq(1, (u64)(100 + i) * 8, 4096, SYNC | FQ_REQ_RAHEAD, 0);
	while (th_disp())
		;
	CHECK_EQ(th.nin, 8);
	th_enq(1, 8, 4096, SYNC, 0);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.boost_starts, 1);
	CHECK_EQ(st.boost_end_depth, 0);
	/* five of its own below, not read-ahead: greedy */
	for (i = 0; i < 4; i++)
		th_enq(1, (u64)(200 + i) * 8, 4096, SYNC, 0);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.boost_end_depth, 1);
	th_free();
}

/*
 * What the boost grants is bounded in share: a boosted flow that always
 * has a request queued (it never thinks, but keeps one outstanding) gets
 * at most as much as the others together (plus the token cap), against
 * one bulk flow (its fair half, no more) or ten (half, where its fair
 * share is an eleventh).
 */
static void t_boost_share(void)
{
	int nbulk, i, mine;

	for (nbulk = 1; nbulk <= TB_BULK; nbulk += TB_BULK - 1) {
		tb_setup(nbulk, 4 * nbulk, NULL);
		mine = 0;
		th_enq(1, 0, 4096, SYNC, 0);
		for (i = 0; i < 400; i++) {
			if (tb_step() == 1) {
				mine++;
				th_enq(1, (u64)(i + 1) * 8, 4096, SYNC, 0);
			}
		}
		CHECK(mine <= 200 + 8);
		CHECK(mine >= 190);
		th_free();
	}
}

/*
 * A boosted reader against @nbulk deep bulk flows at depth @depth, 30
 * steps: at each it thinks 100 us, the others' requests complete, its
 * request goes first by the boost, and the others fill the rest.  After
 * step r the others keep want[r] below (past @nwant: 2 at step 22, 16
 * fast ones after the slow ones); steps @slow_from..@slow_to take
 * @slow_ns (queued inside the device), the others 4 ms.
 */
static void tb_reserve_run(const char *depth, int nbulk, const int *want,
			   int nwant, int slow_from, int slow_to, u64 slow_ns)
{
	struct fq_req *s;
	int r, i, others;

	th_new("cfq");
	th_set("depth", depth);
	th_set("quantum", "4");
	tb_bulk_fill(nbulk);
	while (th_disp())
		;
	/* the reader's sectors sort first in a dispatch batch */
	for (r = 0; r < 30; r++) {
		th.now += 100 * US;		/* the reader thinks */
		s = th_enq(1, (u64)r * 8, 4096, SYNC, 0);
		for (i = th.nin - 1; i >= 0; i--)	/* the others complete */
			tb_bulk_again(th.inflight[i]);
		CHECK(th_disp() == s);		/* by the boost */
		while (th_disp())
			;
		others = th.nin - 1;
		if (r < nwant)
			CHECK_EQ(others, want[r]);
		else if (r == 22)
			CHECK_EQ(others, 2);
		th.now += r >= slow_from && r <= slow_to ? slow_ns : 4 * MS;
		th_done(s, 0);
	}
	th_free();
}

/*
 * The reserve of slots (depth 3, four deep bulk flows): a boosted reader,
 * anticipated, leaves the others depth - 1 slots while its request is in
 * flight; two of its requests in a row taking 2.5 times as long as its
 * fastest (they queued inside the device) make the others keep out of
 * two, and 16 fast ones in a row give one back.
 */
static void t_boost_reserve(void)
{
	static const int want[] = { 2, 2, 2, 2, 2, 2, 1, 1 };

	tb_reserve_run("3", 4, want, ARRAY_SIZE(want), 4, 5, 10 * MS);
}

/*
 * One slow boosted request alone (2.5 times its fastest) is a hiccup of
 * the host, not a queue inside the device: the others keep their two
 * slots.  On an emulated or shared host a single request takes twice its
 * usual time now and then; were each such request to take the reserve to
 * depth - 1, the others would lose part of their throughput for as long
 * as the reader is boosted.
 */
static void t_boost_reserve_one_slow(void)
{
	static const int want[] = { 2, 2, 2, 2, 2, 2, 2, 2 };

	tb_reserve_run("3", 4, want, ARRAY_SIZE(want), 4, 4, 10 * MS);
}

/*
 * One boosted request that took four times its fastest waited for more
 * than a host's hiccup (a flush stall, a queue of several): the others
 * keep out of two slots at once.
 */
static void t_boost_reserve_one_stall(void)
{
	static const int want[] = { 2, 2, 2, 2, 2, 1, 1, 1 };

	tb_reserve_run("3", 4, want, ARRAY_SIZE(want), 4, 4, 16 * MS);
}

/*
 * At the knee of a disk that needs one more request in flight than it
 * has servers, a boosted request waits for part of one other now and
 * then: 1.75 times its fastest (7 ms against 4).  That is not what the
 * reserve is for; the others keep their two slots (a threshold of 1.5x
 * would take one from them at each such wait, and with it part of their
 * throughput at the knee).
 */
static void t_boost_reserve_knee(void)
{
	static const int want[] = { 2, 2, 2, 2, 2, 2, 2, 2 };

	tb_reserve_run("3", 4, want, ARRAY_SIZE(want), 4, 4, 7 * MS);
}

/*
 * The reserve at a depth above the device's servers (depth 8, eight deep
 * bulk flows): each boosted request that took nearly three times its
 * fastest (its floor creeps up), after one that did too, doubles the
 * reserve (1 -> 3 -> 7: the others keep 7, 5, then 1 below), and 16
 * fast ones in a row give one back.
 */
static void t_boost_reserve_deep(void)
{
	static const int want[] = { 7, 7, 7, 7, 7, 5, 1, 1 };

	tb_reserve_run("8", 8, want, ARRAY_SIZE(want), 3, 5, 12 * MS);
}

/*
 * A boosted QD1 reader against a deep bulk flow on a one-server device
 * (2 ms a request, the oldest below first), the core at its defaults with
 * depth=auto seeded at 4 and the reserve pinned at 3 (as a throttle's
 * bursts teach it: a few boosted requests served at once set a low
 * floor).  While the reader is waited for, the bulk flow keeps to one
 * slot, so the depth is never full.  That time counts as full now, and
 * the epochs it makes saturated are reserved ones, compared with each
 * other: on one server a deeper depth gains nothing, so within 1.5 s the
 * depth is at most 2 (without: no epoch judged, the depth stays 4),
 * never above the seed on the way.
 */
static void t_boost_reserve_judged(void)
{
	struct fq_stats st = { 0 };
	struct fq_req *s = NULL, *oldest;
	u32 most = 0;
	int n, i;

	th_new_defaults("cfq");
	fq_sched_seed_depth(th.s, 4);
	s = th_enq(1, 0, 4096, SYNC, 0);
	tb_bulk_fill(1);
	CHECK(th_disp() == s);
	while (th_disp())
		;
	for (n = 1; n < 750; n++) {
		th.s->boost_reserve = 3;
		th.now += 2 * MS;
		oldest = th.inflight[0];
		for (i = 1; i < th.nin; i++)
			if (th.inflight[i]->dispatch_ns < oldest->dispatch_ns)
				oldest = th.inflight[i];
		if (oldest == s) {
			th_done(s, 0);
			th.now += 100 * US;	/* the reader thinks */
			s = NULL;
		} else {
			tb_bulk_again(oldest);
		}
		if (!s)
			s = th_enq(1, (u64)n * 8, 4096, SYNC, 0);
		while (th_disp())
			;
		fq_sched_stats(th.s, &st);
		if (st.depth_now > most)
			most = st.depth_now;
	}
	CHECK(st.boost_served > 100);
	CHECK(st.depth_now <= 2);
	CHECK_EQ(most, 4);
	CHECK(st.depth_reserved_epochs > 0);
	if (st.depth_now > 2 || !st.depth_reserved_epochs)
		fprintf(stderr, "  depth %u, %llu epochs (%llu reserved), %llu idle\n",
			st.depth_now, (unsigned long long)st.depth_epochs,
			(unsigned long long)st.depth_reserved_epochs,
			(unsigned long long)st.depth_idle_epochs);
	th_free();
}

/*
 * A boosted reader that thinks longer than idle_us and than its own
 * requests take (6 ms against 2 ms and 4 ms: a program starting up on
 * CPUs it shares) is still waited for: after its completion the others
 * keep out of its slot (depth 2: one of theirs below) until its window,
 * 2 x its think time, is over.  Without the boost it is not waited for
 * (its think time is above idle_us), and the slot goes to them at once.
 */
static void t_boost_long_think(void)
{
	struct fq_req *s, *b;
	int boost, r, i;

	for (boost = 0; boost < 2; boost++) {
		th_new("cfq");
		th_set("depth", "2");
		th_set("quantum", "4");
		if (!boost)
			th_set("boost_ms", "0");
		tb_bulk_fill(4);
		for (r = 0; r < 6; r++) {
			th.now += 6 * MS;	/* the reader thinks */
			s = th_enq(1, (u64)r * 8, 4096, SYNC, 0);
			/* the others run until the reader's request is below */
			for (i = 0; i < 200 && !th_below(s); i++) {
				while (th.nin && th.inflight[0] != s)
					tb_bulk_again(th.inflight[0]);
				while (th_disp())
					;
			}
			CHECK(i < 200);
			th.now += 4 * MS;
			th_done(s, 0);
			/* two think-time samples: waited for if boosted */
			b = th_disp();
			CHECK_EQ(b == NULL, boost && r >= 2);
			if (!b && r == 5) {	/* after the window: go */
				th.now += 12 * MS + 100 * US;
				CHECK(th_disp() != NULL);
			}
			while (th.nin)
				tb_bulk_again(th.inflight[0]);
		}
		th_free();
	}
}

static const struct fq_test_case cases[] = {
	{ "boost_interactive", t_boost_interactive },
	{ "boost_greedy", t_boost_greedy },
	{ "boost_antic_depth1", t_boost_antic_depth1 },
	{ "boost_readahead", t_boost_readahead },
	{ "boost_share", t_boost_share },
	{ "boost_readahead_inflight", t_boost_readahead_inflight },
	{ "boost_reserve", t_boost_reserve },
	{ "boost_reserve_one_slow", t_boost_reserve_one_slow },
	{ "boost_reserve_one_stall", t_boost_reserve_one_stall },
	{ "boost_reserve_knee", t_boost_reserve_knee },
	{ "boost_reserve_deep", t_boost_reserve_deep },
	{ "boost_reserve_judged", t_boost_reserve_judged },
	{ "boost_long_think", t_boost_long_think },
};

const struct fq_test_suite fq_unit_boost = { cases, ARRAY_SIZE(cases) };
