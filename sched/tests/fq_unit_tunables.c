// SPDX-License-Identifier: GPL-2.0
/*
 * fq_unit_tunables.c - creating an instance and setting its tunables: the
 * defaults, one instance per policy of fq_policies[], every row of the
 * tunables table (fq_tunables_table.h) read back and set to its range
 * ends, values refused with nothing changed, set/get round trips.
 */
#include "fq_unit.h"

static void t_create_defaults(void)
{
	static const char *const def[][2] = {
		{ "policy", "cfq\n" }, { "fairness", "time\n" },
		{ "quantum", "8\n" }, { "quantum_bytes", "524288\n" },
		{ "quantum_us", "1000\n" },
		{ "buckets", "64\n" }, { "perturb_ms", "5000\n" },
		{ "depth", "auto\n" }, { "depth_max", "256\n" },
		{ "idle_us", "2000\n" },
		{ "boost_ms", "3000\n" },
		{ "idle_grace_ms", "200\n" },
		{ "fifo_expire_sync_ms", "250\n" },
		{ "fifo_expire_async_ms", "1000\n" },
		{ "max_flows", "65536\n" },
		{ "max_queued", "1024\n" },
		{ "writeback", "yield\n" },
		{ "fastpath", "on\n" },
	};
	unsigned int i;

	th_new_defaults(NULL);
	for (i = 0; i < ARRAY_SIZE(def); i++) {
		th_get(def[i][0], def[i][1]);
		CHECK(!strcmp(fq_sched_tunables[i], def[i][0]));
	}
	CHECK(fq_sched_tunables[i] == NULL);
	CHECK(fq_sched_create("bogus", 1) == NULL);
	{
		struct fq_sched *s = fq_sched_create("sfq\n", 1);

		CHECK(s != NULL);
		fq_sched_destroy(s);
	}
	th_free();
}

/*
 * One row per policy of fq_policies[] (fq_sched.c), and the test fails
 * when a policy has no row or a row no policy: adding a policy is adding
 * its row.  Each policy is created by name, reports that name, starts
 * empty, and serves the same backlog in its own order: keys A and B with
 * three 4 KiB sync reads each, A's queued first, quantum 2, depth 1, each
 * request completed before the next dispatch.
 */
static void t_create_each_policy(void)
{
	static const struct {
		const char *name;
		const char *order;	/* keys in dispatch order */
	} rows[] = {
		{ "cfq", "AABBAB" },	/* turns of quantum 2 requests */
		{ "sfq", "ABABAB" },	/* one request per bucket per turn */
		{ "fifo", "AAABBB" },	/* enqueue order */
	};
	const struct fq_policy *const *p;
	char buf[16], order[8];
	u64 keys[8];
	unsigned int i, r;
	int n;

	for (r = 0; r < ARRAY_SIZE(rows); r++)
		CHECK(fq_policy_find(rows[r].name) != NULL);
	for (p = fq_policies; *p; p++) {
		for (r = 0; r < ARRAY_SIZE(rows); r++)
			if (!strcmp(rows[r].name, (*p)->name))
				break;
		if (r == ARRAY_SIZE(rows)) {
			fprintf(stderr, "  policy %s has no row\n", (*p)->name);
			fq_test_failed++;
			continue;
		}
		th_new((*p)->name);
		if (!th.s)
			continue;
		/* the tunable's words follow fq_policies[] */
		CHECK(fq_policies[th.s->policy] == *p);
		CHECK(fq_sched_get(th.s, "policy", buf, sizeof(buf)) > 0);
		CHECK(!strncmp(buf, (*p)->name, strlen((*p)->name)));
		CHECK(fq_sched_dispatch(th.s, 0) == NULL);
		CHECK(fq_sched_drain(th.s) == NULL);
		CHECK_EQ(fq_sched_next_event(th.s, 0), 0);
		th_set("quantum", "2");
		th_set("depth", "1");
		for (i = 0; i < 6; i++)
			th_enq(i < 3 ? 'A' : 'B', i * 8, 4096, SYNC, BE(4));
		n = th_run(8, keys);
		CHECK_EQ(n, 6);
		for (i = 0; i < (unsigned int)n && i < 7; i++)
			order[i] = (char)keys[i];
		order[i] = '\0';
		if (strcmp(order, rows[r].order)) {
			fprintf(stderr, "  %s: order %s, expected %s\n",
				(*p)->name, order, rows[r].order);
			fq_test_failed++;
		}
		th_free();
	}
}

/*
 * The table itself: every default inside its range (a word's index names
 * a word), every tunable reads back as its default and takes its range
 * ends (words: each word), and nothing else; fairness words in enum order.
 */
static void t_table(void)
{
	char buf[64], val[32];
	unsigned int i, n;

	th_new_defaults(NULL);
	for (i = 0; i < FQ_TUN_COUNT; i++) {
		const struct fq_tunable *t = &fq_tunables[i];
		const char *w;

		CHECK(fq_sched_get(th.s, t->name, buf, sizeof(buf)) > 0);
		if (t->kind == FQ_TK_WORD) {
			CHECK(t->words && *t->words);
			for (w = t->words, n = 0; *w; n++) {
				size_t len = strcspn(w, " ");

				snprintf(val, sizeof(val), "%.*s\n", (int)len, w);
				if (n == t->def)
					CHECK(!strcmp(buf, val));
				CHECK_EQ(fq_sched_set(th.s, t->name, val), 0);
				CHECK_EQ(*(u32 *)((char *)th.s + t->offset), n);
				w += len + (w[len] == ' ');
			}
			CHECK(t->def < n);
			CHECK_EQ(fq_sched_set(th.s, t->name, "nosuchword"), -EINVAL);
			continue;
		}
		if (t->kind == FQ_TK_AUTO) {
			/* 0 is "auto": both ways, and never a number */
			CHECK(t->min >= 1);
			snprintf(val, sizeof(val), "%s\n", t->def ? "" : "auto");
			if (!t->def)
				CHECK(!strcmp(buf, val));
			CHECK_EQ(fq_sched_set(th.s, t->name, "auto\n"), 0);
			CHECK_EQ(*(u32 *)((char *)th.s + t->offset), 0);
			CHECK_EQ(fq_sched_set(th.s, t->name, "autox"), -EINVAL);
			CHECK_EQ(fq_sched_set(th.s, t->name, "0"), -ERANGE);
		}
		if (t->kind != FQ_TK_AUTO || t->def) {
			CHECK(t->min <= t->def && t->def <= t->max);
			snprintf(val, sizeof(val), "%u\n", t->def);
			CHECK(!strcmp(buf, val));
		}
		if (t->min > 0) {
			snprintf(val, sizeof(val), "%u", t->min - 1);
			CHECK_EQ(fq_sched_set(th.s, t->name, val), -ERANGE);
		}
		snprintf(val, sizeof(val), "%u", t->max + 1);
		CHECK_EQ(fq_sched_set(th.s, t->name, val), -ERANGE);
	}
	th_set("fairness", "bytes");
	CHECK_EQ(th.s->fairness, FQ_FAIR_BYTES);
	th_set("fairness", "requests");
	CHECK_EQ(th.s->fairness, FQ_FAIR_REQUESTS);
	th_set("fairness", "time");
	CHECK_EQ(th.s->fairness, FQ_FAIR_TIME);
	CHECK_EQ(fq_sched_tunables[FQ_TUN_COUNT], NULL);
	th_free();
}

static void t_bad_tunables(void)
{
	static const struct { const char *n, *v; int err; } bad[] = {
		{ "nosuch", "1", -EINVAL }, { "", "1", -EINVAL },
		{ "quantum", "", -EINVAL }, { "quantum", "abc", -EINVAL },
		{ "quantum", "12x", -EINVAL }, { "quantum", "-1", -EINVAL },
		{ "quantum", "+4", -EINVAL }, { "quantum", " 4", -EINVAL },
		{ "quantum", "4\n\n", -EINVAL }, { "quantum", "4 ", -EINVAL },
		{ "quantum", "0", -ERANGE }, { "quantum", "1025", -ERANGE },
		{ "quantum", "99999999999999999999", -ERANGE },
		{ "quantum_bytes", "4095", -ERANGE },
		{ "quantum_bytes", "67108865", -ERANGE },
		{ "buckets", "0", -ERANGE }, { "buckets", "3", -EINVAL },
		{ "buckets", "131072", -ERANGE },
		{ "buckets", "8192", -ERANGE },		/* > max_flows */
		{ "perturb_ms", "3600001", -ERANGE },
		{ "depth", "0", -ERANGE }, { "depth", "4097", -ERANGE },
		{ "idle_us", "100001", -ERANGE },
		{ "idle_grace_ms", "60001", -ERANGE },
		{ "fifo_expire_sync_ms", "0", -ERANGE },
		{ "fifo_expire_sync_ms", "60001", -ERANGE },
		{ "fifo_expire_async_ms", "0", -ERANGE },
		{ "fifo_expire_async_ms", "60001", -ERANGE },
		{ "max_flows", "0", -ERANGE }, { "max_flows", "65537", -ERANGE },
		{ "max_flows", "32", -ERANGE },		/* < buckets */
		{ "max_queued", "0", -ERANGE }, { "max_queued", "65537", -ERANGE },
		{ "policy", "deadline", -EINVAL }, { "policy", "cfq ", -EINVAL },
		{ "policy", "", -EINVAL }, { "policy", "CFQ", -EINVAL },
		{ "fairness", "bits", -EINVAL }, { "fairness", "bytes\n\n", -EINVAL },
	};
	unsigned int i;
	char before[1024], after[1024];
	int off;

	th_new("cfq");
	th_set("max_flows", "4096");
	th_enq(1, 10, 4096, SYNC, 0);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		const char *const *t;
		int ret;

		off = 0;
		for (t = fq_sched_tunables; *t; t++)
			off += fq_sched_get(th.s, *t, before + off, 64);
		ret = fq_sched_set(th.s, bad[i].n, bad[i].v);
		if (ret != bad[i].err)
			fprintf(stderr, "  set %s=%s: %d, expected %d\n",
				bad[i].n, bad[i].v, ret, bad[i].err);
		CHECK_EQ(ret, bad[i].err);
		off = 0;
		for (t = fq_sched_tunables; *t; t++)
			off += fq_sched_get(th.s, *t, after + off, 64);
		CHECK(!strcmp(before, after));
	}
	CHECK_EQ(fq_sched_get(th.s, "nosuch", before, 64), -EINVAL);
	CHECK(fq_sched_get(th.s, "max_flows", before, 3) < 0);
	CHECK_EQ(fq_sched_set(th.s, "quantum", NULL), -EINVAL);
	CHECK_EQ(fq_sched_set(th.s, NULL, "1"), -EINVAL);
	CHECK_EQ(th.s->queued, 1);
	th_free();
}

static void t_set_get_roundtrip(void)
{
	static const char *const set[][2] = {
		{ "policy", "sfq\n" }, { "fairness", "bytes" },
		{ "quantum", "1024" }, { "quantum_bytes", "67108864\n" },
		{ "buckets", "1" }, { "perturb_ms", "0" },
		{ "depth", "4096" }, { "idle_us", "100000" },
		{ "idle_grace_ms", "0" }, { "fifo_expire_sync_ms", "1" },
		{ "fifo_expire_async_ms", "60000" }, { "max_flows", "65536" },
		{ "buckets", "65536" }, { "max_flows", "65536" },
		{ "policy", "fifo" }, { "fairness", "requests\n" },
		{ "max_queued", "1" }, { "max_queued", "65536" },
	};
	unsigned int i;
	char want[64];

	th_new("cfq");
	for (i = 0; i < ARRAY_SIZE(set); i++) {
		th_set(set[i][0], set[i][1]);
		snprintf(want, sizeof(want), "%s", set[i][1]);
		if (!strchr(want, '\n'))
			strcat(want, "\n");
		th_get(set[i][0], want);
	}
	CHECK(fq_sched_set_needs_alloc("max_flows"));
	CHECK(!fq_sched_set_needs_alloc("depth"));
	CHECK(!fq_sched_set_needs_alloc("bogus"));
	th_free();
}

static const struct fq_test_case cases[] = {
	{ "create_defaults", t_create_defaults },
	{ "create_each_policy", t_create_each_policy },
	{ "table", t_table },
	{ "bad_tunables", t_bad_tunables },
	{ "set_get_roundtrip", t_set_get_roundtrip },
};

const struct fq_test_suite fq_unit_tunables = { cases, ARRAY_SIZE(cases) };
