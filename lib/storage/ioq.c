// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>

#include "storage/ioq.h"
#include "util/util.h"

/* io_uring takes a length in 32 bits: longer requests go a gigabyte at a
 * time, the rest sent again like any short transfer. */
#define IOQ_MAX_XFER (1u << 30)

/*
 * The stall: requests in flight and no completion for this long. A request
 * the kernel cannot issue at once (-EAGAIN: no free tag in the block queue,
 * a page to fault in) is punted to an io-wq worker of the submitting task;
 * while hibernating, a worker that existed at FREEZE is frozen, wake-ups do
 * not run it, and the request would never complete, with no kernel report
 * (the ring is made before FREEZE, workers come and go with load). No
 * pattern of ours makes that impossible on every kernel, so it is bounded:
 * on a stall every request is cancelled (one queued to a worker, or waiting
 * on a poll, cancels at once), each cancelled one is done again by
 * pread/pwrite from its buffer, and the queue goes on by pread/pwrite. A
 * request that is really running (cancel says -EALREADY) is waited for, at
 * most IOQ_STALL_USEC again; then the queue fails (-ETIMEDOUT): a failed
 * cycle thaws the system, a hang would not.
 */
#define IOQ_STALL_USEC (30ULL * 1000000)

/* One request: what is left of it after short transfers. */
struct ioq_req {
	uint8_t *buf;
	size_t len;
	uint64_t off;
	uint64_t tag;
	bool write;
	struct ioq_req *next_free;
};

/*
 * A taken slot holds at most one submission entry (prepared, or with the
 * kernel), and the ring has an entry per slot: getting one cannot fail.
 */
struct hib_ioq {
	/* Set by hib_ioq_new, read-only after. */
	int fd;
	unsigned depth;
	bool uring;
	hib_ioq_done_fn done;
	void *userdata;
	/* The owning thread's (see ioq.h). */
	struct io_uring ring;
	struct ioq_req *reqs; /* @depth slots */
	struct ioq_req *free_reqs;
	unsigned inflight;    /* slots taken: done not called yet */
	unsigned unsent;      /* prepared entries the kernel has not taken */
	uint64_t stall_ns;    /* IOQ_STALL_USEC, or a test's */
	uint64_t progress_ns; /* the last completion, or the first request in flight */
	bool ring_open;       /* the ring exists (uring may have fallen back since) */
	bool fallback;        /* stalled: what comes back is done by pread/pwrite */
	int hold_fd;          /* tests: the next request waits behind a read of it */
	uint8_t hold_byte;
};

/* What the cancel and a test's hold put in user_data: no request of ours. */
#define IOQ_NOREQ 0

int hib_ioq_new(int fd, unsigned depth, enum hib_io_mode mode, hib_ioq_done_fn done, void *userdata,
		struct hib_ioq **ret)
{
	_cleanup_(hib_ioq_freep) struct hib_ioq *q = NULL;

	if (mode != HIB_IO_AUTO && mode != HIB_IO_SYNC)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->fd = fd;
	q->hold_fd = -1;
	q->stall_ns = IOQ_STALL_USEC * 1000;
	q->depth = depth ? depth : 1;
	q->done = done;
	q->userdata = userdata;
	q->reqs = calloc(q->depth, sizeof(*q->reqs));
	if (!q->reqs)
		return -ENOMEM;
	for (unsigned i = q->depth; i-- > 0;) {
		q->reqs[i].next_free = q->free_reqs;
		q->free_reqs = &q->reqs[i];
	}
	if (mode == HIB_IO_AUTO) {
		/* Room for a test's hold and the stall's cancel besides the slots. */
		int r = io_uring_queue_init(q->depth + 2, &q->ring, 0);

		if (r == 0)
			q->uring = q->ring_open = true;
		else
			log_debug("io_uring unavailable (%s): using pread/pwrite", strerror(-r));
	}
	*ret = TAKE_PTR(q);
	return 0;
}

void hib_ioq_test_stall(struct hib_ioq *q, unsigned stall_usec, int hold_fd)
{
	q->stall_ns = (uint64_t)stall_usec * 1000;
	q->hold_fd = hold_fd;
}

bool hib_ioq_is_uring(const struct hib_ioq *q)
{
	return q->uring;
}

unsigned hib_ioq_inflight(const struct hib_ioq *q)
{
	return q->inflight;
}

/* Hand the prepared entries to the kernel. */
static int flush(struct hib_ioq *q)
{
	while (q->unsent) {
		int r = io_uring_submit(&q->ring);

		if (r == -EINTR)
			continue;
		if (r < 0)
			return r;
		if (r == 0)
			return -EBUSY;
		q->unsent -= MIN((unsigned)r, q->unsent);
	}
	return 0;
}

static int prep(struct hib_ioq *q, struct ioq_req *rq)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);
	unsigned n = (unsigned)MIN(rq->len, (size_t)IOQ_MAX_XFER);

	if (!sqe)
		return -EBUSY; /* the slots say it cannot happen */
	if (q->hold_fd >= 0) {
		/* The read first, the request linked behind it. */
		io_uring_prep_read(sqe, q->hold_fd, &q->hold_byte, 1, (uint64_t)-1);
		io_uring_sqe_set_data64(sqe, IOQ_NOREQ);
		sqe->flags |= IOSQE_IO_LINK;
		q->hold_fd = -1;
		q->unsent++;
		sqe = io_uring_get_sqe(&q->ring);
		if (!sqe)
			return -EBUSY;
	}
	if (rq->write)
		io_uring_prep_write(sqe, q->fd, rq->buf, n, rq->off);
	else
		io_uring_prep_read(sqe, q->fd, rq->buf, n, rq->off);
	io_uring_sqe_set_data(sqe, rq);
	q->unsent++;
	return 0;
}

static void complete(struct hib_ioq *q, struct ioq_req *rq, int res)
{
	uint64_t tag = rq->tag;

	rq->next_free = q->free_reqs;
	q->free_reqs = rq;
	q->inflight--;
	q->done(tag, res, q->userdata);
}

/* One completion from the kernel: the request is over, or the rest goes again. */
static void handle(struct hib_ioq *q, struct io_uring_cqe *cqe)
{
	struct ioq_req *rq = io_uring_cqe_get_data(cqe);
	int res = cqe->res;
	bool again = res == -EINTR || res == -EAGAIN || (q->fallback && res == -ECANCELED);

	io_uring_cqe_seen(&q->ring, cqe);
	if (!rq)
		return; /* the stall's cancel, a test's hold */
	q->progress_ns = hib_now_ns();
	if (res > 0 && (size_t)res < rq->len) {
		rq->buf += res;
		rq->len -= (size_t)res;
		rq->off += (uint64_t)res;
		again = true;
	}
	if (again && q->fallback) {
		res = rq->write ? hib_pwrite_full(q->fd, rq->buf, rq->len, rq->off)
				: hib_pread_full(q->fd, rq->buf, rq->len, rq->off);
	} else if (again) {
		res = prep(q, rq);
		if (res == 0)
			return;
	} else if (res == 0 && rq->len > 0) {
		res = rq->write ? -ENOSPC : -EIO; /* no progress: the end of the file */
	}
	complete(q, rq, res < 0 ? res : 0);
}

/* A completion within @usec (0: -ETIME at once if none), for @q's handle. */
static int wait_usec(struct hib_ioq *q, struct io_uring_cqe **cqe, uint64_t usec)
{
	struct __kernel_timespec ts = { .tv_sec = (long long)(usec / 1000000),
					.tv_nsec = (long long)(usec % 1000000) * 1000 };

	return io_uring_wait_cqe_timeout(&q->ring, cqe, &ts);
}

/* Stalled (see IOQ_STALL_USEC): every request cancelled, those that come back
 * done by pread/pwrite, and the queue by them from now on. */
static int fall_back(struct hib_ioq *q)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);
	uint64_t end = hib_now_ns() + q->stall_ns;
	unsigned stuck = q->inflight;

	log_warn("io_uring: no completion in %llu s with %u requests in flight (a worker "
		 "frozen?): cancelling them and going on with pread/pwrite",
		 (unsigned long long)(q->stall_ns / 1000000000), q->inflight);
	if (!sqe)
		return -EBUSY; /* two spare entries: cannot happen */
	q->fallback = true;
	io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
	io_uring_sqe_set_data64(sqe, IOQ_NOREQ);
	q->unsent++;
	while (q->inflight) {
		struct io_uring_cqe *cqe;
		uint64_t now = hib_now_ns();
		int r = flush(q);

		if (r == 0)
			r = now < end ? wait_usec(q, &cqe, (end - now) / 1000) : -ETIME;
		if (r == -EINTR)
			continue;
		if (r < 0)
			return log_err(r == -ETIME ? -ETIMEDOUT : r,
				       "io_uring: %u of %u requests neither complete nor cancel: "
				       "the I/O is stuck in the kernel",
				       q->inflight, stuck);
		handle(q, cqe);
	}
	q->uring = false;
	return 0;
}

/* Wait for a first completion: at most @ts with it (0 after), else until one
 * comes or the queue stalls (fall_back: 1). */
static int wait_first(struct hib_ioq *q, struct io_uring_cqe **cqe, struct __kernel_timespec *ts)
{
	for (;;) {
		uint64_t now = hib_now_ns(), end = q->progress_ns + q->stall_ns;
		uint64_t usec = now < end ? (end - now) / 1000 : 0;
		uint64_t limit = ts ? (uint64_t)ts->tv_sec * 1000000 + (uint64_t)ts->tv_nsec / 1000
				    : UINT64_MAX;
		int r = wait_usec(q, cqe, MIN(usec, limit));

		if (r == 0)
			return 0;
		if (r != -ETIME && r != -EINTR)
			return r;
		if (usec == 0 || (r == -ETIME && usec <= limit)) {
			r = fall_back(q);
			return r < 0 ? r : 1;
		}
		if (ts)
			return 1; /* the caller's time is up */
	}
}

/* Send, wait for a first completion (until one comes or the queue stalls with
 * @wait and no @ts, at most @ts with it), then handle every completion there
 * is and send the resends. */
static int reap(struct hib_ioq *q, bool wait, struct __kernel_timespec *ts)
{
	struct io_uring_cqe *cqe;
	int r;

	if (!q->uring || q->inflight == 0)
		return 0;
	r = flush(q);
	if (r < 0)
		return r;
	if (wait) {
		r = wait_first(q, &cqe, ts);
		if (r != 0)
			return r < 0 ? r : 0;
		handle(q, cqe);
	}
	while (q->inflight && io_uring_peek_cqe(&q->ring, &cqe) == 0)
		handle(q, cqe);
	return flush(q);
}

int hib_ioq_reap(struct hib_ioq *q, bool wait)
{
	return reap(q, wait, NULL);
}

int hib_ioq_reap_timeout(struct hib_ioq *q, unsigned usec)
{
	struct __kernel_timespec ts = { .tv_sec = usec / 1000000,
					.tv_nsec = (usec % 1000000) * 1000 };

	return reap(q, true, &ts);
}

int hib_ioq_submit(struct hib_ioq *q)
{
	return q->uring ? flush(q) : 0;
}

int hib_ioq_drain(struct hib_ioq *q)
{
	while (q->inflight) {
		int r = reap(q, true, NULL);

		if (r < 0)
			return r;
	}
	return 0;
}

static int queue(struct hib_ioq *q, uint8_t *buf, size_t len, uint64_t off, uint64_t tag,
		 bool write)
{
	struct ioq_req *rq;
	int r;

	while (!q->free_reqs && q->uring) {
		r = reap(q, true, NULL);
		if (r < 0)
			return r;
	}
	if (!q->uring) {
		r = write ? hib_pwrite_full(q->fd, buf, len, off)
			  : hib_pread_full(q->fd, buf, len, off);
		q->done(tag, r, q->userdata);
		return 0;
	}
	rq = q->free_reqs;
	if (q->inflight == 0)
		q->progress_ns = hib_now_ns(); /* a stall counts from here */
	*rq = (struct ioq_req){ .buf = buf,
				.len = len,
				.off = off,
				.tag = tag,
				.write = write,
				.next_free = rq->next_free };
	r = prep(q, rq);
	if (r < 0)
		return r;
	q->free_reqs = rq->next_free;
	q->inflight++;
	return 0;
}

int hib_ioq_read(struct hib_ioq *q, void *buf, size_t len, uint64_t off, uint64_t tag)
{
	return queue(q, buf, len, off, tag, false);
}

int hib_ioq_write(struct hib_ioq *q, const void *buf, size_t len, uint64_t off, uint64_t tag)
{
	/* Only read from: the request keeps one pointer type for both directions. */
	return queue(q, (uint8_t *)buf, len, off, tag, true);
}

void hib_ioq_free(struct hib_ioq *q)
{
	if (!q)
		return;
	if (q->ring_open) {
		/* The kernel may still be using the caller's buffers: wait for
		 * every entry it took (a stalled queue's: at most the stall).
		 * What it never took is dropped. */
		for (unsigned sent = q->inflight - q->unsent; sent > 0; sent--) {
			struct io_uring_cqe *cqe;
			int r;

			do
				r = q->fallback ? wait_usec(q, &cqe, q->stall_ns / 1000)
						: io_uring_wait_cqe(&q->ring, &cqe);
			while (r == -EINTR);
			if (r < 0)
				break;
			io_uring_cqe_seen(&q->ring, cqe);
		}
		io_uring_queue_exit(&q->ring);
	}
	free(q->reqs);
	free(q);
}
