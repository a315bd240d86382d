// SPDX-License-Identifier: GPL-2.0-or-later
/* What both directions run on: the pipeline of codec workers, and reading a
 * block record back. */
#include <limits.h>
#include <string.h>
#include <sys/sysinfo.h>

#include "engine/engine.h"

/*
 * Enough slots that every worker has one while the reader and writer hold
 * theirs, and PIPE_BANK more: the consumer takes blocks in order, so while
 * the block it waits for is still being worked on (its worker preempted: on
 * 2 vCPUs by the reader or the feeder, under a busy host by the host), the
 * other workers and the reader go on only as far as there are slots. With
 * 2n + 4 slots (8 for 2 workers) they stopped at once: measured on 6.12 at
 * 150 MB/s, the write's reader waited for free slots 9.7 s of 11.2 and the
 * load's 9.0 s of 11.7, while the workers ran 57% and 36% of the phase.
 * The bank is bounded in bytes (24 slots of 256 KiB blocks), so that large
 * blocks do not cost the workers their room under HIB_PIPE_MEM_MAX.
 */
#define PIPE_BANK_SLOTS 24u
#define PIPE_BANK_BYTES (12u << 20)

static size_t pipe_slots(unsigned nctx, size_t slot_bytes)
{
	return 2 * (size_t)nctx + 4 + MIN(PIPE_BANK_SLOTS, PIPE_BANK_BYTES / slot_bytes);
}

/* Worker threads for slots of @in_bytes + @out_bytes; 0: the codec runs inline. */
static unsigned pipe_workers(const struct hib_options *o, size_t in_bytes, size_t out_bytes)
{
	unsigned workers = o->threads ? o->threads : (unsigned)get_nprocs();

	workers = MIN(MAX(workers, 1u), 64u);
	while (workers > 1 && pipe_slots(workers, in_bytes + out_bytes) * (in_bytes + out_bytes) >
				      HIB_PIPE_MEM_MAX)
		workers--;
	/* One CPU: no worker threads, the codec runs inline in the producer. */
	return workers == 1 ? 0 : workers;
}

uint64_t engine_pipe_bytes(const struct hib_options *o, size_t in_bytes, size_t out_bytes)
{
	unsigned workers = pipe_workers(o, in_bytes, out_bytes);

	return pipe_slots(workers ? workers : 1, in_bytes + out_bytes) *
	       (uint64_t)(in_bytes + out_bytes);
}

uint64_t engine_load_floor(const struct hib_options *o, const struct hib_header *h,
			   uint64_t mem_total)
{
	size_t in = codec_record_bound(h->block_raw_bytes);
	uint64_t reserve = MAX(mem_total / 100 * 6, HIB_LOAD_RESERVE_MIN);

	return h->stream_bytes + engine_pipe_bytes(o, in, h->block_raw_bytes) + reserve;
}

int engine_pipe_new(const struct hib_options *o, uint32_t block_bytes, uint64_t image_id,
		    hib_work_fn work, size_t in_bytes, size_t out_bytes, uint64_t spare_bytes,
		    struct engine_pipe *ret)
{
	struct engine_pipe ep = { 0 };
	unsigned workers = pipe_workers(o, in_bytes, out_bytes);
	unsigned nctx, slots, spare;
	int r;

	nctx = workers ? workers : 1;
	ep.ctx = calloc(nctx, sizeof(*ep.ctx));
	if (!ep.ctx)
		return -ENOMEM;
	ep.workers = workers;
	ep.block_bytes = block_bytes;
	for (unsigned i = 0; i < nctx; i++) {
		r = codec_ctx_new(o->codec, o->codec_level, block_bytes, &ep.ctx[i]);
		if (r < 0)
			goto fail;
		codec_ctx_set_seed(ep.ctx[i], image_id);
	}
	slots = (unsigned)pipe_slots(nctx, in_bytes + out_bytes);
	spare = (unsigned)MIN(spare_bytes / (in_bytes + out_bytes), (uint64_t)UINT_MAX - slots);
	r = pipeline_new(slots + spare, workers, in_bytes, out_bytes, work, (void **)ep.ctx,
			 &ep.pipe);
	if (r < 0)
		goto fail;
	if (spare)
		pipeline_limit(ep.pipe, slots);
	*ret = ep;
	return 0;
fail:
	engine_pipe_free(&ep);
	return r;
}

void engine_pipe_free(struct engine_pipe *ep)
{
	pipeline_free(ep->pipe);
	if (ep->ctx)
		for (unsigned i = 0; i < (ep->workers ? ep->workers : 1); i++)
			codec_ctx_free(ep->ctx[i]);
	free(ep->ctx);
	memset(ep, 0, sizeof(*ep));
}

int engine_read_block(struct hib_readahead *ra, uint64_t map_pages, uint32_t block_bytes,
		      uint32_t i, uint64_t stream_off, uint64_t *lp, void *rec)
{
	struct hib_block_hdr *b = rec;
	uint64_t pages;
	int r;

	if (*lp >= map_pages)
		return -EBADMSG;
	r = hib_readahead_copy(ra, *lp, rec, 1);
	if (r < 0)
		return r;
	r = hib_block_hdr_check(b, i, block_bytes);
	if (r < 0)
		return r;
	if (b->stream_offset != stream_off)
		return -EBADMSG;
	pages = hib_block_pages(b->stored_bytes);
	if (*lp + pages > map_pages)
		return -EBADMSG;
	if (pages > 1) {
		r = hib_readahead_copy(ra, *lp + 1, (uint8_t *)rec + HIB_PAGE_SIZE, pages - 1);
		if (r < 0)
			return r;
	}
	*lp += pages;
	return 0;
}
