// SPDX-License-Identifier: GPL-2.0
/*
 * fq_unit.c - unit tests for every operation and policy of the core: the
 * harness they share (fq_unit.h) and main().  The cases are filed by
 * subject in fq_unit_*.c; main() runs each subject's cases in the order
 * of suites[] below, one line per case, and ends with
 * "unit: N passed, N failed".  "fq_unit NAME" runs the case NAME alone.
 */
#include "fq_unit.h"

int fq_test_failed;

struct th th;

/* An instance at the defaults. */
void th_new_defaults(const char *policy)
{
	memset(&th, 0, sizeof(th));
	th.s = fq_sched_create(policy, 42);
	CHECK(th.s != NULL);
}

/*
 * An instance at the defaults before depth=auto and fairness=time: most
 * cases count requests per turn and fill a fixed depth.
 */
void th_new(const char *policy)
{
	th_new_defaults(policy);
	if (!th.s)
		return;
	CHECK_EQ(fq_sched_set(th.s, "fairness", "requests"), 0);
	CHECK_EQ(fq_sched_set(th.s, "depth", "32"), 0);
}

void th_set(const char *name, const char *val)
{
	int ret = fq_sched_set(th.s, name, val);

	if (ret)
		fprintf(stderr, "  set %s=%s: %d\n", name, val, ret);
	CHECK_EQ(ret, 0);
}

/* Queue one request with an explicit weight (0: from the level). */
struct fq_req *th_enq_w(u64 key, u64 sector, u32 bytes, u32 flags,
			u16 ioprio, u16 weight)
{
	struct fq_req *rq = &th.r[th.n++];

	rq->key = key;
	rq->sector = sector;
	rq->bytes = bytes;
	rq->flags = flags;
	rq->ioprio = ioprio;
	rq->weight = weight;
	fq_sched_enqueue(th.s, rq, th.now);
	return rq;
}

struct fq_req *th_enq(u64 key, u64 sector, u32 bytes, u32 flags,
		      u16 ioprio)
{
	return th_enq_w(key, sector, bytes, flags, ioprio, 0);
}

struct fq_req *th_disp(void)
{
	struct fq_req *rq = fq_sched_dispatch(th.s, th.now);

	if (rq)
		th.inflight[th.nin++] = rq;
	return rq;
}

void th_done(struct fq_req *rq, int status)
{
	int i;

	for (i = 0; i < th.nin; i++) {
		if (th.inflight[i] == rq) {
			th.inflight[i] = th.inflight[--th.nin];
			break;
		}
	}
	fq_sched_complete(th.s, rq, status, th.now);
	/* the caller's work item frees the flows of an idle device */
	while (fq_sched_reap(th.s, 64))
		;
}

/* Whether @rq was dispatched and has not completed. */
bool th_below(const struct fq_req *rq)
{
	int i;

	for (i = 0; i < th.nin; i++)
		if (th.inflight[i] == rq)
			return true;
	return false;
}

/* Dispatch and complete one at a time; record keys; returns how many. */
int th_run(int max, u64 *keys)
{
	struct fq_req *rq;
	int i;

	for (i = 0; i < max; i++) {
		rq = th_disp();
		if (!rq)
			break;
		if (keys)
			keys[i] = rq->key;
		th_done(rq, 0);
	}
	return i;
}

void th_free(void)
{
	struct fq_req *rq;

	CHECK_EQ(fq_check_invariants(th.s), 0);
	while ((rq = fq_sched_drain(th.s)))
		;
	while (th.nin)
		th_done(th.inflight[0], 0);
	CHECK_EQ(fq_check_invariants(th.s), 0);
	fq_sched_destroy(th.s);
	th.s = NULL;
}

void th_get(const char *name, const char *expect)
{
	char buf[64];
	int ret = fq_sched_get(th.s, name, buf, sizeof(buf));

	CHECK(ret > 0);
	if (ret > 0 && strcmp(buf, expect)) {
		fprintf(stderr, "  get %s: '%s' expected '%s'\n", name, buf,
			expect);
		fq_test_failed++;
	}
}

/* The sfq bucket of @key at the instance's hash seed and bucket count. */
u32 sfq_bucket(u64 key)
{
	return (u32)(fq_hash64(key, th.s->hash_seed) & (th.s->buckets - 1));
}

/* @n keys that land in distinct buckets. */
void sfq_distinct_keys(u64 *keys, int n)
{
	u64 k = 1;
	int i, j;

	for (i = 0; i < n; k++) {
		for (j = 0; j < i; j++)
			if (sfq_bucket(keys[j]) == sfq_bucket(k))
				break;
		if (j == i)
			keys[i++] = k;
	}
}

/* Queues @n reads: 4 of 1 MiB from flow 1, the rest of 4 KiB from flow 2. */
void th_enq_mixed(struct fq_req *rq, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		rq[i].key = i < 4 ? 1 : 2;
		rq[i].sector = (u64)i << 20;
		rq[i].bytes = i < 4 ? 1u << 20 : 4096;
		rq[i].flags = SYNC;
		fq_sched_enqueue(th.s, &rq[i], th.now);
	}
}

/*
 * Flow @key alone: @n requests one at a time, each served in @svc_us,
 * the next queued @think_us after the completion: its think time and
 * service time are learnt (kept across the reap of an idle device).
 */
void th_teach(u64 key, int n, u64 svc_us, u64 think_us, u16 ioprio)
{
	struct fq_req *rq;
	int i;

	for (i = 0; i < n; i++) {
		th_enq(key, (u64)i * 100000, 4096, SYNC, ioprio);
		rq = th_disp();
		CHECK(rq && rq->key == key);
		th.now += svc_us * US;
		if (rq)
			th_done(rq, 0);
		th.now += think_us * US;
	}
}

/*
 * Flow 1 taught (think 100 us, service 200 us), fairness=bytes, depth 1,
 * no boost; flow 2 queues two 1 MiB reads, b[0] goes down: flow 2 is a
 * debtor (two turns' bytes) with b[1] queued.
 */
void th_debtor_setup(struct fq_req *b[2])
{
	th_new("cfq");
	th_set("depth", "1");		/* one at a time: no batch of two */
	th_set("idle_us", "1000");
	th_set("boost_ms", "0");	/* by its turn, not the boost lane */
	th_set("fairness", "bytes");
	th_teach(1, 4, 200, 100, 0);	/* think 100 us, service 200 us */
	b[0] = th_enq(2, 1u << 22, 1u << 20, SYNC, 0);
	b[1] = th_enq(2, (1u << 22) + 2048, 1u << 20, SYNC, 0);
	CHECK(th_disp() == b[0]);	/* 2 turns' bytes: a debtor */
}

/* @nbulk bulk flows (keys 10..), 8 requests queued each, far sectors. */
void tb_bulk_fill(int nbulk)
{
	int k, i;

	for (k = 0; k < nbulk; k++)
		for (i = 0; i < 8; i++)
			th_enq(10 + (u64)k, (1ull << 30) + (u64)(k * 64 + i) * 8,
			       4096, SYNC, 0);
}

/* @b, a bulk request below, completes; its flow queues another. */
void tb_bulk_again(struct fq_req *b)
{
	th_done(b, 0);
	th_enq(b->key, (1ull << 30) + (u64)th.n * 8, 4096, SYNC, 0);
}

static const struct fq_test_suite *const suites[] = {
	&fq_unit_tunables,
	&fq_unit_policy,
	&fq_unit_weights,
	&fq_unit_turns,
	&fq_unit_expiry,
	&fq_unit_antic,
	&fq_unit_pass,
	&fq_unit_boost,
	&fq_unit_flows,
	&fq_unit_switch,
	&fq_unit_depth,
	&fq_unit_time,
	&fq_unit_stats,
	&fq_unit_writes,
};

int main(int argc, char **argv)
{
	return fq_test_run_suites("unit", suites, ARRAY_SIZE(suites), argc,
				  argv);
}
