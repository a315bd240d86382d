// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "storage/ioq.h"
#include "storage/readahead.h"
#include "util/util.h"

/* Reads in flight at most (a chunk split at extent boundaries takes several). */
#define RA_PIECES 64u

struct chunk {
	uint8_t *buf;
	unsigned pending; /* its reads in flight */
	int err;          /* the first of them to fail */
};

struct hib_readahead {
	struct hib_target *t;
	struct hib_ioq *q; /* a read's tag is its chunk's slot */
	unsigned chunk_pages, depth;
	struct chunk *chunks; /* chunk k lives in slot k % depth */
	/* The pass (hib_readahead_start). */
	const struct hib_extmap *m;
	uint64_t first, pages, nchunks;
	uint64_t next_issue; /* the next chunk to start reading */
	uint64_t low;        /* chunks below this one are consumed */
	uint64_t last_lp;
};

static uint64_t chunk_first(const struct hib_readahead *ra, uint64_t k)
{
	return ra->first + k * ra->chunk_pages;
}

static uint64_t chunk_len(const struct hib_readahead *ra, uint64_t k)
{
	return MIN((uint64_t)ra->chunk_pages, ra->first + ra->pages - chunk_first(ra, k));
}

static void read_done(uint64_t tag, int res, void *userdata)
{
	struct hib_readahead *ra = userdata;
	struct chunk *c = &ra->chunks[tag];

	if (res < 0 && !c->err)
		c->err = res;
	c->pending--;
}

/* Wait until chunk slot @c has no read in flight. */
static int wait_chunk(struct hib_readahead *ra, const struct chunk *c)
{
	while (c->pending) {
		int r = hib_ioq_reap(ra->q, true);

		if (r < 0)
			return r;
	}
	return 0;
}

/* Queue the reads of chunk @k into its slot, one per contiguous run. */
static int issue(struct hib_readahead *ra, uint64_t k)
{
	unsigned slot = (unsigned)(k % ra->depth);
	struct chunk *c = &ra->chunks[slot];
	uint64_t lp = chunk_first(ra, k), left = chunk_len(ra, k);
	uint8_t *dst = c->buf;
	int r;

	/* A slot skipped over may still be reading its old chunk. */
	r = wait_chunk(ra, c);
	if (r < 0)
		return r;
	c->err = 0;
	while (left > 0 && !c->err) {
		uint64_t off, run;

		r = extmap_lookup(ra->m, lp, &off, &run);
		if (r == 0) {
			run = MIN(run, left);
			r = hib_target_check_range(ra->t, off, run * HIB_PAGE_SIZE);
		}
		if (r < 0) {
			c->err = r;
			break;
		}
		c->pending++; /* first: with pread the read is over when the call returns */
		r = hib_ioq_read(ra->q, dst, run * HIB_PAGE_SIZE, off, slot);
		if (r < 0) {
			c->pending--;
			return r;
		}
		dst += run * HIB_PAGE_SIZE;
		lp += run;
		left -= run;
	}
	return 0;
}

/* Keep chunks in flight from the lowest still wanted: @depth of them with
 * io_uring; with pread only that one, read now. */
static int fill(struct hib_readahead *ra)
{
	uint64_t ahead = hib_ioq_is_uring(ra->q) ? ra->depth : 1;

	while (ra->next_issue < ra->nchunks && ra->next_issue < ra->low + ahead) {
		int r = issue(ra, ra->next_issue);

		if (r < 0)
			return r;
		ra->next_issue++;
	}
	return hib_ioq_submit(ra->q);
}

int hib_readahead_new(struct hib_target *t, unsigned chunk_pages, unsigned depth,
		      enum hib_io_mode mode, struct hib_readahead **ret)
{
	_cleanup_(hib_readahead_freep) struct hib_readahead *ra = NULL;
	int r;

	if (!chunk_pages || !depth)
		return -EINVAL;
	ra = calloc(1, sizeof(*ra));
	if (!ra)
		return -ENOMEM;
	ra->t = t;
	ra->chunk_pages = chunk_pages;
	ra->depth = depth;
	ra->chunks = calloc(depth, sizeof(*ra->chunks));
	if (!ra->chunks)
		return -ENOMEM;
	for (unsigned i = 0; i < depth; i++) {
		ra->chunks[i].buf = hib_alloc_pages((size_t)chunk_pages * HIB_PAGE_SIZE);
		if (!ra->chunks[i].buf)
			return -ENOMEM;
	}
	r = hib_ioq_new(hib_target_fd(t), RA_PIECES, mode, read_done, ra, &ra->q);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(ra);
	return 0;
}

void hib_readahead_free(struct hib_readahead *ra)
{
	if (!ra)
		return;
	hib_ioq_free(ra->q); /* first: the kernel may still be writing into the buffers */
	if (ra->chunks)
		for (unsigned i = 0; i < ra->depth; i++)
			free(ra->chunks[i].buf);
	free(ra->chunks);
	free(ra);
}

int hib_readahead_start(struct hib_readahead *ra, const struct hib_extmap *m, uint64_t first,
			uint64_t pages)
{
	int r;

	if (first > m->pages || pages > m->pages - first)
		return -EINVAL;
	r = hib_ioq_drain(ra->q);
	if (r < 0)
		return r;
	ra->m = m;
	ra->first = first;
	ra->pages = pages;
	ra->nchunks = DIV_ROUND_UP(pages, ra->chunk_pages);
	ra->next_issue = 0;
	ra->low = 0;
	ra->last_lp = 0;
	return 0;
}

bool hib_readahead_is_uring(const struct hib_readahead *ra)
{
	return hib_ioq_is_uring(ra->q);
}

uint64_t hib_readahead_buffer_bytes(const struct hib_readahead *ra)
{
	return (uint64_t)ra->depth * ra->chunk_pages * HIB_PAGE_SIZE;
}

int hib_readahead_copy(struct hib_readahead *ra, uint64_t lp, void *dst, uint64_t n)
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
		if (ra->next_issue <= k)
			ra->next_issue = k; /* skipped ahead: start from here */
		r = fill(ra);
		if (r == 0)
			r = wait_chunk(ra, c);
		if (r < 0)
			return r;
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
