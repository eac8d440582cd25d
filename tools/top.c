// SPDX-License-Identifier: GPL-2.0
/*
 * fairqctl top NAME [--once] [--interval S] [-n N]: the busiest flows of
 * a device and its totals, from two samples of the stats file S seconds
 * apart.  Plain text: on a terminal each screen starts with the ANSI
 * "home, clear" sequence, otherwise (a pipe, a script, --once) screens
 * are printed one after the other, separated by a blank line.
 *
 * A cfq flow exists (and is listed) only while it has requests queued or
 * in flight, and its counters start again when it is made again, so the
 * stats are read every SUB_MS within the interval and the growth summed
 * per key; a flow not in the last read shows 0 queued and in flight.
 *
 * Per flow: IOPS and MiB/s from the growth of its reqs/bytes counters,
 * the mean wait of the requests dispatched in the interval (wait_ns_sum
 * over reqs), the largest wait the flow has seen (wait_ns_max); the
 * stats file has no wait distribution, so no percentile is shown.
 *
 * Below the totals, from the last sample: the depth in force (and whether
 * depth=auto chose it, with its changes, saturated epochs and latency
 * floor) and the device cost model fairness=time charges by ("-" per
 * direction until it exists).  A fairq.ko without these keys: no lines.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fairqctl.h"

enum { SUB_MS = 100 };	/* between reads of the stats within an interval */

/*
 * A flow over one screen's interval: the sums of its counters' growth
 * between sub-samples, and its fields from the last sample it was in.
 */
struct top_row {
	uint64_t key;
	uint64_t dreqs, dbytes, dwait;
	char cls[32];
	uint64_t weight, queued, inflight, wait_max;
	bool has_max;
};

struct top_acc {
	struct top_row *rows;
	int n;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t num(const char *s)
{
	uint64_t v;

	return stats_u64(s, &v) ? v : 0;
}

/* growth of a counter; a flow freed and made again starts over */
static uint64_t delta(const char *now, const char *before)
{
	uint64_t a = num(now), b = num(before);

	return a >= b ? a - b : a;
}

static const struct stats_flow *find_flow(const struct stats *st, uint64_t key)
{
	int i;

	for (i = 0; i < st->nflows; i++) {
		if (num(stats_flow_get(&st->flows[i], "key")) == key)
			return &st->flows[i];
	}
	return NULL;
}

static int busiest_first(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;
	uint64_t qx = x->queued + x->inflight, qy = y->queued + y->inflight;

	if (x->dreqs != y->dreqs)
		return x->dreqs < y->dreqs ? 1 : -1;
	if (qx != qy)
		return qx < qy ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static struct top_row *acc_row(struct top_acc *acc, uint64_t key)
{
	struct top_row *r;
	int i;

	for (i = 0; i < acc->n; i++) {
		if (acc->rows[i].key == key)
			return &acc->rows[i];
	}
	r = realloc(acc->rows, (acc->n + 1) * sizeof(*r));
	if (!r)
		return NULL;
	acc->rows = r;
	r = &acc->rows[acc->n++];
	memset(r, 0, sizeof(*r));
	r->key = key;
	return r;
}

/* add what each flow of @b did since @a */
static void accumulate(struct top_acc *acc, const struct stats *a,
		       const struct stats *b)
{
	const struct stats_flow *fl, *old;
	struct top_row *r;
	const char *c, *l;
	int i;

	for (i = 0; i < acc->n; i++)
		acc->rows[i].queued = acc->rows[i].inflight = 0;
	for (i = 0; i < b->nflows; i++) {
		fl = &b->flows[i];
		r = acc_row(acc, num(stats_flow_get(fl, "key")));
		if (!r)
			return;
		old = find_flow(a, r->key);
		r->dreqs += delta(stats_flow_get(fl, "reqs"),
				  old ? stats_flow_get(old, "reqs") : "0");
		r->dbytes += delta(stats_flow_get(fl, "bytes"),
				   old ? stats_flow_get(old, "bytes") : "0");
		r->dwait += delta(stats_flow_get(fl, "wait_ns_sum"),
				  old ? stats_flow_get(old, "wait_ns_sum") : "0");
		c = stats_flow_get(fl, "class");
		l = stats_flow_get(fl, "level");
		snprintf(r->cls, sizeof(r->cls), "%s/%s", c ? c : "?", l ? l : "?");
		r->weight = num(stats_flow_get(fl, "weight"));
		r->queued = num(stats_flow_get(fl, "queued"));
		r->inflight = num(stats_flow_get(fl, "inflight"));
		r->has_max = stats_flow_get(fl, "wait_ns_max") != NULL;
		if (num(stats_flow_get(fl, "wait_ns_max")) > r->wait_max)
			r->wait_max = num(stats_flow_get(fl, "wait_ns_max"));
	}
}

static void print_ms(uint64_t ns, bool known)
{
	if (known)
		printf(" %9.2f", ns / 1e6);
	else
		printf(" %9s", "-");
}

/* "a us + b ns/B" of one direction of the cost model, or "-" */
static void print_cost(const struct stats *b, const char *dir)
{
	char ka[32], kb[40];
	uint64_t a, bps;

	snprintf(ka, sizeof(ka), "cost_%s_ns", dir);
	snprintf(kb, sizeof(kb), "cost_%s_ps_per_byte", dir);
	a = num(stats_total(b, ka));
	bps = num(stats_total(b, kb));
	if (!a && !bps)
		printf("  %s -", dir);
	else
		printf("  %s %.1f us + %.3f ns/B", dir, a / 1e3, bps / 1e3);
}

/* depth in force and the cost model (fairq.ko with depth=auto) */
static void print_model(const struct stats *b)
{
	if (!stats_total(b, "depth_now"))
		return;
	printf("depth: now %" PRIu64 " (%s)  changes %" PRIu64 "  epochs %" PRIu64
	       "  latency floor %.2f ms\n",
	       num(stats_total(b, "depth_now")),
	       num(stats_total(b, "depth_auto")) ? "auto" : "fixed",
	       num(stats_total(b, "depth_changes")),
	       num(stats_total(b, "depth_epochs")),
	       num(stats_total(b, "lat_floor_ns")) / 1e6);
	printf("cost:");
	print_cost(b, "read");
	print_cost(b, "write");
	printf("  (epochs %" PRIu64 ")\n", num(stats_total(b, "cost_epochs")));
}

static void header(const struct fairqctl_control *ctl, const struct stats *a,
		   const struct stats *b, double dt)
{
	const char *t;
	uint64_t dreqs = delta(stats_total(b, "done_reqs"), stats_total(a, "done_reqs"));
	uint64_t dbytes = delta(stats_total(b, "done_bytes"), stats_total(a, "done_bytes"));
	uint64_t ddisp = delta(stats_total(b, "disp_reqs"), stats_total(a, "disp_reqs"));
	uint64_t dwait = delta(stats_total(b, "wait_ns_sum"), stats_total(a, "wait_ns_sum"));
	char when[32];
	time_t tnow = time(NULL);

	strftime(when, sizeof(when), "%H:%M:%S", localtime(&tnow));
	t = stats_total(b, "policy");
	printf("%s  %s  policy %s", ctl->name, when, t ? t : "?");
	t = stats_total(b, "classify");
	printf("  classify %s", t ? t : "?");
	t = stats_total(b, "depth");
	printf("  depth %s  interval %.1f s\n", t ? t : "?", dt);
	printf("total: %.1f IOPS  %.2f MiB/s  queued %" PRIu64 "  inflight %" PRIu64
	       "  flows %" PRIu64 "/%" PRIu64 "\n",
	       dreqs / dt, dbytes / dt / 1048576.0, num(stats_total(b, "queued")),
	       num(stats_total(b, "inflight")), num(stats_total(b, "flows")),
	       num(stats_total(b, "flows_max")));
	printf("       wait avg %.2f ms  max %.2f ms  expired +%" PRIu64
	       "  errors +%" PRIu64 "\n",
	       ddisp ? dwait / 1e6 / ddisp : 0.0,
	       num(stats_total(b, "wait_ns_max")) / 1e6,
	       delta(stats_total(b, "expired"), stats_total(a, "expired")),
	       delta(stats_total(b, "errors"), stats_total(a, "errors")));
	print_model(b);
}

static void screen(const struct fairqctl_control *ctl, const struct stats *a,
		   const struct stats *b, struct top_acc *acc, double dt)
{
	const char *classify = stats_total(b, "classify");
	const char *policy = stats_total(b, "policy");
	char name[PATH_MAX];
	const char *nm;
	int i;

	header(ctl, a, b, dt);
	printf("\n%-10s %-24s %-7s %6s %9s %8s %6s %5s %9s %9s\n", "KEY", "NAME",
	       "CLASS", "WEIGHT", "IOPS", "MiB/s", "QUEUED", "INFL",
	       "WAIT_MS", "MAX_MS");
	qsort(acc->rows, acc->n, sizeof(*acc->rows), busiest_first);
	for (i = 0; i < acc->n && i < ctl->top_rows; i++) {
		const struct top_row *r = &acc->rows[i];

		nm = flow_key_name(ctl, classify, policy, r->key, name, sizeof(name));
		printf("%-10" PRIu64 " %-24.24s %-7s %6" PRIu64 " %9.1f %8.2f %6" PRIu64
		       " %5" PRIu64, r->key, nm ? nm : "-", r->cls, r->weight,
		       r->dreqs / dt, r->dbytes / dt / 1048576.0, r->queued,
		       r->inflight);
		print_ms(r->dreqs ? r->dwait / r->dreqs : 0, r->dreqs != 0);
		print_ms(r->wait_max, r->has_max);
		putchar('\n');
	}
	if (!acc->n)
		printf("(no flows: nothing queued or in flight)\n");
}

/* sleep @s seconds, in steps, so that a signal ends it early */
static void nap(double s)
{
	double until = now_s() + s;

	while (!stop && now_s() < until)
		sleep_ms(50);
}

int cmd_top(struct fairqctl_control *ctl)
{
	struct stats first, prev, cur;
	bool tty = !ctl->once && isatty(STDOUT_FILENO);
	struct top_acc acc = { 0 };
	double ta, tb, end;
	int screens = 0, rc = EXIT_SUCCESS;

	if (need_entry(ctl) || stats_read(ctl, &first))
		return EXIT_FAILURE;
	ta = now_s();
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while (!stop) {
		/* prev: the last read; first: the one the screen began with */
		if (stats_parse(strdup(first.text), &prev)) {
			rc = EXIT_FAILURE;
			break;
		}
		end = ta + ctl->interval;
		do {
			nap(end - now_s() < SUB_MS / 1000.0 ? end - now_s() :
			    SUB_MS / 1000.0);
			if (stop)
				break;
			if (stats_read(ctl, &cur)) {
				rc = EXIT_FAILURE;
				break;
			}
			accumulate(&acc, &prev, &cur);
			stats_free(&prev);
			prev = cur;
		} while (now_s() < end - 0.001);
		if (stop || rc) {
			stats_free(&prev);
			break;
		}
		tb = now_s();
		if (tty)
			fputs("\033[H\033[2J", stdout);
		else if (screens)
			putchar('\n');
		screen(ctl, &first, &prev, &acc, tb - ta);
		fflush(stdout);
		screens++;
		acc.n = 0;
		stats_free(&first);
		first = prev;
		ta = tb;
		if (ctl->once)
			break;
	}
	stats_free(&first);
	free(acc.rows);
	return rc;
}
