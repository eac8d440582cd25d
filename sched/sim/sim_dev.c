// SPDX-License-Identifier: GPL-2.0
/*
 * sim_dev.c - the device models of sim_dev.h (host only, floating point
 * allowed).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "sim_dev.h"

#define NS_PER_S	1e9

static bool svc_less(const struct sim_io *a, const struct sim_io *b)
{
	return a->done_ns < b->done_ns ||
	       (a->done_ns == b->done_ns && a->seq < b->seq);
}

static void svc_push(struct sim_dev *d, struct sim_io *io)
{
	uint32_t i = d->nsvc++;
	struct sim_io *tmp;

	if (d->nsvc > d->maxsvc) {
		d->maxsvc = d->maxsvc ? d->maxsvc * 2 : 64;
		d->svc = realloc(d->svc, d->maxsvc * sizeof(*d->svc));
		if (!d->svc)
			abort();
	}
	d->svc[i] = io;
	while (i && svc_less(d->svc[i], d->svc[(i - 1) / 2])) {
		tmp = d->svc[i];
		d->svc[i] = d->svc[(i - 1) / 2];
		d->svc[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
}

static struct sim_io *svc_pop(struct sim_dev *d)
{
	struct sim_io *top = d->svc[0], *tmp;
	uint32_t i = 0, c;

	d->svc[0] = d->svc[--d->nsvc];
	for (;;) {
		c = 2 * i + 1;
		if (c >= d->nsvc)
			break;
		if (c + 1 < d->nsvc && svc_less(d->svc[c + 1], d->svc[c]))
			c++;
		if (!svc_less(d->svc[c], d->svc[i]))
			break;
		tmp = d->svc[i];
		d->svc[i] = d->svc[c];
		d->svc[c] = tmp;
		i = c;
	}
	return top;
}

void sim_dev_reset(struct sim_dev *d)
{
	d->qhead = d->qtail = NULL;
	d->nq = 0;
	d->nsvc = 0;
	d->seq = 0;
	d->last_end = 0;
	d->tok_io = d->iops && !d->steady_start ?
		    (double)d->iops / (d->burst_div ? d->burst_div : 100) : 0;
	d->tok_bytes = d->bps && !d->steady_start ?
		       (double)d->bps / (d->burst_div ? d->burst_div : 100) : 0;
	d->tok_ns = 0;
	d->dirty = d->steady_start ? (double)d->cache_bytes / 2 : 0;
	d->dirty_ns = 0;
	d->stall_until = 0;
	d->done = d->busy_ns = d->stalls = 0;
}

void sim_dev_free(struct sim_dev *d)
{
	free(d->svc);
	d->svc = NULL;
	d->maxsvc = 0;
}

static uint64_t xfer_ns(const struct sim_dev *d, uint32_t bytes)
{
	return (uint64_t)bytes * d->byte_ps / 1000;
}

/* Bring the token bucket and the write cache up to @now. */
static void dev_tick(struct sim_dev *d, uint64_t now)
{
	double div = d->burst_div ? d->burst_div : 100;
	double dt;

	if (now > d->tok_ns) {
		dt = (double)(now - d->tok_ns) / NS_PER_S;
		if (d->iops)
			d->tok_io = fmin(d->tok_io + dt * (double)d->iops,
					 fmax(1, (double)d->iops / div));
		if (d->bps)
			d->tok_bytes = fmin(d->tok_bytes + dt * (double)d->bps,
					    (double)d->bps / div);
		d->tok_ns = now;
	}
	if (now > d->dirty_ns) {
		dt = (double)(now - d->dirty_ns) / NS_PER_S;
		d->dirty = fmax(0, d->dirty - dt * (double)d->drain_bps);
		d->dirty_ns = now;
	}
}

/* Earliest time >= @now at which the FIFO's head may start. */
static uint64_t start_at(struct sim_dev *d, const struct sim_io *io,
			 uint64_t now)
{
	double wait = 0, need;
	uint64_t t = now;

	if (d->kind == SIM_DEV_BUCKET || d->kind == SIM_DEV_MIXED) {
		if (d->iops && d->tok_io < 1)
			wait = (1 - d->tok_io) / (double)d->iops;
		/* QEMU: whenever the bucket is not in debt (a byte's worth) */
		need = d->bill_after ? 1 :
		       fmin((double)io->bytes, (double)d->bps /
			    (d->burst_div ? d->burst_div : 100));
		if (d->bps && d->tok_bytes < need)
			wait = fmax(wait, (need - d->tok_bytes) / (double)d->bps);
		t = now + (uint64_t)ceil(wait * NS_PER_S);
	}
	if ((d->kind == SIM_DEV_WCACHE || d->kind == SIM_DEV_MIXED) &&
	    t < d->stall_until)
		t = d->stall_until;
	return t;
}

/* SEEK: the time to reach @io's sector from where the last one ended. */
static uint64_t seek_part(struct sim_dev *d, const struct sim_io *io)
{
	uint64_t dist, c = 0;

	if (io->sector != d->last_end) {
		dist = io->sector > d->last_end ? io->sector - d->last_end :
						  d->last_end - io->sector;
		c += d->seek_ns / 10 + (uint64_t)((double)d->seek_ns * 0.9 *
			sqrt((double)dist / (double)(d->span ? d->span : 1)));
		/* rotational delay: a fixed function of the sector */
		c += (io->sector * 0x9E3779B97F4A7C15ull >> 40) % (d->rot_ns ? d->rot_ns : 1);
	}
	d->last_end = io->sector + io->bytes / 512;
	return c;
}

/* WCACHE: a write into the cache, or a flush stall when it does not fit. */
static uint64_t cache_write(struct sim_dev *d, const struct sim_io *io,
			    uint64_t now)
{
	if (d->dirty + io->bytes > (double)d->cache_bytes) {
		/* flush: nothing starts until half is destaged */
		d->stalls++;
		d->stall_until = now + (uint64_t)((d->dirty -
			(double)d->cache_bytes / 2) /
			(double)d->drain_bps * NS_PER_S);
		d->dirty = (double)d->cache_bytes / 2;
		d->dirty_ns = d->stall_until;
		d->dirty += io->bytes;
		return d->stall_until - now +
		       (d->req_ns + xfer_ns(d, io->bytes)) / 8;
	}
	d->dirty += io->bytes;
	return (d->req_ns + xfer_ns(d, io->bytes)) / 8;
}

/* @c varied by up to +-jitter_pct %, a fixed function of the request. */
static uint64_t jitter_by(const struct sim_dev *d, const struct sim_io *io,
			  uint64_t c)
{
	uint64_t h = (io->seq + 1) * 0x9E3779B97F4A7C15ull;
	int64_t pm;

	h ^= h >> 29;
	pm = (int64_t)(h % (2 * d->jitter_pct + 1)) - (int64_t)d->jitter_pct;
	return (uint64_t)((int64_t)c + (int64_t)c * pm / 100);
}

/* MIXED: every feature whose parameter is set; jitter on the service. */
static uint64_t mixed_ns(struct sim_dev *d, const struct sim_io *io,
			 uint64_t now)
{
	uint64_t c;

	if (io->write && d->cache_bytes)
		return cache_write(d, io, now);
	c = d->req_ns + xfer_ns(d, io->bytes) + d->qd_ns * (d->nq + d->nsvc);
	if (d->seek_ns)
		c += seek_part(d, io);
	return d->jitter_pct ? jitter_by(d, io, c) : c;
}

static uint64_t cost_ns(struct sim_dev *d, const struct sim_io *io,
			uint64_t now)
{
	switch (d->kind) {
	case SIM_DEV_SEEK:
		return xfer_ns(d, io->bytes) + seek_part(d, io);
	case SIM_DEV_SSD:
		return d->req_ns + xfer_ns(d, io->bytes) +
		       d->qd_ns * (d->nq + d->nsvc);
	case SIM_DEV_WCACHE:
		if (io->write)
			return cache_write(d, io, now);
		return d->req_ns + xfer_ns(d, io->bytes);
	case SIM_DEV_MIXED:
		return mixed_ns(d, io, now);
	default:
		return d->req_ns + xfer_ns(d, io->bytes);
	}
}

/* FIFO, BUCKET, SSD: jitter on the whole cost (MIXED: in mixed_ns()). */
static uint64_t jitter(const struct sim_dev *d, const struct sim_io *io,
		       uint64_t c)
{
	if (!d->jitter_pct || d->kind == SIM_DEV_SEEK ||
	    d->kind == SIM_DEV_WCACHE || d->kind == SIM_DEV_MIXED)
		return c;
	return jitter_by(d, io, c);
}

/* Give free servers to the FIFO's head while the model lets it start. */
static void dev_start(struct sim_dev *d, uint64_t now)
{
	struct sim_io *io;
	uint64_t c;

	dev_tick(d, now);
	while (d->qhead && d->nsvc < d->servers &&
	       start_at(d, d->qhead, now) <= now) {
		io = d->qhead;
		d->qhead = io->next;
		if (!d->qhead)
			d->qtail = NULL;
		d->nq--;
		if (d->kind == SIM_DEV_BUCKET || d->kind == SIM_DEV_MIXED) {
			d->tok_io -= d->iops ? 1 : 0;
			d->tok_bytes -= d->bps ? io->bytes : 0;
		}
		c = jitter(d, io, cost_ns(d, io, now));
		io->start_ns = now;
		io->done_ns = now + c;
		d->busy_ns += c;
		svc_push(d, io);
	}
}

void sim_dev_submit(struct sim_dev *d, struct sim_io *io, uint64_t now_ns)
{
	io->submit_ns = now_ns;
	io->seq = d->seq++;
	io->next = NULL;
	if (d->qtail)
		d->qtail->next = io;
	else
		d->qhead = io;
	d->qtail = io;
	d->nq++;
	dev_start(d, now_ns);
}

uint64_t sim_dev_next(const struct sim_dev *d)
{
	uint64_t t = UINT64_MAX, s;

	if (d->nsvc)
		t = d->svc[0]->done_ns;
	if (d->qhead && d->nsvc < d->servers) {
		/* start_at() only reads the model here */
		s = start_at((struct sim_dev *)d, d->qhead, d->tok_ns);
		if (s < t)
			t = s;
	}
	return t;
}

struct sim_io *sim_dev_pop(struct sim_dev *d, uint64_t now_ns)
{
	struct sim_io *io = NULL;

	if (d->nsvc && d->svc[0]->done_ns <= now_ns) {
		io = svc_pop(d);
		d->done++;
	}
	dev_start(d, now_ns);
	return io;
}

/* "C=8, 120 us + 2500 ps/B, seek 8.0 ms, ..." : the features that are on */
static void mixed_name(const struct sim_dev *d, char *buf, unsigned int len)
{
	int n;

	n = snprintf(buf, len, "C=%u, %.0f us + %llu ps/B", d->servers,
		     (double)d->req_ns / 1e3, (unsigned long long)d->byte_ps);
	if (d->jitter_pct && n < (int)len)
		n += snprintf(buf + n, len - n, " +-%u%%", d->jitter_pct);
	if (d->seek_ns && n < (int)len)
		n += snprintf(buf + n, len - n, ", seek %.1f ms + %.1f ms revolution",
			      (double)d->seek_ns / 1e6, (double)d->rot_ns / 1e6);
	if (d->qd_ns && n < (int)len)
		n += snprintf(buf + n, len - n, ", +%.1f us per request in the device",
			      (double)d->qd_ns / 1e3);
	if ((d->iops || d->bps) && n < (int)len)
		n += snprintf(buf + n, len - n, ", throttle %llu IOPS %.2f MB/s burst 1/%u s%s",
			      (unsigned long long)d->iops, (double)d->bps / 1e6,
			      d->burst_div ? d->burst_div : 100,
			      d->bill_after ? " billed after" : "");
	if (d->cache_bytes && n < (int)len)
		snprintf(buf + n, len - n, ", write cache %llu MiB destaged at %.0f MB/s",
			 (unsigned long long)d->cache_bytes >> 20,
			 (double)d->drain_bps / 1e6);
}

const char *sim_dev_name(const struct sim_dev *d, char *buf, unsigned int len)
{
	switch (d->kind) {
	case SIM_DEV_FIFO:
		snprintf(buf, len, "FIFO C=%u, %llu us + %llu ps/B", d->servers,
			 (unsigned long long)d->req_ns / 1000,
			 (unsigned long long)d->byte_ps);
		break;
	case SIM_DEV_BUCKET:
		snprintf(buf, len, "token bucket %llu IOPS %llu MB/s, C=%u, %llu us",
			 (unsigned long long)d->iops,
			 (unsigned long long)d->bps / 1000000, d->servers,
			 (unsigned long long)d->req_ns / 1000);
		break;
	case SIM_DEV_SEEK:
		snprintf(buf, len, "seek disk: %.1f ms full seek, %.1f ms revolution, %llu ps/B",
			 (double)d->seek_ns / 1e6, (double)d->rot_ns / 1e6,
			 (unsigned long long)d->byte_ps);
		break;
	case SIM_DEV_SSD:
		snprintf(buf, len, "SSD-like C=%u, %llu us + %llu us per request in the device",
			 d->servers, (unsigned long long)d->req_ns / 1000,
			 (unsigned long long)d->qd_ns / 1000);
		break;
	case SIM_DEV_WCACHE:
		snprintf(buf, len, "write cache %llu MiB drained at %llu MB/s, C=%u, %llu us",
			 (unsigned long long)d->cache_bytes >> 20,
			 (unsigned long long)d->drain_bps / 1000000, d->servers,
			 (unsigned long long)d->req_ns / 1000);
		break;
	case SIM_DEV_MIXED:
		mixed_name(d, buf, len);
		break;
	}
	return buf;
}
