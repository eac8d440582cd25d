// SPDX-License-Identifier: GPL-2.0
/*
 * Open the exported file or block device: a buffered descriptor always
 * (--cache=page data, and flush, trim, zeroes in both modes), an O_DIRECT
 * one for --cache=none when the file system allows it; the size, the
 * alignment O_DIRECT needs, the block sizes to advertise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/fs.h>

#include "fairq_nbd.h"
#include "nbd_proto.h"

static int export_create(struct nbd_export *exp, uint64_t size)
{
	int flags = O_RDWR | O_CREAT | O_CLOEXEC;
	struct stat st;
	int fd;

	fd = open(exp->path, flags, 0644);
	if (fd < 0) {
		log_msg("export %s: create: %s", exp->path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (uint64_t)st.st_size < size && ftruncate(fd, size) < 0) {
		log_msg("export %s: extend to size=%llu: %s", exp->path,
			(unsigned long long)size, strerror(errno));
		close(fd);
		return -1;
	}
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > size) {
		log_msg("export %s: file size=%llu is larger than --size=%llu; not shrinking",
			exp->path, (unsigned long long)st.st_size,
			(unsigned long long)size);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int export_get_size(struct nbd_export *exp)
{
	struct stat st;

	if (fstat(exp->fd_buf, &st) < 0)
		return -1;
	if (S_ISBLK(st.st_mode)) {
		exp->is_bdev = true;
		return ioctl(exp->fd_buf, BLKGETSIZE64, &exp->size);
	}
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	exp->size = st.st_size;
	return 0;
}

/* Smallest size an O_DIRECT read succeeds with: 512 or 4096. */
static uint32_t export_probe_align(int fd, uint64_t size)
{
	static const uint32_t sizes[] = { 512, 4096 };
	uint32_t i, best = 0;
	void *buf;

	if (posix_memalign(&buf, 4096, 4096))
		return 4096;
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		if (size < sizes[i] ||
		    pread(fd, buf, sizes[i], size >= 2 * sizes[i] ? sizes[i] : 0) ==
		    (ssize_t)sizes[i]) {
			best = sizes[i];
			break;
		}
	}
	free(buf);
	return best ? best : 4096;
}

/* --cache=none: 0, or -1 when O_DIRECT is refused (tmpfs, ...). */
static int export_open_direct(struct nbd_export *exp)
{
	int flags = (exp->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC;

	exp->fd_direct = open(exp->path, flags | O_DIRECT);
	if (exp->fd_direct < 0) {
		log_msg("export %s: O_DIRECT refused (%s); using --cache=page",
			exp->path, strerror(errno));
		return -1;
	}
	exp->dio_align = export_probe_align(exp->fd_direct, exp->size);
	return 0;
}

/*
 * Block sizes (proto.md "Block size constraints"): the minimum is 1 in
 * both cache modes (unaligned edges are bounced under O_DIRECT); the
 * preferred size is the larger of 4 KiB, the O_DIRECT alignment and the
 * file's st_blksize when that is a power of two within the maximum.
 */
static void export_block_sizes(struct nbd_export *exp)
{
	uint32_t pref = NBD_PREF_BLOCK;
	struct stat st;

	if (exp->dio_align > pref)
		pref = exp->dio_align;
	if (fstat(exp->fd_buf, &st) == 0 && st.st_blksize > pref &&
	    st.st_blksize <= NBD_MAX_PAYLOAD &&
	    !(st.st_blksize & (st.st_blksize - 1)))
		pref = st.st_blksize;
	exp->pref_block = pref;
}

int export_open(struct nbd_export *exp, uint64_t create_size,
		enum cache_mode *cache)
{
	int flags = (exp->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC;

	exp->fd_direct = -1;
	exp->dio_align = 1;
	if (create_size && export_create(exp, create_size) < 0)
		return -1;
	exp->fd_buf = open(exp->path, flags);
	if (exp->fd_buf < 0) {
		log_msg("export %s: open: %s", exp->path, strerror(errno));
		return -1;
	}
	if (export_get_size(exp) < 0) {
		log_msg("export %s: not a regular file or block device (%s)",
			exp->path, strerror(errno));
		close(exp->fd_buf);
		return -1;
	}
	if (*cache == CACHE_NONE && export_open_direct(exp) < 0)
		*cache = CACHE_PAGE;
	export_block_sizes(exp);
	log_msg("export %s: size=%llu cache=%s dio_align=%u block_size=1/%u/%u read_only=%d",
		exp->path, (unsigned long long)exp->size,
		*cache == CACHE_NONE ? "none" : "page", exp->dio_align,
		exp->pref_block, NBD_MAX_PAYLOAD, exp->read_only);
	return 0;
}

void export_close(struct nbd_export *exp)
{
	if (!exp->read_only && fdatasync(exp->fd_buf) < 0)
		log_msg("export %s: final fdatasync: %s", exp->path,
			strerror(errno));
	if (exp->fd_direct >= 0)
		close(exp->fd_direct);
	close(exp->fd_buf);
}

uint16_t export_tx_flags(const struct nbd_export *exp)
{
	uint16_t f = NBD_FLAG_HAS_FLAGS | NBD_FLAG_SEND_FLUSH |
		     NBD_FLAG_SEND_FUA | NBD_FLAG_CAN_MULTI_CONN;

	if (exp->read_only)
		return f | NBD_FLAG_READ_ONLY;
	return f | NBD_FLAG_SEND_TRIM | NBD_FLAG_SEND_WRITE_ZEROES;
}
