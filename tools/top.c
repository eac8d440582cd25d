// SPDX-License-Identifier: GPL-2.0
/*
 * fairqctl top NAME [--once] [--interval S] [-n N]: the busiest flows of
 * a device and its totals, from two samples of the stats file S seconds
 * apart.  Plain text: on a terminal each screen starts with the ANSI
 * "home, clear" sequence, otherwise (a pipe, a script, --once) screens
 * are printed one after the other, separated by a blank line.
 *
 * Per flow: IOPS and MiB/s from the growth of its reqs/bytes counters,
 * the mean wait of the requests dispatched in the interval (wait_ns_sum
 * over reqs), the largest wait the flow has seen (wait_ns_max); the
 * stats file has no wait distribution, so no percentile is shown.
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

struct top_row {
	uint64_t key;
	const struct stats_flow *fl;
	uint64_t dreqs, dbytes, dwait;
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
	uint64_t qx, qy;

	if (x->dreqs != y->dreqs)
		return x->dreqs < y->dreqs ? 1 : -1;
	qx = num(stats_flow_get(x->fl, "queued")) + num(stats_flow_get(x->fl, "inflight"));
	qy = num(stats_flow_get(y->fl, "queued")) + num(stats_flow_get(y->fl, "inflight"));
	if (qx != qy)
		return qx < qy ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static void print_ms(uint64_t ns, bool known)
{
	if (known)
		printf(" %9.2f", ns / 1e6);
	else
		printf(" %9s", "-");
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
}

static void screen(const struct fairqctl_control *ctl, const struct stats *a,
		   const struct stats *b, double dt)
{
	const char *classify = stats_total(b, "classify");
	const char *policy = stats_total(b, "policy");
	struct top_row *rows;
	char name[PATH_MAX], cls[32];
	const char *nm, *c;
	int i, n = b->nflows;

	header(ctl, a, b, dt);
	printf("\n%-10s %-24s %-7s %6s %9s %8s %6s %5s %9s %9s\n", "KEY", "NAME",
	       "CLASS", "WEIGHT", "IOPS", "MiB/s", "QUEUED", "INFL",
	       "WAIT_MS", "MAX_MS");
	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!rows)
		return;
	for (i = 0; i < n; i++) {
		const struct stats_flow *fl = &b->flows[i], *old;

		rows[i].fl = fl;
		rows[i].key = num(stats_flow_get(fl, "key"));
		old = find_flow(a, rows[i].key);
		rows[i].dreqs = delta(stats_flow_get(fl, "reqs"),
				      old ? stats_flow_get(old, "reqs") : "0");
		rows[i].dbytes = delta(stats_flow_get(fl, "bytes"),
				       old ? stats_flow_get(old, "bytes") : "0");
		rows[i].dwait = delta(stats_flow_get(fl, "wait_ns_sum"),
				      old ? stats_flow_get(old, "wait_ns_sum") : "0");
	}
	qsort(rows, n, sizeof(*rows), busiest_first);
	for (i = 0; i < n && i < ctl->top_rows; i++) {
		const struct stats_flow *fl = rows[i].fl;

		nm = flow_key_name(ctl, classify, policy, rows[i].key, name, sizeof(name));
		c = stats_flow_get(fl, "class");
		snprintf(cls, sizeof(cls), "%s/%s", c ? c : "?",
			 stats_flow_get(fl, "level") ? stats_flow_get(fl, "level") : "?");
		printf("%-10" PRIu64 " %-24.24s %-7s %6" PRIu64 " %9.1f %8.2f %6" PRIu64
		       " %5" PRIu64, rows[i].key, nm ? nm : "-", cls,
		       num(stats_flow_get(fl, "weight")), rows[i].dreqs / dt,
		       rows[i].dbytes / dt / 1048576.0,
		       num(stats_flow_get(fl, "queued")),
		       num(stats_flow_get(fl, "inflight")));
		print_ms(rows[i].dreqs ? rows[i].dwait / rows[i].dreqs : 0,
			 rows[i].dreqs != 0);
		print_ms(num(stats_flow_get(fl, "wait_ns_max")),
			 stats_flow_get(fl, "wait_ns_max") != NULL);
		putchar('\n');
	}
	if (!n)
		printf("(no flows: nothing queued or in flight)\n");
	free(rows);
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
	struct stats a, b;
	bool tty = !ctl->once && isatty(STDOUT_FILENO);
	double ta, tb;
	int screens = 0;

	if (need_entry(ctl) || stats_read(ctl, &a))
		return EXIT_FAILURE;
	ta = now_s();
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (;;) {
		nap(ctl->interval);
		if (stop)
			break;
		if (stats_read(ctl, &b)) {
			stats_free(&a);
			return EXIT_FAILURE;
		}
		tb = now_s();
		if (tty)
			fputs("\033[H\033[2J", stdout);
		else if (screens)
			putchar('\n');
		screen(ctl, &a, &b, tb - ta);
		fflush(stdout);
		screens++;
		stats_free(&a);
		a = b;
		ta = tb;
		if (ctl->once)
			break;
	}
	stats_free(&a);
	return EXIT_SUCCESS;
}
