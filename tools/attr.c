// SPDX-License-Identifier: GPL-2.0
/*
 * fairqctl: kernel access.  The configfs entry, its attributes and the
 * sysfs directory of fairq(4).  write_attr() and read_attr()
 * return 0 or -errno and print nothing; callers report with attr_error().
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <ctype.h>

#include "fairqctl.h"

enum {
	DEV_WAIT_MS	= 5000,		/* for /dev/NAME after power=1 */
	DEV_POLL_MS	= 20,
	ATTR_MAX_BYTES	= 1 << 20,	/* sysfs/configfs give one page */
};

/*
 * lifecycle attributes: written to configfs even while powered; so are
 * the tunables that bound the flows' memory (key_allocates())
 */
static const char *const configfs_only[] = { "backing", "power" };

/* [a-z0-9_-], 1..31 characters: the kernel's rule for an entry name */
bool valid_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > NAME_MAX_LEN)
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

/* attribute names: [a-z0-9_], never a path */
bool valid_attr(const char *s, size_t n)
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

int entry_path(const struct fairqctl_control *ctl, char *buf, size_t len)
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

int write_attr(struct fairqctl_control *ctl, enum attr_root root,
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
int read_attr(struct fairqctl_control *ctl, enum attr_root root,
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

bool is_configfs_only(const char *attr)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(configfs_only); i++) {
		if (strcmp(configfs_only[i], attr) == 0)
			return true;
	}
	return key_allocates(attr);
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
		if (backing || key_allocates(attr))
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
void attr_error(const struct fairqctl_control *ctl, const char *attr,
		       const char *val, int e)
{
	char buf[PATH_MAX + 64];
	const char *hint = attr_hint(ctl, attr, val, e, buf, sizeof(buf));

	if (hint)
		ctl_warnx(ctl, "%s: %s: %s (%s)", ctl->name, attr, strerror(e), hint);
	else
		ctl_warnx(ctl, "%s: %s: %s", ctl->name, attr, strerror(e));
}

/* write, and on failure name the device, the attribute and the error */
int set_attr(struct fairqctl_control *ctl, enum attr_root root,
		    const char *attr, const char *val)
{
	int rc = write_attr(ctl, root, attr, val);

	if (rc)
		attr_error(ctl, attr, val, -rc);
	return rc;
}

bool entry_exists(const struct fairqctl_control *ctl)
{
	char path[PATH_MAX];
	struct stat st;

	return entry_path(ctl, path, sizeof(path)) == 0 &&
	       stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int need_entry(const struct fairqctl_control *ctl)
{
	if (entry_exists(ctl))
		return 0;
	ctl_warnx(ctl, "%s: no such fairq device", ctl->name);
	return -ENOENT;
}

/* 1 powered, 0 not, -errno (reported) if power cannot be read */
int powered(struct fairqctl_control *ctl)
{
	char *val;
	int rc = read_attr(ctl, ROOT_CONFIGFS, "power", &val);

	if (rc) {
		ctl_warnx(ctl, "%s: power: %s", ctl->name, strerror(-rc));
		return rc;
	}
	rc = strcmp(val, "1") == 0;
	free(val);
	return rc;
}

int remove_entry(struct fairqctl_control *ctl)
{
	char path[PATH_MAX];
	int rc = entry_path(ctl, path, sizeof(path));

	if (!rc && rmdir(path) < 0)
		rc = -errno;
	if (rc)
		ctl_warnx(ctl, "%s: rmdir %s: %s", ctl->name, path, strerror(-rc));
	else
		weights_drop(ctl);	/* weights sync's state of it */
	return rc;
}

/* mkdir CONFIGFS/NAME: 0, or -errno (reported) */
int make_named_entry(struct fairqctl_control *ctl)
{
	char path[PATH_MAX];
	int rc = entry_path(ctl, path, sizeof(path));

	if (!rc && mkdir(path, 0755) < 0)
		rc = -errno;
	if (rc == -EEXIST)
		ctl_warnx(ctl, "%s: already exists", ctl->name);
	else if (rc)
		ctl_warnx(ctl, "%s: mkdir %s: %s", ctl->name, path, strerror(-rc));
	return rc;
}

void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* power=1 made the disk; devtmpfs or udev makes the node */
int wait_for_dev(const struct fairqctl_control *ctl)
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
	ctl_warnx(ctl, "%s: %s did not appear within %d s", ctl->name, path,
	      DEV_WAIT_MS / 1000);
	return -ETIMEDOUT;
}

/* power=0: 0, or -errno (reported; EBUSY: open or mounted) */
int power_off(struct fairqctl_control *ctl)
{
	int rc = write_attr(ctl, ROOT_CONFIGFS, "power", "0");

	if (rc == -EBUSY)
		ctl_warnx(ctl, "%s: device is busy (open or mounted)", ctl->name);
	else if (rc)
		attr_error(ctl, "power", "0", -rc);
	return rc;
}

/* SRC must be a block device: its realpath in @out, or -errno */
int block_device(const char *src, char *out, size_t len)
{
	char buf[PATH_MAX];
	struct stat st;

	if (stat(src, &st) < 0)
		return -errno;
	if (!S_ISBLK(st.st_mode))
		return -ENOTBLK;
	if (!realpath(src, buf))
		return -errno;
	if ((size_t)snprintf(out, len, "%s", buf) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* warnx(), with "WHERE: " first when ctl->where is set */
void ctl_warnx(const struct fairqctl_control *ctl, const char *fmt, ...)
{
	char msg[PATH_MAX * 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ctl->where)
		warnx("%s: %s", ctl->where, msg);
	else
		warnx("%s", msg);
}

static int not_hidden(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* the names of the configfs entries, sorted; -errno (reported) */
int list_entries(const struct fairqctl_control *ctl, char ***names)
{
	struct fairqctl_control probe = *ctl;
	struct dirent **ents;
	char **out;
	int i, n, k = 0;

	n = scandir(ctl->configfs, &ents, not_hidden, alphasort);
	if (n < 0) {
		warn("%s", ctl->configfs);
		return -errno;
	}
	out = calloc(n + 1, sizeof(*out));
	for (i = 0; i < n; i++) {
		const char *d = ents[i]->d_name;

		if (out && valid_name(d)) {
			memcpy(probe.name, d, strlen(d) + 1);
			if (entry_exists(&probe))
				out[k] = strdup(d);
			if (out[k])
				k++;
		}
		free(ents[i]);
	}
	free(ents);
	if (!out) {
		warnx("out of memory");
		return -ENOMEM;
	}
	*names = out;
	return k;
}

void free_names(char **names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}
