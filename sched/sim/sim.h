/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sim.h - the simulator's flows, event loop and device runs (fq_sim.c),
 * shared by its tables and the device family (sim_family.c).
 *
 * A run puts the core in front of a device model of sim_dev.h: flows
 * issue requests (a flow keeps "depth" outstanding, issuing the next one
 * "think" ns after a completion), the core queues and dispatches them, the
 * model serves them.  Everything is a pure function of the seed.
 */
#ifndef SIM_H
#define SIM_H

#include <stddef.h>
#include "fq_sched.h"
#include "sim_dev.h"

#define MS			1000000ull
#define US			1000ull

enum { SIM_MAX_FLOWS = 10000, SIM_RA_BURST = 31 };

#define SIM_START_WINDOW	UINT64_MAX

struct sim_flow {
	u64 key;
	int depth;		/* requests outstanding */
	u32 bytes;
	u32 flags;
	u16 ioprio;
	u64 think_ns;
	u32 weight;		/* for shares */
	bool sequential;	/* device sections: next sector follows the last */
	u64 next_sector;
	u64 dev_ns;		/* device sections: service time used [ns] */
	/* device sections: a finite flow (STARTUP) */
	u32 limit;		/* requests to issue in all, 0 = no end */
	/*
	 * first request at this time (with limit); SIM_START_WINDOW: when
	 * the measuring window begins (dev_cfg.window_ns)
	 */
	u64 start_ns;
	bool key_per_req;	/* each request a new key (a process per file) */
	bool vary_size;		/* bytes, 2 x bytes, .. 4 x bytes in turn */
	/*
	 * STARTUP: every ra_every-th request comes right after SIM_RA_BURST
	 * 4 KiB read-ahead requests (ext4 reading an inode: the inode
	 * table's other blocks ahead, then the inode's own); the flow waits
	 * only for its own requests
	 */
	u32 ra_every;
	/*
	 * device sections, an async writer: requests the core had no room
	 * for (fq_sched_may_queue(): the back-pressure fairq.ko applies to
	 * a flusher), issued again as room comes
	 */
	u32 refused;
	/*
	 * an async writer: the piece the core cut that waits for room, as
	 * the cut bio does in fairq.ko (0: none; the next is asked for)
	 */
	u32 piece;
	u32 issued, completed;
	u64 last_done_ns;
	/* results, in the measuring window */
	u64 done_reqs, done_bytes;
	u64 *lat;		/* latencies [ns] */
	size_t nlat, maxlat;
};

/*
 * EV_DEVSUB / EV_DEVDONE: a request reaches the device / its completion
 * reaches the host, transit_ns after it left (a network disk)
 */
enum { EV_DONE, EV_ARRIVE, EV_TIMER, EV_DEVSUB, EV_DEVDONE };

struct sim_ev {
	u64 t;
	u64 seq;		/* ties: insertion order (determinism) */
	int type;
	void *p;
	int flow;
};

struct sim_req;

struct sim {
	struct fq_sched *s;
	struct sim_flow *f;
	int nflows;
	struct sim_ev *heap;
	size_t nheap, maxheap;
	u64 evseq, now, warm_ns, end_ns, rng, last_timer;
	struct sim_req *reqs, *free;
	size_t nreqs;
	struct fq_stats st_end;	/* the core's figures at the window's end */
};

struct dev_req {
	struct fq_req rq;
	struct sim_io io;
	int flow;
	u64 submit_ns;		/* the flow issued it */
	bool ra;		/* read-ahead: nobody waits for it */
	struct dev_req *next_free;
};

struct dev_run;

struct dev_cfg {
	const char *policy;
	u32 depth;		/* fixed depth, or the seed when adaptive */
	bool adaptive;
	u32 depth_max;		/* adaptive */
	const char *fairness;	/* NULL: requests; "time": device time */
	u64 secs_ms;
	u64 change_ms;		/* 0, or when servers become change_servers */
	u32 change_servers;
	bool trace;		/* record C and the depth every 100 ms */
	const char *idle_us;	/* NULL: the core's default */
	/*
	 * NULL: 0 (the interactive boost off: DEV, DEVCOST and ANTIC are
	 * about depth, cost and anticipation; their S would be boosted for
	 * its first 2048 requests); "default": the core's default
	 */
	const char *boost_ms;
	bool stop_on_limit;	/* end when every finite flow is done */
	u64 warm_ms;		/* measure from here, 0 = the first 10 % */
	u64 transit_ns;		/* each way between fairq and the device */
	/*
	 * 0, or the measuring window's length: it begins once warm_ms has
	 * passed and warm_reqs requests have completed in a row with no flow
	 * boosted (a boost is a grant, not the steady state, and the depth
	 * it held takes a while to follow the device again), and the run
	 * ends with it (or with stop_on_limit); secs_ms bounds the wait for
	 * the boost to end
	 */
	u64 window_ns;
	u64 warm_reqs;
	const char *const *set;	/* NULL, or name, value, ..., NULL: written last */
	/* called every tick_ns of simulated time, when set (a trace) */
	void (*tick)(const struct sim *sm, const struct dev_run *dr);
	u64 tick_ns;
};

enum { DEV_TRACE = 64 };

struct dev_run {
	struct sim_dev dev;
	struct fq_stats st;		/* the core's figures at the end */
	const struct dev_cfg *c;
	struct dev_req *reqs, *free;
	u32 depth;			/* the scheduler's now */
	u64 depth_sum, depth_n;		/* over the measuring window */
	u32 depth_lo, depth_hi;
	u32 trace_c[DEV_TRACE], trace_d[DEV_TRACE];
	int ntrace;
	u64 idle_waits;			/* the scheduler's, at the end */
	u64 window_from_ns;		/* window_ns: when the window began */
	bool boost_left;		/* window_ns: it began with a boost on */
	u64 calm_from;			/* window_ns: 1 + completions when no boost since */
};

void sim_flows(struct sim *sm, int n);
void sim_flow(struct sim *sm, int i, int depth, u32 bytes, u32 flags,
	      u16 ioprio, u64 think_ns);
void sim_reset_results(struct sim *sm);
/* the flows' figures, over the measuring window */
double window_s(const struct sim *sm);
double flow_mbs(const struct sim *sm, int i);
double total_mbs(const struct sim *sm);
double pct(struct sim_flow *f, double p);	/* latency quantile [us] */

/*
 * A core of @policy; "fifo", the baselines' "no scheduling to speak of",
 * also with writeback=fair (async writes not held back either)
 */
struct fq_sched *sim_sched_create(const char *policy, u64 seed);

/* what fairq's cost model charges a request of @bytes now [us], 0 = none */
double sim_price_us(const struct fq_stats *st, bool write, u32 bytes);

/* sm's flows against a copy of @model, the core set up as @c says */
void dev_run(struct sim *sm, struct dev_run *dr, const struct sim_dev *model,
	     const struct dev_cfg *c, u64 seed);

#endif /* SIM_H */
