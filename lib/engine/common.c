// SPDX-License-Identifier: GPL-2.0-or-later
#include <string.h>
#include <time.h>
#include <sys/sysinfo.h>

#include <xxhash.h>

#include "engine/engine.h"

void hib_options_init(struct hib_options *o)
{
	memset(o, 0, sizeof(*o));
	o->codec = HIB_COMPRESS_LZ4;
	o->image_size = -1;
	o->powerdown = HIB_POWERDOWN_SHUTDOWN;
}

int engine_pipe_new(const struct hib_options *o, uint32_t block_bytes, uint64_t image_id,
		    hib_work_fn work,
		    size_t in_bytes, size_t out_bytes, struct engine_pipe *ret)
{
	struct engine_pipe ep = { 0 };
	unsigned workers = o->threads ? o->threads : (unsigned)get_nprocs();
	unsigned nctx;
	int r;

	workers = MIN(MAX(workers, 1u), 64u);
	/* One CPU: no worker threads, the codec runs inline in the producer. */
	if (workers == 1)
		workers = 0;
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
	/* Enough slots that every worker has one while the reader and writer hold theirs. */
	r = pipeline_new(2 * nctx + 4, workers, in_bytes, out_bytes, work, (void **)ep.ctx,
			 &ep.pipe);
	if (r < 0)
		goto fail;
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
	r = readahead_copy(ra, *lp, rec, 1);
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
		r = readahead_copy(ra, *lp + 1, (uint8_t *)rec + HIB_PAGE_SIZE, pages - 1);
		if (r < 0)
			return r;
	}
	*lp += pages;
	return 0;
}

int engine_image_load(struct hib_target *t, struct engine_image *ret)
{
	_cleanup_(freep) uint8_t *page = hib_alloc_pages(HIB_PAGE_SIZE);
	struct engine_image img = { 0 };
	enum hib_sig_state st;
	uint64_t next;
	int r;

	if (!page)
		return -ENOMEM;
	r = hib_sig_read(t, page, &st);
	if (r < 0)
		return r;
	if (st == HIB_SIG_BROKEN) {
		r = hib_tail_check((const struct hib_sig_tail *)(page + HIB_PAGE_SIZE -
								  HIB_SIG_TAIL_SIZE));
		if (r == -EPROTO) {
			log_err(r, "%s: the image was written in another format version", t->path);
			return r;
		}
		/* -ENOENT here is a damaged magic or signature: not "no image". */
		log_err(-EBADMSG, "%s: the image signature is damaged (%s)", t->path,
			r == -ENOENT ? "magic or signature bytes" : "checksum mismatch");
		return -EBADMSG;
	}
	if (st != HIB_SIG_IMAGE)
		return -ENOENT;
	memcpy(&img.tail, page + HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE, sizeof(img.tail));

	img.hdr = hib_alloc_pages(HIB_PAGE_SIZE);
	if (!img.hdr)
		return -ENOMEM;
	if (img.tail.header_offset == hib_target_sig_offset(t)) {
		r = -EBADMSG;
		log_err(r, "%s: the image header points at the signature page", t->path);
		goto fail;
	}
	r = hib_target_read(t, img.tail.header_offset, img.hdr, HIB_PAGE_SIZE);
	if (r < 0) {
		log_err(r, "%s: cannot read the image header at byte %llu: %m", t->path,
			(unsigned long long)img.tail.header_offset);
		goto fail;
	}
	r = hib_header_check(img.hdr, img.tail.image_id, img.tail.header_xxh3);
	if (r < 0) {
		log_err(r, "%s: the image header is corrupt (%s)", t->path,
			r == -EPROTO ? "another format version" : "checksum or field mismatch");
		goto fail;
	}

	next = img.hdr->map_offset;
	for (uint32_t i = 0; i < img.hdr->map_pages; i++) {
		struct hib_map_page *mp = (struct hib_map_page *)page;

		if (next == 0 || next == hib_target_sig_offset(t)) {
			r = -EBADMSG;
			log_err(r, "%s: the extent map chain ends early (page %u of %u)", t->path,
				i, img.hdr->map_pages);
			goto fail;
		}
		r = hib_target_read(t, next, page, HIB_PAGE_SIZE);
		if (r < 0) {
			log_err(r, "%s: cannot read extent map page %u: %m", t->path, i);
			goto fail;
		}
		r = hib_map_page_check(mp, img.tail.image_id, i);
		if (r < 0) {
			log_err(r, "%s: extent map page %u is corrupt", t->path, i);
			goto fail;
		}
		for (uint32_t k = 0; k < mp->count; k++) {
			r = extmap_add(&img.map, mp->ext[k].offset, mp->ext[k].pages);
			if (r < 0)
				goto fail;
		}
		next = mp->next_offset;
	}
	r = extmap_index(&img.map);
	if (r < 0)
		goto fail;
	if (img.map.pages != img.hdr->data_pages ||
	    extmap_check_bounds(&img.map, 0, t->size, hib_target_sig_offset(t)) < 0) {
		r = -EBADMSG;
		log_err(r, "%s: the extent map does not match the header or the device", t->path);
		goto fail;
	}
	*ret = img;
	return 0;
fail:
	engine_image_free(&img);
	return r;
}

void engine_image_free(struct engine_image *img)
{
	free(img->hdr);
	extmap_free(&img->map);
	memset(img, 0, sizeof(*img));
}

static uint64_t report_xxh3(const struct hib_report *rep)
{
	struct hib_report tmp = *rep;

	tmp.xxh3 = 0;
	return XXH3_64bits_withSeed(&tmp, sizeof(tmp), rep->image_id);
}

/* The header page's place: zeros, or zeros and the report. */
static int header_page_replace(struct hib_target *t, const struct engine_image *img,
			       const struct hib_report *rep)
{
	_cleanup_(freep) uint8_t *page = hib_alloc_pages(HIB_PAGE_SIZE);
	int r;

	/* The header holds the wrapped key and the image's map: once the image is
	 * invalid, nothing of it needs to stay readable. */
	if (!page || !img->hdr)
		return -ENOMEM;
	memset(page, 0, HIB_PAGE_SIZE);
	if (rep)
		memcpy(page, rep, sizeof(*rep));
	r = hib_target_write(t, img->tail.header_offset, page, HIB_PAGE_SIZE);
	if (r == 0)
		r = hib_target_sync(t);
	if (r < 0)
		log_warn("%s: could not wipe the image header: %s", t->path, strerror(-r));
	return r;
}

int engine_image_wipe(struct hib_target *t, const struct engine_image *img)
{
	return header_page_replace(t, img, NULL);
}

int engine_image_report(struct hib_target *t, const struct engine_image *img, uint64_t load_ms,
			unsigned load_threads)
{
	const struct hib_header *h = img->hdr;
	struct hib_report rep = { 0 };

	if (!h)
		return -ENOMEM;
	memcpy(rep.magic, HIB_REPORT_MAGIC, sizeof(rep.magic));
	rep.image_id = h->image_id;
	rep.stream_bytes = h->stream_bytes;
	rep.stored_bytes = h->stat_stored_bytes;
	rep.created_unix = h->created_unix;
	rep.loaded_unix = (uint64_t)time(NULL);
	rep.snapshot_ms = (uint32_t)MIN(h->stat_snapshot_ms, UINT32_MAX);
	rep.write_ms = (uint32_t)MIN(h->stat_write_ms, UINT32_MAX);
	rep.load_ms = (uint32_t)MIN(load_ms, UINT32_MAX);
	rep.write_threads = h->stat_threads;
	rep.load_threads = load_threads;
	rep.xxh3 = report_xxh3(&rep);
	return header_page_replace(t, img, &rep);
}

int engine_report_take(struct hib_target *t, uint64_t hdr_off, uint64_t image_id, void *page,
		       struct hib_report *ret)
{
	struct hib_report rep;
	int r;

	r = hib_target_read(t, hdr_off, page, HIB_PAGE_SIZE);
	if (r < 0)
		return r;
	memcpy(&rep, page, sizeof(rep));
	if (memcmp(rep.magic, HIB_REPORT_MAGIC, sizeof(rep.magic)) != 0 ||
	    rep.image_id != image_id || rep.xxh3 != report_xxh3(&rep))
		return -ENOENT;
	memset(page, 0, HIB_PAGE_SIZE);
	r = hib_target_write(t, hdr_off, page, HIB_PAGE_SIZE);
	if (r == 0)
		r = hib_target_sync(t);
	if (r < 0)
		return r;
	*ret = rep;
	return 0;
}
