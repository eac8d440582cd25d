/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fairq_trace.h - fairq's trace events, /sys/kernel/tracing/events/fairq/.
 *
 * A bio's life in fairq (fairq_io.c): queued, dispatched, completed; and
 * the core's decisions, reported through the hooks of sched/fq_env.h,
 * which maps them here: a change of the depth, an interactive boost's
 * start and end, an anticipation window.  Every event names the device
 * (its configfs and disk name); flows are the core's keys (tgid, pid,
 * cgroup id or uid by classify).  The fields and how to read them:
 * man fairq(4), TRACEPOINTS.
 *
 * Each event is a static key: off, a call site costs a no-op and its
 * arguments are loads the compiler keeps inside the branch.  What costs
 * more (the fast path's classification and clock read) is done only
 * under trace_fairq_*_enabled() (fairq_io.c).
 *
 * Built out of the kernel tree: define_trace.h includes this file again
 * as "./fairq_trace.h", which the -I$(src)/drivers that Kbuild gives
 * every object finds; fairq_trace.c defines CREATE_TRACE_POINTS.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM fairq

#if !defined(_FAIRQ_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _FAIRQ_TRACE_H

#include <linux/blkdev.h>
#include <linux/tracepoint.h>

struct fairq_dev;
struct fq_req;
struct fq_sched;

/* the names user space sees for the enums the events print */
TRACE_DEFINE_ENUM(FQ_CLASS_NONE);
TRACE_DEFINE_ENUM(FQ_CLASS_RT);
TRACE_DEFINE_ENUM(FQ_CLASS_BE);
TRACE_DEFINE_ENUM(FQ_CLASS_IDLE);
TRACE_DEFINE_ENUM(FQ_DEPTH_WHY_SET);
TRACE_DEFINE_ENUM(FQ_DEPTH_WHY_START);
TRACE_DEFINE_ENUM(FQ_DEPTH_WHY_TRY);
TRACE_DEFINE_ENUM(FQ_DEPTH_WHY_HOLD);
TRACE_DEFINE_ENUM(FQ_BOOST_END_TIME);
TRACE_DEFINE_ENUM(FQ_BOOST_END_BUDGET);
TRACE_DEFINE_ENUM(FQ_BOOST_END_KIND);
TRACE_DEFINE_ENUM(FQ_BOOST_END_SIZE);
TRACE_DEFINE_ENUM(FQ_BOOST_END_DEPTH);

#define fairq_trace_class(c)					\
	__print_symbolic(c, { FQ_CLASS_NONE, "none" },		\
			 { FQ_CLASS_RT, "rt" },			\
			 { FQ_CLASS_BE, "be" },			\
			 { FQ_CLASS_IDLE, "idle" })

/*
 * A bio accepted: queued in the core (path=core), or sent straight down
 * by the lock-free fast path (path=pass).  class/level: the bio's I/O
 * priority, none when it has none (the core serves it as be/4); op: R
 * or W, D for one without data (discard, write-zeroes, secure erase),
 * then S if synchronous, A if read-ahead.  bytes, here and below, as the
 * core counts them: FQ_NODATA_BYTES for a bio without data.
 */
TRACE_EVENT(fairq_queue,
	TP_PROTO(const struct fairq_dev *fd, const struct fq_req *rq, bool pass),
	TP_ARGS(fd, rq, pass),
	TP_STRUCT__entry(
		__array(char, name, DISK_NAME_LEN)
		__field(u64, flow)
		__field(u64, sector)
		__field(u32, bytes)
		__array(char, op, 4)
		__field(u8, class)
		__field(u8, level)
		__field(bool, pass)
	),
	TP_fast_assign(
		memcpy(__entry->name, fd->name, DISK_NAME_LEN);
		__entry->flow = rq->key;
		__entry->sector = rq->sector;
		__entry->bytes = fairq_trace_bytes(rq);
		fairq_trace_op(__entry->op, rq->flags);
		__entry->class = FQ_IOPRIO_CLASS(rq->ioprio);
		__entry->level = FQ_IOPRIO_LEVEL(rq->ioprio);
		__entry->pass = pass;
	),
	TP_printk("%s flow=%llu class=%s/%u op=%s sector=%llu bytes=%u path=%s",
		  __entry->name, __entry->flow, fairq_trace_class(__entry->class),
		  __entry->level, __entry->op, __entry->sector, __entry->bytes,
		  __entry->pass ? "pass" : "core")
);

/* The core let a queued bio go down after wait_ns in its queue. */
TRACE_EVENT(fairq_dispatch,
	TP_PROTO(const struct fairq_dev *fd, const struct fq_req *rq),
	TP_ARGS(fd, rq),
	TP_STRUCT__entry(
		__array(char, name, DISK_NAME_LEN)
		__field(u64, flow)
		__field(u64, sector)
		__field(u64, wait_ns)
		__field(u32, bytes)
	),
	TP_fast_assign(
		memcpy(__entry->name, fd->name, DISK_NAME_LEN);
		__entry->flow = rq->key;
		__entry->sector = rq->sector;
		__entry->wait_ns = rq->dispatch_ns - rq->enqueue_ns;
		__entry->bytes = fairq_trace_bytes(rq);
	),
	TP_printk("%s flow=%llu sector=%llu bytes=%u wait_ns=%llu",
		  __entry->name, __entry->flow, __entry->sector, __entry->bytes,
		  __entry->wait_ns)
);

/*
 * A bio completed at @now_ns: wait_ns it waited in fairq (0 on the fast
 * path), svc_ns it was below, error its status as an errno (0 = success).
 */
TRACE_EVENT(fairq_complete,
	TP_PROTO(const struct fairq_dev *fd, const struct fq_req *rq, u64 now_ns,
		 int error, bool pass),
	TP_ARGS(fd, rq, now_ns, error, pass),
	TP_STRUCT__entry(
		__array(char, name, DISK_NAME_LEN)
		__field(u64, flow)
		__field(u64, sector)
		__field(u64, wait_ns)
		__field(u64, svc_ns)
		__field(u32, bytes)
		__field(int, error)
		__field(bool, pass)
	),
	TP_fast_assign(
		memcpy(__entry->name, fd->name, DISK_NAME_LEN);
		__entry->flow = rq->key;
		__entry->sector = rq->sector;
		__entry->wait_ns = rq->dispatch_ns - rq->enqueue_ns;
		__entry->svc_ns = now_ns > rq->dispatch_ns ? now_ns - rq->dispatch_ns : 0;
		__entry->bytes = fairq_trace_bytes(rq);
		__entry->error = error;
		__entry->pass = pass;
	),
	TP_printk("%s flow=%llu sector=%llu bytes=%u wait_ns=%llu svc_ns=%llu error=%d path=%s",
		  __entry->name, __entry->flow, __entry->sector, __entry->bytes,
		  __entry->wait_ns, __entry->svc_ns, __entry->error,
		  __entry->pass ? "pass" : "core")
);

/*
 * The depth in force (requests in flight below at most) went from old to
 * new; why: set (the depth tunable), start (depth=auto began at its
 * seed), try (a move of depth=auto's search), hold (back to the depth it
 * holds).  fq_env_trace_depth(): no event when nothing changed, nor
 * while the core instance is being made (old 0).
 */
TRACE_EVENT_CONDITION(fairq_depth,
	TP_PROTO(const struct fq_sched *fqs, u32 old, u32 new, int why),
	TP_ARGS(fqs, old, new, why),
	TP_CONDITION(old && old != new),
	TP_STRUCT__entry(
		__array(char, name, DISK_NAME_LEN)
		__field(u32, old)
		__field(u32, new)
		__field(int, why)
	),
	TP_fast_assign(
		fairq_trace_name(__entry->name, fqs);
		__entry->old = old;
		__entry->new = new;
		__entry->why = why;
	),
	TP_printk("%s old=%u new=%u why=%s", __entry->name, __entry->old,
		  __entry->new,
		  __print_symbolic(__entry->why,
				   { FQ_DEPTH_WHY_SET, "set" },
				   { FQ_DEPTH_WHY_START, "start" },
				   { FQ_DEPTH_WHY_TRY, "try" },
				   { FQ_DEPTH_WHY_HOLD, "hold" }))
);

/* A new flow is boosted (sched/fq_boost.c): served ahead of the bulk. */
TRACE_EVENT(fairq_boost_start,
	TP_PROTO(const struct fq_sched *fqs, u64 key),
	TP_ARGS(fqs, key),
	TP_STRUCT__entry(
		__array(char, name, DISK_NAME_LEN)
		__field(u64, flow)
	),
	TP_fast_assign(
		fairq_trace_name(__entry->name, fqs);
		__entry->flow = key;
	),
	TP_printk("%s flow=%llu", __entry->name, __entry->flow)
);

/*
 * A flow's boost ended after it served @served requests; why: time
 * (boost_ms), budget (FQ_BOOST_MAX_SERVED), kind (async or write), size
 * (over 128 KiB), depth (over 4 outstanding): the stats' boost_end_*.
 */
TRACE_EVENT(fairq_boost_end,
	TP_PROTO(const struct fq_sched *fqs, u64 key, int why, u32 served),
	TP_ARGS(fqs, key, why, served),
	TP_STRUCT__entry(
		__array(char, name, DISK_NAME_LEN)
		__field(u64, flow)
		__field(int, why)
		__field(u32, served)
	),
	TP_fast_assign(
		fairq_trace_name(__entry->name, fqs);
		__entry->flow = key;
		__entry->why = why;
		__entry->served = served;
	),
	TP_printk("%s flow=%llu why=%s served=%u", __entry->name, __entry->flow,
		  __print_symbolic(__entry->why,
				   { FQ_BOOST_END_TIME, "time" },
				   { FQ_BOOST_END_BUDGET, "budget" },
				   { FQ_BOOST_END_KIND, "kind" },
				   { FQ_BOOST_END_SIZE, "size" },
				   { FQ_BOOST_END_DEPTH, "depth" }),
		  __entry->served)
);

/*
 * The flow anticipation waits for drained (sched/fq_antic.c): its turn
 * is kept for it for at most wait_ns.  No event for a window of 0.
 */
TRACE_EVENT_CONDITION(fairq_antic,
	TP_PROTO(const struct fq_sched *fqs, u64 key, u64 wait_ns),
	TP_ARGS(fqs, key, wait_ns),
	TP_CONDITION(wait_ns),
	TP_STRUCT__entry(
		__array(char, name, DISK_NAME_LEN)
		__field(u64, flow)
		__field(u64, wait_ns)
	),
	TP_fast_assign(
		fairq_trace_name(__entry->name, fqs);
		__entry->flow = key;
		__entry->wait_ns = wait_ns;
	),
	TP_printk("%s flow=%llu wait_ns=%llu", __entry->name, __entry->flow,
		  __entry->wait_ns)
);

#endif /* _FAIRQ_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE fairq_trace
#include <trace/define_trace.h>
