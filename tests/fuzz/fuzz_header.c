// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The header page: hib_header_check on arbitrary bytes, as they are and
 * resealed (self-checksum put right, the expected XXH3 and image id taken
 * from the page, as a matching tail would give them), so every field check
 * runs. A header that passes must satisfy everything the engine relies on.
 * Encrypted headers go on to the key unwrap (key file only: never Argon2id)
 * and the MAC check.
 *
 * Input: the header page (zero-padded, truncated to one page).
 */
#include <sodium.h>

#include "pipeline/crypt.h"
#include "format/format.h"
#include "fuzz-common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fuzz_quiet_logs();
	if (sodium_init() < 0)
		abort();
	return 0;
}

/* What the engine (image_load, reader_main, hib_resume) takes for granted. */
static void check_valid(const struct hib_header *h)
{
	uint64_t blocks;

	FUZZ_CHECK(memcmp(h->magic, HIB_HEADER_MAGIC, 16) == 0);
	FUZZ_CHECK((h->version & ~HIB_FEATURES_KNOWN) == HIB_FORMAT_VERSION);
	FUZZ_CHECK(h->codec < HIB_CODEC_MAX);
	FUZZ_CHECK(h->block_raw_bytes > 0 && h->block_raw_bytes % HIB_PAGE_SIZE == 0);
	FUZZ_CHECK(h->block_raw_bytes <= (64u << 20));
	FUZZ_CHECK(h->stream_bytes > 0 && h->stream_bytes % HIB_PAGE_SIZE == 0);
	blocks = (h->stream_bytes + h->block_raw_bytes - 1) / h->block_raw_bytes;
	FUZZ_CHECK(blocks == h->nr_blocks);
	FUZZ_CHECK(h->data_pages >= h->nr_blocks);
	FUZZ_CHECK(h->map_offset % HIB_PAGE_SIZE == 0 && h->map_pages > 0);
	FUZZ_CHECK(h->map_extents <= (uint64_t)h->map_pages * HIB_MAP_ENTRIES);
	FUZZ_CHECK(h->nr_fs <= HIB_MAX_FS && h->nr_fs_later <= HIB_MAX_FS - h->nr_fs);
	FUZZ_CHECK(strnlen(h->kernel_release, sizeof(h->kernel_release)) <
		   sizeof(h->kernel_release));
	FUZZ_CHECK(strnlen(h->kernel_version, sizeof(h->kernel_version)) <
		   sizeof(h->kernel_version));
	FUZZ_CHECK(strnlen(h->machine, sizeof(h->machine)) < sizeof(h->machine));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct hib_header h __attribute__((aligned(HIB_PAGE_SIZE)));
	struct hib_secret s = fuzz_secret();
	uint8_t *key = NULL;
	int r;

	memset(&h, 0, sizeof(h));
	memcpy(&h, data, size < sizeof(h) ? size : sizeof(h));

	/* As read: the tail's checksum of the page is whatever the page hashes to. */
	r = hib_header_check(&h, h.image_id, hib_header_xxh3(&h));
	FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -EPROTO);
	if (r == 0)
		check_valid(&h);

	/* Resealed: every field check runs. */
	hib_header_seal(&h);
	r = hib_header_check(&h, h.image_id, hib_header_xxh3(&h));
	FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -EPROTO);
	if (r == -EPROTO)
		FUZZ_CHECK(h.version != HIB_FORMAT_VERSION);
	if (r != 0)
		return 0;
	check_valid(&h);
	/* Another image's tail, or another page's checksum, never matches. */
	FUZZ_CHECK(hib_header_check(&h, h.image_id ^ 1, hib_header_xxh3(&h)) == -EBADMSG);
	FUZZ_CHECK(hib_header_check(&h, h.image_id, hib_header_xxh3(&h) ^ 1) == -EBADMSG);

	/* The MAC under some key: computed over the page, never matching by chance. */
	r = crypt_header_mac_check(fuzz_data_key, &h);
	FUZZ_CHECK(r == 0 || r == -EBADMSG);

	if (h.flags & HIB_HFLAG_ENCRYPTED) {
		/* Argon2id headers refuse a key file before deriving anything. */
		r = crypt_open(&s, &h, &key);
		FUZZ_CHECK(r == 0 || r == -EACCES || r == -EBADMSG);
		if (h.crypt.kdf != HIB_KDF_KEYFILE)
			FUZZ_CHECK(r != 0);
		if (r == 0) {
			FUZZ_CHECK(key != NULL);
			r = crypt_header_mac_check(key, &h);
			FUZZ_CHECK(r == 0 || r == -EBADMSG);
			/* Resealing the MAC makes it hold, and only under this key. */
			crypt_header_mac_set(key, &h);
			FUZZ_CHECK(crypt_header_mac_check(key, &h) == 0);
			crypt_key_free(key);
		}
	} else {
		FUZZ_CHECK(crypt_open(&s, &h, &key) == -EINVAL);
	}
	return 0;
}
