// SPDX-License-Identifier: GPL-2.0
/*
 * fq_stats.c - whole-device and per-flow figures for the caller to print.
 * Not on the hot path: fq_sched_flows() walks the pool.
 */
#include "fq_internal.h"

size_t fq_sched_flow_size(void)
{
	/* the flow, its two cfq hash slots and its sfq bucket slot */
	return sizeof(struct fq_flow) + 3 * sizeof(struct fq_flow *);
}

void fq_sched_stats(struct fq_sched *fqs, struct fq_stats *st)
{
	int i;

	*st = fqs->st;
	st->queued = fqs->queued;
	st->inflight = fqs->inflight;
	st->flows = fqs->nr_flows;
	st->flows_max = fqs->max_flows;
	st->mem_bytes = (u32)(sizeof(*fqs) + fq_pool_mem(fqs->max_flows));
	st->depth_now = fqs->depth_now;
	st->depth_auto = !fqs->depth;
	st->depth_changes = fqs->dc.changes;
	st->depth_epochs = fqs->dc.epochs;
	st->lat_floor_ns = fqs->dc.lat_min;
	for (i = 0; i < 2; i++) {
		st->cost_a_ns[i] = fq_cost_a_ns(&fqs->fc, i);
		st->cost_b_ps_per_byte[i] = fq_cost_b_ps_per_byte(&fqs->fc, i);
	}
	st->cost_epochs = fqs->fc.epochs;
}

static void fq_info_fill(const struct fq_flow *fqf, struct fq_flow_info *fi)
{
	fi->key = fqf->key;
	fi->ioprio = fqf->ioprio;
	fi->weight = fqf->weight;
	if (fqf->ci >= FQ_PRIO_COUNT) {
		/* never placed in a class: a policy without ->activate (fifo) */
		fi->ioprio = FQ_IOPRIO(FQ_CLASS_BE, 4);
		fi->weight = FQ_WEIGHT_BASE;
	}
	fi->queued = fqf->nr_queued + fqf->nr_batch;
	fi->inflight = fqf->inflight;
	fi->c = fqf->c;
}

/* Insert @fqf into @out[0..*n) kept busiest first, at most @max long. */
static void fq_info_insert(const struct fq_flow *fqf,
			   struct fq_flow_info *out, unsigned int *n,
			   unsigned int max)
{
	unsigned int i = *n;

	if (i == max) {
		if (out[max - 1].c.disp_bytes >= fqf->c.disp_bytes)
			return;
		i = max - 1;
	} else {
		(*n)++;
	}
	while (i > 0 && out[i - 1].c.disp_bytes < fqf->c.disp_bytes) {
		out[i] = out[i - 1];
		i--;
	}
	fq_info_fill(fqf, &out[i]);
}

unsigned int fq_sched_flows(struct fq_sched *fqs, struct fq_flow_info *out,
			    unsigned int max)
{
	const struct fq_flow *fqf;
	unsigned int n = 0;
	u32 i;

	if (!max)
		return 0;
	for (i = 0; i < fqs->max_flows; i++) {
		fqf = &fqs->pool[i];
		if (fqf->where != FQ_FW_FREE)
			fq_info_insert(fqf, out, &n, max);
	}
	fqf = &fqs->overflow;
	if (fqf->c.enq_reqs || fqf->inflight)
		fq_info_insert(fqf, out, &n, max);
	return n;
}
