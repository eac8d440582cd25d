/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fairq.h - the fairq stacked block driver: shared declarations.
 *
 * One struct fairq_dev per configfs entry.  It lives from mkdir to the
 * last configfs reference; the gendisk, the lower device, the bio_set
 * and the workqueue live only while the device is powered on.
 *
 * Locks, outermost first:
 *   fd->cfg_lock    (mutex, per device) power on/off, backing, max_flows;
 *                   held across del_gendisk() and the drain, so a wedged
 *                   lower device stalls only its own device.  Never taken
 *                   by sysfs handlers, so power-off may wait for them.
 *   fairq_stack_lock (mutex, global, short) the loop check's walk down
 *                   the stack vs. a device detaching from its disk.
 *   fd->tun_lock    (mutex) tunable get/set, excludes a max_flows resize
 *                   (which runs on the core without fd->lock).
 *   fd->lock        (spinlock, irqsave) the sched core and the I/O state;
 *                   completions take it from interrupt context.
 *   fd->cgw.lock    (spinlock, irqsave) the cgroup weight table; a leaf,
 *                   taken with no other fairq lock held.
 */
#ifndef FAIRQ_H
#define FAIRQ_H

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/bio.h>
#include <linux/configfs.h>
#include <linux/hrtimer.h>
#include <linux/workqueue.h>
#include <linux/completion.h>
#include <linux/atomic.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "fq_sched.h"
#include "fairq_compat.h"

enum fairq_classify {
	FAIRQ_CLASSIFY_TGID,
	FAIRQ_CLASSIFY_PID,
	FAIRQ_CLASSIFY_CGROUP,
	FAIRQ_CLASSIFY_UID,
	FAIRQ_CLASSIFY_COUNT,
};

/*
 * Flow keys of background writeback outside classify=cgroup: this plus
 * the cgroup id of the bio's blkcg (fairq_io.c, fairq_flow_key()), above
 * every pid, tgid and uid.
 */
#define FAIRQ_WB_KEY	(1ULL << 32)

struct fairq_kobj;

/* cgroup_weights: entries of the table (fairq_cgweights.c) */
#define FAIRQ_CGW_MAX	256

struct fairq_cgw_entry {
	u64 id;			/* cgroup v2 id (cgroup_id()) */
	u16 weight;		/* 1..FQ_WEIGHT_MAX */
};

/*
 * Pass-through figures, per CPU, summed when read (fairq_pass_figures());
 * a bio is counted by the CPU that submits it and the one that completes
 * it.  Bytes as the core counts them (a dataless bio: FQ_NODATA_BYTES).
 */
struct fairq_pass_pcpu {
	u64 reqs, bytes;		/* sent down by pass-through */
	u64 done_reqs, done_bytes;	/* ... and completed */
	u64 errors;			/* ... of them with an error */
};

/* What stats shows of pass-through, summed from fd->pass_pcpu. */
struct fairq_pass_figs {
	u64 reqs, bytes, done_reqs, done_bytes, errors;
	u32 inflight;		/* sent down, not completed [bios] */
	u32 inflight_max;	/* the most below at once since power-on [bios] */
	u64 stops;		/* times pass-through stopped for scheduling */
	bool on;		/* pass-through now */
};

/* Weights set by cgroup id, ascending; protected by ->lock. */
struct fairq_cgw {
	spinlock_t lock;
	unsigned int nr;	/* entries in use */
	struct fairq_cgw_entry e[FAIRQ_CGW_MAX];
};

struct fairq_dev {
	struct config_item item;
	char name[DISK_NAME_LEN];	/* configfs name = disk name */
	char *backing;			/* lower path or NULL; written under cfg_lock and tun_lock */
	bool dead;			/* rmdir'ed; cfg_lock */
	/* on fairq_trace.c's list, mkdir to release: events name the device */
	struct list_head trace_node;
	struct mutex cfg_lock;
	int classify;			/* enum fairq_classify; READ_ONCE on the I/O path */

	struct mutex tun_lock;
	spinlock_t lock;
	struct fq_sched *fqs;		/* created at mkdir, destroyed at release */
	bool running;			/* accepts and dispatches I/O; fd->lock */
	unsigned int nr_queued;		/* enqueued, not yet dispatched [requests]; fd->lock */
	unsigned int nr_inflight;	/* dispatched by the core, not completed; fd->lock */
	u64 timer_ns;			/* when the hrtimer is armed for [ns]; fd->lock */
	/*
	 * clones the core let go during another flow's submit_bio, for the
	 * work item to send down; fd->lock
	 */
	struct bio_list deferred;
	/*
	 * submitters over max_queued: room_wait while the core is full (one
	 * woken per request dispatched), share_wait while their flow has its
	 * share (all woken at each dispatch); fairq_wait_room()
	 */
	struct wait_queue_head room_wait;
	struct wait_queue_head share_wait;

	/*
	 * Pass-through (fairq_io.c): while pass is set, a bio that finds
	 * fewer than pass_depth slots taken takes one and goes straight
	 * down, without fd->lock or the core.  pass, pass_depth and
	 * pass_stops change under fd->lock.
	 */
	bool pass;
	bool pass_used;			/* a bio passed since pass was set */
	/*
	 * the core was last told of passed bios below (fairq_pass_sync(),
	 * fd->lock): the last slot to come back tells it they are gone
	 */
	bool pass_told;
	unsigned int pass_depth;	/* slots at most while pass is set */
	unsigned long sync_jiffies;	/* last sync bio seen (fairq_note_sync()) */
	bool sync_waiting;		/* the core holds a sync request */
	bool wb_yield;			/* writeback=yield: follows the tunable */
	unsigned int inflight_max;	/* most below at once [bios]; racy max */
	/*
	 * depth slots taken: the core's nr_inflight, the passed bios not
	 * completed, and submitters about to give one back
	 */
	atomic_t slots;
	u64 pass_stops;			/* pass -> scheduling switches; fd->lock */
	struct fairq_pass_pcpu __percpu *pass_pcpu;	/* mkdir to release */

	atomic_t pending;		/* clones not yet completed, +1 while running */
	struct completion drained;	/* pending reached 0 after power-off dropped the +1 */
	atomic64_t passthrough;		/* empty flushes sent straight down [bios] */
	atomic64_t passthrough_errs;	/* ... of them completed with an error [bios] */
	struct fairq_cgw cgw;		/* cgroup_weights, kept across power off */

	/* valid while powered on; set and cleared under cfg_lock */
	struct fairq_lower lower;
	struct gendisk *disk;
	struct bio_set bs;
	struct bio_set split_bs;	/* async writes cut (fairq_cut_async()) */
	struct workqueue_struct *wq;
	struct work_struct dispatch_work;
	/* resizes the core's flow table, frees its flows (system_unbound_wq) */
	struct work_struct table_work;
	struct hrtimer timer;
	struct fairq_kobj *kobj;	/* /sys/block/NAME/fairq */
	bool closing;			/* power-off started; disk->open_mutex */

	/* following the lower device's size and read-only state (fairq_lower.c) */
	struct delayed_work lower_work;
	bool lower_watch;		/* lower_work may be queued; fd->lock */
	bool lower_ro;			/* the lower's read-only state as last mirrored */
};

/*
 * Per-I/O data, the front pad of every clone: the clone must stay last.
 * Clones of empty flushes use only orig, fd, acct and start.
 */
struct fairq_io {
	struct bio *orig;
	struct fairq_dev *fd;
	unsigned long start;		/* bio_start_io_acct() time, if acct */
	bool acct;
	bool sched;			/* fq_sched_complete() is owed at endio */
	bool pass;			/* went down by pass-through: rq.bytes counted */
	bool traced;			/* ... with rq filled in for its trace events */
	struct fq_req rq;
	struct bio clone;
};

extern struct mutex fairq_stack_lock;
extern const struct block_device_operations fairq_fops;

static inline struct fairq_dev *to_fairq_dev(struct config_item *item)
{
	return container_of(item, struct fairq_dev, item);
}

/* fairq_dev.c */
struct fairq_dev *fairq_dev_alloc(const char *name);
void fairq_dev_free(struct fairq_dev *fd);
int fairq_power_on(struct fairq_dev *fd, const char **why);
int fairq_power_off(struct fairq_dev *fd, bool force, const char **why);

/* fairq_lower.c */
void fairq_lower_init(struct fairq_dev *fd);
void fairq_lower_watch_start(struct fairq_dev *fd);
void fairq_lower_watch_stop(struct fairq_dev *fd);
void fairq_lower_check_soon(struct fairq_dev *fd);
bool fairq_lower_refuses(struct fairq_dev *fd, struct bio *bio);

/* fairq_io.c */
int fairq_io_init(struct fairq_dev *fd);
void fairq_io_exit(struct fairq_dev *fd);
void fairq_submit_bio(struct bio *bio);
void fairq_io_start(struct fairq_dev *fd);
void fairq_io_stop(struct fairq_dev *fd);
void fairq_kick(struct fairq_dev *fd);
void fairq_wake_room(struct fairq_dev *fd, unsigned int n);
void fairq_pass_refresh(struct fairq_dev *fd);
void fairq_pass_figures(struct fairq_dev *fd, struct fairq_pass_figs *pf);

/* fairq_tunables.c: the one implementation behind configfs and sysfs */
ssize_t fairq_attr_show(struct fairq_dev *fd, const char *name, char *page);
int fairq_attr_store(struct fairq_dev *fd, const char *name, const char *buf);
const char *fairq_classify_name(int classify);

/* fairq_trace.c */
void fairq_trace_add(struct fairq_dev *fd);
void fairq_trace_del(struct fairq_dev *fd);

/* fairq_cgweights.c */
void fairq_cgw_init(struct fairq_cgw *t);
u16 fairq_cgw_lookup(struct fairq_cgw *t, u64 id);
int fairq_cgw_store(struct fairq_cgw *t, const char *buf, const char **why);
ssize_t fairq_cgw_show(struct fairq_cgw *t, char *page);

/* fairq_sysfs.c */
int fairq_sysfs_add(struct fairq_dev *fd);
void fairq_sysfs_del(struct fairq_dev *fd);

/* fairq_configfs.c */
int fairq_configfs_init(void);
void fairq_configfs_exit(void);

#endif /* FAIRQ_H */
