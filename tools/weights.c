// SPDX-License-Identifier: GPL-2.0
/*
 * fairqctl weights sync [NAME] [--follow [--interval S]] [--dry-run]:
 * keep each device's cgroup_weights in step with the weights cgroupfs
 * already holds (systemd's IOWeight=, StartupIOWeight=, IODeviceWeight=
 * are written there), for every powered device with classify=cgroup.
 *
 * One pass:
 *   1. walk the cgroup tree once (openat/readdir, one file system) and
 *      read each cgroup's io.weight, and its io.bfq.weight where
 *      io.weight does not set a weight; keep only the cgroups whose
 *      weight is not 100 (the default, which needs no entry);
 *   2. per device: the weight of a cgroup is, in this order, a
 *      "MAJ:MIN W" line naming the fairq device, one naming its lower
 *      disk (the whole disk of a partition), the "default W" line
 *      (or a bare "W") of io.weight; if io.weight sets none of these
 *      (absent, or "default 100" and no line for either disk), the
 *      same from io.bfq.weight.  Above 1000 (io.weight goes to 10000)
 *      counts as 1000, fairq's maximum;
 *   3. the entries of cgroup_weights the follower wrote are those of
 *      its state file, RUNDIR/weights/NAME ("CGID W" lines), that the
 *      table still holds with the same weight.  Every other entry is
 *      the user's and wins: it is never changed.  The follower writes
 *      an entry for each cgroup whose weight is not 100 and that has no
 *      entry of the user's, changes its own entries when the weight
 *      changes, and removes them when the weight goes back to 100 or
 *      the cgroup is gone; then it rewrites its state file.
 *
 * fairqctl's own writes of a weight (set ... cgroup-weight, apply) take
 * the same lock (flock on RUNDIR/weights) and drop the id from the state
 * file, so that a weight set by hand is the user's even when it equals
 * the follower's.  The state file names the configfs entry's inode: a
 * device removed and made again does not inherit the old one's state.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "fairqctl.h"

#define STATE_SUBDIR	"weights"
#define IO_WEIGHT	"io.weight"
#define BFQ_WEIGHT	"io.bfq.weight"

enum {
	DFL_WEIGHT	= 100,		/* io.weight's default, fairq's too */
	WFILE_MAX	= 1 << 16,	/* bytes of one weight file read */
	WALK_DEPTH_MAX	= 64,
};

/* one "MAJ:MIN W" line */
struct devw {
	dev_t dev;
	unsigned int w;
};

/* io.weight or io.bfq.weight of one cgroup */
struct wfile {
	bool present;
	unsigned int dfl;		/* "default W" or a bare "W" */
	struct devw *dev;
	int ndev;
};

/* a cgroup, and what its weight files say */
struct cg {
	uint64_t id;
	char *path;			/* absolute */
	struct wfile io, bfq;
};

struct cgset {
	struct cg *c;			/* by id, ascending */
	int n, cap;
	long walked;			/* cgroups seen */
};

/* a device the follower works on */
struct fqdev {
	char name[NAME_MAX_LEN + 1];
	dev_t dev;			/* MAJ:MIN of /dev/NAME */
	dev_t lower;			/* its lower disk (whole disk), or 0 */
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

/* --- the state file and its lock ------------------------------------------ */

static int state_dir(const struct fairqctl_control *ctl, char *buf, size_t len)
{
	if ((size_t)snprintf(buf, len, "%s/" STATE_SUBDIR, ctl->rundir) >= len)
		return -ENAMETOOLONG;
	return 0;
}

static int state_file(const struct fairqctl_control *ctl, char *buf, size_t len)
{
	if ((size_t)snprintf(buf, len, "%s/" STATE_SUBDIR "/%s", ctl->rundir,
			     ctl->name) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/*
 * flock RUNDIR/weights; @create: make it first (the follower).  The fd,
 * or -1: no such directory (no follower has run: no entry is its), or
 * it cannot be had (@create: reported).
 */
int weights_lock(const struct fairqctl_control *ctl, bool create)
{
	char dir[PATH_MAX];
	int fd;

	if (state_dir(ctl, dir, sizeof(dir)))
		return -1;
	if (create) {
		if (mkdir(ctl->rundir, 0755) < 0 && errno != EEXIST) {
			warn("%s", ctl->rundir);
			return -1;
		}
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			warn("%s", dir);
			return -1;
		}
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		if (create)
			warn("%s", dir);
		return -1;
	}
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			if (create)
				warn("flock %s", dir);
			close(fd);
			return -1;
		}
	}
	return fd;
}

void weights_unlock(int fd)
{
	if (fd >= 0)
		close(fd);		/* drops the flock */
}

/* the inode of CONFIGFS/NAME: which device the state is about; 0 if none */
static uint64_t entry_ino(const struct fairqctl_control *ctl)
{
	char path[PATH_MAX];
	struct stat st;

	if (entry_path(ctl, path, sizeof(path)) || stat(path, &st) < 0)
		return 0;
	return (uint64_t)st.st_ino;
}

/*
 * The follower's entries of device ctl->name: "CGID W" lines after an
 * "entry INO" line.  A state file about another device of that name
 * (other inode), or none, is no entries.
 */
static int state_read(const struct fairqctl_control *ctl,
		      struct cgroup_weight **out, int *n)
{
	struct cgroup_weight *w = NULL, *nw;
	char path[PATH_MAX], line[128];
	uint64_t ino = 0, id;
	unsigned int wt;
	int k = 0;
	FILE *f;

	*out = NULL;
	*n = 0;
	if (state_file(ctl, path, sizeof(path)))
		return 0;
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "entry %" SCNu64, &ino) == 1)
			continue;
		if (sscanf(line, "%" SCNu64 " %u", &id, &wt) != 2)
			continue;
		nw = realloc(w, (k + 1) * sizeof(*w));
		if (!nw) {
			fclose(f);
			free(w);
			return -ENOMEM;
		}
		w = nw;
		w[k].id = id;
		w[k++].weight = wt;
	}
	fclose(f);
	if (!ino || ino != entry_ino(ctl)) {
		free(w);
		return 0;
	}
	*out = w;
	*n = k;
	return 0;
}

/* replace the state file (none when @n is 0); reported */
static int state_write(const struct fairqctl_control *ctl,
		       const struct cgroup_weight *w, int n)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	int i, rc = 0;
	FILE *f;

	if (state_file(ctl, path, sizeof(path)))
		return -ENAMETOOLONG;
	if (!n) {
		if (unlink(path) < 0 && errno != ENOENT) {
			warn("%s", path);
			return -errno;
		}
		return 0;
	}
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	f = fopen(tmp, "we");
	if (!f) {
		warn("%s", tmp);
		return -errno;
	}
	fprintf(f, "# fairqctl weights sync: the entries of %s's cgroup_weights it wrote\n"
		"entry %" PRIu64 "\n", ctl->name, entry_ino(ctl));
	for (i = 0; i < n; i++)
		fprintf(f, "%" PRIu64 " %u\n", w[i].id, w[i].weight);
	if (fflush(f) || ferror(f))
		rc = -errno ? -errno : -EIO;
	if (fclose(f) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path) < 0)
		rc = -errno;
	if (rc) {
		warnx("%s: %s", path, strerror(-rc));
		unlink(tmp);
	}
	return rc;
}

/*
 * A weight was written by hand (set cgroup-weight, apply): the entry is
 * the user's from now on.  Called with the lock held.
 */
void weights_forget(const struct fairqctl_control *ctl, uint64_t id)
{
	struct cgroup_weight *w;
	int i, k, n;

	if (state_read(ctl, &w, &n) || !n)
		return;
	for (i = k = 0; i < n; i++) {
		if (w[i].id != id)
			w[k++] = w[i];
	}
	if (k != n)
		state_write(ctl, w, k);
	free(w);
}

/* the device is gone: so is its state */
void weights_drop(const struct fairqctl_control *ctl)
{
	char path[PATH_MAX];
	int lk = weights_lock(ctl, false);

	if (lk < 0)
		return;
	if (!state_file(ctl, path, sizeof(path)))
		unlink(path);
	weights_unlock(lk);
}

/* --- the cgroup tree ---------------------------------------------------- */

/* "default W", "MAJ:MIN W", or a bare "W" per line */
static void wfile_parse(char *text, struct wfile *f)
{
	unsigned int ma, mi, w;
	char *line, *next;
	struct devw *nd;

	f->present = true;
	f->dfl = DFL_WEIGHT;
	for (line = text; *line; line = next) {
		next = strchrnul(line, '\n');
		if (*next)
			*next++ = '\0';
		if (sscanf(line, "default %u", &w) == 1 ||
		    (strspn(line, "0123456789") == strlen(line) && sscanf(line, "%u", &w) == 1)) {
			f->dfl = w;
		} else if (sscanf(line, "%u:%u %u", &ma, &mi, &w) == 3) {
			nd = realloc(f->dev, (f->ndev + 1) * sizeof(*nd));
			if (!nd)
				continue;
			f->dev = nd;
			f->dev[f->ndev].dev = makedev(ma, mi);
			f->dev[f->ndev++].w = w;
		}
	}
}

/* NAME in directory @dfd, as a wfile; absent: present == false */
static void wfile_read(int dfd, const char *name, struct wfile *f)
{
	char buf[4096], *text = buf, *big = NULL;
	size_t len = 0, size = sizeof(buf);
	ssize_t r;
	int fd;

	memset(f, 0, sizeof(*f));
	fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	for (;;) {
		if (len + 1 >= size) {
			char *nb;

			if (size >= WFILE_MAX)
				break;
			nb = realloc(big, size * 2);
			if (!nb)
				break;
			if (!big)
				memcpy(nb, buf, len);
			big = text = nb;
			size *= 2;
		}
		r = read(fd, text + len, size - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += r;
		/*
		 * a short read is the end: a cgroup file is made by one
		 * seq_file show() and handed out whole when it fits (a
		 * plain file reads to its end) - one read() a file saved
		 */
		if (len + 1 < size)
			break;
	}
	close(fd);
	text[len] = '\0';
	wfile_parse(text, f);
	free(big);
}

static void wfile_free(struct wfile *f)
{
	free(f->dev);
}

static int cgset_add(struct cgset *s, uint64_t id, const char *path,
		     const struct wfile *io, const struct wfile *bfq)
{
	struct cg *nc;

	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		nc = realloc(s->c, s->cap * sizeof(*nc));
		if (!nc)
			return -ENOMEM;
		s->c = nc;
	}
	nc = &s->c[s->n];
	nc->path = strdup(path);
	if (!nc->path)
		return -ENOMEM;
	nc->id = id;
	nc->io = *io;
	nc->bfq = *bfq;
	s->n++;
	return 0;
}

static void cgset_free(struct cgset *s)
{
	int i;

	for (i = 0; i < s->n; i++) {
		free(s->c[i].path);
		wfile_free(&s->c[i].io);
		wfile_free(&s->c[i].bfq);
	}
	free(s->c);
	memset(s, 0, sizeof(*s));
}

/*
 * The cgroup directory @dfd (taken: closed here), at @path (in a buffer
 * of PATH_MAX), and every cgroup below it on the same file system.
 */
static int walk(struct cgset *s, int dfd, char *path, dev_t fsdev, int depth)
{
	struct wfile io, bfq = { 0 };
	size_t plen = strlen(path);
	struct dirent *d;
	struct stat st;
	long subdirs;
	DIR *dir;
	int fd, rc = 0;

	if (fstat(dfd, &st) < 0 || st.st_dev != fsdev) {
		close(dfd);
		return 0;
	}
	s->walked++;
	wfile_read(dfd, IO_WEIGHT, &io);
	/* io.bfq.weight counts only where io.weight sets nothing */
	if (!io.present || io.dfl == DFL_WEIGHT)
		wfile_read(dfd, BFQ_WEIGHT, &bfq);
	rc = cgset_add(s, (uint64_t)st.st_ino, path, &io, &bfq);
	if (rc) {
		wfile_free(&io);
		wfile_free(&bfq);
	}
	/*
	 * a directory's link count is 2 + its subdirectories (kernfs keeps
	 * it so, as tmpfs and ext4 do): a leaf, as most cgroups are, is not
	 * read at all, and a parent only until its last subdirectory
	 */
	subdirs = st.st_nlink >= 2 ? (long)st.st_nlink - 2 : -1;
	if (rc || subdirs == 0) {
		close(dfd);
		return rc;
	}
	dir = fdopendir(dfd);
	if (!dir) {
		close(dfd);
		return rc;
	}
	while (!rc && subdirs && (d = readdir(dir))) {
		if (d->d_name[0] == '.' &&
		    (!d->d_name[1] || (d->d_name[1] == '.' && !d->d_name[2])))
			continue;
		if (d->d_type != DT_DIR && d->d_type != DT_UNKNOWN)
			continue;
		if (depth >= WALK_DEPTH_MAX ||
		    plen + 1 + strlen(d->d_name) >= PATH_MAX)
			continue;
		fd = openat(dirfd(dir), d->d_name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;	/* not a directory, or just removed */
		if (subdirs > 0)
			subdirs--;
		path[plen] = '/';
		strcpy(path + plen + 1, d->d_name);
		rc = walk(s, fd, path, fsdev, depth + 1);
		path[plen] = '\0';
	}
	closedir(dir);
	return rc;
}

static int cg_cmp(const void *a, const void *b)
{
	const struct cg *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int walk_cgroups(const struct fairqctl_control *ctl, struct cgset *s)
{
	char path[PATH_MAX];
	struct stat st;
	int fd, rc;

	memset(s, 0, sizeof(*s));
	if (!realpath(ctl->cgroupfs, path)) {
		warn("%s", ctl->cgroupfs);
		return -errno;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = -errno;
		warn("%s", path);
		if (fd >= 0)
			close(fd);
		return rc;
	}
	rc = walk(s, fd, path, st.st_dev, 0);
	if (rc) {
		warnx("%s: %s", ctl->cgroupfs, strerror(-rc));
		cgset_free(s);
		return rc;
	}
	qsort(s->c, s->n, sizeof(*s->c), cg_cmp);
	return 0;
}

/* --- one device ----------------------------------------------------------- */

/* "MAJ:MIN" in file @path; 0 if none */
static dev_t read_devnum(const char *path)
{
	unsigned int ma, mi;
	FILE *f = fopen(path, "re");
	int got;

	if (!f)
		return 0;
	got = fscanf(f, "%u:%u", &ma, &mi);
	fclose(f);
	return got == 2 ? makedev(ma, mi) : 0;
}

/* SYSFS/NAME/dev, and the whole disk of SYSFS/NAME/slaves/X */
static int device_numbers(const struct fairqctl_control *ctl, struct fqdev *d)
{
	char path[PATH_MAX], p2[PATH_MAX];
	struct dirent *e;
	DIR *dir;
	int n;

	snprintf(d->name, sizeof(d->name), "%s", ctl->name);
	snprintf(path, sizeof(path), "%s/%s/dev", ctl->sysfs, ctl->name);
	d->dev = read_devnum(path);
	d->lower = 0;
	if (!d->dev)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/%s/slaves", ctl->sysfs, ctl->name);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((e = readdir(dir))) {
		if (e->d_name[0] == '.')
			continue;
		/* a partition's whole disk is its parent in sysfs */
		n = snprintf(p2, sizeof(p2), "%s/%s/partition", path, e->d_name);
		if (n > 0 && (size_t)n < sizeof(p2) && access(p2, F_OK) == 0)
			n = snprintf(p2, sizeof(p2), "%s/%s/../dev", path, e->d_name);
		else
			n = snprintf(p2, sizeof(p2), "%s/%s/dev", path, e->d_name);
		if (n > 0 && (size_t)n < sizeof(p2))
			d->lower = read_devnum(p2);
		break;
	}
	closedir(dir);
	return 0;
}

/*
 * What @f says for device @d: its line, its lower disk's, its default;
 * *src names which.  false: nothing but the default 100.
 */
static bool wfile_weight(const struct wfile *f, const struct fqdev *d,
			 unsigned int *w, char *src, size_t len, const char *file)
{
	int i;

	if (!f->present)
		return false;
	for (i = 0; i < f->ndev; i++) {
		if (f->dev[i].dev == d->dev) {
			*w = f->dev[i].w;
			snprintf(src, len, "%s %u:%u", file, major(d->dev), minor(d->dev));
			return true;
		}
	}
	for (i = 0; d->lower && i < f->ndev; i++) {
		if (f->dev[i].dev == d->lower) {
			*w = f->dev[i].w;
			snprintf(src, len, "%s %u:%u", file, major(d->lower),
				 minor(d->lower));
			return true;
		}
	}
	*w = f->dfl;
	snprintf(src, len, "%s", file);
	return f->dfl != DFL_WEIGHT;
}

/* the weight cgroup @c has on @d (100: none), and where it comes from */
static unsigned int cg_weight(const struct cg *c, const struct fqdev *d,
			      char *src, size_t len)
{
	unsigned int w;

	if (!wfile_weight(&c->io, d, &w, src, len, IO_WEIGHT) &&
	    !wfile_weight(&c->bfq, d, &w, src, len, BFQ_WEIGHT))
		return DFL_WEIGHT;
	if (w > WEIGHT_MAX)
		w = WEIGHT_MAX;
	return w ? w : 1;
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

/* the cgroup with id @id, or NULL: gone */
static const struct cg *cg_of(const struct cgset *s, uint64_t id)
{
	struct cg key = { .id = id };

	return s->n ? bsearch(&key, s->c, s->n, sizeof(*s->c), cg_cmp) : NULL;
}

/* what a follow run remembers between passes: the messages it gave */
struct follow_memo {
	char **said;
	int n;
	char **now;			/* this pass's */
	int nnow;
};

static bool memo_seen(struct follow_memo *m, const char *msg)
{
	char **nn;
	int i;

	if (!m)
		return false;
	nn = realloc(m->now, (m->nnow + 1) * sizeof(*nn));
	if (nn) {
		m->now = nn;
		m->now[m->nnow] = strdup(msg);
		if (m->now[m->nnow])
			m->nnow++;
	}
	for (i = 0; i < m->n; i++) {
		if (strcmp(m->said[i], msg) == 0)
			return true;
	}
	return false;
}

static void memo_next(struct follow_memo *m)
{
	int i;

	for (i = 0; i < m->n; i++)
		free(m->said[i]);
	free(m->said);
	m->said = m->now;
	m->n = m->nnow;
	m->now = NULL;
	m->nnow = 0;
}

struct pass_count {
	int set, removed, kept, user, failed;
};

static int write_weight(struct fairqctl_control *ctl, uint64_t id,
			unsigned int w)
{
	char val[64];

	snprintf(val, sizeof(val), "%" PRIu64 " %u", id, w);
	return write_attr(ctl, ROOT_CONFIGFS, "cgroup_weights", val);
}

/* a change line, or a problem once per run of them (@memo) */
static void __attribute__((format(printf, 4, 5)))
note(const struct fairqctl_control *ctl, struct follow_memo *memo, bool err,
     const char *fmt, ...)
{
	char msg[PATH_MAX + 256], key[PATH_MAX + 300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (err) {
		snprintf(key, sizeof(key), "%s: %s", ctl->name, msg);
		if (!memo_seen(memo, key))
			warnx("%s", key);
		return;
	}
	printf("%s: %s\n", ctl->name, msg);
	fflush(stdout);
}

/*
 * One device: its table against the cgroups.  Called with the lock
 * held.  0, or -1 if a write failed (reported).
 */
static int sync_device(struct fairqctl_control *ctl, const struct fqdev *d,
		       const struct cgset *s, struct follow_memo *memo,
		       struct pass_count *pc)
{
	struct cgroup_weight *have = NULL, *mine = NULL, *next;
	char src[64], key[PATH_MAX + 64];
	int i, nhave, nmine, nnext = 0, cur, rc, ret = 0;
	unsigned int w;

	rc = read_cgroup_weights(ctl, &have, &nhave);
	if (rc) {
		note(ctl, memo, true, "cgroup_weights: %s%s", strerror(-rc),
		     rc == -ENOENT ? " (this fairq.ko has no cgroup weights)" : "");
		return -1;
	}
	if (state_read(ctl, &mine, &nmine)) {
		nmine = 0;
		mine = NULL;
	}
	next = calloc((size_t)nmine + s->n + 1, sizeof(*next));
	if (!next) {
		free(have);
		free(mine);
		warnx("out of memory");
		return -1;
	}

	/* the follower's entries: still in the table with its weight */
	for (i = 0; i < nmine; i++) {
		const struct cg *c;

		if (weight_of(have, nhave, mine[i].id) != (int)mine[i].weight)
			continue;	/* removed or changed by someone else */
		c = cg_of(s, mine[i].id);
		w = c ? cg_weight(c, d, src, sizeof(src)) : DFL_WEIGHT;
		if (w == mine[i].weight) {
			next[nnext++] = mine[i];
			pc->kept++;
			continue;
		}
		if (w == DFL_WEIGHT) {
			if (c)
				note(ctl, NULL, false, "remove cgroup-weight %s (its weight is 100 again)",
				     c->path);
			else
				note(ctl, NULL, false, "remove cgroup-weight %" PRIu64 " (cgroup gone)",
				     mine[i].id);
			rc = ctl->dry_run ? 0 : write_weight(ctl, mine[i].id, 0);
			if (rc && rc != -ENOENT) {
				note(ctl, memo, true, "cgroup-weight %" PRIu64 "=0: %s",
				     mine[i].id, strerror(-rc));
				next[nnext++] = mine[i];
				pc->failed++;
				ret = -1;
				continue;
			}
			pc->removed++;
			continue;
		}
		note(ctl, NULL, false, "set cgroup-weight %s=%u (%s, was %u)", c->path, w, src,
		     mine[i].weight);
		rc = ctl->dry_run ? 0 : write_weight(ctl, mine[i].id, w);
		if (rc) {
			note(ctl, memo, true, "cgroup-weight %s=%u: %s", c->path, w,
			     strerror(-rc));
			next[nnext++] = mine[i];
			pc->failed++;
			ret = -1;
			continue;
		}
		next[nnext].id = mine[i].id;
		next[nnext++].weight = w;
		pc->set++;
	}

	/* cgroups with a weight and no entry of anyone's yet */
	for (i = 0; i < s->n; i++) {
		const struct cg *c = &s->c[i];

		w = cg_weight(c, d, src, sizeof(src));
		if (w == DFL_WEIGHT || weight_of(next, nnext, c->id) >= 0)
			continue;	/* nothing to follow, or done above */
		cur = weight_of(have, nhave, c->id);
		if (cur >= 0) {
			/* the user's entry wins; said once while it lasts */
			pc->user++;
			snprintf(key, sizeof(key), "%s: %s=%d, %u", ctl->name, c->path, cur, w);
			if (cur != (int)w && !memo_seen(memo, key))
				note(ctl, NULL, false, "cgroup-weight %s=%d set by hand, %s says %u: left as it is",
				     c->path, cur, src, w);
			continue;
		}
		note(ctl, NULL, false, "set cgroup-weight %s=%u (%s)", c->path, w, src);
		rc = ctl->dry_run ? 0 : write_weight(ctl, c->id, w);
		if (rc) {
			note(ctl, memo, true, "cgroup-weight %s=%u: %s%s", c->path, w,
			     strerror(-rc), rc == -ENOSPC ? " (the weight table is full)" : "");
			pc->failed++;
			ret = -1;
			continue;
		}
		next[nnext].id = c->id;
		next[nnext++].weight = w;
		pc->set++;
	}

	if (!ctl->dry_run && state_write(ctl, next, nnext))
		ret = -1;
	free(next);
	free(have);
	free(mine);
	return ret;
}

/* a device to work on: powered, classify=cgroup; else why not (static) */
static const char *not_followed(struct fairqctl_control *ctl)
{
	char *val;
	bool ok;

	if (!entry_exists(ctl))
		return "no such fairq device";
	if (read_attr(ctl, ROOT_CONFIGFS, "power", &val))
		return "no power attribute";
	ok = strcmp(val, "1") == 0;
	free(val);
	if (!ok)
		return "not powered on";
	if (read_attr(ctl, ROOT_CONFIGFS, "classify", &val))
		return "no classify attribute";
	ok = strcmp(val, "cgroup") == 0;
	free(val);
	return ok ? NULL : "classify is not cgroup";
}

/* state files of devices that are gone */
static void drop_stale(struct fairqctl_control *ctl, char **names, int n)
{
	char dir[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int i;

	if (state_dir(ctl, dir, sizeof(dir)) || !(d = opendir(dir)))
		return;
	while ((e = readdir(d))) {
		if (!valid_name(e->d_name))
			continue;
		for (i = 0; i < n; i++) {
			if (strcmp(names[i], e->d_name) == 0)
				break;
		}
		if (i == n)
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

/*
 * One pass over the devices (ctl->name if given, else every one).
 * 0, or -1 if something failed (reported).
 */
static int sync_pass(struct fairqctl_control *ctl, const char *only,
		     struct follow_memo *memo, double *walk_s)
{
	struct fqdev *devs = NULL;
	struct cgset s = { 0 };
	char **names = NULL;
	const char *why;
	double t0;
	int i, n, ndev = 0, lk = -1, ret = 0;
	struct stat st;

	*walk_s = 0;
	/* the module not loaded: nothing to follow (yet) */
	if (memo && (stat(ctl->configfs, &st) < 0 || !S_ISDIR(st.st_mode)))
		return 0;
	if (only) {
		names = calloc(1, sizeof(*names));
		n = names && (names[0] = strdup(only)) ? 1 : -ENOMEM;
	} else {
		n = list_entries(ctl, &names);
	}
	if (n < 0)
		return -1;
	devs = calloc(n + 1, sizeof(*devs));
	for (i = 0; devs && i < n; i++) {
		snprintf(ctl->name, sizeof(ctl->name), "%s", names[i]);
		why = not_followed(ctl);
		if (!why && device_numbers(ctl, &devs[ndev]))
			why = "no dev attribute in sysfs";
		if (why) {
			/* said when it is the one device asked for */
			if (only)
				note(ctl, memo, true, "%s: weights not followed", why);
			if (only && !memo)
				ret = -1;
			continue;
		}
		ndev++;
	}
	if (!devs) {
		warnx("out of memory");
		ret = -1;
		goto out;
	}
	if (!ctl->dry_run) {
		lk = weights_lock(ctl, true);
		if (lk < 0) {
			ret = -1;
			goto out;
		}
		if (!only)
			drop_stale(ctl, names, n);
	}
	if (!ndev) {
		if (!memo && !only)
			printf("%sno powered device with classify=cgroup: nothing to follow\n",
			       ctl->dry_run ? "dry run, nothing done: " : "");
		goto out;
	}
	t0 = now_s();
	if (walk_cgroups(ctl, &s)) {
		ret = -1;
		goto out;
	}
	*walk_s = now_s() - t0;
	for (i = 0; i < ndev; i++) {
		struct pass_count pc = { 0 };

		snprintf(ctl->name, sizeof(ctl->name), "%s", devs[i].name);
		if (sync_device(ctl, &devs[i], &s, memo, &pc))
			ret = -1;
		if (!memo)
			printf("%s%s: %d cgroups, %d changed, %d removed, %d as they were, %d set by hand, %d failed\n",
			       ctl->dry_run ? "dry run, nothing done: " : "", ctl->name,
			       (int)s.walked, pc.set, pc.removed, pc.kept, pc.user, pc.failed);
	}
out:
	weights_unlock(lk);
	cgset_free(&s);
	free(devs);
	free_names(names, n > 0 ? n : 0);
	return ret;
}

static void nap(double s)
{
	double until = now_s() + s;

	while (!stop && now_s() < until)
		sleep_ms(until - now_s() < 0.05 ? (long)((until - now_s()) * 1000) + 1 : 50);
}

/* weights sync [NAME] [--follow [--interval S]] [--dry-run] */
int cmd_weights(struct fairqctl_control *ctl)
{
	struct follow_memo memo = { 0 };
	char one[NAME_MAX_LEN + 1];
	const char *only = NULL;
	double walk_s, t0;
	int rc;

	if (ctl->nargs > 1) {
		if (need_entry(ctl))
			return EXIT_FAILURE;
		snprintf(one, sizeof(one), "%s", ctl->name);
		only = one;
	}
	if (!ctl->follow) {
		t0 = now_s();
		rc = sync_pass(ctl, only, NULL, &walk_s);
		if (getenv("FAIRQ_WEIGHTS_TIMING"))
			fprintf(stderr, "weights sync: pass %.1f ms, cgroup walk %.1f ms\n",
				(now_s() - t0) * 1e3, walk_s * 1e3);
		return rc ? EXIT_FAILURE : EXIT_SUCCESS;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while (!stop) {
		double took;

		t0 = now_s();
		sync_pass(ctl, only, &memo, &walk_s);
		memo_next(&memo);
		/* a pass every interval, and at most a tenth of the time */
		took = now_s() - t0;
		nap((ctl->interval > 10 * took ? ctl->interval : 10 * took) - took);
	}
	memo_next(&memo);
	memo_next(&memo);
	return EXIT_SUCCESS;
}
