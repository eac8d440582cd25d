// SPDX-License-Identifier: GPL-2.0
/*
 * A slow, predictable disk in front of the real one.
 *
 * The model has three independent limits, each off when 0:
 *
 *   iops        a request may start only 1/iops after the previous one
 *               (a token bucket; when the engine woke late it may catch
 *               up on at most 25 ms of missed starts, so a loaded host
 *               does not lower the rate);
 *   bw          data moves through one channel at bw bytes/s: a request's
 *               transfer starts when the channel is free and occupies it
 *               for len/bw seconds (READ and WRITE only);
 *   latency     a fixed service time added after the transfer; it is
 *               not serialised, so "depth" requests overlap their latency.
 *
 * Times are model times (see devmodel_charge()): lateness of the engine
 * thread on a loaded host is absorbed rather than added.
 *
 * and "depth", the number of requests the disk holds at once (the engine
 * does not dispatch past it).  A request may not complete before its
 * deadline even if the real I/O finished earlier; the engine holds it.
 *
 * Called only from the engine thread: no locking.
 */
#include <assert.h>
#include <string.h>

#include "fairq_nbd.h"
#include "nbd_proto.h"

enum { CATCHUP_NS = 25000000 };	/* 25 ms of lateness absorbed [ns] */

static struct {
	struct devmodel_cfg cfg;
	uint64_t next_start_ns;		/* iops: earliest next start [ns] */
	uint64_t chan_free_ns;		/* bw: channel busy until [ns] */
	uint64_t slot_free[DEPTH_MAX];	/* ring: when each free slot freed [ns] */
	unsigned int slot_head, slot_count;
} dm;

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* The slot a starting request takes: when it became free [ns]. */
static uint64_t slot_take(void)
{
	uint64_t t;

	assert(dm.slot_count > 0);
	t = dm.slot_free[dm.slot_head];
	dm.slot_head = (dm.slot_head + 1) % DEPTH_MAX;
	dm.slot_count--;
	return t;
}

/* A request finished: its slot is free as of its model deadline. */
void devmodel_release(const struct req *r)
{
	unsigned int i = (dm.slot_head + dm.slot_count) % DEPTH_MAX;

	assert(dm.slot_count < dm.cfg.depth);
	dm.slot_free[i] = r->deadline_ns;
	dm.slot_count++;
}

void devmodel_init(const struct devmodel_cfg *c)
{
	dm.cfg = *c;
	if (!dm.cfg.depth)
		dm.cfg.depth = DEPTH_DEFAULT;
	assert(dm.cfg.depth >= 1 && dm.cfg.depth <= DEPTH_MAX);
	dm.next_start_ns = 0;
	dm.chan_free_ns = 0;
	dm.slot_head = 0;
	dm.slot_count = dm.cfg.depth;
	memset(dm.slot_free, 0, sizeof(dm.slot_free));
}

unsigned int devmodel_depth(void)
{
	return dm.cfg.depth;
}

/* Earliest time [ns] at which the next request may start (<= now: now). */
uint64_t devmodel_ready_at(uint64_t now)
{
	if (!dm.cfg.iops || dm.next_start_ns <= now)
		return now;
	return dm.next_start_ns;
}

static uint64_t xfer_ns(uint32_t len)
{
	return (uint64_t)((__uint128_t)len * 1000000000u / dm.cfg.bw_bps);
}

/*
 * Request @r starts now: charge it and set its completion deadline.
 *
 * Model time, not wake-up time: the request really started when both it
 * had arrived and its slot had become free (the previous occupant's
 * deadline), however late the engine thread got to run; at most
 * CATCHUP_NS of such lateness is absorbed.  So a busy host makes
 * replies late but does not make the modelled disk slower.
 */
void devmodel_charge(struct req *r, uint64_t now)
{
	uint64_t floor = now > CATCHUP_NS ? now - CATCHUP_NS : 0;
	uint64_t start, done;

	assert(devmodel_ready_at(now) <= now);
	/* arrive_ns is read by another thread and may be a bit after now */
	start = max64(max64(r->arrive_ns, slot_take()), floor);
	if (dm.cfg.iops) {
		uint64_t gap = 1000000000ull / dm.cfg.iops;

		/* keep the schedule through lateness, restart after idle */
		start = max64(start, dm.next_start_ns);
		if (dm.next_start_ns + gap + CATCHUP_NS < now)
			dm.next_start_ns = now + gap;
		else
			dm.next_start_ns += gap;
	}
	if (start > now)
		start = now;
	r->start_ns = start;
	done = start;
	if (dm.cfg.bw_bps && (r->type == NBD_CMD_READ ||
			      r->type == NBD_CMD_WRITE)) {
		done = max64(max64(dm.chan_free_ns, start), floor) +
		       xfer_ns(r->len);
		dm.chan_free_ns = done;
	}
	r->deadline_ns = done + dm.cfg.latency_ns;
}
