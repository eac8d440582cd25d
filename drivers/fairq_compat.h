/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fairq_compat.h - every block-layer call fairq makes that changed after
 * Linux 6.1, behind one wrapper each, keyed on LINUX_VERSION_CODE.
 * Built and tested on Debian's 6.1 and 6.12 LTS kernels.
 */
#ifndef FAIRQ_COMPAT_H
#define FAIRQ_COMPAT_H

#include <linux/blkdev.h>
#include <linux/err.h>
#include <linux/file.h>
#include <linux/version.h>

/* The one reading of LINUX_VERSION_CODE: true on Linux maj.min and later. */
#define FAIRQ_SINCE(maj, min)	(KERNEL_VERSION(maj, min, 0) <= LINUX_VERSION_CODE)

/*
 * Between the two LTS kernels the same calls changed more than once
 * (6.5, 6.9, 6.11); only the first and the last state are written here.
 */
#if FAIRQ_SINCE(6, 5) && !FAIRQ_SINCE(6, 11)
#error "fairq builds for Linux 6.1 to 6.4 and 6.11 or later"
#endif

/* The lower device as opened. */
struct fairq_lower {
	struct block_device *bdev;
#if FAIRQ_SINCE(6, 9)
	struct file *file;	/* 6.9: a claimed block device is a file */
#endif
};

int fairq_disk_open(struct gendisk *disk);	/* fairq_dev.c */

#if FAIRQ_SINCE(6, 5)
/* 6.5: ->open() takes the gendisk and a blk_mode_t */
static inline int fairq_bdops_open(struct gendisk *disk, blk_mode_t mode)
{
	return fairq_disk_open(disk);
}
#else
static inline int fairq_bdops_open(struct block_device *bdev, fmode_t mode)
{
	return fairq_disk_open(bdev->bd_disk);
}
#endif

#if FAIRQ_SINCE(6, 9)
/* 6.9: bdev_file_open_by_path() + file_bdev(); a holder makes it exclusive */
static inline int fairq_lower_open(struct fairq_lower *lower, const char *path,
				   void *holder)
{
	struct file *file;

	file = bdev_file_open_by_path(path, BLK_OPEN_READ | BLK_OPEN_WRITE,
				      holder, NULL);
	if (IS_ERR(file))
		return PTR_ERR(file);
	lower->file = file;
	lower->bdev = file_bdev(file);
	return 0;
}

/* 6.9: bdev_fput() gives up the claim at once (fput() defers it) */
static inline void fairq_lower_close(struct fairq_lower *lower, void *holder)
{
	bdev_fput(lower->file);
	lower->file = NULL;
	lower->bdev = NULL;
}
#else
#define FAIRQ_LOWER_MODE	(FMODE_READ | FMODE_WRITE | FMODE_EXCL)

static inline int fairq_lower_open(struct fairq_lower *lower, const char *path,
				   void *holder)
{
	struct block_device *bdev;

	bdev = blkdev_get_by_path(path, FAIRQ_LOWER_MODE, holder);
	if (IS_ERR(bdev))
		return PTR_ERR(bdev);
	lower->bdev = bdev;
	return 0;
}

static inline void fairq_lower_close(struct fairq_lower *lower, void *holder)
{
	blkdev_put(lower->bdev, FAIRQ_LOWER_MODE);
	lower->bdev = NULL;
}
#endif

/*
 * A bio-based disk whose queue limits are stacked from @lower (@name
 * prefixes the block layer's misalignment warnings on 6.9 and later).
 * It always has a volatile write cache with FUA: the lower device may
 * gain a cache after power-on (write_cache "write back"), and PREFLUSH
 * and FUA must reach it then; one without a cache drops them at once
 * (submit_bio_noacct()).  Stable writes (pages not modified under I/O)
 * are required when the lower requires them.  REQ_NOWAIT is taken when
 * the lower takes it (fairq never sleeps on a REQ_NOWAIT bio), so
 * io_uring issues in the submitting task instead of an io-wq worker;
 * fairq_disk_set_nowait() follows the lower later.
 */
#if FAIRQ_SINCE(6, 11)
/*
 * 6.9: blk_alloc_disk(&lim, node) takes the limits and returns ERR_PTR;
 * 6.11: write cache, FUA, rotational and stable writes are lim.features
 * bits inherited by stacking, and bio-based disks opt in to I/O
 * accounting.
 */
static inline struct gendisk *fairq_alloc_disk(struct block_device *lower,
					       const char *name)
{
	struct queue_limits lim;

	blk_set_stacking_limits(&lim);
	/* 6.11: set before stacking, which clears it if the lower lacks it */
	lim.features |= BLK_FEAT_NOWAIT;
	queue_limits_stack_bdev(&lim, lower, 0, name);
	lim.features |= BLK_FEAT_IO_STAT | BLK_FEAT_WRITE_CACHE | BLK_FEAT_FUA;
	return blk_alloc_disk(&lim, NUMA_NO_NODE);
}
#else
static inline struct gendisk *fairq_alloc_disk(struct block_device *lower,
					       const char *name)
{
	struct request_queue *q;
	struct gendisk *disk;

	disk = blk_alloc_disk(NUMA_NO_NODE);
	if (!disk)
		return ERR_PTR(-ENOMEM);
	q = disk->queue;
	blk_set_stacking_limits(&q->limits);
	disk_stack_limits(disk, lower, 0);
	blk_queue_write_cache(q, true, true);
	/* a queue flag on 6.1: disk_stack_limits() does not copy it (dm sets it too) */
	if (bdev_stable_writes(lower))
		blk_queue_flag_set(QUEUE_FLAG_STABLE_WRITES, q);
	if (bdev_nonrot(lower))
		blk_queue_flag_set(QUEUE_FLAG_NONROT, q);
	else
		blk_queue_flag_clear(QUEUE_FLAG_NONROT, q);
	blk_queue_flag_set(QUEUE_FLAG_IO_STAT, q);
	/* not stacked on 6.1 either: dm sets it from its devices the same way */
	if (bdev_nowait(lower))
		blk_queue_flag_set(QUEUE_FLAG_NOWAIT, q);
	return disk;
}
#endif

/*
 * Whether @disk takes REQ_NOWAIT: bdev_nowait(disk->part0) reads it on
 * both kernels.  The lower device may gain or lose it after power-on (a
 * dm table reload onto a target with or without it); dm follows its own
 * targets the same way at each table load (dm_table_set_restrictions()).
 */
#if FAIRQ_SINCE(6, 11)
/*
 * 6.11: a feature in the queue limits, changed with an update of the
 * limits.  Only the feature bit changes (the limits stay as validated),
 * so the queue need not be frozen: a submitter sees the old or the new
 * word, and a clone that still carries REQ_NOWAIT to a lower without it
 * loses the flag in fairq_clone().  Process context.
 */
static inline int fairq_disk_set_nowait(struct gendisk *disk, bool on)
{
	struct queue_limits lim = queue_limits_start_update(disk->queue);

	if (on)
		lim.features |= BLK_FEAT_NOWAIT;
	else
		lim.features &= ~BLK_FEAT_NOWAIT;
	return queue_limits_commit_update(disk->queue, &lim);
}
#else
static inline int fairq_disk_set_nowait(struct gendisk *disk, bool on)
{
	if (on)
		blk_queue_flag_set(QUEUE_FLAG_NOWAIT, disk->queue);
	else
		blk_queue_flag_clear(QUEUE_FLAG_NOWAIT, disk->queue);
	return 0;
}
#endif

#endif /* FAIRQ_COMPAT_H */
