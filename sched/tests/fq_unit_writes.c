// SPDX-License-Identifier: GPL-2.0
/*
 * fq_unit_writes.c - background writeback and synchronous I/O
 * (fq_writes.c), writeback=yield (the default): a flow's async backlog
 * bound, the tighter bound (in its turns) while sync I/O is active, its
 * end, the pieces a per-byte device gets, none on a per-request device,
 * the probe of a model that saw one write size, the pieces before any
 * model; writeback=fair: none of it.
 */
#include "fq_unit.h"

#define ASYNC_W		FQ_REQ_WRITE
#define K128		(128u << 10)

/*
 * Async writes of @key (at @weight, 0: its level's) until the core says
 * no; how many it took.
 */
static int fill_async_w(u64 key, u16 weight)
{
	struct fq_req probe = { .key = key, .bytes = K128, .flags = ASYNC_W };
	int n = 0;

	while (n < 64 && fq_sched_may_queue(th.s, &probe)) {
		th_enq_w(key, (key << 20) + (u64)n * 256, K128, ASYNC_W, 0,
			 weight);
		n++;
	}
	return n;
}

static int fill_async_key(u64 key)
{
	return fill_async_w(key, 0);
}

static int fill_async(void)
{
	return fill_async_key(9);
}

static void drain(void)
{
	while (th.s->queued)
		th_done(th_disp(), 0);
}

/*
 * Feed the cost model 12 saturated epochs of writes whose device time is
 * @a_ns + @ps_per_byte * bytes / 1000, their sizes in a mix that varies
 * from epoch to epoch (4 KiB and 128 KiB), one at a time.
 */
static void teach_writes(u64 a_ns, u64 ps_per_byte)
{
	int e, i;

	for (e = 0; e < 12; e++) {
		for (i = 0; i < FQ_COST_EPOCH_N; i++) {
			u32 bytes = i < 2 + (e % 4) * 3 ? K128 : 4096;

			th.now += a_ns + ps_per_byte * bytes / 1000;
			fq_cost_complete(&th.s->fc, th.now, bytes, true, true);
		}
	}
}

/* An instance at the defaults but writeback=yield, quantum_bytes 128 KiB. */
static void th_new_yield(void)
{
	th_new_defaults("cfq");
	th_set("writeback", "yield");
	/* before the model a 128 KiB write is then charged one turn */
	th_set("quantum_bytes", "131072");
}

/* A sync request queued now (and taken away again): sync I/O is active. */
static void sync_now(void)
{
	struct fq_req *rq = th_enq(1, 1u << 30, 4096, SYNC, 0);

	CHECK(th_disp() == rq);
	th_done(rq, 0);
}

/*
 * writeback=yield, no sync I/O: a flow queues as many async writes as the
 * depth lets go down at once, never fewer than two; each flow its own;
 * sync requests are never held by it.
 */
static void t_writes_flow_bound(void)
{
	struct fq_req sync = { .key = 1, .bytes = 4096, .flags = SYNC };
	struct fq_req *rq;

	th_new_yield();
	th_set("depth", "8");
	CHECK_EQ(fill_async(), 8);
	CHECK_EQ(th.s->st.async_held, 1);
	CHECK_EQ(fill_async_key(10), 8);
	CHECK(fq_sched_may_queue(th.s, &sync));
	/* one goes down: room for one more of its flow */
	rq = th_disp();
	CHECK(rq && (rq->key == 9 || rq->key == 10));
	CHECK_EQ(fill_async_key(rq->key), 1);
	th_done(rq, 0);
	drain();
	/* with depth 1: two */
	th_set("depth", "1");
	CHECK_EQ(fill_async(), 2);
	drain();
	th_free();
}

/*
 * writeback=yield, while sync I/O is active: a flow queues two turns'
 * worth (no cost model yet: a 128 KiB write is charged one turn at
 * weight 100, so two writes), each flow its own, whatever the depth.
 */
static void t_writes_backlog(void)
{
	struct fq_req sync = { .key = 1, .bytes = 4096, .flags = SYNC };
	struct fq_req *rq;

	th_new_yield();
	th_set("depth", "8");
	sync_now();
	CHECK_EQ(fill_async(), 2);
	CHECK_EQ(th.s->st.async_held, 1);
	CHECK_EQ(fill_async_key(10), 2);
	/* sync requests are never held back by it */
	CHECK(fq_sched_may_queue(th.s, &sync));
	/* one goes down: room for one more of its flow */
	rq = th_disp();
	CHECK(rq && (rq->key == 9 || rq->key == 10));
	CHECK_EQ(fill_async_key(rq->key), 1);
	th_done(rq, 0);
	drain();
	th_free();
}

/*
 * The bound is in turns, so it keeps a flow's weight: while sync I/O is
 * active a flow of weight 400 (a turn serves four 128 KiB writes before
 * the model) queues 8, one at weight 100 two.  With a bound in requests
 * the heavier flow ran dry within its turn and lost its share (a
 * buffered writer of weight 400 beside a direct reader of weight 100 got
 * 0.06 of the reader's bytes in fairq.ko).
 */
static void t_writes_turns_weight(void)
{
	th_new_yield();
	th_set("depth", "1");
	sync_now();
	CHECK_EQ(fill_async_w(11, 400), 8);
	CHECK_EQ(fill_async_w(12, 100), 2);
	drain();
	th_free();
}

/*
 * writeback=yield with no sync request within fifo_expire_async_ms and
 * none queued or in flight: only the flow's bound holds writeback.  A
 * sync request that waits longer than that keeps sync I/O active.
 */
static void t_writes_sync_gone(void)
{
	struct fq_req *rq;

	th_new_yield();
	th_set("depth", "8");
	CHECK_EQ(fill_async(), 8);	/* no sync I/O seen yet */
	drain();
	sync_now();
	th.now += 999 * MS;
	CHECK_EQ(fill_async(), 2);
	drain();
	th.now += 1 * MS;		/* 1000 ms: fifo_expire_async_ms */
	CHECK_EQ(fill_async(), 8);
	drain();
	/* in flight for five windows: still active */
	rq = th_enq(1, 1u << 30, 4096, SYNC, 0);
	CHECK(th_disp() == rq);
	CHECK(fq_sched_sync_waiting(th.s));
	th.now += 5000 * MS;
	CHECK_EQ(fill_async(), 2);
	drain();
	th_done(rq, 0);
	CHECK(!fq_sched_sync_waiting(th.s));
	th.now += 1000 * MS;
	CHECK_EQ(fill_async(), 8);
	drain();
	th_free();
}

/* writeback=fair: neither held nor cut. */
static void t_writes_fair(void)
{
	th_new_defaults("cfq");
	th_get("writeback", "yield\n");		/* the default */
	th_set("writeback", "fair");
	th_set("depth", "8");
	teach_writes(500000, 250000);
	sync_now();
	CHECK_EQ(fq_sched_async_piece(th.s, K128), K128);
	CHECK_EQ(fill_async(), 64);
	CHECK_EQ(th.s->st.async_held, 0);
	drain();
	th_free();
}

/*
 * A device that charges per byte (0.5 ms + 250 ns/B: a 4 KiB write
 * 1.5 ms, 128 KiB 33 ms): while sync I/O is active a 128 KiB write is
 * cut to the piece the model prices at two 4 KiB writes, (2 * 1.524 -
 * 0.5) ms / 250 ns = 10.2 KB: 8 KiB.  Without sync I/O, whole.
 */
static void t_writes_piece_per_byte(void)
{
	u32 piece;

	th_new_yield();
	teach_writes(500000, 250000);
	CHECK(fq_cost_sized(&th.s->fc, true));
	CHECK_EQ(fq_sched_async_piece(th.s, K128), K128);	/* no sync yet */
	sync_now();
	piece = fq_sched_async_piece(th.s, K128);
	if (piece != 8192 && piece != 12288)
		printf("  piece %u: a %llu ns, b %llu ps/B\n", piece,
		       (unsigned long long)fq_cost_a_ns(&th.s->fc, true),
		       (unsigned long long)fq_cost_b_ps_per_byte(&th.s->fc, true));
	CHECK(piece == 8192 || piece == 12288);
	CHECK_EQ(th.s->st.async_cut, 1);
	/* a write already that small is not cut */
	CHECK_EQ(fq_sched_async_piece(th.s, 8192), 8192);
	CHECK_EQ(fq_sched_async_piece(th.s, 4096), 4096);
	th_free();
}

/* A device that charges per request (4 ms whatever the size): no cut. */
static void t_writes_per_request(void)
{
	th_new_yield();
	teach_writes(4000000, 0);
	CHECK(fq_cost_sized(&th.s->fc, true));
	sync_now();
	CHECK_EQ(fq_sched_async_piece(th.s, K128), K128);
	CHECK_EQ(fq_sched_async_piece(th.s, 1u << 20), 1u << 20);
	CHECK_EQ(th.s->st.async_cut, 0);
	th_free();
}

/*
 * One write size seen: a price per byte and per request cannot be told
 * apart; one write in eight is cut in two so that the fit sees sizes
 * vary.
 */
static void t_writes_probe(void)
{
	int i, cut = 0;
	u32 piece;

	th_new_yield();
	for (i = 0; i < 12 * FQ_COST_EPOCH_N; i++) {
		th.now += 30 * MS;
		fq_cost_complete(&th.s->fc, th.now, K128, true, true);
	}
	CHECK(!fq_cost_sized(&th.s->fc, true));
	CHECK(fq_cost_ns(&th.s->fc, K128, true) > 0);
	sync_now();
	for (i = 0; i < 64; i++) {
		piece = fq_sched_async_piece(th.s, K128);
		CHECK(piece == K128 || piece == K128 / 2);
		cut += piece != K128;
	}
	CHECK_EQ(cut, 64 / 8);
	th_free();
}

/*
 * No model yet, sync I/O active: async writes are cut to one page for an
 * epoch's worth of pieces, then two, four, eight pages, and so on, until
 * the pieces of FQ_WRITES_PROBE_MODELS models were cut; then whole.
 * Without sync I/O, or once a model says the cost is per request, whole.
 */
static void t_writes_unmodelled(void)
{
	u32 n, budget = 4 * FQ_COST_EPOCHS_MIN * FQ_COST_EPOCH_N;

	th_new_yield();
	CHECK_EQ(fq_cost_ns(&th.s->fc, 1u << 20, true), 0);
	CHECK_EQ(fq_sched_async_piece(th.s, 1u << 20), 1u << 20); /* no sync */
	sync_now();
	for (n = 0; n < budget; n++) {
		u32 want = 4096u << (n / FQ_COST_EPOCH_N % 4);

		if (fq_sched_async_piece(th.s, 1u << 20) != want) {
			printf("  piece %u: not %u\n", n, want);
			CHECK(0);
			break;
		}
	}
	CHECK_EQ(th.s->st.async_cut, budget);
	CHECK_EQ(fq_sched_async_piece(th.s, 1u << 20), 1u << 20);
	CHECK_EQ(th.s->st.async_cut, budget);
	th_free();

	/* a write no larger than the piece it would get stays whole */
	th_new_yield();
	sync_now();
	CHECK_EQ(fq_sched_async_piece(th.s, 4096), 4096);
	CHECK_EQ(th.s->st.async_cut, 0);
	th_free();

	/* a model that prices per request: nothing cut */
	th_new_yield();
	teach_writes(4000000, 0);
	sync_now();
	CHECK_EQ(fq_sched_async_piece(th.s, 1u << 20), 1u << 20);
	CHECK_EQ(th.s->st.async_cut, 0);
	th_free();
}

static const struct fq_test_case cases[] = {
	{ "writes_flow_bound", t_writes_flow_bound },
	{ "writes_backlog", t_writes_backlog },
	{ "writes_turns_weight", t_writes_turns_weight },
	{ "writes_sync_gone", t_writes_sync_gone },
	{ "writes_fair", t_writes_fair },
	{ "writes_piece_per_byte", t_writes_piece_per_byte },
	{ "writes_unmodelled", t_writes_unmodelled },
	{ "writes_per_request", t_writes_per_request },
	{ "writes_probe", t_writes_probe },
};

const struct fq_test_suite fq_unit_writes = { cases, ARRAY_SIZE(cases) };
