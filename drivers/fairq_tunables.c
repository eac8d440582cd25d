// SPDX-License-Identifier: GPL-2.0
/*
 * fairq_tunables.c - one get and one set per attribute, shared by
 * configfs and sysfs (nbd's ioctl/netlink pattern): both interfaces call
 * fairq_attr_show() / fairq_attr_store() with the attribute's name.
 *
 * The driver owns backing, power and classify; every other name goes to
 * the sched core, which parses and range-checks (fq_sched_set()).  A
 * failed store changes nothing, returns the errno and logs one line.
 */
#include "fairq.h"

#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>

static const char *const fairq_classify_names[FAIRQ_CLASSIFY_COUNT] = {
	[FAIRQ_CLASSIFY_TGID]	= "tgid",
	[FAIRQ_CLASSIFY_PID]	= "pid",
	[FAIRQ_CLASSIFY_CGROUP]	= "cgroup",
	[FAIRQ_CLASSIFY_UID]	= "uid",
};

const char *fairq_classify_name(int classify)
{
	if (classify < 0 || classify >= FAIRQ_CLASSIFY_COUNT)
		return "?";
	return fairq_classify_names[classify];
}

static ssize_t fairq_backing_show(struct fairq_dev *fd, char *page)
{
	ssize_t len;

	mutex_lock(&fd->tun_lock);
	len = sysfs_emit(page, "%s\n", fd->backing ?: "");
	mutex_unlock(&fd->tun_lock);
	return len;
}

static int fairq_backing_store(struct fairq_dev *fd, const char *buf, const char **why)
{
	char *path, *old;
	dev_t devt;
	int ret;

	/* strim() cuts the end only in place: skip leading blanks here */
	path = kstrdup(skip_spaces(buf), GFP_KERNEL);
	if (!path)
		return -ENOMEM;
	strim(path);
	ret = -EINVAL;
	if (!*path) {
		*why = "empty path";
		goto out_free;
	}
	/* exists, is a block device, may be opened by us */
	ret = lookup_bdev(path, &devt);
	if (ret)
		goto out_free;

	mutex_lock(&fd->cfg_lock);
	if (fd->disk) {
		mutex_unlock(&fd->cfg_lock);
		*why = "device is powered on";
		ret = -EBUSY;
		goto out_free;
	}
	mutex_lock(&fd->tun_lock);
	old = fd->backing;
	fd->backing = path;
	mutex_unlock(&fd->tun_lock);
	mutex_unlock(&fd->cfg_lock);
	kfree(old);
	return 0;

out_free:
	kfree(path);
	return ret;
}

static ssize_t fairq_power_show(struct fairq_dev *fd, char *page)
{
	return sysfs_emit(page, "%d\n", READ_ONCE(fd->disk) ? 1 : 0);
}

static int fairq_power_store(struct fairq_dev *fd, const char *buf, const char **why)
{
	unsigned int on;
	int ret;

	ret = kstrtouint(buf, 10, &on);
	if (ret || on > 1) {
		*why = "want 0 or 1";
		return -EINVAL;
	}
	mutex_lock(&fd->cfg_lock);
	if (on)
		ret = fairq_power_on(fd, why);
	else
		ret = fairq_power_off(fd, false, why);
	mutex_unlock(&fd->cfg_lock);
	return ret;
}

static ssize_t fairq_classify_show(struct fairq_dev *fd, char *page)
{
	return sysfs_emit(page, "%s\n", fairq_classify_name(READ_ONCE(fd->classify)));
}

static int fairq_classify_store(struct fairq_dev *fd, const char *buf, const char **why)
{
	int i;

	for (i = 0; i < FAIRQ_CLASSIFY_COUNT; i++) {
		if (sysfs_streq(buf, fairq_classify_names[i])) {
			WRITE_ONCE(fd->classify, i);
			/* new bios get new keys; queued ones keep their flow */
			fairq_kick(fd);
			return 0;
		}
	}
	*why = "want tgid, pid, cgroup or uid";
	return -EINVAL;
}

static ssize_t fairq_sched_show(struct fairq_dev *fd, const char *name, char *page)
{
	unsigned long flags;
	int ret;

	mutex_lock(&fd->tun_lock);
	spin_lock_irqsave(&fd->lock, flags);
	ret = fq_sched_get(fd->fqs, name, page, PAGE_SIZE);
	spin_unlock_irqrestore(&fd->lock, flags);
	mutex_unlock(&fd->tun_lock);
	return ret;
}

/* max_flows bounds the flows' memory: only while powered off, without fd->lock */
static int fairq_sched_store_alloc(struct fairq_dev *fd, const char *name,
				   const char *buf, const char **why)
{
	int ret;

	mutex_lock(&fd->cfg_lock);
	if (fd->disk) {
		*why = "device is powered on";
		ret = -EBUSY;
	} else {
		mutex_lock(&fd->tun_lock);
		ret = fq_sched_set(fd->fqs, name, buf);
		mutex_unlock(&fd->tun_lock);
	}
	mutex_unlock(&fd->cfg_lock);
	return ret;
}

static int fairq_sched_store(struct fairq_dev *fd, const char *name, const char *buf,
			     const char **why)
{
	unsigned long flags;
	int ret;

	if (fq_sched_set_needs_alloc(name))
		return fairq_sched_store_alloc(fd, name, buf, why);

	mutex_lock(&fd->tun_lock);
	spin_lock_irqsave(&fd->lock, flags);
	ret = fq_sched_set(fd->fqs, name, buf);
	if (!ret) {	/* max_queued may have been raised */
		fairq_wake_room(fd, 0);
		/* read lock-free by the fast path */
		WRITE_ONCE(fd->wb_yield, fq_sched_writeback_yields(fd->fqs));
	}
	/*
	 * A deeper queue or another policy may let bios go now; the work
	 * item resumes pass-through at the depth now in force.
	 */
	if (!ret && fd->running) {
		fairq_pass_refresh(fd);
		queue_work(fd->wq, &fd->dispatch_work);
	}
	spin_unlock_irqrestore(&fd->lock, flags);
	mutex_unlock(&fd->tun_lock);
	return ret;
}

/* applies to bios submitted from now on, powered on or not */
static ssize_t fairq_cgweights_show(struct fairq_dev *fd, char *page)
{
	return fairq_cgw_show(&fd->cgw, page);
}

static int fairq_cgweights_store(struct fairq_dev *fd, const char *buf, const char **why)
{
	return fairq_cgw_store(&fd->cgw, buf, why);
}

struct fairq_attr_ops {
	const char *name;
	ssize_t (*show)(struct fairq_dev *fd, char *page);
	int (*store)(struct fairq_dev *fd, const char *buf, const char **why);
};

static const struct fairq_attr_ops fairq_own_attrs[] = {
	{ "backing",	fairq_backing_show,	fairq_backing_store },
	{ "power",	fairq_power_show,	fairq_power_store },
	{ "classify",	fairq_classify_show,	fairq_classify_store },
	{ "cgroup_weights", fairq_cgweights_show, fairq_cgweights_store },
};

static const struct fairq_attr_ops *fairq_own_attr(const char *name)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(fairq_own_attrs); i++)
		if (!strcmp(name, fairq_own_attrs[i].name))
			return &fairq_own_attrs[i];
	return NULL;
}

ssize_t fairq_attr_show(struct fairq_dev *fd, const char *name, char *page)
{
	const struct fairq_attr_ops *ops = fairq_own_attr(name);

	if (ops)
		return ops->show(fd, page);
	return fairq_sched_show(fd, name, page);
}

int fairq_attr_store(struct fairq_dev *fd, const char *name, const char *buf)
{
	const struct fairq_attr_ops *ops = fairq_own_attr(name);
	const char *why = NULL;
	int len, ret;

	if (ops)
		ret = ops->store(fd, buf, &why);
	else
		ret = fairq_sched_store(fd, name, buf, &why);
	if (ret) {
		/*
		 * The value as written, without its newline, at most 64
		 * bytes.  Not ratelimited: only root writes here, and each
		 * refusal must be explained.
		 */
		len = strcspn(buf, "\n");
		pr_warn("%s: %s: cannot set '%.*s'%s%s: %pe\n", fd->name, name,
			min(len, 64), buf, why ? ": " : "", why ?: "", ERR_PTR(ret));
	}
	return ret;
}
