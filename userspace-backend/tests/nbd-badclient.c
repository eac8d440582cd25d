// SPDX-License-Identifier: GPL-2.0
/*
 * nbd-badclient - drive fairq-nbd with malformed and edge-case input and
 * check every answer: the right option reply / NBD error, or a closed
 * connection; and that a well-behaved client still works after each.
 *
 * Usage: nbd-badclient SOCKET SIZE [ro|stall|hold]
 * Prints one "ok"/"FAIL" line per check; exit 0 only if all passed.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "../nbd_proto.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const char *sock_path;
static uint64_t exp_size;
static int read_only;
static int failures, checks;

static void check(int cond, const char *what)
{
	checks++;
	if (!cond)
		failures++;
	printf("%s: %s\n", cond ? "ok" : "FAIL", what);
}

static int xconnect(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 10 };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("connect");
		exit(2);
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static int xread(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

static int xwrite(int fd, const void *buf, size_t len)
{
	return send(fd, buf, len, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

/* The server closed the connection (EOF within the receive timeout). */
static int is_closed(int fd)
{
	char c;
	ssize_t n;

	do
		n = read(fd, &c, 1);
	while (n > 0);
	return n == 0 || errno == ECONNRESET;
}

/* Greeting, client flags; returns the fd or -1. */
static int greet(uint32_t cflags)
{
	unsigned char b[18], f[4];
	int fd = xconnect();

	if (xread(fd, b, sizeof(b)) || get_be64(b) != NBD_INIT_PASSWD ||
	    get_be64(b + 8) != NBD_IHAVEOPT) {
		close(fd);
		return -1;
	}
	put_be32(f, cflags);
	xwrite(fd, f, 4);
	return fd;
}

static void send_opt(int fd, uint32_t opt, const void *d, uint32_t len)
{
	unsigned char h[16];

	put_be64(h, NBD_IHAVEOPT);
	put_be32(h + 8, opt);
	put_be32(h + 12, len);
	xwrite(fd, h, 16);
	if (len)
		xwrite(fd, d, len);
}

/* Read one option reply; returns type, fills data (up to 256 bytes). */
static uint32_t recv_opt(int fd, uint32_t opt, unsigned char *d, uint32_t *len)
{
	unsigned char h[20], junk[4096];
	uint32_t l;

	if (xread(fd, h, 20) || get_be64(h) != NBD_OPT_REPLY_MAGIC ||
	    get_be32(h + 8) != opt)
		return 0;
	l = get_be32(h + 16);
	if (l > sizeof(junk) || xread(fd, junk, l))
		return 0;
	if (d)
		memcpy(d, junk, l < 256 ? l : 256);
	if (len)
		*len = l;
	return get_be32(h + 12);
}

static int go_data(unsigned char *d, const char *name, int nreq, uint16_t req)
{
	uint32_t nl = strlen(name);

	put_be32(d, nl);
	memcpy(d + 4, name, nl);
	put_be16(d + 4 + nl, nreq);
	if (nreq)
		put_be16(d + 6 + nl, req);
	return 6 + nl + 2 * nreq;
}

/* Block sizes fairq-nbd advertises: min 1, preferred a power of two
 * >= 4096, max 32 MiB (proto.md "Block size constraints"). */
static int block_sizes_ok(const unsigned char *d, uint32_t len)
{
	uint32_t min = get_be32(d + 2), pref = get_be32(d + 6);

	return len == 14 && min == 1 && pref >= 4096 && !(pref & (pref - 1)) &&
	       get_be32(d + 10) == 32u << 20;
}

/* Full OPT_GO with NBD_INFO_BLOCK_SIZE; returns fd in transmission. */
static int open_export(void)
{
	unsigned char d[300];
	uint32_t t, len;
	int fd = greet(NBD_FLAG_C_FIXED_NEWSTYLE | NBD_FLAG_C_NO_ZEROES);
	int n = go_data(d, "", 1, NBD_INFO_BLOCK_SIZE), got_export = 0;
	int got_bs = 0;

	send_opt(fd, NBD_OPT_GO, d, n);
	while ((t = recv_opt(fd, NBD_OPT_GO, d, &len)) == NBD_REP_INFO) {
		if (get_be16(d) == NBD_INFO_EXPORT && get_be64(d + 2) == exp_size)
			got_export = 1;
		if (get_be16(d) == NBD_INFO_BLOCK_SIZE)
			got_bs = block_sizes_ok(d, len);
	}
	return t == NBD_REP_ACK && got_export && got_bs ? fd : -1;
}

static void send_req(int fd, uint16_t flags, uint16_t type, uint64_t handle,
		     uint64_t off, uint32_t len)
{
	unsigned char h[28];

	put_be32(h, NBD_REQUEST_MAGIC);
	put_be16(h + 4, flags);
	put_be16(h + 6, type);
	put_be64(h + 8, handle);
	put_be64(h + 16, off);
	put_be32(h + 24, len);
	xwrite(fd, h, 28);
}

/* Simple reply: returns error value, or -1 on bad reply/handle. */
static int recv_reply(int fd, uint64_t handle, void *data, uint32_t len)
{
	unsigned char h[16];
	uint32_t err;

	if (xread(fd, h, 16) || get_be32(h) != NBD_SIMPLE_REPLY_MAGIC ||
	    get_be64(h + 8) != handle)
		return -1;
	err = get_be32(h + 4);
	if (!err && data && xread(fd, data, len))
		return -1;
	return err;
}

static int simple_cmd(int fd, uint16_t flags, uint16_t type, uint64_t off,
		      uint32_t len)
{
	static uint64_t handle = 0x1000;

	send_req(fd, flags, type, ++handle, off, len);
	return recv_reply(fd, handle, NULL, 0);
}

/* ---- handshake cases ------------------------------------------------- */

static void hs_bad_flags(void)
{
	int fd = greet(0x80);

	check(fd >= 0 && is_closed(fd), "unknown client flag -> closed");
	close(fd);
}

static void hs_bad_magic(void)
{
	unsigned char h[16] = "NOTMAGIC";
	int fd = greet(NBD_FLAG_C_FIXED_NEWSTYLE);

	put_be32(h + 8, NBD_OPT_LIST);
	xwrite(fd, h, 16);
	check(is_closed(fd), "bad option magic -> closed");
	close(fd);
}

static void hs_truncated(void)
{
	unsigned char b[18];
	int fd = xconnect();

	check(xread(fd, b, 18) == 0, "greeting received");
	xwrite(fd, "\0\0", 2);	/* half the client flags */
	close(fd);
	fd = greet(NBD_FLAG_C_FIXED_NEWSTYLE);
	send_opt(fd, NBD_OPT_LIST, NULL, 0);
	xwrite(fd, "", 0);
	close(fd);	/* vanish before reading the reply */
}

static void hs_oversized(void)
{
	unsigned char h[16];
	int fd = greet(NBD_FLAG_C_FIXED_NEWSTYLE);

	put_be64(h, NBD_IHAVEOPT);
	put_be32(h + 8, NBD_OPT_GO);
	put_be32(h + 12, 0x40000000);
	xwrite(fd, h, 16);
	check(is_closed(fd), "option length=1GiB -> closed");
	close(fd);
}

static void hs_options(void)
{
	unsigned char d[300];
	uint32_t len;
	int fd = greet(NBD_FLAG_C_FIXED_NEWSTYLE), n;

	send_opt(fd, 99, "xyz", 3);
	check(recv_opt(fd, 99, NULL, NULL) == NBD_REP_ERR_UNSUP,
	      "unknown option 99 -> NBD_REP_ERR_UNSUP");
	send_opt(fd, NBD_OPT_STRUCTURED_REPLY, NULL, 0);
	check(recv_opt(fd, NBD_OPT_STRUCTURED_REPLY, NULL, NULL) ==
	      NBD_REP_ERR_UNSUP, "NBD_OPT_STRUCTURED_REPLY -> ERR_UNSUP");
	send_opt(fd, NBD_OPT_LIST, "x", 1);
	check(recv_opt(fd, NBD_OPT_LIST, NULL, NULL) == NBD_REP_ERR_INVALID,
	      "NBD_OPT_LIST with data -> ERR_INVALID");
	send_opt(fd, NBD_OPT_LIST, NULL, 0);
	check(recv_opt(fd, NBD_OPT_LIST, d, &len) == NBD_REP_SERVER &&
	      len == 4 && get_be32(d) == 0, "NBD_OPT_LIST -> REP_SERVER \"\"");
	check(recv_opt(fd, NBD_OPT_LIST, NULL, NULL) == NBD_REP_ACK,
	      "NBD_OPT_LIST -> ACK");
	n = go_data(d, "", 1, NBD_INFO_BLOCK_SIZE);
	send_opt(fd, NBD_OPT_INFO, d, n - 1);
	check(recv_opt(fd, NBD_OPT_INFO, NULL, NULL) == NBD_REP_ERR_INVALID,
	      "NBD_OPT_INFO with short length -> ERR_INVALID");
	n = go_data(d, "nosuch", 0, 0);
	send_opt(fd, NBD_OPT_GO, d, n);
	check(recv_opt(fd, NBD_OPT_GO, NULL, NULL) == NBD_REP_ERR_UNKNOWN,
	      "NBD_OPT_GO unknown export -> ERR_UNKNOWN");
	n = go_data(d, "", 1, NBD_INFO_BLOCK_SIZE);
	send_opt(fd, NBD_OPT_INFO, d, n);
	check(recv_opt(fd, NBD_OPT_INFO, d, &len) == NBD_REP_INFO,
	      "NBD_OPT_INFO -> REP_INFO");
	while (recv_opt(fd, NBD_OPT_INFO, d, &len) == NBD_REP_INFO)
		;
	send_opt(fd, NBD_OPT_ABORT, NULL, 0);
	check(recv_opt(fd, NBD_OPT_ABORT, NULL, NULL) == NBD_REP_ACK &&
	      is_closed(fd), "NBD_OPT_ABORT -> ACK, closed");
	close(fd);
}

/*
 * Unaligned requests are served (min block 1): under --cache=none their
 * edges are read-modify-written.  Aligned and unaligned views of the
 * file must agree.
 */
static void unaligned_mix(int fd)
{
	static unsigned char buf[4096], back[4096];

	memset(buf, 0xc3, 100);
	send_req(fd, 0, NBD_CMD_WRITE, 50, (2 << 20) + 1000, 100);
	xwrite(fd, buf, 100);
	check(recv_reply(fd, 50, NULL, 0) == 0, "unaligned WRITE -> 0");
	send_req(fd, 0, NBD_CMD_READ, 51, 2 << 20, 4096);
	check(recv_reply(fd, 51, back, 4096) == 0 && back[999] == 0 &&
	      back[1000] == 0xc3 && back[1099] == 0xc3 && back[1100] == 0,
	      "aligned READ sees the unaligned write");
	memset(buf, 0x3c, sizeof(buf));
	send_req(fd, 0, NBD_CMD_WRITE, 52, 2 << 20, 4096);
	xwrite(fd, buf, 4096);
	check(recv_reply(fd, 52, NULL, 0) == 0, "aligned WRITE -> 0");
	send_req(fd, 0, NBD_CMD_READ, 53, (2 << 20) + 7, 13);
	check(recv_reply(fd, 53, back, 13) == 0 && back[0] == 0x3c &&
	      back[12] == 0x3c, "unaligned READ sees the aligned write");
}

static void hs_export_name(void)
{
	unsigned char b[10];
	int fd = greet(NBD_FLAG_C_FIXED_NEWSTYLE | NBD_FLAG_C_NO_ZEROES);

	send_opt(fd, NBD_OPT_EXPORT_NAME, NULL, 0);
	check(xread(fd, b, 10) == 0 && get_be64(b) == exp_size &&
	      (get_be16(b + 8) & NBD_FLAG_HAS_FLAGS) &&
	      !!(get_be16(b + 8) & NBD_FLAG_READ_ONLY) == read_only,
	      "NBD_OPT_EXPORT_NAME \"\" -> size and flags (no zeroes)");
	check(simple_cmd(fd, 0, NBD_CMD_FLUSH, 0, 0) == 0,
	      "FLUSH after EXPORT_NAME -> 0");
	if (!read_only)
		unaligned_mix(fd);
	close(fd);
	fd = greet(NBD_FLAG_C_FIXED_NEWSTYLE);
	send_opt(fd, NBD_OPT_EXPORT_NAME, "nosuch", 6);
	check(is_closed(fd), "NBD_OPT_EXPORT_NAME unknown -> closed");
	close(fd);
}

/* ---- transmission cases ---------------------------------------------- */

static void tx_errors(int fd)
{
	static unsigned char junk[512];
	int w = read_only ? NBD_EPERM : NBD_ENOSPC;

	check(simple_cmd(fd, 0, NBD_CMD_READ, exp_size - 512, 1024) == NBD_EINVAL,
	      "READ past end -> EINVAL");
	check(simple_cmd(fd, 0, NBD_CMD_READ, UINT64_MAX - 511, 1024) == NBD_EINVAL,
	      "READ offset+length overflows -> EINVAL");
	check(simple_cmd(fd, 0, NBD_CMD_READ, 0, 64 << 20) == NBD_EINVAL,
	      "READ length=64MiB -> EINVAL");
	check(simple_cmd(fd, 0, NBD_CMD_READ, 0, 0) == NBD_EINVAL,
	      "READ length=0 -> EINVAL");
	send_req(fd, 0, NBD_CMD_READ, 0x900, 1, 511);
	check(recv_reply(fd, 0x900, junk, 511) == 0,
	      "unaligned READ after INFO_BLOCK_SIZE (min 1) -> 0");
	check(simple_cmd(fd, 0, 42, 0, 512) == NBD_EINVAL,
	      "unknown command 42 -> EINVAL");
	check(simple_cmd(fd, 0, NBD_CMD_BLOCK_STATUS, 0, 512) == NBD_EINVAL,
	      "BLOCK_STATUS (not negotiated) -> EINVAL");
	check(simple_cmd(fd, 0x80, NBD_CMD_READ, 0, 512) == NBD_EINVAL,
	      "unknown command flag -> EINVAL");
	check(simple_cmd(fd, 0, NBD_CMD_TRIM, exp_size, 512) == w,
	      read_only ? "TRIM on read-only -> EPERM" : "TRIM past end -> ENOSPC");
	check(simple_cmd(fd, 0, NBD_CMD_WRITE_ZEROES, exp_size - 512, 4096) == w,
	      read_only ? "WRITE_ZEROES on read-only -> EPERM" :
	      "WRITE_ZEROES past end -> ENOSPC");
	check(simple_cmd(fd, 0, NBD_CMD_FLUSH, 0, 0) == 0, "FLUSH -> 0");
}

static void tx_write_past_end(int fd)
{
	static char buf[4096];
	int w = read_only ? NBD_EPERM : NBD_ENOSPC;

	memset(buf, 0x5a, sizeof(buf));
	send_req(fd, 0, NBD_CMD_WRITE, 77, exp_size - 512, sizeof(buf));
	xwrite(fd, buf, sizeof(buf));
	check(recv_reply(fd, 77, NULL, 0) == w,
	      read_only ? "WRITE on read-only -> EPERM" : "WRITE past end -> ENOSPC");
}

static void tx_roundtrip(int fd)
{
	static unsigned char buf[65536], back[65536];
	size_t i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 7 + 3);
	send_req(fd, NBD_CMD_FLAG_FUA, NBD_CMD_WRITE, 88, 1 << 20, sizeof(buf));
	xwrite(fd, buf, sizeof(buf));
	check(recv_reply(fd, 88, NULL, 0) == (read_only ? NBD_EPERM : 0),
	      read_only ? "FUA WRITE on read-only -> EPERM" : "FUA WRITE -> 0");
	if (read_only)
		return;
	send_req(fd, 0, NBD_CMD_READ, 89, 1 << 20, sizeof(back));
	check(recv_reply(fd, 89, back, sizeof(back)) == 0 &&
	      !memcmp(buf, back, sizeof(buf)), "READ returns the written data");
}

/* 128 requests in flight before reading a single reply. */
static void tx_pipeline(int fd)
{
	enum { N = 128 };
	static unsigned char data[4096];
	int seen[N] = { 0 }, i, ok = 1;

	for (i = 0; i < N; i++)
		send_req(fd, 0, NBD_CMD_READ, 1000 + i, (uint64_t)i * 4096, 4096);
	for (i = 0; i < N && ok; i++) {
		unsigned char h[16];
		uint64_t hd;

		if (xread(fd, h, 16) || get_be32(h + 4)) {
			ok = 0;
			break;
		}
		hd = get_be64(h + 8);
		if (hd < 1000 || hd >= 1000 + N || seen[hd - 1000]++ ||
		    xread(fd, data, sizeof(data)))
			ok = 0;
	}
	check(ok, "128 pipelined READs -> 128 replies, each handle once");
}

static void tx_bad_magic(int fd)
{
	unsigned char h[28] = { 0 };

	xwrite(fd, h, sizeof(h));
	check(is_closed(fd), "bad request magic -> closed");
}

static void tx_oversized_write(void)
{
	int fd = open_export();

	send_req(fd, 0, NBD_CMD_WRITE, 5, 0, 0xfffff000);
	check(is_closed(fd), "WRITE length=4GiB-4K -> closed");
	close(fd);
}

static void tx_vanish(void)
{
	static char buf[65536];
	int fd = open_export();

	send_req(fd, 0, NBD_CMD_WRITE, 6, 0, sizeof(buf));
	xwrite(fd, buf, sizeof(buf) / 2);
	close(fd);	/* vanish in the middle of the payload */
	fd = open_export();
	send_req(fd, 0, NBD_CMD_READ, 7, 0, 512);
	close(fd);	/* vanish with a read in flight */
	fd = open_export();
	send_req(fd, 0, NBD_CMD_READ, 8, 0, 512);
	send_req(fd, 0, NBD_CMD_DISC, 9, 0, 0);
	check(recv_reply(fd, 8, buf, 512) == 0 && is_closed(fd),
	      "READ then DISC -> reply, then closed");
	close(fd);
}

/*
 * Handshake fuzz, fixed seed: after the greeting, options with the right
 * magic but random option numbers, lengths and data (GO/INFO/LIST/
 * EXPORT_NAME among them), or plain random bytes.  The server may answer
 * or close; it must not die.  Replies are drained without checking.
 */
static void fuzz_one(unsigned int *seed)
{
	static const uint32_t opts[] = { 1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 99 };
	unsigned char d[512], junk[4096];
	int fd = greet(rand_r(seed) % 8 ? NBD_FLAG_C_FIXED_NEWSTYLE : 3);
	int i, n = 1 + rand_r(seed) % 4;

	if (fd < 0)
		return;
	for (i = 0; i < n; i++) {
		uint32_t len = rand_r(seed) % sizeof(d), j;
		uint32_t opt = opts[rand_r(seed) % ARRAY_SIZE(opts)];

		for (j = 0; j < len; j++)
			d[j] = rand_r(seed);
		if (len >= 4 && rand_r(seed) % 2)
			put_be32(d, rand_r(seed) % (len + 8));	/* name length */
		if (rand_r(seed) % 10 == 0)
			xwrite(fd, d, len);			/* no header */
		else
			send_opt(fd, opt, d, len);
	}
	shutdown(fd, SHUT_WR);
	while (read(fd, junk, sizeof(junk)) > 0)
		;
	close(fd);
}

static void hs_fuzz(void)
{
	unsigned int seed = 20260, i;

	for (i = 0; i < 300; i++)
		fuzz_one(&seed);
	check(open_export() >= 0, "300 fuzzed handshakes, server still serves");
}

/* "hold" mode: enter transmission, then just keep the connection. */
static int hold(void)
{
	int fd = open_export();

	if (fd < 0)
		return 1;
	printf("holding\n");
	fflush(stdout);
	pause();
	return 0;
}

/* "stall" mode: 64 x 1 MiB reads, never read a reply, wait to be cut. */
static int stall(void)
{
	int fd = open_export(), i;

	if (fd < 0)
		return 1;
	for (i = 0; i < 64; i++)
		send_req(fd, 0, NBD_CMD_READ, i, (uint64_t)i << 20, 1 << 20);
	printf("stalling\n");
	fflush(stdout);
	pause();
	return 0;
}

int main(int argc, char **argv)
{
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: nbd-badclient SOCKET SIZE [ro]\n");
		return 2;
	}
	sock_path = argv[1];
	exp_size = strtoull(argv[2], NULL, 0);
	read_only = argc > 3 && !strcmp(argv[3], "ro");
	if (argc > 3 && !strcmp(argv[3], "stall"))
		return stall();
	if (argc > 3 && !strcmp(argv[3], "hold"))
		return hold();
	hs_bad_flags();
	hs_bad_magic();
	hs_truncated();
	hs_oversized();
	hs_options();
	hs_export_name();
	hs_fuzz();
	fd = open_export();
	check(fd >= 0, "NBD_OPT_GO with INFO_BLOCK_SIZE -> INFO_EXPORT, block sizes 1/4096+/32M, ACK");
	tx_errors(fd);
	tx_write_past_end(fd);
	tx_roundtrip(fd);
	tx_pipeline(fd);
	tx_bad_magic(fd);
	close(fd);
	tx_oversized_write();
	tx_vanish();
	fd = open_export();
	check(fd >= 0 && simple_cmd(fd, 0, NBD_CMD_READ, 0, 0) == NBD_EINVAL,
	      "server still answers after all of the above");
	close(fd);
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
