// SPDX-License-Identifier: GPL-2.0
/*
 * fairq_trace.c - the object that holds fairq's trace events
 * (fairq_trace.h), and what their records need: an op as letters, bytes
 * as the core counts them, and the device a core instance belongs to.
 *
 * The core's hooks (sched/fq_env.h) report an instance, not a device:
 * the devices that exist, mkdir to release, are on a list that a record
 * reads under RCU, only while an event is on.
 */
#include "fairq.h"

#include <linux/rculist.h>

static LIST_HEAD(fairq_trace_devs);
/* writers of fairq_trace_devs; readers take rcu_read_lock() */
static DEFINE_SPINLOCK(fairq_trace_lock);

/* At mkdir: @fd's core may report from now on. */
void fairq_trace_add(struct fairq_dev *fd)
{
	spin_lock(&fairq_trace_lock);
	list_add_tail_rcu(&fd->trace_node, &fairq_trace_devs);
	spin_unlock(&fairq_trace_lock);
}

/* At release, before its core is destroyed: no record still reads @fd. */
void fairq_trace_del(struct fairq_dev *fd)
{
	spin_lock(&fairq_trace_lock);
	list_del_rcu(&fd->trace_node);
	spin_unlock(&fairq_trace_lock);
	synchronize_rcu();
}

/* @name: the name of the device @fqs schedules, "" if none (yet). */
static void fairq_trace_name(char *name, const struct fq_sched *fqs)
{
	struct fairq_dev *fd;

	memset(name, 0, DISK_NAME_LEN);
	rcu_read_lock();
	list_for_each_entry_rcu(fd, &fairq_trace_devs, trace_node) {
		if (fd->fqs == fqs) {
			memcpy(name, fd->name, DISK_NAME_LEN);
			break;
		}
	}
	rcu_read_unlock();
}

/* what the core counts for @rq (fq_rq_bytes()) */
static u32 fairq_trace_bytes(const struct fq_req *rq)
{
	return rq->flags & FQ_REQ_NODATA ? FQ_NODATA_BYTES : rq->bytes;
}

/* @op: R or W (D without data), then S if sync, A if read-ahead */
static void fairq_trace_op(char *op, u32 flags)
{
	int i = 0;

	if (flags & FQ_REQ_NODATA)
		op[i++] = 'D';
	else
		op[i++] = flags & FQ_REQ_WRITE ? 'W' : 'R';
	if (flags & FQ_REQ_SYNC)
		op[i++] = 'S';
	if (flags & FQ_REQ_RAHEAD)
		op[i++] = 'A';
	op[i] = '\0';
}

#define CREATE_TRACE_POINTS
#include "fairq_trace.h"
