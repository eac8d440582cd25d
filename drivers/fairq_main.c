// SPDX-License-Identifier: GPL-2.0
/*
 * fairq - a stacked bio-based block driver that queues every bio per
 * flow (process, thread, cgroup or user) and lets a fair-queueing policy
 * (sched/) choose what goes down to the lower device next, with a bounded
 * number in flight.  Descends from Jens Axboe's SFQ and CFQ (Linux 2.5).
 *
 * Devices are made in configfs (fairq_configfs.c); no module parameters.
 */
#include "fairq.h"

#include <linux/module.h>

/* the loop check's walk down the stack vs. a device leaving its disk */
DEFINE_MUTEX(fairq_stack_lock);

static int __init fairq_init(void)
{
	int ret;

	ret = fairq_configfs_init();
	if (ret)
		return ret;
	pr_info("loaded\n");
	return 0;
}

/* configfs entries pin the module, so no device exists here */
static void __exit fairq_exit(void)
{
	fairq_configfs_exit();
}

module_init(fairq_init);
module_exit(fairq_exit);

MODULE_DESCRIPTION("fairq: fair-queueing stacked block device");
MODULE_LICENSE("GPL");
