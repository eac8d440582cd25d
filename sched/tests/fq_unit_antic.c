// SPDX-License-Identifier: GPL-2.0
/*
 * fq_unit_antic.c - anticipation (fq_antic.c): the slot of a drained
 * sync flow kept through its think time, when that pays and when it does
 * not (seeky, slow thinkers, RT preempting), and the hold of a flow
 * behind the class's debtors.
 */
#include "fq_unit.h"

static void t_anticipation(void)
{
	struct fq_req *rq, *s, *b[3];
	struct fq_stats st;
	int i;

	th_new("cfq");
	th_set("depth", "4");
	th_set("idle_us", "1000");
	th_teach(1, 4, 200, 100, 0);		/* think 100 us, service 200 us */
	s = th_enq(1, 0, 4096, SYNC, 0);
	for (i = 0; i < 10; i++)
		th_enq(2, (u64)i, 4096, 0, 0);
	CHECK(th_disp() == s);
	/* its request is in flight: nothing is held, flow 2 fills the rest */
	for (i = 0; i < 3; i++) {
		b[i] = th_disp();
		CHECK(b[i] && b[i]->key == 2);
	}
	CHECK(th_disp() == NULL);		/* depth */
	th.now += 200 * US;
	th_done(s, 0);
	/* its slot is kept for 2 x 100 us + 50 us */
	CHECK(th_disp() == NULL);
	CHECK_EQ(fq_sched_next_event(th.s, th.now), th.now + 250 * US);
	/* injection: another slot frees, flow 2 may use it */
	th_done(b[0], 0);
	rq = th_disp();
	CHECK(rq && rq->key == 2);
	b[0] = rq;
	CHECK(th_disp() == NULL);
	th.now += 100 * US;
	s = th_enq(1, 8, 4096, SYNC, 0);	/* back after 100 us */
	CHECK(th_disp() == s);
	th.now += 200 * US;
	th_done(s, 0);
	CHECK(th_disp() == NULL);
	th.now += 250 * US;			/* the window ran out */
	rq = th_disp();
	CHECK(rq && rq->key == 2);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.idle_waits, 2);
	th_free();

	/* think time above idle_us: not waited for */
	th_new("cfq");
	th_set("depth", "1");
	th_set("idle_us", "1000");
	th_teach(1, 4, 2000, 1500, 0);
	s = th_enq(1, 0, 4096, SYNC, 0);
	th_enq(2, 0, 4096, 0, 0);
	CHECK(th_disp() == s);
	th_done(s, 0);
	rq = th_disp();
	CHECK(rq && rq->key == 2);
	th_free();

	/* think time above the service time: not waited for either */
	th_new("cfq");
	th_set("depth", "1");
	th_set("idle_us", "1000");
	th_teach(1, 4, 100, 300, 0);
	s = th_enq(1, 0, 4096, SYNC, 0);
	th_enq(2, 0, 4096, 0, 0);
	CHECK(th_disp() == s);
	th_done(s, 0);
	rq = th_disp();
	CHECK(rq && rq->key == 2);
	th_free();

	/* idle_us = 0: no holding */
	th_new("cfq");
	th_set("depth", "1");
	th_set("idle_us", "0");
	th_teach(1, 4, 200, 100, 0);
	s = th_enq(1, 0, 4096, SYNC, 0);
	th_enq(2, 0, 4096, 0, 0);
	CHECK(th_disp() == s);
	th_done(s, 0);
	rq = th_disp();
	CHECK(rq && rq->key == 2);
	th_free();
}

/*
 * A seeky flow (random sectors) is anticipated only when depth leaves
 * the others at least three slots; a sequential one at any depth.
 */
static void t_anticipation_seeky(void)
{
	struct fq_req *rq, *s;
	int i, seq;

	for (seq = 0; seq < 2; seq++) {
		th_new("cfq");
		th_set("depth", "1");
		th_set("idle_us", "1000");
		for (i = 0; i < 6; i++) {
			rq = th_enq(1, seq ? (u64)i * 8 : (u64)i * 100000,
				    4096, SYNC, 0);
			CHECK(th_disp() == rq);
			th.now += 200 * US;
			th_done(rq, 0);
			th.now += 50 * US;
		}
		s = th_enq(1, seq ? 48 : 900000, 4096, SYNC, 0);
		th_enq(2, 0, 4096, 0, 0);
		CHECK(th_disp() == s);
		th.now += 200 * US;
		th_done(s, 0);
		rq = th_disp();
		if (seq)
			CHECK(rq == NULL);	/* waited for */
		else
			CHECK(rq && rq->key == 2);
		th.now += 10 * MS;
		th_free();
	}
}

static void t_anticipation_sfq(void)
{
	struct fq_req *rq, *s1;
	u64 k[2];

	th_new("sfq");
	th_set("depth", "1");
	th_set("idle_us", "1000");
	sfq_distinct_keys(k, 2);
	for (rq = NULL; th.n < 4;) {		/* sequential, think 50 us */
		rq = th_enq(k[0], (u64)th.n * 8, 4096, SYNC, 0);
		CHECK(th_disp() == rq);
		th.now += 200 * US;
		th_done(rq, 0);
		th.now += 50 * US;
	}
	s1 = th_enq(k[0], 32, 4096, SYNC, 0);
	th_enq(k[1], 0, 4096, 0, 0);
	th_enq(k[1], 8, 4096, 0, 0);
	rq = th_disp();
	CHECK(rq != NULL);
	if (rq != s1) {			/* bucket order: let k[1] go first */
		th.now += 100 * US;
		th_done(rq, 0);
		rq = th_disp();
		CHECK(rq == s1);
	}
	th.now += 200 * US;
	th_done(s1, 0);
	CHECK(th_disp() == NULL);	/* held for the drained sync bucket */
	th.now += 50 * US;
	s1 = th_enq(k[0], 40, 4096, SYNC, 0);
	rq = th_disp();
	CHECK(rq != NULL);		/* back: held no more */
	th.now += 2 * MS;
	th_free();
}

static void t_anticipation_rt_preempts(void)
{
	struct fq_req *rq, *s;

	th_new("cfq");
	th_set("depth", "1");
	th_set("idle_us", "1000");
	for (rq = NULL; th.n < 4;) {		/* sequential, think 50 us */
		rq = th_enq(1, (u64)th.n * 8, 4096, SYNC, BE(4));
		CHECK(th_disp() == rq);
		th.now += 200 * US;
		th_done(rq, 0);
		th.now += 50 * US;
	}
	s = th_enq(1, 32, 4096, SYNC, BE(4));
	th_enq(2, 0, 4096, 0, BE(4));
	CHECK(th_disp() == s);
	th.now += 200 * US;
	th_done(s, 0);
	CHECK(th_disp() == NULL);
	rq = th_enq(3, 0, 4096, SYNC, RT(4));
	CHECK(th_disp() == rq);
	th_free();
}

/*
 * A reader at queue depth 1 (think 100 us, 200 us a request) and a bulk
 * flow of 4 KiB reads at depth 4, no boost.  At first the last slot is
 * kept for it when it drains (anticipation), which teaches it its time
 * with the others held.  From then on, while its requests take what they
 * take alone (s = 1, its share 1/2), it is not waited for: the slot goes
 * to the bulk flow at once (fq_antic_served()).  Once each of its
 * requests waits 1 ms before it goes down (s = 0.3 / 1.3), its slow
 * average says so within a few dozen requests, and the slot is kept for
 * it again at each drain within its turn (the end of a turn, every 8th
 * request at quantum 8, is not anticipated in any case).  The drains not
 * waited for are counted (idle_served): most of the fast ones, few of
 * the slow ones.
 */
static void t_antic_served(void)
{
	int r, i, held_fast = 0, held_slow = 0;
	u64 served[3] = { 0 };
	struct fq_stats st;
	struct fq_req *s;

	th_new("cfq");
	th_set("depth", "4");
	th_set("idle_us", "1000");
	th_set("boost_ms", "0");
	th_teach(1, 4, 200, 100, 0);
	tb_bulk_fill(1);
	for (r = 0; r < 150; r++) {
		if (r == 10 || r == 50 || r == 100) {
			fq_sched_stats(th.s, &st);
			served[r / 50] = st.idle_served;
		}
		th.now += 100 * US;		/* the reader thinks */
		s = th_enq(1, (u64)r * 8, 4096, SYNC, 0);
		if (r >= 50)
			th.now += MS;		/* ... then waits */
		for (i = 0; i < 50 && !th_below(s); i++) {
			if (th.nin)
				tb_bulk_again(th.inflight[0]);
			while (th_disp())
				;
		}
		CHECK(th_below(s));
		th.now += 200 * US;
		th_done(s, 0);
		if (th_disp())
			continue;		/* the slot went to the bulk flow */
		if (r >= 10 && r < 50)
			held_fast++;
		else if (r >= 100)
			held_slow++;
	}
	fq_sched_stats(th.s, &st);
	CHECK_EQ(held_fast, 0);
	CHECK(held_slow >= 40);
	/* 40 fast drains, 5 of them turn ends; 50 slow ones */
	CHECK(served[1] - served[0] >= 30);
	CHECK(st.idle_served - served[2] <= 10);
	if (held_fast || held_slow < 40)
		fprintf(stderr, "  held %d of 40 fast, %d of 50 slow\n",
			held_fast, held_slow);
	th_free();
}

/*
 * A 4 KiB reader at queue depth 1 (its next read goes in as its last
 * completes) and a 1 MiB reader (4 queued) for 20 s at the defaults
 * (depth=auto seeded at 4, fairness=time) on a disk that serves in
 * order and, like a throttle that bills bytes after the fact (QEMU's),
 * bills each request's bytes to the next one: request k completes 2 ms
 * + request k-1's bytes at 4 MiB/s after the later of its dispatch and
 * k-1's completion.  @out: the reads each reader completed.
 */
static void th_billed_after_qd1(u64 out[2], struct fq_stats *st)
{
	static struct fq_req rq[5];
	struct fq_req *fifo[8], *r;
	u64 fin[8], last_fin = 0, prev_bytes = 0, t;
	unsigned int head = 0, n = 0;

	th_new_defaults("cfq");
	memset(rq, 0, sizeof(rq));
	out[0] = out[1] = 0;
	th_enq_mixed(rq, 5);
	while (th.now < 20000 * MS) {
		while (n < 8 && (r = fq_sched_dispatch(th.s, th.now))) {
			last_fin = (last_fin > th.now ? last_fin : th.now) +
				   2 * MS + prev_bytes * 1000 * MS / (4 << 20);
			prev_bytes = r->bytes;
			fifo[(head + n) % 8] = r;
			fin[(head + n) % 8] = last_fin;
			n++;
		}
		CHECK(n < 8);
		t = fq_sched_next_event(th.s, th.now);
		if (n && (!t || fin[head] < t))
			t = fin[head];
		CHECK(t > th.now);
		if (t <= th.now)
			break;
		th.now = t;
		while (n && fin[head] <= th.now) {
			r = fifo[head];
			head = (head + 1) % 8;
			n--;
			fq_sched_complete(th.s, r, 0, th.now);
			out[r->key - 1]++;
			r->sector += 20ull << 20;
			fq_sched_enqueue(th.s, r, th.now);
		}
	}
	fq_sched_stats(th.s, st);
	fprintf(stderr, "  4 KiB reader %llu reads, 1 MiB reader %llu reads; depth %u, %llu holds\n",
		(unsigned long long)out[1], (unsigned long long)out[0],
		st->depth_now, (unsigned long long)st->idle_waits);
	while ((r = fq_sched_drain(th.s)))
		;
	for (; n; n--, head = (head + 1) % 8)
		fq_sched_complete(th.s, fifo[head], 0, th.now);
	CHECK_EQ(fq_check_invariants(th.s), 0);
	fq_sched_destroy(th.s);
	th.s = NULL;
}

/*
 * The 4 KiB reader above is behind the 1 MiB reader in virtual time
 * whenever it has a read below (a 1 MiB read costs 250 ms), so the 1 MiB
 * reader is held while the 4 KiB read is below too (fq_drr_behind(), the
 * injection limit at 0 once a 1 MiB read sent meanwhile made the next
 * 4 KiB read wait 250 ms).  Without the hold the two alternate, one
 * 4 KiB read per 1 MiB read or fewer, and the 4 KiB reader gets well
 * under 1 % of the device time.  With it each reader gets at least a
 * quarter of the device time (reads x 3 ms and x 252 ms).
 */
static void t_hold_behind_billed_after(void)
{
	struct fq_stats st;
	u64 n[2], busy_small, busy_big;

	th_billed_after_qd1(n, &st);
	busy_small = n[1] * 3 * MS;
	busy_big = n[0] * 252 * MS;
	CHECK(busy_small * 4 >= busy_small + busy_big);
	CHECK(busy_big * 4 >= busy_small + busy_big);
	CHECK(st.idle_waits > 0);
}

/*
 * A flow behind whose request is still in the dispatch batch is held for
 * too: a batch filled at depth 2 takes its request and not a debtor's
 * with it.  Its hold_until is set only as its request goes down, and a
 * flow back from the pool (reaped while the disk was idle) has none yet,
 * so the batch itself must be looked at, or the debtor's 1 MiB read goes
 * into it too.
 */
static void t_hold_behind_batch(void)
{
	struct fq_req *s, *b[2];
	struct fq_flow *fqf;

	th_debtor_setup(b);
	th_done(b[0], 0);
	th_set("depth", "2");
	s = th_enq(1, 400000, 4096, SYNC, 0);
	CHECK(th_disp() == s);
	fqf = s->flow;
	CHECK(th.s->antic == fqf && (fqf->flags & FQ_FF_BEHIND));
	CHECK(th_disp() == NULL);	/* b[1] held: injection limit 0 */
	th_done(s, 0);
	CHECK(th_disp() == NULL);	/* its window */
	th.now = fqf->antic_until;
	CHECK(th_disp() == b[1]);
	th_free();
}

static const struct fq_test_case cases[] = {
	{ "anticipation", t_anticipation },
	{ "antic_served", t_antic_served },
	{ "anticipation_seeky", t_anticipation_seeky },
	{ "anticipation_sfq", t_anticipation_sfq },
	{ "anticipation_rt_preempts", t_anticipation_rt_preempts },
	{ "hold_behind_batch", t_hold_behind_batch },
	{ "hold_behind_billed_after", t_hold_behind_billed_after },
};

const struct fq_test_suite fq_unit_antic = { cases, ARRAY_SIZE(cases) };
