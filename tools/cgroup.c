// SPDX-License-Identifier: GPL-2.0
/*
 * fairqctl: per-cgroup weights.  The kernel keeps them by cgroup id in
 * the configfs attribute cgroup_weights (fairq(4)): write
 * "CGID WEIGHT" (WEIGHT 0 removes), read one "CGID WEIGHT" line per
 * entry.  A cgroup v2 id is the inode number of its directory, so a path
 * becomes an id with stat() and an id a path by walking the cgroup tree.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <err.h>
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fairqctl.h"

#define WEIGHTS_ATTR	"cgroup_weights"

static bool all_digits(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

/* decimal 0..WEIGHT_MAX; -EINVAL (garbage) or -ERANGE */
int parse_weight(const char *s, unsigned int *w)
{
	unsigned long v;
	char *end;

	if (!all_digits(s) || strlen(s) > 9)
		return all_digits(s) ? -ERANGE : -EINVAL;
	v = strtoul(s, &end, 10);
	if (v > WEIGHT_MAX)
		return -ERANGE;
	*w = (unsigned int)v;
	return 0;
}

/*
 * PATH (absolute, or relative to the cgroup root) → its cgroup id, and
 * its absolute path in @abs.  A PATH of digits only that names no
 * cgroup is taken as an id (so an entry whose cgroup is gone can still
 * be removed).  -ENOENT, -ENOTDIR (not a cgroup v2 directory under the
 * root), -ENAMETOOLONG.
 */
int cgroup_path_id(const struct fairqctl_control *ctl, const char *path,
		   uint64_t *id, char *abs, size_t len)
{
	char buf[PATH_MAX], real[PATH_MAX], root[PATH_MAX], ctrl[PATH_MAX + 32];
	struct stat st;
	size_t rl;
	int n;

	if (path[0] == '/')
		n = snprintf(buf, sizeof(buf), "%s", path);
	else
		n = snprintf(buf, sizeof(buf), "%s/%s", ctl->cgroupfs, path);
	if ((size_t)n >= sizeof(buf))
		return -ENAMETOOLONG;
	if (stat(buf, &st) < 0) {
		if (errno == ENOENT && all_digits(path)) {
			*id = strtoull(path, NULL, 10);
			snprintf(abs, len, "%s", path);
			return *id ? 0 : -ENOENT;
		}
		return -errno;
	}
	if (!realpath(buf, real) || !realpath(ctl->cgroupfs, root))
		return -errno;
	rl = strlen(root);
	snprintf(ctrl, sizeof(ctrl), "%s/cgroup.controllers", real);
	if (!S_ISDIR(st.st_mode) || access(ctrl, F_OK) < 0 ||
	    strncmp(real, root, rl) != 0 || (real[rl] && real[rl] != '/'))
		return -ENOTDIR;
	if ((size_t)snprintf(abs, len, "%s", real) >= len)
		return -ENAMETOOLONG;
	*id = (uint64_t)st.st_ino;
	return 0;
}

/* nftw() has no cookie: the one lookup in progress */
static uint64_t walk_id;
static char *walk_found;

static int walk_one(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	(void)ftw;
	if (type != FTW_D || (uint64_t)st->st_ino != walk_id)
		return 0;
	walk_found = strdup(path);
	return 1;
}

char *cgroup_id_path(const struct fairqctl_control *ctl, uint64_t id)
{
	walk_id = id;
	walk_found = NULL;
	/* one file system: the cgroup2 mount, no symlinks */
	nftw(ctl->cgroupfs, walk_one, 16, FTW_PHYS | FTW_MOUNT);
	return walk_found;
}

/* the device's table; -errno (not reported: -ENOENT = no such attribute) */
int read_cgroup_weights(struct fairqctl_control *ctl,
			struct cgroup_weight **out, int *n)
{
	struct cgroup_weight *w = NULL, *nw;
	char *text, *line, *next;
	unsigned int wt;
	uint64_t id;
	int rc, k = 0;

	*out = NULL;
	*n = 0;
	rc = read_attr(ctl, ROOT_CONFIGFS, WEIGHTS_ATTR, &text);
	if (rc)
		return rc;
	for (line = text; *line; line = next) {
		next = strchrnul(line, '\n');
		if (*next)
			*next++ = '\0';
		if (sscanf(line, "%" SCNu64 " %u", &id, &wt) != 2)
			continue;
		nw = realloc(w, (k + 1) * sizeof(*w));
		if (!nw) {
			free(w);
			free(text);
			return -ENOMEM;
		}
		w = nw;
		w[k].id = id;
		w[k++].weight = wt;
	}
	free(text);
	*out = w;
	*n = k;
	return 0;
}

/*
 * write "ID W", a weight set by hand: from now on the entry is the
 * user's, which weights sync leaves alone (weights.c).  Reports, naming
 * the cgroup as @shown.
 */
int write_cgroup_weight(struct fairqctl_control *ctl, uint64_t id,
			unsigned int weight, const char *shown)
{
	int lk = weights_lock(ctl, false);
	char val[64];
	int rc;

	snprintf(val, sizeof(val), "%" PRIu64 " %u", id, weight);
	rc = write_attr(ctl, ROOT_CONFIGFS, WEIGHTS_ATTR, val);
	if (!rc && lk >= 0)
		weights_forget(ctl, id);
	weights_unlock(lk);
	if (!rc)
		return 0;
	if (ctl->failed_at_open && rc == -ENOENT)
		ctl_warnx(ctl, "%s: cgroup-weight: this fairq.ko has no %s attribute",
			  ctl->name, WEIGHTS_ATTR);
	else if (rc == -ENOENT)
		ctl_warnx(ctl, "%s: cgroup-weight %s: no weight set for this cgroup",
			  ctl->name, shown);
	else if (rc == -ENOSPC)
		ctl_warnx(ctl, "%s: cgroup-weight %s: %s (the weight table is full)",
			  ctl->name, shown, strerror(-rc));
	else
		ctl_warnx(ctl, "%s: cgroup-weight %s=%u: %s", ctl->name, shown,
			  weight, strerror(-rc));
	return rc;
}

/* "PATH=W" (the last '=' splits) → weight of PATH's cgroup */
int cmd_cgroup_weight_set(struct fairqctl_control *ctl, const char *pw)
{
	char path[PATH_MAX], abs[PATH_MAX];
	const char *eq = strrchr(pw, '=');
	unsigned int w;
	uint64_t id;
	int rc;

	if (!eq || eq == pw || (size_t)(eq - pw) >= sizeof(path)) {
		ctl_warnx(ctl, "cgroup-weight '%s': expected PATH=WEIGHT", pw);
		return -EINVAL;
	}
	memcpy(path, pw, eq - pw);
	path[eq - pw] = '\0';
	rc = parse_weight(eq + 1, &w);
	if (rc) {
		ctl_warnx(ctl, "cgroup-weight '%s': weight must be 0..%d (0 removes)",
			  pw, WEIGHT_MAX);
		return rc;
	}
	rc = cgroup_path_id(ctl, path, &id, abs, sizeof(abs));
	if (rc == -ENOTDIR)
		ctl_warnx(ctl, "cgroup-weight %s: not a cgroup v2 directory under %s",
			  path, ctl->cgroupfs);
	else if (rc)
		ctl_warnx(ctl, "cgroup-weight %s: %s", path, strerror(-rc));
	if (rc)
		return rc;
	return write_cgroup_weight(ctl, id, w, abs);
}

/* PATH=W per entry, the id when no cgroup has it (any more); or --json */
int cmd_cgroup_weight_get(struct fairqctl_control *ctl)
{
	struct cgroup_weight *w;
	int i, n, rc;
	char *path;

	rc = read_cgroup_weights(ctl, &w, &n);
	if (rc == -ENOENT) {
		ctl_warnx(ctl, "%s: cgroup-weight: this fairq.ko has no %s attribute",
			  ctl->name, WEIGHTS_ATTR);
		return rc;
	}
	if (rc) {
		ctl_warnx(ctl, "%s: %s: %s", ctl->name, WEIGHTS_ATTR, strerror(-rc));
		return rc;
	}
	if (ctl->json) {
		get_cgroup_weights_json(ctl, w, n);
		free(w);
		return 0;
	}
	for (i = 0; i < n; i++) {
		path = cgroup_id_path(ctl, w[i].id);
		if (path)
			printf("%s=%u\n", path, w[i].weight);
		else
			printf("%" PRIu64 "=%u\n", w[i].id, w[i].weight);
		free(path);
	}
	free(w);
	return 0;
}
