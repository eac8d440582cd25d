// SPDX-License-Identifier: GPL-2.0
/*
 * fairq_configfs.c - /sys/kernel/config/fairq/NAME, null_blk's model:
 * mkdir creates a powered-off device, attributes configure it, power=1
 * creates /dev/NAME, rmdir tears down and frees.
 *
 * Every item pins the module: configfs_mkdir() takes a reference on the
 * subsystem's and the item type's ct_owner and configfs_rmdir() drops
 * them, so rmmod fails while any entry exists.
 *
 * rmdir of a powered device waits for its teardown FAIRQ_CFS_RMDIR_WAIT
 * at most.  configfs calls drop_item under its subsystem mutex and the
 * parent directory's lock, and the teardown waits for the lower device
 * (the flush, every clone, the release's sync): a wedged lower would hold
 * every mkdir, rmdir and listing of /sys/kernel/config/fairq until it
 * resumed.  So drop_item hands the device to a work item
 * (fairq_cfs_teardown), which powers it off under the device's own
 * cfg_lock and then drops the item, and returns when it is done or when
 * the wait is over, whichever comes first.  Until the teardown is done
 * the device pins the module and its name: power=1 of a new entry of
 * that name waits for it (killable); the lower device stays claimed, so
 * another name on it gets EBUSY meanwhile.
 */
#include "fairq.h"

#include <linux/completion.h>
#include <linux/module.h>
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/string.h>

/*
 * How long rmdir waits for a teardown before it leaves it to the work
 * item: a healthy lower device drains well within it, so rmdir returns
 * with the disk gone as a script expects; a wedged one holds configfs's
 * locks no longer than this.
 */
#define FAIRQ_CFS_RMDIR_WAIT	HZ

/* A powered device rmdir'ed, being torn down (fairq_cfs_drop_item()). */
struct fairq_cfs_teardown {
	struct work_struct work;
	struct list_head node;		/* on fairq_cfs_dying */
	struct fairq_dev *fd;
	struct completion done;		/* the teardown ended */
	refcount_t ref;			/* the work item's and drop_item's */
};

/* teardowns of rmdir'ed devices; destroyed (drained) at module exit */
static struct workqueue_struct *fairq_cfs_wq;
/* the teardowns not done yet, under fairq_cfs_dying_lock */
static LIST_HEAD(fairq_cfs_dying);
static DEFINE_SPINLOCK(fairq_cfs_dying_lock);
/* woken as each teardown ends */
static DECLARE_WAIT_QUEUE_HEAD(fairq_cfs_gone);

/* Whether a device named @name is still being torn down. */
static bool fairq_cfs_dying_name(const char *name)
{
	struct fairq_cfs_teardown *td;
	bool found = false;

	spin_lock(&fairq_cfs_dying_lock);
	list_for_each_entry(td, &fairq_cfs_dying, node) {
		if (!strcmp(td->fd->name, name)) {
			found = true;
			break;
		}
	}
	spin_unlock(&fairq_cfs_dying_lock);
	return found;
}

/*
 * One attribute and its show/store pair, all through fairq_tunables.c.
 * It ends in a function body, so that a list of them needs no ';'.
 */
#define FAIRQ_CFS_ATTR(_name)							\
static ssize_t fairq_cfs_##_name##_show(struct config_item *item, char *page);	\
static ssize_t fairq_cfs_##_name##_store(struct config_item *item,		\
					 const char *page, size_t count);	\
CONFIGFS_ATTR(fairq_cfs_, _name);						\
static ssize_t fairq_cfs_##_name##_show(struct config_item *item, char *page)	\
{										\
	return fairq_attr_show(to_fairq_dev(item), #_name, page);		\
}										\
static ssize_t fairq_cfs_##_name##_store(struct config_item *item,		\
					 const char *page, size_t count)		\
{										\
	int ret = fairq_attr_store(to_fairq_dev(item), #_name, page);		\
										\
	return ret ? ret : count;						\
}

FAIRQ_CFS_ATTR(backing)
FAIRQ_CFS_ATTR(classify)
FAIRQ_CFS_ATTR(cgroup_weights)

/* the core's tunables, one attribute each */
#define FQ_TUNABLE(_name, ...)	FAIRQ_CFS_ATTR(_name)
#include "fq_tunables_table.h"
#undef FQ_TUNABLE
#undef FAIRQ_CFS_ATTR

/*
 * power: as every attribute, but power=1 first waits until no device of
 * this name is still being torn down (its disk would hold the name).
 */
static ssize_t fairq_cfs_power_show(struct config_item *item, char *page)
{
	return fairq_attr_show(to_fairq_dev(item), "power", page);
}

static ssize_t fairq_cfs_power_store(struct config_item *item,
				     const char *page, size_t count)
{
	struct fairq_dev *fd = to_fairq_dev(item);
	bool on;
	int ret;

	if (!kstrtobool(page, &on) && on &&
	    wait_event_killable(fairq_cfs_gone, !fairq_cfs_dying_name(fd->name)))
		return -EINTR;
	ret = fairq_attr_store(fd, "power", page);
	return ret ? ret : count;
}

CONFIGFS_ATTR(fairq_cfs_, power);

static ssize_t fairq_cfs_features_show(struct config_item *item, char *page);
CONFIGFS_ATTR_RO(fairq_cfs_, features);

static struct configfs_attribute *fairq_cfs_attrs[] = {
	&fairq_cfs_attr_backing,
	&fairq_cfs_attr_power,
	&fairq_cfs_attr_classify,
	&fairq_cfs_attr_cgroup_weights,
#define FQ_TUNABLE(_name, ...)	(&fairq_cfs_attr_##_name),
#include "fq_tunables_table.h"
#undef FQ_TUNABLE
	&fairq_cfs_attr_features,
	NULL,
};

/* Every attribute above but this one, comma-separated. */
static ssize_t fairq_cfs_features_show(struct config_item *item, char *page)
{
	struct configfs_attribute **attr;
	ssize_t len = 0;

	for (attr = fairq_cfs_attrs; *attr; attr++) {
		if (*attr == &fairq_cfs_attr_features)
			continue;
		len += sysfs_emit_at(page, len, "%s%s", len ? "," : "", (*attr)->ca_name);
	}
	len += sysfs_emit_at(page, len, "\n");
	return len;
}

static void fairq_cfs_release(struct config_item *item)
{
	fairq_dev_free(to_fairq_dev(item));
}

static struct configfs_item_operations fairq_cfs_item_ops = {
	.release	= fairq_cfs_release,
};

static const struct config_item_type fairq_cfs_dev_type = {
	.ct_item_ops	= &fairq_cfs_item_ops,
	.ct_attrs	= fairq_cfs_attrs,
	.ct_owner	= THIS_MODULE,
};

static struct config_item *fairq_cfs_make_item(struct config_group *group,
					       const char *name)
{
	struct fairq_dev *fd = fairq_dev_alloc(name);

	if (IS_ERR(fd))
		return ERR_CAST(fd);
	config_item_init_type_name(&fd->item, name, &fairq_cfs_dev_type);
	return &fd->item;
}

/* Mark @fd removed and power it off even while open (rmdir cannot be refused). */
static void fairq_cfs_kill(struct fairq_dev *fd)
{
	const char *why = NULL;

	mutex_lock(&fd->cfg_lock);
	fd->dead = true;
	fairq_power_off(fd, true, &why);
	mutex_unlock(&fd->cfg_lock);
}

static void fairq_cfs_teardown_work(struct work_struct *work)
{
	struct fairq_cfs_teardown *td = container_of(work, struct fairq_cfs_teardown, work);
	struct fairq_dev *fd = td->fd;

	fairq_cfs_kill(fd);
	spin_lock(&fairq_cfs_dying_lock);
	list_del(&td->node);
	spin_unlock(&fairq_cfs_dying_lock);
	wake_up_all(&fairq_cfs_gone);
	/* the configfs reference drop_item left to us: may free fd */
	config_item_put(&fd->item);
	complete(&td->done);
	if (refcount_dec_and_test(&td->ref))
		kfree(td);
	/* fairq_configfs_exit() drains fairq_cfs_wq before the module goes */
	module_put(THIS_MODULE);
}

/*
 * rmdir: a powered-off device is dropped at once.  A powered one is torn
 * down by a work item, waited for FAIRQ_CFS_RMDIR_WAIT at most, so that
 * configfs's locks are not held while the teardown waits for a wedged
 * lower device.  No attribute store of @item runs now or later
 * (configfs_rmdir() waited for them), so cfg_lock is free here.
 */
static void fairq_cfs_drop_item(struct config_group *group, struct config_item *item)
{
	struct fairq_dev *fd = to_fairq_dev(item);
	struct fairq_cfs_teardown *td = NULL;
	bool powered;

	mutex_lock(&fd->cfg_lock);
	powered = fd->disk;
	mutex_unlock(&fd->cfg_lock);
	if (powered)
		td = kmalloc(sizeof(*td), GFP_KERNEL);
	if (!td) {
		/* (or, short of memory, here under configfs's locks) */
		fairq_cfs_kill(fd);
		config_item_put(item);
		return;
	}
	INIT_WORK(&td->work, fairq_cfs_teardown_work);
	td->fd = fd;
	init_completion(&td->done);
	refcount_set(&td->ref, 2);
	spin_lock(&fairq_cfs_dying_lock);
	list_add_tail(&td->node, &fairq_cfs_dying);
	spin_unlock(&fairq_cfs_dying_lock);
	/* configfs holds the module here: safe to take another reference */
	__module_get(THIS_MODULE);
	queue_work(fairq_cfs_wq, &td->work);
	if (wait_for_completion_timeout(&td->done, FAIRQ_CFS_RMDIR_WAIT)) {
		/* its module reference too: rmmod may follow rmdir at once */
		flush_work(&td->work);
	} else {
		pr_info("%s: rmdir: the lower device holds the teardown; it goes on in the background\n",
			fd->name);
	}
	if (refcount_dec_and_test(&td->ref))
		kfree(td);
}

static struct configfs_group_operations fairq_cfs_group_ops = {
	.make_item	= fairq_cfs_make_item,
	.drop_item	= fairq_cfs_drop_item,
};

static const struct config_item_type fairq_cfs_group_type = {
	.ct_group_ops	= &fairq_cfs_group_ops,
	.ct_owner	= THIS_MODULE,
};

static struct configfs_subsystem fairq_cfs_subsys = {
	.su_group = {
		.cg_item = {
			.ci_namebuf	= "fairq",
			.ci_type	= &fairq_cfs_group_type,
		},
	},
};

int fairq_configfs_init(void)
{
	int ret;

	/* unbound: one teardown waiting for its lower holds up no other */
	fairq_cfs_wq = alloc_workqueue("fairq_rmdir", WQ_UNBOUND, 0);
	if (!fairq_cfs_wq)
		return -ENOMEM;
	config_group_init(&fairq_cfs_subsys.su_group);
	mutex_init(&fairq_cfs_subsys.su_mutex);
	ret = configfs_register_subsystem(&fairq_cfs_subsys);
	if (ret)
		destroy_workqueue(fairq_cfs_wq);
	return ret;
}

/*
 * No teardown is pending (each holds a module reference), but the last
 * one may still be returning from its work function.
 */
void fairq_configfs_exit(void)
{
	configfs_unregister_subsystem(&fairq_cfs_subsys);
	destroy_workqueue(fairq_cfs_wq);
}
