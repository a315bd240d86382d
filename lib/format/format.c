// SPDX-License-Identifier: GPL-2.0-or-later
/* Sealing (checksumming) and checking of the on-disk structs of format.h. */
#include <errno.h>
#include <string.h>
#include <xxhash.h>

#include "format/format.h"

int hib_tail_is_ours(const uint8_t page[HIB_PAGE_SIZE])
{
	return memcmp(page + HIB_PAGE_SIZE - HIB_SIG_LEN, HIB_IMAGE_SIG, HIB_SIG_LEN) == 0 &&
	       memcmp(page + HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE, HIB_TAIL_MAGIC, 16) == 0;
}

static uint64_t tail_sum(const struct hib_sig_tail *t)
{
	struct hib_sig_tail tmp = *t;

	tmp.tail_xxh3 = 0;
	return XXH3_64bits(&tmp, sizeof(tmp));
}

void hib_tail_seal(struct hib_sig_tail *t)
{
	t->tail_xxh3 = tail_sum(t);
}

int hib_tail_check(const struct hib_sig_tail *t)
{
	if (memcmp(t->magic, HIB_TAIL_MAGIC, 16) || memcmp(t->sig, HIB_IMAGE_SIG, HIB_SIG_LEN))
		return -ENOENT;
	if (t->tail_xxh3 != tail_sum(t))
		return -EBADMSG;
	if (t->version != HIB_FORMAT_VERSION)
		return -EPROTO;
	if (t->page_size != HIB_PAGE_SIZE || t->header_offset % HIB_PAGE_SIZE)
		return -EBADMSG;
	return 0;
}

uint64_t hib_header_xxh3(const struct hib_header *h)
{
	return XXH3_64bits_withSeed(h, HIB_PAGE_SIZE, h->image_id);
}

void hib_header_seal(struct hib_header *h)
{
	h->header_xxh3_self =
		XXH3_64bits_withSeed(h, offsetof(struct hib_header, header_xxh3_self), h->image_id);
}

int hib_header_check(const struct hib_header *h, uint64_t image_id, uint64_t expect_xxh3)
{
	if (memcmp(h->magic, HIB_HEADER_MAGIC, 16))
		return -EBADMSG;
	if (h->image_id != image_id)
		return -EBADMSG;
	/* The tail's checksum of the whole page and the page's own must both hold. */
	if (hib_header_xxh3(h) != expect_xxh3)
		return -EBADMSG;
	if (h->header_xxh3_self !=
	    XXH3_64bits_withSeed(h, offsetof(struct hib_header, header_xxh3_self), image_id))
		return -EBADMSG;
	if (h->version != HIB_FORMAT_VERSION)
		return -EPROTO;
	if (h->codec >= HIB_CODEC_MAX || h->block_raw_bytes == 0 ||
	    h->block_raw_bytes % HIB_PAGE_SIZE || h->block_raw_bytes > HIB_BLOCK_MAX_BYTES)
		return -EBADMSG;
	if (h->stream_bytes == 0 || h->stream_bytes % HIB_PAGE_SIZE)
		return -EBADMSG;
	if (h->stream_bytes / h->block_raw_bytes + (h->stream_bytes % h->block_raw_bytes != 0) !=
	    (uint64_t)h->nr_blocks)
		return -EBADMSG;
	if (h->map_offset % HIB_PAGE_SIZE || h->map_pages == 0 ||
	    h->map_extents > (uint64_t)h->map_pages * HIB_MAP_ENTRIES)
		return -EBADMSG;
	if (h->data_pages < h->nr_blocks)
		return -EBADMSG;
	if (h->nr_fs > HIB_MAX_FS)
		return -EBADMSG;
	if (memchr(h->kernel_release, 0, sizeof(h->kernel_release)) == NULL ||
	    memchr(h->kernel_version, 0, sizeof(h->kernel_version)) == NULL ||
	    memchr(h->machine, 0, sizeof(h->machine)) == NULL)
		return -EBADMSG;
	return 0;
}

static uint64_t map_sum(const struct hib_map_page *m, uint64_t image_id)
{
	struct hib_map_page tmp;

	memcpy(&tmp, m, sizeof(tmp));
	tmp.xxh3 = 0;
	return XXH3_64bits_withSeed(&tmp, sizeof(tmp), image_id);
}

void hib_map_page_seal(struct hib_map_page *m, uint64_t image_id)
{
	m->xxh3 = 0;
	m->xxh3 = map_sum(m, image_id);
}

int hib_map_page_check(const struct hib_map_page *m, uint64_t image_id, uint32_t index)
{
	if (memcmp(m->magic, HIB_MAP_MAGIC, 4) || m->index != index)
		return -EBADMSG;
	if (m->xxh3 != map_sum(m, image_id))
		return -EBADMSG;
	if (m->count == 0 || m->count > HIB_MAP_ENTRIES || m->next_offset % HIB_PAGE_SIZE)
		return -EBADMSG;
	for (uint32_t i = 0; i < m->count; i++)
		if (m->ext[i].offset % HIB_PAGE_SIZE || m->ext[i].pages == 0 ||
		    m->ext[i].pages > (UINT64_MAX / HIB_PAGE_SIZE) ||
		    m->ext[i].offset > UINT64_MAX - m->ext[i].pages * HIB_PAGE_SIZE)
			return -EBADMSG;
	return 0;
}

int hib_block_hdr_check(const struct hib_block_hdr *b, uint32_t index, uint32_t max_raw)
{
	if (b->magic != HIB_BLOCK_MAGIC || b->index != index)
		return -EBADMSG;
	if (b->raw_bytes == 0 || b->raw_bytes > max_raw || b->raw_bytes % HIB_PAGE_SIZE)
		return -EBADMSG;
	uint32_t tag = (b->flags & HIB_BFLAG_SEALED) ? HIB_SEAL_TAG : 0;

	if (b->flags & ~HIB_BFLAG_SEALED)
		return -EBADMSG;
	switch (b->codec) {
	case HIB_BLOCK_RAW:
		if (b->stored_bytes != b->raw_bytes + tag)
			return -EBADMSG;
		break;
	case HIB_BLOCK_ZERO:
		/* Sealed images never use zero blocks: they would say where memory is empty. */
		if (b->stored_bytes != 0 || tag)
			return -EBADMSG;
		break;
	case HIB_BLOCK_LZ4:
	case HIB_BLOCK_ZSTD:
		/* Compressed payloads are kept only when they save a page, so they are
		 * always smaller than the raw block: a record never outgrows a raw one. */
		if (b->stored_bytes <= tag || b->stored_bytes >= b->raw_bytes + tag)
			return -EBADMSG;
		break;
	default:
		return -EBADMSG;
	}
	return 0;
}

uint64_t hib_block_stored_xxh3(const struct hib_block_hdr *b, const void *payload,
			       uint64_t image_id)
{
	XXH3_state_t st;
	struct hib_block_hdr tmp = *b;

	tmp.stored_xxh3 = 0;
	/* libxxhash 0.8.1 reads the state's old seed to decide whether to rebuild its
	 * secret: a stack state must be initialised or the hash is wrong at random. */
	XXH3_INITSTATE(&st);
	XXH3_64bits_reset_withSeed(&st, image_id);
	XXH3_64bits_update(&st, &tmp, sizeof(tmp));
	if (b->stored_bytes)
		XXH3_64bits_update(&st, payload, b->stored_bytes);
	return XXH3_64bits_digest(&st);
}
