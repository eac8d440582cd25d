// SPDX-License-Identifier: GPL-2.0
/*
 * Where requests wait for the disk.
 *
 * Without --fair: one FIFO.  With --fair cfq|sfq: READ and WRITE go
 * through the project's own fair-queueing core (../sched/), one flow per
 * connection; FLUSH, TRIM and WRITE_ZEROES bypass it in a FIFO that is
 * served first, as fairq.ko passes data-less bios straight down.
 *
 * Back-pressure (--fair): the core's max_queued bounds what waits in it.
 * A reader whose request fq_sched_may_queue() refuses (the core is full,
 * or half full and the connection's flow has its share) waits here on
 * glue_room, holding that request, before queueing it: it reads nothing
 * more from its client, so the socket fills and the client's sends block,
 * and the connection's order is kept.  The engine's dispatch and
 * completion paths (glue_dispatch, glue_complete) wake it; the writer
 * keeps sending the connection's replies meanwhile.
 *
 * Locking: glue_lock around every call into the core and the FIFO, and
 * around nothing else; it is never held across io_submit() or a sleep
 * (the engine calls in, gets a request, unlocks, then submits); a paused
 * reader's pthread_cond_wait() releases it.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fairq_nbd.h"
#include "nbd_proto.h"

static pthread_mutex_t glue_lock = PTHREAD_MUTEX_INITIALIZER;
static struct req *fifo_head, *fifo_tail;	/* FIFO / bypass queue */
static unsigned int queued;		/* requests waiting, both queues */

#ifdef FAIRQ_NBD_FAIR
static struct fq_sched *fqs;		/* NULL unless --fair */
static pthread_cond_t glue_room = PTHREAD_COND_INITIALIZER;
static unsigned int room_waiters;	/* readers paused on glue_room */
/* back-pressure figures, logged at exit with -v */
static struct {
	unsigned int queued;		/* READ/WRITE waiting in the core */
	unsigned int queued_peak;	/* most of them at once [requests] */
	unsigned long pauses;		/* requests a reader waited with */
	uint64_t paused_ns;		/* time readers waited, summed [ns] */
} bp;

unsigned long fq_env_warnings;

void fq_env_warn(const char *file, int line, const char *cond)
{
	fq_env_warnings++;
	log_msg("sched: WARN_ON_ONCE(%s) at %s:%d", cond, file, line);
}

bool glue_fair_available(void)
{
	return true;
}

/* --fair-set name=value, after depth_max and the seed: it overrides them */
static int glue_fair_set(const char *set)
{
	char name[64];
	const char *eq = strchr(set, '=');
	int ret;

	if (!eq || eq == set || (size_t)(eq - set) >= sizeof(name)) {
		log_msg("--fair-set=%s: want NAME=VALUE", set);
		return -1;
	}
	memcpy(name, set, eq - set);
	name[eq - set] = 0;
	ret = fq_sched_set(fqs, name, eq + 1);
	if (ret < 0)
		log_msg("--fair-set: sched tunable %s=%s: %s", name, eq + 1,
			strerror(-ret));
	return ret < 0 ? -1 : 0;
}

/*
 * The engine never has more than @depth requests at the disk, so that is
 * depth_max, and depth=auto (the core's default) starts there: it settles
 * where the disk behind the model (or its latency) stops giving more.
 * --fair-set depth=N fixes it, as on fairq.ko.
 */
static int glue_fair_init(const char *policy, unsigned int depth,
			  const char *const *sets, unsigned int nsets)
{
	char val[16];
	unsigned int i;
	int ret;

	fqs = fq_sched_create(policy, (uint64_t)now_ns());
	if (!fqs) {
		log_msg("--fair=%s: fq_sched_create failed (unknown policy?)",
			policy);
		return -1;
	}
	/*
	 * writeback=fair: an NBD write carries no sync flag but FUA (the
	 * kernel's nbd client sends fsync's own writes as plain writes), so
	 * yield's premise, that an async write is background writeback
	 * nobody waits for, does not hold here; and a write held above the
	 * core would stop its connection's reader.  --fair-set can still
	 * say yield (the sets come after).
	 */
	if (fq_sched_set(fqs, "writeback", "fair") < 0) {
		log_msg("--fair: sched tunable writeback=fair refused");
		return -1;
	}
	snprintf(val, sizeof(val), "%u", depth);
	ret = fq_sched_set(fqs, "depth_max", val);
	if (ret < 0) {
		log_msg("--fair: sched tunable depth_max=%s: %s", val,
			strerror(-ret));
		return -1;
	}
	fq_sched_seed_depth(fqs, depth);
	for (i = 0; i < nsets; i++)
		if (glue_fair_set(sets[i]) < 0)
			return -1;
	return 0;
}

/*
 * @r may not be queued yet (fq_sched_may_queue()): wait until dispatch or
 * a completion makes room.  Returns the time it entered the core.
 */
static uint64_t glue_wait_room(struct req *r)
{
	uint64_t t0 = now_ns(), t;

	bp.pauses++;
	r->conn->sched_pauses++;
	room_waiters++;
	do
		pthread_cond_wait(&glue_room, &glue_lock);
	while (!fq_sched_may_queue(fqs, &r->fq));
	room_waiters--;
	t = now_ns();
	bp.paused_ns += t - t0;
	return t;
}

/* The core took a request or finished one: paused readers may go on. */
static void glue_wake_room(void)
{
	if (room_waiters)
		pthread_cond_broadcast(&glue_room);
}

static bool glue_fair_take(struct req *r, uint64_t now)
{
	if (!fqs || (r->type != NBD_CMD_READ && r->type != NBD_CMD_WRITE))
		return false;
	memset(&r->fq, 0, sizeof(r->fq));
	r->fq.sector = r->offset >> 9;
	r->fq.bytes = r->len;
	r->fq.flags = r->type == NBD_CMD_WRITE ? FQ_REQ_WRITE : FQ_REQ_SYNC;
	if (r->flags & NBD_CMD_FLAG_FUA)
		r->fq.flags |= FQ_REQ_SYNC;
	r->fq.key = r->conn->id;
	if (!fq_sched_may_queue(fqs, &r->fq))
		r->arrive_ns = now = glue_wait_room(r);
	r->in_sched = true;
	fq_sched_enqueue(fqs, &r->fq, now);
	/* glue_lock is a mutex: the table may be resized here (-ENOMEM: the old one stays) */
	if (fq_sched_table_want(fqs))
		fq_sched_table_resize(fqs);
	if (++bp.queued > bp.queued_peak)
		bp.queued_peak = bp.queued;
	return true;
}

static struct req *glue_fair_pick(uint64_t now)
{
	struct fq_req *fq;

	if (!fqs)
		return NULL;
	fq = fq_sched_dispatch(fqs, now);
	if (!fq)
		return NULL;
	assert(bp.queued > 0);
	bp.queued--;
	glue_wake_room();
	return (struct req *)((char *)fq - offsetof(struct req, fq));
}

static void glue_fair_done(struct req *r, int status, uint64_t now)
{
	assert(fqs);
	fq_sched_complete(fqs, &r->fq, status, now);
	glue_wake_room();
}

static uint64_t glue_fair_next(uint64_t now)
{
	return fqs ? fq_sched_next_event(fqs, now) : 0;
}

void glue_fini(void)
{
	struct fq_req *left;
	char maxq[16] = "?";

	if (!fqs)
		return;
	if (fq_sched_get(fqs, "max_queued", maxq, sizeof(maxq)) > 0)
		maxq[strcspn(maxq, "\n")] = 0;
	log_dbg("sched: max_queued=%s queued_peak=%u reader_pauses=%lu paused_ms=%llu",
		maxq, bp.queued_peak, bp.pauses,
		(unsigned long long)(bp.paused_ns / 1000000));
	left = fq_sched_drain(fqs);

	/* every connection drained before the engine stopped */
	assert(!left);
	(void)left;
	fq_sched_destroy(fqs);
	fqs = NULL;
	if (fq_env_warnings)
		log_msg("sched: warnings=%lu", fq_env_warnings);
}
#else /* built without ../sched */
bool glue_fair_available(void)
{
	return false;
}

static int glue_fair_init(const char *policy, unsigned int depth,
			  const char *const *sets, unsigned int nsets)
{
	(void)depth;
	(void)sets;
	(void)nsets;
	log_msg("--fair=%s: this fairq-nbd was built without ../sched (FAIR=no; sched/*.c did not compile at build time)",
		policy);
	return -1;
}

static bool glue_fair_take(struct req *r, uint64_t now)
{
	(void)r;
	(void)now;
	return false;
}

static struct req *glue_fair_pick(uint64_t now)
{
	(void)now;
	return NULL;
}

static void glue_fair_done(struct req *r, int status, uint64_t now)
{
	(void)r;
	(void)status;
	(void)now;
	assert(!"no sched core");
}

static uint64_t glue_fair_next(uint64_t now)
{
	(void)now;
	return 0;
}

void glue_fini(void)
{
}
#endif

int glue_init(const char *policy, unsigned int depth,
	      const char *const *sets, unsigned int nsets)
{
	if (!policy && nsets) {
		log_msg("--fair-set=%s: needs --fair", sets[0]);
		return -1;
	}
	if (!policy)
		return 0;
	if (strcmp(policy, "cfq") && strcmp(policy, "sfq")) {
		log_msg("--fair=%s: unknown policy (want cfq or sfq)", policy);
		return -1;
	}
	return glue_fair_init(policy, depth, sets, nsets);
}

void glue_enqueue(struct req *r, uint64_t now)
{
	pthread_mutex_lock(&glue_lock);
	queued++;
	if (!glue_fair_take(r, now)) {
		r->next = NULL;
		if (fifo_tail)
			fifo_tail->next = r;
		else
			fifo_head = r;
		fifo_tail = r;
	}
	pthread_mutex_unlock(&glue_lock);
}

struct req *glue_dispatch(uint64_t now)
{
	struct req *r;

	pthread_mutex_lock(&glue_lock);
	r = fifo_head;
	if (r) {
		fifo_head = r->next;
		if (!fifo_head)
			fifo_tail = NULL;
	} else {
		r = glue_fair_pick(now);
	}
	if (r) {
		assert(queued > 0);
		queued--;
	}
	pthread_mutex_unlock(&glue_lock);
	return r;
}

void glue_complete(struct req *r, int status, uint64_t now)
{
	if (!r->in_sched)
		return;
	pthread_mutex_lock(&glue_lock);
	glue_fair_done(r, status, now);
	pthread_mutex_unlock(&glue_lock);
	r->in_sched = false;
}

uint64_t glue_next_event(uint64_t now)
{
	uint64_t t;

	pthread_mutex_lock(&glue_lock);
	t = glue_fair_next(now);
	pthread_mutex_unlock(&glue_lock);
	return t;
}

bool glue_idle(void)
{
	bool idle;

	pthread_mutex_lock(&glue_lock);
	idle = queued == 0;
	pthread_mutex_unlock(&glue_lock);
	return idle;
}
