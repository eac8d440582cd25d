/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fq_sched.h - the portable fair-queueing core of fairq.
 *
 * One struct fq_sched schedules one device.  The caller embeds a
 * struct fq_req in its own per-I/O data, fills in the public fields,
 * enqueues it, asks the core what to dispatch, and reports completions.
 *
 * Locking: none inside.  Every function here that takes a struct fq_sched
 * must be called with the caller's per-device lock held (a spinlock in
 * fairq.ko, a mutex in the NBD server), except fq_sched_create() and
 * fq_sched_destroy(), which the caller serialises itself,
 * fq_sched_set() of "max_flows" (see fq_sched_set_needs_alloc()), and
 * the flow table's allocation (fq_sched_table_alloc() / _free()).  Flows
 * themselves are allocated under the lock, with fq_env_flow_alloc().
 *
 * Time: the core never reads a clock.  Every call that needs the time
 * takes now_ns, a monotonic time in nanoseconds supplied by the caller.
 *
 * Errors are negative errno values (-EINVAL, -ERANGE, -ENOMEM, -EBUSY).
 */
#ifndef FQ_SCHED_H
#define FQ_SCHED_H

#include "fq_env.h"
#include "fq_tunables_table.h"	/* enum fq_tun_kind */

/* FQ_TUN_<name>: a tunable's index in fq_sched_tunables[] and the like */
#define FQ_TUNABLE(name, ...)	FQ_TUN_##name,
enum fq_tun_id {
#include "fq_tunables_table.h"
	FQ_TUN_COUNT
};
#undef FQ_TUNABLE

/*
 * I/O priority classes, numbered as the kernel's IOPRIO_CLASS_*.  RT is
 * served before BE, BE before IDLE; IDLE only once no RT/BE request has
 * been queued or in flight for the idle grace period (a tunable, see
 * fq_tunables_table.h), and IDLE requests have no
 * fifo_expire deadline.  Within a class a busy flow's share is its weight
 * over the sum of the busy flows' weights.  A request either carries an
 * explicit weight (struct fq_req.weight, 1..FQ_WEIGHT_MAX, e.g. a cgroup's)
 * or has its weight derived from its level (0 = highest):
 * weight = 25 * (8 - level), so level 0 -> 200, level 4 (the default) ->
 * FQ_WEIGHT_DEFAULT = 100, level 7 -> 25: the scale of the kernel's
 * io.weight, where 100 against 400 is a 1:4 share.
 */
enum fq_class {
	FQ_CLASS_NONE = 0,	/* treated as BE at level 4 */
	FQ_CLASS_RT = 1,
	FQ_CLASS_BE = 2,
	FQ_CLASS_IDLE = 3,
};

enum {
	FQ_PRIO_LEVELS = 8,	/* ioprio data 0 (highest) .. 7 */
	FQ_PRIO_COUNT = 3,	/* RT, BE, IDLE */
	FQ_WEIGHT_DEFAULT = 100,	/* weight of BE level 4 */
	FQ_WEIGHT_MAX = 1000,	/* largest explicit weight */
};

/* Build/parse the 16-bit ioprio value the way the kernel does. */
#define FQ_IOPRIO(class, level)	((u16)(((class) << 13) | ((level) & 7)))
#define FQ_IOPRIO_CLASS(p)	((p) >> 13)
#define FQ_IOPRIO_LEVEL(p)	((p) & 7)

/* struct fq_req.flags */
enum {
	FQ_REQ_WRITE = 1u << 0,	/* data goes to the device */
	FQ_REQ_SYNC = 1u << 1,	/* someone waits for it: reads, O_DIRECT/fsync writes */
	/*
	 * Covers a range but moves no data (discard, write-zeroes, secure
	 * erase): counted and charged as FQ_NODATA_BYTES, whatever its
	 * bytes, and never used to learn what moving data costs.
	 */
	FQ_REQ_NODATA = 1u << 2,
	/*
	 * Read-ahead the kernel issued for the task (page cache read-ahead,
	 * a file system's metadata read-ahead): speculative, often in
	 * bursts; it does not make a flow greedy by number (fq_boost.c).
	 */
	FQ_REQ_RAHEAD = 1u << 3,
};

/*
 * What a dataless request (FQ_REQ_NODATA) counts as, in bytes: a 4 KiB
 * write.  Its range says nothing about its cost: on flash and thin
 * devices a discard is a mapping update, about a small write whatever
 * its length, and a range of gigabytes charged as bytes would stall its
 * flow for thousands of turns.  One request of it holds one depth slot
 * like any other, so a storm of them is bounded by depth and shared by
 * the round robin.
 */
enum { FQ_NODATA_BYTES = 4096 };

struct fq_flow;

/* Intrusive doubly linked list node, owned by the core while queued. */
struct fq_node {
	struct fq_node *next;
	struct fq_node *prev;
};

/*
 * struct fq_req - one request as the core sees it.
 *
 * The caller fills in sector, bytes, flags, key, ioprio and weight before
 * fq_sched_enqueue(); the core fills in everything else and owns the
 * node and flow fields from enqueue until fq_sched_complete() returns.
 * The struct stays valid and at the same address for that whole time.
 */
struct fq_req {
	/* set by the caller */
	u64 sector;		/* start [512-byte sectors] */
	u32 bytes;		/* length [bytes], > 0 (FQ_REQ_NODATA: the range, not counted) */
	u32 flags;		/* FQ_REQ_* */
	u64 key;		/* flow key: tgid, pid, cgroup id or uid */
	u16 ioprio;		/* FQ_IOPRIO(class, level); 0 = none */
	/*
	 * 1..FQ_WEIGHT_MAX (larger values count as FQ_WEIGHT_MAX), or 0:
	 * derive it from the level.  The class still comes from ioprio.  An
	 * explicit weight is the flow's from this request on (a change of a
	 * busy flow's weight applies from its next credit); a derived one
	 * only ever raises a busy flow's weight.
	 */
	u16 weight;

	/* set by the core */
	u64 enqueue_ns;		/* when fq_sched_enqueue() saw it [ns] */
	u64 dispatch_ns;	/* when fq_sched_dispatch() returned it [ns] */
	struct fq_flow *flow;	/* owning flow (bucket for sfq) */
	struct fq_node node;	/* flow queue / dispatch batch link */
	struct fq_node fifo;	/* expiry list link (oldest first) */
	u32 state;		/* FQ_RS_*, for the core's own checks */
	u64 seq;		/* enqueue sequence number (enqueue order) */
};

/* Counters kept per flow and for the whole device. */
struct fq_counts {
	u64 enq_reqs, enq_bytes;	/* accepted by fq_sched_enqueue() */
	u64 disp_reqs, disp_bytes;	/* returned by fq_sched_dispatch() */
	u64 done_reqs, done_bytes;	/* reported by fq_sched_complete() */
	u64 errors;			/* completions with status != 0 */
	u64 expired;			/* dispatched because fifo_expire passed */
	u64 wait_ns_sum;		/* enqueue -> dispatch [ns], summed */
	u64 wait_ns_max;		/* enqueue -> dispatch [ns], worst */
	u64 svc_ns_sum;			/* dispatch -> complete [ns], summed */
};

/* One flow as fq_sched_flows() reports it. */
struct fq_flow_info {
	u64 key;		/* flow key (sfq: the bucket index) */
	u16 ioprio;		/* class and level the flow is served at */
	u32 weight;		/* weight it is served at (explicit or from the level) */
	u32 queued;		/* requests waiting [requests] */
	u32 inflight;		/* requests below [requests] */
	struct fq_counts c;
};

/* Whole-device figures as fq_sched_stats() reports them. */
struct fq_stats {
	struct fq_counts c;
	u32 queued;		/* requests waiting in the core */
	u32 inflight;		/* requests dispatched, not yet completed */
	/*
	 * flows (or sfq buckets) taken from the pool now, including drained
	 * ones kept for their round robin turn until the round ends or the
	 * device goes idle, and those of an idle device not freed yet
	 * (fq_sched_reap())
	 */
	u32 flows;
	u32 flows_max;		/* flows that may exist at once (max_flows) */
	u32 flows_spare;	/* freed flows kept for new ones */
	u32 flow_table_chains;	/* chains of the flow table now */
	u64 flow_allocs;	/* flows created, ever */
	u64 flow_alloc_fails;	/* flows the environment had no memory for */
	u64 overflow_enq;	/* requests that went to the overflow flow */
	u64 perturbations;	/* sfq hash seeds drawn */
	u64 policy_switches;	/* successful "policy" changes */
	u64 idle_waits;		/* times anticipation kept the last slot */
	/* drains not waited for: the flow already had its share */
	u64 idle_served;
	/* expired heads of flows ahead of their share: their wait began again */
	u64 expire_deferred;
	/* writeback=yield (fq_writes.c): async writes refused room, cut */
	u64 async_held;
	u64 async_cut;
	/* memory the instance holds: itself, its flows and its table [bytes] */
	u32 mem_bytes;
	/* depth: the limit now, and the depth=auto controller's figures */
	u32 depth_now;		/* requests in flight below at most, now */
	u32 depth_auto;		/* 1: depth is auto */
	u64 depth_changes;	/* changes the controller made */
	u64 depth_epochs;	/* saturated epochs it judged */
	u64 depth_idle_epochs;	/* epochs the demand did not fill the depth */
	u64 depth_reserved_epochs;	/* of depth_epochs: a boost's reserve held work */
	u64 depth_full_ms;	/* time the depth was full, summed [ms] */
	u64 lat_floor_ns;	/* latency floor it learnt [ns], 0 = none yet */
	/* the device cost model, [0] reads, [1] writes; all 0 until it exists */
	u64 cost_a_ns[2];	/* per request [ns] */
	u64 cost_b_ps_per_byte[2];	/* per byte [ps] */
	u64 cost_epochs;	/* saturated epochs fitted */
	/* the interactive boost (fq_boost.c): started, served, and why it ended */
	u64 boost_starts;	/* flows boosted */
	u64 boost_served;	/* requests served by the boost */
	u64 boost_end_time;	/* boosts over by time (boost_ms) */
	u64 boost_end_budget;	/* ... by FQ_BOOST_MAX_SERVED requests served */
	u64 boost_end_kind;	/* ... by an async request or a write */
	u64 boost_end_size;	/* ... by a request larger than 128 KiB */
	u64 boost_end_depth;	/* ... by more than 4 requests outstanding */
};

struct fq_sched;

/*
 * fq_sched_create - allocate a scheduler with every tunable at its default
 * and policy @policy ("cfq", "sfq" or "fifo"; NULL means "cfq").
 * @seed: initial PRNG seed (sfq perturbation); any value, fixed in tests.
 * Returns the instance or NULL (unknown policy or no memory).
 */
struct fq_sched *fq_sched_create(const char *policy, u64 seed);

/*
 * fq_sched_seed_depth - the caller's estimate of the lower device's own
 * queue depth (its nr_requests or hardware queue depth).  depth=auto
 * starts its search at the smaller of that and FQ_SCHED_DEPTH_SEED,
 * clamped to [1, depth_max]: a deep seed (virtio's 256) learns its latency
 * floor with the device's queue already full, and its epochs (8 + 2 x
 * depth completions) are long on a slow disk: from 32 a 500 IOPS disk
 * takes 1.5-2 s to come down, and for that long a new device passes 32
 * requests into the device's FIFO, where they cannot be ordered.  From
 * 4 the first epochs take 60 ms there, and where depth pays the climb
 * doubles its step (4 -> 5 -> 7 -> 11 -> 19 -> 35) with epochs of 5 ms on
 * a fast device.  Without a call
 * the seed is FQ_SCHED_DEPTH_SEED.  While depth is auto the controller
 * restarts from the seed; a fixed depth is left alone.
 */
void fq_sched_seed_depth(struct fq_sched *fqs, u32 lower_depth);

enum { FQ_SCHED_DEPTH_SEED = 4 };	/* seed of depth=auto by default */

/*
 * fq_sched_destroy - free the instance.  Requests still queued must have
 * been taken back with fq_sched_drain() first, and nothing may be in
 * flight; the core warns once and leaks nothing of its own otherwise.
 */
void fq_sched_destroy(struct fq_sched *fqs);

/*
 * fq_sched_enqueue - queue @rq at time @now_ns.  Never fails: when
 * max_flows flows exist, or fq_env_flow_alloc() has no memory, and no
 * drained flow can be reclaimed, the request goes to the shared overflow
 * flow.  A new flow may make the flow table want to grow
 * (fq_sched_table_want()).
 */
void fq_sched_enqueue(struct fq_sched *fqs, struct fq_req *rq, u64 now_ns);

/*
 * fq_sched_may_queue - true when @rq (its key filled in) may be queued
 * now under the "max_queued" bound; the core never refuses an enqueue
 * itself, so a caller that wants the bound asks first and, on false,
 * holds the submitter back (waits for dispatch to take some, or fails
 * it) and asks again.  False when max_queued requests are queued, or
 * when at least half of them are and @rq's flow already has its share
 * (max_queued over the flows that exist), so one runaway flow cannot
 * keep the others out; and, while synchronous I/O is active, for an
 * async write when a few async writes are queued already (fq_writes.c).
 * Queued means waiting, not in flight.
 */
bool fq_sched_may_queue(struct fq_sched *fqs, const struct fq_req *rq);

/*
 * fq_sched_async_piece - how many of an async write's @bytes the caller
 * should queue as its first piece now [bytes, whole pages]: @bytes (send
 * it whole) unless synchronous I/O is active and the cost model prices
 * the write above two small reads; then a piece the model prices about
 * that, so a sync request that finds one ahead of it in the device waits
 * that long, not a long write's time.  The caller cuts the write and
 * asks again for the rest.
 */
u32 fq_sched_async_piece(struct fq_sched *fqs, u32 bytes);

/* fq_sched_writeback_yields - true when writeback=yield is in force. */
bool fq_sched_writeback_yields(const struct fq_sched *fqs);

/*
 * fq_sched_sync_waiting - true while a sync request is queued or in
 * flight: a caller that asks fq_sched_async_piece() only while sync I/O
 * is about must ask while this holds, however long ago the request came.
 */
bool fq_sched_sync_waiting(const struct fq_sched *fqs);

/*
 * fq_sched_queue_full - true when max_queued requests are queued: no
 * request may be queued, whatever its flow (fq_sched_may_queue()'s first
 * reason).  A caller that holds submitters back can wake one of them per
 * request dispatched while this is why they wait.
 */
bool fq_sched_queue_full(const struct fq_sched *fqs);

/*
 * fq_sched_dispatch - the next request to send down, or NULL when nothing
 * may go now: nothing queued, "depth" requests already in flight, the
 * core is holding the turn for an idle sync flow (anticipation), or only
 * IDLE-class work is queued within the idle grace period of other work.  A
 * returned request counts as in flight until fq_sched_complete().  After
 * a NULL, the caller asks fq_sched_next_event() when to try again.
 *
 * Call it in a loop until NULL: for cfq and sfq the core picks a batch of
 * up to depth - inflight requests (at most 64) at once and returns them
 * in sector order, so the caller can submit them under one plug.  Expired
 * requests come first, oldest first: those that have been first in their
 * flow's queue for fifo_expire_*_ms (a flow's own backlog does not count).
 */
struct fq_req *fq_sched_dispatch(struct fq_sched *fqs, u64 now_ns);

/*
 * fq_sched_complete - @rq, returned earlier by fq_sched_dispatch(), has
 * completed with @status (0 or a negative errno) at @now_ns.  The core
 * drops every reference to @rq before returning; the caller may free it.
 * Call fq_sched_dispatch() afterwards: a slot below has opened.
 */
void fq_sched_complete(struct fq_sched *fqs, struct fq_req *rq, int status,
		       u64 now_ns);

/*
 * Pass-through: a caller may send requests down without the core while
 * the disk has room (fairq.ko's lock-free path, fairq_io.c).  Those hold
 * depth slots the core must not hand out again, and they are RT/BE work
 * that the IDLE class must wait behind.
 *
 * fq_sched_pass_depth - how many requests may be in flight below, of both
 * kinds, while the caller passes requests through; 0 when it must not
 * (requests are queued, batched or held for the IDLE class, or the
 * "fastpath" tunable is off, or a flow behind its class's debtors is
 * anticipated and they are held for it: fq_drr_behind(), including a
 * debtor with nothing queued at the moment, whose next request the core
 * would hold; or, with depth=auto, requests passed through were still
 * below when the core took over and the controller has not closed an
 * epoch it saw whole since, unless the device went idle: a demand near
 * the depth would otherwise flip between the two modes and leave the
 * controller blind).  Else it is
 * depth_now, or depth_now - 1 while a flow is anticipated (the slot
 * anticipation keeps for it, or the reserve of a boosted flow, fq_boost.c;
 * the anticipated flow's own request then comes through the core and
 * gets it).  Valid until the next call into
 * the core; pass-through requests are never IDLE-class.
 *
 * fq_sched_pass - the caller's count of pass-through requests in flight
 * at @now_ns (never fewer than there are: a count that runs ahead only
 * keeps a slot empty), before any fq_sched_dispatch() while it has
 * any.  fq_sched_dispatch() keeps @inflight plus its own in flight at
 * most depth.  @seen: some went down since the last call, even if none
 * is in flight now.  Either means RT/BE work existed until @now_ns, so the
 * IDLE class waits its idle grace from then.  They count towards the
 * depth being full (depth_full_ms), but their completions teach neither
 * the depth controller nor the cost model, which learn from saturated
 * stretches: an epoch of either during which any were in flight or went
 * down is not judged (fq_depth_unseen(), fq_cost_unseen()), since its
 * rate would miss their work.  They are in no counter of
 * fq_sched_stats(): the caller counts them.  The device is idle only
 * when none is below either: then drained flows are released, as after
 * the last completion of the core's own.
 */
u32 fq_sched_pass_depth(struct fq_sched *fqs, u64 now_ns);
void fq_sched_pass(struct fq_sched *fqs, u32 inflight, bool seen, u64 now_ns);

/*
 * fq_sched_next_event - absolute time [ns] at which the caller should
 * call fq_sched_dispatch() even if no enqueue or completion happens
 * (anticipation running out, idle_grace ending, an sfq perturbation), or
 * 0 when no timer is wanted.  Valid until the next call into the core.
 */
u64 fq_sched_next_event(struct fq_sched *fqs, u64 now_ns);

/*
 * fq_sched_drain - take back one queued (not in-flight) request, oldest
 * first, or NULL when none is queued.  Used on teardown so that nothing
 * queued is lost: the caller fails or resubmits what it gets.
 */
struct fq_req *fq_sched_drain(struct fq_sched *fqs);

/*
 * Tunables, by name.  Values are decimal text (a trailing '\n' is
 * accepted, anything else trailing is -EINVAL) or, for the word tunables
 * ("policy", "fairness"), one of their words.  Names, ranges, defaults
 * and kinds: the one list, fq_tunables_table.h (FQ_TUN_<name> indexes
 * fq_sched_tunables[]); as a table: docs/INTERFACE.md, "Tunables".
 *
 * fq_sched_set() returns 0, -EINVAL (unknown name, not a number, trailing
 * garbage, not a power of two) or -ERANGE (out of range), -ENOMEM; on any
 * error nothing changes.  A policy change keeps every queued request
 * queued (none lost, none starved: the first request of each flow starts
 * its bounded wait again at the switch).  fq_sched_get() writes the value and '\n' into @buf
 * (NUL-terminated) and returns its length, or -EINVAL for an unknown name
 * (-ERANGE if @len is too small for the value, '\n' and NUL).
 *
 * "max_flows" (kind FQ_TK_ALLOC) bounds the flows that exist: a lower
 * bound frees the spare flows at once and leaves existing flows until
 * they drain.  "policy", "fairness" and, under sfq, "buckets" re-queue every queued
 * request in enqueue order.
 */
int fq_sched_set(struct fq_sched *fqs, const char *name, const char *val);
int fq_sched_get(struct fq_sched *fqs, const char *name, char *buf,
		 size_t len);

/*
 * fq_sched_set_needs_alloc - true when setting @name bounds or frees
 * memory (kind FQ_TK_ALLOC: "max_flows"): fairq.ko takes it only while
 * powered off.
 */
bool fq_sched_set_needs_alloc(const char *name);

/* The tunable names, NULL-terminated, in table order (FQ_TUN_*). */
extern const char *const fq_sched_tunables[];

/* fq_sched_stats - fill @st with whole-device figures. */
void fq_sched_stats(struct fq_sched *fqs, struct fq_stats *st);

/*
 * fq_sched_flows - fill up to @max entries of @out with the existing
 * flows, busiest first (most bytes dispatched, then lowest key); returns
 * how many.  It visits the flows that exist, not the pool: its time is
 * O(flows), whatever max_flows is.
 */
unsigned int fq_sched_flows(struct fq_sched *fqs, struct fq_flow_info *out,
			    unsigned int max);

/*
 * The same list in steps, for a caller that drops its lock between them
 * (fairq.ko: interrupts stay off for one step, not for every flow):
 *
 *	fq_sched_flows_begin(fqs, &w, out, max);	(under the lock)
 *	while (fq_sched_flows_step(fqs, &w, 256))	(each under the lock)
 *		;					(lock dropped here)
 *	w.n entries of out are filled, busiest first.
 *
 * Each step visits at most @budget flows and returns true while more
 * remain.  Every flow that exists for the whole walk is visited once; one
 * freed meanwhile may be listed as it was, one created meanwhile may be
 * missed.  One walk at a time per instance: beginning another ends an
 * earlier one (its next step returns false with what it has).  The
 * walk holds no flow across steps, so flows may come and go between them.
 */
struct fq_flows_walk {
	struct fq_flow_info *out;	/* the caller's array, max entries */
	unsigned int max;
	unsigned int n;		/* entries of out filled, busiest first */
	unsigned int visited;	/* flows visited so far */
	u32 gen;		/* the walk's stamp (fq_stats.c) */
	bool done;
};

void fq_sched_flows_begin(struct fq_sched *fqs, struct fq_flows_walk *w,
			  struct fq_flow_info *out, unsigned int max);
bool fq_sched_flows_step(struct fq_sched *fqs, struct fq_flows_walk *w,
			 unsigned int budget);

/* Bytes of one flow, what fq_env_flow_alloc() is asked for. */
size_t fq_sched_flow_size(void);

/*
 * The flow table: cfq (and fifo) find a flow by key in it, sfq a bucket
 * by its index.  It starts with 2^6 chains and should have about one per
 * flow that exists, up to max_flows: it doubles when the flows outgrow
 * it, and halves (down to two chains per flow, not under 2^6) once they
 * are fewer than an eighth of its chains.  A new table is an allocation,
 * so the core never makes one itself; the caller does, outside its lock:
 *
 *	bits = fq_sched_table_want(fqs);		(under the lock; 0: fine)
 *	t = fq_sched_table_alloc(bits);			(no lock; may sleep)
 *	t = fq_sched_table_swap(fqs, t);		(under the lock)
 *	fq_sched_table_free(t);				(no lock)
 *	do {
 *		more = fq_sched_table_rehash(fqs, budget, &t);	(under the lock)
 *		fq_sched_table_free(t);			(no lock)
 *	} while (more);
 *
 * fq_sched_table_swap() installs @t if it is bigger than the table in
 * use, or smaller and still at least one chain per flow, and no rehash is
 * under way, and returns NULL; else @t, not wanted any more.  The flows
 * then move from the old table, chain by chain: fq_sched_table_rehash()
 * looks at @budget chains or flows at most and returns whether more are
 * left; the call that empties the old table hands it back in *@done, to
 * free.  Meanwhile a key is looked up in both, and no other resize is
 * wanted.  Until the caller acts, chains are only longer (or memory is
 * held longer): nothing fails.  fq_sched_table_resize() does it all at
 * once, for a caller whose lock allows allocation (the host programs); 0
 * or -ENOMEM.
 */
struct fq_table;
u32 fq_sched_table_want(const struct fq_sched *fqs);
struct fq_table *fq_sched_table_alloc(u32 bits);
struct fq_table *fq_sched_table_swap(struct fq_sched *fqs, struct fq_table *t);
bool fq_sched_table_rehash(struct fq_sched *fqs, u32 budget,
			   struct fq_table **done);
void fq_sched_table_free(struct fq_table *t);
int fq_sched_table_resize(struct fq_sched *fqs);

/*
 * Reaping: when the device goes idle (fq_sched_complete(),
 * fq_sched_pass()) its drained flows are due back to the pool.  The
 * core only sets them aside then, in a number of steps that does not
 * grow with the flows, since that completion may run in hard interrupt
 * context; they are dead from then on (found by key no more).  Freeing
 * them is the caller's, from a context where that may take a while:
 *
 *	if (fq_sched_reap_want(fqs))		(under the lock, after a call)
 *		... schedule a work item, which repeats, lock by lock:
 *	more = fq_sched_reap(fqs, budget);	(under the lock)
 *
 * fq_sched_reap() frees at most @budget flows and returns whether more
 * are left.  The core's own enqueue and dispatch free a few too
 * (FQ_CHORE_STEPS), so a caller that never reaps still gets them back
 * as it goes on.
 */
bool fq_sched_reap_want(const struct fq_sched *fqs);
bool fq_sched_reap(struct fq_sched *fqs, u32 budget);

#endif /* FQ_SCHED_H */
