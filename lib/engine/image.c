// SPDX-License-Identifier: GPL-2.0-or-later
/* Looking at an image on disk without resuming it, and discarding it. */
#include <string.h>

#include "engine/engine.h"

int hib_image_info(struct hib_target *t, struct hib_image_info *ret)
{
	struct hib_image_info info = { 0 };
	struct engine_image img;
	int r;

	r = hib_target_probe(t, &info.state);
	if (r < 0)
		return r;
	if (info.state == HIB_SIG_IMAGE) {
		r = engine_image_load(t, &img);
		if (r == 0) {
			const struct hib_header *h = img.hdr;

			info.header_valid = true;
			info.image_id = h->image_id;
			info.created_unix = h->created_unix;
			memcpy(info.kernel_release, h->kernel_release, sizeof(info.kernel_release));
			memcpy(info.kernel_version, h->kernel_version, sizeof(info.kernel_version));
			memcpy(info.machine, h->machine, sizeof(info.machine));
			info.stream_bytes = h->stream_bytes;
			info.stored_bytes = h->stat_stored_bytes + (uint64_t)(h->map_pages + 1) *
									   HIB_PAGE_SIZE;
			info.codec = h->codec;
			info.nr_blocks = h->nr_blocks;
			info.map_extents = h->map_extents;
			info.threads = h->stat_threads;
			info.write_ms = h->stat_write_ms;
			info.snapshot_ms = h->stat_snapshot_ms;
			engine_image_free(&img);
		}
	}
	*ret = info;
	return 0;
}

int hib_image_invalidate(struct hib_target *t)
{
	_cleanup_(freep) uint8_t *page = hib_alloc_pages(HIB_PAGE_SIZE);
	struct engine_image img;
	enum hib_sig_state st;
	int r;

	if (!page)
		return -ENOMEM;
	r = hib_sig_read(t, page, &st);
	if (r < 0)
		return r;
	if (st != HIB_SIG_IMAGE && st != HIB_SIG_BROKEN)
		return 0;
	/* The header keeps the exact bytes we replaced; without it, what mkswap writes. */
	if (engine_image_load(t, &img) == 0) {
		r = hib_sig_restore(t, img.hdr->orig_tail);
		if (r == 0)
			engine_image_wipe(t, &img);
		engine_image_free(&img);
	} else {
		r = hib_sig_restore(t, NULL);
	}
	return r < 0 ? r : 1;
}

const char *hib_codec_name(unsigned codec)
{
	switch (codec) {
	case HIB_COMPRESS_NONE:
		return "none";
	case HIB_COMPRESS_LZ4:
		return "lz4";
	case HIB_COMPRESS_ZSTD:
		return "zstd";
	}
	return "unknown";
}

int hib_codec_parse(const char *text, enum hib_codec_choice *ret_codec, int *ret_level)
{
	static const struct {
		const char *name;
		enum hib_codec_choice c;
	} names[] = { { "none", HIB_COMPRESS_NONE }, { "lz4", HIB_COMPRESS_LZ4 },
		      { "zstd", HIB_COMPRESS_ZSTD } };
	const char *colon = strchr(text, ':');
	size_t len = colon ? (size_t)(colon - text) : strlen(text);
	int level = 0;

	if (colon) {
		char *end;
		long v = strtol(colon + 1, &end, 10);
		if (!colon[1] || *end || v < 1 || v > 19)
			return -EINVAL;
		level = (int)v;
	}
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strlen(names[i].name) == len && strncmp(text, names[i].name, len) == 0) {
			if (level && names[i].c != HIB_COMPRESS_ZSTD)
				return -EINVAL;
			*ret_codec = names[i].c;
			*ret_level = level;
			return 0;
		}
	return -EINVAL;
}
