// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>

#include "storage/aio.h"
#include "util/util.h"

struct req {
	const uint8_t *buf;
	size_t len;
	uint64_t off;
	uint64_t tag;
	bool used;
};

struct hib_aio {
	struct io_uring ring;
	bool uring;
	int fd;
	unsigned depth, inflight;
	struct req *reqs;
	hib_aio_done_fn done;
	void *ud;
};

int aio_new(int fd, unsigned depth, bool use_uring, hib_aio_done_fn done, void *userdata,
	    struct hib_aio **ret)
{
	struct hib_aio *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->fd = fd;
	a->depth = depth ? depth : 1;
	a->done = done;
	a->ud = userdata;
	a->reqs = calloc(a->depth, sizeof(*a->reqs));
	if (!a->reqs) {
		free(a);
		return -ENOMEM;
	}
	if (use_uring) {
		int r = io_uring_queue_init(a->depth, &a->ring, 0);
		if (r == 0)
			a->uring = true;
		else
			log_debug("io_uring unavailable (%s): writing with pwrite", strerror(-r));
	}
	*ret = a;
	return 0;
}

void aio_free(struct hib_aio *a)
{
	if (!a)
		return;
	if (a->uring)
		io_uring_queue_exit(&a->ring);
	free(a->reqs);
	free(a);
}

bool aio_is_uring(const struct hib_aio *a)
{
	return a->uring;
}

unsigned aio_inflight(const struct hib_aio *a)
{
	return a->inflight;
}

static int submit(struct hib_aio *a, struct req *q)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&a->ring);
	int r;

	if (!sqe)
		return -EBUSY; /* cannot happen: one sqe per request slot */
	io_uring_prep_write(sqe, a->fd, q->buf, (unsigned)q->len, q->off);
	io_uring_sqe_set_data(sqe, q);
	r = io_uring_submit(&a->ring);
	return r < 0 ? r : 0;
}

static int handle(struct hib_aio *a, struct io_uring_cqe *cqe)
{
	struct req *q = io_uring_cqe_get_data(cqe);
	int res = cqe->res;

	io_uring_cqe_seen(&a->ring, cqe);
	if (res == -EINTR || res == -EAGAIN)
		return submit(a, q);
	if (res >= 0 && (size_t)res < q->len) {
		if (res == 0) {
			res = -ENOSPC;
		} else {
			/* A short write: the rest goes again. */
			q->buf += res;
			q->len -= (size_t)res;
			q->off += (uint64_t)res;
			return submit(a, q);
		}
	}
	q->used = false;
	a->inflight--;
	a->done(q->tag, res < 0 ? res : 0, a->ud);
	return 0;
}

int aio_reap(struct hib_aio *a, bool wait)
{
	struct io_uring_cqe *cqe;
	int r;

	if (!a->uring || a->inflight == 0)
		return 0;
	if (wait) {
		do
			r = io_uring_wait_cqe(&a->ring, &cqe);
		while (r == -EINTR);
		if (r < 0)
			return r;
		r = handle(a, cqe);
		if (r < 0)
			return r;
	}
	while (a->inflight && io_uring_peek_cqe(&a->ring, &cqe) == 0) {
		r = handle(a, cqe);
		if (r < 0)
			return r;
	}
	return 0;
}

int aio_reap_timeout(struct hib_aio *a, unsigned usec)
{
	struct __kernel_timespec ts = { .tv_sec = usec / 1000000, .tv_nsec = (usec % 1000000) * 1000 };
	struct io_uring_cqe *cqe;
	int r;

	if (!a->uring || a->inflight == 0)
		return 0;
	r = io_uring_wait_cqe_timeout(&a->ring, &cqe, &ts);
	if (r == -ETIME || r == -EINTR)
		return 0;
	if (r < 0)
		return r;
	r = handle(a, cqe);
	if (r < 0)
		return r;
	return aio_reap(a, false);
}

int aio_write(struct hib_aio *a, const void *buf, size_t len, uint64_t off, uint64_t tag)
{
	struct req *q = NULL;
	int r;

	if (!a->uring) {
		r = hib_pwrite_full(a->fd, buf, len, off);
		a->done(tag, r, a->ud);
		return 0;
	}
	while (a->inflight >= a->depth) {
		r = aio_reap(a, true);
		if (r < 0)
			return r;
	}
	for (unsigned i = 0; i < a->depth; i++)
		if (!a->reqs[i].used) {
			q = &a->reqs[i];
			break;
		}
	if (!q)
		return -EBUSY;
	*q = (struct req){ .buf = buf, .len = len, .off = off, .tag = tag, .used = true };
	a->inflight++;
	r = submit(a, q);
	if (r < 0) {
		q->used = false;
		a->inflight--;
	}
	return r;
}

int aio_drain(struct hib_aio *a)
{
	while (a->inflight) {
		int r = aio_reap(a, true);
		if (r < 0)
			return r;
	}
	return 0;
}
