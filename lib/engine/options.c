// SPDX-License-Identifier: GPL-2.0-or-later
/* The options of a cycle: defaults, and the codec's names. */
#include <string.h>

#include "engine/engine.h"

/* The choice is stored in the header as it is, and hib_codec_name() names both:
 * the numbers are the on-disk ones (format.h). */
_Static_assert((int)HIB_COMPRESS_NONE == HIB_CODEC_NONE && (int)HIB_COMPRESS_LZ4 == HIB_CODEC_LZ4 &&
		       (int)HIB_COMPRESS_ZSTD == HIB_CODEC_ZSTD,
	       "enum hib_codec_choice must be enum hib_codec");

void hib_options_init(struct hib_options *o)
{
	memset(o, 0, sizeof(*o));
	o->codec = HIB_COMPRESS_LZ4;
	o->image_size = HIB_IMAGE_SIZE_DEFAULT;
	o->powerdown = HIB_POWERDOWN_SHUTDOWN;
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
	} names[] = { { "none", HIB_COMPRESS_NONE },
		      { "lz4", HIB_COMPRESS_LZ4 },
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

const char *hib_require_name(enum hib_require r)
{
	switch (r) {
	case HIB_REQUIRE_NOTHING:
		return "nothing";
	case HIB_REQUIRE_PASSPHRASE:
		return "a passphrase";
	case HIB_REQUIRE_KEY_FILE:
		return "a key file";
	case HIB_REQUIRE_TPM:
		return "a key sealed to the TPM";
	}
	return "an unknown kind of key";
}
