// SPDX-License-Identifier: GPL-2.0
/*
 * The fixed newstyle negotiation: greeting, client flags,
 * then option haggling until NBD_OPT_GO / NBD_OPT_EXPORT_NAME enters
 * transmission or NBD_OPT_ABORT ends the session.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fairq_nbd.h"
#include "nbd_proto.h"

enum {
	HS_GO = 1,		/* enter transmission */
	HS_CONTINUE = 0,	/* next option */
	HS_ERROR = -1,		/* close the connection */
};

static int send_greeting(struct conn *c)
{
	unsigned char b[18], *p = b;

	p = put_be64(p, NBD_INIT_PASSWD);
	p = put_be64(p, NBD_IHAVEOPT);
	put_be16(p, NBD_FLAG_FIXED_NEWSTYLE | NBD_FLAG_NO_ZEROES);
	return write_full(c->fd, b, sizeof(b));
}

static int recv_client_flags(struct conn *c)
{
	unsigned char b[4];
	uint32_t flags;

	if (read_full(c->fd, b, sizeof(b)) < 0)
		return -1;
	flags = get_be32(b);
	if (flags & ~(uint32_t)(NBD_FLAG_C_FIXED_NEWSTYLE | NBD_FLAG_C_NO_ZEROES)) {
		log_msg("conn %u: unknown client flags=0x%x; closing", c->id,
			flags);
		return -1;
	}
	c->no_zeroes = flags & NBD_FLAG_C_NO_ZEROES;
	return 0;
}

static int send_opt_reply(struct conn *c, uint32_t opt, uint32_t type,
			  const void *data, uint32_t len)
{
	unsigned char h[NBD_OPT_REPLY_HDR_LEN], *p = h;

	p = put_be64(p, NBD_OPT_REPLY_MAGIC);
	p = put_be32(p, opt);
	p = put_be32(p, type);
	put_be32(p, len);
	if (write_full(c->fd, h, sizeof(h)) < 0)
		return -1;
	return len ? write_full(c->fd, data, len) : 0;
}

/* An error reply with a human-readable message; the session goes on. */
static int send_opt_error(struct conn *c, uint32_t opt, uint32_t type,
			  const char *msg)
{
	if (type == NBD_REP_ERR_UNSUP)
		log_dbg("conn %u: option=%u unsupported", c->id, opt);
	else
		log_msg("conn %u: option=%u refused with reply=0x%x: %s",
			c->id, opt, type, msg);
	if (send_opt_reply(c, opt, type, msg, strlen(msg)) < 0)
		return HS_ERROR;
	return HS_CONTINUE;
}

static bool export_name_ok(const char *name, uint32_t len)
{
	const char *want = cfg.exp.name;

	return len == 0 || (len == strlen(want) && !memcmp(name, want, len));
}

static int send_info_export(struct conn *c, uint32_t opt)
{
	unsigned char b[12], *p = b;

	p = put_be16(p, NBD_INFO_EXPORT);
	p = put_be64(p, cfg.exp.size);
	put_be16(p, export_tx_flags(&cfg.exp));
	return send_opt_reply(c, opt, NBD_REP_INFO, b, sizeof(b));
}

static int send_info_block_size(struct conn *c, uint32_t opt)
{
	unsigned char b[14], *p = b;

	p = put_be16(p, NBD_INFO_BLOCK_SIZE);
	p = put_be32(p, 1);
	p = put_be32(p, cfg.exp.pref_block);
	put_be32(p, NBD_MAX_PAYLOAD);
	return send_opt_reply(c, opt, NBD_REP_INFO, b, sizeof(b));
}

static int send_info_string(struct conn *c, uint32_t opt, uint16_t type,
			    const char *s)
{
	size_t len = strlen(s);
	unsigned char b[2 + 4096];

	if (len > 4096)
		len = 4096;
	put_be16(b, type);
	memcpy(b + 2, s, len);
	return send_opt_reply(c, opt, NBD_REP_INFO, b, 2 + len);
}

/* Answer one NBD_INFO_* request; unknown ones are ignored (proto.md). */
static int send_info_item(struct conn *c, uint32_t opt, uint16_t item)
{
	switch (item) {
	case NBD_INFO_NAME:
		return send_info_string(c, opt, item, cfg.exp.name);
	case NBD_INFO_DESCRIPTION:
		return send_info_string(c, opt, item, cfg.exp.desc);
	case NBD_INFO_BLOCK_SIZE:
		c->asked_block_size = true;
		return 0;	/* sent unconditionally below */
	default:
		log_dbg("conn %u: ignoring unknown info request=%u", c->id,
			item);
		return 0;
	}
}

/* NBD_OPT_INFO / NBD_OPT_GO: u32 namelen, name, u16 n, n x u16. */
static int opt_info_go(struct conn *c, uint32_t opt, unsigned char *d,
		       uint32_t len)
{
	uint32_t namelen, i;
	uint16_t nreq;

	namelen = len >= 6 ? get_be32(d) : UINT32_MAX;
	if (len < 6 || namelen > len - 6)
		return send_opt_error(c, opt, NBD_REP_ERR_INVALID,
				      "option length too short for name");
	nreq = get_be16(d + 4 + namelen);
	if (len != 6 + namelen + 2u * nreq)
		return send_opt_error(c, opt, NBD_REP_ERR_INVALID,
				      "option length does not match info request count");
	if (!export_name_ok((char *)d + 4, namelen))
		return send_opt_error(c, opt, NBD_REP_ERR_UNKNOWN,
				      "no such export");
	c->asked_block_size = false;
	for (i = 0; i < nreq; i++)
		if (send_info_item(c, opt, get_be16(d + 6 + namelen + 2 * i)) < 0)
			return HS_ERROR;
	if (send_info_export(c, opt) < 0 || send_info_block_size(c, opt) < 0 ||
	    send_opt_reply(c, opt, NBD_REP_ACK, NULL, 0) < 0)
		return HS_ERROR;
	if (opt == NBD_OPT_INFO) {
		c->asked_block_size = false;
		return HS_CONTINUE;
	}
	return HS_GO;
}

/* NBD_OPT_EXPORT_NAME: no error reply is possible, so close on failure. */
static int opt_export_name(struct conn *c, unsigned char *d, uint32_t len)
{
	unsigned char b[8 + 2 + 124], *p = b;
	size_t n = c->no_zeroes ? 10 : sizeof(b);

	if (!export_name_ok((char *)d, len)) {
		log_msg("conn %u: NBD_OPT_EXPORT_NAME of an unknown export (name length=%u); closing",
			c->id, len);
		return HS_ERROR;
	}
	memset(b, 0, sizeof(b));
	p = put_be64(p, cfg.exp.size);
	put_be16(p, export_tx_flags(&cfg.exp));
	return write_full(c->fd, b, n) < 0 ? HS_ERROR : HS_GO;
}

static int opt_list(struct conn *c, uint32_t len)
{
	size_t nl = strlen(cfg.exp.name);
	unsigned char b[4 + 4096];

	if (len)
		return send_opt_error(c, NBD_OPT_LIST, NBD_REP_ERR_INVALID,
				      "NBD_OPT_LIST takes no data");
	if (nl > 4096)
		nl = 4096;
	put_be32(b, nl);
	memcpy(b + 4, cfg.exp.name, nl);
	if (send_opt_reply(c, NBD_OPT_LIST, NBD_REP_SERVER, b, 4 + nl) < 0 ||
	    send_opt_reply(c, NBD_OPT_LIST, NBD_REP_ACK, NULL, 0) < 0)
		return HS_ERROR;
	return HS_CONTINUE;
}

static int handle_option(struct conn *c, uint32_t opt, unsigned char *d,
			 uint32_t len)
{
	switch (opt) {
	case NBD_OPT_EXPORT_NAME:
		return opt_export_name(c, d, len);
	case NBD_OPT_ABORT:
		log_dbg("conn %u: NBD_OPT_ABORT", c->id);
		send_opt_reply(c, opt, NBD_REP_ACK, NULL, 0);
		return HS_ERROR;
	case NBD_OPT_LIST:
		return opt_list(c, len);
	case NBD_OPT_INFO:
	case NBD_OPT_GO:
		return opt_info_go(c, opt, d, len);
	default:
		return send_opt_error(c, opt, NBD_REP_ERR_UNSUP,
				      "option not supported by fairq-nbd");
	}
}

/* Read one option header and its data; -1 closes the connection. */
static int recv_option(struct conn *c, uint32_t *opt, unsigned char **data,
		       uint32_t *len)
{
	unsigned char h[NBD_OPT_HDR_LEN];
	uint64_t magic;

	if (read_full(c->fd, h, sizeof(h)) < 0)
		return -1;
	magic = get_be64(h);
	*opt = get_be32(h + 8);
	*len = get_be32(h + 12);
	if (magic != NBD_IHAVEOPT) {
		log_msg("conn %u: bad option magic=0x%llx; closing", c->id,
			(unsigned long long)magic);
		return -1;
	}
	if (*len > OPT_MAX_LEN) {
		log_msg("conn %u: option=%u length=%u exceeds limit=%u; closing",
			c->id, *opt, *len, OPT_MAX_LEN);
		return -1;
	}
	*data = malloc(*len + 1);
	if (!*data)
		return -1;
	if (read_full(c->fd, *data, *len) < 0) {
		free(*data);
		return -1;
	}
	(*data)[*len] = 0;
	return 0;
}

int handshake(struct conn *c)
{
	unsigned int nopts;

	if (send_greeting(c) < 0 || recv_client_flags(c) < 0)
		return HS_ERROR;
	for (nopts = 0; nopts < HANDSHAKE_MAX_OPTS; nopts++) {
		unsigned char *data;
		uint32_t opt, len;
		int ret;

		if (recv_option(c, &opt, &data, &len) < 0)
			return HS_ERROR;
		log_dbg("conn %u: option=%u length=%u", c->id, opt, len);
		ret = handle_option(c, opt, data, len);
		free(data);
		assert(ret == HS_GO || ret == HS_CONTINUE || ret == HS_ERROR);
		if (ret != HS_CONTINUE)
			return ret;
	}
	log_msg("conn %u: more than %u options; closing", c->id,
		HANDSHAKE_MAX_OPTS);
	return HS_ERROR;
}
