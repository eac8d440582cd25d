// SPDX-License-Identifier: GPL-2.0
/*
 * fairqctl apply [FILE] [--dry-run] [--down] [--prune]: make the fairq
 * devices match a fairqtab(5) file.
 *
 * Every change is printed as one "NAME: ..." line on stdout before it is
 * made; --dry-run prints the same lines and makes none.  Per line:
 *   - no device yet: create it (mkdir, backing, the line's settings and
 *     cgroup weights, power=1), undone if a step fails;
 *   - a device: each setting that differs is written; a different
 *     backing, or while powered a different max_flows (any tunable that
 *     bounds the flows' memory), needs power off, write, power on, refused
 *     with a message while the device is open or mounted;
 *     a powered-off device is powered on;
 *   - the backing device or a cgroup not there: reported, the rest of
 *     the file still applies, exit status 3.
 * Attributes a line does not name keep their values.  Devices the file
 * does not name are only removed with --prune.  --down powers off and
 * removes the file's devices, last line first.
 */
#define _GNU_SOURCE
#include <err.h>
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fairqctl.h"

struct apply_run {
	struct fairqctl_control *ctl;
	struct fairqtab tab;
	char where[PATH_MAX + 16];
	int created, changed, unchanged, missing, failed, removed;
};

/* one action line; made unless --dry-run */
static void __attribute__((format(printf, 2, 3)))
say(struct apply_run *r, const char *fmt, ...)
{
	va_list ap;

	printf("%s: ", r->ctl->name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void at_line(struct apply_run *r, const struct tab_line *l)
{
	snprintf(r->ctl->name, sizeof(r->ctl->name), "%s", l->name);
	snprintf(r->where, sizeof(r->where), "%s:%d", r->tab.file, l->lineno);
	r->ctl->where = r->where;
}

/* is NAME a device of an earlier line (so /dev/NAME will be there)? */
static bool earlier_device(const struct apply_run *r, const struct tab_line *l,
			   const char *spec)
{
	const struct tab_line *o;

	if (strncmp(spec, "/dev/", 5) != 0)
		return false;
	for (o = r->tab.lines; o < l; o++) {
		if (o->ok && strcmp(o->name, spec + 5) == 0)
			return true;
	}
	return false;
}

/* 0 and the path in @out, or -ENOENT (reported as missing), -errno */
static int line_backing(struct apply_run *r, const struct tab_line *l,
			char *out, size_t len)
{
	int rc = resolve_backing(r->ctl, l->backing, out, len);

	if (rc == -ENOENT && r->ctl->dry_run && earlier_device(r, l, l->backing)) {
		snprintf(out, len, "%s", l->backing);
		return 0;
	}
	if (rc == -ENOENT)
		return rc;
	if (rc == -ENOTBLK)
		ctl_warnx(r->ctl, "%s: backing %s is not a block device",
			  l->name, l->backing);
	else if (rc)
		ctl_warnx(r->ctl, "%s: backing %s: %s", l->name, l->backing,
			  strerror(-rc));
	return rc;
}

/* the current value of a setting, or NULL (reported) */
static char *current(struct apply_run *r, const char *key)
{
	char *val;
	int rc = read_attr(r->ctl, ROOT_CONFIGFS, key, &val);

	if (rc) {
		ctl_warnx(r->ctl, "%s: %s: %s", r->ctl->name, key, strerror(-rc));
		return NULL;
	}
	return val;
}

static int weight_of(const struct cgroup_weight *w, int n, uint64_t id)
{
	int i;

	for (i = 0; i < n; i++) {
		if (w[i].id == id)
			return (int)w[i].weight;
	}
	return -1;
}

/* an entry equal to the file's is the file's, even if weights sync wrote it */
static void claim_weight(const struct fairqctl_control *ctl, uint64_t id)
{
	int lk = weights_lock(ctl, false);

	if (lk >= 0)
		weights_forget(ctl, id);
	weights_unlock(lk);
}

/*
 * The line's cgroup weights: write those that differ from @have (NULL:
 * a new device, write all).  Missing cgroups are reported and counted.
 * 0 or -1 (a write failed; reported).
 */
static int apply_weights(struct apply_run *r, const struct tab_line *l,
			 const struct cgroup_weight *have, int nhave, int *nchanged)
{
	char abs[PATH_MAX];
	uint64_t id;
	int i, rc, cur, ret = 0;

	for (i = 0; i < l->nwt; i++) {
		const struct tab_weight *t = &l->wt[i];

		rc = cgroup_path_id(r->ctl, t->path, &id, abs, sizeof(abs));
		if (rc == -ENOENT) {
			say(r, "cgroup %s not present, its weight is not set", t->path);
			r->missing++;
			continue;
		}
		if (rc) {
			ctl_warnx(r->ctl, "%s: cgroup-weight %s: %s", l->name, t->path,
				  rc == -ENOTDIR ? "not a cgroup v2 directory" :
				  strerror(-rc));
			ret = -1;
			continue;
		}
		cur = have ? weight_of(have, nhave, id) : -1;
		if (cur == (int)t->weight) {
			/* the file's weight: not weights sync's to change */
			if (!r->ctl->dry_run)
				claim_weight(r->ctl, id);
			continue;
		}
		if (cur < 0)
			say(r, "set cgroup-weight %s=%u", abs, t->weight);
		else
			say(r, "set cgroup-weight %s=%u (was %d)", abs, t->weight, cur);
		(*nchanged)++;
		if (!r->ctl->dry_run && write_cgroup_weight(r->ctl, id, t->weight, abs))
			ret = -1;
	}
	return ret;
}

static void settings_text(const struct tab_line *l, char *buf, size_t len)
{
	size_t at = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < l->nset && at < len; i++)
		at += snprintf(buf + at, len - at, " %s=%s", l->set[i].key,
			       l->set[i].val);
}

static int power_on(struct apply_run *r)
{
	if (set_attr(r->ctl, ROOT_CONFIGFS, "power", "1"))
		return -1;
	return wait_for_dev(r->ctl) ? -1 : 0;
}

static void create_device(struct apply_run *r, const struct tab_line *l,
			  const char *backing)
{
	struct fairqctl_control *ctl = r->ctl;
	char sets[1024];
	int i, n = 0;

	settings_text(l, sets, sizeof(sets));
	say(r, "create over %s%s", backing, sets);
	r->created++;
	if (ctl->dry_run) {
		apply_weights(r, l, NULL, 0, &n);
		say(r, "power on");
		return;
	}
	ctl->backing = backing;
	if (make_named_entry(ctl))
		goto failed;
	if (set_attr(ctl, ROOT_CONFIGFS, "backing", backing))
		goto undo;
	for (i = 0; i < l->nset; i++) {
		if (set_attr(ctl, ROOT_CONFIGFS, l->set[i].key, l->set[i].val))
			goto undo;
	}
	if (apply_weights(r, l, NULL, 0, &n))
		goto undo;
	say(r, "power on");
	if (power_on(r))
		goto undo;
	return;
undo:
	write_attr(ctl, ROOT_CONFIGFS, "power", "0");
	remove_entry(ctl);
	say(r, "not created (see the error above)");
failed:
	r->created--;
	r->failed++;
}

/* a device that exists: change what differs */
static void update_device(struct apply_run *r, const struct tab_line *l,
			  const char *backing)
{
	struct fairqctl_control *ctl = r->ctl;
	char *cur_backing, *val, real[PATH_MAX];
	struct cgroup_weight *have = NULL;
	const char *why = NULL;		/* what needs the power-off */
	bool restart = false, ok = true;
	int i, on, nhave = 0, nchanged = 0, rc;

	on = powered(ctl);
	cur_backing = current(r, "backing");
	if (on < 0 || !cur_backing) {
		free(cur_backing);
		r->failed++;
		return;
	}
	ctl->backing = backing;
	if (!*cur_backing || !realpath(cur_backing, real))
		snprintf(real, sizeof(real), "%s", cur_backing);
	if (strcmp(real, backing) != 0) {
		restart = true;
		nchanged++;
		why = "backing";
	}
	/* a tunable that bounds the flows' memory changes only powered off */
	for (i = 0; on && i < l->nset; i++) {
		if (!key_allocates(l->set[i].key))
			continue;
		val = current(r, l->set[i].key);
		if (val && strcmp(val, l->set[i].val) != 0) {
			restart = true;
			nchanged++;
			if (!why)
				why = l->set[i].key;
		}
		free(val);
	}

	if (restart && on) {
		say(r, "power off (to change %s)", why);
		if (!ctl->dry_run && power_off(ctl)) {
			ctl_warnx(ctl, "%s: backing and max_flows not changed", l->name);
			restart = false;
			ok = false;
		} else {
			on = 0;
		}
	}
	if (restart && strcmp(real, backing) != 0) {
		say(r, "set backing=%s (was %s)", backing, *cur_backing ? cur_backing : "unset");
		if (!ctl->dry_run && set_attr(ctl, ROOT_CONFIGFS, "backing", backing))
			ok = false;
	}
	for (i = 0; i < l->nset; i++) {
		const struct tab_setting *s = &l->set[i];

		if (on && key_allocates(s->key))
			continue;	/* refused above: busy */
		val = current(r, s->key);
		if (!val) {
			ok = false;
			continue;
		}
		if (strcmp(val, s->val) != 0) {
			say(r, "set %s=%s (was %s)", s->key, s->val, val);
			nchanged++;
			if (!ctl->dry_run &&
			    set_attr(ctl, ROOT_CONFIGFS, s->key, s->val))
				ok = false;
		}
		free(val);
	}
	if (l->nwt) {
		rc = read_cgroup_weights(ctl, &have, &nhave);
		if (rc) {
			ctl_warnx(ctl, "%s: cgroup_weights: %s", l->name,
				  rc == -ENOENT ? "this fairq.ko has no such attribute" :
				  strerror(-rc));
			ok = false;
		} else if (apply_weights(r, l, have, nhave, &nchanged)) {
			ok = false;
		}
		free(have);
	}
	if (!on) {
		say(r, "power on");
		nchanged++;
		if (!ctl->dry_run && power_on(r))
			ok = false;
	}
	free(cur_backing);
	if (!ok)
		r->failed++;
	else if (nchanged)
		r->changed++;
	else
		r->unchanged++;
	if (ok && !nchanged)
		say(r, "unchanged");
}

static void apply_line(struct apply_run *r, const struct tab_line *l)
{
	char backing[PATH_MAX];
	bool exists;
	int rc;

	at_line(r, l);
	exists = entry_exists(r->ctl);
	rc = line_backing(r, l, backing, sizeof(backing));
	if (rc == -ENOENT) {
		say(r, "backing %s not present, %s", l->backing,
		    exists ? "device left as it is" : "not created");
		r->missing++;
		return;
	}
	if (rc) {
		r->failed++;
		return;
	}
	if (exists)
		update_device(r, l, backing);
	else
		create_device(r, l, backing);
}

static bool named_in_file(const struct apply_run *r, const char *name)
{
	int i;

	for (i = 0; i < r->tab.n; i++) {
		if (strcmp(r->tab.lines[i].name, name) == 0)
			return true;
	}
	return false;
}

/* power off (if on) and remove the device r->ctl->name; 0 or -1 */
static int take_down(struct apply_run *r)
{
	int on = powered(r->ctl);

	if (on < 0)
		return -1;
	say(r, "%sremove", on ? "power off, " : "");
	if (r->ctl->dry_run)
		return 0;
	if (on && power_off(r->ctl))
		return -1;
	return remove_entry(r->ctl) ? -1 : 0;
}

/* devices the file does not name (lines with an error still name theirs) */
static void unlisted(struct apply_run *r)
{
	char **names;
	int i, n;

	if (r->ctl->dry_run && access(r->ctl->configfs, F_OK) < 0)
		return;			/* a dry run without the module */
	n = list_entries(r->ctl, &names);
	if (n < 0) {
		r->failed++;
		return;
	}
	r->ctl->where = NULL;
	for (i = 0; i < n; i++) {
		if (named_in_file(r, names[i]))
			continue;
		snprintf(r->ctl->name, sizeof(r->ctl->name), "%s", names[i]);
		if (!r->ctl->prune) {
			say(r, "not in %s, left alone (--prune removes it)", r->tab.file);
			continue;
		}
		if (take_down(r))
			r->failed++;
		else
			r->removed++;
	}
	free_names(names, n);
}

static void down(struct apply_run *r)
{
	int i;

	for (i = r->tab.n - 1; i >= 0; i--) {
		const struct tab_line *l = &r->tab.lines[i];

		if (!*l->name)
			continue;
		at_line(r, l);
		if (!entry_exists(r->ctl)) {
			say(r, "not there, nothing to do");
			r->unchanged++;
		} else if (take_down(r)) {
			r->failed++;
		} else {
			r->removed++;
		}
	}
}

static void summary(const struct apply_run *r)
{
	int bad = r->tab.nbad, acted = r->created + r->changed + r->removed;

	printf("%s%s: ", r->ctl->dry_run ? "dry run, nothing done: " : "",
	       r->tab.file);
	if (!acted && !r->failed && !bad && !r->missing) {
		printf("nothing to do, %d device%s as the file says\n",
		       r->unchanged, r->unchanged == 1 ? "" : "s");
		return;
	}
	printf("%d created, %d changed, %d removed, %d unchanged, %d missing, %d failed, %d bad line%s\n",
	       r->created, r->changed, r->removed, r->unchanged, r->missing,
	       r->failed, bad, bad == 1 ? "" : "s");
}

int cmd_apply(struct fairqctl_control *ctl)
{
	const char *env = getenv("FAIRQTAB");
	const char *file = ctl->nargs ? ctl->args[0] :
			   env && *env ? env : DEFAULT_FAIRQTAB;
	struct apply_run r = { .ctl = ctl };
	struct stat st;
	int i, e, bad;

	e = stat(ctl->configfs, &st) < 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
	if (e && !ctl->dry_run)
		errx(EXIT_FAILURE, "fairq module not loaded (modprobe fairq): %s: %s",
		     ctl->configfs, strerror(e));
	if (fairqtab_read(ctl, file, &r.tab))
		return EXIT_FAILURE;

	if (ctl->down) {
		down(&r);
	} else {
		/* removals first: a device to prune may hold a backing */
		unlisted(&r);
		for (i = 0; i < r.tab.n; i++) {
			if (r.tab.lines[i].ok)
				apply_line(&r, &r.tab.lines[i]);
		}
	}
	ctl->where = NULL;
	summary(&r);
	bad = r.tab.nbad;
	fairqtab_free(&r.tab);
	if (r.failed || bad)
		return EXIT_FAILURE;
	return r.missing ? EXIT_MISSING : EXIT_SUCCESS;
}
