// SPDX-License-Identifier: GPL-2.0
/*
 * Open the exported file or block device: an O_DIRECT
 * descriptor when the file system allows it, a buffered one always (for
 * unaligned requests and as the fallback), the size, the alignment.
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

static void export_open_direct(struct nbd_export *exp)
{
	int flags = (exp->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC;

	exp->fd_direct = open(exp->path, flags | O_DIRECT);
	if (exp->fd_direct < 0) {
		log_msg("export %s: O_DIRECT refused (%s); using buffered I/O",
			exp->path, strerror(errno));
		return;
	}
	exp->dio_align = export_probe_align(exp->fd_direct, exp->size);
	/*
	 * proto.md: the size SHOULD be a multiple of the advertised minimum
	 * block size.  If it is not, advertise 1 and let the buffered
	 * descriptor serve what O_DIRECT cannot.
	 */
	exp->min_block = exp->size % exp->dio_align ? 1 : exp->dio_align;
}

int export_open(struct nbd_export *exp, uint64_t create_size, bool buffered)
{
	int flags = (exp->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC;

	exp->fd_direct = -1;
	exp->dio_align = 1;
	exp->min_block = 1;
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
	if (!buffered)
		export_open_direct(exp);
	log_msg("export %s: size=%llu direct=%s dio_align=%u min_block=%u read_only=%d",
		exp->path, (unsigned long long)exp->size,
		exp->fd_direct >= 0 ? "yes" : "no", exp->dio_align,
		exp->min_block, exp->read_only);
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
