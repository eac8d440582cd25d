// SPDX-License-Identifier: GPL-2.0
/*
 * lwreplay - workload, log replayer and checker for the crash-consistency
 * test (tests/vm/160-crash-consistency.sh; the argument for why it proves
 * anything is in that file's header).  It runs in the guest.
 *
 *   lwreplay work DIR NPROC NOPS SEED DMNAME RECORD
 *	NPROC processes, each NOPS operations in DIR/pP (new, replace,
 *	append, mv, rm, each ending in fsync of the file and/or DIR/pP).
 *	After each fsync returns the process appends "P J OP NAME NAME2
 *	SUM SIZE" to RECORD, then sends "mark pP.J" to the dm-log-writes
 *	device DMNAME (DM_TARGET_MSG ioctl, as `dmsetup message` does).
 *   lwreplay list LOG
 *	one line per log entry: "INDEX FLAGS SECTOR NR_SECTORS [MARK]",
 *	FLAGS letters F flush, U FUA, D discard, M mark, T metadata, or -.
 *   lwreplay replay LOG DEV FROM TO [-s SKIP] [-c CLIP]
 *	write the entries FROM <= i < TO to DEV (discards as zeros); -s
 *	leaves entry SKIP out; -c CLIP first zeroes entry CLIP's range
 *	and writes only what falls inside it.
 *   lwreplay check LOG TO RECORD MNT [-a AHEAD] [-v]
 *	the state after entries 0..TO-1 of LOG, mounted at MNT, against
 *	RECORD: for each process, the operations whose mark lies before TO
 *	must be there, the one after them may be in flight, nothing later
 *	may show.  -a pretends AHEAD more operations per process are
 *	durable (the test's self-check); -v names one verified file.
 *   lwreplay fiemap FILE          first physical 512-byte sector of FILE
 *   lwreplay find LOG TO SECTOR   last data entry before TO writing SECTOR
 *
 * The log format is dm-log-writes' (drivers/md/dm-log-writes.c,
 * Documentation/admin-guide/device-mapper/log-writes.rst): a super block
 * at byte 0, then per entry one sectorsize block holding the entry header
 * (and a mark's text after it), followed by nr_sectors blocks of data
 * unless it is a discard.  All numbers little-endian; sector and
 * nr_sectors count sectorsize blocks.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/dm-ioctl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>

#define LW_MAGIC	0x6a736677736872ULL
#define LW_VERSION	1ULL
#define LW_FLUSH	(1ULL << 0)
#define LW_FUA		(1ULL << 1)
#define LW_DISCARD	(1ULL << 2)
#define LW_MARK		(1ULL << 3)
#define LW_META		(1ULL << 4)
#define LW_KNOWN	(LW_FLUSH | LW_FUA | LW_DISCARD | LW_MARK | LW_META)
#define LW_ENTRY_SIZE	32	/* sector, nr_sectors, flags, data_len */

#define NAME_LEN	32
#define MAX_PROC	64
#define MAX_LIVE	24	/* files a worker keeps at most */
#define MAX_FILE	(48 * 1024)

static const char *prog = "lwreplay";

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void *xmalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p)
		die("out of memory (%zu bytes)", n);
	return p;
}

static uint64_t num(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-')
		die("bad %s '%s'", what, s);
	return v;
}

static void pread_all(int fd, void *buf, size_t len, uint64_t off, const char *what)
{
	while (len) {
		ssize_t n = pread(fd, buf, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("%s: read at %" PRIu64 ": %s", what, off,
			    n ? strerror(errno) : "end of device");
		buf = (char *)buf + n;
		len -= n;
		off += n;
	}
}

static void pwrite_all(int fd, const void *buf, size_t len, uint64_t off, const char *what)
{
	while (len) {
		ssize_t n = pwrite(fd, buf, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("%s: write at %" PRIu64 ": %s", what, off,
			    n ? strerror(errno) : "end of device");
		buf = (const char *)buf + n;
		len -= n;
		off += n;
	}
}

/* FNV-1a, 64 bit: the content checksum the record and the checker share */
#define FNV_INIT 0xcbf29ce484222325ULL

static uint64_t fnv(uint64_t h, const unsigned char *p, size_t n)
{
	while (n--) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* ---- the log --------------------------------------------------------- */

struct lwlog {
	const char *path;
	int fd;
	uint32_t bs;		/* sectorsize */
	uint64_t nr;		/* entries */
	uint64_t idx;		/* next entry */
	uint64_t pos;		/* its byte offset */
	unsigned char *blk;
};

struct lwent {
	uint64_t idx, sector, nr, flags;
	uint64_t data_off;	/* byte offset of the data in the log */
	char mark[512];
};

static void log_open(struct lwlog *lg, const char *path)
{
	unsigned char sb[512];
	uint32_t bs;

	lg->path = path;
	lg->fd = open(path, O_RDONLY);
	if (lg->fd < 0)
		die("%s: %s", path, strerror(errno));
	pread_all(lg->fd, sb, sizeof(sb), 0, path);
	if (le64toh(*(uint64_t *)sb) != LW_MAGIC)
		die("%s: no dm-log-writes super block (magic %#" PRIx64 ")",
		    path, le64toh(*(uint64_t *)sb));
	if (le64toh(*(uint64_t *)(sb + 8)) != LW_VERSION)
		die("%s: log version %" PRIu64 ", expected %llu", path,
		    le64toh(*(uint64_t *)(sb + 8)), LW_VERSION);
	lg->nr = le64toh(*(uint64_t *)(sb + 16));
	bs = le32toh(*(uint32_t *)(sb + 24));
	if (bs < 512 || bs > 65536 || (bs & (bs - 1)))
		die("%s: bad sectorsize %u", path, bs);
	lg->bs = bs;
	lg->blk = xmalloc(bs);
	lg->idx = 0;
	lg->pos = bs;
}

/* the next entry's header, or 0 at the end of the log */
static int log_next(struct lwlog *lg, struct lwent *e)
{
	uint64_t dlen;

	if (lg->idx >= lg->nr)
		return 0;
	pread_all(lg->fd, lg->blk, lg->bs, lg->pos, lg->path);
	e->idx = lg->idx;
	e->sector = le64toh(*(uint64_t *)lg->blk);
	e->nr = le64toh(*(uint64_t *)(lg->blk + 8));
	e->flags = le64toh(*(uint64_t *)(lg->blk + 16));
	dlen = le64toh(*(uint64_t *)(lg->blk + 24));
	e->mark[0] = 0;
	if (e->flags & ~LW_KNOWN)
		die("%s: entry %" PRIu64 " at byte %" PRIu64 ": unknown flags %#" PRIx64,
		    lg->path, e->idx, lg->pos, e->flags);
	if (e->flags & LW_MARK) {
		if (dlen >= lg->bs - LW_ENTRY_SIZE || dlen >= sizeof(e->mark) || e->nr)
			die("%s: entry %" PRIu64 ": bad mark (%" PRIu64 " bytes, %" PRIu64
			    " sectors)", lg->path, e->idx, dlen, e->nr);
		memcpy(e->mark, lg->blk + LW_ENTRY_SIZE, dlen);
		e->mark[dlen] = 0;
	} else if (dlen) {
		die("%s: entry %" PRIu64 ": inline data (%" PRIu64 " bytes) not supported",
		    lg->path, e->idx, dlen);
	}
	if (e->nr > (1ULL << 32))
		die("%s: entry %" PRIu64 ": %" PRIu64 " sectors?", lg->path, e->idx, e->nr);
	e->data_off = lg->pos + lg->bs;
	lg->pos += lg->bs;
	if (!(e->flags & LW_DISCARD))
		lg->pos += e->nr * lg->bs;
	lg->idx++;
	return 1;
}

static int has_data(const struct lwent *e)
{
	return e->nr && !(e->flags & (LW_DISCARD | LW_MARK));
}

static void flags_str(uint64_t f, char *s)
{
	char *p = s;

	if (f & LW_FLUSH)
		*p++ = 'F';
	if (f & LW_FUA)
		*p++ = 'U';
	if (f & LW_DISCARD)
		*p++ = 'D';
	if (f & LW_MARK)
		*p++ = 'M';
	if (f & LW_META)
		*p++ = 'T';
	if (p == s)
		*p++ = '-';
	*p = 0;
}

static int cmd_list(int argc, char **argv)
{
	struct lwlog lg;
	struct lwent e;
	uint64_t n[5] = { 0 }, bytes = 0;
	char fl[8];

	if (--argc != 1)
		die("usage: list LOG");
	argv++;
	log_open(&lg, argv[0]);
	while (log_next(&lg, &e)) {
		flags_str(e.flags, fl);
		printf("%" PRIu64 " %s %" PRIu64 " %" PRIu64 "%s%s\n", e.idx, fl,
		       e.sector, e.nr, e.mark[0] ? " " : "", e.mark);
		n[0] += !!(e.flags & LW_FLUSH);
		n[1] += !!(e.flags & LW_FUA);
		n[2] += !!(e.flags & LW_DISCARD);
		n[3] += !!(e.flags & LW_MARK);
		n[4] += has_data(&e);
		if (has_data(&e))
			bytes += e.nr * lg.bs;
	}
	fprintf(stderr, "%s: %" PRIu64 " entries, sectorsize %u: %" PRIu64
		" writes (%" PRIu64 " KiB), %" PRIu64 " flush, %" PRIu64 " fua, %" PRIu64
		" discard, %" PRIu64 " marks; log uses %" PRIu64 " KiB\n",
		lg.path, lg.nr, lg.bs, n[4], bytes >> 10, n[0], n[1], n[2], n[3],
		lg.pos >> 10);
	return 0;
}

/* ---- replay ------------------------------------------------------------ */

static void zero_range(int fd, uint64_t off, uint64_t len, const char *what)
{
	static unsigned char zeros[65536];

	while (len) {
		size_t n = len < sizeof(zeros) ? len : sizeof(zeros);

		pwrite_all(fd, zeros, n, off, what);
		off += n;
		len -= n;
	}
}

static int cmd_replay(int argc, char **argv)
{
	struct lwlog lg;
	struct lwent e;
	uint64_t from, to, skip = UINT64_MAX, clip = UINT64_MAX;
	uint64_t c0 = 0, c1 = UINT64_MAX, written = 0, n = 0;
	unsigned char *buf = NULL;
	size_t bufsz = 0;
	const char *dev;
	int fd, opt;

	while ((opt = getopt(argc, argv, "s:c:")) != -1) {
		switch (opt) {
		case 's': skip = num(optarg, "entry to skip"); break;
		case 'c': clip = num(optarg, "entry to clip to"); break;
		default: die("usage: replay LOG DEV FROM TO [-s SKIP] [-c CLIP]");
		}
	}
	if (argc - optind != 4)
		die("usage: replay LOG DEV FROM TO [-s SKIP] [-c CLIP]");
	log_open(&lg, argv[optind]);
	dev = argv[optind + 1];
	from = num(argv[optind + 2], "FROM");
	to = num(argv[optind + 3], "TO");
	if (from > to || to > lg.nr)
		die("replay %" PRIu64 "..%" PRIu64 ": the log has %" PRIu64 " entries",
		    from, to, lg.nr);
	fd = open(dev, O_WRONLY);
	if (fd < 0)
		die("%s: %s", dev, strerror(errno));
	if (clip != UINT64_MAX) {
		e.idx = UINT64_MAX;
		while (log_next(&lg, &e) && e.idx < clip)
			;
		if (e.idx != clip || !e.nr)
			die("-c %" PRIu64 ": no such entry with sectors", clip);
		c0 = e.sector * lg.bs;
		c1 = c0 + e.nr * lg.bs;
		zero_range(fd, c0, c1 - c0, dev);
		log_open(&lg, argv[optind]);
	}
	while (log_next(&lg, &e) && e.idx < to) {
		uint64_t s, t;

		if (e.idx < from || e.idx == skip || !e.nr || (e.flags & LW_MARK))
			continue;
		s = e.sector * lg.bs;
		t = s + e.nr * lg.bs;
		if (t <= c0 || s >= c1)
			continue;
		if (e.flags & LW_DISCARD) {
			zero_range(fd, s > c0 ? s : c0, (t < c1 ? t : c1) - (s > c0 ? s : c0), dev);
			n++;
			continue;
		}
		if (t - s > bufsz) {
			free(buf);
			bufsz = t - s;
			buf = xmalloc(bufsz);
		}
		pread_all(lg.fd, buf, t - s, e.data_off, lg.path);
		if (s < c0) {
			/* clipped: only the part inside [c0, c1) */
			pwrite_all(fd, buf + (c0 - s), (t < c1 ? t : c1) - c0, c0, dev);
			written += (t < c1 ? t : c1) - c0;
		} else {
			pwrite_all(fd, buf, (t < c1 ? t : c1) - s, s, dev);
			written += (t < c1 ? t : c1) - s;
		}
		n++;
	}
	if (fsync(fd) || close(fd))
		die("%s: fsync: %s", dev, strerror(errno));
	fprintf(stderr, "replayed entries %" PRIu64 "..%" PRIu64 ": %" PRIu64
		" writes, %" PRIu64 " bytes", from, to, n, written);
	if (clip != UINT64_MAX)
		fprintf(stderr, " inside entry %" PRIu64 "'s %" PRIu64 " bytes (zeroed first)",
			clip, c1 - c0);
	fputc('\n', stderr);
	free(buf);
	return 0;
}

/* ---- the record and the model ------------------------------------------ */

enum op { OP_NEW, OP_REPLACE, OP_APPEND, OP_MV, OP_RM, OP_NR };
static const char *const op_names[OP_NR] = { "new", "replace", "append", "mv", "rm" };

struct rec {
	int op;
	char name[NAME_LEN], name2[NAME_LEN];
	uint64_t sum, size;
	uint64_t mark_at;	/* log entry of its mark, or UINT64_MAX */
};

struct proc {
	struct rec *ops;	/* ops[1..n] */
	unsigned int n, cap;
	unsigned int marked;	/* last op whose mark lies before TO */
};

static struct proc procs[MAX_PROC];
static unsigned int nproc;

static void load_record(const char *path)
{
	char line[256], op[16], a[NAME_LEN], b[NAME_LEN];
	unsigned int p, j, i, lineno = 0;
	unsigned long long sum, size;
	FILE *f = fopen(path, "r");

	if (!f)
		die("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		struct proc *pr;
		struct rec *r;

		lineno++;
		if (sscanf(line, "%u %u %15s %31s %31s %llx %llu", &p, &j, op, a, b,
			   &sum, &size) != 7 || p >= MAX_PROC)
			die("%s:%u: bad line '%s'", path, lineno, line);
		pr = &procs[p];
		if (j != pr->n + 1)
			die("%s:%u: process %u op %u follows op %u", path, lineno, p, j, pr->n);
		if (j >= pr->cap) {
			pr->cap = pr->cap ? pr->cap * 2 : 256;
			pr->ops = realloc(pr->ops, pr->cap * sizeof(*pr->ops));
			if (!pr->ops)
				die("out of memory");
		}
		r = &pr->ops[j];
		memset(r, 0, sizeof(*r));
		for (i = 0; i < OP_NR && strcmp(op, op_names[i]); i++)
			;
		if (i == OP_NR)
			die("%s:%u: unknown op '%s'", path, lineno, op);
		r->op = i;
		snprintf(r->name, NAME_LEN, "%s", a);
		snprintf(r->name2, NAME_LEN, "%s", b);
		r->sum = sum;
		r->size = size;
		r->mark_at = UINT64_MAX;
		pr->n = j;
		if (p + 1 > nproc)
			nproc = p + 1;
	}
	fclose(f);
}

/* what a name may look like: absent, a given content, or anything */
struct file {
	char name[NAME_LEN];
	int any;		/* in flight: any content, or absent */
	int nalt;		/* allowed states */
	struct { int present; uint64_t sum, size; } alt[2];
	unsigned int op;	/* op that made the durable state */
	int seen;
};

struct model {
	struct file *f;
	unsigned int n, cap;
};

static struct file *model_find(struct model *m, const char *name)
{
	unsigned int i;

	for (i = 0; i < m->n; i++)
		if (!strcmp(m->f[i].name, name))
			return &m->f[i];
	return NULL;
}

static struct file *model_add(struct model *m, const char *name)
{
	struct file *f;

	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 64;
		m->f = realloc(m->f, m->cap * sizeof(*m->f));
		if (!m->f)
			die("out of memory");
	}
	f = &m->f[m->n++];
	memset(f, 0, sizeof(*f));
	snprintf(f->name, NAME_LEN, "%s", name);
	return f;
}

static void model_del(struct model *m, struct file *f)
{
	*f = m->f[--m->n];
}

/* the state after op j: one present alternative per live file */
static void model_apply(struct model *m, unsigned int p, unsigned int j, const struct rec *r)
{
	struct file *f = model_find(m, r->name);

	switch (r->op) {
	case OP_NEW:
		if (f)
			die("record: p%u op %u creates %s, which exists", p, j, r->name);
		f = model_add(m, r->name);
		break;
	case OP_REPLACE:
	case OP_APPEND:
		if (!f)
			die("record: p%u op %u %s %s, which does not exist", p, j,
			    op_names[r->op], r->name);
		break;
	case OP_MV:
		if (!f || model_find(m, r->name2))
			die("record: p%u op %u mv %s %s: bad names", p, j, r->name, r->name2);
		snprintf(f->name, NAME_LEN, "%s", r->name2);
		f->op = j;
		return;
	case OP_RM:
		if (!f)
			die("record: p%u op %u rm %s, which does not exist", p, j, r->name);
		model_del(m, f);
		return;
	}
	f->nalt = 1;
	f->alt[0].present = 1;
	f->alt[0].sum = r->sum;
	f->alt[0].size = r->size;
	f->op = j;
}

/* op j may be in flight: widen what the names it touches may show */
static void model_inflight(struct model *m, unsigned int p, unsigned int j,
			   const struct rec *r)
{
	struct file *f = model_find(m, r->name), *g;

	if (!f != (r->op == OP_NEW))
		die("record: p%u op %u %s %s: the name %s", p, j, op_names[r->op],
		    r->name, f ? "exists" : "does not exist");
	switch (r->op) {
	case OP_NEW:		/* tmp written + fsync'd, renamed to name */
	case OP_REPLACE:
		if (!f) {
			f = model_add(m, r->name);
			f->alt[f->nalt++].present = 0;
		}
		f->op = j;
		f->alt[f->nalt].present = 1;
		f->alt[f->nalt].sum = r->sum;
		f->alt[f->nalt++].size = r->size;
		g = model_add(m, r->name2);
		g->any = 1;
		break;
	case OP_APPEND:		/* size and data may be anywhere between */
		f->any = 1;
		break;
	case OP_MV:		/* atomic: one of the two names, same content */
		g = model_add(m, r->name2);
		f = model_find(m, r->name);	/* model_add may have moved it */
		g->alt[0] = f->alt[0];
		g->alt[1].present = 0;
		g->nalt = 2;
		f->alt[1].present = 0;
		f->nalt = 2;
		break;
	case OP_RM:
		f->alt[1].present = 0;
		f->nalt = 2;
		break;
	}
}

static int hash_file(int dfd, const char *name, uint64_t *sum, uint64_t *size)
{
	unsigned char buf[65536];
	uint64_t h = FNV_INIT, n = 0;
	ssize_t r;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW);

	if (fd < 0)
		return -1;
	while ((r = read(fd, buf, sizeof(buf))) > 0) {
		h = fnv(h, buf, r);
		n += r;
	}
	close(fd);
	if (r < 0)
		return -1;
	*sum = h;
	*size = n;
	return 0;
}

static uint64_t check_to;
static unsigned int nerr;

static void bad(unsigned int p, const char *fmt, ...)
{
	va_list ap;

	printf("MISMATCH through entry %" PRIu64 " p%u/", check_to - 1, p);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	nerr++;
}

static void durable_since(const struct proc *pr, unsigned int op, char *s, size_t n)
{
	if (op && op <= pr->n && pr->ops[op].mark_at != UINT64_MAX)
		snprintf(s, n, "op %u, marked at log entry %" PRIu64, op, pr->ops[op].mark_at);
	else
		snprintf(s, n, "op %u", op);
}

/* compare MNT/pP with the model: *ok files verified, *fly in-flight names */
static void check_proc(const char *mnt, unsigned int p, unsigned int k, int victim,
		       unsigned int *ok, unsigned int *fly)
{
	struct proc *pr = &procs[p];
	struct model m = { 0 };
	char dir[4096], since[96];
	struct dirent *de;
	unsigned int j, i;
	DIR *d;

	for (j = 1; j <= k; j++)
		model_apply(&m, p, j, &pr->ops[j]);
	if (k < pr->n)
		model_inflight(&m, p, k + 1, &pr->ops[k + 1]);
	snprintf(dir, sizeof(dir), "%s/p%u", mnt, p);
	d = opendir(dir);
	if (!d) {
		bad(p, ": directory %s: %s", dir, strerror(errno));
		free(m.f);
		return;
	}
	while ((de = readdir(d))) {
		struct file *f;
		uint64_t sum, size;
		struct stat st;
		int a, match = 0;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		f = model_find(&m, de->d_name);
		if (!f) {
			bad(p, "%s: present, but no operation durable or in flight made it",
			    de->d_name);
			continue;
		}
		f->seen = 1;
		if (f->any) {
			(*fly)++;
			continue;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || hash_file(dirfd(d), de->d_name, &sum, &size)) {
			bad(p, "%s: not a readable regular file", de->d_name);
			continue;
		}
		for (a = 0; a < f->nalt; a++)
			if (f->alt[a].present && f->alt[a].sum == sum && f->alt[a].size == size)
				match = 1;
		durable_since(pr, f->op, since, sizeof(since));
		if (!match) {
			bad(p, "%s: %" PRIu64 " bytes, sum %016" PRIx64 "; expected %" PRIu64
			    " bytes, sum %016" PRIx64 "%s (%s)", de->d_name, size, sum,
			    f->alt[0].present ? f->alt[0].size : f->alt[1].size,
			    f->alt[0].present ? f->alt[0].sum : f->alt[1].sum,
			    f->nalt > 1 ? " or the in-flight state" : "", since);
		} else if (f->nalt > 1) {
			(*fly)++;
		} else {
			(*ok)++;
			if (victim && size) {
				printf("victim p%u/%s\n", p, de->d_name);
				victim = 0;
			}
		}
	}
	closedir(d);
	for (i = 0; i < m.n; i++) {
		struct file *f = &m.f[i];
		int may_lack = f->any;

		if (f->seen)
			continue;
		for (j = 0; j < (unsigned int)f->nalt; j++)
			may_lack |= !f->alt[j].present;
		if (may_lack) {
			(*fly)++;
			continue;
		}
		durable_since(pr, f->op, since, sizeof(since));
		bad(p, "%s: missing; durable since %s", f->name, since);
	}
	free(m.f);
}

static int cmd_check(int argc, char **argv)
{
	struct lwlog lg;
	struct lwent e;
	unsigned int ahead = 0, p, j, ok = 0, fly = 0;
	int opt, victim = 0;
	char line[2048];
	size_t len;

	while ((opt = getopt(argc, argv, "a:v")) != -1) {
		switch (opt) {
		case 'a': ahead = num(optarg, "AHEAD"); break;
		case 'v': victim = 1; break;
		default: die("usage: check LOG TO RECORD MNT [-a AHEAD] [-v]");
		}
	}
	if (argc - optind != 4)
		die("usage: check LOG TO RECORD MNT [-a AHEAD] [-v]");
	log_open(&lg, argv[optind]);
	check_to = num(argv[optind + 1], "TO");
	if (!check_to || check_to > lg.nr)
		die("TO %" PRIu64 ": the log has %" PRIu64 " entries", check_to, lg.nr);
	load_record(argv[optind + 2]);
	/* marks before TO: the operations known durable there */
	while (log_next(&lg, &e) && e.idx < check_to) {
		if (!(e.flags & LW_MARK) || sscanf(e.mark, "p%u.%u", &p, &j) != 2)
			continue;
		if (p >= nproc || j != procs[p].marked + 1 || j > procs[p].n)
			die("log entry %" PRIu64 ": mark '%s' out of order (p%u last marked op %u"
			    " of %u)", e.idx, e.mark, p, p < nproc ? procs[p].marked : 0,
			    p < nproc ? procs[p].n : 0);
		procs[p].marked = j;
		procs[p].ops[j].mark_at = e.idx;
	}
	len = snprintf(line, sizeof(line), "entries 0..%" PRIu64 ": durable ops", check_to - 1);
	for (p = 0; p < nproc; p++) {
		unsigned int k = procs[p].marked + ahead;

		if (k > procs[p].n)
			k = procs[p].n;
		if (len < sizeof(line))
			len += snprintf(line + len, sizeof(line) - len, " p%u=%u/%u", p, k,
					procs[p].n);
		check_proc(argv[optind + 3], p, k, victim && !ok, &ok, &fly);
	}
	printf("%s%s; %u files verified, %u names in flight; %u mismatches\n",
	       line, ahead ? " (self-check: ahead of the marks)" : "", ok, fly, nerr);
	return nerr ? 1 : 0;
}

/* ---- fiemap, find -------------------------------------------------------- */

static int cmd_fiemap(int argc, char **argv)
{
	char buf[sizeof(struct fiemap) + sizeof(struct fiemap_extent)];
	struct fiemap *fm = (struct fiemap *)buf;
	struct fiemap_extent *fe = &fm->fm_extents[0];
	int fd;

	if (--argc != 1)
		die("usage: fiemap FILE");
	argv++;
	fd = open(argv[0], O_RDONLY);
	if (fd < 0)
		die("%s: %s", argv[0], strerror(errno));
	memset(buf, 0, sizeof(buf));
	fm->fm_length = ~0ULL;
	fm->fm_flags = FIEMAP_FLAG_SYNC;
	fm->fm_extent_count = 1;
	if (ioctl(fd, FS_IOC_FIEMAP, fm))
		die("%s: FIEMAP: %s", argv[0], strerror(errno));
	if (fm->fm_mapped_extents < 1 || fe->fe_logical != 0 ||
	    (fe->fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC |
			     FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_ENCODED)))
		die("%s: no plain extent at offset 0", argv[0]);
	printf("%llu\n", (unsigned long long)(fe->fe_physical / 512));
	close(fd);
	return 0;
}

static int cmd_find(int argc, char **argv)
{
	struct lwlog lg;
	struct lwent e;
	uint64_t to, off, last = UINT64_MAX;

	if (--argc != 3)
		die("usage: find LOG TO SECTOR");
	argv++;
	log_open(&lg, argv[0]);
	to = num(argv[1], "TO");
	off = num(argv[2], "SECTOR") * 512;
	while (log_next(&lg, &e) && e.idx < to)
		if (has_data(&e) && e.sector * lg.bs <= off && off < (e.sector + e.nr) * lg.bs)
			last = e.idx;
	if (last == UINT64_MAX)
		die("no entry before %" PRIu64 " writes sector %s", to, argv[2]);
	printf("%" PRIu64 "\n", last);
	return 0;
}

/* ---- the workload -------------------------------------------------------- */

static uint64_t rnd_state;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return rnd_state * 0x2545f4914f6cdd1dULL;
}

struct live {
	char name[NAME_LEN];
	uint64_t sum, size;
};

static int dm_mark(int ctl, const char *dm, const char *text)
{
	union {
		struct dm_ioctl io;
		char raw[sizeof(struct dm_ioctl) + sizeof(struct dm_target_msg) + 64];
	} u;
	struct dm_target_msg *msg = (struct dm_target_msg *)(u.raw + sizeof(u.io));

	memset(&u, 0, sizeof(u));
	u.io.version[0] = DM_VERSION_MAJOR;
	u.io.data_size = sizeof(u);
	u.io.data_start = sizeof(u.io);
	snprintf(u.io.name, sizeof(u.io.name), "%s", dm);
	msg->sector = 0;
	snprintf(msg->message, 64, "mark %s", text);
	return ioctl(ctl, DM_TARGET_MSG, &u.io);
}

static void must(int ok, unsigned int p, unsigned int j, const char *what, const char *name)
{
	if (!ok) {
		fprintf(stderr, "%s: p%u op %u: %s %s: %s\n", prog, p, j, what, name,
			strerror(errno));
		exit(1);
	}
}

/* write LEN random bytes to a new PATH, fsync it; returns the checksum */
static uint64_t write_new(int dfd, const char *name, unsigned char *buf, size_t len,
			  unsigned int p, unsigned int j)
{
	size_t i;
	int fd;

	for (i = 0; i < len; i++)
		buf[i] = rnd() >> 56;
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL, 0644);
	must(fd >= 0, p, j, "create", name);
	must(write(fd, buf, len) == (ssize_t)len, p, j, "write", name);
	must(fsync(fd) == 0, p, j, "fsync", name);
	must(close(fd) == 0, p, j, "close", name);
	return fnv(FNV_INIT, buf, len);
}

static void worker(const char *top, unsigned int p, unsigned int nops, uint64_t seed,
		   const char *dm, int rec)
{
	struct live live[MAX_LIVE];
	unsigned char *buf = xmalloc(MAX_FILE);
	unsigned int nlive = 0, j;
	char dir[4096], line[256], name[NAME_LEN], tmp[NAME_LEN], text[32];
	int dfd, ctl;

	rnd_state = seed * 0x9e3779b97f4a7c15ULL + p + 1;
	snprintf(dir, sizeof(dir), "%s/p%u", top, p);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	must(dfd >= 0, p, 0, "open", dir);
	ctl = open("/dev/mapper/control", O_RDWR);
	must(ctl >= 0, p, 0, "open", "/dev/mapper/control");
	for (j = 1; j <= nops; j++) {
		unsigned int r = rnd() % 100, v = nlive ? rnd() % nlive : 0;
		struct live *l = &live[v];
		int op, fd;
		size_t len;

		if (nlive < 3)
			op = OP_NEW;
		else if (r < (nlive >= MAX_LIVE ? 0 : 30))
			op = OP_NEW;
		else if (r < 50)
			op = OP_REPLACE;
		else if (r < 65)
			op = OP_APPEND;
		else if (r < 80)
			op = OP_MV;
		else
			op = OP_RM;
		snprintf(name, sizeof(name), "f%u", j);
		snprintf(tmp, sizeof(tmp), "t%u", j);
		switch (op) {
		case OP_NEW:
			l = &live[nlive++];
			snprintf(l->name, NAME_LEN, "%s", name);
			/* fall through */
		case OP_REPLACE:
			len = 1 + rnd() % (MAX_FILE / 2);
			l->sum = write_new(dfd, tmp, buf, len, p, j);
			l->size = len;
			must(renameat(dfd, tmp, dfd, l->name) == 0, p, j, "rename", tmp);
			must(fsync(dfd) == 0, p, j, "fsync", dir);
			snprintf(line, sizeof(line), "%u %u %s %s %s %016" PRIx64 " %" PRIu64 "\n",
				 p, j, op_names[op], l->name, tmp, l->sum, l->size);
			break;
		case OP_APPEND:
			len = 1 + rnd() % 8192;
			if (l->size + len > MAX_FILE)
				len = l->size < MAX_FILE ? MAX_FILE - l->size : 0;
			for (size_t i = 0; i < len; i++)
				buf[i] = rnd() >> 56;
			fd = openat(dfd, l->name, O_WRONLY | O_APPEND);
			must(fd >= 0, p, j, "open", l->name);
			must(write(fd, buf, len) == (ssize_t)len, p, j, "append", l->name);
			must(fsync(fd) == 0, p, j, "fsync", l->name);
			must(close(fd) == 0, p, j, "close", l->name);
			l->sum = fnv(l->sum, buf, len);
			l->size += len;
			snprintf(line, sizeof(line), "%u %u append %s - %016" PRIx64 " %" PRIu64 "\n",
				 p, j, l->name, l->sum, l->size);
			break;
		case OP_MV:
			must(renameat(dfd, l->name, dfd, name) == 0, p, j, "rename", l->name);
			must(fsync(dfd) == 0, p, j, "fsync", dir);
			snprintf(line, sizeof(line), "%u %u mv %s %s %016" PRIx64 " %" PRIu64 "\n",
				 p, j, l->name, name, l->sum, l->size);
			snprintf(l->name, NAME_LEN, "%s", name);
			break;
		default:
			must(unlinkat(dfd, l->name, 0) == 0, p, j, "unlink", l->name);
			must(fsync(dfd) == 0, p, j, "fsync", dir);
			snprintf(line, sizeof(line), "%u %u rm %s - %016" PRIx64 " %" PRIu64 "\n",
				 p, j, l->name, l->sum, l->size);
			*l = live[--nlive];
			break;
		}
		/* the fsync returned: record it, then mark the log */
		must(write(rec, line, strlen(line)) == (ssize_t)strlen(line), p, j,
		     "write", "record");
		snprintf(text, sizeof(text), "p%u.%u", p, j);
		must(dm_mark(ctl, dm, text) == 0, p, j, "mark", text);
	}
	exit(0);
}

static int cmd_work(int argc, char **argv)
{
	unsigned int n, nops, p, failed = 0;
	struct timespec t0, t1;
	uint64_t seed;
	int rec, status;
	pid_t pid;

	if (--argc != 6)
		die("usage: work DIR NPROC NOPS SEED DMNAME RECORD");
	argv++;
	n = num(argv[1], "NPROC");
	nops = num(argv[2], "NOPS");
	seed = num(argv[3], "SEED");
	if (!n || n > MAX_PROC)
		die("NPROC must be 1..%d", MAX_PROC);
	rec = open(argv[5], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (rec < 0)
		die("%s: %s", argv[5], strerror(errno));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (p = 0; p < n; p++) {
		pid = fork();
		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (!pid)
			worker(argv[0], p, nops, seed, argv[4], rec);
	}
	while ((pid = wait(&status)) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "work: %u processes x %u ops in %.1f s, %u failed\n", n, nops,
		(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, failed);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "work", cmd_work }, { "list", cmd_list }, { "replay", cmd_replay },
		{ "check", cmd_check }, { "fiemap", cmd_fiemap }, { "find", cmd_find },
	};
	unsigned int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		die("usage: lwreplay work|list|replay|check|fiemap|find ARGS (see the source)");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	die("unknown command '%s'", argv[1]);
	return 2;
}
