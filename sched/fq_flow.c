// SPDX-License-Identifier: GPL-2.0
/*
 * fq_flow.c - flows: their memory (allocation, release of drained flows,
 * reclaim, reap), the flow table, a flow's place on its class's lists and its head on
 * the bounded-wait lists.  Which flow a request belongs to is the
 * policy's ->map() (fq_cfq.c: hash by key, fq_sfq.c: bucket by
 * hash(key, perturbation)).
 *
 * Flows are allocated as keys appear, one at a time, under the caller's
 * lock (fq_env_flow_alloc(): atomic-safe), and given back when drained;
 * the few most recently freed stay as spares, so a reader at queue depth
 * 1, whose flow drains between its requests, does not cost an allocation
 * per request.  max_flows bounds the flows that exist: beyond it a new
 * key first reclaims a drained flow that only keeps a round robin claim,
 * else it shares the overflow flow (as it does when no memory is left).
 *
 * cfq (and fifo) find a flow by key, sfq a bucket by its index, in one
 * chained hash table, the flow table.  It grows with the flows and
 * shrinks after them, but not here: a new table is an allocation, so the
 * caller makes it outside its lock (fq_sched_table_want() and the
 * functions beside it); until it does, chains are just longer (or the
 * memory is held a little longer).
 */
#include "fq_internal.h"

static size_t fq_table_bytes(u32 bits)
{
	return sizeof(struct fq_table) + ((size_t)1 << bits) *
	       sizeof(struct fq_flow *);
}

/* What the instance holds for its flows and its table [bytes]. */
size_t fq_flows_mem(const struct fq_sched *fqs)
{
	return (size_t)(fqs->nr_flows + fqs->nr_spare) *
	       fq_sched_flow_size() + fq_table_bytes(fqs->table->bits) +
	       (fqs->table_old ? fq_table_bytes(fqs->table_old->bits) : 0);
}

struct fq_table *fq_sched_table_alloc(u32 bits)
{
	struct fq_table *t = fq_zalloc(fq_table_bytes(bits));

	if (t)
		t->bits = bits;
	return t;
}

void fq_sched_table_free(struct fq_table *t)
{
	fq_free(t);
}

/* seeded, so keys cannot be chosen to share one chain */
static struct fq_flow **fq_table_slot(const struct fq_sched *fqs,
				      struct fq_table *t, u64 key)
{
	return &t->chain[fq_hash64(key, fqs->hash_key) &
			 ((1ull << t->bits) - 1)];
}

static struct fq_flow *fq_chain_find(struct fq_flow *fqf, u64 key)
{
	for (; fqf; fqf = fqf->hnext)
		if (fqf->key == key)
			return fqf;
	return NULL;
}

/*
 * The flow of @key in the table, dead or not, or NULL; while a rehash is
 * under way, in the table it replaces if not in the new one yet.
 */
struct fq_flow *fq_table_lookup(const struct fq_sched *fqs, u64 key)
{
	struct fq_flow *fqf;

	fqf = fq_chain_find(*fq_table_slot(fqs, fqs->table, key), key);
	if (!fqf && fqs->table_old)
		fqf = fq_chain_find(*fq_table_slot(fqs, fqs->table_old, key),
				    key);
	return fqf;
}

/*
 * The flow of @key, or NULL.  A dead one (fq_flow_dead()) is freed here,
 * as it would have been when its time came, and its key has no flow.
 */
struct fq_flow *fq_table_find(struct fq_sched *fqs, u64 key)
{
	struct fq_flow *fqf = fq_table_lookup(fqs, key);

	if (fqf && unlikely(fq_flow_dead(fqs, fqf))) {
		fq_flow_unlink(fqs, fqf);
		fq_flow_free(fqs, fqf);
		return NULL;
	}
	return fqf;
}

void fq_table_add(struct fq_sched *fqs, struct fq_flow *fqf)
{
	struct fq_flow **slot = fq_table_slot(fqs, fqs->table, fqf->key);

	fqf->hnext = *slot;
	*slot = fqf;
}

static bool fq_chain_del(struct fq_flow **pp, struct fq_flow *fqf)
{
	for (; *pp; pp = &(*pp)->hnext) {
		if (*pp == fqf) {
			*pp = fqf->hnext;
			return true;
		}
	}
	return false;
}

void fq_table_del(struct fq_sched *fqs, struct fq_flow *fqf)
{
	if (!fq_chain_del(fq_table_slot(fqs, fqs->table, fqf->key), fqf) &&
	    fqs->table_old)
		fq_chain_del(fq_table_slot(fqs, fqs->table_old, fqf->key), fqf);
}

/*
 * The chains the table wants, as bits: about one chain per flow that
 * exists (bounded by max_flows).  Doubled when the flows outgrow it;
 * once they are fewer than an eighth of the chains (a burst of keys is
 * over), halved down to two chains per flow, never under
 * FQ_TABLE_MIN_BITS.  0 while it is right.
 */
u32 fq_sched_table_want(const struct fq_sched *fqs)
{
	u32 bits = fqs->table->bits, n = fqs->nr_flows;

	if (fqs->table_old)
		return 0;	/* one rehash at a time */
	if (n > (1u << bits) && (1u << bits) < fqs->max_flows) {
		while ((1u << bits) < n && (1u << bits) < fqs->max_flows)
			bits++;
		return bits;
	}
	if (bits <= FQ_TABLE_MIN_BITS || n >= (1u << bits) / 8)
		return 0;
	while (bits > FQ_TABLE_MIN_BITS && (1u << (bits - 1)) >= 2 * n)
		bits--;
	return bits;
}

/*
 * Install @t if it is bigger than the table in use, or smaller and still
 * one chain per flow at least (the flows may have come back since it was
 * asked for), and no rehash is under way; NULL then, else @t back, not
 * wanted any more.  O(1): the flows move by fq_sched_table_rehash().
 */
struct fq_table *fq_sched_table_swap(struct fq_sched *fqs, struct fq_table *t)
{
	struct fq_table *old = fqs->table;

	if (!t || t->bits == old->bits || fqs->table_old ||
	    (t->bits < old->bits && fqs->nr_flows > (1u << t->bits)))
		return t;
	fqs->table_old = old;
	fqs->rehash_pos = 0;
	fqs->table = t;
	return NULL;
}

bool fq_sched_table_rehash(struct fq_sched *fqs, u32 budget,
			   struct fq_table **done)
{
	struct fq_table *old = fqs->table_old;
	struct fq_flow *fqf, **slot;

	*done = NULL;
	if (!old)
		return false;
	while (budget && fqs->rehash_pos < (1u << old->bits)) {
		budget--;
		fqs->pick_steps++;
		fqf = old->chain[fqs->rehash_pos];
		if (!fqf) {
			fqs->rehash_pos++;
			continue;
		}
		old->chain[fqs->rehash_pos] = fqf->hnext;
		slot = fq_table_slot(fqs, fqs->table, fqf->key);
		fqf->hnext = *slot;
		*slot = fqf;
	}
	if (fqs->rehash_pos < (1u << old->bits))
		return true;
	fqs->table_old = NULL;
	*done = old;
	return false;
}

int fq_sched_table_resize(struct fq_sched *fqs)
{
	u32 bits = fq_sched_table_want(fqs);
	struct fq_table *t;

	if (!bits)
		return 0;
	t = fq_sched_table_alloc(bits);
	if (!t)
		return -ENOMEM;
	fq_sched_table_free(fq_sched_table_swap(fqs, t));
	while (fq_sched_table_rehash(fqs, ~0u, &t))
		;
	fq_sched_table_free(t);
	return 0;
}

/* Give every flow, spare or not, and the table back (fq_sched_destroy()). */
void fq_flows_destroy(struct fq_sched *fqs)
{
	struct fq_flow *fqf;

	while (fqs->flows.next != &fqs->flows) {
		fqf = fq_entry(fqs->flows.next, struct fq_flow, all);
		fq_list_del(&fqf->all);
		fq_env_flow_free(fqf);
	}
	fqs->nr_flows = 0;
	fq_flows_trim(fqs);
	fq_sched_table_free(fqs->table);
	fq_sched_table_free(fqs->table_old);
	fqs->table = NULL;
	fqs->table_old = NULL;
}

/* Give the spares back (max_flows lowered, or the instance destroyed). */
void fq_flows_trim(struct fq_sched *fqs)
{
	struct fq_flow *fqf;

	while ((fqf = fqs->free)) {
		fqs->free = fqf->hnext;
		fq_env_flow_free(fqf);
	}
	fqs->nr_spare = 0;
}

void fq_flow_head_init(struct fq_flow *fqf)
{
	fq_list_init(&fqf->head_link);
	fqf->head = NULL;
	fqf->head_ns = 0;
}

/*
 * The bounded wait of @fqf's requests is fifo_expire_*_ms << this: a flow
 * of weight w below FQ_WEIGHT_BASE waits up to the power of two at least
 * FQ_WEIGHT_BASE / w times longer (weight 50: 2x, 25: 4x, 1: 128x), so
 * that expiry, which goes before turns, cannot give a light flow more
 * than its weight asks (a weight-1 flow against a weight-1000 one, both
 * always expired, would otherwise get half the disk).  The default
 * weight and above keep fifo_expire_*_ms.
 */
u32 fq_flow_expire_scale(const struct fq_flow *fqf)
{
	u32 b = 0;

	while (b + 1 < FQ_EXPIRE_SCALES && (fqf->weight << b) < FQ_WEIGHT_BASE)
		b++;
	return b;
}

/*
 * The first queued request of @fqf may have changed: a new one starts its
 * bounded wait now and the flow goes to the tail of its heads list (by
 * kind and deadline scale), which so stays in head_ns order.
 */
void fq_flow_head_update(struct fq_sched *fqs, struct fq_flow *fqf)
{
	struct fq_req *rq = NULL;
	u32 i;

	if (fqf->nr_queued)
		rq = fq_entry(fqf->queue.next, struct fq_req, node);
	if (rq == fqf->head)
		return;
	fqf->head = rq;
	fq_list_del(&fqf->head_link);
	if (!rq)
		return;
	i = fq_rq_fifo(rq);
	if (i == FQ_FIFO_IDLE)
		return;
	fqf->head_ns = fqs->now_ns;
	fqf->head_disp = fqs->dispatches;
	fq_list_add_tail(&fqf->head_link,
			 &fqs->heads[i][fq_flow_expire_scale(fqf)]);
}

/*
 * A request of @fqf completed at @now_ns: its first queued request, if
 * any, starts its bounded wait again and goes to the tail of its heads
 * list.  A flow is not starved while its own request is being served; on
 * a slow disk one request alone can outlast fifo_expire_sync_ms (a 1 MiB
 * read at 4 MiB/s: 250 ms), and counted from its dispatch the next one
 * would expire as soon as it completed, every turn
 * (fq_expire_served_others() in fq_sched.c has the other half).
 */
void fq_flow_head_restart(struct fq_sched *fqs, struct fq_flow *fqf,
			  u64 now_ns)
{
	if (!fqf->head || fq_rq_fifo(fqf->head) == FQ_FIFO_IDLE ||
	    now_ns <= fqf->head_ns)
		return;
	fqf->head_ns = now_ns;
	fqf->head_disp = fqs->dispatches;
	fq_list_del(&fqf->head_link);
	fq_list_add_tail(&fqf->head_link,
			 &fqs->heads[fq_rq_fifo(fqf->head)][fq_flow_expire_scale(fqf)]);
}

/* Take @fqf off its class's round list or idle list, if on one. */
void fq_flow_unlink(struct fq_sched *fqs, struct fq_flow *fqf)
{
	if (fqf->where == FQ_FW_BUSY) {
		if (fq_flow_on_later(fqs, fqf))
			fq_later_leave(&fqs->cq[fqf->ci], fqf);
		fq_list_del(&fqf->link);
		fq_list_del(&fqf->boost_link);
		fqs->cq[fqf->ci].nr_busy--;
		fqs->cq[fqf->ci].wsum -= fqf->weight;
	} else if (fqf->where == FQ_FW_IDLE) {
		fq_list_del(&fqf->link);
	}
	fqf->where = FQ_FW_NONE;
}

/*
 * Drop @fqf from the policy's map, if it is in it.  Only the current
 * policy's flows are ever mapped: a policy switch unmaps every flow
 * before the new policy takes over (fq_switch.c).
 */
void fq_flow_unmap(struct fq_sched *fqs, struct fq_flow *fqf)
{
	if (fqf->flags & FQ_FF_MAPPED)
		fqs->pol->unmap(fqs, fqf);
	fqf->flags &= ~FQ_FF_MAPPED;
	fqf->hnext = NULL;
}

/*
 * The flow memory: what a mapped flow leaves behind when it goes back to
 * the pool -- its class, round and credit (a debt, or a turn already
 * spent, stays owed: a reap or a reclaim does not forgive it) and its
 * think time -- found again by key when the key comes back.  A small
 * direct-mapped table (FQ_MEM_SLOTS): a newer flow of the same slot
 * replaces an older one; a round far in the past means nothing.
 */
static struct fq_flow_mem *fq_flow_mem_slot(struct fq_sched *fqs, u64 key)
{
	return &fqs->mem[fq_hash64(key, fqs->hash_key) & (FQ_MEM_SLOTS - 1)];
}

static void fq_flow_mem_save(struct fq_sched *fqs, const struct fq_flow *fqf)
{
	struct fq_flow_mem *m;

	if (!(fqf->flags & FQ_FF_MAPPED) || fqf->ci >= FQ_PRIO_COUNT)
		return;
	m = fq_flow_mem_slot(fqs, fqf->key);
	*m = (struct fq_flow_mem){ .key = fqf->key, .done_ns = fqf->done_ns,
				   .deficit = fqf->deficit,
				   .boost_until = fqf->boost_until,
				   .boost_reqs = fqf->boost_reqs,
				   .round = fqf->round,
				   .ttime_ns = fqf->ttime_ns,
				   .svc_ns = fqf->svc_ns,
				   .resp_ns = fqf->resp_ns,
				   .svc_held_ns = fqf->svc_held_ns, .ci = fqf->ci,
				   .ttime_n = fqf->ttime_n,
				   .seq_pct = fqf->seq_pct,
				   .kind = fqf->flags & FQ_FF_MAPPED };
}

/*
 * A new flow of @key (flags @kind) takes what its key left, if anything;
 * false if the key left nothing.
 */
static bool fq_flow_mem_load(struct fq_sched *fqs, struct fq_flow *fqf)
{
	struct fq_flow_mem *m = fq_flow_mem_slot(fqs, fqf->key);

	if (m->kind != (fqf->flags & FQ_FF_MAPPED) || m->key != fqf->key)
		return false;
	fqf->ci = m->ci;
	fqf->round = m->round;
	fqf->deficit = m->deficit;
	fqf->done_ns = m->done_ns;
	fqf->ttime_ns = m->ttime_ns;
	fqf->svc_ns = m->svc_ns;
	fqf->resp_ns = m->resp_ns;
	fqf->svc_held_ns = m->svc_held_ns;
	fqf->ttime_n = m->ttime_n;
	fqf->seq_pct = m->seq_pct;
	fqf->boost_until = m->boost_until;
	fqf->boost_reqs = m->boost_reqs;
	m->kind = 0;
	return true;
}

/* Forget every flow (a rebuild: keys and cost units may mean other things). */
void fq_flow_mem_clear(struct fq_sched *fqs)
{
	u32 i;

	for (i = 0; i < FQ_MEM_SLOTS; i++)
		fqs->mem[i].kind = 0;
}

/* Free an idle, unlisted flow: a spare, or back to the environment. */
void fq_flow_free(struct fq_sched *fqs, struct fq_flow *fqf)
{
	if (WARN_ON_ONCE(fqf->flags & FQ_FF_OVERFLOW))
		return;
	if (fqs->antic == fqf)
		fqs->antic = NULL;
	if (!(fqf->flags & FQ_FF_ORPHAN))
		fq_flow_mem_save(fqs, fqf);
	fq_flow_unmap(fqs, fqf);
	fq_list_del(&fqf->all);
	fqs->nr_flows--;
	if (fqs->nr_spare >= FQ_FLOW_SPARE) {
		fq_env_flow_free(fqf);
		return;
	}
	fqf->flags = 0;
	fqf->where = FQ_FW_FREE;
	fqf->hnext = fqs->free;
	fqs->free = fqf;
	fqs->nr_spare++;
}

/* Take an idle-listed flow off its list and give it back to the pool. */
static void fq_flow_release_now(struct fq_sched *fqs, struct fq_flow *fqf)
{
	fq_flow_unlink(fqs, fqf);
	fq_flow_free(fqs, fqf);
}

/*
 * Free the drained flow that only keeps the oldest claim (or the nearest
 * debt) of the lowest class; false if none.  A dead flow goes first: its
 * time came already.
 */
static bool fq_flow_reclaim(struct fq_sched *fqs)
{
	struct fq_flow *fqf;
	struct fq_node *idle;
	u32 i;
	int ci;

	if (!fq_list_empty(&fqs->reap)) {
		fq_flow_release_now(fqs, fq_entry(fqs->reap.next,
						  struct fq_flow, link));
		return true;
	}
	for (ci = FQ_PRIO_COUNT - 1; ci >= 0; ci--) {
		idle = &fqs->cq[ci].refile;
		if (fq_list_empty(idle))
			continue;
		fqf = fq_entry(idle->next, struct fq_flow, link);
		if (fq_flow_dead(fqs, fqf)) {
			fq_flow_release_now(fqs, fqf);
			return true;
		}
	}
	for (ci = FQ_PRIO_COUNT - 1; ci >= 0; ci--) {
		for (i = 0; i < FQ_IDLE_WHEEL; i++) {
			idle = &fqs->cq[ci].idle[fq_idle_bucket(fqs->cq[ci].round
								- 1 + i)];
			if (fq_list_empty(idle))
				continue;
			fq_flow_release_now(fqs,
				fq_entry(idle->next, struct fq_flow, link));
			return true;
		}
	}
	return false;
}

/* Memory for one more flow: a spare, a new one, or NULL. */
static struct fq_flow *fq_flow_mem_take(struct fq_sched *fqs)
{
	struct fq_flow *fqf = fqs->free;

	if (fqf) {
		fqs->free = fqf->hnext;
		fqs->nr_spare--;
		return fqf;
	}
	fqf = fq_env_flow_alloc(sizeof(*fqf));
	if (!fqf)
		fqs->st.flow_alloc_fails++;
	return fqf;
}

/*
 * A new flow (zeroed) for @key, or NULL: at max_flows, or with no memory,
 * a drained flow that only keeps a round robin claim is reclaimed first.
 */
struct fq_flow *fq_flow_new(struct fq_sched *fqs, u64 key, u8 flags)
{
	struct fq_flow *fqf = NULL;

	if (fqs->nr_flows < fqs->max_flows)
		fqf = fq_flow_mem_take(fqs);
	if (!fqf) {
		if (!fq_flow_reclaim(fqs))
			return NULL;
		fqf = fq_flow_mem_take(fqs);	/* the spare it left */
		if (WARN_ON_ONCE(!fqf))
			return NULL;
	}
	*fqf = (struct fq_flow){ .key = key, .flags = flags,
				 .where = FQ_FW_NONE, .ci = FQ_PRIO_COUNT,
				 .weight = FQ_WEIGHT_BASE,
				 .reap_gen = fqs->reap_gen };
	fq_list_init(&fqf->queue);
	fq_list_init(&fqf->link);
	fq_list_init(&fqf->boost_link);
	fq_flow_head_init(fqf);
	if (!fq_flow_mem_load(fqs, fqf))
		fq_boost_new(fqs, fqf);
	fq_list_add_tail(&fqf->all, &fqs->flows);
	fqs->nr_flows++;
	fqs->st.flow_allocs++;
	return fqf;
}

/*
 * fq_flow_idle_slot - which idle list of its class a drained flow waits on
 * (fq_internal.h: the wheel of rounds), or -1 when it has nothing worth
 * keeping.  It keeps its credit of this round or one ahead, its unused
 * credit of the round just ended (it had requests in flight across the
 * end of the round), or a debt: credited for a later round, it is served
 * again only when the class gets there.  Kept, such a flow is found again
 * by its key however many flows there are; freed, it would come back
 * only through a flow memory of FQ_MEM_SLOTS: with thousands of readers
 * at queue depth 1 a flow would be allocated for every request and most
 * debts forgotten (unit case drained_debtors_kept).
 * A flow never placed in a class (a policy without ->activate, fifo) has
 * none.
 */
static int fq_flow_idle_slot(struct fq_sched *fqs, struct fq_flow *fqf)
{
	u32 round;
	s32 d;

	if (fqf->ci >= FQ_PRIO_COUNT)
		return -1;
	round = fqs->cq[fqf->ci].round;
	d = fq_round_diff(fqf->round, round);
	if (d > FQ_IDLE_WHEEL - 2)	/* parked: filed again in time */
		return (int)fq_idle_bucket(round - 2);
	if (d >= 0 || (d == -1 && fqf->deficit > 0))
		return (int)fq_idle_bucket(fqf->round);
	return -1;
}

/*
 * fq_flow_release - @fqf is idle (nothing queued, batched or in flight)
 * and on no list: keep it while it has a round robin claim (or is the
 * flow anticipation waits for), else give it back to the pool.
 */
void fq_flow_release(struct fq_sched *fqs, struct fq_flow *fqf)
{
	int slot;

	if (fqf->flags & FQ_FF_OVERFLOW)
		return;
	/* waited for: kept, on no list, until fq_antic_cancel() lets it go */
	if (fqs->antic == fqf && !(fqf->flags & FQ_FF_ORPHAN))
		return;
	slot = fq_flow_idle_slot(fqs, fqf);
	if ((fqf->flags & FQ_FF_ORPHAN) || slot < 0) {
		fq_flow_free(fqs, fqf);
		return;
	}
	fq_list_add_tail(&fqf->link, &fqs->cq[fqf->ci].idle[slot]);
	fqf->where = FQ_FW_IDLE;
}

void fq_flow_maybe_release(struct fq_sched *fqs, struct fq_flow *fqf)
{
	if (fqf->where == FQ_FW_NONE && fq_flow_idle(fqf))
		fq_flow_release(fqs, fqf);
}

/*
 * Whether @fqf is dead: a drained flow whose time came, not freed yet --
 * on the reap list (its reap_gen is behind), or on its class's refile
 * list with a claim gone stale.  Such a flow is found by its key no
 * more: fq_table_find() frees it, and the key starts afresh (with what
 * the flow memory kept), as it would have had the flow been freed then.
 */
bool fq_flow_dead(const struct fq_sched *fqs, const struct fq_flow *fqf)
{
	return fqf->where == FQ_FW_IDLE &&
	       (fqf->reap_gen != fqs->reap_gen ||
		fq_round_diff(fqf->round, fqs->cq[fqf->ci].round) < -1);
}

/*
 * fq_flows_reap - the device went idle: claims protect nobody any more,
 * so every drained flow goes back to the pool ("freed when drained").
 * Here they only move, list by list, to the reap list, dead from now
 * on: fq_sched_reap() frees them, outside the completion that found the
 * device idle, and the core's own calls FQ_CHORE_STEPS at a time.
 */
void fq_flows_reap(struct fq_sched *fqs)
{
	struct fq_flow *antic = fqs->antic;
	struct fq_classq *cq;
	u32 ci, i;

	fqs->antic = NULL;
	if (antic && antic->where == FQ_FW_NONE && fq_flow_idle(antic))
		fq_flow_release(fqs, antic);
	for (ci = 0; ci < FQ_PRIO_COUNT; ci++) {
		cq = &fqs->cq[ci];
		for (i = 0; i < FQ_IDLE_WHEEL; i++)
			fq_list_splice_tail(&cq->idle[i], &fqs->reap);
		fq_list_splice_tail(&cq->refile, &fqs->reap);
	}
	fqs->reap_gen++;
}

bool fq_sched_reap_want(const struct fq_sched *fqs)
{
	return !fq_list_empty(&fqs->reap);
}

bool fq_sched_reap(struct fq_sched *fqs, u32 budget)
{
	while (budget-- && !fq_list_empty(&fqs->reap)) {
		fqs->pick_steps++;
		fq_flow_release_now(fqs, fq_entry(fqs->reap.next,
						  struct fq_flow, link));
	}
	return !fq_list_empty(&fqs->reap);
}
