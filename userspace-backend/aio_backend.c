// SPDX-License-Identifier: GPL-2.0
/*
 * The engine: one thread that takes requests from the
 * scheduling glue as the device model allows, submits READ/WRITE with
 * libaio (O_DIRECT where aligned, else the buffered descriptor), hands
 * FLUSH/TRIM/WRITE_ZEROES to a sync worker thread, holds completions
 * until their model deadline and passes them to the connection's writer.
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
#include <linux/falloc.h>

#include "fairq_nbd.h"
#include "nbd_proto.h"

enum { REAP_BATCH = 64 };

static struct {
	io_context_t ctx;
	int efd;
	pthread_t thread, worker;
	pthread_mutex_t lock;		/* protects the lists and flags below */
	pthread_cond_t wcond;
	struct req *work_head, *work_tail;	/* for the sync worker */
	struct req *wdone;			/* finished by the sync worker */
	bool stopping, worker_stop;
	/* engine thread only */
	unsigned int inflight;		/* dispatched, not completed [requests] */
	struct req *timers;		/* done early, sorted by deadline */
} eng = { .lock = PTHREAD_MUTEX_INITIALIZER, .wcond = PTHREAD_COND_INITIALIZER };

static void engine_kick(void)
{
	uint64_t one = 1;

	if (write(eng.efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_msg("engine: eventfd write: %s", strerror(errno));
}

/* Reader threads: a validated request enters the scheduler. */
void engine_submit(struct req *r)
{
	assert(r->conn && !r->error);
	assert(r->type == NBD_CMD_FLUSH ||
	       r->offset + r->len <= cfg.exp.size);
	r->arrive_ns = now_ns();
	glue_enqueue(r, r->arrive_ns);
	engine_kick();
}

static bool use_direct(const struct req *r)
{
	uint32_t a = cfg.exp.dio_align;

	return cfg.exp.fd_direct >= 0 && !((r->offset | r->len) & (a - 1));
}

/* ---- sync worker: the operations libaio cannot do -------------------- */

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

static void do_sync_op(struct req *r)
{
	int fd = cfg.exp.fd_buf;
	int ret = 0;

	switch (r->type) {
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
		log_msg("backend: command type=%u offset=%llu length=%u: %s",
			r->type, (unsigned long long)r->offset, r->len,
			strerror(errno));
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

static void aio_result(struct req *r, long res)
{
	if (res == (long)r->len)
		return;
	if (res < 0) {
		log_msg("backend: command type=%u offset=%llu length=%u: %s",
			r->type, (unsigned long long)r->offset, r->len,
			strerror(-res));
		r->error = errno_to_nbd(-res);
	} else {
		log_msg("backend: command type=%u offset=%llu length=%u: short transfer=%ld",
			r->type, (unsigned long long)r->offset, r->len, res);
		r->error = r->type == NBD_CMD_WRITE ? NBD_ENOSPC : NBD_EIO;
	}
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

static void start_aio(struct req *r, uint64_t now)
{
	struct iocb *iocbs[1] = { &r->iocb };
	int ret;

	r->fd = use_direct(r) ? cfg.exp.fd_direct : cfg.exp.fd_buf;
	r->iov = (struct iovec){ .iov_base = r->buf, .iov_len = r->len };
	if (r->type == NBD_CMD_READ)
		io_prep_preadv2(&r->iocb, r->fd, &r->iov, 1, r->offset, 0);
	else
		io_prep_pwritev2(&r->iocb, r->fd, &r->iov, 1, r->offset,
				 r->flags & NBD_CMD_FLAG_FUA ? RWF_DSYNC : 0);
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
	eng.inflight++;
	if (r->type == NBD_CMD_READ || r->type == NBD_CMD_WRITE)
		start_aio(r, now);
	else
		worker_queue(r);
}

static void fill(uint64_t now)
{
	while (eng.inflight < devmodel_depth() &&
	       devmodel_ready_at(now) <= now) {
		struct req *r = glue_dispatch(now);

		if (!r)
			break;
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
	int ret;

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
	ret = pthread_create(&eng.worker, NULL, worker_main, NULL);
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
	pthread_mutex_lock(&eng.lock);
	eng.stopping = true;
	pthread_mutex_unlock(&eng.lock);
	engine_kick();
	pthread_join(eng.thread, NULL);
	pthread_mutex_lock(&eng.lock);
	eng.worker_stop = true;
	pthread_cond_signal(&eng.wcond);
	pthread_mutex_unlock(&eng.lock);
	pthread_join(eng.worker, NULL);
	io_destroy(eng.ctx);
	close(eng.efd);
}
