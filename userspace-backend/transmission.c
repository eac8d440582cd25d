// SPDX-License-Identifier: GPL-2.0
/*
 * One connection: its reader thread (handshake, then
 * requests: validate, read payload, hand to the backend), its writer
 * thread (simple replies, in completion order; the file writes of
 * zero-copy WRITEs) and its teardown.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include "fairq_nbd.h"
#include "nbd_proto.h"

static pthread_mutex_t conns_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t conns_cond = PTHREAD_COND_INITIALIZER;
static struct conn *conns;
static unsigned int nconns, next_id;
static bool shutting_down;

static void req_free(struct req *r)
{
	free(r->bounce);
	free(r->buf);
	free(r);
}

/* Called by the backend (or the reader, for errors): queue the reply. */
void conn_complete(struct req *r)
{
	struct conn *c = r->conn;

	assert(c);
	pthread_mutex_lock(&c->lock);
	r->next = NULL;
	if (c->done_tail)
		c->done_tail->next = r;
	else
		c->done_head = r;
	c->done_tail = r;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

/*
 * A zero-copy READ's data, after its header: from the page cache to the
 * socket by sendfile(2), waiting for room as need be.  Its header said
 * "no error", so a failure here (the client gone, or the file failing
 * or shrinking under us) leaves the stream torn: the connection is cut,
 * as the protocol requires of a simple reply.  0 = sent, -1 = cut.
 */
static int send_file_data(struct conn *c, const struct req *r)
{
	off_t off = r->offset;
	size_t left = r->len;

	while (left) {
		ssize_t k = sendfile(c->fd, cfg.exp.fd_buf, &off, left);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (!k)
				errno = EIO;	/* the file ended early */
			shutdown(c->fd, SHUT_RDWR);
			return -1;
		}
		left -= k;
	}
	return 0;
}

/*
 * Send the replies of @rs[0..@n) in one go (a READ's data follows its
 * header; a zero-copy READ may only be the last); the caller holds
 * c->send_lock.  0 = sent, -1 = the socket failed.  With @try, 1 =
 * nothing sent because the socket is full (once any byte is out, the
 * rest follows, waiting if need be).
 */
static int send_replies(struct conn *c, struct req **rs, unsigned int n,
			bool try)
{
	struct req *zc = rs[n - 1]->zc && !rs[n - 1]->error ? rs[n - 1] : NULL;
	unsigned char h[REPLY_BATCH][NBD_SIMPLE_REPLY_LEN];
	struct iovec iov[2 * REPLY_BATCH];
	struct msghdr msg = { .msg_iov = iov };
	size_t total = 0;
	bool sent = false;
	unsigned int i;

	assert(n <= REPLY_BATCH);
	for (i = 0; i < n; i++) {
		struct req *r = rs[i];
		unsigned char *p = h[i];

		p = put_be32(p, NBD_SIMPLE_REPLY_MAGIC);
		p = put_be32(p, r->error);
		put_be64(p, r->handle);
		iov[msg.msg_iovlen++] = (struct iovec){
			.iov_base = h[i], .iov_len = sizeof(h[i]) };
		total += sizeof(h[i]);
		assert(!r->zc || i == n - 1);
		if (r->type == NBD_CMD_READ && !r->error && !r->zc) {
			iov[msg.msg_iovlen++] = (struct iovec){
				.iov_base = r->buf, .iov_len = r->len };
			total += r->len;
		}
	}
	while (total) {
		ssize_t k = sendmsg(c->fd, &msg, MSG_NOSIGNAL |
				    (try ? MSG_DONTWAIT : 0) |
				    (zc ? MSG_MORE : 0));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EAGAIN && try) {
			struct pollfd pfd = { .fd = c->fd, .events = POLLOUT };

			if (!sent)
				return 1;
			poll(&pfd, 1, -1);
			continue;
		}
		if (k < 0)
			return -1;
		sent = true;
		total -= k;
		while (msg.msg_iovlen && (size_t)k >= msg.msg_iov->iov_len) {
			k -= msg.msg_iov->iov_len;
			msg.msg_iov++;
			msg.msg_iovlen--;
		}
		if (msg.msg_iovlen) {
			msg.msg_iov->iov_base = (char *)msg.msg_iov->iov_base + k;
			msg.msg_iov->iov_len -= k;
		}
	}
	return zc ? send_file_data(c, zc) : 0;
}

static struct req *writer_next(struct conn *c, bool *broken)
{
	struct req *r;

	pthread_mutex_lock(&c->lock);
	while (!c->done_head && !c->writer_stop)
		pthread_cond_wait(&c->cond, &c->lock);
	r = c->done_head;
	if (r) {
		c->done_head = r->next;
		if (!c->done_head)
			c->done_tail = NULL;
	}
	*broken = c->broken;
	pthread_mutex_unlock(&c->lock);
	return r;
}

/* @r's reply went out (or was dropped): release what it held, free it. */
static void reply_done(struct conn *c, struct req *r, bool broken)
{
	pthread_mutex_lock(&c->lock);
	c->broken = c->broken || broken;
	assert(c->outstanding > 0);
	c->outstanding--;
	c->held_bytes -= r->held;
	pthread_cond_broadcast(&c->room);
	pthread_mutex_unlock(&c->lock);
	req_free(r);
}

static bool send_failed(struct conn *c, struct req *r)
{
	log_msg("conn %u: reply handle=0x%llx: %s; dropping further replies",
		c->id, (unsigned long long)r->handle, strerror(errno));
	return true;
}

static void *writer_main(void *arg)
{
	struct conn *c = arg;
	struct req *r;
	bool broken;

	while ((r = writer_next(c, &broken))) {
		if (r->by_writer && !r->error)
			engine_write_buf(r);	/* written behind */
		if (!broken) {
			pthread_mutex_lock(&c->send_lock);
			if (send_replies(c, &r, 1, false) < 0)
				broken = send_failed(c, r);
			pthread_mutex_unlock(&c->send_lock);
		}
		reply_done(c, r, broken);
	}
	return NULL;
}

/* A reply failed to go out: the client is gone, the rest are dropped. */
static bool conn_broken(struct conn *c)
{
	bool broken;

	pthread_mutex_lock(&c->lock);
	broken = c->broken;
	pthread_mutex_unlock(&c->lock);
	return broken;
}

/*
 * Fast path: the reader sends the replies of the requests it served
 * itself, saving the hand-over to the writer, batched: they wait in
 * c->batch until the reader would block (no more requests buffered, or
 * back-pressure) or the batch is full, then go out in one sendmsg().
 * If sending could make the reader wait (the writer is on the socket, or
 * the socket is full), the writer sends them instead.
 */
static void reply_flush(struct conn *c)
{
	unsigned int i, n = c->nbatch;
	bool broken = false;
	int ret;

	if (!n)
		return;
	c->nbatch = 0;
	if (pthread_mutex_trylock(&c->send_lock)) {
		ret = 1;
	} else {
		broken = conn_broken(c);
		ret = broken ? 0 : send_replies(c, c->batch, n, true);
		if (ret < 0)
			broken = send_failed(c, c->batch[0]);
		pthread_mutex_unlock(&c->send_lock);
	}
	for (i = 0; i < n; i++) {
		if (ret == 1)
			conn_complete(c->batch[i]);
		else
			reply_done(c, c->batch[i], broken);
	}
}

static void reply_inline(struct conn *c, struct req *r)
{
	c->batch[c->nbatch++] = r;
	if (c->nbatch == REPLY_BATCH || r->zc)
		reply_flush(c);
}

/* Back-pressure: at most CONN_MAX_OUTSTANDING requests / bytes held. */
static bool conn_full(const struct conn *c, uint32_t bytes)
{
	return c->outstanding &&
	       (c->outstanding >= CONN_MAX_OUTSTANDING ||
		c->held_bytes + bytes > CONN_MAX_BYTES);
}

static void conn_reserve(struct conn *c, struct req *r, uint32_t bytes)
{
	pthread_mutex_lock(&c->lock);
	if (c->nbatch && conn_full(c, bytes)) {
		pthread_mutex_unlock(&c->lock);
		reply_flush(c);		/* they count as outstanding */
		pthread_mutex_lock(&c->lock);
	}
	while (conn_full(c, bytes))
		pthread_cond_wait(&c->room, &c->lock);
	c->outstanding++;
	c->held_bytes += bytes;
	r->held = bytes;
	pthread_mutex_unlock(&c->lock);
}

static struct req *req_new(struct conn *c, const unsigned char *h)
{
	struct req *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->conn = c;
	r->flags = get_be16(h + 4);
	r->type = get_be16(h + 6);
	r->handle = get_be64(h + 8);
	r->offset = get_be64(h + 16);
	r->len = get_be32(h + 24);
	return r;
}

static const char *cmd_name(uint16_t type)
{
	static const char *const names[] = {
		[NBD_CMD_READ] = "READ", [NBD_CMD_WRITE] = "WRITE",
		[NBD_CMD_DISC] = "DISC", [NBD_CMD_FLUSH] = "FLUSH",
		[NBD_CMD_TRIM] = "TRIM", [NBD_CMD_CACHE] = "CACHE",
		[NBD_CMD_WRITE_ZEROES] = "WRITE_ZEROES",
		[NBD_CMD_BLOCK_STATUS] = "BLOCK_STATUS",
		[NBD_CMD_RESIZE] = "RESIZE",
	};

	return type < ARRAY_SIZE(names) ? names[type] : "?";
}

static bool range_ok(const struct req *r)
{
	return r->offset <= cfg.exp.size && r->len <= cfg.exp.size - r->offset;
}

static uint16_t allowed_flags(uint16_t type)
{
	switch (type) {
	case NBD_CMD_WRITE:
	case NBD_CMD_TRIM:
	case NBD_CMD_FLUSH:
	case NBD_CMD_READ:
		return NBD_CMD_FLAG_FUA;
	case NBD_CMD_WRITE_ZEROES:
		return NBD_CMD_FLAG_FUA | NBD_CMD_FLAG_NO_HOLE;
	default:
		return 0;
	}
}

static uint32_t check_request(struct conn *c, struct req *r)
{
	bool writes = r->type != NBD_CMD_READ && r->type != NBD_CMD_FLUSH;

	if (r->type > NBD_CMD_WRITE_ZEROES || r->type == NBD_CMD_DISC ||
	    r->type == NBD_CMD_CACHE) {
		log_msg("conn %u: unknown command %s type=%u", c->id,
			cmd_name(r->type), r->type);
		return NBD_EINVAL;
	}
	if (r->flags & ~allowed_flags(r->type)) {
		log_msg("conn %u: command=%s with invalid flags=0x%x",
			c->id, cmd_name(r->type), r->flags);
		return NBD_EINVAL;
	}
	if (r->type == NBD_CMD_FLUSH)
		return 0;
	if (writes && cfg.exp.read_only)
		return NBD_EPERM;
	if (r->len == 0 || (r->type <= NBD_CMD_WRITE && r->len > NBD_MAX_PAYLOAD)) {
		log_msg("conn %u: command=%s length=%u out of 1..%u",
			c->id, cmd_name(r->type), r->len, NBD_MAX_PAYLOAD);
		return NBD_EINVAL;
	}
	if (!range_ok(r)) {
		log_msg("conn %u: command=%s offset=%llu length=%u past end size=%llu",
			c->id, cmd_name(r->type), (unsigned long long)r->offset, r->len,
			(unsigned long long)cfg.exp.size);
		return r->type == NBD_CMD_READ ? NBD_EINVAL : NBD_ENOSPC;
	}
	return 0;
}

/*
 * Transmission phase: @len bytes from the client into @dst (NULL: drop
 * them), through c->rbuf so that one recv() takes in as many pipelined
 * requests as have arrived.  A large payload with nothing buffered
 * goes straight to @dst.  0, or -1 with errno (ECONNRESET at EOF).
 */
static int conn_read(struct conn *c, void *dst, size_t len)
{
	while (len) {
		size_t n = c->rend - c->rstart;
		ssize_t got;

		if (!n)
			reply_flush(c);	/* about to wait for the client */
		if (!n && dst && len >= CONN_RBUF)
			return read_full(c->fd, dst, len);
		if (!n) {
			got = recv(c->fd, c->rbuf, CONN_RBUF, 0);
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				if (!got)
					errno = ECONNRESET;
				return -1;
			}
			c->rstart = 0;
			c->rend = got;
			continue;
		}
		if (n > len)
			n = len;
		if (dst) {
			memcpy(dst, c->rbuf + c->rstart, n);
			dst = (char *)dst + n;
		}
		c->rstart += n;
		len -= n;
	}
	return 0;
}

static void log_cut_write(struct conn *c, struct req *r)
{
	log_msg("conn %u: client vanished inside write payload handle=0x%llx length=%u",
		c->id, (unsigned long long)r->handle, r->len);
}

/* Read the payload of a WRITE (even one we will refuse). -1 = close. */
static int read_payload(struct conn *c, struct req *r)
{
	size_t alloc = ((size_t)r->len + 4095) & ~(size_t)4095;

	if (r->len > NBD_MAX_PAYLOAD) {
		log_msg("conn %u: write length=%u exceeds max payload=%u; closing",
			c->id, r->len, NBD_MAX_PAYLOAD);
		return -1;
	}
	if (posix_memalign(&r->buf, 4096, alloc)) {
		r->buf = NULL;
		r->error = NBD_ENOMEM;
		return conn_read(c, NULL, r->len);
	}
	if (conn_read(c, r->buf, r->len) < 0) {
		log_cut_write(c, r);
		return -1;
	}
	return 0;
}

static int alloc_read_buf(struct req *r)
{
	size_t alloc = ((size_t)r->len + 4095) & ~(size_t)4095;

	if (posix_memalign(&r->buf, 4096, alloc)) {
		r->buf = NULL;
		r->error = NBD_ENOMEM;
		return -1;
	}
	return 0;
}

/* One request: 1 = go on, 0 = NBD_CMD_DISC, -1 = close. */
static int serve_one(struct conn *c, const unsigned char *h)
{
	struct req *r = req_new(c, h);
	uint32_t hold;
	bool zc;
	int ret;

	if (!r)
		return -1;
	if (r->type == NBD_CMD_DISC) {
		log_dbg("conn %u: NBD_CMD_DISC", c->id);
		free(r);
		return 0;
	}
	r->error = check_request(c, r);
	zc = !r->error && engine_fast_path() && engine_zero_copy(r);
	r->by_writer = !r->error && engine_write_behind(r);
	hold = 0;
	if ((r->type == NBD_CMD_WRITE && r->len <= NBD_MAX_PAYLOAD) ||
	    (r->type == NBD_CMD_READ && !r->error && !zc))
		hold = r->len;
	conn_reserve(c, r, hold);
	ret = 0;
	if (r->type == NBD_CMD_WRITE)
		ret = read_payload(c, r);
	if (ret < 0) {
		pthread_mutex_lock(&c->lock);
		c->broken = true;	/* the stream is lost: no more replies */
		pthread_mutex_unlock(&c->lock);
		r->error = NBD_EIO;
		conn_complete(r);	/* the writer frees it */
		return -1;
	}
	if (r->by_writer) {
		conn_complete(r);	/* the writer writes it, replies */
		return 1;
	}
	if (r->type == NBD_CMD_READ && !r->error && conn_broken(c))
		r->error = NBD_EIO;	/* no one will take the data */
	if (r->type == NBD_CMD_READ && !r->error && zc) {
		r->zc = true;		/* sent by sendfile from the cache */
		reply_inline(c, r);
		return 1;
	}
	if (r->type == NBD_CMD_READ && !r->error)
		alloc_read_buf(r);
	if (r->error) {
		conn_complete(r);
		return 1;
	}
	if (engine_fast_path() && engine_try_inline(r)) {
		reply_inline(c, r);
		return 1;
	}
	/*
	 * Under --fair this may wait for the core's max_queued (back-
	 * pressure); no reply is held in c->batch then: the fast path that
	 * fills it is off with --fair.
	 */
	assert(!c->nbatch || !cfg.fair);
	engine_submit(r);
	return 1;
}

static void transmission(struct conn *c)
{
	unsigned char h[NBD_REQUEST_LEN];

	for (;;) {
		uint32_t magic;

		if (conn_read(c, h, sizeof(h)) < 0) {
			if (errno != ECONNRESET)
				log_msg("conn %u: read request: %s", c->id,
					strerror(errno));
			else
				log_dbg("conn %u: client closed", c->id);
			return;
		}
		magic = get_be32(h);
		if (magic != NBD_REQUEST_MAGIC) {
			log_msg("conn %u: bad request magic=0x%08x; closing",
				c->id, magic);
			return;
		}
		if (serve_one(c, h) <= 0)
			break;
	}
}

static void set_rcv_timeout(int fd, int secs)
{
	struct timeval tv = { .tv_sec = secs };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* Wait until every accepted request is replied (or dropped), then stop. */
static void conn_drain(struct conn *c)
{
	pthread_mutex_lock(&c->lock);
	while (c->outstanding)
		pthread_cond_wait(&c->room, &c->lock);
	c->writer_stop = true;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->writer, NULL);
}

static void conn_unlink(struct conn *c)
{
	struct conn **pp;

	pthread_mutex_lock(&conns_lock);
	for (pp = &conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	assert(nconns > 0);
	nconns--;
	pthread_cond_broadcast(&conns_cond);
	pthread_mutex_unlock(&conns_lock);
}

static void *reader_main(void *arg)
{
	struct conn *c = arg;

	set_rcv_timeout(c->fd, HANDSHAKE_TIMEOUT_S);
	c->rbuf = malloc(CONN_RBUF);
	if (c->rbuf && handshake(c) > 0) {
		set_rcv_timeout(c->fd, 0);
		log_dbg("conn %u: transmission (asked_block_size=%d)", c->id,
			c->asked_block_size);
		transmission(c);
		reply_flush(c);
	}
	conn_drain(c);
	if (cfg.fair)
		log_dbg("conn %u: closed (reader paused %lu times for max_queued)",
			c->id, c->sched_pauses);
	else
		log_dbg("conn %u: closed", c->id);
	close(c->fd);
	free(c->rbuf);
	conn_unlink(c);
	pthread_mutex_destroy(&c->send_lock);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->cond);
	pthread_cond_destroy(&c->room);
	free(c);
	return NULL;
}

static int conn_spawn(struct conn *c)
{
	pthread_attr_t attr;
	int err;

	err = pthread_create(&c->writer, NULL, writer_main, c);
	if (err)
		return err;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&c->reader, &attr, reader_main, c);
	pthread_attr_destroy(&attr);
	if (err) {
		c->writer_stop = true;
		pthread_cond_broadcast(&c->cond);
		pthread_join(c->writer, NULL);
	}
	return err;
}

/* Take over @fd; 0 = running, -1 = refused (fd closed). */
int conn_start(int fd, const char *peer)
{
	struct conn *c;
	int err;

	pthread_mutex_lock(&conns_lock);
	if (shutting_down || nconns >= cfg.max_conns) {
		pthread_mutex_unlock(&conns_lock);
		log_msg("refusing connection from %s: %s (max_conns=%u)", peer,
			shutting_down ? "shutting down" : "too many connections",
			cfg.max_conns);
		close(fd);
		return -1;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		pthread_mutex_unlock(&conns_lock);
		close(fd);
		return -1;
	}
	c->fd = fd;
	c->id = ++next_id;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	pthread_mutex_init(&c->send_lock, NULL);
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	pthread_cond_init(&c->room, NULL);
	err = conn_spawn(c);
	if (err) {
		pthread_mutex_unlock(&conns_lock);
		log_msg("conn from %s: pthread_create: %s", peer, strerror(err));
		close(fd);
		free(c);
		return -1;
	}
	c->next = conns;
	conns = c;
	nconns++;
	log_dbg("conn %u: accepted from %s", c->id, peer);
	pthread_mutex_unlock(&conns_lock);
	return 0;
}

/* SIGTERM: stop reading new requests everywhere; replies still go out. */
void conn_shutdown_all(void)
{
	struct conn *c;

	pthread_mutex_lock(&conns_lock);
	shutting_down = true;
	for (c = conns; c; c = c->next)
		shutdown(c->fd, SHUT_RD);
	pthread_mutex_unlock(&conns_lock);
}

/*
 * Wait for every connection to finish; after @grace_s seconds, cut the
 * remaining ones (a client that does not read its replies blocks its
 * writer in sendmsg()): SHUT_RDWR makes those sends fail, the replies are
 * dropped, and the drain completes.
 */
void conn_wait_all(unsigned int grace_s)
{
	struct timespec until;
	struct conn *c;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += grace_s;
	pthread_mutex_lock(&conns_lock);
	while (nconns &&
	       pthread_cond_timedwait(&conns_cond, &conns_lock, &until) == 0)
		;
	if (nconns)
		log_msg("shutdown: %u connection(s) still busy after %u s; cutting them",
			nconns, grace_s);
	for (c = conns; c; c = c->next)
		shutdown(c->fd, SHUT_RDWR);
	while (nconns)
		pthread_cond_wait(&conns_cond, &conns_lock);
	pthread_mutex_unlock(&conns_lock);
}

unsigned int conn_count(void)
{
	unsigned int n;

	pthread_mutex_lock(&conns_lock);
	n = nconns;
	pthread_mutex_unlock(&conns_lock);
	return n;
}
