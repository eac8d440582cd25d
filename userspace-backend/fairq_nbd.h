/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared types of fairq-nbd, the NBD server that serves as
 * the lower disk of fairq in tests and benchmarks.
 *
 * Data path, one arrow per file:
 *
 *   conn reader (transmission.c) --glue_enqueue--> sched_glue.c
 *        (--fair: waits there while the core is over max_queued)
 *   engine thread (aio_backend.c) --glue_dispatch--> devmodel.c gate
 *        --io_submit / sync worker--> completion --> devmodel deadline
 *        --glue_complete--> conn writer (transmission.c) --> reply
 *
 * Threads: main (accept, signals), one engine, a pool of sync workers
 * (flush, trim, write-zeroes, page-cache reads and writes, read-modify-
 * write), and a reader plus a writer per connection.
 *
 * Fast path (--cache=page, no device model, no --fair): the reader does
 * a READ/WRITE itself when the page cache can serve it without blocking
 * (RWF_NOWAIT) and queues the reply; only a miss goes to the engine.
 * From ZC_MIN bytes on, a cached READ is sent from the page cache
 * (sendfile), and a non-FUA WRITE's payload, once all in a buffer, is
 * written into the page cache by the connection's writer while the
 * reader takes in the next.
 */
#ifndef FAIRQ_NBD_H
#define FAIRQ_NBD_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <pthread.h>
#include <sys/uio.h>
#include <libaio.h>

#include "../sched/fq_sched.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

enum {
	NBD_MAX_PAYLOAD = 32 << 20,	/* largest READ/WRITE [bytes] */
	NBD_PREF_BLOCK = 4096,		/* preferred block size [bytes] */
	CONN_MAX_OUTSTANDING = 256,	/* requests accepted, not replied */
	CONN_MAX_BYTES = 64 << 20,	/* payload bytes held per connection */
	CONN_RBUF = 64 << 10,		/* receive buffer per connection */
	CONN_SNDBUF = 4 << 20,		/* unix socket SO_SNDBUF [bytes] */
	REPLY_BATCH = 32,		/* replies sent in one sendmsg() */
	HANDSHAKE_TIMEOUT_S = 30,	/* option haggling must finish by then */
	HANDSHAKE_MAX_OPTS = 128,	/* options per connection */
	OPT_MAX_LEN = 64 << 10,		/* largest option payload accepted */
	DEPTH_DEFAULT = 64,		/* requests in flight on the backend */
	DEPTH_MAX = 1024,
	DRAIN_TIMEOUT_S = 10,		/* default --drain-timeout [s] */
	SYNC_WORKERS = 8,		/* sync worker threads */
	ZC_MIN = 64 << 10,		/* fast path: sendfile, write-behind from here [bytes] */
};

/* --cache: where READ/WRITE data goes through. */
enum cache_mode {
	CACHE_PAGE,	/* buffered I/O through the page cache (default) */
	CACHE_NONE,	/* O_DIRECT with libaio; unaligned edges bounced */
};

/* The one export: a file or block device, opened once. */
struct nbd_export {
	const char *path;
	const char *name;	/* export name; "" is the default export */
	const char *desc;	/* NBD_INFO_DESCRIPTION text */
	int fd_direct;		/* O_DIRECT descriptor, -1 if refused */
	int fd_buf;		/* buffered descriptor, always open */
	uint64_t size;		/* [bytes] */
	uint32_t dio_align;	/* alignment fd_direct needs [bytes] */
	uint32_t pref_block;	/* advertised preferred block size [bytes] */
	bool read_only;
	bool is_bdev;
};

struct conn;

/* One NBD request from header to reply. */
struct req {
	struct req *next;	/* link on exactly one list at a time */
	struct conn *conn;
	uint64_t handle;	/* client cookie, echoed in the reply */
	uint64_t offset;	/* [bytes] */
	uint32_t len;		/* [bytes] */
	uint16_t type;		/* NBD_CMD_* */
	uint16_t flags;		/* NBD_CMD_FLAG_* */
	uint32_t error;		/* NBD_E* for the reply, 0 = success */
	void *buf;		/* payload, page aligned, NULL if none */
	uint32_t held;		/* bytes counted in conn->held_bytes */
	bool in_sched;		/* passed through fq_sched (glue owns fq) */
	bool zc;		/* READ: reply data sent from the file, no buf */
	bool by_writer;		/* large fast-path WRITE: the conn's writer does it */
	uint64_t arrive_ns;	/* entered the scheduler [ns] */
	uint64_t start_ns;	/* device model: service started [ns] */
	uint64_t dispatch_ns;	/* the engine dispatched it [ns] */
	uint64_t deadline_ns;	/* device model: complete not before [ns] */
	/* --cache=none: the aligned extent the request covers on disk */
	uint64_t a_off;		/* [bytes], dio_align multiple */
	uint32_t a_len;		/* [bytes], 0 = takes no range lock */
	bool a_excl;		/* read-modify-write: exclusive range lock */
	struct req *lk_next;	/* engine: range lock holders / waiters */
	void *bounce;		/* aligned buffer for a_off..+a_len, or NULL */
	struct iocb iocb;
	struct iovec iov;
	struct fq_req fq;	/* used only in --fair mode */
};

/* One client connection. */
struct conn {
	struct conn *next;	/* server's connection list */
	int fd;
	unsigned int id;
	char peer[64];		/* printable peer address */
	pthread_t reader, writer;
	unsigned char *rbuf;	/* reader: bytes received, not yet parsed */
	uint32_t rstart, rend;	/* reader: the unparsed part of rbuf */
	struct req *batch[REPLY_BATCH];	/* reader: served, reply not sent */
	unsigned int nbatch;
	pthread_mutex_t send_lock;	/* held while a reply is on the socket */
	pthread_mutex_t lock;	/* protects everything below */
	pthread_cond_t cond;		/* writer: a reply queued, or stop */
	pthread_cond_t room;		/* an outstanding request finished */
	struct req *done_head, *done_tail;	/* replies to send, in order */
	unsigned int outstanding;	/* accepted, not yet replied [requests] */
	size_t held_bytes;	/* payload held by outstanding requests */
	bool writer_stop;
	bool broken;		/* a reply write failed: discard the rest */
	bool no_zeroes;		/* client set NBD_FLAG_C_NO_ZEROES */
	bool asked_block_size;	/* NBD_INFO_BLOCK_SIZE requested (min 1: no limit) */
	/* reader only (sched_glue.c, under its lock) */
	unsigned long sched_pauses;	/* waits for the core's max_queued */
};

/* Device model parameters; 0 means "not limited". */
struct devmodel_cfg {
	uint64_t bw_bps;	/* [bytes/s] */
	uint64_t iops;		/* [requests/s] */
	uint64_t latency_ns;	/* fixed service time [ns] */
	unsigned int depth;	/* requests the disk serves at once */
};

struct server_cfg {
	const char *unix_path;
	const char *tcp_addr;	/* bind address, loopback by default */
	const char *tcp_port;
	bool allow_remote;	/* non-loopback bind addresses allowed */
	const char *fair;	/* "cfq", "sfq" or NULL (FIFO) */
	const char *fair_set[16];	/* "name=value" sched tunables */
	unsigned int nfair_set;
	unsigned int max_conns;
	unsigned int drain_timeout_s;	/* SIGTERM: then cut stuck clients */
	int verbose;
	enum cache_mode cache;	/* --cache */
	struct devmodel_cfg dm;
	struct nbd_export exp;
};

extern struct server_cfg cfg;

/* util: logging and time */
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#define __noreturn	__attribute__((noreturn))

void log_msg(const char *fmt, ...) __printf(1, 2);
void log_dbg(const char *fmt, ...) __printf(1, 2);
uint64_t now_ns(void);
int read_full(int fd, void *buf, size_t len);
int write_full(int fd, const void *buf, size_t len);
int skip_bytes(int fd, uint64_t len);
int errno_to_nbd(int err);

/* export.c */
int export_open(struct nbd_export *exp, uint64_t create_size,
		enum cache_mode *cache);
void export_close(struct nbd_export *exp);
uint16_t export_tx_flags(const struct nbd_export *exp);

/* handshake.c: 1 = go to transmission, 0 = client left, -1 = error */
int handshake(struct conn *c);

/* transmission.c */
int conn_start(int fd, const char *peer);
void conn_shutdown_all(void);
void conn_wait_all(unsigned int grace_s);
unsigned int conn_count(void);
void conn_complete(struct req *r);

/* aio_backend.c */
int engine_start(void);
void engine_submit(struct req *r);
void engine_stop(void);
bool engine_fast_path(void);
bool engine_try_inline(struct req *r);
bool engine_zero_copy(const struct req *r);
bool engine_write_behind(const struct req *r);
void engine_write_buf(struct req *r);

/* devmodel.c */
void devmodel_init(const struct devmodel_cfg *dm);
uint64_t devmodel_ready_at(uint64_t now);
void devmodel_charge(struct req *r, uint64_t now);
void devmodel_release(const struct req *r);
unsigned int devmodel_depth(void);

/* sched_glue.c */
bool glue_fair_available(void);
int glue_init(const char *policy, unsigned int depth,
	      const char *const *sets, unsigned int nsets);
void glue_enqueue(struct req *r, uint64_t now);
struct req *glue_dispatch(uint64_t now);
void glue_complete(struct req *r, int status, uint64_t now);
uint64_t glue_next_event(uint64_t now);
bool glue_idle(void);
void glue_fini(void);

#endif /* FAIRQ_NBD_H */
