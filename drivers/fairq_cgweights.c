// SPDX-License-Identifier: GPL-2.0
/*
 * fairq_cgweights.c - the per-cgroup weight table behind the
 * cgroup_weights attribute: with classify=cgroup, a bio whose blkcg is
 * listed here is queued with that weight (struct fq_req.weight), any
 * other with the weight of its I/O priority (100 at the default level,
 * as the kernel's io.weight).
 *
 * Why not an io.fairq.weight file in each cgroup, as bfq has: a module
 * registers such files through blkcg_policy_register() and struct
 * blkcg_policy, which live in block/blk-cgroup.h, a private header that
 * Debian's linux-headers packages do not ship.  So the administrator
 * names the cgroup by its id (on 64-bit, the inode number of its
 * directory in cgroup2), the same id classify=cgroup uses as flow key.
 *
 * The table belongs to the device (mkdir to rmdir), so it survives power
 * off and on.  A sorted array: ascending ids, looked up by bisection on
 * every cgroup-classified bio.
 */
#include "fairq.h"

#include <linux/ctype.h>
#include <linux/kernel.h>
#include <linux/string.h>

void fairq_cgw_init(struct fairq_cgw *t)
{
	spin_lock_init(&t->lock);
	t->nr = 0;
}

/* Index of @id in the table, or of the first entry above it. */
static unsigned int fairq_cgw_find(const struct fairq_cgw *t, u64 id)
{
	unsigned int lo = 0, hi = t->nr;

	lockdep_assert_held(&t->lock);

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (t->e[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The weight set for cgroup @id, or 0 (none: from the I/O priority). */
u16 fairq_cgw_lookup(struct fairq_cgw *t, u64 id)
{
	unsigned long flags;
	unsigned int i;
	u16 w = 0;

	spin_lock_irqsave(&t->lock, flags);
	i = fairq_cgw_find(t, id);
	if (i < t->nr && t->e[i].id == id)
		w = t->e[i].weight;
	spin_unlock_irqrestore(&t->lock, flags);
	return w;
}

/* Set (@weight > 0) or remove (@weight == 0) the entry of @id. */
static int fairq_cgw_update(struct fairq_cgw *t, u64 id, u16 weight)
{
	unsigned long flags;
	unsigned int i;
	bool found;
	int ret = 0;

	spin_lock_irqsave(&t->lock, flags);
	i = fairq_cgw_find(t, id);
	found = i < t->nr && t->e[i].id == id;
	if (found && weight) {
		t->e[i].weight = weight;
	} else if (found) {
		memmove(&t->e[i], &t->e[i + 1], (t->nr - i - 1) * sizeof(t->e[0]));
		t->nr--;
	} else if (!weight) {
		ret = -ENOENT;
	} else if (t->nr == FAIRQ_CGW_MAX) {
		ret = -ENOSPC;
	} else {
		memmove(&t->e[i + 1], &t->e[i], (t->nr - i) * sizeof(t->e[0]));
		t->e[i].id = id;
		t->e[i].weight = weight;
		t->nr++;
	}
	spin_unlock_irqrestore(&t->lock, flags);
	return ret;
}

/*
 * "CGID WEIGHT", decimal, one space (or more) between, newline optional:
 * WEIGHT 1..FQ_WEIGHT_MAX sets, 0 removes.  -EINVAL for anything else,
 * -ENOENT to remove an id that is not set, -ENOSPC when the table is full.
 */
int fairq_cgw_store(struct fairq_cgw *t, const char *buf, const char **why)
{
	char line[48], *w;
	unsigned int weight;
	size_t len;
	u64 id;

	len = strcspn(buf, "\n");
	if (buf[len] == '\n' && buf[len + 1]) {
		*why = "one \"CGID WEIGHT\" per write";
		return -EINVAL;
	}
	if (len >= sizeof(line)) {
		*why = "want \"CGID WEIGHT\"";
		return -EINVAL;
	}
	memcpy(line, buf, len);
	line[len] = '\0';
	w = strchr(line, ' ');
	if (!w) {
		*why = "want \"CGID WEIGHT\"";
		return -EINVAL;
	}
	*w++ = '\0';
	w = skip_spaces(w);
	if (kstrtou64(line, 10, &id) || kstrtouint(w, 10, &weight) || !id) {
		*why = "want \"CGID WEIGHT\", decimal, CGID > 0";
		return -EINVAL;
	}
	if (weight > FQ_WEIGHT_MAX) {
		*why = "WEIGHT: want 1..1000, or 0 to remove";
		return -EINVAL;
	}
	switch (fairq_cgw_update(t, id, (u16)weight)) {
	case -ENOENT:
		*why = "no weight set for that cgroup id";
		return -ENOENT;
	case -ENOSPC:
		*why = "the table is full (" __stringify(FAIRQ_CGW_MAX) " cgroups)";
		return -ENOSPC;
	}
	return 0;
}

/* One "CGID WEIGHT" line per entry, ascending id, as many as fit a page. */
ssize_t fairq_cgw_show(struct fairq_cgw *t, char *page)
{
	unsigned int i;
	ssize_t at = 0;
	char line[32];
	int len;

	spin_lock_irq(&t->lock);
	for (i = 0; i < t->nr; i++) {
		len = scnprintf(line, sizeof(line), "%llu %u\n", t->e[i].id,
				t->e[i].weight);
		if (at + len >= PAGE_SIZE)
			break;
		at += sysfs_emit_at(page, at, "%s", line);
	}
	spin_unlock_irq(&t->lock);
	return at;
}
