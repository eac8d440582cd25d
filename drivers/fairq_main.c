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

/* every device's flows (sched/fq_flow.c), created as keys appear */
static struct kmem_cache *fairq_flow_cache;

/* fq_env.h: under a device's spinlock, so never sleeps; NULL when short */
void *fq_env_flow_alloc(size_t size)
{
	if (WARN_ON_ONCE(size != fq_sched_flow_size()))
		return NULL;
	return kmem_cache_zalloc(fairq_flow_cache, GFP_NOWAIT | __GFP_NOWARN);
}

void fq_env_flow_free(void *flow)
{
	kmem_cache_free(fairq_flow_cache, flow);
}

static int __init fairq_init(void)
{
	int ret;

	fairq_flow_cache = kmem_cache_create("fairq_flow", fq_sched_flow_size(),
					     0, 0, NULL);
	if (!fairq_flow_cache)
		return -ENOMEM;
	ret = fairq_configfs_init();
	if (ret) {
		kmem_cache_destroy(fairq_flow_cache);
		return ret;
	}
	pr_info("loaded\n");
	return 0;
}

/* configfs entries pin the module, so no device exists here */
static void __exit fairq_exit(void)
{
	fairq_configfs_exit();
	kmem_cache_destroy(fairq_flow_cache);
}

module_init(fairq_init);
module_exit(fairq_exit);

MODULE_DESCRIPTION("fairq: fair-queueing stacked block device");
MODULE_LICENSE("GPL");
