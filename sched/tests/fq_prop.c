// SPDX-License-Identifier: GPL-2.0
/*
 * fq_prop.c - property test: random operation sequences against a shadow
 * model, invariants checked after every operation.
 *
 *   fq_prop [--seeds N] [--ops N] [--first S]
 *
 * Built with -DFQ_PROP_LIBFUZZER (clang -fsanitize=fuzzer) the same
 * driver takes its random numbers from the fuzzer's input instead and
 * aborts on the first broken property (tests/fq_fuzz, make fuzz).
 *
 * Each seed is one test case: a fresh instance driven by a PRNG through
 * enqueue, dispatch, complete, clock steps, drains and tunable changes
 * (valid and invalid, policy switches included).  Checked after each:
 * the core's internal invariants (fq_invariants.c), every counter against
 * the shadow, in-flight never above depth at dispatch, a failed set
 * changing nothing.  At the end the instance is run dry: every request
 * enqueued is dispatched (or drained) exactly once and completed exactly
 * once, and no flow is left once everything completed.
 */
#include <stdlib.h>
#include "fq_test.h"

int fq_test_failed;

enum { NREQ = 512 };
enum { S_FREE, S_QUEUED, S_INFLIGHT };

static struct prop {
	struct fq_sched *s;
	struct fq_req r[NREQ];
	int st[NREQ];
	u64 rng, now;
	u64 enq, disp, done, drained, errors;
	u32 queued, inflight, nonidle;
	u32 flows;		/* flows at the last check */
	u32 storm;		/* 1 in @storm clock steps is 0..400 ms */
} P;

#ifdef FQ_PROP_LIBFUZZER
static const unsigned char *fz_data;
static size_t fz_len, fz_pos;

static u64 rnd(void)
{
	u64 v = 0;
	int i;

	for (i = 0; i < 4; i++)
		v = (v << 8) | (fz_pos < fz_len ? fz_data[fz_pos++] : 0);
	return v;
}
#else
static u64 rnd(void)
{
	P.rng ^= P.rng << 13;
	P.rng ^= P.rng >> 7;
	P.rng ^= P.rng << 17;
	return P.rng;
}
#endif

static u32 rnd_below(u32 n)
{
	return (u32)(rnd() % n);
}

static int rq_index(const struct fq_req *rq)
{
	long i = rq - P.r;

	if (i < 0 || i >= NREQ) {
		fq_test_failed++;
		fprintf(stderr, "  request outside the pool\n");
		return -1;
	}
	return (int)i;
}

static void op_enqueue(void)
{
	static const u32 sizes[] = { 512, 4096, 4096, 65536, 1 << 20 };
	struct fq_req *rq;
	int i, start = (int)rnd_below(NREQ);

	for (i = 0; i < NREQ; i++)
		if (P.st[(start + i) % NREQ] == S_FREE)
			break;
	if (i == NREQ)
		return;
	i = (start + i) % NREQ;
	rq = &P.r[i];
	memset(rq, 0x5a, sizeof(*rq));		/* the core must set its part */
	rq->key = rnd_below(4) ? rnd_below(8) : rnd_below(100000);
	rq->sector = rnd_below(1 << 20);
	rq->bytes = sizes[rnd_below(5)];
	rq->flags = rnd_below(4) | (rnd_below(4) ? 0 : FQ_REQ_RAHEAD);
	rq->ioprio = (u16)FQ_IOPRIO(rnd_below(8), rnd_below(8));
	if (rnd_below(3) == 0)
		rq->ioprio = 0;
	/* half from the level, else 1..1000 and now and then above */
	rq->weight = rnd_below(2) ? 0 : (u16)(1 + rnd_below(FQ_WEIGHT_MAX + 100));
	fq_sched_enqueue(P.s, rq, P.now);
	P.st[i] = S_QUEUED;
	P.enq++;
	P.queued++;
	if (fq_rq_nonidle(rq))
		P.nonidle++;
}

static struct fq_req *op_dispatch(void)
{
	u32 before = P.s->inflight, depth = P.s->depth_now;
	struct fq_req *rq = fq_sched_dispatch(P.s, P.now);
	int i;

	if (!rq)
		return NULL;
	CHECK(before < depth);
	i = rq_index(rq);
	if (i < 0)
		return NULL;
	CHECK_EQ(P.st[i], S_QUEUED);
	CHECK_EQ(rq->state, FQ_RS_INFLIGHT);
	CHECK_EQ(rq->dispatch_ns, P.now);
	P.st[i] = S_INFLIGHT;
	P.disp++;
	P.queued--;
	P.inflight++;
	return rq;
}

static void complete_one(int i)
{
	int status = rnd_below(10) ? 0 : -5;

	fq_sched_complete(P.s, &P.r[i], status, P.now);
	/*
	 * the caller's work item frees an idle device's flows: a few now,
	 * the rest at later completions or the core's own calls
	 */
	fq_sched_reap(P.s, P.done % 8);
	P.st[i] = S_FREE;
	P.done++;
	P.inflight--;
	if (status)
		P.errors++;
	if (fq_rq_nonidle(&P.r[i]))
		P.nonidle--;
}

static void op_complete(void)
{
	int i, start = (int)rnd_below(NREQ);

	for (i = 0; i < NREQ; i++) {
		if (P.st[(start + i) % NREQ] == S_INFLIGHT) {
			complete_one((start + i) % NREQ);
			return;
		}
	}
}

static void op_drain(void)
{
	struct fq_req *rq = fq_sched_drain(P.s);
	int i;

	if (!rq) {
		CHECK_EQ(P.queued, 0);
		return;
	}
	i = rq_index(rq);
	if (i < 0)
		return;
	CHECK_EQ(P.st[i], S_QUEUED);
	P.st[i] = S_FREE;
	P.drained++;
	P.queued--;
	if (fq_rq_nonidle(rq))
		P.nonidle--;
}

static const char *const words[] = {
	"cfq", "sfq", "fifo", "requests", "bytes", "time", "auto", "auto\n",
	"", "x", "cfq\n",
	"bytes\n", "0", "1", "2", "3", "4", "8", "16", "64", "100", "1000",
	"4096", "65536", "65537", "1\n", "12a", "-3", "99999999999",
	"524288", "3600000", "100000", "250",
};

static void snapshot(char *buf)
{
	const char *const *t;
	int off = 0;

	for (t = fq_sched_tunables; *t; t++)
		off += fq_sched_get(P.s, *t, buf + off, 64);
}

static void op_set(void)
{
	u32 id = rnd_below(FQ_TUN_COUNT);
	const struct fq_tunable *t = &fq_tunables[id];
	const char *name = fq_sched_tunables[id];
	const char *val = words[rnd_below(ARRAY_SIZE(words))];
	char before[1024], after[1024], num[16];
	int ret;

	/* now and then a number at or just beyond an end of its range */
	if (t->kind != FQ_TK_WORD && rnd_below(4) == 0) {
		u32 ends[4] = { t->min, t->max, t->min - 1, t->max + 1 };

		snprintf(num, sizeof(num), "%u", ends[rnd_below(4)]);
		val = num;
	}

	if (rnd_below(20) == 0)
		name = "bogus";
	/* short deadlines turn every dispatch into an expiry: keep them rare */
	if (!strncmp(name, "fifo_expire", 11) && rnd_below(8))
		name = "quantum";
	snapshot(before);
	ret = fq_sched_set(P.s, name, val);
	if (ret) {
		CHECK(ret == -EINVAL || ret == -ERANGE || ret == -EBUSY ||
		      ret == -ENOMEM);
		snapshot(after);
		CHECK(!strcmp(before, after));
	}
}

static void check_counts(void)
{
	struct fq_stats st;

	fq_sched_stats(P.s, &st);
	CHECK_EQ(st.queued, P.queued);
	CHECK_EQ(st.inflight, P.inflight);
	CHECK_EQ(st.c.enq_reqs, P.enq);
	CHECK_EQ(st.c.disp_reqs, P.disp);
	CHECK_EQ(st.c.done_reqs, P.done);
	CHECK_EQ(st.c.errors, P.errors);
	/* above a lowered max_flows, flows only drain */
	CHECK(st.flows <= st.flows_max || st.flows <= P.flows);
	P.flows = st.flows;
	CHECK_EQ(P.s->nonidle_busy, P.nonidle);
	/* a full walk is O(max_flows): every op for small pools */
	if (P.s->max_flows <= 1024 || !(P.enq & 63))
		CHECK_EQ(fq_check_invariants(P.s), 0);
}

/*
 * Run dry: dispatch until NULL, complete everything, repeat.  When
 * dispatch says NULL with requests queued and nothing in flight, the core
 * must name a future event (else they would be stranded); jump to it.
 */
static void run_dry(void)
{
	u64 t, limit = P.now + 120000 * 1000000ull;
	int i;

	fq_sched_set(P.s, "depth", "8");
	while (P.queued || P.inflight) {
		while (op_dispatch())
			;
		if (P.inflight) {
			for (i = 0; i < NREQ; i++)
				if (P.st[i] == S_INFLIGHT)
					complete_one(i);
		} else {
			t = fq_sched_next_event(P.s, P.now);
			CHECK(t > P.now);
			if (t <= P.now)
				break;
			P.now = t;
		}
		if (P.now > limit) {
			fq_test_failed++;
			fprintf(stderr, "  %u requests stranded\n", P.queued);
			break;
		}
		check_counts();
	}
	CHECK_EQ(P.enq, P.disp + P.drained);
	CHECK_EQ(P.disp, P.done);
	while (fq_sched_reap(P.s, 64))
		;
	CHECK_EQ(P.s->nr_flows, 0);
}

static struct fq_stats prop_sum;	/* coverage figures over all seeds */

static void prop_account(void)
{
	struct fq_stats st;

	fq_sched_stats(P.s, &st);
	prop_sum.c.expired += st.c.expired;
	prop_sum.overflow_enq += st.overflow_enq;
	prop_sum.perturbations += st.perturbations;
	prop_sum.policy_switches += st.policy_switches;
	prop_sum.idle_waits += st.idle_waits;
	prop_sum.c.enq_reqs += st.c.enq_reqs;
}

static void one_op(void)
{
	u32 op = rnd_below(100);

	if (op < 40)
		op_enqueue();
	else if (op < 65)
		op_dispatch();
	else if (op < 85)
		op_complete();
	else if (op < 92)
		P.now += rnd_below(P.storm) ? rnd_below(100000) :
			 rnd_below(400) * 1000000ull;
	else if (op < 93)
		op_drain();
	else
		op_set();
	check_counts();
}

/* ops < 0: as many as the fuzzer's input lasts */
static bool more_ops(int i, int ops)
{
#ifdef FQ_PROP_LIBFUZZER
	if (ops < 0)
		return fz_pos < fz_len;
#endif
	return i < ops;
}

static void one_seed(u64 seed, int ops)
{
	u64 npol = 0;
	int i;

	memset(&P, 0, sizeof(P));
	P.rng = seed * 0x9E3779B97F4A7C15ull + 1;
	/* odd seeds: long clock jumps (expiry paths); even: calm (DRR) */
	P.storm = seed & 2 ? 12 : 1000;
	/* the seeds take the policies of fq_policies[] in turn */
	while (fq_policies[npol])
		npol++;
	P.s = fq_sched_create(fq_policies[seed % npol]->name, seed);
	if (!P.s) {
		fq_test_failed++;
		return;
	}
	fq_sched_set(P.s, "max_flows", seed & 1 ? "64" : "512");
	if (seed % 5 == 0)
		fq_sched_set(P.s, "idle_us", "200");
	if (seed % 7 == 0)
		fq_sched_set(P.s, "fairness", "bytes");
	for (i = 0; more_ops(i, ops) && !fq_test_failed; i++)
		one_op();
	if (!fq_test_failed)
		run_dry();
	prop_account();
	fq_sched_destroy(P.s);
}

#ifdef FQ_PROP_LIBFUZZER
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t len);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t len)
{
	unsigned long w = fq_env_warnings;

	if (len < 4)
		return 0;
	fz_data = data;
	fz_len = len;
	fz_pos = 0;
	fq_test_failed = 0;
	/* the first 4 bytes pick policy and options, like a seed */
	one_seed(rnd() % 210 + 1, -1);
	if (fq_test_failed || fq_env_warnings != w)
		abort();
	return 0;
}
#else
int main(int argc, char **argv)
{
	u64 first = 1, seeds = 100, s;
	int ops = 3000, i, passed = 0, failed = 0;
	unsigned long w;

	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--seeds"))
			seeds = strtoull(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--ops"))
			ops = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--first"))
			first = strtoull(argv[i + 1], NULL, 0);
	}
	for (s = first; s < first + seeds; s++) {
		fq_test_failed = 0;
		w = fq_env_warnings;
		one_seed(s, ops);
		if (fq_env_warnings != w)
			fq_test_failed++;
		if (fq_test_failed) {
			failed++;
			printf("FAIL seed %llu\n", (unsigned long long)s);
		} else {
			passed++;
		}
	}
	printf("prop: %d seeds x %d ops: %llu requests, %llu expired, "
	       "%llu overflowed, %llu perturbations, %llu policy switches, "
	       "%llu idle waits\n", (int)seeds, ops,
	       (unsigned long long)prop_sum.c.enq_reqs,
	       (unsigned long long)prop_sum.c.expired,
	       (unsigned long long)prop_sum.overflow_enq,
	       (unsigned long long)prop_sum.perturbations,
	       (unsigned long long)prop_sum.policy_switches,
	       (unsigned long long)prop_sum.idle_waits);
	printf("prop: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
#endif
