// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reading and writing the image's metadata pages (image.h), and the public
 * look at an image on disk: hib_image_info, hib_image_invalidate.
 */
#include <string.h>
#include <time.h>

#include "image/image.h"
#include "util/util.h"

/* Page 0: our tail, checked; why not, said for a damaged one. */
static int load_tail(struct hib_target *t, uint8_t *page, struct hib_sig_tail *ret)
{
	enum hib_sig_state st;
	int r;

	r = hib_sig_read(t, page, &st);
	if (r < 0)
		return r;
	if (st == HIB_SIG_BROKEN) {
		r = hib_tail_check((const struct hib_sig_tail *)(page + HIB_PAGE_SIZE -
								 HIB_SIG_TAIL_SIZE));
		if (r == -EPROTO) {
			log_err(r, "%s: the image was written in another format version",
				hib_target_path(t));
			return r;
		}
		/* -ENOENT here is a damaged magic or signature: not "no image". */
		log_err(-EBADMSG, "%s: the image signature is damaged (%s)", hib_target_path(t),
			r == -ENOENT ? "magic or signature bytes" : "checksum mismatch");
		return -EBADMSG;
	}
	if (st != HIB_SIG_IMAGE)
		return -ENOENT;
	memcpy(ret, page + HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE, sizeof(*ret));
	return 0;
}

static int load_header(struct hib_target *t, const struct hib_sig_tail *tail, struct hib_header *h)
{
	const char *path = hib_target_path(t);
	int r;

	if (tail->header_offset == hib_target_sig_offset(t))
		return log_err(-EBADMSG, "%s: the image header points at the signature page", path);
	r = hib_target_read(t, tail->header_offset, h, HIB_PAGE_SIZE);
	if (r < 0)
		return log_err(r, "%s: cannot read the image header at byte %llu: %m", path,
			       (unsigned long long)tail->header_offset);
	r = hib_header_check(h, tail->image_id, tail->header_xxh3);
	if (r == 0 && h->version != tail->version)
		r = -EBADMSG;
	/* Said apart: the size decides how much memory resume would take. */
	if (r == -EBADMSG && hib_header_xxh3(h) == tail->header_xxh3 &&
	    !hib_block_size_ok(h->block_raw_bytes))
		return log_err(r,
			       "%s: the image header claims blocks of %u bytes; this version "
			       "writes only powers of two from %u KiB to %u MiB (tampered with, "
			       "or not written by hibernate): not resuming it",
			       path, h->block_raw_bytes, HIB_BLOCK_MIN_BYTES >> 10,
			       HIB_BLOCK_MAX_BYTES >> 20);
	if (r < 0)
		return log_err(r, "%s: the image header is corrupt (%s)", path,
			       r == -EPROTO ? "another format version"
					    : "checksum or field mismatch");
	return 0;
}

/* The map chain the header points at, read through @page, into @img->map. */
static int load_map(struct hib_target *t, struct image *img, uint8_t *page)
{
	const char *path = hib_target_path(t);
	uint64_t next = img->hdr->map_offset;
	int r;

	for (uint32_t i = 0; i < img->hdr->map_pages; i++) {
		struct hib_map_page *mp = (struct hib_map_page *)page;

		if (next == 0 || next == hib_target_sig_offset(t))
			return log_err(-EBADMSG,
				       "%s: the extent map chain ends early (page %u of %u)", path,
				       i, img->hdr->map_pages);
		r = hib_target_read(t, next, page, HIB_PAGE_SIZE);
		if (r < 0)
			return log_err(r, "%s: cannot read extent map page %u: %m", path, i);
		r = hib_map_page_check(mp, img->tail.image_id, i);
		if (r < 0)
			return log_err(r, "%s: extent map page %u is corrupt", path, i);
		for (uint32_t k = 0; k < mp->count; k++) {
			r = extmap_add(&img->map, mp->ext[k].offset, mp->ext[k].pages);
			if (r < 0)
				return r;
		}
		next = mp->next_offset;
	}
	r = extmap_index(&img->map);
	if (r < 0)
		return r;
	if (img->map.pages != img->hdr->data_pages ||
	    extmap_check_bounds(&img->map, 0, hib_target_size(t), hib_target_sig_offset(t)) < 0)
		return log_err(-EBADMSG,
			       "%s: the extent map does not match the header or the device", path);
	return 0;
}

int image_load(struct hib_target *t, struct image *ret)
{
	_cleanup_(freep) uint8_t *page = hib_alloc_pages(HIB_PAGE_SIZE);
	struct image img = { 0 };
	int r;

	if (!page)
		return -ENOMEM;
	r = load_tail(t, page, &img.tail);
	if (r < 0)
		return r;
	img.hdr = hib_alloc_pages(HIB_PAGE_SIZE);
	if (!img.hdr)
		return -ENOMEM;
	r = load_header(t, &img.tail, img.hdr);
	if (r == 0)
		r = load_map(t, &img, page);
	if (r < 0) {
		image_free(&img);
		return r;
	}
	*ret = img;
	return 0;
}

void image_free(struct image *img)
{
	free(img->hdr);
	extmap_free(&img->map);
	memset(img, 0, sizeof(*img));
}

int image_write_map(struct hib_target *t, const struct hib_extmap *map, uint64_t image_id,
		    const uint64_t *offs, uint32_t n, struct hib_map_page *page)
{
	for (uint32_t i = 0; i < n; i++) {
		int r;

		hib_map_page_build(page, image_id, map->ext, map->n, i,
				   i + 1 < n ? offs[i + 1] : 0);
		r = hib_target_write(t, offs[i], page, HIB_PAGE_SIZE);
		if (r < 0)
			return log_err(r, "%s: writing the extent map failed: %m",
				       hib_target_path(t));
	}
	return 0;
}

int image_write_header(struct hib_target *t, uint64_t off, struct hib_header *h)
{
	int r;

	hib_header_seal(h);
	r = hib_target_write(t, off, h, HIB_PAGE_SIZE);
	if (r < 0)
		return log_err(r, "%s: writing the image header failed: %m", hib_target_path(t));
	return 0;
}

int image_write_sig(struct hib_target *t, const struct hib_header *h, uint64_t header_off,
		    uint8_t orig_page[HIB_PAGE_SIZE])
{
	struct hib_sig_tail tail;
	int r;

	hib_tail_build(&tail, h, header_off, orig_page);
	r = hib_sig_write_image(t, orig_page, &tail);
	if (r < 0)
		return log_err(r, "%s: unable to write the signature page: %m", hib_target_path(t));
	return 0;
}

/* The header page's place: zeros, or zeros and the report. */
static int header_page_replace(struct hib_target *t, const struct image *img,
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
		log_warn("%s: could not wipe the image header: %s", hib_target_path(t),
			 strerror(-r));
	return r;
}

int image_wipe(struct hib_target *t, const struct image *img)
{
	return header_page_replace(t, img, NULL);
}

int image_discard(struct hib_target *t, const struct image *img)
{
	int r = hib_sig_restore(t, img->hdr ? img->hdr->orig_tail : NULL);

	if (r == 0 && img->hdr)
		image_wipe(t, img);
	return r;
}

int image_write_report(struct hib_target *t, const struct image *img, uint64_t load_ms,
		       unsigned load_threads)
{
	struct hib_report rep;

	if (!img->hdr)
		return -ENOMEM;
	hib_report_build(&rep, img->hdr, (uint64_t)time(NULL), load_ms, load_threads);
	return header_page_replace(t, img, &rep);
}

int image_take_report(struct hib_target *t, uint64_t hdr_off, uint64_t image_id, void *page,
		      struct hib_report *ret)
{
	struct hib_report rep;
	int r;

	r = hib_target_read(t, hdr_off, page, HIB_PAGE_SIZE);
	if (r < 0)
		return r;
	memcpy(&rep, page, sizeof(rep));
	if (hib_report_check(&rep, image_id) < 0)
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

/* ---- public: looking at an image without resuming it, discarding it ---- */

static void info_from_header(const struct hib_header *h, struct hib_image_info *info)
{
	info->header_valid = true;
	info->image_id = h->image_id;
	info->created_unix = h->created_unix;
	memcpy(info->kernel_release, h->kernel_release, sizeof(info->kernel_release));
	memcpy(info->kernel_version, h->kernel_version, sizeof(info->kernel_version));
	memcpy(info->machine, h->machine, sizeof(info->machine));
	info->stream_bytes = h->stream_bytes;
	info->stored_bytes = h->stat_stored_bytes + (uint64_t)(h->map_pages + 1) * HIB_PAGE_SIZE;
	info->codec = h->codec;
	info->nr_blocks = h->nr_blocks;
	info->map_extents = h->map_extents;
	info->threads = h->stat_threads;
	info->write_ms = h->stat_write_ms;
	info->snapshot_ms = h->stat_snapshot_ms;
	info->encryption = h->flags & HIB_HFLAG_ENCRYPTED ? h->crypt.kdf : 0;
}

int hib_image_info(struct hib_target *t, struct hib_image_info *ret)
{
	struct hib_image_info info = { 0 };
	struct image img;
	int r;

	r = hib_target_probe(t, &info.state);
	if (r < 0)
		return r;
	if (info.state == HIB_SIG_IMAGE && image_load(t, &img) == 0) {
		info_from_header(img.hdr, &info);
		image_free(&img);
	}
	*ret = info;
	return 0;
}

int hib_image_invalidate(struct hib_target *t)
{
	_cleanup_(freep) uint8_t *page = hib_alloc_pages(HIB_PAGE_SIZE);
	struct image img = { 0 };
	enum hib_sig_state st;
	int r;

	if (!page)
		return -ENOMEM;
	r = hib_sig_read(t, page, &st);
	if (r < 0)
		return r;
	if (st != HIB_SIG_IMAGE && st != HIB_SIG_BROKEN)
		return 0;
	/* A header that does not load leaves img empty: what mkswap writes then. */
	image_load(t, &img);
	r = image_discard(t, &img);
	image_free(&img);
	return r < 0 ? r : 1;
}
