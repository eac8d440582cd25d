// SPDX-License-Identifier: GPL-2.0
/*
 * fq_unit_flows.c - flows and their table: created on demand and
 * freed when drained, the max_flows bound and the overflow flow, a full
 * pool's reclaim, the reap of an idle device, the table's growth and
 * shrinking, the seeded hash, and max_queued.
 */
#include "fq_unit.h"

static void t_cfq_flow_freed(void)
{
	struct fq_stats st;
	struct fq_req *rq;

	th_new("cfq");
	rq = th_enq(9, 1, 4096, SYNC, 0);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.flows, 1);
	CHECK(th_disp() == rq);
	th_done(rq, 0);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.flows, 0);
	CHECK_EQ(st.flow_allocs, 1);
	th_free();
}

static void t_cfq_many_keys_lookup(void)
{
	struct fq_stats st;
	int i;

	th_new("cfq");
	for (i = 0; i < 3000; i++)
		th_enq((u64)i * 4096 + 7, (u64)i, 512, 0, 0);
	for (i = 0; i < 3000; i++)
		th_enq((u64)i * 4096 + 7, (u64)i, 512, 0, 0);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.flows, 3000);
	CHECK_EQ(st.overflow_enq, 0);
	CHECK_EQ(th.r[0].flow, th.r[3000].flow);
	CHECK(th.r[0].flow != th.r[1].flow);
	CHECK_EQ(th_run(6000, NULL), 6000);
	th_free();
}

/* A full pool first reclaims drained flows that only keep a turn claim. */
static void t_pool_reclaim(void)
{
	struct fq_req *a, *b, *c;
	struct fq_stats st;

	th_new("cfq");
	th_set("buckets", "2");
	th_set("max_flows", "2");
	th_set("depth", "4");
	a = th_enq(1, 0, 4096, SYNC, 0);
	b = th_enq(2, 0, 4096, SYNC, 0);
	CHECK(th_disp() != NULL);
	CHECK(th_disp() != NULL);
	th_done(b, 0);			/* flow 2 drained, keeps its claim */
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.flows, 2);
	c = th_enq(3, 0, 4096, SYNC, 0);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.overflow_enq, 0);	/* flow 2's slot was reclaimed */
	CHECK(c->flow != &th.s->overflow);
	CHECK(c->flow != a->flow);
	th_enq(4, 0, 4096, SYNC, 0);	/* now the pool is really full */
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.overflow_enq, 1);
	th_free();
}

/* When the device goes idle every drained flow goes back to the pool. */
static void t_reap_on_idle(void)
{
	struct fq_req *rq[3];
	struct fq_stats st;
	int i;

	th_new("sfq");
	for (i = 0; i < 3; i++)
		th_enq((u64)i, 0, 4096, SYNC, 0);
	for (i = 0; i < 3; i++)
		rq[i] = th_disp();
	th_done(rq[0], 0);
	th_done(rq[1], 0);
	fq_sched_stats(th.s, &st);
	CHECK(st.flows >= 1);
	th_done(rq[2], 0);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.flows, 0);
	th_free();
}

static void t_pool_exhaustion(void)
{
	struct fq_flow_info fi[8];
	struct fq_stats st;
	unsigned int n;
	int i;

	th_new("cfq");
	th_set("buckets", "4");
	th_set("max_flows", "4");
	for (i = 0; i < 10; i++)
		th_enq((u64)i, (u64)i, 4096, SYNC, 0);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.flows, 4);
	CHECK_EQ(st.flows_max, 4);
	CHECK_EQ(st.overflow_enq, 6);
	n = fq_sched_flows(th.s, fi, 8);
	CHECK_EQ(n, 5);
	CHECK_EQ(th_run(100, NULL), 10);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.flows, 0);
	th_free();
}

/*
 * The flow table grows by steps: 3,000 flows in a table of 64 chains, a
 * table of 4,096 swapped in, and the flows moved 16 chains or flows per
 * call (fq_sched_table_rehash()), a known key queued again between
 * calls: every key finds its own flow in the one table or the other (no
 * flow is created twice), no call looks at more than 16, no other resize
 * is wanted meanwhile, and the old table comes back once, at the end.
 * Tried: a lookup in the new table only (a key not yet moved gets a
 * second flow: flow_allocs grows).
 */
static void t_table_rehash_steps(void)
{
	struct fq_table *t, *done;
	struct fq_stats st;
	u64 before, allocs;
	int i, calls = 0, got = 0;
	bool more;

	th_new("cfq");
	th_set("depth", "1");
	for (i = 0; i < 3000; i++)
		th_enq(5000 + (u64)i, (u64)i, 4096, SYNC, 0);
	fq_sched_stats(th.s, &st);
	allocs = st.flow_allocs;
	CHECK_EQ(fq_sched_table_want(th.s), 12);
	t = fq_sched_table_alloc(12);
	CHECK(t != NULL);
	CHECK(fq_sched_table_swap(th.s, t) == NULL);
	CHECK_EQ(fq_sched_table_want(th.s), 0);
	do {
		before = th.s->pick_steps;
		more = fq_sched_table_rehash(th.s, 16, &done);
		CHECK(th.s->pick_steps - before <= 16);
		if (done) {
			got++;
			fq_sched_table_free(done);
		}
		th_enq(5000 + (u64)((calls * 7) % 3000), 0, 4096, SYNC, 0);
		if (calls % 64 == 0)
			CHECK_EQ(fq_check_invariants(th.s), 0);
		calls++;
	} while (more && calls < 10000);
	CHECK(!more);
	CHECK_EQ(got, 1);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.flow_allocs, allocs);
	CHECK_EQ(st.flows, 3000);
	CHECK_EQ(st.flow_table_chains, 4096);
	printf("  3000 flows moved to 4096 chains in %d calls\n", calls);
	th_free();
}

/*
 * max_flows is a bound, not a size: lowered under 100 existing flows (one
 * request in flight) it takes effect at once; the flows keep their
 * requests and drain, a new key shares the overflow flow while max_flows
 * or more flows exist and gets its own once fewer do.
 */
static void t_max_flows_bound(void)
{
	struct fq_req *rq;
	struct fq_stats st;
	int i;

	th_new("cfq");
	th_set("depth", "1");
	for (i = 0; i < 100; i++)
		th_enq((u64)i, (u64)i, 4096, SYNC, 0);
	rq = th_disp();
	CHECK(rq != NULL);
	th_set("max_flows", "64");
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.flows_max, 64);
	CHECK_EQ(st.flows, 100);
	CHECK_EQ(st.flows_spare, 0);
	th_enq(1000, 0, 4096, SYNC, 0);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.flows, 100);
	CHECK_EQ(st.overflow_enq, 1);
	if (rq)
		th_done(rq, 0);
	CHECK_EQ(th_run(1000, NULL), 100);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.flows, 0);
	th_enq(1001, 0, 4096, SYNC, 0);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.flows, 1);
	CHECK_EQ(st.overflow_enq, 1);
	CHECK_EQ(th_run(10, NULL), 1);
	th_free();
}

/*
 * Flows on demand: a new instance holds no flow and a table of 64 chains;
 * 10,000 keys make 10,000 flows (none shares the overflow flow), the
 * memory grows by about one flow each, and the table grows when its
 * caller grows it (chains are only longer meanwhile: every flow is still
 * found).  Drained, the flows go back but FQ_FLOW_SPARE of them, and
 * the table shrinks back once its caller makes the smaller one.
 */
static void t_flows_on_demand(void)
{
	const size_t base = sizeof(struct fq_sched);
	struct fq_table *t;
	struct fq_stats st;
	size_t per_flow;
	u64 i;

	th_new("cfq");
	th_set("depth", "1");
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.flows, 0);
	CHECK_EQ(st.flows_max, 65536);
	CHECK_EQ(st.flow_table_chains, 64);
	CHECK_EQ(st.mem_bytes, base + sizeof(struct fq_table) + 64 * sizeof(void *));
	CHECK_EQ(fq_sched_table_want(th.s), 0);
	for (i = 0; i < 10000; i++) {
		th_enq(100000 + i * 7919, i, 4096, SYNC, 0);
		if (i == 64)
			CHECK_EQ(fq_sched_table_want(th.s), 7);
		if (i % 1000 == 999)
			CHECK_EQ(fq_sched_table_resize(th.s), 0);
	}
	CHECK_EQ(fq_check_invariants(th.s), 0);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.flows, 10000);
	CHECK_EQ(st.overflow_enq, 0);
	CHECK_EQ(st.flow_allocs, 10000);
	CHECK_EQ(st.flow_table_chains, 16384);
	CHECK_EQ(fq_sched_table_want(th.s), 0);
	per_flow = (st.mem_bytes - base) / st.flows;
	printf("  10000 flows: %u bytes, %zu per flow (flow %zu)\n",
	       st.mem_bytes, per_flow, fq_sched_flow_size());
	CHECK(per_flow <= fq_sched_flow_size() + 2 * sizeof(void *));
	/* a table no bigger than the one in use comes back to be freed */
	t = fq_sched_table_alloc(8);
	CHECK(t != NULL);
	CHECK(fq_sched_table_swap(th.s, t) == t);
	fq_sched_table_free(t);
	CHECK_EQ(th_run(20000, NULL), 10000);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.flows, 0);
	CHECK_EQ(st.flows_spare, FQ_FLOW_SPARE);
	CHECK_EQ(st.mem_bytes, base + FQ_FLOW_SPARE * fq_sched_flow_size() +
		 sizeof(struct fq_table) + 16384 * sizeof(void *));
	CHECK_EQ(fq_check_invariants(th.s), 0);
	/*
	 * The burst is over: the table asks to shrink to its least; a
	 * smaller table than the flows need is refused, one within is taken.
	 */
	CHECK_EQ(fq_sched_table_want(th.s), 6);
	for (i = 0; i < 100; i++)
		th_enq(900000 + i, i, 4096, SYNC, 0);
	CHECK_EQ(fq_sched_table_want(th.s), 8);		/* 256 for 100 flows */
	t = fq_sched_table_alloc(6);
	CHECK(t != NULL);
	CHECK(fq_sched_table_swap(th.s, t) == t);	/* 64 < 100 flows */
	fq_sched_table_free(t);
	CHECK_EQ(fq_sched_table_resize(th.s), 0);
	CHECK_EQ(th.s->table->bits, 8);
	CHECK_EQ(fq_sched_table_want(th.s), 0);
	CHECK_EQ(fq_check_invariants(th.s), 0);
	CHECK_EQ(th_run(200, NULL), 100);		/* every flow still found */
	CHECK_EQ(fq_sched_table_resize(th.s), 0);
	fq_sched_stats(th.s, &st);
	CHECK_EQ(st.flow_table_chains, 64);
	CHECK_EQ(st.mem_bytes, base + FQ_FLOW_SPARE * fq_sched_flow_size() +
		 sizeof(struct fq_table) + 64 * sizeof(void *));
	th_free();
}

/* The chain of @s's flow table that holds the flow of @key; ~0u: none. */
static unsigned int chain_of(struct fq_sched *s, u64 key)
{
	unsigned int i;
	struct fq_flow *f;

	for (i = 0; i < (1u << s->table->bits); i++)
		for (f = s->table->chain[i]; f; f = f->hnext)
			if (f->key == key)
				return i;
	return ~0u;
}

/*
 * The cfq flow hash is seeded: two instances with different seeds put the
 * same 64 keys on different chains (unseeded, every key would land on the
 * same chain index in both, so a user could pick keys that share one).
 */
static void t_cfq_hash_seeded(void)
{
	static struct fq_req rq[2][64];
	struct fq_sched *s[2];
	unsigned int i, j, same = 0;

	for (j = 0; j < 2; j++) {
		s[j] = fq_sched_create("cfq", j + 1);
		CHECK(s[j] != NULL);
		if (!s[j])
			return;
		for (i = 0; i < 64; i++) {
			memset(&rq[j][i], 0, sizeof(rq[j][i]));
			rq[j][i].bytes = 4096;
			rq[j][i].key = 1000 + i;
			rq[j][i].flags = FQ_REQ_SYNC;
			fq_sched_enqueue(s[j], &rq[j][i], 0);
		}
	}
	CHECK(s[0]->hash_key != s[1]->hash_key);
	for (i = 0; i < 64; i++) {
		CHECK(chain_of(s[0], 1000 + i) != ~0u);
		same += chain_of(s[0], 1000 + i) == chain_of(s[1], 1000 + i);
	}
	CHECK(same < 32);
	for (j = 0; j < 2; j++) {
		while (fq_sched_drain(s[j]))
			;
		fq_sched_destroy(s[j]);
	}
}

/*
 * max_queued=8 for each policy: up to half full nobody is held back;
 * from there a flow holds at most its share, max_queued over the flows
 * that exist and never more than half, so a lone flow stops at 4 and a
 * newcomer (a journal commit beside a writeback flood) still gets in;
 * full at 8 for everyone; dispatch makes room for the flow it took from;
 * in-flight requests do not count.
 */
static void t_max_queued(void)
{
	static const char *const pol[] = { "cfq", "sfq", "fifo" };
	struct fq_req probe_a = { .key = 1 }, probe_b = { .key = 2 };
	struct fq_req *rq, *own, *other;
	unsigned int p;
	u64 keys[2];
	int i;

	for (p = 0; p < ARRAY_SIZE(pol); p++) {
		th_new(pol[p]);
		th_set("max_queued", "8");
		th_set("depth", "1");
		if (!strcmp(pol[p], "sfq")) {
			sfq_distinct_keys(keys, 2);	/* two buckets */
			probe_a.key = keys[0];
			probe_b.key = keys[1];
		}
		for (i = 0; i < 4; i++) {
			CHECK(fq_sched_may_queue(th.s, &probe_a));
			th_enq(probe_a.key, (u64)i * 8, 4096, SYNC, BE(4));
		}
		/* alone, at half: the other half is kept for newcomers */
		CHECK(!fq_sched_may_queue(th.s, &probe_a));
		for (i = 0; i < 4; i++) {
			CHECK(fq_sched_may_queue(th.s, &probe_b));
			th_enq(probe_b.key, 1000 + (u64)i * 8, 4096, SYNC, BE(4));
		}
		CHECK(!fq_sched_may_queue(th.s, &probe_a));
		CHECK(!fq_sched_may_queue(th.s, &probe_b));	/* 8 queued */
		/* one goes down: 7 queued, the one in flight does not count */
		rq = th_disp();
		CHECK(rq != NULL);
		if (!rq) {
			th_free();
			continue;
		}
		own = rq->key == probe_a.key ? &probe_a : &probe_b;
		other = own == &probe_a ? &probe_b : &probe_a;
		CHECK(fq_sched_may_queue(th.s, own));		/* 3 < 4 */
		CHECK(!fq_sched_may_queue(th.s, other));	/* 4 >= 4 */
		th_free();
	}
}

static const struct fq_test_case cases[] = {
	{ "cfq_flow_freed", t_cfq_flow_freed },
	{ "cfq_many_keys_lookup", t_cfq_many_keys_lookup },
	{ "pool_reclaim", t_pool_reclaim },
	{ "reap_on_idle", t_reap_on_idle },
	{ "table_rehash_steps", t_table_rehash_steps },
	{ "pool_exhaustion", t_pool_exhaustion },
	{ "max_flows_bound", t_max_flows_bound },
	{ "flows_on_demand", t_flows_on_demand },
	{ "cfq_hash_seeded", t_cfq_hash_seeded },
	{ "max_queued", t_max_queued },
};

const struct fq_test_suite fq_unit_flows = { cases, ARRAY_SIZE(cases) };
