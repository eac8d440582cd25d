// SPDX-License-Identifier: GPL-2.0
/*
 * fairq_sysfs.c - /sys/block/NAME/fairq/: the tunables while powered on
 * (same functions as configfs), backing and max_flows read-only, stats.
 *
 * The kobject is allocated apart from fairq_dev and its release frees
 * only itself; kobject_del() in fairq_sysfs_del() waits for running
 * handlers, and fairq_power_off() calls it before del_gendisk().
 */
#include "fairq.h"

#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

/* flow lines in stats; 16 fit a page with room to spare */
#define FAIRQ_STATS_FLOWS	16
/* flows visited per hold of fd->lock while stats lists the busiest */
#define FAIRQ_STATS_STEP	256

struct fairq_kobj {
	struct kobject kobj;
	struct fairq_dev *fd;
};

static struct fairq_dev *kobj_to_fd(struct kobject *kobj)
{
	return container_of(kobj, struct fairq_kobj, kobj)->fd;
}

static ssize_t fairq_sysfs_show(struct kobject *kobj, struct kobj_attribute *attr,
				char *buf)
{
	return fairq_attr_show(kobj_to_fd(kobj), attr->attr.name, buf);
}

static ssize_t fairq_sysfs_store(struct kobject *kobj, struct kobj_attribute *attr,
				 const char *buf, size_t count)
{
	int ret = fairq_attr_store(kobj_to_fd(kobj), attr->attr.name, buf);

	return ret ? ret : count;
}

#define FAIRQ_SYSFS_RW(_name) \
static struct kobj_attribute fairq_sysfs_##_name = \
	__ATTR(_name, 0644, fairq_sysfs_show, fairq_sysfs_store)
#define FAIRQ_SYSFS_RO(_name) \
static struct kobj_attribute fairq_sysfs_##_name = \
	__ATTR(_name, 0444, fairq_sysfs_show, NULL)

FAIRQ_SYSFS_RO(backing);
FAIRQ_SYSFS_RW(classify);
FAIRQ_SYSFS_RW(cgroup_weights);

/*
 * The core's tunables (sched/fq_tunables_table.h).  One that bounds the
 * flows' memory (FQ_TK_ALLOC) changes only in configfs while powered off:
 * read-only here.
 */
#define FQ_TUNABLE(_name, _field, _kind, ...)					\
	[FQ_TUN_##_name] = __ATTR(_name, (_kind) == FQ_TK_ALLOC ? 0444 : 0644,	\
				  fairq_sysfs_show,				\
				  (_kind) == FQ_TK_ALLOC ? NULL : fairq_sysfs_store),
static struct kobj_attribute fairq_sysfs_tunables[FQ_TUN_COUNT] = {
#include "fq_tunables_table.h"
};
#undef FQ_TUNABLE
#undef FAIRQ_SYSFS_RW
#undef FAIRQ_SYSFS_RO

static const char *fairq_class_name(u16 ioprio)
{
	switch (FQ_IOPRIO_CLASS(ioprio)) {
	case FQ_CLASS_RT:
		return "rt";
	case FQ_CLASS_BE:
		return "be";
	case FQ_CLASS_IDLE:
		return "idle";
	default:
		return "none";
	}
}

/* @buf from fq_sched_get() ends in '\n': drop it */
static void fairq_chomp(char *buf)
{
	buf[strcspn(buf, "\n")] = '\0';
}

/*
 * @st counts what the core saw; pass-through bios (@pf) are added to the
 * request and byte counters, errors and inflight (docs/INTERFACE.md).
 */
static void fairq_add_pass(struct fq_stats *st, const struct fairq_pass_figs *pf)
{
	st->c.enq_reqs += pf->reqs;
	st->c.enq_bytes += pf->bytes;
	st->c.disp_reqs += pf->reqs;
	st->c.disp_bytes += pf->bytes;
	st->c.done_reqs += pf->done_reqs;
	st->c.done_bytes += pf->done_bytes;
	st->c.errors += pf->errors;
	st->inflight += pf->inflight;
}

static int fairq_emit_totals(char *buf, struct fairq_dev *fd, const struct fq_stats *st,
			     const struct fairq_pass_figs *pf, const char *policy,
			     const char *depth)
{
	const struct fq_counts *c = &st->c;
	int at = 0;

	at += sysfs_emit_at(buf, at, "policy %s\n", policy);
	at += sysfs_emit_at(buf, at, "classify %s\n",
			    fairq_classify_name(READ_ONCE(fd->classify)));
	at += sysfs_emit_at(buf, at, "depth %s\n", depth);
	at += sysfs_emit_at(buf, at, "queued %u\n", st->queued);
	at += sysfs_emit_at(buf, at, "inflight %u\n", st->inflight);
	at += sysfs_emit_at(buf, at, "flows %u\n", st->flows);
	at += sysfs_emit_at(buf, at, "flows_max %u\n", st->flows_max);
	at += sysfs_emit_at(buf, at, "enq_reqs %llu\n", c->enq_reqs);
	at += sysfs_emit_at(buf, at, "enq_bytes %llu\n", c->enq_bytes);
	at += sysfs_emit_at(buf, at, "disp_reqs %llu\n", c->disp_reqs);
	at += sysfs_emit_at(buf, at, "disp_bytes %llu\n", c->disp_bytes);
	at += sysfs_emit_at(buf, at, "done_reqs %llu\n", c->done_reqs);
	at += sysfs_emit_at(buf, at, "done_bytes %llu\n", c->done_bytes);
	at += sysfs_emit_at(buf, at, "errors %llu\n", c->errors);
	at += sysfs_emit_at(buf, at, "expired %llu\n", c->expired);
	at += sysfs_emit_at(buf, at, "expire_deferred %llu\n",
			    st->expire_deferred);
	at += sysfs_emit_at(buf, at, "wait_ns_sum %llu\n", c->wait_ns_sum);
	at += sysfs_emit_at(buf, at, "wait_ns_max %llu\n", c->wait_ns_max);
	at += sysfs_emit_at(buf, at, "svc_ns_sum %llu\n", c->svc_ns_sum);
	at += sysfs_emit_at(buf, at, "overflow_enq %llu\n", st->overflow_enq);
	at += sysfs_emit_at(buf, at, "perturbations %llu\n", st->perturbations);
	at += sysfs_emit_at(buf, at, "policy_switches %llu\n", st->policy_switches);
	at += sysfs_emit_at(buf, at, "idle_waits %llu\n", st->idle_waits);
	at += sysfs_emit_at(buf, at, "idle_served %llu\n", st->idle_served);
	at += sysfs_emit_at(buf, at, "async_held %llu\n", st->async_held);
	at += sysfs_emit_at(buf, at, "async_cut %llu\n", st->async_cut);
	at += sysfs_emit_at(buf, at, "passthrough_reqs %lld\n",
			    (long long)atomic64_read(&fd->passthrough));
	at += sysfs_emit_at(buf, at, "passthrough_errors %lld\n",
			    (long long)atomic64_read(&fd->passthrough_errs));
	at += sysfs_emit_at(buf, at, "fastpath_on %d\n", pf->on);
	at += sysfs_emit_at(buf, at, "fastpath_reqs %llu\n", pf->reqs);
	at += sysfs_emit_at(buf, at, "fastpath_stops %llu\n", pf->stops);
	at += sysfs_emit_at(buf, at, "inflight_max %u\n", pf->inflight_max);
	at += sysfs_emit_at(buf, at, "mem_bytes %u\n", st->mem_bytes);
	at += sysfs_emit_at(buf, at, "depth_now %u\n", st->depth_now);
	at += sysfs_emit_at(buf, at, "depth_auto %u\n", st->depth_auto);
	at += sysfs_emit_at(buf, at, "depth_changes %llu\n", st->depth_changes);
	at += sysfs_emit_at(buf, at, "depth_epochs %llu\n", st->depth_epochs);
	at += sysfs_emit_at(buf, at, "depth_idle_epochs %llu\n",
			    st->depth_idle_epochs);
	at += sysfs_emit_at(buf, at, "depth_reserved_epochs %llu\n",
			    st->depth_reserved_epochs);
	at += sysfs_emit_at(buf, at, "depth_full_ms %llu\n", st->depth_full_ms);
	at += sysfs_emit_at(buf, at, "lat_floor_ns %llu\n", st->lat_floor_ns);
	at += sysfs_emit_at(buf, at, "cost_read_ns %llu\n", st->cost_a_ns[0]);
	at += sysfs_emit_at(buf, at, "cost_read_ps_per_byte %llu\n",
			    st->cost_b_ps_per_byte[0]);
	at += sysfs_emit_at(buf, at, "cost_write_ns %llu\n", st->cost_a_ns[1]);
	at += sysfs_emit_at(buf, at, "cost_write_ps_per_byte %llu\n",
			    st->cost_b_ps_per_byte[1]);
	at += sysfs_emit_at(buf, at, "cost_epochs %llu\n", st->cost_epochs);
	return at;
}

/*
 * Flows are allocated as keys appear: how many, kept spare, the table
 * that finds them, and failed.
 */
static int fairq_emit_flow_mem(char *buf, int at, const struct fq_stats *st)
{
	at += sysfs_emit_at(buf, at, "flows_spare %u\n", st->flows_spare);
	at += sysfs_emit_at(buf, at, "flow_table_chains %u\n",
			    st->flow_table_chains);
	at += sysfs_emit_at(buf, at, "flow_allocs %llu\n", st->flow_allocs);
	at += sysfs_emit_at(buf, at, "flow_alloc_fails %llu\n", st->flow_alloc_fails);
	return at;
}

/* The interactive boost: flows boosted, requests it served, why it ended. */
static int fairq_emit_boost(char *buf, int at, const struct fq_stats *st)
{
	at += sysfs_emit_at(buf, at, "boost_starts %llu\n", st->boost_starts);
	at += sysfs_emit_at(buf, at, "boost_served %llu\n", st->boost_served);
	at += sysfs_emit_at(buf, at, "boost_end_time %llu\n", st->boost_end_time);
	at += sysfs_emit_at(buf, at, "boost_end_budget %llu\n",
			    st->boost_end_budget);
	at += sysfs_emit_at(buf, at, "boost_end_kind %llu\n", st->boost_end_kind);
	at += sysfs_emit_at(buf, at, "boost_end_size %llu\n", st->boost_end_size);
	at += sysfs_emit_at(buf, at, "boost_end_depth %llu\n",
			    st->boost_end_depth);
	return at;
}

/*
 * What keeps dispatch going, for a device that seems stuck (vm/init's
 * stall dump reads it): the hrtimer (armed, ns until it fires), the work
 * item, and the clones not yet completed (scheduled or passed through).
 */
static int fairq_emit_progress(char *buf, int at, struct fairq_dev *fd)
{
	bool armed, running;
	s64 left = 0;
	int pending;

	spin_lock_irq(&fd->lock);
	running = fd->running;
	armed = hrtimer_is_queued(&fd->timer);
	if (armed)
		left = ktime_to_ns(hrtimer_get_remaining(&fd->timer));
	spin_unlock_irq(&fd->lock);
	/* the +1 power-on holds while running is no clone */
	pending = atomic_read(&fd->pending) - running;

	at += sysfs_emit_at(buf, at, "timer_armed %d\n", armed);
	at += sysfs_emit_at(buf, at, "timer_in_ns %lld\n", (long long)max_t(s64, left, 0));
	at += sysfs_emit_at(buf, at, "work_pending %d\n", work_pending(&fd->dispatch_work));
	at += sysfs_emit_at(buf, at, "clones_pending %d\n", max(pending, 0));
	return at;
}

/* A flow line goes in whole or not at all. */
static int fairq_emit_flow(char *buf, int at, const struct fq_flow_info *f)
{
	char line[256];
	int len;

	len = scnprintf(line, sizeof(line),
			"flow key=%llu class=%s level=%u weight=%u queued=%u inflight=%u reqs=%llu bytes=%llu wait_ns_sum=%llu wait_ns_max=%llu\n",
			f->key, fairq_class_name(f->ioprio), FQ_IOPRIO_LEVEL(f->ioprio),
			f->weight, f->queued, f->inflight, f->c.disp_reqs, f->c.disp_bytes,
			f->c.wait_ns_sum, f->c.wait_ns_max);
	if (at + len >= PAGE_SIZE)
		return 0;
	return sysfs_emit_at(buf, at, "%s", line);
}

static ssize_t fairq_stats_show(struct kobject *kobj, struct kobj_attribute *attr,
				char *buf)
{
	struct fairq_dev *fd = kobj_to_fd(kobj);
	char policy[16] = "", depth[16] = "";
	struct fairq_pass_figs pf;
	struct fq_flow_info *flows;
	struct fq_flows_walk walk;
	struct fq_stats st;
	unsigned int i;
	bool more;
	int at;

	flows = kcalloc(FAIRQ_STATS_FLOWS, sizeof(*flows), GFP_KERNEL);
	if (!flows)
		return -ENOMEM;
	/* tun_lock across the walk: no second walk */
	mutex_lock(&fd->tun_lock);
	spin_lock_irq(&fd->lock);
	fq_sched_stats(fd->fqs, &st);
	fq_sched_get(fd->fqs, fq_sched_tunables[FQ_TUN_policy], policy, sizeof(policy));
	fq_sched_get(fd->fqs, fq_sched_tunables[FQ_TUN_depth], depth, sizeof(depth));
	fq_sched_flows_begin(fd->fqs, &walk, flows, FAIRQ_STATS_FLOWS);
	spin_unlock_irq(&fd->lock);
	/* every flow that exists: interrupts go on between steps */
	do {
		cond_resched();
		spin_lock_irq(&fd->lock);
		more = fq_sched_flows_step(fd->fqs, &walk, FAIRQ_STATS_STEP);
		spin_unlock_irq(&fd->lock);
	} while (more);
	mutex_unlock(&fd->tun_lock);
	fairq_pass_figures(fd, &pf);
	fairq_add_pass(&st, &pf);

	fairq_chomp(policy);
	fairq_chomp(depth);
	at = fairq_emit_totals(buf, fd, &st, &pf, policy, depth);
	at = fairq_emit_progress(buf, at, fd);
	at = fairq_emit_flow_mem(buf, at, &st);
	at = fairq_emit_boost(buf, at, &st);
	for (i = 0; i < walk.n; i++)
		at += fairq_emit_flow(buf, at, &flows[i]);
	kfree(flows);
	return at;
}

static struct kobj_attribute fairq_sysfs_stats = __ATTR(stats, 0444, fairq_stats_show, NULL);

static struct attribute *fairq_sysfs_attrs[] = {
	&fairq_sysfs_backing.attr,
	&fairq_sysfs_classify.attr,
	&fairq_sysfs_cgroup_weights.attr,
#define FQ_TUNABLE(_name, ...)	(&fairq_sysfs_tunables[FQ_TUN_##_name].attr),
#include "fq_tunables_table.h"
#undef FQ_TUNABLE
	&fairq_sysfs_stats.attr,
	NULL,
};
ATTRIBUTE_GROUPS(fairq_sysfs);

static void fairq_kobj_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct fairq_kobj, kobj));
}

static struct kobj_type fairq_ktype = {
	.release	= fairq_kobj_release,
	.sysfs_ops	= &kobj_sysfs_ops,
	.default_groups	= fairq_sysfs_groups,
};

int fairq_sysfs_add(struct fairq_dev *fd)
{
	struct fairq_kobj *fk;
	int ret;

	fk = kzalloc(sizeof(*fk), GFP_KERNEL);
	if (!fk)
		return -ENOMEM;
	fk->fd = fd;
	ret = kobject_init_and_add(&fk->kobj, &fairq_ktype, &disk_to_dev(fd->disk)->kobj,
				   "fairq");
	if (ret) {
		kobject_put(&fk->kobj);
		return ret;
	}
	kobject_uevent(&fk->kobj, KOBJ_ADD);
	fd->kobj = fk;
	return 0;
}

void fairq_sysfs_del(struct fairq_dev *fd)
{
	if (!fd->kobj)
		return;
	kobject_del(&fd->kobj->kobj);
	kobject_put(&fd->kobj->kobj);
	fd->kobj = NULL;
}
