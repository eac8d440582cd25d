// SPDX-License-Identifier: GPL-2.0
/*
 * fairq_dev.c - device lifetime: allocation at mkdir, power on (open the
 * lower device, create /dev/NAME), power off (remove it, drain, release
 * the lower device), freeing at the last configfs reference.
 */
#include "fairq.h"

#include <linux/blk-mq.h>

#include <linux/ctype.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>

/* ->open, through fairq_bdops_open() (fairq_compat.h) */
int fairq_disk_open(struct gendisk *disk)
{
	struct fairq_dev *fd = disk->private_data;

	/* disk->open_mutex is held: pairs with the check in power-off */
	if (fd->closing)
		return -ENXIO;
	return 0;
}

const struct block_device_operations fairq_fops = {
	.owner		= THIS_MODULE,
	.submit_bio	= fairq_submit_bio,
	.open		= fairq_bdops_open,
};

/* [a-z0-9_-]{1,31}: a disk name that needs no quoting anywhere */
static bool fairq_name_valid(const char *name)
{
	size_t i, len = strlen(name);

	if (!len || len >= DISK_NAME_LEN)
		return false;
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (!(islower(c) || isdigit(c) || c == '_' || c == '-'))
			return false;
	}
	return true;
}

struct fairq_dev *fairq_dev_alloc(const char *name)
{
	struct fairq_dev *fd;

	if (!fairq_name_valid(name)) {
		pr_warn("%s: invalid name: want 1..%d of [a-z0-9_-]\n", name, DISK_NAME_LEN - 1);
		return ERR_PTR(-EINVAL);
	}
	fd = kzalloc(sizeof(*fd), GFP_KERNEL);
	if (!fd)
		return ERR_PTR(-ENOMEM);
	fd->fqs = fq_sched_create("cfq", get_random_u64());
	if (!fd->fqs)
		goto out_free;
	fd->wb_yield = fq_sched_writeback_yields(fd->fqs);
	if (fairq_io_init(fd))
		goto out_sched;
	strscpy(fd->name, name, sizeof(fd->name));
	fd->classify = FAIRQ_CLASSIFY_TGID;
	mutex_init(&fd->cfg_lock);
	mutex_init(&fd->tun_lock);
	fairq_cgw_init(&fd->cgw);
	fairq_lower_init(fd);
	fairq_trace_add(fd);
	return fd;

out_sched:
	fq_sched_destroy(fd->fqs);
out_free:
	kfree(fd);
	return ERR_PTR(-ENOMEM);
}

/* Last configfs reference: the device was powered off in drop_item. */
void fairq_dev_free(struct fairq_dev *fd)
{
	if (WARN_ON_ONCE(fd->disk))
		return;
	fairq_trace_del(fd);
	fairq_io_exit(fd);
	fq_sched_destroy(fd->fqs);
	kfree(fd->backing);
	kfree(fd);
}

/* Refuse a lower device that is, or sits on, this very fairq device. */
static int fairq_check_loop(struct fairq_dev *fd, struct block_device *bdev)
{
	int ret = 0;

	lockdep_assert_held(&fd->cfg_lock);

	/*
	 * Each fairq below is held open by the one above, so it cannot
	 * power off; one removed by rmdir anyway clears its private_data
	 * under fairq_stack_lock (fairq_detach_disk()) before it releases
	 * its lower device or can be freed.
	 */
	mutex_lock(&fairq_stack_lock);
	while (bdev && bdev->bd_disk->fops == &fairq_fops) {
		struct fairq_dev *below = bdev->bd_disk->private_data;

		if (!below)
			break;
		if (below == fd) {
			ret = -ELOOP;
			break;
		}
		bdev = below->lower.bdev;
	}
	mutex_unlock(&fairq_stack_lock);
	return ret;
}

/* After del_gendisk(): a fairq stacked on us may keep the disk. */
static void fairq_detach_disk(struct gendisk *disk)
{
	mutex_lock(&fairq_stack_lock);
	disk->private_data = NULL;
	mutex_unlock(&fairq_stack_lock);
}

/* A disk of that name would clash in /sys/class/block. */
static bool fairq_name_taken(struct gendisk *disk, const char *name)
{
	struct device *dev;

	dev = class_find_device_by_name(disk_to_dev(disk)->class, name);
	if (!dev)
		return false;
	put_device(dev);
	return true;
}

static struct gendisk *fairq_setup_disk(struct fairq_dev *fd, const char **why)
{
	struct block_device *lower = fd->lower.bdev;
	struct gendisk *disk;

	disk = fairq_alloc_disk(lower, fd->name);
	if (IS_ERR(disk))
		return disk;
	if (fairq_name_taken(disk, fd->name)) {
		*why = "a block device of that name exists";
		put_disk(disk);
		return ERR_PTR(-EEXIST);
	}
	/* major 0, minors 0: add_disk() takes a dev_t from the ext range */
	disk->fops = &fairq_fops;
	disk->private_data = fd;
	disk->flags |= GENHD_FL_NO_PART;
	strscpy(disk->disk_name, fd->name, sizeof(disk->disk_name));
	set_capacity(disk, bdev_nr_sectors(lower));
	return disk;
}

/* Open backing exclusively (holder: fd) and check it can be stacked on. */
static int fairq_claim_lower(struct fairq_dev *fd, const char **why)
{
	int ret;

	if (!fd->backing) {
		*why = "backing is not set";
		return -EINVAL;
	}
	ret = fairq_lower_open(&fd->lower, fd->backing, fd);
	if (ret) {
		*why = "cannot open backing (exclusively, read-write)";
		return ret;
	}
	ret = fairq_check_loop(fd, fd->lower.bdev);
	if (ret) {
		*why = "backing is this device";
		goto out_close;
	}
	if (bdev_is_zoned(fd->lower.bdev)) {
		*why = "zoned backing devices are not supported";
		ret = -EOPNOTSUPP;
		goto out_close;
	}
	return 0;

out_close:
	fairq_lower_close(&fd->lower, fd);
	return ret;
}

/*
 * depth=auto starts from what the lower device itself offers: a blk-mq
 * device's tag depth (its hardware queue depth, which nr_requests doubles
 * under an I/O scheduler), else its nr_requests.  The core clamps it to
 * [1, depth_max].
 */
static void fairq_seed_depth(struct fairq_dev *fd)
{
	struct request_queue *q = bdev_get_queue(fd->lower.bdev);
	unsigned long depth = q->nr_requests;

	if (queue_is_mq(q) && q->tag_set && q->tag_set->queue_depth)
		depth = q->tag_set->queue_depth;
	mutex_lock(&fd->tun_lock);
	spin_lock_irq(&fd->lock);
	fq_sched_seed_depth(fd->fqs, (u32)min_t(unsigned long, depth, U32_MAX));
	spin_unlock_irq(&fd->lock);
	mutex_unlock(&fd->tun_lock);
}

int fairq_power_on(struct fairq_dev *fd, const char **why)
{
	struct gendisk *disk;
	int ret;

	lockdep_assert_held(&fd->cfg_lock);

	if (fd->disk)
		return 0;
	if (fd->dead)
		return -ENODEV;
	ret = fairq_claim_lower(fd, why);
	if (ret)
		return ret;
	fairq_seed_depth(fd);
	ret = bioset_init(&fd->bs, BIO_POOL_SIZE, offsetof(struct fairq_io, clone),
			  BIOSET_NEED_RESCUER);
	if (ret)
		goto out_close;
	/* its own pool: a piece and its clone must not wait for each other */
	ret = bioset_init(&fd->split_bs, BIO_POOL_SIZE, 0, BIOSET_NEED_RESCUER);
	if (ret)
		goto out_bioset;
	/*
	 * Dispatch only: WQ_MEM_RECLAIM, so that I/O makes progress under
	 * memory pressure.  The work that allocates the core's flow table
	 * runs elsewhere (fairq_table_work()).
	 */
	fd->wq = alloc_workqueue("fairq_%s", WQ_MEM_RECLAIM | WQ_HIGHPRI, 0, fd->name);
	if (!fd->wq) {
		ret = -ENOMEM;
		goto out_split_bs;
	}
	disk = fairq_setup_disk(fd, why);
	if (IS_ERR(disk)) {
		ret = PTR_ERR(disk);
		goto out_wq;
	}

	fd->closing = false;
	fairq_io_start(fd);
	ret = add_disk(disk);
	if (ret) {
		*why = "add_disk failed";
		goto out_stop;
	}
	fd->disk = disk;
	/* holders/ and slaves/ links: lsblk shows the stack */
	ret = bd_link_disk_holder(fd->lower.bdev, disk);
	if (ret)
		goto out_del;
	ret = fairq_sysfs_add(fd);
	if (ret)
		goto out_unlink;
	fairq_lower_watch_start(fd);
	pr_info("%s: on %pg, %llu sectors\n", fd->name, fd->lower.bdev,
		(unsigned long long)get_capacity(disk));
	return 0;

out_unlink:
	bd_unlink_disk_holder(fd->lower.bdev, disk);
out_del:
	fd->disk = NULL;
	del_gendisk(disk);
out_stop:
	fairq_io_stop(fd);
	fairq_detach_disk(disk);
	put_disk(disk);
out_wq:
	destroy_workqueue(fd->wq);
	fd->wq = NULL;
out_split_bs:
	bioset_exit(&fd->split_bs);
out_bioset:
	bioset_exit(&fd->bs);
out_close:
	fairq_lower_close(&fd->lower, fd);
	return ret;
}

/*
 * @force (rmdir): tear down even while open; del_gendisk() fails new
 * I/O and everything already accepted still completes normally.
 * Waits for the lower device (the flush, the drain, the release's sync)
 * holding only this device's cfg_lock.
 */
int fairq_power_off(struct fairq_dev *fd, bool force, const char **why)
{
	struct gendisk *disk = fd->disk;

	lockdep_assert_held(&fd->cfg_lock);

	if (!disk)
		return 0;
	mutex_lock(&disk->open_mutex);
	if (!force && disk_openers(disk)) {
		mutex_unlock(&disk->open_mutex);
		*why = "device is open or mounted";
		return -EBUSY;
	}
	fd->closing = true;
	mutex_unlock(&disk->open_mutex);

	fairq_lower_watch_stop(fd);
	/* waits for sysfs handlers; they never take cfg_lock */
	fairq_sysfs_del(fd);
	bd_unlink_disk_holder(fd->lower.bdev, disk);
	/* flushes the page cache through us, then fences submit_bio */
	del_gendisk(disk);
	fairq_io_stop(fd);
	/* fd may be freed soon */
	fairq_detach_disk(disk);
	put_disk(disk);
	fd->disk = NULL;
	destroy_workqueue(fd->wq);
	fd->wq = NULL;
	bioset_exit(&fd->split_bs);
	bioset_exit(&fd->bs);
	fairq_lower_close(&fd->lower, fd);
	pr_info("%s: powered off\n", fd->name);
	return 0;
}
