// SPDX-License-Identifier: GPL-2.0
/*
 * The engine: one thread that takes requests from the
 * scheduling glue as the device model allows, starts them, holds
 * completions until their model deadline and passes them to the
 * connection's writer.  How a request is started:
 *
 *   --cache=page  READ/WRITE: pread/pwrite on the buffered descriptor
 *                 by a sync worker (FUA: RWF_DSYNC);
 *   --cache=none  READ/WRITE of whole aligned blocks: libaio on the
 *                 O_DIRECT descriptor; an unaligned READ reads its
 *                 aligned extent into a bounce buffer with libaio and
 *                 copies out; an unaligned WRITE is a read-modify-write
 *                 of its edge blocks by a sync worker;
 *   both          FLUSH (fdatasync), TRIM, WRITE_ZEROES: a sync worker.
 *
 * Range lock (--cache=none): a read-modify-write rewrites whole blocks,
 * so it must not overlap any other write, trim or zeroing in flight, or
 * it could write back stale bytes over theirs.  Every write-type request
 * locks its aligned extent, a read-modify-write exclusively, the rest
 * shared; a request that conflicts waits on eng.blocked (in dispatch
 * order, after any earlier waiter it conflicts with) until the holder
 * completes.  Reads take no lock: a read overlapping a write in flight
 * may see either, as on any disk.
 *
 * One eventfd wakes the engine: libaio completions (io_set_eventfd),
 * new requests (engine_submit) and sync-worker completions.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/falloc.h>

#include "fairq_nbd.h"
#include "nbd_proto.h"

enum { REAP_BATCH = 64 };

static struct {
	io_context_t ctx;
	int efd;
	pthread_t thread, worker[SYNC_WORKERS];
	pthread_mutex_t lock;		/* protects the lists and flags below */
	pthread_cond_t wcond;
	struct req *work_head, *work_tail;	/* for the sync workers */
	struct req *wdone;			/* finished by a sync worker */
	bool stopping, worker_stop;
	bool fast;			/* engine_fast_path(), fixed at start */
	/* engine thread only */
	unsigned int inflight;		/* dispatched, not completed [requests] */
	struct req *timers;		/* done early, sorted by deadline */
	struct req *locked;		/* holding a range lock, via lk_next */
	struct req *blocked;		/* waiting for one, dispatch order */
} eng = { .lock = PTHREAD_MUTEX_INITIALIZER, .wcond = PTHREAD_COND_INITIALIZER };

static void engine_kick(void)
{
	uint64_t one = 1;

	if (write(eng.efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_msg("engine: eventfd write: %s", strerror(errno));
}

/* --cache=none: the aligned extent a READ/WRITE/TRIM/ZEROES covers. */
static void dio_extent(struct req *r)
{
	uint64_t a = cfg.exp.dio_align;
	uint64_t lo = r->offset & ~(a - 1);
	uint64_t hi = (r->offset + r->len + a - 1) & ~(a - 1);

	r->a_off = lo;
	r->a_len = hi - lo;
	r->a_excl = r->type == NBD_CMD_WRITE &&
		    (lo != r->offset || hi != r->offset + r->len);
}

/*
 * Reader threads: a validated request enters the scheduler (under --fair
 * it may wait there for the core's max_queued: sched_glue.c).
 */
void engine_submit(struct req *r)
{
	assert(r->conn && !r->error);
	assert(r->type == NBD_CMD_FLUSH ||
	       r->offset + r->len <= cfg.exp.size);
	if (cfg.cache == CACHE_NONE && r->type != NBD_CMD_FLUSH)
		dio_extent(r);
	r->arrive_ns = now_ns();
	glue_enqueue(r, r->arrive_ns);
	engine_kick();
}

static bool is_rw(const struct req *r)
{
	return r->type == NBD_CMD_READ || r->type == NBD_CMD_WRITE;
}

static bool dio_aligned(const struct req *r)
{
	return r->a_off == r->offset && r->a_len == r->len;
}

/* --cache=none: every write-type request holds its extent while in flight */
static bool needs_range(const struct req *r)
{
	return r->a_len && r->type != NBD_CMD_READ;
}

/*
 * All of @buf at @off, retrying short transfers: @len, or -errno, or the
 * bytes moved before the file ended.
 */
static long rw_full(int fd, bool write, void *buf, uint32_t len, uint64_t off,
		    int flags)
{
	uint32_t done = 0;

	while (done < len) {
		struct iovec iov = {
			.iov_base = (char *)buf + done, .iov_len = len - done,
		};
		ssize_t n = write ? pwritev2(fd, &iov, 1, off + done, flags) :
				    preadv2(fd, &iov, 1, off + done, flags);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		done += n;
	}
	return done;
}

static void rw_result(struct req *r, long res, long want);

static int fua_flags(const struct req *r)
{
	return r->flags & NBD_CMD_FLAG_FUA ? RWF_DSYNC : 0;
}

/* ---- fast path: the reader thread serves page-cache hits ------------- */

/*
 * True when nothing between a request and the file needs the engine:
 * the page cache, FIFO order, no device model.
 */
bool engine_fast_path(void)
{
	return eng.fast;
}

/*
 * Reader threads, fast path only: do @r now if the page cache takes it
 * without a disk wait: a READ of cached pages (RWF_NOWAIT), a non-FUA
 * WRITE (RWF_NOWAIT where the file system supports it for buffered
 * writes; where it does not (EOPNOTSUPP: ext4 on 6.18), a plain pwrite, which
 * only copies into the page cache unless dirty throttling holds it, as
 * it would hold any writer).  True = done, r->error clear, reply it;
 * false = submit it (a part done is redone whole: the same bytes).
 */
bool engine_try_inline(struct req *r)
{
	static bool no_nowait_write;	/* set once, by any reader */
	bool write = r->type == NBD_CMD_WRITE;
	int flags = RWF_NOWAIT;
	long n;

	if (!is_rw(r) || (write && fua_flags(r)))
		return false;
	if (write && __atomic_load_n(&no_nowait_write, __ATOMIC_RELAXED))
		flags = 0;
	n = rw_full(cfg.exp.fd_buf, write, r->buf, r->len, r->offset, flags);
	if (n == -EOPNOTSUPP && write) {
		__atomic_store_n(&no_nowait_write, true, __ATOMIC_RELAXED);
		n = rw_full(cfg.exp.fd_buf, true, r->buf, r->len, r->offset, 0);
	}
	return n == (long)r->len;
}

#ifndef __NR_cachestat
#define __NR_cachestat	451	/* Linux 6.5, the same on every architecture */
#endif

struct fq_cachestat_range {
	uint64_t off, len;
};

struct fq_cachestat {
	uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted;
	uint64_t nr_recently_evicted;
};

/* Every page of @len bytes at @off is in the page cache (cachestat(2)). */
static bool page_cached(uint64_t off, uint32_t len)
{
	static bool no_cachestat;	/* ENOSYS: never zero-copy reads */
	struct fq_cachestat_range range = { .off = off, .len = len };
	struct fq_cachestat cs;
	uint64_t pg = sysconf(_SC_PAGESIZE);

	if (__atomic_load_n(&no_cachestat, __ATOMIC_RELAXED))
		return false;
	if (syscall(__NR_cachestat, cfg.exp.fd_buf, &range, &cs, 0) < 0) {
		if (errno == ENOSYS)
			__atomic_store_n(&no_cachestat, true, __ATOMIC_RELAXED);
		return false;
	}
	return cs.nr_cache == (off + len - 1) / pg - off / pg + 1;
}

/*
 * Reader threads, fast path only: may READ @r skip the payload buffer?
 * A large READ whose pages are all cached is sent from the page cache by
 * sendfile(2) (transmission.c): the server copies nothing, where pread
 * and send copied it twice.  Small requests are cheaper copied.
 */
bool engine_zero_copy(const struct req *r)
{
	return eng.fast && r->len >= ZC_MIN && r->type == NBD_CMD_READ &&
	       page_cached(r->offset, r->len);
}

/*
 * Reader threads, fast path only: is WRITE @r written behind?  A large
 * non-FUA WRITE is taken into a buffer by the reader and written into
 * the page cache by the connection's writer thread (engine_write_buf())
 * while the reader takes in the next: the two copies, socket to buffer
 * and buffer to page cache, run side by side.  A small one the reader
 * writes itself (engine_try_inline()).
 */
bool engine_write_behind(const struct req *r)
{
	return eng.fast && r->len >= ZC_MIN && r->type == NBD_CMD_WRITE &&
	       !fua_flags(r);
}

/*
 * A connection's writer thread: a WRITE written behind, its payload in
 * r->buf, into the page cache.  One thread per connection writes: a
 * second would only wait for the file's lock.
 */
void engine_write_buf(struct req *r)
{
	rw_result(r, rw_full(cfg.exp.fd_buf, true, r->buf, r->len, r->offset,
			     0), r->len);
}

/* ---- sync workers: what libaio cannot do ------------------------------ */

static int write_zero_bytes(int fd, uint64_t off, uint64_t len)
{
	static const char zero[65536];

	while (len) {
		size_t n = len < sizeof(zero) ? len : sizeof(zero);
		ssize_t w = pwrite(fd, zero, n, off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		off += w;
		len -= w;
	}
	return 0;
}

static int do_zero(struct req *r, int fd)
{
	int keep = FALLOC_FL_KEEP_SIZE;

	if (!(r->flags & NBD_CMD_FLAG_NO_HOLE) &&
	    fallocate(fd, FALLOC_FL_PUNCH_HOLE | keep, r->offset, r->len) == 0)
		return 0;
	if (fallocate(fd, FALLOC_FL_ZERO_RANGE | keep, r->offset, r->len) == 0)
		return 0;
	return write_zero_bytes(fd, r->offset, r->len);
}

static int do_trim(struct req *r, int fd)
{
	int mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;

	if (fallocate(fd, mode, r->offset, r->len) == 0)
		return 0;
	/* TRIM is advisory: a file system without holes simply keeps data */
	if (errno == EOPNOTSUPP || errno == ENOTTY)
		return 0;
	return -1;
}

static void log_failed(const struct req *r, const char *what)
{
	log_msg("backend: command type=%u offset=%llu length=%u: %s",
		r->type, (unsigned long long)r->offset, r->len, what);
}

/* A READ/WRITE moved @res bytes of the @want it asked for. */
static void rw_result(struct req *r, long res, long want)
{
	if (res == want)
		return;
	if (res < 0) {
		log_failed(r, strerror(-res));
		r->error = errno_to_nbd(-res);
	} else {
		log_msg("backend: command type=%u offset=%llu length=%u: short transfer=%ld of %ld",
			r->type, (unsigned long long)r->offset, r->len, res,
			want);
		r->error = r->type == NBD_CMD_WRITE ? NBD_ENOSPC : NBD_EIO;
	}
}

/*
 * --cache=none, a WRITE with unaligned edges: read the partial first and
 * last blocks of its extent, lay the payload over them, write the extent
 * back (the range lock keeps every other write off it meanwhile).  An
 * extent that runs past the end of a file whose size is not a multiple
 * of the alignment cannot be written with O_DIRECT without growing the
 * file: that one goes through the buffered descriptor (O_DIRECT reads
 * write back dirty pages first, so both views agree).
 */
static long do_rmw(struct req *r)
{
	uint32_t a = cfg.exp.dio_align, head = r->offset - r->a_off;
	bool tail = (r->offset + r->len) & (a - 1);
	int fd = cfg.exp.fd_direct;
	long n;

	if (r->a_off + r->a_len > cfg.exp.size)
		return rw_full(cfg.exp.fd_buf, true, r->buf, r->len,
			       r->offset, fua_flags(r));
	if (posix_memalign(&r->bounce, 4096, r->a_len)) {
		r->bounce = NULL;
		return -ENOMEM;
	}
	if (head) {
		n = rw_full(fd, false, r->bounce, a, r->a_off, 0);
		if (n != a)
			return n < 0 ? n : -EIO;
	}
	if (tail && !(head && r->a_len == a)) {
		n = rw_full(fd, false, (char *)r->bounce + r->a_len - a, a,
			    r->a_off + r->a_len - a, 0);
		if (n != a)
			return n < 0 ? n : -EIO;
	}
	memcpy((char *)r->bounce + head, r->buf, r->len);
	n = rw_full(fd, true, r->bounce, r->a_len, r->a_off, fua_flags(r));
	return n == r->a_len ? (long)r->len : n;
}

static void do_sync_rw(struct req *r)
{
	bool write = r->type == NBD_CMD_WRITE;
	long n;

	if (cfg.cache == CACHE_NONE)
		n = do_rmw(r);	/* aligned ones went to libaio */
	else
		n = rw_full(cfg.exp.fd_buf, write, r->buf, r->len, r->offset,
			    write ? fua_flags(r) : 0);
	rw_result(r, n, r->len);
	free(r->bounce);
	r->bounce = NULL;
}

static void do_sync_op(struct req *r)
{
	int fd = cfg.exp.fd_buf;
	int ret = 0;

	switch (r->type) {
	case NBD_CMD_READ:
	case NBD_CMD_WRITE:
		do_sync_rw(r);
		return;
	case NBD_CMD_FLUSH:
		ret = fdatasync(fd);
		break;
	case NBD_CMD_TRIM:
		ret = do_trim(r, fd);
		break;
	case NBD_CMD_WRITE_ZEROES:
		ret = do_zero(r, fd);
		break;
	default:
		assert(!"not a sync operation");
	}
	if (ret == 0 && (r->flags & NBD_CMD_FLAG_FUA) &&
	    r->type != NBD_CMD_FLUSH)
		ret = fdatasync(fd);
	if (ret < 0) {
		log_failed(r, strerror(errno));
		r->error = errno_to_nbd(errno);
	}
}

static void *worker_main(void *arg)
{
	struct req *r;

	(void)arg;
	pthread_mutex_lock(&eng.lock);
	for (;;) {
		while (!eng.work_head && !eng.worker_stop)
			pthread_cond_wait(&eng.wcond, &eng.lock);
		r = eng.work_head;
		if (!r)
			break;
		eng.work_head = r->next;
		if (!eng.work_head)
			eng.work_tail = NULL;
		pthread_mutex_unlock(&eng.lock);
		do_sync_op(r);
		pthread_mutex_lock(&eng.lock);
		r->next = eng.wdone;
		eng.wdone = r;
		engine_kick();
	}
	pthread_mutex_unlock(&eng.lock);
	return NULL;
}

static void worker_queue(struct req *r)
{
	pthread_mutex_lock(&eng.lock);
	r->next = NULL;
	if (eng.work_tail)
		eng.work_tail->next = r;
	else
		eng.work_head = r;
	eng.work_tail = r;
	pthread_cond_signal(&eng.wcond);
	pthread_mutex_unlock(&eng.lock);
}

/* ---- range lock (--cache=none) ---------------------------------------- */

static bool ranges_conflict(const struct req *x, const struct req *y)
{
	return (x->a_excl || y->a_excl) &&
	       x->a_off < y->a_off + y->a_len &&
	       y->a_off < x->a_off + x->a_len;
}

/* @r may start: no holder and no waiter before @r (NULL: all) conflicts */
static bool range_free(const struct req *r, const struct req *upto)
{
	const struct req *h;

	for (h = eng.locked; h; h = h->lk_next)
		if (ranges_conflict(r, h))
			return false;
	for (h = eng.blocked; h && h != upto; h = h->lk_next)
		if (ranges_conflict(r, h))
			return false;
	return true;
}

static void range_hold(struct req *r)
{
	r->lk_next = eng.locked;
	eng.locked = r;
}

static void start_one(struct req *r, uint64_t now);

/* @r finished its I/O: drop its range, start the waiters it held up. */
static void range_release(struct req *r, uint64_t now)
{
	struct req **pp, *w, *run = NULL, **run_tail = &run;

	if (!needs_range(r))
		return;
	for (pp = &eng.locked; *pp != r; pp = &(*pp)->lk_next)
		assert(*pp);
	*pp = r->lk_next;
	for (pp = &eng.blocked; (w = *pp);) {
		if (!range_free(w, w)) {
			pp = &w->lk_next;
			continue;
		}
		*pp = w->lk_next;
		range_hold(w);
		w->next = NULL;
		*run_tail = w;
		run_tail = &w->next;
	}
	while ((w = run)) {
		run = w->next;
		start_one(w, now);
	}
}

/* ---- completion ------------------------------------------------------- */

static void req_finish(struct req *r, uint64_t now)
{
	assert(eng.inflight > 0);
	eng.inflight--;
	devmodel_release(r);
	if (cfg.verbose > 1)
		log_msg("trace: type=%u arrive=%llu start=%llu dispatch=%llu deadline=%llu finish=%llu [us]",
			r->type, (unsigned long long)r->arrive_ns / 1000,
			(unsigned long long)r->start_ns / 1000,
			(unsigned long long)r->dispatch_ns / 1000,
			(unsigned long long)r->deadline_ns / 1000,
			(unsigned long long)now / 1000);
	glue_complete(r, r->error ? -EIO : 0, now);
	conn_complete(r);
}

/* The real I/O is done; the model may want the reply held a while. */
static void io_done(struct req *r, uint64_t now)
{
	struct req **pp;

	range_release(r, now);
	if (r->deadline_ns <= now) {
		req_finish(r, now);
		return;
	}
	for (pp = &eng.timers; *pp; pp = &(*pp)->next)
		if ((*pp)->deadline_ns > r->deadline_ns)
			break;
	r->next = *pp;
	*pp = r;
}

static void expire_timers(uint64_t now)
{
	while (eng.timers && eng.timers->deadline_ns <= now) {
		struct req *r = eng.timers;

		eng.timers = r->next;
		req_finish(r, now);
	}
}

/* A libaio READ/WRITE completed with @res. */
static void aio_result(struct req *r, long res)
{
	long want;

	if (!r->bounce) {
		rw_result(r, res, r->len);
		return;
	}
	/* an unaligned READ: its extent may end past a short file's end */
	want = r->offset + r->len - r->a_off;
	rw_result(r, res >= want ? want : res, want);
	if (!r->error)
		memcpy(r->buf, (char *)r->bounce + (r->offset - r->a_off),
		       r->len);
	free(r->bounce);
	r->bounce = NULL;
}

static void reap_aio(uint64_t now)
{
	struct io_event ev[REAP_BATCH];
	struct timespec zero = { 0, 0 };
	int i, n;

	do {
		n = io_getevents(eng.ctx, 0, REAP_BATCH, ev, &zero);
		for (i = 0; i < n; i++) {
			struct req *r = (struct req *)((char *)ev[i].obj -
					offsetof(struct req, iocb));

			aio_result(r, (long)ev[i].res);
			io_done(r, now);
		}
	} while (n == REAP_BATCH);
}

static void reap_worker(uint64_t now)
{
	struct req *list, *r;

	pthread_mutex_lock(&eng.lock);
	list = eng.wdone;
	eng.wdone = NULL;
	pthread_mutex_unlock(&eng.lock);
	while ((r = list)) {
		list = r->next;
		io_done(r, now);
	}
}

/* ---- dispatch --------------------------------------------------------- */

/* --cache=none: whole aligned blocks, or an unaligned READ's extent. */
static void start_aio(struct req *r, uint64_t now)
{
	struct iocb *iocbs[1] = { &r->iocb };
	int fd = cfg.exp.fd_direct;
	int ret;

	r->iov = (struct iovec){ .iov_base = r->buf, .iov_len = r->len };
	if (!dio_aligned(r)) {
		assert(r->type == NBD_CMD_READ);
		if (posix_memalign(&r->bounce, 4096, r->a_len)) {
			r->bounce = NULL;
			rw_result(r, -ENOMEM, r->len);
			io_done(r, now);
			return;
		}
		r->iov = (struct iovec){ .iov_base = r->bounce,
					 .iov_len = r->a_len };
	}
	if (r->type == NBD_CMD_READ)
		io_prep_preadv2(&r->iocb, fd, &r->iov, 1, r->a_off, 0);
	else
		io_prep_pwritev2(&r->iocb, fd, &r->iov, 1, r->a_off,
				 fua_flags(r));
	io_set_eventfd(&r->iocb, eng.efd);
	ret = io_submit(eng.ctx, 1, iocbs);
	if (ret != 1) {
		aio_result(r, ret < 0 ? ret : -EIO);
		io_done(r, now);
	}
}

static void start_one(struct req *r, uint64_t now)
{
	assert(!r->error);
	r->dispatch_ns = now;
	devmodel_charge(r, now);
	if (cfg.cache == CACHE_NONE && is_rw(r) &&
	    (dio_aligned(r) || r->type == NBD_CMD_READ))
		start_aio(r, now);
	else
		worker_queue(r);
}

static void fill(uint64_t now)
{
	while (eng.inflight < devmodel_depth() &&
	       devmodel_ready_at(now) <= now) {
		struct req *r = glue_dispatch(now);
		struct req **pp;

		if (!r)
			break;
		eng.inflight++;
		if (needs_range(r) && !range_free(r, NULL)) {
			for (pp = &eng.blocked; *pp; pp = &(*pp)->lk_next)
				;
			r->lk_next = NULL;
			*pp = r;
			continue;
		}
		if (needs_range(r))
			range_hold(r);
		start_one(r, now);
	}
}
static uint64_t next_wake(uint64_t now)
{
	uint64_t t = UINT64_MAX, e;

	if (eng.timers)
		t = eng.timers->deadline_ns;
	if (eng.inflight < devmodel_depth() && !glue_idle()) {
		e = devmodel_ready_at(now);
		if (e > now && e < t)
			t = e;
	}
	e = glue_next_event(now);
	if (e && e < t)
		t = e;
	return t;
}

static void wait_event(uint64_t wake, uint64_t now)
{
	struct pollfd pfd = { .fd = eng.efd, .events = POLLIN };
	struct timespec ts, *tsp = NULL;
	uint64_t cnt;

	if (wake != UINT64_MAX) {
		uint64_t d = wake > now ? wake - now : 0;

		ts.tv_sec = d / 1000000000ull;
		ts.tv_nsec = d % 1000000000ull;
		tsp = &ts;
	}
	if (ppoll(&pfd, 1, tsp, NULL) > 0 &&
	    read(eng.efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
		log_msg("engine: eventfd read: %s", strerror(errno));
}

static bool engine_done(void)
{
	bool stop;

	pthread_mutex_lock(&eng.lock);
	stop = eng.stopping;
	pthread_mutex_unlock(&eng.lock);
	return stop && !eng.inflight && glue_idle();
}

static void *engine_main(void *arg)
{
	(void)arg;
	prctl(PR_SET_TIMERSLACK, 1UL);
	for (;;) {
		uint64_t now = now_ns();

		reap_aio(now);
		reap_worker(now);
		expire_timers(now);
		fill(now);
		if (engine_done())
			break;
		wait_event(next_wake(now), now_ns());
	}
	return NULL;
}

int engine_start(void)
{
	int ret, i;

	eng.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (eng.efd < 0) {
		log_msg("engine: eventfd: %s", strerror(errno));
		return -1;
	}
	ret = io_setup(DEPTH_MAX, &eng.ctx);
	if (ret < 0) {
		log_msg("engine: io_setup nr_events=%d: %s", DEPTH_MAX,
			strerror(-ret));
		return -1;
	}
	eng.fast = cfg.cache == CACHE_PAGE && !cfg.fair && !cfg.dm.bw_bps &&
		   !cfg.dm.iops && !cfg.dm.latency_ns && !cfg.dm.depth;
	for (i = 0, ret = 0; i < SYNC_WORKERS && !ret; i++)
		ret = pthread_create(&eng.worker[i], NULL, worker_main, NULL);
	if (!ret)
		ret = pthread_create(&eng.thread, NULL, engine_main, NULL);
	if (ret) {
		log_msg("engine: pthread_create: %s", strerror(ret));
		return -1;
	}
	return 0;
}

/* After every connection is gone: drain what is left and stop. */
void engine_stop(void)
{
	int i;

	pthread_mutex_lock(&eng.lock);
	eng.stopping = true;
	pthread_mutex_unlock(&eng.lock);
	engine_kick();
	pthread_join(eng.thread, NULL);
	pthread_mutex_lock(&eng.lock);
	eng.worker_stop = true;
	pthread_cond_broadcast(&eng.wcond);
	pthread_mutex_unlock(&eng.lock);
	for (i = 0; i < SYNC_WORKERS; i++)
		pthread_join(eng.worker[i], NULL);
	io_destroy(eng.ctx);
	close(eng.efd);
}
