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
	unsigned inflight; /* slots taken: done not called yet */
	unsigned unsent;   /* prepared entries the kernel has not taken */
};

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
		int r = io_uring_queue_init(q->depth, &q->ring, 0);

		if (r == 0)
			q->uring = true;
		else
			log_debug("io_uring unavailable (%s): using pread/pwrite", strerror(-r));
	}
	*ret = TAKE_PTR(q);
	return 0;
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
	bool again = res == -EINTR || res == -EAGAIN;

	io_uring_cqe_seen(&q->ring, cqe);
	if (res > 0 && (size_t)res < rq->len) {
		rq->buf += res;
		rq->len -= (size_t)res;
		rq->off += (uint64_t)res;
		again = true;
	}
	if (again) {
		res = prep(q, rq);
		if (res == 0)
			return;
	} else if (res == 0 && rq->len > 0) {
		res = rq->write ? -ENOSPC : -EIO; /* no progress: the end of the file */
	}
	complete(q, rq, res < 0 ? res : 0);
}

/* Send, wait for a first completion (for ever with @wait and no @ts, at most
 * @ts with it), then handle every completion there is and send the resends. */
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
		do
			r = ts ? io_uring_wait_cqe_timeout(&q->ring, &cqe, ts)
			       : io_uring_wait_cqe(&q->ring, &cqe);
		while (r == -EINTR && !ts);
		if (ts && (r == -ETIME || r == -EINTR))
			return 0;
		if (r < 0)
			return r;
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

	if (!q->uring) {
		r = write ? hib_pwrite_full(q->fd, buf, len, off)
			  : hib_pread_full(q->fd, buf, len, off);
		q->done(tag, r, q->userdata);
		return 0;
	}
	while (!q->free_reqs) {
		r = reap(q, true, NULL);
		if (r < 0)
			return r;
	}
	rq = q->free_reqs;
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
	if (q->uring) {
		/* The kernel may still be using the caller's buffers: wait for
		 * every entry it took. What it never took is dropped. */
		for (unsigned sent = q->inflight - q->unsent; sent > 0; sent--) {
			struct io_uring_cqe *cqe;
			int r;

			do
				r = io_uring_wait_cqe(&q->ring, &cqe);
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
