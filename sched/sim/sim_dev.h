/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sim_dev.h - device models for the simulator and the host tests.
 *
 * A device has C servers (its concurrency) behind an internal FIFO of
 * unlimited depth: whatever the scheduler sends down waits there in
 * arrival order, as it does in a virtio queue, QEMU's throttle group or a
 * disk's own queue.  The scheduler's depth (requests it lets below) is a
 * separate number.  What a request costs depends on the kind:
 *
 *   FIFO    req_ns + bytes * byte_ps / 1000                 (virtio + throttle)
 *   BUCKET  FIFO cost, and a request starts only when a token bucket of
 *           iops and bytes/s (burst: 1/burst_div s of each) allows (cloud volume);
 *           with bill_after, as QEMU's throttle does, a request starts
 *           whenever the bucket is not in debt and its bytes are billed
 *           after it: the next request pays a large one's time
 *   SEEK    1 server; sequential (starts where the last ended): only the
 *           transfer; otherwise seek_ns scaled by sqrt(distance / span) plus
 *           a rotational delay drawn from the sector (hard disk)
 *   SSD     FIFO cost + qd_ns per other request in the device when it
 *           starts: latency rises with queue depth, throughput keeps
 *           growing more and more slowly (flash with a soft knee)
 *   WCACHE  writes cost req_ns / 8 into a cache of cache_bytes drained at
 *           drain_bps; a write that does not fit stops the whole device
 *           until the cache is down to half (a flush stall); reads as FIFO
 *   MIXED   each of the above whose parameter is set, together: FIFO cost
 *           (varied by jitter_pct), + qd_ns per request in the device,
 *           + the SEEK positioning when seek_ns; the token bucket when
 *           iops or bps; the write cache when cache_bytes (its writes
 *           are not varied); C servers in any case (the device family)
 *
 * Pure function of its inputs: no clock, no randomness but the sector.
 */
#ifndef SIM_DEV_H
#define SIM_DEV_H

#include <stdbool.h>
#include <stdint.h>

enum sim_dev_kind { SIM_DEV_FIFO, SIM_DEV_BUCKET, SIM_DEV_SEEK, SIM_DEV_SSD,
		    SIM_DEV_WCACHE, SIM_DEV_MIXED };

struct sim_io {
	uint64_t sector;	/* 512-byte sectors */
	uint32_t bytes;
	bool write;
	uint64_t submit_ns;	/* reached the device */
	uint64_t start_ns;	/* a server took it */
	uint64_t done_ns;	/* completes */
	uint64_t seq;
	void *priv;		/* the caller's */
	struct sim_io *next;	/* internal FIFO link */
};

struct sim_dev {
	/* model, set before the first submit (servers may change any time) */
	enum sim_dev_kind kind;
	uint32_t servers;	/* C */
	uint64_t req_ns;	/* per request [ns] */
	uint64_t byte_ps;	/* per byte [ps] */
	uint64_t iops, bps;	/* BUCKET rates; 0 = unlimited */
	uint32_t burst_div;	/* BUCKET burst = rate / burst_div (default 100) */
	bool bill_after;	/* BUCKET: bytes billed after the request (QEMU) */
	/*
	 * start as a sustained load leaves the device: BUCKET/MIXED with no
	 * tokens (no burst), WCACHE/MIXED with the cache half full
	 */
	bool steady_start;
	uint64_t seek_ns;	/* SEEK full-stroke seek */
	uint64_t rot_ns;	/* SEEK one revolution */
	uint64_t span;		/* SEEK sectors of the disk */
	uint64_t qd_ns;		/* SSD extra per request in the device */
	uint64_t cache_bytes;	/* WCACHE size */
	uint64_t drain_bps;	/* WCACHE destage rate [bytes/s] */
	uint32_t jitter_pct;	/* FIFO/BUCKET/SSD/MIXED: cost varies +-this %, by request */

	/* state */
	struct sim_io *qhead, *qtail;	/* waiting for a server */
	uint32_t nq;
	struct sim_io **svc;		/* in service: a min-heap by done_ns */
	uint32_t nsvc, maxsvc;
	uint64_t seq;
	uint64_t last_end;		/* SEEK: sector after the last request */
	double tok_io, tok_bytes;	/* BUCKET tokens */
	uint64_t tok_ns;		/* BUCKET: tokens counted up to here */
	double dirty;			/* WCACHE bytes not yet destaged */
	uint64_t dirty_ns;		/* WCACHE: dirty counted up to here */
	uint64_t stall_until;		/* WCACHE: nothing starts before */

	/* figures */
	uint64_t done, busy_ns, stalls;
};

/* @d zeroed or set up by the caller; resets state, keeps the model. */
void sim_dev_reset(struct sim_dev *d);
void sim_dev_free(struct sim_dev *d);

/* @io reaches the device at @now_ns. */
void sim_dev_submit(struct sim_dev *d, struct sim_io *io, uint64_t now_ns);

/* When something happens inside next (a completion or a throttled start). */
uint64_t sim_dev_next(const struct sim_dev *d);

/* A request complete at or before @now_ns (earliest first), or NULL. */
struct sim_io *sim_dev_pop(struct sim_dev *d, uint64_t now_ns);

/* Requests in the device: queued + in service. */
static inline uint32_t sim_dev_inflight(const struct sim_dev *d)
{
	return d->nq + d->nsvc;
}

/* One-line description of the model, e.g. "FIFO C=2 100 us + 1 ns/B". */
const char *sim_dev_name(const struct sim_dev *d, char *buf, unsigned int len);

#endif /* SIM_DEV_H */
