/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fq_unit.h - the harness the unit tests share (fq_unit.c) and the
 * subjects they are filed under (fq_unit_*.c), all linked into one
 * program, fq_unit.
 *
 * Each case builds its own instance with a fixed seed in th, drives it
 * with an injected clock (th.now) and asserts on orders, counts and
 * shares; th_free() checks the core's invariants and tears it down.
 */
#ifndef FQ_UNIT_H
#define FQ_UNIT_H

#include "fq_test.h"

enum { TH_REQS = 20480 };

/* The instance under test, the requests it was given, the clock. */
struct th {
	struct fq_sched *s;
	struct fq_req r[TH_REQS];	/* th.r[i]: the i-th th_enq() */
	struct fq_req *inflight[TH_REQS];	/* dispatched, not completed */
	int n, nin;
	u64 now;
};

extern struct th th;

#define MS 1000000ull
#define US 1000ull

#define BE(l)	FQ_IOPRIO(FQ_CLASS_BE, l)
#define RT(l)	FQ_IOPRIO(FQ_CLASS_RT, l)
#define IDLE	FQ_IOPRIO(FQ_CLASS_IDLE, 0)
#define SYNC	FQ_REQ_SYNC

/* An instance: at the defaults, or with fairness=requests and depth 32. */
void th_new_defaults(const char *policy);
void th_new(const char *policy);
void th_free(void);

/* Tunables: the set must succeed; the get must read @expect. */
void th_set(const char *name, const char *val);
void th_get(const char *name, const char *expect);

/* Requests: queue, dispatch, complete, run one at a time. */
struct fq_req *th_enq_w(u64 key, u64 sector, u32 bytes, u32 flags,
			u16 ioprio, u16 weight);
struct fq_req *th_enq(u64 key, u64 sector, u32 bytes, u32 flags,
		      u16 ioprio);
struct fq_req *th_disp(void);
void th_done(struct fq_req *rq, int status);
bool th_below(const struct fq_req *rq);
int th_run(int max, u64 *keys);

/* Scenarios more than one subject starts from. */
void th_enq_mixed(struct fq_req *rq, unsigned int n);
void th_teach(u64 key, int n, u64 svc_us, u64 think_us, u16 ioprio);
void th_debtor_setup(struct fq_req *b[2]);
void tb_bulk_fill(int nbulk);
void tb_bulk_again(struct fq_req *b);

/* sfq: the bucket of @key, and @n keys in distinct buckets. */
u32 sfq_bucket(u64 key);
void sfq_distinct_keys(u64 *keys, int n);

/* The subjects, in the order fq_unit.c runs them. */
extern const struct fq_test_suite fq_unit_tunables;	/* fq_unit_tunables.c */
extern const struct fq_test_suite fq_unit_policy;	/* fq_unit_policy.c */
extern const struct fq_test_suite fq_unit_weights;	/* fq_unit_weights.c */
extern const struct fq_test_suite fq_unit_turns;	/* fq_unit_turns.c */
extern const struct fq_test_suite fq_unit_expiry;	/* fq_unit_expiry.c */
extern const struct fq_test_suite fq_unit_antic;	/* fq_unit_antic.c */
extern const struct fq_test_suite fq_unit_pass;		/* fq_unit_pass.c */
extern const struct fq_test_suite fq_unit_boost;	/* fq_unit_boost.c */
extern const struct fq_test_suite fq_unit_flows;	/* fq_unit_flows.c */
extern const struct fq_test_suite fq_unit_switch;	/* fq_unit_switch.c */
extern const struct fq_test_suite fq_unit_depth;	/* fq_unit_depth.c */
extern const struct fq_test_suite fq_unit_time;		/* fq_unit_time.c */
extern const struct fq_test_suite fq_unit_stats;	/* fq_unit_stats.c */
extern const struct fq_test_suite fq_unit_writes;	/* fq_unit_writes.c */

#endif /* FQ_UNIT_H */
