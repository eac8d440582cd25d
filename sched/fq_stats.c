// SPDX-License-Identifier: GPL-2.0
/*
 * fq_stats.c - whole-device and per-flow figures for the caller to print.
 * Not on the hot path: fq_sched_flows() walks the flows that exist.
 */
#include "fq_internal.h"

size_t fq_sched_flow_size(void)
{
	return sizeof(struct fq_flow);
}

void fq_sched_stats(struct fq_sched *fqs, struct fq_stats *st)
{
	int i;

	*st = fqs->st;
	st->queued = fqs->queued;
	st->inflight = fqs->inflight;
	st->flows = fqs->nr_flows;
	st->flows_max = fqs->max_flows;
	st->flows_spare = fqs->nr_spare;
	st->flow_table_chains = 1u << fqs->table->bits;
	st->mem_bytes = (u32)(sizeof(*fqs) + fq_flows_mem(fqs));
	st->depth_now = fqs->depth_now;
	st->depth_auto = !fqs->depth;
	st->depth_changes = fqs->dc.changes;
	st->depth_epochs = fqs->dc.epochs;
	/* skipped: the demand did not fill the depth, or work went unseen */
	st->depth_idle_epochs = fqs->dc.idle_epochs + fqs->dc.unseen_epochs;
	st->depth_reserved_epochs = fqs->dc.reserved_epochs;
	st->depth_full_ms = div_u64(fqs->full_ns, 1000000);
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

/* @a lists before @b: more bytes dispatched, then the lower key. */
static bool fq_info_before(u64 a_bytes, u64 a_key, u64 b_bytes, u64 b_key)
{
	return a_bytes != b_bytes ? a_bytes > b_bytes : a_key < b_key;
}

/* Insert @fqf into @out[0..*n) kept busiest first, at most @max long. */
static void fq_info_insert(const struct fq_flow *fqf,
			   struct fq_flow_info *out, unsigned int *n,
			   unsigned int max)
{
	u64 bytes = fqf->c.disp_bytes, key = fqf->key;
	unsigned int i = *n;

	if (!max)
		return;
	if (i == max) {
		if (!fq_info_before(bytes, key, out[max - 1].c.disp_bytes,
				    out[max - 1].key))
			return;
		i = max - 1;
	} else {
		(*n)++;
	}
	while (i > 0 && fq_info_before(bytes, key, out[i - 1].c.disp_bytes,
				       out[i - 1].key)) {
		out[i] = out[i - 1];
		i--;
	}
	fq_info_fill(fqf, &out[i]);
}

/*
 * A walk stamps each flow it visits with its own number and moves it to
 * the tail of fqs->flows, so the flows not yet visited are always at the
 * head: the walk is over when the head carries its stamp.  Flows created
 * meanwhile go to the tail, behind the visited ones, and are not visited.
 */
void fq_sched_flows_begin(struct fq_sched *fqs, struct fq_flows_walk *w,
			  struct fq_flow_info *out, unsigned int max)
{
	if (++fqs->walk_gen == 0)
		fqs->walk_gen = 1;	/* 0 is a new flow's stamp */
	*w = (struct fq_flows_walk){ .out = out, .max = max,
				     .gen = fqs->walk_gen };
}

bool fq_sched_flows_step(struct fq_sched *fqs, struct fq_flows_walk *w,
			 unsigned int budget)
{
	struct fq_flow *fqf;
	struct fq_node *n;

	if (w->done)
		return false;
	if (w->gen != fqs->walk_gen) {
		w->done = true;		/* a later walk took over */
		return false;
	}
	for (; budget; budget--) {
		n = fqs->flows.next;
		if (n == &fqs->flows)
			break;
		fqf = fq_entry(n, struct fq_flow, all);
		if (fqf->walk_gen == w->gen)
			break;
		fqf->walk_gen = w->gen;
		fq_list_del(n);
		fq_list_add_tail(n, &fqs->flows);
		if (!fq_flow_dead(fqs, fqf))	/* gone, memory not yet freed */
			fq_info_insert(fqf, w->out, &w->n, w->max);
		w->visited++;
	}
	if (!budget)
		return true;
	fqf = &fqs->overflow;
	if (fqf->c.enq_reqs || fqf->inflight)
		fq_info_insert(fqf, w->out, &w->n, w->max);
	w->done = true;
	return false;
}

unsigned int fq_sched_flows(struct fq_sched *fqs, struct fq_flow_info *out,
			    unsigned int max)
{
	struct fq_flows_walk w;

	fq_sched_flows_begin(fqs, &w, out, max);
	while (fq_sched_flows_step(fqs, &w, ~0u))
		;
	return w.n;
}
