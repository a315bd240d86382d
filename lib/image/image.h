/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The image's metadata pages on a target: the signature tail in page 0, the
 * header page, the chain of extent-map pages, and the report the resume side
 * leaves where the header was. lib/format builds and checks their bytes;
 * this layer reads and writes them through the target. The block records
 * between them are lib/pipeline/codec.c's.
 *
 * Failures are logged here, naming the target and the page; the functions
 * return -errno as the target's I/O or the checks give it.
 */
#ifndef HIB_IMAGE_H
#define HIB_IMAGE_H

#include <stdint.h>

#include "format/format.h"
#include "storage/extmap.h"
#include "storage/target.h"

/* An image found on a target: tail, header and map, all checked. */
struct image {
	struct hib_sig_tail tail;
	struct hib_header *hdr; /* one page, hib_alloc_pages */
	struct hib_extmap map;
};

/*
 * Read the tail, the header it points at and the map chain the header points
 * at, checking each (and the map against the header and the target's
 * bounds). -ENOENT when page 0 holds no image of ours; -EPROTO for another
 * format version; -EBADMSG for anything damaged; other -errno from reading.
 */
int image_load(struct hib_target *t, struct image *ret);
void image_free(struct image *img);

/*
 * Write the map chain of @map for image @image_id into the @n pages at byte
 * offsets @offs (allocated by the caller, in chain order), building each in
 * @page (one page from hib_alloc_pages).
 */
int image_write_map(struct hib_target *t, const struct hib_extmap *map, uint64_t image_id,
		    const uint64_t *offs, uint32_t n, struct hib_map_page *page);
/* Seal the header @h (its own checksum: any MAC must be set before) and write
 * it at byte @off. */
int image_write_header(struct hib_target *t, uint64_t off, struct hib_header *h);
/*
 * The signature, last: the tail of the image whose sealed header @h is at
 * @header_off, over page 0 as it was (@orig_page, a hib_alloc_pages page that
 * becomes the page written: nothing is allocated), written and synced.
 */
int image_write_sig(struct hib_target *t, const struct hib_header *h, uint64_t header_off,
		    uint8_t orig_page[HIB_PAGE_SIZE]);

/* Overwrite the header page (wrapped key, map pointer) with zeros, and sync. */
int image_wipe(struct hib_target *t, const struct image *img);
/* Make page 0 a plain area again: the tail the image replaced (its header
 * keeps it; with no header in @img, what mkswap or prepare-file leaves), then
 * the header page wiped. */
int image_discard(struct hib_target *t, const struct image *img);
/* The same, but leave the cycle's report there (struct hib_report), loaded in
 * @load_ms by @load_threads threads. */
int image_write_report(struct hib_target *t, const struct image *img, uint64_t load_ms,
		       unsigned load_threads);
/* The resumed system: the report at @hdr_off for image @image_id, if any, into
 * @ret; the page is zeroed. -ENOENT when there is none. @page (a
 * hib_alloc_pages page) is worked in: the resumed system is still frozen, and
 * nothing is allocated. */
int image_take_report(struct hib_target *t, uint64_t hdr_off, uint64_t image_id, void *page,
		      struct hib_report *ret);

#endif
