// SPDX-License-Identifier: GPL-2.0
/*
 * fairq_lower.c - following the lower device while powered on: its size
 * and its read-only state change under us (a dm table reload, blockdev
 * --setro, a resized LUN) and nothing tells a stacked driver: there is
 * no notifier, and dm itself re-reads its devices only at table load.
 *
 * So fairq looks: once a second from a delayed work item, and at once
 * after any clone fails, a write meets a read-only lower or a REQ_NOWAIT
 * bio meets a lower that no longer takes the flag.  A change is
 * mirrored onto the fairq disk with set_capacity_and_notify() (uevent,
 * "detected capacity change"), set_disk_ro() and fairq_disk_set_nowait()
 * (fairq_compat.h).  Between a change and
 * the next look nothing is lost: the lower device itself fails I/O past
 * its new end (bio_check_eod; a size of 0 is a vanished device and is not
 * mirrored), and writes are checked against the
 * lower's read-only state on every bio (fairq_lower_refuses()), when it
 * comes and again when a queued one goes down, because the block layer
 * only warns about writes to a read-only device; and a clone loses
 * REQ_NOWAIT when the lower does not take it (fairq_clone()), which the
 * lower would otherwise fail with BLK_STS_NOTSUPP.
 */
#include "fairq.h"

#include <linux/jiffies.h>

/* how often an idle device looks at its lower device [ms] */
#define FAIRQ_LOWER_CHECK_MS	1000

/*
 * The disk takes REQ_NOWAIT exactly when the lower does.  Bios already
 * past the disk's own check keep the flag and lose it on their clone.
 */
static void fairq_lower_check_nowait(struct fairq_dev *fd)
{
	struct block_device *lower = fd->lower.bdev;
	bool nowait = bdev_nowait(lower);
	int ret;

	if (nowait == bdev_nowait(fd->disk->part0))
		return;
	ret = fairq_disk_set_nowait(fd->disk, nowait);
	if (ret)
		pr_warn_ratelimited("%s: %pg %s REQ_NOWAIT; the disk could not follow: %d\n",
				    fd->name, lower, nowait ? "takes" : "no longer takes", ret);
	else
		pr_info("%s: REQ_NOWAIT %s, as on %pg\n", fd->name,
			nowait ? "taken" : "no longer taken", lower);
}

/* Mirror the lower's read-only state, size and NOWAIT onto the fairq disk. */
static void fairq_lower_check(struct fairq_dev *fd)
{
	struct block_device *lower = fd->lower.bdev;
	struct gendisk *disk = fd->disk;
	sector_t size = bdev_nr_sectors(lower);
	bool ro = bdev_read_only(lower);

	if (ro != fd->lower_ro) {
		pr_info("%s: %pg is now read-%s\n", fd->name, lower, ro ? "only" : "write");
		fd->lower_ro = ro;
		set_disk_ro(disk, ro);
	}
	fairq_lower_check_nowait(fd);
	/*
	 * Logs "detected capacity change" and sends a RESIZE=1 uevent.  A
	 * size of 0 is a lower device that went away (hot-unplugged, its
	 * driver dead), not one that shrank: fairq0 keeps its size, so I/O
	 * to it fails with EIO from the lower device instead of ending at
	 * an end of device that reads as success.
	 */
	if (size && get_capacity(disk) != size)
		set_capacity_and_notify(disk, size);
}

static void fairq_lower_work(struct work_struct *work)
{
	struct fairq_dev *fd = container_of(to_delayed_work(work), struct fairq_dev,
					    lower_work);
	unsigned long flags;

	fairq_lower_check(fd);
	spin_lock_irqsave(&fd->lock, flags);
	if (fd->lower_watch)
		queue_delayed_work(system_wq, &fd->lower_work,
				   msecs_to_jiffies(FAIRQ_LOWER_CHECK_MS));
	spin_unlock_irqrestore(&fd->lock, flags);
}

/* Once per device, at mkdir. */
void fairq_lower_init(struct fairq_dev *fd)
{
	INIT_DELAYED_WORK(&fd->lower_work, fairq_lower_work);
}

/* Power-on, once the disk is live: look now, then every second. */
void fairq_lower_watch_start(struct fairq_dev *fd)
{
	unsigned long flags;

	lockdep_assert_held(&fd->cfg_lock);

	fd->lower_ro = false;	/* a read-only lower cannot be opened for write */
	spin_lock_irqsave(&fd->lock, flags);
	fd->lower_watch = true;
	queue_delayed_work(system_wq, &fd->lower_work, 0);
	spin_unlock_irqrestore(&fd->lock, flags);
}

/* Power-off, before del_gendisk(): no look runs or is queued after this. */
void fairq_lower_watch_stop(struct fairq_dev *fd)
{
	unsigned long flags;

	lockdep_assert_held(&fd->cfg_lock);

	spin_lock_irqsave(&fd->lock, flags);
	fd->lower_watch = false;
	spin_unlock_irqrestore(&fd->lock, flags);
	cancel_delayed_work_sync(&fd->lower_work);
}

/* Look at the lower device now (any context: clone completions). */
void fairq_lower_check_soon(struct fairq_dev *fd)
{
	unsigned long flags;

	spin_lock_irqsave(&fd->lock, flags);
	if (fd->lower_watch)
		mod_delayed_work(system_wq, &fd->lower_work, 0);
	spin_unlock_irqrestore(&fd->lock, flags);
}

/*
 * A write (not an empty flush, as in the block layer's own check) to a
 * read-only lower device: fail it here.  6.1 and 6.12 only warn and let
 * it through, so without this a file system above would write to a
 * device its administrator made read-only.
 */
bool fairq_lower_refuses(struct fairq_dev *fd, struct bio *bio)
{
	if (likely(!bdev_read_only(fd->lower.bdev)))
		return false;
	if (op_is_flush(bio->bi_opf) && !bio_sectors(bio))
		return false;
	pr_warn_ratelimited("%s: %pg is read-only: write of %u bytes at sector %llu failed\n",
			    fd->name, fd->lower.bdev, bio->bi_iter.bi_size,
			    (unsigned long long)bio->bi_iter.bi_sector);
	fairq_lower_check_soon(fd);
	return true;
}
