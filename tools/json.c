// SPDX-License-Identifier: GPL-2.0
/*
 * fairqctl --json: stats, list and get as JSON objects whose layout is
 * stable (fairqctl(8), JSON OUTPUT; each has "format": 1):
 *
 *   stats NAME --json
 *   {"format": 1, "device": "fairq0", "monotonic_ns": N,
 *    "totals": {"policy": "cfq", ..., every "key value" line},
 *    "flows": [{"key": N, "name": "fio" or null, "class": "be", ...}],
 *    "cgroup_weights": [{"id": N, "path": "/sys/fs/cgroup/a" or null,
 *                        "weight": W}]}
 *   list --json
 *   {"format": 1, "devices": [{"name": "fairq0", "backing": "/dev/vdb"
 *                              or null, "power": 1, "policy": "cfq"}]}
 *   get NAME KEY --json
 *   {"format": 1, "device": "fairq0", "key": "depth", "value": 4}
 *   get NAME cgroup-weight --json
 *   {"format": 1, "device": "fairq0", "key": "cgroup-weight",
 *    "value": [the objects of stats' "cgroup_weights"]}
 *
 * Members come in the order of the stats file; fields the kernel adds
 * later show up without a fairqctl change.  Types are fixed per field:
 * the names in string_fields[] are always strings, every other value is
 * a number when it is a plain decimal integer and a string otherwise
 * (so "depth" is a number when fixed and "auto" when not; "depth_now"
 * is always the number in force).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fairqctl.h"

enum { JSON_FORMAT = 1 };

/* stats fields whose values are words: strings whatever they look like */
static const char *const string_fields[] = { "policy", "classify", "class" };

/* length of the valid UTF-8 sequence at s (n bytes left), or 0 */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* overlong, surrogate, beyond U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

/* a JSON string; bytes that are not UTF-8 become U+FFFD */
static void json_string(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), len;

	putchar('"');
	while (n) {
		if (*s == '"' || *s == '\\') {
			printf("\\%c", *s);
			len = 1;
		} else if (*s < 0x20) {
			printf("\\u%04x", *s);
			len = 1;
		} else if ((len = utf8_len(s, n))) {
			fwrite(s, 1, len, stdout);
		} else {
			fputs("\\ufffd", stdout);
			len = 1;
		}
		s += len;
		n -= len;
	}
	putchar('"');
}

static bool is_string_field(const char *key)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(string_fields); i++) {
		if (strcmp(string_fields[i], key) == 0)
			return true;
	}
	return false;
}

/* "key": value, typed as the header comment says */
static void json_member(const char *key, const char *val)
{
	uint64_t v;

	json_string(key);
	fputs(": ", stdout);
	if (!is_string_field(key) && stats_u64(val, &v))
		printf("%" PRIu64, v);
	else
		json_string(val);
}

static void json_fields(const struct stats_field *f, int n, const char *sep)
{
	int i;

	for (i = 0; i < n; i++) {
		if (i)
			fputs(sep, stdout);
		json_member(f[i].key, f[i].val);
	}
}

static void json_flows(const struct fairqctl_control *ctl, const struct stats *st)
{
	const char *classify = stats_total(st, "classify");
	const char *policy = stats_total(st, "policy");
	const char *name;
	char buf[PATH_MAX];
	uint64_t key;
	int i;

	fputs("  \"flows\": [", stdout);
	for (i = 0; i < st->nflows; i++) {
		const struct stats_flow *fl = &st->flows[i];

		fputs(i ? ",\n    {" : "\n    {", stdout);
		json_fields(fl->f, fl->nf, ", ");
		name = stats_u64(stats_flow_get(fl, "key"), &key) ?
			flow_key_name(ctl, classify, policy, key, buf, sizeof(buf)) :
			NULL;
		fputs(fl->nf ? ", \"name\": " : "\"name\": ", stdout);
		if (name)
			json_string(name);
		else
			fputs("null", stdout);
		putchar('}');
	}
	fputs(st->nflows ? "\n  ],\n" : "],\n", stdout);
}

/* cgroup weights as an array of {"id", "path", "weight"} objects */
static void json_weights_array(const struct fairqctl_control *ctl,
			       const struct cgroup_weight *w, int n,
			       const char *indent)
{
	char *path;
	int i;

	putchar('[');
	for (i = 0; i < n; i++) {
		path = cgroup_id_path(ctl, w[i].id);
		printf("%s\n%s  {\"id\": %" PRIu64 ", \"path\": ", i ? "," : "",
		       indent, w[i].id);
		if (path)
			json_string(path);
		else
			fputs("null", stdout);
		printf(", \"weight\": %u}", w[i].weight);
		free(path);
	}
	if (n)
		printf("\n%s", indent);
	putchar(']');
}

static void json_cgroup_weights(struct fairqctl_control *ctl)
{
	struct cgroup_weight *w = NULL;
	int n = 0;

	/* a fairq.ko without cgroup weights: an empty list */
	if (read_cgroup_weights(ctl, &w, &n))
		n = 0;
	fputs("  \"cgroup_weights\": ", stdout);
	json_weights_array(ctl, w, n, "  ");
	putchar('\n');
	free(w);
}

void stats_json(const struct fairqctl_control *ctl, const struct stats *st)
{
	struct fairqctl_control c = *ctl;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	printf("{\n  \"format\": %d,\n  \"device\": ", JSON_FORMAT);
	json_string(ctl->name);
	printf(",\n  \"monotonic_ns\": %" PRIu64 ",\n",
	       (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
	fputs("  \"totals\": {", stdout);
	if (st->nt) {
		fputs("\n    ", stdout);
		json_fields(st->t, st->nt, ",\n    ");
		fputs("\n  },\n", stdout);
	} else {
		fputs("},\n", stdout);
	}
	json_flows(ctl, st);
	json_cgroup_weights(&c);
	fputs("}\n", stdout);
}

/* list --json: every device, the columns of the text form */
void list_json(struct fairqctl_control *ctl, char **names, int n)
{
	static const char *const cols[] = { "backing", "power", "policy" };
	char *val;
	size_t c;
	int i;

	printf("{\n  \"format\": %d,\n  \"devices\": [", JSON_FORMAT);
	for (i = 0; i < n; i++) {
		snprintf(ctl->name, sizeof(ctl->name), "%s", names[i]);
		fputs(i ? ",\n    {" : "\n    {", stdout);
		json_member("name", ctl->name);
		for (c = 0; c < ARRAY_SIZE(cols); c++) {
			fputs(", ", stdout);
			/* an unset backing, or an attribute that cannot be read */
			if (read_attr(ctl, ROOT_CONFIGFS, cols[c], &val) || !*val) {
				json_string(cols[c]);
				fputs(": null", stdout);
			} else {
				json_member(cols[c], val);
			}
			free(val);
		}
		putchar('}');
	}
	fputs(n ? "\n  ]\n}\n" : "]\n}\n", stdout);
}

static void get_json_head(const struct fairqctl_control *ctl, const char *key)
{
	printf("{\n  \"format\": %d,\n  \"device\": ", JSON_FORMAT);
	json_string(ctl->name);
	fputs(",\n  \"key\": ", stdout);
	json_string(key);
	fputs(",\n  ", stdout);
}

/* get NAME KEY --json: the value typed as the stats' are */
void get_json(const struct fairqctl_control *ctl, const char *key,
	      const char *val)
{
	uint64_t v;

	get_json_head(ctl, key);
	fputs("\"value\": ", stdout);
	if (!is_string_field(key) && stats_u64(val, &v))
		printf("%" PRIu64, v);
	else
		json_string(val);
	fputs("\n}\n", stdout);
}

/* get NAME cgroup-weight --json: the weights @w read */
void get_cgroup_weights_json(const struct fairqctl_control *ctl,
			     const struct cgroup_weight *w, int n)
{
	get_json_head(ctl, "cgroup-weight");
	fputs("\"value\": ", stdout);
	json_weights_array(ctl, w, n, "  ");
	fputs("\n}\n", stdout);
}
