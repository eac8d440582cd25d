// SPDX-License-Identifier: GPL-2.0
/*
 * devmodel.c - a slow, predictable disk in front of the real one.
 *
 * The model has three independent limits, each off when 0:
 *
 *   iops        a request may start only 1/iops after the previous one
 *               (a token bucket with a burst of one request);
 *   bw          data moves through one channel at bw bytes/s: a request's
 *               transfer starts when the channel is free and occupies it
 *               for len/bw seconds (READ and WRITE only);
 *   latency     a fixed service time added after the transfer; it is
 *               not serialised, so "depth" requests overlap their latency.
 *
 * and "depth", the number of requests the disk holds at once (the engine
 * does not dispatch past it).  A request may not complete before its
 * deadline even if the real I/O finished earlier; the engine holds it.
 *
 * Called only from the engine thread: no locking.
 */
#include <assert.h>

#include "fairq_nbd.h"
#include "nbd_proto.h"

static struct {
	struct devmodel_cfg cfg;
	uint64_t next_start_ns;		/* iops: earliest next start [ns] */
	uint64_t chan_free_ns;		/* bw: channel busy until [ns] */
} dm;

void devmodel_init(const struct devmodel_cfg *c)
{
	dm.cfg = *c;
	if (!dm.cfg.depth)
		dm.cfg.depth = DEPTH_DEFAULT;
	assert(dm.cfg.depth >= 1 && dm.cfg.depth <= DEPTH_MAX);
	dm.next_start_ns = 0;
	dm.chan_free_ns = 0;
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

/* Request @r starts now: charge it and set its completion deadline. */
void devmodel_charge(struct req *r, uint64_t now)
{
	uint64_t done = now;

	assert(devmodel_ready_at(now) <= now);
	if (dm.cfg.iops) {
		uint64_t gap = 1000000000ull / dm.cfg.iops;

		/* keep the schedule through wake-up slop, restart after idle */
		if (dm.next_start_ns + gap < now)
			dm.next_start_ns = now + gap;
		else
			dm.next_start_ns += gap;
	}
	if (dm.cfg.bw_bps && (r->type == NBD_CMD_READ ||
			      r->type == NBD_CMD_WRITE)) {
		uint64_t start = dm.chan_free_ns > now ? dm.chan_free_ns : now;

		dm.chan_free_ns = start + xfer_ns(r->len);
		done = dm.chan_free_ns;
	}
	r->deadline_ns = done + dm.cfg.latency_ns;
}
