// SPDX-License-Identifier: GPL-2.0
/*
 * fairqctl - create, inspect, tune and destroy fairq devices.
 *
 * A thin front end over the kernel interface of docs/INTERFACE.md:
 * configfs entries under /sys/kernel/config/fairq/NAME (one per device)
 * and the run-time directory /sys/block/NAME/fairq/ while it is powered.
 * Laid out like util-linux sys-utils/blkzone.c: one command table, one
 * control struct handed to every handler, getopt_long() over a static
 * longopts[], and every attribute read or written through read_attr()
 * and write_attr().
 *
 * Exit status: 0 success, 1 the kernel or the system refused, 2 usage.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#ifndef FAIRQ_VERSION
#define FAIRQ_VERSION "0.1"
#endif

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

enum {
	EXIT_USAGE	= 2,
	NAME_MAX_LEN	= 31,		/* configfs entry name, INTERFACE.md */
	AUTO_NAME_MAX	= 1024,		/* fairq0 .. fairq1023 */
	DEV_WAIT_MS	= 5000,		/* for /dev/NAME after power=1 */
	DEV_POLL_MS	= 20,
	ATTR_MAX_BYTES	= 1 << 20,	/* sysfs/configfs give one page */
};

#define DEFAULT_CONFIGFS	"/sys/kernel/config/fairq"
#define DEFAULT_SYSFS		"/sys/block"

/* options, as a mask of what each command accepts; see check_options() */
enum {
	OPT_NAME	= 1 << 0,
	OPT_POLICY	= 1 << 1,
	OPT_SET		= 1 << 2,
	OPT_JSON	= 1 << 3,
};

/* where an attribute lives */
enum attr_root {
	ROOT_CONFIGFS,		/* CONFIGFS/NAME/attr */
	ROOT_SYSFS,		/* SYSFS/NAME/fairq/attr, only while powered */
};

struct fairqctl_control;

struct fairqctl_command {
	const char *name;
	int (*handler)(struct fairqctl_control *);
	const char *synopsis;	/* arguments and options, for usage() */
	const char *help;
	int min_args;		/* positional arguments after the command */
	int max_args;		/* -1: any number */
	unsigned int opts;	/* OPT_* accepted */
	bool needs_name;	/* first argument is a device NAME */
};

struct fairqctl_control {
	const struct fairqctl_command *command;
	const char *configfs;		/* FAIRQ_CONFIGFS */
	const char *sysfs;		/* FAIRQ_SYSFS */

	char name[NAME_MAX_LEN + 1];	/* the device the command is about */
	char **args;			/* positional arguments */
	int nargs;

	const char *opt_name;		/* create --name */
	const char *policy;		/* create --policy */
	const char *backing;		/* create: BACKING, resolved */
	char **sets;			/* create --set, in order */
	int nsets;
	bool json;			/* stats --json */

	/* the last failed write_attr(): did open() or write() fail */
	bool failed_at_open;
};

static int cmd_create(struct fairqctl_control *ctl);
static int cmd_list(struct fairqctl_control *ctl);
static int cmd_show(struct fairqctl_control *ctl);
static int cmd_set(struct fairqctl_control *ctl);
static int cmd_stats(struct fairqctl_control *ctl);
static int cmd_destroy(struct fairqctl_control *ctl);

static const struct fairqctl_command commands[] = {
	{
		.name = "create",
		.handler = cmd_create,
		.synopsis = "BACKING [--name NAME] [--policy P] [--set KEY=VALUE]...",
		.help = "create a device over BACKING, power it on, print /dev/NAME",
		.min_args = 1, .max_args = 1,
		.opts = OPT_NAME | OPT_POLICY | OPT_SET,
	}, {
		.name = "list",
		.handler = cmd_list,
		.synopsis = "",
		.help = "one line per device: NAME BACKING POWER POLICY",
		.min_args = 0, .max_args = 0,
	}, {
		.name = "show",
		.handler = cmd_show,
		.synopsis = "NAME",
		.help = "every attribute of NAME, \"KEY VALUE\" per line",
		.min_args = 1, .max_args = 1,
		.needs_name = true,
	}, {
		.name = "set",
		.handler = cmd_set,
		.synopsis = "NAME KEY=VALUE...",
		.help = "change attributes (sysfs while powered, configfs otherwise);\n"
			"stops at the first refused value",
		.min_args = 2, .max_args = -1,
		.needs_name = true,
	}, {
		.name = "stats",
		.handler = cmd_stats,
		.synopsis = "NAME [--json]",
		.help = "statistics of a powered device, as text or JSON",
		.min_args = 1, .max_args = 1,
		.opts = OPT_JSON,
		.needs_name = true,
	}, {
		.name = "destroy",
		.handler = cmd_destroy,
		.synopsis = "NAME",
		.help = "power NAME off and remove it",
		.min_args = 1, .max_args = 1,
		.needs_name = true,
	},
};

/* lifecycle attributes: written to configfs even while powered */
static const char *const configfs_only[] = { "backing", "power", "max_flows" };

static const struct fairqctl_command *name_to_command(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(commands); i++) {
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	}
	return NULL;
}

static void __attribute__((__noreturn__)) usage(void)
{
	FILE *out = stdout;
	size_t i;

	fputs("Usage:\n", out);
	fprintf(out, " %s <command> [options] [arguments]\n\n",
		program_invocation_short_name);
	fputs("Create and control fairq fair-queueing block devices.\n\n", out);

	fputs("Commands:\n", out);
	for (i = 0; i < ARRAY_SIZE(commands); i++) {
		const char *h = commands[i].help, *nl;

		fprintf(out, " %s%s%s\n", commands[i].name,
			*commands[i].synopsis ? " " : "", commands[i].synopsis);
		/* help text may span lines; indent each one */
		while ((nl = strchr(h, '\n'))) {
			fprintf(out, "        %.*s\n", (int)(nl - h), h);
			h = nl + 1;
		}
		fprintf(out, "        %s\n", h);
	}

	fputs("\nOptions:\n", out);
	fputs(" -n, --name NAME        create: device name (default: first free fairqN)\n", out);
	fputs(" -p, --policy P         create: dispatch policy (cfq, sfq, fifo)\n", out);
	fputs(" -s, --set KEY=VALUE    create: set a tunable before power-on (repeatable)\n", out);
	fputs(" -j, --json             stats: print {\"totals\":{...},\"flows\":[...]}\n", out);
	fputs(" -h, --help             display this help\n", out);
	fputs(" -V, --version          display version\n", out);

	fputs("\nEnvironment:\n", out);
	fputs(" FAIRQ_CONFIGFS         configfs root (default " DEFAULT_CONFIGFS ")\n", out);
	fputs(" FAIRQ_SYSFS            sysfs block root (default " DEFAULT_SYSFS ")\n", out);

	fputs("\nExit status: 0 success, 1 the kernel or the system refused, 2 usage error.\n", out);
	fputs("The attributes and their ranges: docs/INTERFACE.md.\n", out);
	exit(EXIT_SUCCESS);
}

static void __attribute__((__noreturn__, format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarnx(fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s --help' for more information.\n",
		program_invocation_short_name);
	exit(EXIT_USAGE);
}

/* [a-z0-9_-], 1..31 characters: the kernel's rule for an entry name */
static bool valid_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > NAME_MAX_LEN)
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

/* attribute names: [a-z0-9_], never a path */
static bool valid_attr(const char *s, size_t n)
{
	size_t i;

	if (n == 0)
		return false;
	for (i = 0; i < n; i++) {
		if (!islower((unsigned char)s[i]) &&
		    !isdigit((unsigned char)s[i]) && s[i] != '_')
			return false;
	}
	return true;
}

/* KEY=VALUE with a valid KEY; usage error otherwise */
static void check_setting(const char *kv)
{
	const char *eq = strchr(kv, '=');

	if (!eq)
		usage_error("'%s': expected KEY=VALUE", kv);
	if (!valid_attr(kv, eq - kv))
		usage_error("'%s': invalid attribute name", kv);
}

static void set_name(struct fairqctl_control *ctl, const char *name)
{
	/* accept /dev/fairq0 for fairq0 */
	if (strncmp(name, "/dev/", 5) == 0)
		name += 5;
	if (!valid_name(name))
		usage_error("'%s': invalid device name (1..%d of a-z 0-9 _ -)",
			    name, NAME_MAX_LEN);
	snprintf(ctl->name, sizeof(ctl->name), "%s", name);
}

/*
 * Kernel access: the configfs entry, its attributes and the sysfs
 * directory.  write_attr() and read_attr() return 0 or -errno and print
 * nothing; callers report with attr_error().
 */
static int entry_path(const struct fairqctl_control *ctl, char *buf, size_t len)
{
	if ((size_t)snprintf(buf, len, "%s/%s", ctl->configfs, ctl->name) >= len)
		return -ENAMETOOLONG;
	return 0;
}

static int attr_path(const struct fairqctl_control *ctl, enum attr_root root,
		     const char *attr, char *buf, size_t len)
{
	int n;

	if (root == ROOT_SYSFS)
		n = snprintf(buf, len, "%s/%s/fairq/%s", ctl->sysfs, ctl->name, attr);
	else
		n = snprintf(buf, len, "%s/%s/%s", ctl->configfs, ctl->name, attr);
	return (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int write_attr(struct fairqctl_control *ctl, enum attr_root root,
		      const char *attr, const char *val)
{
	char path[PATH_MAX];
	size_t len = strlen(val);
	ssize_t n;
	int fd, rc;

	ctl->failed_at_open = true;
	rc = attr_path(ctl, root, attr, path, sizeof(path));
	if (rc)
		return rc;
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ctl->failed_at_open = false;

	/*
	 * O_TRUNC as a shell's "echo v > attr" does (a no-op on configfs and
	 * sysfs); one write(), as they take the value in one store
	 */
	n = write(fd, val, len);
	rc = n < 0 ? -errno : (size_t)n != len ? -EIO : 0;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	return rc;
}

/* *out: the value without its trailing newline; free() it */
static int read_attr(struct fairqctl_control *ctl, enum attr_root root,
		     const char *attr, char **out)
{
	char path[PATH_MAX], *buf = NULL, *nbuf;
	size_t len = 0, size = 0;
	ssize_t n;
	int fd, rc;

	*out = NULL;
	rc = attr_path(ctl, root, attr, path, sizeof(path));
	if (rc)
		return rc;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		if (len + 1 >= size) {
			size = size ? size * 2 : 4096;
			if (size > ATTR_MAX_BYTES) {
				rc = -EFBIG;
				break;
			}
			nbuf = realloc(buf, size);
			if (!nbuf) {
				rc = -ENOMEM;
				break;
			}
			buf = nbuf;
		}
		n = read(fd, buf + len, size - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
		len += n;
	}
	close(fd);
	if (rc) {
		free(buf);
		return rc;
	}
	buf[len] = '\0';
	if (len && buf[len - 1] == '\n')
		buf[len - 1] = '\0';
	*out = buf;
	return 0;
}

static bool is_configfs_only(const char *attr)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(configfs_only); i++) {
		if (strcmp(configfs_only[i], attr) == 0)
			return true;
	}
	return false;
}

/* what an errno means for this attribute, or NULL */
static const char *attr_hint(const struct fairqctl_control *ctl,
			     const char *attr, const char *val, int e,
			     char *buf, size_t len)
{
	bool power = strcmp(attr, "power") == 0;
	bool backing = strcmp(attr, "backing") == 0;

	if (ctl->failed_at_open) {
		if (e == ENOENT)
			return "unknown attribute";
		if (e == EACCES || e == EPERM)
			return "read-only attribute";
		return NULL;
	}
	switch (e) {
	case EBUSY:
		if (power && strcmp(val, "1") == 0 && ctl->backing) {
			snprintf(buf, len, "backing device %s is in use",
				 ctl->backing);
			return buf;
		}
		if (power && strcmp(val, "1") == 0)
			return "backing device is in use";
		if (power)
			return "device is busy (open or mounted)";
		if (backing || strcmp(attr, "max_flows") == 0)
			return "cannot be changed while powered on";
		return NULL;
	case ELOOP:
		return power ? "backing device is this very device" : NULL;
	case EACCES:
		return power ? "backing device is read-only" : NULL;
	case EOPNOTSUPP:
		return power ? "zoned backing devices are not supported" : NULL;
	case EEXIST:
		if (!power)
			return NULL;
		snprintf(buf, len, "a block device called %s already exists",
			 ctl->name);
		return buf;
	case ENOENT:
		if (!backing)
			return NULL;
		snprintf(buf, len, "no such device '%s'", val);
		return buf;
	case ENOTBLK:
		snprintf(buf, len, "'%s' is not a block device", val);
		return buf;
	case ERANGE:
		snprintf(buf, len, "value '%s' out of range", val);
		return buf;
	case EINVAL:
		if (power && strcmp(val, "1") == 0)
			return "backing is not set";
		snprintf(buf, len, "invalid value '%s'", val);
		return buf;
	}
	return NULL;
}

/* "fairqctl: fairq0: policy: Invalid argument (invalid value 'x')" */
static void attr_error(const struct fairqctl_control *ctl, const char *attr,
		       const char *val, int e)
{
	char buf[PATH_MAX + 64];
	const char *hint = attr_hint(ctl, attr, val, e, buf, sizeof(buf));

	if (hint)
		warnx("%s: %s: %s (%s)", ctl->name, attr, strerror(e), hint);
	else
		warnx("%s: %s: %s", ctl->name, attr, strerror(e));
}

/* write, and on failure name the device, the attribute and the error */
static int set_attr(struct fairqctl_control *ctl, enum attr_root root,
		    const char *attr, const char *val)
{
	int rc = write_attr(ctl, root, attr, val);

	if (rc)
		attr_error(ctl, attr, val, -rc);
	return rc;
}

/* "KEY=VALUE" (checked by check_setting()) → write KEY */
static int set_kv(struct fairqctl_control *ctl, enum attr_root root,
		  const char *kv)
{
	char *key = strdup(kv), *val;
	int rc;

	if (!key) {
		warn("%s", ctl->name);
		return -ENOMEM;
	}
	val = strchr(key, '=');
	*val++ = '\0';
	if (root == ROOT_SYSFS && is_configfs_only(key))
		root = ROOT_CONFIGFS;
	rc = set_attr(ctl, root, key, val);
	free(key);
	return rc;
}

static bool entry_exists(const struct fairqctl_control *ctl)
{
	char path[PATH_MAX];
	struct stat st;

	return entry_path(ctl, path, sizeof(path)) == 0 &&
	       stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int need_entry(const struct fairqctl_control *ctl)
{
	if (entry_exists(ctl))
		return 0;
	warnx("%s: no such fairq device", ctl->name);
	return -ENOENT;
}

/* 1 powered, 0 not, -errno (reported) if power cannot be read */
static int powered(struct fairqctl_control *ctl)
{
	char *val;
	int rc = read_attr(ctl, ROOT_CONFIGFS, "power", &val);

	if (rc) {
		warnx("%s: power: %s", ctl->name, strerror(-rc));
		return rc;
	}
	rc = strcmp(val, "1") == 0;
	free(val);
	return rc;
}

static int remove_entry(struct fairqctl_control *ctl)
{
	char path[PATH_MAX];
	int rc = entry_path(ctl, path, sizeof(path));

	if (!rc && rmdir(path) < 0)
		rc = -errno;
	if (rc)
		warnx("%s: rmdir %s: %s", ctl->name, path, strerror(-rc));
	return rc;
}

/* mkdir CONFIGFS/NAME; without --name, the first free fairqN */
static int make_entry(struct fairqctl_control *ctl)
{
	char path[PATH_MAX];
	int i;

	if (ctl->opt_name) {
		if (entry_path(ctl, path, sizeof(path)) == 0 &&
		    mkdir(path, 0755) == 0)
			return 0;
		if (errno == EEXIST)
			warnx("%s: already exists", ctl->name);
		else
			warn("%s: mkdir %s", ctl->name, path);
		return -1;
	}
	for (i = 0; i < AUTO_NAME_MAX; i++) {
		snprintf(ctl->name, sizeof(ctl->name), "fairq%d", i);
		if (entry_path(ctl, path, sizeof(path)) == 0 &&
		    mkdir(path, 0755) == 0)
			return 0;
		if (errno != EEXIST) {
			warn("%s: mkdir %s", ctl->name, path);
			return -1;
		}
	}
	warnx("no free name fairq0..fairq%d", AUTO_NAME_MAX - 1);
	return -1;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* power=1 made the disk; devtmpfs or udev makes the node */
static int wait_for_dev(const struct fairqctl_control *ctl)
{
	char path[PATH_MAX];
	struct stat st;
	long waited;

	snprintf(path, sizeof(path), "/dev/%s", ctl->name);
	for (waited = 0; waited <= DEV_WAIT_MS; waited += DEV_POLL_MS) {
		if (stat(path, &st) == 0 && S_ISBLK(st.st_mode))
			return 0;
		sleep_ms(DEV_POLL_MS);
	}
	warnx("%s: %s did not appear within %d s", ctl->name, path,
	      DEV_WAIT_MS / 1000);
	return -ETIMEDOUT;
}

/*
 * create: mkdir, backing, policy, each --set, power=1, wait for /dev/NAME.
 * Removing the entry undoes every attribute written before power=1.
 */
static int cmd_create(struct fairqctl_control *ctl)
{
	const char *src = ctl->args[0];
	char backing[PATH_MAX];
	struct stat st;
	int i;

	if (stat(src, &st) < 0) {
		warn("%s", src);
		return EXIT_FAILURE;
	}
	if (!S_ISBLK(st.st_mode)) {
		warnx("%s: not a block device", src);
		return EXIT_FAILURE;
	}
	if (!realpath(src, backing)) {
		warn("%s", src);
		return EXIT_FAILURE;
	}
	ctl->backing = backing;

	if (make_entry(ctl))
		return EXIT_FAILURE;
	if (set_attr(ctl, ROOT_CONFIGFS, "backing", backing))
		goto undo_entry;
	if (ctl->policy && set_attr(ctl, ROOT_CONFIGFS, "policy", ctl->policy))
		goto undo_entry;
	for (i = 0; i < ctl->nsets; i++) {
		if (set_kv(ctl, ROOT_CONFIGFS, ctl->sets[i]))
			goto undo_entry;
	}
	if (set_attr(ctl, ROOT_CONFIGFS, "power", "1"))
		goto undo_entry;
	if (wait_for_dev(ctl))
		goto undo_power;

	printf("/dev/%s\n", ctl->name);
	return EXIT_SUCCESS;

undo_power:
	set_attr(ctl, ROOT_CONFIGFS, "power", "0");
undo_entry:
	remove_entry(ctl);
	return EXIT_FAILURE;
}

static int not_hidden(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

static int cmd_list(struct fairqctl_control *ctl)
{
	static const char *const cols[] = { "backing", "power", "policy" };
	struct dirent **ents;
	int i, n, e, rc = EXIT_SUCCESS;
	size_t c;
	char *val;

	n = scandir(ctl->configfs, &ents, not_hidden, alphasort);
	if (n < 0) {
		warn("%s", ctl->configfs);
		return EXIT_FAILURE;
	}
	for (i = 0; i < n; i++) {
		bool ok = valid_name(ents[i]->d_name);

		if (ok)
			memcpy(ctl->name, ents[i]->d_name, strlen(ents[i]->d_name) + 1);
		free(ents[i]);
		if (!ok || !entry_exists(ctl))
			continue;
		printf("%s", ctl->name);
		for (c = 0; c < ARRAY_SIZE(cols); c++) {
			e = read_attr(ctl, ROOT_CONFIGFS, cols[c], &val);
			if (e) {
				warnx("%s: %s: %s", ctl->name, cols[c], strerror(-e));
				rc = EXIT_FAILURE;
				printf(" ?");
				continue;
			}
			printf(" %s", *val ? val : "-");
			free(val);
		}
		putchar('\n');
	}
	free(ents);
	return rc;
}

static int cmd_show(struct fairqctl_control *ctl)
{
	char dir[PATH_MAX], path[PATH_MAX], *val, *p;
	struct dirent **ents;
	struct stat st;
	int i, n, e, rc = EXIT_SUCCESS;

	if (need_entry(ctl) || entry_path(ctl, dir, sizeof(dir)))
		return EXIT_FAILURE;
	n = scandir(dir, &ents, not_hidden, alphasort);
	if (n < 0) {
		warn("%s: %s", ctl->name, dir);
		return EXIT_FAILURE;
	}
	for (i = 0; i < n; i++) {
		const char *attr = ents[i]->d_name;

		/* attributes only: configfs entries may grow subdirectories */
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, attr) >=
		    sizeof(path) || stat(path, &st) < 0 || !S_ISREG(st.st_mode))
			goto next;
		e = read_attr(ctl, ROOT_CONFIGFS, attr, &val);
		if (e) {
			warnx("%s: %s: %s", ctl->name, attr, strerror(-e));
			rc = EXIT_FAILURE;
			goto next;
		}
		for (p = val; *p; p++) {	/* one line per attribute */
			if (*p == '\n')
				*p = ' ';
		}
		printf("%s %s\n", attr, val);
		free(val);
next:
		free(ents[i]);
	}
	free(ents);
	return rc;
}

static int cmd_set(struct fairqctl_control *ctl)
{
	enum attr_root root;
	int i, on;

	if (need_entry(ctl))
		return EXIT_FAILURE;
	on = powered(ctl);
	if (on < 0)
		return EXIT_FAILURE;
	root = on ? ROOT_SYSFS : ROOT_CONFIGFS;
	for (i = 1; i < ctl->nargs; i++) {
		if (set_kv(ctl, root, ctl->args[i]))
			return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}

/*
 * JSON for the stats format: "key value" totals, then "flow k=v k=v ..."
 * lines.  Decimal integers become JSON numbers, anything else a string.
 */
static bool json_number(const char *s, size_t n)
{
	size_t i = 0;

	if (n && s[0] == '-')
		i++;
	if (i == n || (s[i] == '0' && n - i > 1))
		return false;
	for (; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
	}
	return true;
}

static void json_string(const char *s, size_t n)
{
	size_t i;

	putchar('"');
	for (i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void json_pair(const char *key, size_t klen, const char *val, size_t vlen)
{
	json_string(key, klen);
	fputs(": ", stdout);
	if (json_number(val, vlen))
		fwrite(val, 1, vlen, stdout);
	else
		json_string(val, vlen);
}

static bool is_flow_line(const char *line, size_t len)
{
	return (len == 4 || (len > 4 && line[4] == ' ')) &&
	       strncmp(line, "flow", 4) == 0;
}

/* {"k": v, ...} from the fields after "flow" */
static void json_flow(const char *s, size_t len)
{
	const char *end = s + len, *f, *eq;
	bool first = true;

	putchar('{');
	while (s < end) {
		while (s < end && *s == ' ')
			s++;
		if (s == end)
			break;
		f = s;
		while (s < end && *s != ' ')
			s++;
		eq = memchr(f, '=', s - f);
		if (!first)
			fputs(", ", stdout);
		first = false;
		if (eq)
			json_pair(f, eq - f, eq + 1, s - eq - 1);
		else
			json_pair(f, s - f, "", 0);
	}
	putchar('}');
}

/* "key value" → "key": value */
static void json_total(const char *line, size_t len)
{
	const char *sp = memchr(line, ' ', len), *end = line + len, *v;

	if (!sp) {
		json_pair(line, len, "", 0);
		return;
	}
	for (v = sp; v < end && *v == ' '; v++)
		;
	json_pair(line, sp - line, v, end - v);
}

static void stats_json(const char *text)
{
	const char *line, *nl;
	size_t len;
	int pass, n;

	/* pass 0: totals; pass 1: flows (the format puts totals first) */
	for (pass = 0; pass < 2; pass++) {
		fputs(pass ? "  \"flows\": [" : "{\n  \"totals\": {", stdout);
		n = 0;
		for (line = text; *line; line = nl + (*nl != '\0')) {
			nl = strchrnul(line, '\n');
			len = nl - line;
			if (len == 0 || is_flow_line(line, len) != pass)
				continue;
			fputs(n++ ? ",\n    " : "\n    ", stdout);
			if (pass)
				json_flow(line + 4, len - 4);
			else
				json_total(line, len);
		}
		if (pass)
			fputs(n ? "\n  ]\n}\n" : "]\n}\n", stdout);
		else
			fputs(n ? "\n  },\n" : "},\n", stdout);
	}
}

static int cmd_stats(struct fairqctl_control *ctl)
{
	char *text;
	int rc;

	if (need_entry(ctl))
		return EXIT_FAILURE;
	rc = read_attr(ctl, ROOT_SYSFS, "stats", &text);
	if (rc == -ENOENT) {
		warnx("%s: not powered on (no statistics)", ctl->name);
		return EXIT_FAILURE;
	}
	if (rc) {
		warnx("%s: stats: %s", ctl->name, strerror(-rc));
		return EXIT_FAILURE;
	}
	if (ctl->json)
		stats_json(text);
	else if (*text)
		printf("%s\n", text);
	free(text);
	return EXIT_SUCCESS;
}

static int cmd_destroy(struct fairqctl_control *ctl)
{
	int on, rc;

	if (need_entry(ctl))
		return EXIT_FAILURE;
	on = powered(ctl);
	if (on < 0)
		return EXIT_FAILURE;
	if (on) {
		rc = write_attr(ctl, ROOT_CONFIGFS, "power", "0");
		if (rc == -EBUSY) {
			warnx("%s: device is busy (open or mounted)", ctl->name);
			return EXIT_FAILURE;
		}
		if (rc) {
			attr_error(ctl, "power", "0", -rc);
			return EXIT_FAILURE;
		}
	}
	return remove_entry(ctl) ? EXIT_FAILURE : EXIT_SUCCESS;
}

static const char *env_or(const char *var, const char *def)
{
	const char *v = getenv(var);

	return v && *v ? v : def;
}

/* every command needs CONFIGFS: say why it is missing */
static void check_module(const struct fairqctl_control *ctl)
{
	struct stat st;
	int e = 0;

	if (stat(ctl->configfs, &st) < 0)
		e = errno;
	else if (S_ISDIR(st.st_mode))
		return;
	errx(EXIT_FAILURE, "fairq module not loaded (modprobe fairq): %s: %s",
	     ctl->configfs, e ? strerror(e) : "not a directory");
}

/* options and argument count against the command's table entry */
static void check_options(const struct fairqctl_control *ctl, unsigned int seen)
{
	static const char *const names[] = { "name", "policy", "set", "json" };
	const struct fairqctl_command *cmd = ctl->command;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		if ((seen & (1u << i)) && !(cmd->opts & (1u << i)))
			usage_error("%s: option --%s is not valid here",
				    cmd->name, names[i]);
	}
	if (ctl->nargs < cmd->min_args)
		usage_error("%s: missing argument (%s %s %s)", cmd->name,
			    program_invocation_short_name, cmd->name,
			    cmd->synopsis);
	if (cmd->max_args >= 0 && ctl->nargs > cmd->max_args)
		usage_error("%s: unexpected number of arguments", cmd->name);
}

static void check_arguments(struct fairqctl_control *ctl)
{
	int i;

	if (ctl->command->needs_name)
		set_name(ctl, ctl->args[0]);
	if (ctl->opt_name)
		set_name(ctl, ctl->opt_name);
	if (ctl->policy && !*ctl->policy)
		usage_error("--policy: empty value");
	for (i = 0; i < ctl->nsets; i++) {
		check_setting(ctl->sets[i]);
		if (!strncmp(ctl->sets[i], "power=", 6) ||
		    !strncmp(ctl->sets[i], "backing=", 8))
			usage_error("'%s': create sets backing and power itself",
				    ctl->sets[i]);
	}
	if (ctl->command->handler == cmd_set) {
		for (i = 1; i < ctl->nargs; i++)
			check_setting(ctl->args[i]);
	}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "name",    required_argument, NULL, 'n' },
		{ "policy",  required_argument, NULL, 'p' },
		{ "set",     required_argument, NULL, 's' },
		{ "json",    no_argument,       NULL, 'j' },
		{ "help",    no_argument,       NULL, 'h' },
		{ "version", no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct fairqctl_control ctl = {
		.configfs = env_or("FAIRQ_CONFIGFS", DEFAULT_CONFIGFS),
		.sysfs = env_or("FAIRQ_SYSFS", DEFAULT_SYSFS),
	};
	unsigned int seen = 0;
	int c;

	ctl.sets = calloc(argc, sizeof(*ctl.sets));
	if (!ctl.sets)
		err(EXIT_FAILURE, "out of memory");

	while ((c = getopt_long(argc, argv, "n:p:s:jhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			ctl.opt_name = optarg;
			seen |= OPT_NAME;
			break;
		case 'p':
			ctl.policy = optarg;
			seen |= OPT_POLICY;
			break;
		case 's':
			ctl.sets[ctl.nsets++] = optarg;
			seen |= OPT_SET;
			break;
		case 'j':
			ctl.json = true;
			seen |= OPT_JSON;
			break;
		case 'h':
			usage();
		case 'V':
			printf("%s from fairq %s\n", program_invocation_short_name,
			       FAIRQ_VERSION);
			return EXIT_SUCCESS;
		default:
			fprintf(stderr, "Try '%s --help' for more information.\n",
				program_invocation_short_name);
			return EXIT_USAGE;
		}
	}

	if (optind == argc)
		usage_error("no command specified");
	ctl.command = name_to_command(argv[optind]);
	if (!ctl.command)
		usage_error("'%s' is not a fairqctl command", argv[optind]);
	ctl.args = argv + optind + 1;
	ctl.nargs = argc - optind - 1;
	check_options(&ctl, seen);
	check_arguments(&ctl);

	check_module(&ctl);
	return ctl.command->handler(&ctl);
}
