/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NBD wire constants as in the NBD protocol document
 * (doc/proto.md of the NetworkBlockDevice/nbd project).  Every field on
 * the wire is big-endian; use the get/put helpers below, never a cast.
 */
#ifndef NBD_PROTO_H
#define NBD_PROTO_H

#include <stdint.h>
#include <string.h>
#include <endian.h>

#define NBD_INIT_PASSWD		0x4e42444d41474943ull	/* "NBDMAGIC" */
#define NBD_IHAVEOPT		0x49484156454f5054ull	/* "IHAVEOPT" */
#define NBD_OPT_REPLY_MAGIC	0x0003e889045565a9ull
#define NBD_REQUEST_MAGIC	0x25609513u
#define NBD_SIMPLE_REPLY_MAGIC	0x67446698u

/* handshake flags (server) and client flags */
enum {
	NBD_FLAG_FIXED_NEWSTYLE = 1 << 0,
	NBD_FLAG_NO_ZEROES = 1 << 1,
	NBD_FLAG_C_FIXED_NEWSTYLE = 1 << 0,
	NBD_FLAG_C_NO_ZEROES = 1 << 1,
};

/* transmission flags */
enum {
	NBD_FLAG_HAS_FLAGS = 1 << 0,
	NBD_FLAG_READ_ONLY = 1 << 1,
	NBD_FLAG_SEND_FLUSH = 1 << 2,
	NBD_FLAG_SEND_FUA = 1 << 3,
	NBD_FLAG_ROTATIONAL = 1 << 4,
	NBD_FLAG_SEND_TRIM = 1 << 5,
	NBD_FLAG_SEND_WRITE_ZEROES = 1 << 6,
	NBD_FLAG_SEND_DF = 1 << 7,
	NBD_FLAG_CAN_MULTI_CONN = 1 << 8,
	NBD_FLAG_SEND_RESIZE = 1 << 9,
	NBD_FLAG_SEND_CACHE = 1 << 10,
	NBD_FLAG_SEND_FAST_ZERO = 1 << 11,
};

/* options */
enum {
	NBD_OPT_EXPORT_NAME = 1,
	NBD_OPT_ABORT = 2,
	NBD_OPT_LIST = 3,
	NBD_OPT_PEEK_EXPORT = 4,
	NBD_OPT_STARTTLS = 5,
	NBD_OPT_INFO = 6,
	NBD_OPT_GO = 7,
	NBD_OPT_STRUCTURED_REPLY = 8,
	NBD_OPT_LIST_META_CONTEXT = 9,
	NBD_OPT_SET_META_CONTEXT = 10,
	NBD_OPT_EXTENDED_HEADERS = 11,
};

/* option replies */
#define NBD_REP_ERR(n)		(0x80000000u | (n))
enum {
	NBD_REP_ACK = 1,
	NBD_REP_SERVER = 2,
	NBD_REP_INFO = 3,
	NBD_REP_META_CONTEXT = 4,
};
#define NBD_REP_ERR_UNSUP	NBD_REP_ERR(1)
#define NBD_REP_ERR_POLICY	NBD_REP_ERR(2)
#define NBD_REP_ERR_INVALID	NBD_REP_ERR(3)
#define NBD_REP_ERR_PLATFORM	NBD_REP_ERR(4)
#define NBD_REP_ERR_TLS_REQD	NBD_REP_ERR(5)
#define NBD_REP_ERR_UNKNOWN	NBD_REP_ERR(6)
#define NBD_REP_ERR_SHUTDOWN	NBD_REP_ERR(7)
#define NBD_REP_ERR_BLOCK_SIZE_REQD NBD_REP_ERR(8)
#define NBD_REP_ERR_TOO_BIG	NBD_REP_ERR(9)

/* NBD_REP_INFO types */
enum {
	NBD_INFO_EXPORT = 0,
	NBD_INFO_NAME = 1,
	NBD_INFO_DESCRIPTION = 2,
	NBD_INFO_BLOCK_SIZE = 3,
};

/* commands */
enum {
	NBD_CMD_READ = 0,
	NBD_CMD_WRITE = 1,
	NBD_CMD_DISC = 2,
	NBD_CMD_FLUSH = 3,
	NBD_CMD_TRIM = 4,
	NBD_CMD_CACHE = 5,
	NBD_CMD_WRITE_ZEROES = 6,
	NBD_CMD_BLOCK_STATUS = 7,
	NBD_CMD_RESIZE = 8,
};

/* command flags */
enum {
	NBD_CMD_FLAG_FUA = 1 << 0,
	NBD_CMD_FLAG_NO_HOLE = 1 << 1,
	NBD_CMD_FLAG_DF = 1 << 2,
	NBD_CMD_FLAG_REQ_ONE = 1 << 3,
	NBD_CMD_FLAG_FAST_ZERO = 1 << 4,
	NBD_CMD_FLAG_PAYLOAD_LEN = 1 << 5,
};

/* error values of the simple reply */
enum {
	NBD_EPERM = 1,
	NBD_EIO = 5,
	NBD_ENOMEM = 12,
	NBD_EINVAL = 22,
	NBD_ENOSPC = 28,
	NBD_EOVERFLOW = 75,
	NBD_ENOTSUP = 95,
	NBD_ESHUTDOWN = 108,
};

/* sizes of the fixed wire structures [bytes] */
enum {
	NBD_OPT_HDR_LEN = 16,		/* magic, option, length */
	NBD_OPT_REPLY_HDR_LEN = 20,	/* magic, option, type, length */
	NBD_REQUEST_LEN = 28,		/* magic, flags, type, handle, offset, len */
	NBD_SIMPLE_REPLY_LEN = 16,	/* magic, error, handle */
};

static inline uint16_t get_be16(const unsigned char *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return be16toh(v);
}

static inline uint32_t get_be32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return be32toh(v);
}

static inline uint64_t get_be64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return be64toh(v);
}

static inline unsigned char *put_be16(unsigned char *p, uint16_t v)
{
	v = htobe16(v);
	memcpy(p, &v, sizeof(v));
	return p + sizeof(v);
}

static inline unsigned char *put_be32(unsigned char *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, sizeof(v));
	return p + sizeof(v);
}

static inline unsigned char *put_be64(unsigned char *p, uint64_t v)
{
	v = htobe64(v);
	memcpy(p, &v, sizeof(v));
	return p + sizeof(v);
}

#endif /* NBD_PROTO_H */
