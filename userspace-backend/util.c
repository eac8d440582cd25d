// SPDX-License-Identifier: GPL-2.0
/*
 * Logging, the monotonic clock and full reads/writes on sockets.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include "fairq_nbd.h"
#include "nbd_proto.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static void log_vmsg(const char *fmt, va_list ap)
{
	pthread_mutex_lock(&log_lock);
	fputs("fairq-nbd: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	pthread_mutex_unlock(&log_lock);
}

void log_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(fmt, ap);
	va_end(ap);
}

void log_dbg(const char *fmt, ...)
{
	va_list ap;

	if (cfg.verbose < 1)
		return;
	va_start(ap, fmt);
	log_vmsg(fmt, ap);
	va_end(ap);
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* 0 on success, -1 with errno set; EOF before @len bytes is ECONNRESET. */
int read_full(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = ECONNRESET;
			return -1;
		}
		p += n;
		len -= n;
	}
	return 0;
}

int write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/* Read and drop @len bytes (an option or payload we will not use). */
int skip_bytes(int fd, uint64_t len)
{
	char scratch[4096];

	while (len) {
		size_t n = len < sizeof(scratch) ? len : sizeof(scratch);

		if (read_full(fd, scratch, n) < 0)
			return -1;
		len -= n;
	}
	return 0;
}

/* Map a host errno to the NBD error values the protocol allows. */
int errno_to_nbd(int err)
{
	switch (err) {
	case 0:
		return 0;
	case EPERM:
	case EROFS:
	case EACCES:
		return NBD_EPERM;
	case ENOMEM:
		return NBD_ENOMEM;
	case EINVAL:
		return NBD_EINVAL;
	case ENOSPC:
	case EDQUOT:
	case EFBIG:
		return NBD_ENOSPC;
	case EOVERFLOW:
		return NBD_EOVERFLOW;
	case EOPNOTSUPP:
		return NBD_ENOTSUP;
	case ESHUTDOWN:
		return NBD_ESHUTDOWN;
	default:
		return NBD_EIO;
	}
}
