// SPDX-License-Identifier: GPL-2.0
/*
 * fairq_io.c - the I/O path: submit_bio, the sched core, dispatch to the
 * lower device, completion, and the work item and timer that keep
 * dispatch going.
 *
 * A data bio is cloned onto the lower device at submit time (so memory
 * is taken in the submitter's context), queued in the core, and the
 * clone goes down when the core picks it.  Discard, write-zeroes and
 * secure erase carry no data but occupy the lower device: they are queued
 * as their flow's I/O too (FQ_REQ_NODATA: charged as a 4 KiB write), so
 * they count against depth and take turns.  Only empty flushes go
 * straight down: see fairq_sched_bio().
 *
 * Bios are only ever submitted after fd->lock is dropped: dispatch
 * collects them in a bio_list under the lock (dm-delay's habit).
 *
 * Each submitter pays only for its own bio: submit_bio sends its own
 * clone down inline if the core lets it go at once, and hands whatever
 * else the core let go (other flows' clones) to the work item through
 * fd->deferred.  So a reader never sleeps in the lower device's tag
 * allocation or writeback throttling for a writer's bio.  Completions
 * and the timer only queue the work item.
 *
 * Pass-through.  While the disk has room -- nothing queued in the core,
 * fewer than its depth below, no flow anticipated beyond the one slot
 * anticipation keeps, none held for as behind its class's debtors,
 * nothing held for the IDLE class (fq_sched_pass_depth()) -- fd->pass is set and a bio goes straight
 * down from submit_bio with no fd->lock, no clock read and no core
 * call: it takes a depth slot (fd->slots, which counts the core's own
 * in flight too, bounded by fd->pass_depth) and returns it at
 * completion.  The
 * first bio that finds no token, or is IDLE-class (only the core knows
 * when RT/BE work leaves it room), or is larger than
 * FAIRQ_PASS_MAX_BYTES (the core must charge it), takes fd->lock, clears fd->pass and
 * is queued in the core, like every bio after it; the core counts the
 * slots passed bios still hold as in flight (fq_sched_pass()).  Pass-through comes
 * back once the core is empty and there is room (fairq_pass_update(),
 * after completions and dispatch), and with depth=auto not before the
 * controller has seen an epoch whole (fq_sched_pass_depth()).  Its completions feed neither the
 * depth=auto controller nor the cost model, which learn from saturated
 * stretches; an epoch of theirs with passed bios in it is not judged
 * (it would miss their work: fq_sched_pass()).  Its bios are counted per
 * CPU (fairq_pass_figures()).
 *
 * No bio slips past the switch: what is below never exceeds the depth
 * in force when it went down.  Every bio below holds a slot.  A
 * submitter takes one with a compare-and-exchange from n to n + 1 when
 * n is below pass_depth, then looks at fd->pass and pass_depth again and
 * keeps the slot only if pass-through is still on and n + 1 is within
 * that depth; the switch clears fd->pass, then reads fd->slots, each
 * side with a full barrier between (the store-buffer pattern).  Either
 * the submitter sees the switch and gives its slot back, or the switch
 * counts the slot.  The core hands out only slots that are free of
 * both.  A submitter between its slot and its second look holds a slot
 * it may give back a moment later: that can only keep another bio out
 * meanwhile, never let one more in.
 */
#include "fairq.h"
#include "fairq_trace.h"

#include <linux/blk-cgroup.h>
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/ioprio.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>

/*
 * Larger bios never take the fast path.  It saves a lock, a clock read
 * and the core's bookkeeping per bio, which matters for small random I/O
 * and not per byte at this size; and what it passes is charged to no
 * flow: one uncharged 1 MiB read is 250 ms of a 4 MiB/s disk's time, and
 * on a throttle that bills a request's bytes after it (QEMU's) that time
 * lands on the scheduled requests after it too.  The cost model would
 * take it for their own and price every request several times too high,
 * and a small reader behind the large one would lose most of its share.
 */
#define FAIRQ_PASS_MAX_BYTES	(64 * 1024)

/*
 * Nor, with writeback=yield, does an async write while sync I/O is
 * active (a sync bio within FAIRQ_SYNC_RECENT, or one the core holds):
 * the core then holds background writeback back and cuts it
 * (sched/fq_writes.c), which it can do only to writes it sees.  A
 * second, the default of fifo_expire_async_ms that the core's own window
 * is; a jiffies stamp, as the fast path reads no clock.
 */
#define FAIRQ_SYNC_RECENT	HZ

/* no closer than this: a core asking for "now" must not storm the timer */
#define FAIRQ_TIMER_MIN_NS	(20 * NSEC_PER_USEC)
/* retry period if the core ever holds requests with no way forward */
#define FAIRQ_STALL_POLL_NS	(10 * NSEC_PER_MSEC)

/* Raise the high-water mark of what is below to @busy (racy, for stats). */
static void fairq_note_busy(struct fairq_dev *fd, unsigned int busy)
{
	if (unlikely(busy > READ_ONCE(fd->inflight_max)))
		WRITE_ONCE(fd->inflight_max, busy);
}

/*
 * The core wants a bigger or smaller flow table, or has the flows of an
 * idle device to free: fairq_table_work().
 */
static void fairq_table_check(struct fairq_dev *fd)
{
	if (unlikely(fq_sched_table_want(fd->fqs) ||
		     fq_sched_reap_want(fd->fqs)))
		queue_work(system_unbound_wq, &fd->table_work);
}

/*
 * Tell the core how many slots passed bios hold (those not its own), and
 * return all slots taken; @seen: bios passed since it was told last
 * (fd->pass_used).  Before every fq_sched_dispatch().
 */
static unsigned int fairq_pass_sync(struct fairq_dev *fd, bool seen, u64 now_ns)
{
	unsigned int taken = atomic_read(&fd->slots);
	unsigned int passing = taken - min(taken, fd->nr_inflight);
	bool told = fd->pass_told;

	lockdep_assert_held(&fd->lock);

	fq_sched_pass(fd->fqs, passing, seen, now_ns);
	/* it counts them busy until told otherwise: fairq_pass_put() */
	WRITE_ONCE(fd->pass_told, passing != 0);
	/* the last passed bios are gone: the device may be idle, flows to free */
	if ((told || seen) && !passing)
		fairq_table_check(fd);
	return taken;
}

/* Scheduling mode from now on: every bio goes through the core. */
static void fairq_pass_stop(struct fairq_dev *fd, u64 now_ns)
{
	bool seen = false;

	lockdep_assert_held(&fd->lock);

	if (fd->pass) {
		WRITE_ONCE(fd->pass, false);
		/* pairs with the token's cmpxchg and with fairq_pass_put() */
		smp_mb();
		fd->pass_stops++;
		seen = READ_ONCE(fd->pass_used);
	}
	fairq_pass_sync(fd, seen, now_ns);
}

/*
 * Pass-through on when the disk has room, or its depth refreshed while
 * it is on (the depth may have changed).  The core must be empty, which
 * fq_sched_pass_depth() checks, and what is below fewer than that depth.
 */
static void fairq_pass_update(struct fairq_dev *fd, u64 now_ns)
{
	unsigned int depth;

	lockdep_assert_held(&fd->lock);

	if (!fd->running)
		return;
	depth = fq_sched_pass_depth(fd->fqs, now_ns);
	if (fd->pass) {
		WRITE_ONCE(fd->pass_depth, depth);
		return;
	}
	if (atomic_read(&fd->slots) >= depth)
		return;
	WRITE_ONCE(fd->pass_used, false);
	WRITE_ONCE(fd->pass_depth, depth);
	/* pairs with smp_load_acquire() in fairq_pass_get() */
	smp_store_release(&fd->pass, true);
}

/*
 * A slot came back (fd->lock held): refill from the work item, never
 * inline (this may be hard irq, or a lower driver's thread that our
 * submission could wait on), or resume pass-through if nothing waits.
 * Flows may have gone (the device went idle), and bios that pass make
 * no core call: a table grown for a burst shrinks now, not at the next
 * queued bio.
 */
static void fairq_slot_freed(struct fairq_dev *fd, u64 now_ns)
{
	lockdep_assert_held(&fd->lock);

	fairq_table_check(fd);
	if (fd->nr_queued)
		queue_work(fd->wq, &fd->dispatch_work);
	else
		fairq_pass_update(fd, now_ns);
}

/* A tunable changed (fd->lock held): schedule until the work item looks. */
void fairq_pass_refresh(struct fairq_dev *fd)
{
	fairq_pass_stop(fd, ktime_get_ns());
}

static void fairq_arm_timer(struct fairq_dev *fd, u64 next_ns, u64 now_ns)
{
	lockdep_assert_held(&fd->lock);

	next_ns = max(next_ns, now_ns + FAIRQ_TIMER_MIN_NS);
	/*
	 * An earlier timer re-evaluates anyway.  Queued, not active: while
	 * the callback runs on another CPU the timer is active but will not
	 * fire again, and the work it queued may already have run here.
	 */
	if (hrtimer_is_queued(&fd->timer) && fd->timer_ns <= next_ns)
		return;
	fd->timer_ns = next_ns;
	hrtimer_start(&fd->timer, ns_to_ktime(next_ns), HRTIMER_MODE_ABS);
}

/*
 * Room in the core for @n more requests (0: for every waiter, as when
 * the core was drained or max_queued raised): that many waiting in line
 * re-check, and all of those held back by their flow's share.
 */
void fairq_wake_room(struct fairq_dev *fd, unsigned int n)
{
	lockdep_assert_held(&fd->lock);
	/* they re-check under fd->lock, where they were queued */
	if (waitqueue_active(&fd->room_wait))
		wake_up_nr(&fd->room_wait, n);
	/* (the same) */
	if (waitqueue_active(&fd->share_wait))
		wake_up(&fd->share_wait);
}

/* Move everything the core lets go now onto @list; re-arm the timer. */
static void fairq_collect(struct fairq_dev *fd, u64 now_ns, struct bio_list *list)
{
	unsigned int taken, n = 0;
	struct fq_req *rq;
	u64 next_ns;

	lockdep_assert_held(&fd->lock);

	taken = fairq_pass_sync(fd, false, now_ns);
	while ((rq = fq_sched_dispatch(fd->fqs, now_ns))) {
		struct fairq_io *fio = container_of(rq, struct fairq_io, rq);

		trace_fairq_dispatch(fd, rq);
		fd->nr_queued--;
		fd->nr_inflight++;
		bio_list_add(list, &fio->clone);
		n++;
	}
	if (n) {
		atomic_add(n, &fd->slots);
		/* what the core counted: the slots taken and its new ones */
		fairq_note_busy(fd, taken + n);
	}
	if (n)
		fairq_wake_room(fd, n);
	next_ns = fq_sched_next_event(fd->fqs, now_ns);
	/* a passed bio's completion kicks dispatch too (fairq_pass_put()) */
	if (unlikely(!next_ns && fd->nr_queued && !atomic_read(&fd->slots))) {
		/* no completion and no timer would ever dispatch these */
		pr_warn_once("%s: sched core holds %u requests without a timer; polling\n",
			     fd->name, fd->nr_queued);
		next_ns = now_ns + FAIRQ_STALL_POLL_NS;
	}
	if (next_ns)
		fairq_arm_timer(fd, next_ns, now_ns);
}

/*
 * From the work item or teardown, not the submitter's context: these may
 * wait in the lower device, so they lose REQ_NOWAIT (an io_uring bio
 * failed with EAGAIN this late would only be issued again from io-wq).
 * One plug per batch so the lower queue can merge a flow's neighbours.
 */
static void fairq_submit_list(struct bio_list *list)
{
	struct blk_plug plug;
	struct bio *bio;

	if (bio_list_empty(list))
		return;
	blk_start_plug(&plug);
	while ((bio = bio_list_pop(list))) {
		struct fairq_io *fio = container_of(bio, struct fairq_io, clone);

		/*
		 * Checked again: a write queued here while its lower turned
		 * read-only would reach it, and the block layer only warns.
		 * The clone ends as any failed one (fairq_clone_endio()).
		 */
		if (unlikely(op_is_write(bio_op(bio)) &&
			     fairq_lower_refuses(fio->fd, bio))) {
			bio_io_error(bio);
			continue;
		}
		bio->bi_opf &= ~REQ_NOWAIT;
		submit_bio_noacct(bio);
	}
	blk_finish_plug(&plug);
}

/* The work item: what submitters handed over, then what the core lets go. */
static void fairq_dispatch(struct fairq_dev *fd)
{
	struct bio_list list = BIO_EMPTY_LIST;
	unsigned long flags;

	spin_lock_irqsave(&fd->lock, flags);
	bio_list_merge(&list, &fd->deferred);
	bio_list_init(&fd->deferred);
	if (fd->running) {
		u64 now_ns = ktime_get_ns();

		fairq_collect(fd, now_ns, &list);
		fairq_pass_update(fd, now_ns);
	}
	spin_unlock_irqrestore(&fd->lock, flags);
	fairq_submit_list(&list);
}

static void fairq_dispatch_work(struct work_struct *work)
{
	fairq_dispatch(container_of(work, struct fairq_dev, dispatch_work));
}

/* hard irq context: only hand over to the work item */
static enum hrtimer_restart fairq_timer_fn(struct hrtimer *timer)
{
	struct fairq_dev *fd = container_of(timer, struct fairq_dev, timer);

	queue_work(fd->wq, &fd->dispatch_work);
	return HRTIMER_NORESTART;
}

/* Let the work item re-run dispatch (after a tunable changed). */
void fairq_kick(struct fairq_dev *fd)
{
	unsigned long flags;

	spin_lock_irqsave(&fd->lock, flags);
	if (fd->running)
		queue_work(fd->wq, &fd->dispatch_work);
	spin_unlock_irqrestore(&fd->lock, flags);
}

static void fairq_put_pending(struct fairq_dev *fd)
{
	/* complete() is safe against the waiter freeing fd right after */
	if (atomic_dec_and_test(&fd->pending))
		complete(&fd->drained);
}

/* The clone is done with: end the original (its bi_status is set). */
static void fairq_end_orig(struct fairq_io *fio)
{
	struct fairq_dev *fd = fio->fd;
	struct bio *orig = fio->orig;

	if (fio->acct)
		bio_end_io_acct(orig, fio->start);
	bio_put(&fio->clone);
	bio_endio(orig);
	fairq_put_pending(fd);
}

/*
 * Whether a clone's status is a failure of the lower device.  Not
 * BLK_STS_AGAIN: a lower answers a REQ_NOWAIT clone so when it would have
 * had to wait (no tag free, a dm device suspended for a table swap).
 * The original ends with it (io_uring issues it again from io-wq,
 * preadv2(RWF_NOWAIT) returns EAGAIN) and it is no error in the stats.
 */
static bool fairq_lower_failed(blk_status_t status)
{
	return unlikely(status) && status != BLK_STS_AGAIN;
}

/*
 * Give a passed bio's slot back.  While pass-through is on, that is all
 * -- the core holds nothing the slot could go to -- unless it was the
 * last slot and the core was told of passed bios below: it counts them
 * busy, so it would never see the device go idle, reap its flows and
 * let its table shrink while every later bio passes.  Else the core
 * counts the slot as taken: tell it, and let what it queues use the slot.
 */
static void fairq_pass_put(struct fairq_dev *fd)
{
	unsigned long flags;
	int left;

	/* fully ordered: pairs with smp_mb() in fairq_pass_stop() */
	left = atomic_dec_return(&fd->slots);
	if (likely(READ_ONCE(fd->pass)) &&
	    likely(left || !READ_ONCE(fd->pass_told)))
		return;
	spin_lock_irqsave(&fd->lock, flags);
	if (fd->running) {
		u64 now_ns = ktime_get_ns();

		fairq_pass_sync(fd, false, now_ns);
		fairq_slot_freed(fd, now_ns);
	}
	spin_unlock_irqrestore(&fd->lock, flags);
}

/*
 * A pass-through clone completed: count it, then give its slot back.  Its
 * event only if it was traced when it went down (fairq_pass_trace()).
 */
static void fairq_pass_done(struct fairq_io *fio, blk_status_t status)
{
	struct fairq_dev *fd = fio->fd;

	if (trace_fairq_complete_enabled() && fio->traced)
		trace_fairq_complete(fd, &fio->rq, ktime_get_ns(),
				     blk_status_to_errno(status), true);
	this_cpu_inc(fd->pass_pcpu->done_reqs);
	this_cpu_add(fd->pass_pcpu->done_bytes, fio->rq.bytes);
	if (fairq_lower_failed(status))
		this_cpu_inc(fd->pass_pcpu->errors);
	fairq_pass_put(fd);
}

/*
 * Stamp fd->sync_jiffies for a sync bio with sectors (the core's kind:
 * an empty flush never reaches it), passed or scheduled, one store a
 * jiffy at most (the line stays shared), so that the rules below can ask
 * fairq_sync_active() without the lock or the core's clock.
 */
static void fairq_note_sync(struct fairq_dev *fd, const struct bio *bio)
{
	unsigned long now = jiffies;

	if (op_is_sync(bio->bi_opf) && bio_sectors(bio) &&
	    READ_ONCE(fd->sync_jiffies) != now)
		WRITE_ONCE(fd->sync_jiffies, now);
}

/*
 * Whether sync I/O is active: a sync bio came within FAIRQ_SYNC_RECENT,
 * or the core holds one (queued or in flight: a commit's step that waits
 * behind writeback longer than that).
 */
static bool fairq_sync_active(const struct fairq_dev *fd)
{
	return READ_ONCE(fd->sync_waiting) ||
	       time_before(jiffies,
			   READ_ONCE(fd->sync_jiffies) + FAIRQ_SYNC_RECENT);
}

/*
 * After the core took or let go of a request: fd->sync_waiting follows.
 * Only a sync request moves it, so async ones need not ask.
 */
static void fairq_sync_waiting_update(struct fairq_dev *fd)
{
	bool waiting = fq_sched_sync_waiting(fd->fqs);

	lockdep_assert_held(&fd->lock);
	if (fd->sync_waiting != waiting)
		WRITE_ONCE(fd->sync_waiting, waiting);
}

static void fairq_clone_endio(struct bio *clone)
{
	struct fairq_io *fio = container_of(clone, struct fairq_io, clone);
	struct fairq_dev *fd = fio->fd;
	struct bio *orig = fio->orig;
	unsigned long flags;

	orig->bi_status = clone->bi_status;
	if (fio->sched) {
		int error = fairq_lower_failed(clone->bi_status) ?
			    blk_status_to_errno(clone->bi_status) : 0;
		u64 now_ns;

		spin_lock_irqsave(&fd->lock, flags);
		now_ns = ktime_get_ns();
		/*
		 * bios passed since pass-through came back on are in the
		 * epoch this completion may close: the core must know
		 */
		if (fd->pass)
			fairq_pass_sync(fd, READ_ONCE(fd->pass_used), now_ns);
		/* before the core's own events this completion causes */
		trace_fairq_complete(fd, &fio->rq, now_ns, error, false);
		fq_sched_complete(fd->fqs, &fio->rq, error, now_ns);
		if (fio->rq.flags & FQ_REQ_SYNC)
			fairq_sync_waiting_update(fd);
		fd->nr_inflight--;
		atomic_dec(&fd->slots);
		fairq_slot_freed(fd, now_ns);
		spin_unlock_irqrestore(&fd->lock, flags);
	} else if (fio->pass) {
		fairq_pass_done(fio, clone->bi_status);
	} else if (fairq_lower_failed(clone->bi_status)) {
		/* the core counts scheduled bios' errors; these never reach it */
		atomic64_inc(&fd->passthrough_errs);
	}
	/* a lower device that shrank or went read-only fails I/O first */
	if (fairq_lower_failed(clone->bi_status))
		fairq_lower_check_soon(fd);
	fairq_end_orig(fio);
}

/*
 * The flow of writeback: the bio's blkcg, which cgroup writeback sets to
 * the group that dirtied the pages (the root group's when cgroups are not
 * in use), in every classify mode.  The flusher kworker that happens to
 * submit it is nobody's process: keyed by its tgid, each kworker would be
 * a flow of its own and the copy that dirtied the disk would get one
 * share per kworker.  So: every write a workqueue worker submits (the
 * flushers' background writeback, and sync(2)'s, which is REQ_SYNC), and
 * async writes of any other kernel thread.  A synchronous write stays
 * with its submitter: fsync's own writeback, O_DIRECT, and the journal
 * thread's commits (jbd2: one flow, everyone's).  Keys at or above
 * FAIRQ_WB_KEY are of this kind (fairq(4), DESCRIPTION).
 */
static bool fairq_bio_writeback(struct bio *bio)
{
	if (!op_is_write(bio_op(bio)))
		return false;
	return (current->flags & PF_WQ_WORKER) ||
	       (!op_is_sync(bio->bi_opf) && (current->flags & PF_KTHREAD));
}

static u64 fairq_blkcg_key(struct bio *bio)
{
	struct cgroup_subsys_state *css = bio_blkcg_css(bio);

	return css ? cgroup_id(css->cgroup) : 0;
}

static u64 fairq_flow_key(int classify, struct bio *bio)
{
	/* the bio's blkcg: right for writeback from kworkers too */
	if (classify == FAIRQ_CLASSIFY_CGROUP)
		return fairq_blkcg_key(bio);
	if (fairq_bio_writeback(bio))
		return FAIRQ_WB_KEY + fairq_blkcg_key(bio);
	switch (classify) {
	case FAIRQ_CLASSIFY_PID:
		return current->pid;
	case FAIRQ_CLASSIFY_UID:
		return from_kuid(&init_user_ns, current_fsuid());
	default:
		return current->tgid;
	}
}

/*
 * Whether @bio is queued in the core.  Data bios and the ones that cover
 * a range without data (discard, write-zeroes, secure erase) are.  Empty
 * flushes go straight down: a flush must cover the writes that completed
 * before it was issued, and those are below already, so no queued bio
 * has to go first, and holding it in a turn would only delay every fsync
 * behind other flows.  PREFLUSH/FUA on a queued bio (a journal commit
 * write; a discard with PREFLUSH, which 6.1's submit_bio_noacct() lets
 * through) stay on its clone: the flush still precedes the bio's own
 * write at the lower device, and what it must cover completed before it
 * was queued.
 */
static bool fairq_sched_bio(struct bio *bio)
{
	switch (bio_op(bio)) {
	case REQ_OP_DISCARD:
	case REQ_OP_SECURE_ERASE:
	case REQ_OP_WRITE_ZEROES:
		return true;
	default:
		return bio_has_data(bio);
	}
}

/* The bio's I/O priority: its own, else its submitter's. */
static unsigned short fairq_bio_ioprio(struct bio *bio)
{
	unsigned short prio = bio_prio(bio);

	/* submit_bio() fills in the task's ioprio, submit_bio_noacct() not */
	if (IOPRIO_PRIO_CLASS(prio) == IOPRIO_CLASS_NONE)
		prio = get_current_ioprio();
	return prio;
}

static void fairq_fill_req(struct fairq_dev *fd, struct bio *bio, struct fq_req *rq)
{
	int classify = READ_ONCE(fd->classify);
	unsigned short prio = fairq_bio_ioprio(bio);
	unsigned int class;

	memset(rq, 0, sizeof(*rq));
	rq->sector = bio->bi_iter.bi_sector;
	rq->bytes = bio->bi_iter.bi_size;
	if (op_is_write(bio_op(bio)))
		rq->flags |= FQ_REQ_WRITE;
	if (op_is_sync(bio->bi_opf))
		rq->flags |= FQ_REQ_SYNC;
	if (!bio_has_data(bio))
		rq->flags |= FQ_REQ_NODATA;
	if (bio->bi_opf & REQ_RAHEAD)
		rq->flags |= FQ_REQ_RAHEAD;
	rq->key = fairq_flow_key(classify, bio);
	/* 0 for an unlisted cgroup: it weighs as its I/O priority says */
	if (classify == FAIRQ_CLASSIFY_CGROUP)
		rq->weight = fairq_cgw_lookup(&fd->cgw, rq->key);

	class = IOPRIO_PRIO_CLASS(prio);
	if (class != IOPRIO_CLASS_NONE)
		rq->ioprio = FQ_IOPRIO(class, IOPRIO_PRIO_DATA(prio));
}

/*
 * A bio that passes is neither classified nor timed: while its queue or
 * complete event is on, it is, for the events alone (the core never sees
 * this rq).  Went down now: no wait in fairq.
 */
static void fairq_pass_trace(struct fairq_io *fio, struct bio *bio)
{
	struct fq_req *rq = &fio->rq;

	fairq_fill_req(fio->fd, bio, rq);
	rq->enqueue_ns = ktime_get_ns();
	rq->dispatch_ns = rq->enqueue_ns;
	fio->traced = true;
	trace_fairq_queue(fio->fd, rq, true);
}

static bool fairq_async_write(const struct bio *bio)
{
	return op_is_write(bio_op(bio)) && !op_is_sync(bio->bi_opf);
}

/*
 * Take a depth slot for @bio: true if its clone may go straight down
 * now.  No lock, no clock, no core: see "Pass-through" above.
 */
static bool fairq_pass_get(struct fairq_dev *fd, struct bio *bio)
{
	int n;

	/* pairs with smp_store_release() in fairq_pass_update() */
	if (!smp_load_acquire(&fd->pass))
		return false;
	if (bio->bi_iter.bi_size > FAIRQ_PASS_MAX_BYTES)
		return false;
	if (fairq_async_write(bio) && READ_ONCE(fd->wb_yield) &&
	    fairq_sync_active(fd))
		return false;
	if (IOPRIO_PRIO_CLASS(fairq_bio_ioprio(bio)) == IOPRIO_CLASS_IDLE)
		return false;
	n = atomic_read(&fd->slots);
	do {
		if (n >= (int)READ_ONCE(fd->pass_depth))
			return false;
	} while (!atomic_try_cmpxchg(&fd->slots, &n, n + 1));
	/*
	 * The cmpxchg is a full barrier: pairs with fairq_pass_stop().  The
	 * depth read above may be an earlier stretch's: check it again.
	 */
	if (unlikely(!smp_load_acquire(&fd->pass) ||
		     n + 1 > (int)READ_ONCE(fd->pass_depth))) {
		fairq_pass_put(fd);
		return false;
	}
	fairq_note_busy(fd, n + 1);
	if (unlikely(!READ_ONCE(fd->pass_used)))
		WRITE_ONCE(fd->pass_used, true);
	return true;
}

/*
 * Of the clones on @list (just let go by the core in @own's submitter's
 * context), keep only @own for the caller to send; hand the others to
 * the work item.  Returns true if @own was on the list.
 */
static bool fairq_keep_own(struct fairq_dev *fd, struct bio_list *list,
			   struct bio *own)
{
	bool found = false;
	struct bio *bio;

	lockdep_assert_held(&fd->lock);

	while ((bio = bio_list_pop(list))) {
		if (bio == own) {
			found = true;
			continue;
		}
		bio_list_add(&fd->deferred, bio);
	}
	if (!bio_list_empty(&fd->deferred))
		queue_work(fd->wq, &fd->dispatch_work);
	return found;
}

/*
 * Back-pressure: the core holds max_queued requests (or @fio's flow its
 * share of them).  Sleep until dispatch makes room and return true, or
 * return false at once for a REQ_NOWAIT bio.  Called and returns with
 * fd->lock held; the bios that would make room need no lock of ours to
 * complete, and their dispatch wakes us (fairq_collect()).
 */
static bool fairq_wait_room(struct fairq_dev *fd, struct fairq_io *fio,
			    unsigned long *flags)
{
	struct wait_queue_head *wq;
	DEFINE_WAIT(wait);
	bool full;

	lockdep_assert_held(&fd->lock);

	if (fio->orig->bi_opf & REQ_NOWAIT)
		return false;
	do {
		/*
		 * The core is full: wait in line, one waiter woken per
		 * request dispatched (fairq_wake_room()); waking them all
		 * would make a thousand waiters take fd->lock at every
		 * dispatch.
		 * Only the flow's share is taken: wait for any dispatch.
		 */
		full = fq_sched_queue_full(fd->fqs);
		wq = full ? &fd->room_wait : &fd->share_wait;
		if (full)
			prepare_to_wait_exclusive(wq, &wait, TASK_UNINTERRUPTIBLE);
		else
			prepare_to_wait(wq, &wait, TASK_UNINTERRUPTIBLE);
		spin_unlock_irqrestore(&fd->lock, *flags);
		io_schedule();
		spin_lock_irqsave(&fd->lock, *flags);
		finish_wait(wq, &wait);
		/*
		 * Woken in line for room this flow may not use: pass the
		 * wakeup on, or the room could stay unused while the next
		 * in line sleeps.
		 */
		if (full && !fq_sched_queue_full(fd->fqs) &&
		    !fq_sched_may_queue(fd->fqs, &fio->rq))
			wake_up(&fd->room_wait);
	} while (!fq_sched_may_queue(fd->fqs, &fio->rq));
	return true;
}

static void fairq_enqueue(struct fairq_dev *fd, struct fairq_io *fio)
{
	struct bio_list list = BIO_EMPTY_LIST;
	unsigned long flags;
	u64 now_ns;
	bool own;

	spin_lock_irqsave(&fd->lock, flags);
	if (unlikely(!fd->running)) {
		/* cannot happen: del_gendisk() fences submit_bio first */
		spin_unlock_irqrestore(&fd->lock, flags);
		fio->sched = false;
		fio->clone.bi_status = BLK_STS_IOERR;
		bio_endio(&fio->clone);
		return;
	}
	if (unlikely(!fq_sched_may_queue(fd->fqs, &fio->rq)) &&
	    !fairq_wait_room(fd, fio, &flags)) {
		spin_unlock_irqrestore(&fd->lock, flags);
		/* REQ_NOWAIT over the bound: io_uring retries from io-wq */
		bio_set_flag(fio->orig, BIO_QUIET);
		fio->orig->bi_status = BLK_STS_AGAIN;
		fairq_end_orig(fio);
		return;
	}
	now_ns = ktime_get_ns();
	/* after any wait: the core may have emptied and pass-through resumed */
	fairq_pass_stop(fd, now_ns);
	/* before the core's own events this bio causes (a boost's start) */
	trace_fairq_queue(fd, &fio->rq, false);
	fq_sched_enqueue(fd->fqs, &fio->rq, now_ns);
	if (fio->rq.flags & FQ_REQ_SYNC)
		fairq_sync_waiting_update(fd);
	fairq_table_check(fd);
	fd->nr_queued++;
	fairq_collect(fd, now_ns, &list);
	own = fairq_keep_own(fd, &list, &fio->clone);
	spin_unlock_irqrestore(&fd->lock, flags);

	/* in submit_bio context: this only queues on current->bio_list */
	if (own)
		submit_bio_noacct(&fio->clone);
}

/*
 * The clone of @bio onto the lower device, or NULL with @bio ended.  A
 * REQ_NOWAIT bio (io_uring in the submitting task) must not sleep here:
 * its clone comes from the bio_set without waiting for the reserve, and
 * the bio fails with BLK_STS_AGAIN (io_uring retries from io-wq) if none
 * is free.
 *
 * Its clone keeps REQ_NOWAIT only while the lower takes it: a lower that
 * lost it since the disk last followed (a dm table reloaded onto
 * dm-crypt) would fail the clone with BLK_STS_NOTSUPP.  It goes down
 * without the flag (fairq itself still never sleeps on the bio), and the
 * lower watch makes the disk follow at once (fairq_lower.c).
 */
static struct bio *fairq_clone(struct fairq_dev *fd, struct bio *bio)
{
	bool nowait = bio->bi_opf & REQ_NOWAIT;
	struct bio *clone;

	clone = bio_alloc_clone(fd->lower.bdev, bio,
				nowait ? GFP_NOWAIT : GFP_NOIO, &fd->bs);
	if (likely(clone)) {
		if (unlikely(nowait && !bdev_nowait(fd->lower.bdev))) {
			clone->bi_opf &= ~REQ_NOWAIT;
			fairq_lower_check_soon(fd);
		}
		return clone;
	}
	if (nowait) {
		bio_wouldblock_error(bio);
	} else {
		/* only bio crypt/integrity cloning can fail with GFP_NOIO */
		bio->bi_status = BLK_STS_RESOURCE;
		bio_endio(bio);
	}
	return NULL;
}

/*
 * Background writeback yields to sync I/O (sched/fq_writes.c): an async
 * write the core wants cut now goes on as its first piece, and the rest
 * is resubmitted behind it (it comes back here and is asked about
 * again).  @bio itself when no cut is wanted.  Only plain writes: a zone
 * append must stay whole.
 */
static struct bio *fairq_cut_async(struct fairq_dev *fd, struct bio *bio)
{
	unsigned int lbs = bdev_logical_block_size(bio->bi_bdev);
	unsigned int size = bio->bi_iter.bi_size;
	unsigned long flags;
	struct bio *split;
	u32 piece;

	/*
	 * No lock taken unless writeback=yield and sync I/O is active: the
	 * core cuts nothing else.
	 */
	if (!READ_ONCE(fd->wb_yield) || bio_op(bio) != REQ_OP_WRITE ||
	    op_is_sync(bio->bi_opf) || size < 2 * PAGE_SIZE ||
	    !fairq_sync_active(fd))
		return bio;
	spin_lock_irqsave(&fd->lock, flags);
	piece = fq_sched_async_piece(fd->fqs, size);
	spin_unlock_irqrestore(&fd->lock, flags);
	piece = round_down(piece, lbs);
	if (!piece || piece >= size)
		return bio;
	split = bio_split(bio, piece >> SECTOR_SHIFT, GFP_NOIO, &fd->split_bs);
	if (IS_ERR_OR_NULL(split))
		return bio;	/* whole, as without the rule */
	bio_chain(split, bio);
	/* in submit_bio context: queued on current->bio_list, after split */
	submit_bio_noacct(bio);
	return split;
}

void fairq_submit_bio(struct bio *bio)
{
	struct fairq_dev *fd = bio->bi_bdev->bd_disk->private_data;
	struct fairq_io *fio;
	struct bio *clone;

	bio = bio_split_to_limits(bio);
	if (!bio)
		return;
	if (unlikely(op_is_write(bio_op(bio)) && fairq_lower_refuses(fd, bio))) {
		bio_io_error(bio);
		return;
	}
	fairq_note_sync(fd, bio);
	bio = fairq_cut_async(fd, bio);

	clone = fairq_clone(fd, bio);
	if (unlikely(!clone))
		return;
	fio = container_of(clone, struct fairq_io, clone);
	fio->orig = bio;
	fio->fd = fd;
	fio->sched = false;
	fio->pass = false;
	fio->traced = false;
	fio->acct = blk_queue_io_stat(bio->bi_bdev->bd_disk->queue);
	if (fio->acct)
		fio->start = bio_start_io_acct(bio);
	clone->bi_end_io = fairq_clone_endio;
	atomic_inc(&fd->pending);

	if (!fairq_sched_bio(bio)) {
		atomic64_inc(&fd->passthrough);
		submit_bio_noacct(clone);
		return;
	}
	if (fairq_pass_get(fd, bio)) {
		fio->pass = true;
		if (trace_fairq_queue_enabled() || trace_fairq_complete_enabled())
			fairq_pass_trace(fio, bio);
		/* as the core would count it (fq_rq_bytes()) */
		fio->rq.bytes = bio_has_data(bio) ? bio->bi_iter.bi_size : FQ_NODATA_BYTES;
		this_cpu_inc(fd->pass_pcpu->reqs);
		this_cpu_add(fd->pass_pcpu->bytes, fio->rq.bytes);
		submit_bio_noacct(clone);
		return;
	}
	fairq_fill_req(fd, bio, &fio->rq);
	fio->sched = true;
	fairq_enqueue(fd, fio);
}

/*
 * Flows the core frees, or chains and flows it moves to a new table, per
 * hold of fd->lock in fairq_table_work(): a few microseconds with
 * interrupts off, however many flows there are.
 */
#define FAIRQ_REAP_BUDGET	64

/*
 * The device went idle: free the core's drained flows, FAIRQ_REAP_BUDGET
 * at a time.  Then, the core has more flows than its flow table has
 * chains, or far fewer (a burst of keys is over): allocate the table it
 * wants here, where sleeping is allowed, install it under the lock and
 * move the flows into it a bit at a time (fq_sched.h).  NOIO: this
 * allocation must not wait for writeback through this very device.  On
 * failure the old table stays, and the next bio queued or completed asks
 * again.
 *
 * Queued on system_unbound_wq, not on fd->wq: that one is WQ_MEM_RECLAIM
 * because dispatch must make progress under memory pressure, and a work
 * item that allocates (and may wait for reclaim) there would hold up the
 * dispatch work queued behind it on its rescuer.  Nothing waits for this
 * one: until it runs, chains are only longer and freed flows only later.
 */
static void fairq_table_work(struct work_struct *work)
{
	struct fairq_dev *fd = container_of(work, struct fairq_dev, table_work);
	struct fq_table *t;
	unsigned int noio;
	bool more;
	u32 bits;

	do {
		spin_lock_irq(&fd->lock);
		more = fq_sched_reap(fd->fqs, FAIRQ_REAP_BUDGET);
		spin_unlock_irq(&fd->lock);
		cond_resched();
	} while (more);
	spin_lock_irq(&fd->lock);
	bits = fq_sched_table_want(fd->fqs);
	spin_unlock_irq(&fd->lock);
	if (!bits)
		return;
	noio = memalloc_noio_save();
	t = fq_sched_table_alloc(bits);
	memalloc_noio_restore(noio);
	if (!t)
		return;
	spin_lock_irq(&fd->lock);
	t = fq_sched_table_swap(fd->fqs, t);
	spin_unlock_irq(&fd->lock);
	fq_sched_table_free(t);
	/* the flows move over by FAIRQ_REAP_BUDGET chains or flows a hold */
	do {
		spin_lock_irq(&fd->lock);
		more = fq_sched_table_rehash(fd->fqs, FAIRQ_REAP_BUDGET, &t);
		spin_unlock_irq(&fd->lock);
		fq_sched_table_free(t);
		cond_resched();
	} while (more);
}

/* Once per device, at mkdir: 0 or -ENOMEM. */
int fairq_io_init(struct fairq_dev *fd)
{
	fd->pass_pcpu = alloc_percpu(struct fairq_pass_pcpu);
	if (!fd->pass_pcpu)
		return -ENOMEM;
	spin_lock_init(&fd->lock);
	fd->sync_jiffies = jiffies - FAIRQ_SYNC_RECENT;
	atomic64_set(&fd->passthrough, 0);
	atomic64_set(&fd->passthrough_errs, 0);
	init_completion(&fd->drained);
	INIT_WORK(&fd->dispatch_work, fairq_dispatch_work);
	INIT_WORK(&fd->table_work, fairq_table_work);
	init_waitqueue_head(&fd->room_wait);
	init_waitqueue_head(&fd->share_wait);
	hrtimer_init(&fd->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	fd->timer.function = fairq_timer_fn;
	return 0;
}

/* At the last configfs reference. */
void fairq_io_exit(struct fairq_dev *fd)
{
	free_percpu(fd->pass_pcpu);
}

/*
 * Pass-through figures for stats.  Completions are summed first: a bio
 * counted done was counted sent before it went down, so reqs never
 * trails done_reqs.
 */
void fairq_pass_figures(struct fairq_dev *fd, struct fairq_pass_figs *pf)
{
	int cpu;

	memset(pf, 0, sizeof(*pf));
	for_each_possible_cpu(cpu) {
		const struct fairq_pass_pcpu *p = per_cpu_ptr(fd->pass_pcpu, cpu);

		pf->done_reqs += READ_ONCE(p->done_reqs);
		pf->done_bytes += READ_ONCE(p->done_bytes);
		pf->errors += READ_ONCE(p->errors);
	}
	/* done before sent: pairs with the I/O path's own ordering */
	smp_rmb();
	for_each_possible_cpu(cpu) {
		const struct fairq_pass_pcpu *p = per_cpu_ptr(fd->pass_pcpu, cpu);

		pf->reqs += READ_ONCE(p->reqs);
		pf->bytes += READ_ONCE(p->bytes);
	}
	pf->inflight = pf->reqs > pf->done_reqs ? (u32)(pf->reqs - pf->done_reqs) : 0;
	pf->inflight_max = READ_ONCE(fd->inflight_max);
	spin_lock_irq(&fd->lock);
	pf->stops = fd->pass_stops;
	pf->on = fd->pass;
	spin_unlock_irq(&fd->lock);
}

/* Power-on, before add_disk(): fd->wq and fd->lower are set. */
void fairq_io_start(struct fairq_dev *fd)
{
	unsigned long flags;

	reinit_completion(&fd->drained);
	atomic_set(&fd->pending, 1);
	atomic_set(&fd->slots, 0);
	spin_lock_irqsave(&fd->lock, flags);
	fd->nr_queued = 0;
	fd->nr_inflight = 0;
	fd->inflight_max = 0;
	bio_list_init(&fd->deferred);
	fd->running = true;
	fairq_pass_update(fd, ktime_get_ns());
	spin_unlock_irqrestore(&fd->lock, flags);
}

/*
 * Power-off, after del_gendisk() (no new submit_bio) or after a failed
 * add_disk().  What submitters left for the work item goes down, and
 * what the core still queues is taken back and sent down unscheduled,
 * so teardown never waits for anticipation or idle grace;
 * then wait for every clone, then stop the timer and the work item.
 */
void fairq_io_stop(struct fairq_dev *fd)
{
	struct bio_list list = BIO_EMPTY_LIST;
	unsigned long flags;
	struct fq_req *rq;

	spin_lock_irqsave(&fd->lock, flags);
	fairq_pass_stop(fd, ktime_get_ns());
	bio_list_merge(&list, &fd->deferred);
	bio_list_init(&fd->deferred);
	while ((rq = fq_sched_drain(fd->fqs))) {
		struct fairq_io *fio = container_of(rq, struct fairq_io, rq);

		fio->sched = false;
		fd->nr_queued--;
		bio_list_add(&list, &fio->clone);
	}
	fairq_sync_waiting_update(fd);
	/* room that no dispatch opened */
	fairq_wake_room(fd, 0);
	spin_unlock_irqrestore(&fd->lock, flags);
	fairq_submit_list(&list);

	if (!atomic_dec_and_test(&fd->pending))
		wait_for_completion(&fd->drained);

	spin_lock_irqsave(&fd->lock, flags);
	fd->running = false;
	/* a completion during the drain may have turned it back on */
	WRITE_ONCE(fd->pass, false);
	fq_sched_pass(fd->fqs, 0, false, ktime_get_ns());
	spin_unlock_irqrestore(&fd->lock, flags);
	/* neither re-arms the other once running is false */
	hrtimer_cancel(&fd->timer);
	cancel_work_sync(&fd->dispatch_work);
	cancel_work_sync(&fd->table_work);
}
