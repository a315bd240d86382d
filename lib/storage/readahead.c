// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>

#include "storage/readahead.h"
#include "util/util.h"

/* Reads in flight at most (a chunk split at extent boundaries takes several). */
#define RA_PIECES 64u

struct chunk {
	uint8_t *buf;
	uint64_t index;   /* the chunk it holds (or is reading); UINT64_MAX: none */
	unsigned pending; /* its reads in flight */
	int err;
};

/* One read of one contiguous run, resubmitted for the rest when short. */
struct piece {
	struct chunk *c;
	uint8_t *buf;
	uint64_t off;
	size_t len;
	struct piece *next_free;
};

struct hib_readahead {
	struct hib_target *t;
	const struct hib_extmap *m;
	uint64_t first, pages, nchunks;
	unsigned chunk_pages, depth;
	struct chunk *chunks;  /* chunk k lives in slot k % depth */
	uint64_t next_issue;   /* the next chunk to start reading */
	uint64_t low;          /* chunks below this one are consumed */
	uint64_t last_lp;
	bool uring;
	struct io_uring ring;
	struct piece pieces[RA_PIECES];
	struct piece *free_pieces;
	unsigned inflight;
};

static uint64_t chunk_first(const struct hib_readahead *ra, uint64_t k)
{
	return ra->first + k * ra->chunk_pages;
}

static uint64_t chunk_len(const struct hib_readahead *ra, uint64_t k)
{
	return MIN((uint64_t)ra->chunk_pages, ra->first + ra->pages - chunk_first(ra, k));
}

static int submit_piece(struct hib_readahead *ra, struct piece *p)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ra->ring);
	int r;

	if (!sqe) {
		/* The submission queue is full of prepared entries: push them out. */
		r = io_uring_submit(&ra->ring);
		if (r < 0)
			return r;
		sqe = io_uring_get_sqe(&ra->ring);
		if (!sqe)
			return -EBUSY;
	}
	io_uring_prep_read(sqe, ra->t->fd, p->buf, (unsigned)p->len, p->off);
	io_uring_sqe_set_data(sqe, p);
	return 0;
}

/* One completion: finish its piece, or send the rest of a short read again. */
static int handle(struct hib_readahead *ra, struct io_uring_cqe *cqe)
{
	struct piece *p = io_uring_cqe_get_data(cqe);
	int res = cqe->res;

	io_uring_cqe_seen(&ra->ring, cqe);
	if (res == -EINTR || res == -EAGAIN)
		goto again;
	if (res > 0 && (size_t)res < p->len) {
		p->buf += res;
		p->off += (uint64_t)res;
		p->len -= (size_t)res;
		goto again;
	}
	if (res == 0)
		res = -EIO; /* end of device inside the image: the map lies */
	if (res < 0 && !p->c->err)
		p->c->err = res;
	p->c->pending--;
	ra->inflight--;
	p->next_free = ra->free_pieces;
	ra->free_pieces = p;
	return 0;
again: {
	int r = submit_piece(ra, p);
	if (r == 0)
		r = io_uring_submit(&ra->ring);
	return r < 0 ? r : 0;
}
}

static int reap(struct hib_readahead *ra, bool wait)
{
	struct io_uring_cqe *cqe;
	int r;

	if (ra->inflight == 0)
		return 0;
	if (wait) {
		do
			r = io_uring_wait_cqe(&ra->ring, &cqe);
		while (r == -EINTR);
		if (r < 0)
			return r;
		r = handle(ra, cqe);
		if (r < 0)
			return r;
	}
	while (ra->inflight && io_uring_peek_cqe(&ra->ring, &cqe) == 0) {
		r = handle(ra, cqe);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Start reading chunk @k into its slot, one read per contiguous run. */
static int issue(struct hib_readahead *ra, uint64_t k)
{
	struct chunk *c = &ra->chunks[k % ra->depth];
	uint64_t lp = chunk_first(ra, k), left = chunk_len(ra, k);
	uint8_t *dst = c->buf;
	int r;

	/* A slot skipped over may still be reading its old chunk. */
	while (c->pending) {
		r = reap(ra, true);
		if (r < 0)
			return r;
	}
	c->index = k;
	c->err = 0;
	while (left > 0) {
		uint64_t off, run;
		struct piece *p;

		r = extmap_lookup(ra->m, lp, &off, &run);
		if (r < 0) {
			c->err = r;
			break;
		}
		run = MIN(run, left);
		r = hib_target_check_range(ra->t, off, run * HIB_PAGE_SIZE);
		if (r < 0) {
			c->err = r;
			break;
		}
		while (!ra->free_pieces) {
			r = io_uring_submit(&ra->ring);
			if (r < 0)
				return r;
			r = reap(ra, true);
			if (r < 0)
				return r;
		}
		p = ra->free_pieces;
		ra->free_pieces = p->next_free;
		*p = (struct piece){ .c = c, .buf = dst, .off = off, .len = run * HIB_PAGE_SIZE };
		r = submit_piece(ra, p);
		if (r < 0) {
			p->next_free = ra->free_pieces;
			ra->free_pieces = p;
			return r;
		}
		c->pending++;
		ra->inflight++;
		dst += run * HIB_PAGE_SIZE;
		lp += run;
		left -= run;
	}
	r = io_uring_submit(&ra->ring);
	return r < 0 ? r : 0;
}

/* Without io_uring: read chunk @k now. */
static void read_now(struct hib_readahead *ra, uint64_t k)
{
	struct chunk *c = &ra->chunks[k % ra->depth];

	c->index = k;
	c->err = hib_target_read_logical(ra->t, ra->m, chunk_first(ra, k), c->buf, chunk_len(ra, k));
}

/* Keep @depth chunks in flight from the lowest still wanted. */
static int fill(struct hib_readahead *ra)
{
	while (ra->next_issue < ra->nchunks && ra->next_issue < ra->low + ra->depth) {
		int r = issue(ra, ra->next_issue);
		if (r < 0)
			return r;
		ra->next_issue++;
	}
	return 0;
}

int readahead_new(struct hib_target *t, const struct hib_extmap *m, uint64_t first,
		  uint64_t pages, unsigned chunk_pages, unsigned depth, bool use_uring,
		  struct hib_readahead **ret)
{
	struct hib_readahead *ra;

	if (!chunk_pages || !depth || first > m->pages || pages > m->pages - first)
		return -EINVAL;
	ra = calloc(1, sizeof(*ra));
	if (!ra)
		return -ENOMEM;
	ra->t = t;
	ra->m = m;
	ra->chunk_pages = chunk_pages;
	/* No pages: the range comes later (readahead_reset), so no fewer buffers. */
	ra->depth = pages ? (unsigned)MIN((uint64_t)depth, DIV_ROUND_UP(pages, chunk_pages))
			  : depth;
	ra->chunks = calloc(ra->depth, sizeof(*ra->chunks));
	if (!ra->chunks)
		goto nomem;
	for (unsigned i = 0; i < ra->depth; i++) {
		ra->chunks[i].buf = hib_alloc_pages((size_t)chunk_pages * HIB_PAGE_SIZE);
		if (!ra->chunks[i].buf)
			goto nomem;
	}
	readahead_reset(ra, first, pages);
	for (unsigned i = 0; i < RA_PIECES; i++) {
		ra->pieces[i].next_free = ra->free_pieces;
		ra->free_pieces = &ra->pieces[i];
	}
	if (use_uring) {
		int r = io_uring_queue_init(RA_PIECES, &ra->ring, 0);
		if (r == 0)
			ra->uring = true;
		else
			log_debug("io_uring unavailable (%s): reading with pread", strerror(-r));
	}
	*ret = ra;
	return 0;
nomem:
	readahead_free(ra);
	return -ENOMEM;
}

int readahead_reset(struct hib_readahead *ra, uint64_t first, uint64_t pages)
{
	if (ra->inflight)
		return -EBUSY;
	if (first > ra->m->pages || pages > ra->m->pages - first)
		return -EINVAL;
	ra->first = first;
	ra->pages = pages;
	ra->nchunks = DIV_ROUND_UP(pages, ra->chunk_pages);
	ra->next_issue = ra->low = ra->last_lp = 0;
	for (unsigned i = 0; i < ra->depth; i++)
		ra->chunks[i] = (struct chunk){ .buf = ra->chunks[i].buf, .index = UINT64_MAX };
	return 0;
}

void readahead_free(struct hib_readahead *ra)
{
	if (!ra)
		return;
	if (ra->uring) {
		/* The kernel may still be writing into the buffers. */
		while (ra->inflight && reap(ra, true) == 0)
			;
		io_uring_queue_exit(&ra->ring);
	}
	if (ra->chunks)
		for (unsigned i = 0; i < ra->depth; i++)
			free(ra->chunks[i].buf);
	free(ra->chunks);
	free(ra);
}

bool readahead_is_uring(const struct hib_readahead *ra)
{
	return ra->uring;
}

uint64_t readahead_buffer_bytes(const struct hib_readahead *ra)
{
	return (uint64_t)ra->depth * ra->chunk_pages * HIB_PAGE_SIZE;
}

int readahead_copy(struct hib_readahead *ra, uint64_t lp, void *dst, uint64_t n)
{
	uint8_t *out = dst;

	if (lp < ra->first || lp < ra->last_lp || n > ra->pages || lp - ra->first > ra->pages - n)
		return -ERANGE;
	ra->last_lp = lp;
	while (n > 0) {
		uint64_t k = (lp - ra->first) / ra->chunk_pages;
		struct chunk *c = &ra->chunks[k % ra->depth];
		uint64_t in = lp - chunk_first(ra, k), take = MIN(n, chunk_len(ra, k) - in);
		int r;

		ra->low = k;
		if (ra->uring) {
			if (ra->next_issue <= k)
				ra->next_issue = k; /* skipped ahead: start from here */
			r = fill(ra);
			if (r < 0)
				return r;
			while (c->pending) {
				r = reap(ra, true);
				if (r < 0)
					return r;
			}
		} else if (c->index != k) {
			read_now(ra, k);
		}
		if (c->err) {
			/* Some read of the chunk failed, maybe outside what is asked
			 * for: read exactly this part, for its own error or its data. */
			r = hib_target_read_logical(ra->t, ra->m, lp, out, take);
			if (r < 0)
				return r;
		} else {
			memcpy(out, c->buf + in * HIB_PAGE_SIZE, take * HIB_PAGE_SIZE);
		}
		out += take * HIB_PAGE_SIZE;
		lp += take;
		n -= take;
	}
	return 0;
}
