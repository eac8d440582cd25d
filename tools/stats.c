// SPDX-License-Identifier: GPL-2.0
/*
 * fairqctl: the stats file of fairq(4) parsed once, for stats
 * --json and top: "key value" totals, then "flow k=v k=v ..." lines.
 * Fields point into the text buffer; nothing is interpreted here beyond
 * splitting.  flow_key_name() turns a flow key into what it stands for.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <err.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fairqctl.h"

static bool is_flow_line(const char *line)
{
	return strncmp(line, "flow", 4) == 0 && (line[4] == ' ' || !line[4]);
}

static int add_field(struct stats_field **f, int *n, char *key, char *val)
{
	struct stats_field *nf = realloc(*f, (*n + 1) * sizeof(**f));

	if (!nf)
		return -ENOMEM;
	nf[*n].key = key;
	nf[*n].val = val;
	*f = nf;
	(*n)++;
	return 0;
}

/* "k=v k=v ...": a bare word is a key with an empty value */
static int parse_flow(char *s, struct stats_flow *fl)
{
	char *tok, *save = NULL, *eq;

	fl->f = NULL;
	fl->nf = 0;
	for (tok = strtok_r(s, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		eq = strchr(tok, '=');
		if (eq)
			*eq++ = '\0';
		if (add_field(&fl->f, &fl->nf, tok, eq ? eq : tok + strlen(tok)))
			return -ENOMEM;
	}
	return 0;
}

int stats_parse(char *text, struct stats *st)
{
	char *line, *next, *sp;
	struct stats_flow *nfl;

	memset(st, 0, sizeof(*st));
	st->text = text;
	st->buf = strdup(text);
	if (!st->buf)
		return -ENOMEM;
	for (line = st->buf; *line; line = next) {
		next = strchrnul(line, '\n');
		if (*next)
			*next++ = '\0';
		if (!*line)
			continue;
		if (is_flow_line(line)) {
			nfl = realloc(st->flows, (st->nflows + 1) * sizeof(*nfl));
			if (!nfl)
				return -ENOMEM;
			st->flows = nfl;
			if (parse_flow(line + 4, &st->flows[st->nflows++]))
				return -ENOMEM;
			continue;
		}
		sp = strchr(line, ' ');
		if (sp) {
			*sp++ = '\0';
			sp += strspn(sp, " ");
		}
		if (add_field(&st->t, &st->nt, line, sp ? sp : line + strlen(line)))
			return -ENOMEM;
	}
	return 0;
}

void stats_free(struct stats *st)
{
	int i;

	for (i = 0; i < st->nflows; i++)
		free(st->flows[i].f);
	free(st->flows);
	free(st->t);
	free(st->text);
	free(st->buf);
	memset(st, 0, sizeof(*st));
}

static const char *field_get(const struct stats_field *f, int n, const char *key)
{
	int i;

	for (i = 0; i < n; i++) {
		if (strcmp(f[i].key, key) == 0)
			return f[i].val;
	}
	return NULL;
}

const char *stats_total(const struct stats *st, const char *key)
{
	return field_get(st->t, st->nt, key);
}

const char *stats_flow_get(const struct stats_flow *fl, const char *key)
{
	return field_get(fl->f, fl->nf, key);
}

/* a plain decimal number: digits only, no sign, no leading zero */
bool stats_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || !isdigit((unsigned char)*s) || (s[0] == '0' && s[1]))
		return false;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return !errno && !*end;
}

/* the device's stats file; reports */
int stats_read(struct fairqctl_control *ctl, struct stats *st)
{
	char *text;
	int rc = read_attr(ctl, ROOT_SYSFS, "stats", &text);

	if (rc == -ENOENT) {
		warnx("%s: not powered on (no statistics)", ctl->name);
		return rc;
	}
	if (rc) {
		warnx("%s: stats: %s", ctl->name, strerror(-rc));
		return rc;
	}
	/* read_attr() took the last newline; the text output wants it */
	if (*text) {
		size_t n = strlen(text);
		char *t = realloc(text, n + 2);

		if (!t) {
			free(text);
			return -ENOMEM;
		}
		t[n] = '\n';
		t[n + 1] = '\0';
		text = t;
	}
	rc = stats_parse(text, st);
	if (rc) {
		warnx("%s: stats: %s", ctl->name, strerror(-rc));
		stats_free(st);
	}
	return rc;
}

/* /proc/PID/comm, or NULL */
static const char *proc_comm(const struct fairqctl_control *ctl, uint64_t pid,
			     char *buf, size_t len)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%" PRIu64 "/comm", ctl->proc, pid);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	if (!fgets(buf, len, f)) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/*
 * What a flow key stands for under CLASSIFY: the process name (tgid,
 * pid), the cgroup path (cgroup; relative to the cgroup root, "/" for the
 * root itself) or the user name (uid).  sfq keys are bucket numbers, and
 * a process that has exited has no name: NULL then.
 */
const char *flow_key_name(const struct fairqctl_control *ctl,
			  const char *classify, const char *policy,
			  uint64_t key, char *buf, size_t len)
{
	struct passwd *pw;
	char *path;
	size_t root;

	if (!classify || (policy && strcmp(policy, "sfq") == 0))
		return NULL;
	if (strcmp(classify, "tgid") == 0 || strcmp(classify, "pid") == 0)
		return proc_comm(ctl, key, buf, len);
	if (strcmp(classify, "uid") == 0) {
		pw = key <= UINT32_MAX ? getpwuid((uid_t)key) : NULL;
		if (!pw)
			return NULL;
		snprintf(buf, len, "%s", pw->pw_name);
		return buf;
	}
	if (strcmp(classify, "cgroup") != 0)
		return NULL;
	path = cgroup_id_path(ctl, key);
	if (!path)
		return NULL;
	root = strlen(ctl->cgroupfs);
	snprintf(buf, len, "%s", path[root] ? path + root : "/");
	free(path);
	return buf;
}
