/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fairq_compat.h - every block-layer call fairq makes that changed after
 * Linux 6.1, behind one wrapper each.  Today: the 6.1 implementations.
 * A newer kernel is a LINUX_VERSION_CODE branch here and nowhere else.
 */
#ifndef FAIRQ_COMPAT_H
#define FAIRQ_COMPAT_H

#include <linux/blkdev.h>
#include <linux/err.h>

/* The lower device as opened (6.9 holds a struct file instead). */
struct fairq_lower {
	struct block_device *bdev;
};

#define FAIRQ_LOWER_MODE	(FMODE_READ | FMODE_WRITE | FMODE_EXCL)

/* 6.5: blk_mode_t and holder ops; 6.9: bdev_file_open_by_path() + file_bdev() */
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

/* 6.5: blkdev_put(bdev, holder); 6.9: bdev_fput(file) */
static inline void fairq_lower_close(struct fairq_lower *lower, void *holder)
{
	blkdev_put(lower->bdev, FAIRQ_LOWER_MODE);
	lower->bdev = NULL;
}

/*
 * A bio-based disk whose queue limits are stacked from @lower.
 * 6.9: blk_alloc_disk(&lim, node) takes the limits and returns ERR_PTR,
 * queue_limits_stack_bdev() replaces disk_stack_limits();
 * 6.11: write cache, FUA and rotational become lim.features bits.
 */
static inline struct gendisk *fairq_alloc_disk(struct block_device *lower)
{
	struct request_queue *q;
	struct gendisk *disk;

	disk = blk_alloc_disk(NUMA_NO_NODE);
	if (!disk)
		return ERR_PTR(-ENOMEM);
	q = disk->queue;
	blk_set_stacking_limits(&q->limits);
	disk_stack_limits(disk, lower, 0);
	blk_queue_write_cache(q, bdev_write_cache(lower), bdev_fua(lower));
	if (bdev_nonrot(lower))
		blk_queue_flag_set(QUEUE_FLAG_NONROT, q);
	else
		blk_queue_flag_clear(QUEUE_FLAG_NONROT, q);
	blk_queue_flag_set(QUEUE_FLAG_IO_STAT, q);
	return disk;
}

#endif /* FAIRQ_COMPAT_H */
