// SPDX-License-Identifier: GPL-2.0
/*
 * fairqctl - create, inspect, tune and destroy fairq devices.
 *
 * A thin front end over the kernel interface of fairq(4) (man/fairq.4):
 * configfs entries under /sys/kernel/config/fairq/NAME (one per device)
 * and the run-time directory /sys/block/NAME/fairq/ while it is powered.
 * Laid out like util-linux sys-utils/blkzone.c: one command table, one
 * control struct handed to every handler, getopt_long() over a static
 * longopts[], and every attribute read or written through read_attr()
 * and write_attr() (attr.c).  apply.c, top.c, weights.c and json.c hold
 * the larger commands, fairqtab.c the config file, cgroup.c the cgroup
 * weights.
 *
 * Exit status: 0 success, 1 the kernel or the system refused, 2 usage,
 * 3 (apply) everything applied except lines whose backing device or
 * cgroup is not there.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fairqctl.h"

#ifndef FAIRQ_VERSION
#define FAIRQ_VERSION "0.1"
#endif

enum {
	AUTO_NAME_MAX	= 1024,		/* fairq0 .. fairq1023 */
};

/* options, as a mask of what each command accepts; see check_options() */
enum {
	OPT_NAME	= 1 << 0,
	OPT_POLICY	= 1 << 1,
	OPT_SET		= 1 << 2,
	OPT_JSON	= 1 << 3,
	OPT_DRY_RUN	= 1 << 4,
	OPT_DOWN	= 1 << 5,
	OPT_PRUNE	= 1 << 6,
	OPT_ONCE	= 1 << 7,
	OPT_INTERVAL	= 1 << 8,
	OPT_ROWS	= 1 << 9,
	OPT_FOLLOW	= 1 << 10,
};

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

static int cmd_create(struct fairqctl_control *ctl);
static int cmd_list(struct fairqctl_control *ctl);
static int cmd_show(struct fairqctl_control *ctl);
static int cmd_set(struct fairqctl_control *ctl);
static int cmd_get(struct fairqctl_control *ctl);
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
		.synopsis = "[--json]",
		.help = "one line per device: NAME BACKING POWER POLICY",
		.min_args = 0, .max_args = 0,
		.opts = OPT_JSON,
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
		.synopsis = "NAME KEY=VALUE... | NAME cgroup-weight PATH=W",
		.help = "change attributes (sysfs while powered, configfs otherwise);\n"
			"stops at the first refused value; W 1..1000, 0 removes",
		.min_args = 2, .max_args = -1,
		.needs_name = true,
	}, {
		.name = "get",
		.handler = cmd_get,
		.synopsis = "NAME KEY | NAME cgroup-weight [--json]",
		.help = "print one attribute; cgroup-weight: PATH=W per line",
		.min_args = 2, .max_args = 2,
		.opts = OPT_JSON,
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
		.name = "top",
		.handler = cmd_top,
		.synopsis = "NAME [--once] [--interval S] [--rows N]",
		.help = "live view of the busiest flows and the device totals",
		.min_args = 1, .max_args = 1,
		.opts = OPT_ONCE | OPT_INTERVAL | OPT_ROWS,
		.needs_name = true,
	}, {
		.name = "apply",
		.handler = cmd_apply,
		.synopsis = "[FILE] [--dry-run] [--down] [--prune]",
		.help = "make the devices match FILE (default $FAIRQTAB or\n"
			DEFAULT_FAIRQTAB "); --down tears its devices down",
		.min_args = 0, .max_args = 1,
		.opts = OPT_DRY_RUN | OPT_DOWN | OPT_PRUNE,
	}, {
		.name = "weights",
		.handler = cmd_weights,
		.synopsis = "sync [NAME] [--follow [--interval S]] [--dry-run]",
		.help = "cgroup weights follow each cgroup's io.weight (systemd's\n"
			"IOWeight=), unless set by hand; every powered device with\n"
			"classify=cgroup, or NAME; --follow keeps doing it",
		.min_args = 1, .max_args = 2,
		.opts = OPT_FOLLOW | OPT_INTERVAL | OPT_DRY_RUN,
	}, {
		.name = "destroy",
		.handler = cmd_destroy,
		.synopsis = "NAME",
		.help = "power NAME off and remove it",
		.min_args = 1, .max_args = 1,
		.needs_name = true,
	},
};

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
	fputs(" -j, --json             stats, list, get: one JSON object (fairqctl(8), JSON OUTPUT)\n", out);
	fputs("     --dry-run          apply, weights sync: print what would be done, change nothing\n", out);
	fputs("     --down             apply: power off and remove the devices in FILE\n", out);
	fputs("     --prune            apply: also remove devices that FILE does not name\n", out);
	fputs("     --once             top: print one screen and exit\n", out);
	fputs(" -r, --rows N           top: show the N busiest flows (default 16)\n", out);
	fputs(" -i, --interval S       top: seconds between screens (default 2);\n", out);
	fputs("                        weights sync --follow: between passes (default 2)\n", out);
	fputs(" -f, --follow           weights sync: keep following until SIGTERM\n", out);
	fputs(" -h, --help             display this help\n", out);
	fputs(" -V, --version          display version\n", out);

	fputs("\nEnvironment:\n", out);
	fputs(" FAIRQTAB               apply: the file (default " DEFAULT_FAIRQTAB ")\n", out);
	fputs(" FAIRQ_CONFIGFS         configfs root (default " DEFAULT_CONFIGFS ")\n", out);
	fputs(" FAIRQ_SYSFS            sysfs block root (default " DEFAULT_SYSFS ")\n", out);
	fputs(" FAIRQ_CGROUP           cgroup v2 root (default " DEFAULT_CGROUP ")\n", out);
	fputs(" FAIRQ_DEVDISK          UUID=/LABEL= links (default " DEFAULT_DEVDISK ")\n", out);
	fputs(" FAIRQ_BLKID            blkid for UUID=/LABEL= (default blkid; empty: none)\n", out);
	fputs(" FAIRQ_PROC             proc root for process names (default " DEFAULT_PROC ")\n", out);
	fputs(" FAIRQ_RUNDIR           weights sync's state (default " DEFAULT_RUNDIR ")\n", out);

	fputs("\nExit status: 0 success, 1 the kernel or the system refused, 2 usage error,\n", out);
	fputs("3 apply: done, except lines whose backing device or cgroup is missing.\n", out);
	fputs("The attributes, their ranges and defaults, and which tunables are for\n", out);
	fputs("users: fairq(4). The commands: fairqctl(8). The boot-time file: fairqtab(5).\n", out);
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

static bool is_cgroup_weight(const char *arg)
{
	return strcmp(arg, "cgroup-weight") == 0;
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

/* mkdir CONFIGFS/NAME; without --name, the first free fairqN */
static int make_entry(struct fairqctl_control *ctl)
{
	char path[PATH_MAX];
	int i;

	if (ctl->opt_name)
		return make_named_entry(ctl) ? -1 : 0;
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

/*
 * create: mkdir, backing, policy, each --set, power=1, wait for /dev/NAME.
 * Removing the entry undoes every attribute written before power=1.
 */
static int cmd_create(struct fairqctl_control *ctl)
{
	const char *src = ctl->args[0];
	char backing[PATH_MAX];
	int i, rc;

	rc = block_device(src, backing, sizeof(backing));
	if (rc == -ENOTBLK) {
		warnx("%s: not a block device", src);
		return EXIT_FAILURE;
	}
	if (rc) {
		warnx("%s: %s", src, strerror(-rc));
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

static int cmd_list(struct fairqctl_control *ctl)
{
	static const char *const cols[] = { "backing", "power", "policy" };
	int i, n, e, rc = EXIT_SUCCESS;
	char **names, *val;
	size_t c;

	n = list_entries(ctl, &names);
	if (n < 0)
		return EXIT_FAILURE;
	if (ctl->json) {
		list_json(ctl, names, n);
		free_names(names, n);
		return rc;
	}
	for (i = 0; i < n; i++) {
		snprintf(ctl->name, sizeof(ctl->name), "%s", names[i]);
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
	free_names(names, n);
	return rc;
}

static int not_hidden(const struct dirent *d)
{
	return d->d_name[0] != '.';
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

/* KEY=VALUE... with "cgroup-weight PATH=W" pairs among them, in order */
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
		if (is_cgroup_weight(ctl->args[i])) {
			if (cmd_cgroup_weight_set(ctl, ctl->args[++i]))
				return EXIT_FAILURE;
		} else if (set_kv(ctl, root, ctl->args[i])) {
			return EXIT_FAILURE;
		}
	}
	return EXIT_SUCCESS;
}

static int cmd_get(struct fairqctl_control *ctl)
{
	const char *key = ctl->args[1];
	enum attr_root root = ROOT_CONFIGFS;
	char *val;
	int rc;

	if (need_entry(ctl))
		return EXIT_FAILURE;
	if (is_cgroup_weight(key))
		return cmd_cgroup_weight_get(ctl) ? EXIT_FAILURE : EXIT_SUCCESS;
	/* stats lives in sysfs only; everything else in configfs */
	if (strcmp(key, "stats") == 0)
		root = ROOT_SYSFS;
	rc = read_attr(ctl, root, key, &val);
	if (rc == -ENOENT && root == ROOT_SYSFS) {
		warnx("%s: not powered on (no statistics)", ctl->name);
		return EXIT_FAILURE;
	}
	if (rc) {
		ctl->failed_at_open = rc == -ENOENT;
		attr_error(ctl, key, "", -rc);
		return EXIT_FAILURE;
	}
	if (ctl->json)
		get_json(ctl, key, val);
	else
		printf("%s\n", val);
	free(val);
	return EXIT_SUCCESS;
}

static int cmd_stats(struct fairqctl_control *ctl)
{
	struct stats st;

	if (need_entry(ctl) || stats_read(ctl, &st))
		return EXIT_FAILURE;
	if (ctl->json)
		stats_json(ctl, &st);
	else
		fputs(st.text, stdout);
	stats_free(&st);
	return EXIT_SUCCESS;
}

static int cmd_destroy(struct fairqctl_control *ctl)
{
	int on;

	if (need_entry(ctl))
		return EXIT_FAILURE;
	on = powered(ctl);
	if (on < 0)
		return EXIT_FAILURE;
	if (on && power_off(ctl))
		return EXIT_FAILURE;
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

	/*
	 * a dry run or a --down on a machine without the module still
	 * works; weights sync --follow waits for the module
	 */
	if (ctl->command->handler == cmd_apply ||
	    (ctl->command->handler == cmd_weights && ctl->follow))
		return;
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
	static const char *const names[] = {
		"name", "policy", "set", "json", "dry-run", "down", "prune",
		"once", "interval", "rows", "follow",
	};
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

static void check_set_args(struct fairqctl_control *ctl)
{
	int i;

	for (i = 1; i < ctl->nargs; i++) {
		if (!is_cgroup_weight(ctl->args[i])) {
			check_setting(ctl->args[i]);
			continue;
		}
		if (++i == ctl->nargs || !strchr(ctl->args[i], '='))
			usage_error("cgroup-weight: expected PATH=WEIGHT after it");
	}
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
	if (ctl->command->handler == cmd_set)
		check_set_args(ctl);
	if (ctl->command->handler == cmd_weights) {
		if (strcmp(ctl->args[0], "sync") != 0)
			usage_error("weights: '%s': the action is sync (weights sync [NAME])",
				    ctl->args[0]);
		if (ctl->nargs > 1)
			set_name(ctl, ctl->args[1]);
		if (ctl->interval_set && !ctl->follow)
			usage_error("weights sync: --interval goes with --follow");
		if (ctl->follow && ctl->dry_run)
			usage_error("weights sync: --follow and --dry-run: pick one");
	}
	if (ctl->dry_run && ctl->down)
		usage_error("apply: --dry-run and --down: pick one");
	if (ctl->prune && ctl->down)
		usage_error("apply: --prune and --down: pick one");
}

static double parse_interval(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0.1 && v <= 3600))
		usage_error("--interval '%s': want 0.1..3600 seconds", s);
	return v;
}

static int parse_rows(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > 1000)
		usage_error("--rows '%s': want 1..1000 rows", s);
	return (int)v;
}

int main(int argc, char **argv)
{
	enum { OPT_L_DRY = 256, OPT_L_DOWN, OPT_L_PRUNE, OPT_L_ONCE };
	static const struct option longopts[] = {
		{ "name",     required_argument, NULL, 'n' },
		{ "rows",     required_argument, NULL, 'r' },
		{ "policy",   required_argument, NULL, 'p' },
		{ "set",      required_argument, NULL, 's' },
		{ "json",     no_argument,       NULL, 'j' },
		{ "dry-run",  no_argument,       NULL, OPT_L_DRY },
		{ "down",     no_argument,       NULL, OPT_L_DOWN },
		{ "prune",    no_argument,       NULL, OPT_L_PRUNE },
		{ "once",     no_argument,       NULL, OPT_L_ONCE },
		{ "interval", required_argument, NULL, 'i' },
		{ "follow",   no_argument,       NULL, 'f' },
		{ "help",     no_argument,       NULL, 'h' },
		{ "version",  no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct fairqctl_control ctl = {
		.configfs = env_or("FAIRQ_CONFIGFS", DEFAULT_CONFIGFS),
		.sysfs = env_or("FAIRQ_SYSFS", DEFAULT_SYSFS),
		.cgroupfs = env_or("FAIRQ_CGROUP", DEFAULT_CGROUP),
		.devdisk = env_or("FAIRQ_DEVDISK", DEFAULT_DEVDISK),
		.proc = env_or("FAIRQ_PROC", DEFAULT_PROC),
		.blkid = getenv("FAIRQ_BLKID") ? getenv("FAIRQ_BLKID") : "blkid",
		.rundir = env_or("FAIRQ_RUNDIR", DEFAULT_RUNDIR),
		.interval = 2.0,
		.top_rows = 16,
	};
	unsigned int seen = 0;
	int c;

	ctl.sets = calloc(argc, sizeof(*ctl.sets));
	if (!ctl.sets)
		err(EXIT_FAILURE, "out of memory");

	while ((c = getopt_long(argc, argv, "n:r:p:s:ji:fhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			ctl.opt_name = optarg;
			seen |= OPT_NAME;
			break;
		case 'r':
			ctl.top_rows = parse_rows(optarg);
			seen |= OPT_ROWS;
			break;
		case 'f':
			ctl.follow = true;
			seen |= OPT_FOLLOW;
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
		case OPT_L_DRY:
			ctl.dry_run = true;
			seen |= OPT_DRY_RUN;
			break;
		case OPT_L_DOWN:
			ctl.down = true;
			seen |= OPT_DOWN;
			break;
		case OPT_L_PRUNE:
			ctl.prune = true;
			seen |= OPT_PRUNE;
			break;
		case OPT_L_ONCE:
			ctl.once = true;
			seen |= OPT_ONCE;
			break;
		case 'i':
			ctl.interval = parse_interval(optarg);
			ctl.interval_set = true;
			seen |= OPT_INTERVAL;
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
