// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * --verify: read every block back from the disk and check it, as resume will,
 * before the signature makes the image count. Catches a disk or a mapping
 * that does not return what was written.
 */
#include <stdlib.h>

#include "engine/suspend-priv.h"

/* Read-ahead for --verify: made before the freeze and held through the
 * snapshot, so kept small (4 MiB). */
#define VERIFY_RA_CHUNK_PAGES 256u
#define VERIFY_RA_DEPTH 4u

/* Its buffers and a read-ahead over the map (its range given once the image
 * is written), made before the freeze. */
int suspend_verify_new(struct suspend_ctx *sc)
{
	int r;

	sc->verify_rec = hib_alloc_pages(codec_record_bound(sc->ep.block_bytes));
	sc->verify_out = hib_alloc_pages(sc->ep.block_bytes);
	if (!sc->verify_rec || !sc->verify_out)
		return log_err(-ENOMEM, "verify: allocating the buffers failed: %m");
	r = hib_readahead_new(sc->t, VERIFY_RA_CHUNK_PAGES, VERIFY_RA_DEPTH, sc->o->io_mode,
			      &sc->verify_ra);
	if (r < 0)
		return log_err(r, "verify: setting up the reads failed: %m");
	return 0;
}

/* Before the extent map is freed: reads of its pages may be in flight. */
void suspend_verify_free(struct suspend_ctx *sc)
{
	hib_readahead_free(sc->verify_ra);
	free(sc->verify_rec);
	free(sc->verify_out);
}

int suspend_verify_image(struct suspend_ctx *sc, uint64_t stream_xxh3)
{
	struct hib_codec_ctx *c = sc->ep.ctx[0]; /* the workers have stopped */
	uint32_t block_bytes = sc->ep.block_bytes;
	uint8_t *rec = sc->verify_rec, *out = sc->verify_out;
	struct hib_readahead *ra = sc->verify_ra;
	XXH3_state_t st;
	uint64_t lp = 0, stream = 0, t0 = hib_now_ms();
	int r;

	hib_xxh3_reset(&st, sc->image_id);
	r = hib_readahead_start(ra, &sc->map, 0, sc->map.pages);
	if (r < 0)
		return log_err(r, "verify: setting up the reads failed: %m");
	for (uint32_t i = 0; i < sc->nr_blocks; i++) {
		struct hib_block_hdr *b = (struct hib_block_hdr *)rec;

		r = engine_read_block(ra, sc->map.pages, block_bytes, i, stream, &lp, rec);
		if (r < 0 && r != -EBADMSG)
			return log_err(r, "verify: reading block %u failed: %m", i);
		if (r == 0)
			r = codec_decode(c, rec, out);
		if (r < 0)
			return log_err(r, "verify: block %u does not read back as written", i);
		XXH3_64bits_update(&st, &b->raw_xxh3, sizeof(b->raw_xxh3));
		stream += b->raw_bytes;
	}
	if (stream != sc->stream_bytes || XXH3_64bits_digest(&st) != stream_xxh3)
		return log_err(-EBADMSG, "verify: the image read back differs from the snapshot");
	log_info("verify: %u blocks read back and checked in %llu ms", sc->nr_blocks,
		 (unsigned long long)(hib_now_ms() - t0));
	return 0;
}
