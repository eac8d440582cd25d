/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fairqctl - what its parts share: the control struct every command gets,
 * kernel access (attr.c), stats parsing (stats.c), cgroup ids (cgroup.c),
 * fairqtab parsing (fairqtab.c) and the commands of apply.c, top.c,
 * weights.c and json.c.
 */
#ifndef FAIRQCTL_H
#define FAIRQCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

enum {
	EXIT_USAGE	= 2,
	EXIT_MISSING	= 3,		/* apply: some backing/cgroup not there */
	NAME_MAX_LEN	= 31,		/* configfs entry name, fairq(4) */
	WEIGHT_MAX	= 1000,		/* cgroup-weight, fairq(4) */
};

#define DEFAULT_CONFIGFS	"/sys/kernel/config/fairq"
#define DEFAULT_SYSFS		"/sys/block"
#define DEFAULT_CGROUP		"/sys/fs/cgroup"
#define DEFAULT_FAIRQTAB	"/etc/fairq/fairqtab"
#define DEFAULT_DEVDISK		"/dev/disk"
#define DEFAULT_PROC		"/proc"
#define DEFAULT_RUNDIR		"/run/fairq"

/* where an attribute lives */
enum attr_root {
	ROOT_CONFIGFS,		/* CONFIGFS/NAME/attr */
	ROOT_SYSFS,		/* SYSFS/NAME/fairq/attr, only while powered */
};

struct fairqctl_command;

struct fairqctl_control {
	const struct fairqctl_command *command;
	const char *configfs;		/* FAIRQ_CONFIGFS */
	const char *sysfs;		/* FAIRQ_SYSFS */
	const char *cgroupfs;		/* FAIRQ_CGROUP */
	const char *devdisk;		/* FAIRQ_DEVDISK */
	const char *proc;		/* FAIRQ_PROC */
	const char *blkid;		/* FAIRQ_BLKID; "" = do not run blkid */
	const char *rundir;		/* FAIRQ_RUNDIR: weights sync's state */

	char name[NAME_MAX_LEN + 1];	/* the device the command is about */
	char **args;			/* positional arguments */
	int nargs;

	const char *opt_name;		/* create --name */
	const char *policy;		/* create --policy */
	const char *backing;		/* create: BACKING, resolved */
	char **sets;			/* create --set, in order */
	int nsets;
	bool json;			/* stats, list, get --json */
	bool dry_run;			/* apply --dry-run */
	bool down;			/* apply --down */
	bool prune;			/* apply --prune */
	bool once;			/* top --once */
	bool follow;			/* weights sync --follow */
	double interval;		/* top, weights sync --interval [s] */
	bool interval_set;		/* --interval given */
	int top_rows;			/* top -r */

	/* prefix of error messages ("FILE:LINE"), or NULL */
	const char *where;
	/* the last failed write_attr(): did open() or write() fail */
	bool failed_at_open;
};

/* attr.c: configfs and sysfs; 0 or -errno, nothing printed unless said */
bool valid_name(const char *s);
bool valid_attr(const char *s, size_t n);
int write_attr(struct fairqctl_control *ctl, enum attr_root root,
	       const char *attr, const char *val);
int read_attr(struct fairqctl_control *ctl, enum attr_root root,
	      const char *attr, char **out);
bool is_configfs_only(const char *attr);
void attr_error(const struct fairqctl_control *ctl, const char *attr,
		const char *val, int e);
int set_attr(struct fairqctl_control *ctl, enum attr_root root,
	     const char *attr, const char *val);	/* reports */
bool entry_exists(const struct fairqctl_control *ctl);
int need_entry(const struct fairqctl_control *ctl);	/* reports */
int powered(struct fairqctl_control *ctl);		/* reports */
int make_named_entry(struct fairqctl_control *ctl);	/* reports */
int remove_entry(struct fairqctl_control *ctl);		/* reports */
int power_off(struct fairqctl_control *ctl);		/* reports */
int wait_for_dev(const struct fairqctl_control *ctl);	/* reports */
int block_device(const char *src, char *out, size_t len); /* realpath */
int entry_path(const struct fairqctl_control *ctl, char *buf, size_t len);
void sleep_ms(long ms);
void ctl_warnx(const struct fairqctl_control *ctl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int list_entries(const struct fairqctl_control *ctl, char ***names);
void free_names(char **names, int n);

/* cgroup.c: cgroup v2 ids (the inode number) and weights */
struct cgroup_weight {
	uint64_t id;
	unsigned int weight;
};
int cgroup_path_id(const struct fairqctl_control *ctl, const char *path,
		   uint64_t *id, char *abs, size_t len);
/* path of cgroup @id under the cgroup root, or NULL; free() it */
char *cgroup_id_path(const struct fairqctl_control *ctl, uint64_t id);
int parse_weight(const char *s, unsigned int *w);
int read_cgroup_weights(struct fairqctl_control *ctl,
			struct cgroup_weight **out, int *n);
int write_cgroup_weight(struct fairqctl_control *ctl, uint64_t id,
			unsigned int weight, const char *shown); /* reports */
int cmd_cgroup_weight_set(struct fairqctl_control *ctl, const char *pw);
int cmd_cgroup_weight_get(struct fairqctl_control *ctl);

/* stats.c: the stats file as "key value" totals and "flow k=v" lines */
struct stats_field {
	char *key;
	char *val;
};
struct stats_flow {
	struct stats_field *f;
	int nf;
};
struct stats {
	struct stats_field *t;		/* totals, in file order */
	int nt;
	struct stats_flow *flows;	/* flows, in file order */
	int nflows;
	char *text;			/* the file as read */
	char *buf;			/* a copy the fields point into */
};
int stats_parse(char *text, struct stats *st);	/* takes text; stats_free() */
void stats_free(struct stats *st);
const char *stats_total(const struct stats *st, const char *key);
const char *stats_flow_get(const struct stats_flow *fl, const char *key);
bool stats_u64(const char *s, uint64_t *v);
int stats_read(struct fairqctl_control *ctl, struct stats *st); /* reports */
/* flow key as a name: process, cgroup path, user; buf or NULL */
const char *flow_key_name(const struct fairqctl_control *ctl,
			  const char *classify, const char *policy,
			  uint64_t key, char *buf, size_t len);

/* fairqtab.c: the config file of fairqtab(5) */
struct tab_setting {
	const char *key;		/* a static attribute name */
	char *val;
};
struct tab_weight {
	char *path;			/* as written */
	unsigned int weight;		/* 1..WEIGHT_MAX */
};
struct tab_line {
	int lineno;
	bool ok;			/* parsed without error */
	char name[NAME_MAX_LEN + 1];	/* "" if the NAME field was bad */
	char *backing;			/* as written */
	struct tab_setting *set;	/* in line order */
	int nset;
	struct tab_weight *wt;
	int nwt;
};
struct fairqtab {
	const char *file;
	struct tab_line *lines;
	int n;
	int nbad;			/* lines with an error (reported) */
};
/* a tunable that bounds the flows' memory: changes only while powered off */
bool key_allocates(const char *key);
int fairqtab_read(const struct fairqctl_control *ctl, const char *file,
		  struct fairqtab *tab);	/* reports */
void fairqtab_free(struct fairqtab *tab);
int resolve_backing(const struct fairqctl_control *ctl, const char *spec,
		    char *out, size_t len);

/* weights.c: weights sync, the follower of io.weight, and its state */
int cmd_weights(struct fairqctl_control *ctl);
int weights_lock(const struct fairqctl_control *ctl, bool create);
void weights_unlock(int fd);
void weights_forget(const struct fairqctl_control *ctl, uint64_t id);
void weights_drop(const struct fairqctl_control *ctl);

/* json.c, apply.c, top.c */
void stats_json(const struct fairqctl_control *ctl, const struct stats *st);
void list_json(struct fairqctl_control *ctl, char **names, int n);
void get_json(const struct fairqctl_control *ctl, const char *key,
	      const char *val);
void get_cgroup_weights_json(const struct fairqctl_control *ctl,
			     const struct cgroup_weight *w, int n);
int cmd_apply(struct fairqctl_control *ctl);
int cmd_top(struct fairqctl_control *ctl);

#endif
