/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fq_internal.h - data structures shared by the sched/ core files.
 *
 * Not part of the API: only the core files in sched/ and the host tests include it.
 *
 * Every field below is protected by the caller's per-device lock (see
 * fq_sched.h); the core takes no lock of its own.
 *
 * Where a queued request lives:
 *   rq->node  on its flow's FIFO queue (FQ_RS_QUEUED) or on the device's
 *             sorted dispatch batch (FQ_RS_BATCH);
 *   rq->fifo  on one of the device's expiry lists (sync, async, idle
 *             class), in enqueue order.
 * While in flight (FQ_RS_INFLIGHT) neither link is used.
 *
 * Where a flow lives (fqf->where):
 *   FQ_FW_FREE   on the spare list (fqs->free), memory kept for the next
 *                new flow;
 *   FQ_FW_BUSY   has queued requests: on its class's current round list
 *                (fqf->round == round) or next round list (round + 1);
 *   FQ_FW_IDLE   drained, kept on an idle list (by the round its credit
 *                belongs to: previous, current, next) because it still
 *                has a claim on the round robin (see fq_drr.c);
 *   FQ_FW_NONE   on no list: queue empty but requests batched or in flight,
 *                or any flow of a policy without ->activate (fifo).
 */
#ifndef FQ_INTERNAL_H
#define FQ_INTERNAL_H

#include "fq_env.h"
#include "fq_sched.h"
#include "fq_depth.h"
#include "fq_cost.h"

#define fq_entry(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

static inline void fq_list_init(struct fq_node *h)
{
	h->next = h;
	h->prev = h;
}

static inline bool fq_list_empty(const struct fq_node *h)
{
	return h->next == h;
}

static inline void fq_list_insert(struct fq_node *n, struct fq_node *prev,
				  struct fq_node *next)
{
	n->prev = prev;
	n->next = next;
	prev->next = n;
	next->prev = n;
}

static inline void fq_list_add_tail(struct fq_node *n, struct fq_node *h)
{
	fq_list_insert(n, h->prev, h);
}

static inline void fq_list_add_head(struct fq_node *n, struct fq_node *h)
{
	fq_list_insert(n, h, h->next);
}

static inline void fq_list_del(struct fq_node *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n;
	n->prev = n;
}

/* Move every entry of @from to the tail of @to; @from ends up empty. */
static inline void fq_list_splice_tail(struct fq_node *from, struct fq_node *to)
{
	if (fq_list_empty(from))
		return;
	from->next->prev = to->prev;
	to->prev->next = from->next;
	from->prev->next = to;
	to->prev = from->prev;
	fq_list_init(from);
}

enum fq_fairness {
	FQ_FAIR_REQUESTS,
	FQ_FAIR_BYTES,
	FQ_FAIR_TIME,
};

/* The writeback tunable (fq_writes.c) */
enum fq_writeback {
	FQ_WB_FAIR,
	FQ_WB_YIELD,
};

/* Request states (rq->state); odd values so that a zeroed request is caught. */
enum {
	FQ_RS_QUEUED = 0x51,
	FQ_RS_BATCH = 0x53,
	FQ_RS_INFLIGHT = 0x55,
	FQ_RS_DONE = 0x57,
};

/* Flow placement (fqf->where), see the top of this file. */
enum {
	FQ_FW_FREE,
	FQ_FW_NONE,
	FQ_FW_BUSY,
	FQ_FW_IDLE,
};

/* Flow flags (fqf->flags). */
enum {
	FQ_FF_OVERFLOW = 1u << 0,	/* the shared overflow flow, never freed */
	FQ_FF_ORPHAN = 1u << 1,		/* unhashed by a rebuild, freed when idle */
	FQ_FF_BUCKET = 1u << 2,		/* an sfq bucket, in the flow table */
	FQ_FF_HASHED = 1u << 3,		/* a cfq/fifo flow, in the flow table */
	/* no place in its class's rounds yet: joins the current one's tail */
	FQ_FF_FRESH = 1u << 4,
	/* came back to the head of the current round: paced (fq_drr.c) */
	FQ_FF_PACED = 1u << 5,
	/* its last request went by the boost (fq_boost.c), not its turn */
	FQ_FF_LANE = 1u << 6,
	/* anticipated as behind the class's debtors (fq_drr_behind()) */
	FQ_FF_BEHIND = 1u << 7,
	/* in the policy's map: its ->unmap() runs when the flow is freed */
	FQ_FF_MAPPED = FQ_FF_BUCKET | FQ_FF_HASHED,
};

/* Class index of the per-class round robin (0 = served first). */
enum {
	FQ_CI_RT,
	FQ_CI_BE,
	FQ_CI_IDLE,
};

/* Expiry lists: sync and async deadlines; idle class has none. */
enum {
	FQ_FIFO_SYNC,
	FQ_FIFO_ASYNC,
	FQ_FIFO_IDLE,
	FQ_FIFO_COUNT,
};

/*
 * Weights (see fq_sched.h): explicit 1..FQ_WEIGHT_MAX, or 25 * (8 - level).
 * FQ_WEIGHT_BASE is the weight at which a flow gets exactly one quantum
 * per turn, and what one request (requests mode) or byte (bytes mode)
 * costs, so a flow of weight w gets quantum * w / FQ_WEIGHT_BASE.
 */
enum {
	FQ_WEIGHT_BASE = FQ_WEIGHT_DEFAULT,
	FQ_LEVEL_WEIGHT_STEP = 25,	/* weight per level below 8 */
	FQ_BATCH_MAX = 64,	/* requests sorted into one dispatch batch */
	FQ_MEM_SLOTS = 64,	/* flow memory (fq_flow.c), a power of two */
	/* freed flows kept for the next new one (fq_flow.c) */
	FQ_FLOW_SPARE = 32,
	/* the flow table's chains: at least 2^6, at least one per flow */
	FQ_TABLE_MIN_BITS = 6,
	/* bounded wait: a weight below FQ_WEIGHT_BASE waits up to 2^7 x longer */
	FQ_EXPIRE_SCALES = 8,
	/* ... and only after this many requests of others went down */
	FQ_EXPIRE_MIN_DISPATCHES = 4,
	/* heads of flows ahead of their share looked past, per list per call */
	FQ_EXPIRE_RESTARTS = 4,
	/*
	 * A round grants at most this many default turns in all: past it a
	 * turn's credit shrinks with the class's busy weight (fq_drr.c)
	 */
	FQ_ROUND_FLOWS = 32,
};

struct fq_flow {
	struct fq_node queue;	/* queued requests (rq->node), enqueue order */
	struct fq_node link;	/* class round list or idle list */
	struct fq_node head_link;	/* on fqs->heads[] while its head waits */
	struct fq_req *head;	/* first queued request, as last filed */
	u64 head_ns;		/* when ->head became the first [ns] */
	u64 head_disp;		/* fqs->dispatches then */
	u32 nr_ra;		/* FQ_REQ_RAHEAD requests queued or in the batch */
	u32 ra_inflight;	/* ... and in flight (fq_boost.c) */
	struct fq_flow *hnext;	/* cfq hash chain / pool free list */
	struct fq_node all;	/* on fqs->flows while taken from the pool */
	u32 walk_gen;		/* stamp of the flows walk that last visited it */
	u32 reap_gen;		/* fqs->reap_gen when it was taken from the pool */
	u64 key;		/* flow key (sfq: bucket index) */
	s64 deficit;		/* DRR credit [cost units, see fq_cost()] */
	u64 antic_until;	/* anticipation deadline [ns], 0 = not set */
	/* interactive boost (fq_boost.c): ends then [ns]; 0 = none */
	u64 boost_until;
	struct fq_node boost_link;	/* on its class's boost list */
	u64 done_ns;		/* last sync completion that left it idle [ns] */
	u32 ttime_ns;		/* think time, moving average [ns] (fq_antic.c) */
	u32 svc_ns;		/* sync service time, moving average [ns] */
	/* the same with no other request sent down since its previous one */
	u32 svc_alone_ns;
	u32 resp_ns;		/* sync queued -> completed, moving average [ns] */
	/* service time with the others held for it (fq_antic_served()) */
	u32 svc_held_ns;
	u32 last_disp;		/* fqs->dispatches at its latest request */
	u64 hold_until;		/* others held for its request till then [ns] */
	u64 next_sector;	/* where its last request ended */
	u32 round;		/* class round the deficit belongs to */
	u32 nr_queued;		/* requests on ->queue */
	u32 nr_batch;		/* requests picked into the dispatch batch */
	u32 inflight;		/* requests dispatched, not completed */
	u32 weight;		/* 1..FQ_WEIGHT_MAX, explicit or from the level */
	u16 ioprio;		/* class and level served at */
	u8 ci;			/* FQ_CI_* */
	u8 where;		/* FQ_FW_* */
	u8 flags;		/* FQ_FF_* */
	u8 last_sync;		/* last request picked was sync */
	u8 ttime_n;		/* think-time samples, saturating */
	u8 seq_pct;		/* requests near where the last ended [%], average */
	u8 inj_before;		/* others' requests sent between its last two */
	u8 later_far;		/* a debtor on its class's far, not later[] */
	u16 boost_reqs;		/* requests served by the boost (fq_boost.c) */
	struct fq_counts c;	/* per-flow counters */
};

/*
 * Idle lists of a class, a wheel of rounds: a drained flow whose credit
 * is of round r waits on idle[r % FQ_IDLE_WHEEL] (r from the round just
 * ended to FQ_IDLE_WHEEL - 2 rounds ahead: a claim, or a debt being paid)
 * and goes when its round is two behind; one credited further ahead is
 * parked on the list the wheel comes back to last and filed again then
 * (fq_flow_idle_slot(), fq_classq_age_idle()).  A list whose time has
 * come is not walked there and then: it joins cq->refile, which the
 * class works through FQ_CHORE_STEPS flows at a time (fq_drr.c).
 *
 * Debtors (busy, credited for a round after next) wait the same way, on
 * later[r % FQ_LATER_WHEEL] while r is at most FQ_LATER_WHEEL - 1 rounds
 * ahead, so that a new round takes its list whole; further ahead on
 * far, which the class files into later[] FQ_CHORE_STEPS flows at a
 * time, before any is due (fq_drr.c, fq_later_*()).  A debt is about
 * flows / 320 rounds deep at the defaults and 100 us a request, so
 * later[] holds the debtors of 65,536 such flows.
 */
enum {
	FQ_IDLE_WHEEL = 64,	/* a power of two */
	FQ_LATER_WHEEL = 256,	/* a power of two, a multiple of 64 */
	/*
	 * Flows an operation moves at most, per list it works through a
	 * bit at a time (far debtors, idle lists to file again, the flows
	 * of an idle device to free): the work under the caller's lock
	 * does not grow with the flows
	 */
	FQ_CHORE_STEPS = 16,
};

static inline u32 fq_idle_bucket(u32 round)
{
	return round & (FQ_IDLE_WHEEL - 1);
}

/* Round robin state of one priority class. */
struct fq_classq {
	struct fq_node cur;	/* flows with credit in this round */
	struct fq_node next;	/* flows served up to their credit */
	struct fq_node idle[FQ_IDLE_WHEEL];	/* drained flows by round */
	/* busy flows credited for a round after next (paying a debt) */
	struct fq_node later[FQ_LATER_WHEEL];
	u32 later_n[FQ_LATER_WHEEL];	/* flows on each */
	u64 later_map[FQ_LATER_WHEEL / 64];	/* which have any */
	/*
	 * ... further ahead: far, filed into later[] a few at a time (those
	 * on far_done were looked at in this pass of far)
	 */
	struct fq_node far, far_done;
	u32 nr_later;		/* flows on later[], far and far_done */
	u32 nr_far;		/* on far and far_done */
	u32 far_min;		/* no flow on far or far_done is due before */
	u32 far_done_min;	/* the earliest round on far_done */
	u32 later_min;		/* the earliest round of a flow on later */
	/* drained flows whose idle list's time came, to free or file again */
	struct fq_node refile;
	u32 round;		/* round number, wraps */
	/* boosted busy flows (fq_boost.c), served first while tokens > 0 */
	struct fq_node boost;
	/* cost the class's other flows were served, less the boosted [units] */
	s64 boost_tokens;
	u32 nr_busy;		/* flows on cur + next + later */
	u32 wsum;		/* their weights */
	u64 round_work;		/* cost served in this round's credit */
};

/*
 * What a flow leaves behind when it goes back to the pool (fq_flow.c):
 * its place in the rounds (a debt or a credit for a later round is not
 * forgiven by a reap), its think time and the times fq_antic_served()
 * judges it by.  Direct-mapped by key.
 */
struct fq_flow_mem {
	u64 key;
	u64 done_ns;
	u64 boost_until;
	s64 deficit;
	u32 round;
	u32 ttime_ns;
	u32 svc_ns;
	u32 resp_ns;
	u32 svc_held_ns;
	u8 ci;
	u8 ttime_n;
	u8 seq_pct;
	u16 boost_reqs;
	u8 kind;		/* the flow's FQ_FF_MAPPED bit; 0 = slot empty */
};

struct fq_sched {
	/* tunables */
	const struct fq_policy *pol;	/* dispatch policy, fq_policies[policy] */
	u32 policy;		/* its index in fq_policies[] (the tunable) */
	u32 fairness;		/* enum fq_fairness */
	u32 quantum;		/* requests per cfq turn at FQ_WEIGHT_BASE */
	u32 quantum_bytes;	/* bytes per turn at FQ_WEIGHT_BASE, bytes mode */
	u32 quantum_us;		/* device time per turn at FQ_WEIGHT_BASE [us], time mode */
	u32 buckets;		/* sfq buckets, power of two */
	u32 perturb_ms;		/* sfq re-hash period [ms], 0 = off */
	u32 depth;		/* requests in flight below, max; 0 = auto */
	u32 depth_max;		/* bound of depth=auto */
	u32 idle_us;		/* anticipation [us], 0 = off */
	u32 boost_ms;		/* interactive boost of new flows [ms], 0 = off */
	u32 grace_ms;		/* IDLE class waits this long [ms] */
	u32 expire_ms[2];	/* fifo_expire_{sync,async}_ms [ms] */
	u32 max_flows;		/* pool size [flows] */
	u32 max_queued;		/* requests queued at most, for the caller [requests] */
	u32 fastpath;		/* 1: the caller may pass requests by (fq_sched_pass_depth()) */
	u32 writeback;		/* enum fq_writeback */

	/*
	 * Flows are allocated one by one as keys appear (fq_env_flow_alloc(),
	 * under the caller's lock), up to max_flows; a freed flow goes to
	 * the spare list while it holds fewer than FQ_FLOW_SPARE, else back
	 * to the environment.  cfq and sfq find a flow by key (an sfq
	 * bucket's key is its index) in the flow table, which the caller
	 * grows outside its lock (fq_sched_table_want()).
	 */
	struct fq_flow *free;	/* spare list through ->hnext */
	u32 nr_spare;		/* flows on it */
	struct fq_table *table;	/* cfq and sfq: flows by key */
	/*
	 * the table it replaced, while its flows move into table: chains
	 * below rehash_pos are empty (fq_sched_table_rehash())
	 */
	struct fq_table *table_old;
	u32 rehash_pos;
	u64 hash_key;		/* cfq hash seed, drawn at create, never changed */
	u32 nr_flows;		/* flows that exist now (not the spares) */
	/*
	 * The flows that exist (fqf->all): stats and rebuilds walk these, so
	 * their time is O(flows that exist).
	 */
	struct fq_node flows;
	u32 walk_gen;		/* stamp of the latest flows walk (fq_stats.c) */
	struct fq_flow overflow;	/* shared at max_flows, or with no memory */
	/*
	 * The drained flows of a device that went idle, not freed yet: dead
	 * (fq_flow_dead()), freed FQ_CHORE_STEPS at a time by the core's
	 * calls and by fq_sched_reap(); their reap_gen is behind.
	 */
	struct fq_node reap;
	u32 reap_gen;

	/* scheduling state */
	struct fq_classq cq[FQ_PRIO_COUNT];
	struct fq_node fifo[FQ_FIFO_COUNT];	/* queued requests by age */
	/*
	 * Flows by the time their first queued request reached the front
	 * (sync, async): bounded wait counts from there, so a flow's own
	 * backlog never makes its requests "expired" and jump the others.
	 */
	struct fq_node heads[FQ_FIFO_IDLE][FQ_EXPIRE_SCALES];
	u64 now_ns;		/* latest time the caller passed in [ns] */
	struct fq_node batch;	/* picked requests, sector order */
	u32 nr_batch;
	u32 queued;		/* requests queued or batched */
	u32 async_probe;	/* async writes asked about (fq_writes.c) */
	u32 async_unmodelled;	/* pieces cut before a model (fq_writes.c) */
	bool sync_seen;		/* sync_seen_ns is valid */
	u64 sync_seen_ns;	/* last time a sync request was queued [ns] */
	u32 sync_out;		/* sync requests queued or in flight */
	u32 inflight;		/* requests below */
	/*
	 * Requests the caller sent down without the core (pass-through,
	 * fq_sched_pass()), in flight: they hold depth slots and count as
	 * RT/BE work for the idle grace
	 */
	u32 passing;
	/*
	 * depth=auto: passed requests were still below while the core was
	 * back in charge (the depth had filled up), so the epochs meanwhile
	 * taught the controller nothing.  Pass-through waits until it has
	 * closed an epoch it saw whole (fq_depth_seen_epochs() past
	 * pass_wait_mark) or the device went idle: with a demand near the
	 * depth the two modes would otherwise alternate and the controller
	 * never see a saturated epoch (fq_sched_pass_depth()).
	 */
	bool pass_wait;
	u64 pass_wait_mark;
	u64 seq;		/* enqueue sequence number */
	u64 dispatches;		/* requests sent down, ever */
	struct fq_flow *antic;	/* flow the turn is held for, or NULL */
	bool antic_blocked;	/* this anticipation has held someone */
	/*
	 * Injection limit (fq_antic.c): while a flow behind the others is
	 * anticipated, the others may have this many requests below.
	 */
	u32 inject;
	u64 big_ns;		/* largest request lately [ns] (fq_antic.c) */
	/*
	 * Interactive boost (fq_boost.c): slots kept from the other flows
	 * while a boosted flow is anticipated, and what teaches it: the
	 * lowest service time of a boosted request [ns, slowly rising] and
	 * boosted completions in a row near it, and slow ones in a row.
	 */
	u32 boost_reserve;
	u32 boost_good;
	u32 boost_slow;
	u64 boost_svc_floor;
	bool nonidle_seen;	/* nonidle_ns is valid */
	u32 nonidle_busy;	/* RT/BE requests queued or in flight */
	u64 nonidle_ns;		/* last time RT/BE work existed [ns] */
	u64 pick_steps;		/* list steps under the lock, all kinds (tests) */
	struct fq_flow_mem mem[FQ_MEM_SLOTS];

	/* sfq hashing */
	u64 prng;		/* PRNG state (perturbations) */
	u64 hash_seed;		/* current sfq perturbation */
	u64 perturb_next;	/* next re-hash [ns], 0 = set on next call */

	/*
	 * Depth and device cost: depth_now is the dispatch limit (depth, or
	 * dc.depth while depth is auto); dc is (re)started from depth_now
	 * when depth becomes auto, from the seed at create.  fc learns the
	 * device's cost per request whatever the fairness.
	 */
	u32 depth_now;		/* requests in flight below at most, now */
	/*
	 * The last dispatch found depth_now requests in flight (or left
	 * them): until a dispatch finds room, completions count as limited
	 * by the depth for the cost model even when a burst of them has
	 * lowered inflight before the caller could refill
	 */
	bool depth_full;
	/*
	 * How long the depth was full (inflight >= depth_now), summed: the
	 * adaptive depth's saturation signal (fq_depth.h says why time and
	 * not completions).  full_on: full since full_since_ns.  Work held
	 * back from the slots a boosted flow keeps (reserve_held) was held
	 * by the depth too: what is left of it after the reserve.
	 */
	bool full_on;
	bool held;		/* the last pick was held for a flow behind */
	bool reserve_held;	/* ... or out of a boosted flow's reserve */
	u64 full_since_ns;
	u64 full_ns;
	struct fq_depth dc;	/* depth=auto controller */
	struct fq_cost fc;	/* device time per request, for fairness=time */

	struct fq_stats st;	/* totals (queued/inflight/flows filled late) */
};

/* The flow table: 1 << bits chains of flows by key (fq_flow.c). */
struct fq_table {
	u32 bits;
	struct fq_flow *chain[];
};

/*
 * struct fq_policy - a dispatch policy, as operations on an instance.
 *
 * Every policy is one file, fq_<name>.c, that defines fq_<name>_policy,
 * and one line of the table fq_policies[] in fq_sched.c (the first is the
 * default), with its declaration below.  The request path (fq_sched.c)
 * does what all policies share -- flow queues, bounded wait (expiry),
 * depth, counters -- and calls these for the rest.  They run under the
 * caller's lock like everything else; an optional one left NULL means
 * "nothing to do".
 */
struct fq_policy {
	const char *name;	/* the word of the "policy" tunable */
	/*
	 * The flow @rq goes to: found in the policy's map, or taken from the
	 * pool with fq_flow_new() and an FQ_FF_MAPPED flag, or, when the pool
	 * is exhausted, &fqs->overflow.  Never NULL.
	 */
	struct fq_flow *(*map)(struct fq_sched *fqs, const struct fq_req *rq);
	/* @fqf, mapped by ->map(), goes back to the pool: drop it from the map. */
	void (*unmap)(struct fq_sched *fqs, struct fq_flow *fqf);
	/* The flow ->map() would give @rq if it exists now, else NULL. */
	struct fq_flow *(*find)(struct fq_sched *fqs, const struct fq_req *rq);
	/*
	 * Optional: set up the policy's state of a new instance.  Called at
	 * create for every policy, not only the current one, since a policy
	 * switch neither allocates nor initialises anything.
	 */
	void (*init)(struct fq_sched *fqs);
	/* Optional: the time on each enqueue and dispatch (sfq re-seeds). */
	void (*tick)(struct fq_sched *fqs, u64 now_ns);
	/* Optional: @rq was just queued on @fqf (cfq/sfq: join the rounds). */
	void (*activate)(struct fq_sched *fqs, struct fq_flow *fqf,
			 const struct fq_req *rq);
	/*
	 * Optional: @rq, still queued on @fqf, goes down out of turn because
	 * its bounded wait expired (cfq/sfq: it costs the flow's credit).
	 */
	void (*expire)(struct fq_sched *fqs, struct fq_flow *fqf,
		       const struct fq_req *rq);
	/*
	 * Optional: whether @fqf, whose first request waited its bounded
	 * wait, is owed service -- has not had its share yet (cfq/sfq: its
	 * credit is for the current round of its class, not a later one,
	 * or a higher class with work queued is what keeps it waiting).
	 * A flow ahead of its share does not expire: its wait starts again.
	 * NULL: every flow is owed.
	 */
	bool (*owed)(const struct fq_sched *fqs, const struct fq_flow *fqf);
	/*
	 * The next request to go down, left queued (on its flow or on the
	 * dispatch batch) for the caller to start, or NULL when nothing may
	 * go now.  Called with requests queued, fewer than depth in flight
	 * and none expired.
	 */
	struct fq_req *(*pick)(struct fq_sched *fqs, u64 now_ns);
	/* Optional: when ->pick() may have something new [ns], or 0. */
	u64 (*next_event)(struct fq_sched *fqs, u64 now_ns);
	/*
	 * A turn is one request (fairness=requests: a credit of 1 x weight
	 * per round, the sfq seed's one request per bucket per round), and a
	 * sync flow that drains as its turn ends is still anticipated.
	 */
	bool one_request_turns;
	bool uses_buckets;	/* maps by "buckets": a change re-queues all */
};

/* The policies, one file each (fq_<name>.c), in the table fq_policies[]. */
extern const struct fq_policy fq_cfq_policy;
extern const struct fq_policy fq_sfq_policy;
extern const struct fq_policy fq_fifo_policy;

/* fq_sched.c: the table of policies, request bookkeeping */
extern const struct fq_policy *const fq_policies[];	/* NULL-terminated */
const struct fq_policy *fq_policy_find(const char *name);
void fq_req_insert(struct fq_sched *fqs, struct fq_req *rq);
u64 fq_charge_ns(const struct fq_sched *fqs, const struct fq_req *rq);
/* (Re)start depth=auto at @seed, priced at the cost model's terms. */
void fq_sched_depth_restart(struct fq_sched *fqs, u32 seed, u32 depth_max);
struct fq_req *fq_oldest(struct fq_sched *fqs);

/* fq_flow.c: flows' memory, the flow table, flows' lists and release */
size_t fq_flows_mem(const struct fq_sched *fqs);
void fq_flows_destroy(struct fq_sched *fqs);
void fq_flows_trim(struct fq_sched *fqs);
struct fq_flow *fq_table_lookup(const struct fq_sched *fqs, u64 key);
struct fq_flow *fq_table_find(struct fq_sched *fqs, u64 key);
void fq_table_add(struct fq_sched *fqs, struct fq_flow *fqf);
void fq_table_del(struct fq_sched *fqs, struct fq_flow *fqf);
struct fq_flow *fq_flow_new(struct fq_sched *fqs, u64 key, u8 flags);
void fq_flow_unmap(struct fq_sched *fqs, struct fq_flow *fqf);
void fq_flow_free(struct fq_sched *fqs, struct fq_flow *fqf);
void fq_flow_unlink(struct fq_sched *fqs, struct fq_flow *fqf);
void fq_flow_release(struct fq_sched *fqs, struct fq_flow *fqf);
void fq_flow_maybe_release(struct fq_sched *fqs, struct fq_flow *fqf);
void fq_flows_reap(struct fq_sched *fqs);
bool fq_flow_dead(const struct fq_sched *fqs, const struct fq_flow *fqf);
void fq_flow_head_init(struct fq_flow *fqf);
void fq_flow_head_update(struct fq_sched *fqs, struct fq_flow *fqf);
void fq_flow_head_restart(struct fq_sched *fqs, struct fq_flow *fqf,
			  u64 now_ns);
u32 fq_flow_expire_scale(const struct fq_flow *fqf);
void fq_flow_mem_clear(struct fq_sched *fqs);

/* fq_cfq.c: one flow per key (cfq's map, fifo's too) */
struct fq_flow *fq_cfq_map(struct fq_sched *fqs, const struct fq_req *rq);
void fq_cfq_unmap(struct fq_sched *fqs, struct fq_flow *fqf);
struct fq_flow *fq_cfq_find(struct fq_sched *fqs, const struct fq_req *rq);

/* fq_drr.c: classes, rounds, anticipation, batches (cfq and sfq) */
void fq_classq_init(struct fq_classq *cq);
bool fq_flow_on_later(const struct fq_sched *fqs, const struct fq_flow *fqf);
void fq_later_leave(struct fq_classq *cq, const struct fq_flow *fqf);
void fq_drr_activate(struct fq_sched *fqs, struct fq_flow *fqf,
		     const struct fq_req *rq);
void fq_drr_charge(struct fq_sched *fqs, struct fq_flow *fqf,
		   const struct fq_req *rq);
struct fq_req *fq_drr_pick(struct fq_sched *fqs, u64 now_ns);
u64 fq_drr_next_event(struct fq_sched *fqs, u64 now_ns);
bool fq_drr_owed(const struct fq_sched *fqs, const struct fq_flow *fqf);
bool fq_drr_behind(const struct fq_sched *fqs, const struct fq_flow *fqf);
void fq_ioprio_split(u16 ioprio, u32 *ci, u32 *level);
u32 fq_level_weight(u32 level);
u32 fq_rq_weight(const struct fq_req *rq, u32 level);
s64 fq_drr_base_allowance(const struct fq_sched *fqs);
u32 fq_drr_turn_reqs(const struct fq_sched *fqs, const struct fq_flow *fqf,
		     const struct fq_req *rq);

/* fq_writes.c: background writeback yields to synchronous I/O */
void fq_writes_enqueue(struct fq_sched *fqs, const struct fq_req *rq);
void fq_writes_done(struct fq_sched *fqs, const struct fq_req *rq);
bool fq_writes_may_queue(struct fq_sched *fqs, const struct fq_req *rq);

/* fq_boost.c: the interactive boost */
void fq_boost_new(struct fq_sched *fqs, struct fq_flow *fqf);
void fq_boost_check(struct fq_sched *fqs, struct fq_flow *fqf,
		    const struct fq_req *rq);
void fq_boost_place(struct fq_sched *fqs, struct fq_flow *fqf);
void fq_boost_account(struct fq_sched *fqs, struct fq_classq *cq,
		      const struct fq_flow *fqf, s64 cost);
struct fq_flow *fq_boost_first(struct fq_sched *fqs, struct fq_classq *cq);
void fq_boost_spend(struct fq_sched *fqs, struct fq_classq *cq,
		    struct fq_flow *fqf, s64 cost);
u32 fq_boost_slots(const struct fq_sched *fqs);
bool fq_boost_reserved(const struct fq_sched *fqs, const struct fq_flow *fqf);
void fq_boost_complete(struct fq_sched *fqs, struct fq_flow *fqf,
		       const struct fq_req *rq, u64 svc_ns);

/* Whether @fqf is boosted now (fq_boost.c). */
static inline bool fq_flow_boosted(const struct fq_sched *fqs,
				   const struct fq_flow *fqf)
{
	return fqf->boost_until > fqs->now_ns;
}

/*
 * Whether @fqf is boosted and its last request went ahead by the boost:
 * anticipated with its reserve of slots (fq_antic.c, fq_drr.c).  A flow
 * boosted among boosted flows only (nobody else earns the boost tokens)
 * is served by its turns and anticipated like any other.
 */
static inline bool fq_flow_lane(const struct fq_sched *fqs,
				const struct fq_flow *fqf)
{
	return (fqf->flags & FQ_FF_LANE) && fq_flow_boosted(fqs, fqf);
}

/* fq_antic.c: think time and the anticipation window */
void fq_antic_enqueue(struct fq_sched *fqs, struct fq_flow *fqf,
		      const struct fq_req *rq);
void fq_antic_complete(struct fq_sched *fqs, struct fq_flow *fqf,
		       const struct fq_req *rq, u64 now_ns);
u64 fq_antic_window(const struct fq_sched *fqs, const struct fq_flow *fqf);
bool fq_antic_served(const struct fq_sched *fqs, const struct fq_flow *fqf,
		     const struct fq_req *rq);
void fq_antic_dispatch(struct fq_sched *fqs, struct fq_flow *fqf,
		       const struct fq_req *rq, u64 now_ns);
bool fq_antic_behind_on(const struct fq_flow *fqf, u64 now_ns);

/* fq_switch.c */
void fq_sched_rebuild(struct fq_sched *fqs);
void fq_sched_switch(struct fq_sched *fqs, const struct fq_policy *pol);

/* fq_tunables.c: one entry per FQ_TUNABLES line, indexed by FQ_TUN_* */
struct fq_tunable {
	const char *name;
	const char *words;	/* FQ_TK_WORD: the words, one space apart */
	/* NULL: store @v in @field; else check and apply (fq_tunables.c) */
	int (*set)(struct fq_sched *fqs, u32 *field, u32 v);
	u16 offset;		/* of the u32 field in struct fq_sched */
	u8 kind;		/* enum fq_tun_kind */
	u32 min, max;		/* numbers: the range */
	u32 def;		/* default (words: the index) */
};

extern const struct fq_tunable fq_tunables[FQ_TUN_COUNT];
void fq_tunables_default(struct fq_sched *fqs);
bool fq_word_eq(const char *val, const char *word);

/* Round @a minus round @b, rounds wrapping (u32). */
static inline s32 fq_round_diff(u32 a, u32 b)
{
	return (s32)(a - b);
}

/* The earlier of two event times, 0 meaning "none". */
static inline u64 fq_time_min(u64 a, u64 b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return a < b ? a : b;
}

/*
 * The bytes @rq counts as, in the counters and in every charge: its own,
 * or FQ_NODATA_BYTES for a dataless request (fq_sched.h).  A cost model
 * learnt from completions (fairness=time) must skip FQ_REQ_NODATA ones:
 * their time is not the time of moving FQ_NODATA_BYTES.
 */
static inline u32 fq_rq_bytes(const struct fq_req *rq)
{
	return (rq->flags & FQ_REQ_NODATA) ? FQ_NODATA_BYTES : rq->bytes;
}

static inline u32 fq_rq_fifo(const struct fq_req *rq)
{
	if (FQ_IOPRIO_CLASS(rq->ioprio) == FQ_CLASS_IDLE)
		return FQ_FIFO_IDLE;
	return (rq->flags & FQ_REQ_SYNC) ? FQ_FIFO_SYNC : FQ_FIFO_ASYNC;
}

/* Requests below, whoever sent them: what the depth limits. */
static inline u32 fq_busy(const struct fq_sched *fqs)
{
	return fqs->inflight + fqs->passing;
}

static inline bool fq_rq_nonidle(const struct fq_req *rq)
{
	return FQ_IOPRIO_CLASS(rq->ioprio) != FQ_CLASS_IDLE;
}

static inline bool fq_flow_idle(const struct fq_flow *fqf)
{
	return !fqf->nr_queued && !fqf->nr_batch && !fqf->inflight;
}

#endif /* FQ_INTERNAL_H */
