// SPDX-License-Identifier: GPL-2.0
/*
 * fairq_configfs.c - /sys/kernel/config/fairq/NAME, null_blk's model:
 * mkdir creates a powered-off device, attributes configure it, power=1
 * creates /dev/NAME, rmdir tears down and frees.
 *
 * Every item pins the module: configfs_mkdir() takes a reference on the
 * subsystem's and the item type's ct_owner and configfs_rmdir() drops
 * them, so rmmod fails while any entry exists.
 */
#include "fairq.h"

#include <linux/string.h>

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
FAIRQ_CFS_ATTR(power)
FAIRQ_CFS_ATTR(classify)
FAIRQ_CFS_ATTR(cgroup_weights)

/* the core's tunables, one attribute each */
#define FQ_TUNABLE(_name, ...)	FAIRQ_CFS_ATTR(_name)
#include "fq_tunables_table.h"
#undef FQ_TUNABLE
#undef FAIRQ_CFS_ATTR

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

/* rmdir cannot be refused: tear a powered device down anyway. */
static void fairq_cfs_drop_item(struct config_group *group, struct config_item *item)
{
	struct fairq_dev *fd = to_fairq_dev(item);
	const char *why = NULL;

	mutex_lock(&fd->cfg_lock);
	fd->dead = true;
	fairq_power_off(fd, true, &why);
	mutex_unlock(&fd->cfg_lock);
	config_item_put(item);
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
	config_group_init(&fairq_cfs_subsys.su_group);
	mutex_init(&fairq_cfs_subsys.su_mutex);
	return configfs_register_subsystem(&fairq_cfs_subsys);
}

void fairq_configfs_exit(void)
{
	configfs_unregister_subsystem(&fairq_cfs_subsys);
}
