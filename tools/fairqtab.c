// SPDX-License-Identifier: GPL-2.0
/*
 * fairqctl: /etc/fairq/fairqtab, as fairqtab(5) describes it.
 *
 *   # NAME  BACKING              [POLICY] [KEY=VALUE]...
 *   fairq0  UUID=1b4e28ba-...    cfq      classify=cgroup cgroup-weight=batch:100
 *
 * fairqtab_read() parses every line and reports each bad one as
 * "FILE:LINE: ..." (the line is then marked !ok and not applied);
 * resolve_backing() finds the block device a BACKING names.
 * Value checks here are the syntactic ones (a known key, a decimal
 * number, one of the words); ranges are the kernel's to check.
 */
#define _GNU_SOURCE
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fairqctl.h"
#include "../sched/fq_tunables_table.h"	/* enum fq_tun_kind */

/*
 * The keys a line may set: the core's tunables, from the one table
 * (sched/fq_tunables_table.h, fairq(4)), and the driver's classify.
 */
struct tab_key {
	const char *name;
	const char *words;	/* one space apart; "": a decimal number */
	bool allocates;		/* FQ_TK_ALLOC: changes only while powered off */
	bool autos;		/* FQ_TK_AUTO: a number or the word "auto" */
};

#define FQ_TUNABLE(_name, _field, _kind, _min, _max, _def, _unit, _words, ...) \
	KEY_##_name,
enum {
#include "../sched/fq_tunables_table.h"
	KEY_classify,
	KEY_COUNT
};
#undef FQ_TUNABLE

#define FQ_TUNABLE(_name, _field, _kind, _min, _max, _def, _unit, _words, ...) \
	[KEY_##_name] = { #_name, _words, (_kind) == FQ_TK_ALLOC,		\
			  (_kind) == FQ_TK_AUTO },
static const struct tab_key tab_keys[KEY_COUNT] = {
#include "../sched/fq_tunables_table.h"
	[KEY_classify] = { "classify", "tgid pid cgroup uid", false, false },
};
#undef FQ_TUNABLE

/* BACKING=TAG=VALUE: the /dev/disk directory and blkid's tag */
static const struct tab_tag {
	const char *tag;
	const char *dir;
} tab_tags[] = {
	{ "UUID", "by-uuid" },
	{ "PARTUUID", "by-partuuid" },
	{ "LABEL", "by-label" },
	{ "PARTLABEL", "by-partlabel" },
};

static const struct tab_key *find_key(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tab_keys); i++) {
		if (strcmp(tab_keys[i].name, name) == 0)
			return &tab_keys[i];
	}
	return NULL;
}

static const struct tab_tag *find_tag(const char *spec, const char **val)
{
	size_t i, n;

	for (i = 0; i < ARRAY_SIZE(tab_tags); i++) {
		n = strlen(tab_tags[i].tag);
		if (strncmp(spec, tab_tags[i].tag, n) == 0 && spec[n] == '=') {
			*val = spec + n + 1;
			return &tab_tags[i];
		}
	}
	return NULL;
}

/* "FILE:LINE: msg"; counts the line as bad */
static void __attribute__((format(printf, 3, 4)))
bad(struct fairqtab *tab, struct tab_line *l, const char *fmt, ...)
{
	char msg[PATH_MAX * 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (*l->name)
		warnx("%s:%d: %s: %s", tab->file, l->lineno, l->name, msg);
	else
		warnx("%s:%d: %s", tab->file, l->lineno, msg);
	if (l->ok)
		tab->nbad++;
	l->ok = false;
}

/* "a b c" as "a, b, c" */
static void join_words(const char *w, char *buf, size_t len)
{
	size_t at = 0, n;

	buf[0] = '\0';
	while (*w && at < len) {
		n = strcspn(w, " ");
		at += snprintf(buf + at, len - at, "%s%.*s", at ? ", " : "", (int)n, w);
		w += n;
		w += strspn(w, " ");
	}
}

/* @val is one of the space-separated @words */
static bool is_word(const char *words, const char *val)
{
	size_t n, len = strlen(val);

	while (*words) {
		n = strcspn(words, " ");
		if (n == len && strncmp(words, val, n) == 0)
			return true;
		words += n;
		words += strspn(words, " ");
	}
	return false;
}

bool key_allocates(const char *key)
{
	const struct tab_key *k = find_key(key);

	return k && k->allocates;
}

static bool is_number(const char *s)
{
	size_t n = strlen(s);

	/* 10 digits hold every range the kernel has (max 67108864) */
	return n && n <= 10 && strspn(s, "0123456789") == n;
}

static void check_value(struct fairqtab *tab, struct tab_line *l,
			const struct tab_key *k, const char *val)
{
	char words[128];

	if (!*k->words) {
		if (k->autos && strcmp(val, "auto") == 0)
			return;
		if (!is_number(val))
			bad(tab, l, "%s: '%s' is not a number%s", k->name, val,
			    k->autos ? " or auto" : "");
		return;
	}
	if (is_word(k->words, val))
		return;
	join_words(k->words, words, sizeof(words));
	bad(tab, l, "%s: '%s' is not one of %s", k->name, val, words);
}

static void add_setting(struct fairqtab *tab, struct tab_line *l,
			const struct tab_key *k, const char *val)
{
	struct tab_setting *ns;
	int i;

	for (i = 0; i < l->nset; i++) {
		if (l->set[i].key == k->name) {
			bad(tab, l, "%s given twice", k->name);
			return;
		}
	}
	check_value(tab, l, k, val);
	ns = realloc(l->set, (l->nset + 1) * sizeof(*ns));
	if (!ns)
		err(EXIT_FAILURE, "out of memory");
	l->set = ns;
	l->set[l->nset].key = k->name;
	l->set[l->nset].val = strdup(val);
	if (!l->set[l->nset++].val)
		err(EXIT_FAILURE, "out of memory");
}

/* cgroup-weight=PATH:W; the last ':' splits */
static void add_weight(struct fairqtab *tab, struct tab_line *l, const char *pw)
{
	const char *colon = strrchr(pw, ':');
	struct tab_weight *nw;
	unsigned int w;
	int i;

	if (!colon || colon == pw) {
		bad(tab, l, "cgroup-weight: '%s': expected PATH:WEIGHT", pw);
		return;
	}
	if (parse_weight(colon + 1, &w) || w == 0) {
		bad(tab, l, "cgroup-weight: '%s': weight must be 1..%d", pw, WEIGHT_MAX);
		return;
	}
	for (i = 0; i < l->nwt; i++) {
		if (strlen(l->wt[i].path) == (size_t)(colon - pw) &&
		    strncmp(l->wt[i].path, pw, colon - pw) == 0) {
			bad(tab, l, "cgroup-weight: %.*s given twice",
			    (int)(colon - pw), pw);
			return;
		}
	}
	nw = realloc(l->wt, (l->nwt + 1) * sizeof(*nw));
	if (!nw)
		err(EXIT_FAILURE, "out of memory");
	l->wt = nw;
	l->wt[l->nwt].path = strndup(pw, colon - pw);
	l->wt[l->nwt++].weight = w;
	if (!l->wt[l->nwt - 1].path)
		err(EXIT_FAILURE, "out of memory");
}

static void parse_field(struct fairqtab *tab, struct tab_line *l,
			char *field, int nth)
{
	const struct tab_key *k;
	char *eq = strchr(field, '=');

	if (!eq && nth == 2) {		/* the optional POLICY */
		add_setting(tab, l, &tab_keys[KEY_policy], field);
		return;
	}
	if (!eq) {
		bad(tab, l, "'%s': expected KEY=VALUE", field);
		return;
	}
	*eq = '\0';
	if (strcmp(field, "cgroup-weight") == 0) {
		add_weight(tab, l, eq + 1);
		return;
	}
	k = find_key(field);
	if (!k && (strcmp(field, "backing") == 0 || strcmp(field, "power") == 0))
		bad(tab, l, "'%s' is not a key: BACKING is the second field and apply powers devices on itself",
		    field);
	else if (!k)
		bad(tab, l, "unknown key '%s'", field);
	else
		add_setting(tab, l, k, eq + 1);
}

static void check_backing(struct fairqtab *tab, struct tab_line *l)
{
	const char *val;

	if (l->backing[0] == '/')
		return;
	if (find_tag(l->backing, &val)) {
		if (!*val)
			bad(tab, l, "'%s': empty value", l->backing);
		return;
	}
	bad(tab, l, "backing '%s': want a /dev path, UUID=, PARTUUID=, LABEL= or PARTLABEL=",
	    l->backing);
}

/* the same NAME or BACKING on an earlier line */
static void check_unique(struct fairqtab *tab, struct tab_line *l)
{
	int i;

	for (i = 0; i < tab->n - 1; i++) {
		const struct tab_line *o = &tab->lines[i];

		if (*o->name && strcmp(o->name, l->name) == 0) {
			bad(tab, l, "already defined on line %d", o->lineno);
			return;
		}
		if (o->backing && strcmp(o->backing, l->backing) == 0) {
			bad(tab, l, "backing %s is already used on line %d",
			    l->backing, o->lineno);
			return;
		}
	}
}

static void parse_line(struct fairqtab *tab, char *text, int lineno)
{
	struct tab_line *l, *nl;
	char *field, *save = NULL;
	int nth = 0;

	text[strcspn(text, "#")] = '\0';	/* a comment to the end */
	field = strtok_r(text, " \t\r\n", &save);
	if (!field)
		return;				/* blank */
	nl = realloc(tab->lines, (tab->n + 1) * sizeof(*nl));
	if (!nl)
		err(EXIT_FAILURE, "out of memory");
	tab->lines = nl;
	l = &tab->lines[tab->n++];
	memset(l, 0, sizeof(*l));
	l->lineno = lineno;
	l->ok = true;

	if (valid_name(field))
		snprintf(l->name, sizeof(l->name), "%s", field);
	else
		bad(tab, l, "'%s': invalid device name (1..%d of a-z 0-9 _ -)",
		    field, NAME_MAX_LEN);
	field = strtok_r(NULL, " \t\r\n", &save);
	if (!field) {
		bad(tab, l, "no BACKING (expected NAME BACKING [POLICY] [KEY=VALUE]...)");
		return;
	}
	l->backing = strdup(field);
	if (!l->backing)
		err(EXIT_FAILURE, "out of memory");
	check_backing(tab, l);
	check_unique(tab, l);
	for (nth = 2; (field = strtok_r(NULL, " \t\r\n", &save)); nth++)
		parse_field(tab, l, field, nth);
}

int fairqtab_read(const struct fairqctl_control *ctl, const char *file,
		  struct fairqtab *tab)
{
	char *text = NULL;
	size_t size = 0;
	int lineno = 0;
	FILE *f;

	(void)ctl;
	memset(tab, 0, sizeof(*tab));
	tab->file = file;
	f = fopen(file, "re");
	if (!f) {
		warn("%s", file);
		return -errno;
	}
	while (getline(&text, &size, f) >= 0)
		parse_line(tab, text, ++lineno);
	free(text);
	if (ferror(f)) {
		warn("%s", file);
		fclose(f);
		return -EIO;
	}
	fclose(f);
	return 0;
}

void fairqtab_free(struct fairqtab *tab)
{
	int i, j;

	for (i = 0; i < tab->n; i++) {
		struct tab_line *l = &tab->lines[i];

		for (j = 0; j < l->nset; j++)
			free(l->set[j].val);
		for (j = 0; j < l->nwt; j++)
			free(l->wt[j].path);
		free(l->set);
		free(l->wt);
		free(l->backing);
	}
	free(tab->lines);
	memset(tab, 0, sizeof(*tab));
}

/* blkid -c /dev/null -o device -t TAG=VALUE: the first device, or -ENOENT */
static int run_blkid(const struct fairqctl_control *ctl, const char *spec,
		     char *out, size_t len)
{
	int fds[2], status, devnull;
	ssize_t n;
	pid_t pid;

	if (!*ctl->blkid || pipe2(fds, O_CLOEXEC) < 0)
		return -ENOENT;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -ENOENT;
	}
	if (pid == 0) {
		devnull = open("/dev/null", O_RDWR);
		dup2(fds[1], STDOUT_FILENO);
		if (devnull >= 0) {
			dup2(devnull, STDIN_FILENO);
			dup2(devnull, STDERR_FILENO);
		}
		execlp(ctl->blkid, ctl->blkid, "-c", "/dev/null", "-o", "device",
		       "-t", spec, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	n = 0;
	while (len > 1 && (size_t)n < len - 1) {
		ssize_t r = read(fds[0], out + n, len - 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += r;
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !*out)
		return -ENOENT;
	return 0;
}

/*
 * The block device BACKING names, as a resolved path in @out: a path
 * itself, or TAG=VALUE through DEVDISK/by-TAG/VALUE, else blkid.
 * -ENOENT: not there (yet); -ENOTBLK: there, not a block device.
 */
int resolve_backing(const struct fairqctl_control *ctl, const char *spec,
		    char *out, size_t len)
{
	char path[PATH_MAX];
	const struct tab_tag *t;
	const char *val;
	int rc;

	if (spec[0] == '/')
		return block_device(spec, out, len);
	t = find_tag(spec, &val);
	if (!t || !*val || strchr(val, '/'))
		return -EINVAL;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s/%s", ctl->devdisk,
			     t->dir, val) >= sizeof(path))
		return -ENAMETOOLONG;
	rc = block_device(path, out, len);
	if (rc != -ENOENT)
		return rc;
	rc = run_blkid(ctl, spec, path, sizeof(path));
	if (rc)
		return rc;
	return block_device(path, out, len);
}
