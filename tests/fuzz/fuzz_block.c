// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Block records: hib_block_hdr_check, then codec_decode into a buffer of
 * exactly raw_bytes (as resume does, one record per block), with and without
 * a data key. And the other way round: any data encoded with every codec,
 * sealed, checked and decoded back to the same bytes.
 *
 * Input: [flags u8][block pages u8][record or raw data ...]
 *   flags bit 0   decode with the data key (fuzz_data_key)
 *         bit 1   put stored_xxh3 right before decoding (codec_seal)
 *         bit 2   with the key: encrypt the payload first, as codec_encode
 *                 would (the input payload is then plaintext), so the
 *                 decompressors see sealed records too
 *         bit 3   round trip: the rest is raw stream data, not a record
 *         bits 4-5 the decoding context's own codec (none, lz4, zstd)
 *   block pages: blocks of (n % 64 + 1) pages: the max_raw of the check, and
 *                the block size of the round trip.
 * Records are read with their own index, image id FUZZ_IMAGE_ID.
 */
#include <sodium.h>
#include <xxhash.h>

#include "pipeline/codec.h"
#include "format/format.h"
#include "fuzz-common.h"

static struct hib_codec_ctx *dec_ctx[3];
static struct hib_codec_ctx *enc_ctx[4];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fuzz_quiet_logs();
	if (sodium_init() < 0)
		abort();
	for (int c = 0; c < 3; c++)
		if (codec_ctx_new((enum hib_codec_choice)c, 0, 256 * 1024, &dec_ctx[c]) < 0)
			abort();
	if (codec_ctx_new(HIB_COMPRESS_NONE, 0, 256 * 1024, &enc_ctx[0]) < 0 ||
	    codec_ctx_new(HIB_COMPRESS_LZ4, 0, 256 * 1024, &enc_ctx[1]) < 0 ||
	    codec_ctx_new(HIB_COMPRESS_ZSTD, 1, 256 * 1024, &enc_ctx[2]) < 0 ||
	    codec_ctx_new(HIB_COMPRESS_ZSTD, 3, 256 * 1024, &enc_ctx[3]) < 0)
		abort();
	for (int c = 0; c < 3; c++)
		codec_ctx_set_seed(dec_ctx[c], FUZZ_IMAGE_ID);
	for (int c = 0; c < 4; c++)
		codec_ctx_set_seed(enc_ctx[c], FUZZ_IMAGE_ID);
	return 0;
}

/* codec.c's nonce: image id, block index. */
static void seal_payload(struct hib_block_hdr *h, uint8_t *payload)
{
	uint8_t nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES] = { 0 };
	struct hib_block_hdr ad = *h;
	uint64_t id = FUZZ_IMAGE_ID;
	unsigned long long clen;

	ad.stored_xxh3 = 0;
	memcpy(nonce, &id, 8);
	memcpy(nonce + 8, &h->index, 4);
	crypto_aead_xchacha20poly1305_ietf_encrypt(payload, &clen, payload,
						   h->stored_bytes - HIB_SEAL_TAG,
						   (const uint8_t *)&ad, sizeof(ad), NULL, nonce,
						   fuzz_data_key);
	FUZZ_CHECK(clen == h->stored_bytes);
}

static void decode_one(uint8_t flags, uint32_t max_raw, const uint8_t *data, size_t size)
{
	struct hib_codec_ctx *c = dec_ctx[((flags >> 4) & 3) % 3];
	bool keyed = flags & 1;
	struct hib_block_hdr h;
	uint8_t *rec, *out;
	size_t n;
	int r;

	memset(&h, 0, sizeof(h));
	memcpy(&h, data, size < sizeof(h) ? size : sizeof(h));
	r = hib_block_hdr_check(&h, h.index, max_raw);
	FUZZ_CHECK(r == 0 || r == -EBADMSG || r == HIB_ERR_AUTH);
	if (r < 0)
		return;
	/* What reader_main sizes its reads and buffers by. */
	FUZZ_CHECK(h.raw_bytes > 0 && h.raw_bytes <= max_raw && h.raw_bytes % HIB_PAGE_SIZE == 0);
	FUZZ_CHECK(h.stored_bytes <= h.raw_bytes + HIB_SEAL_TAG);
	FUZZ_CHECK(hib_block_pages(h.stored_bytes) * HIB_PAGE_SIZE <= codec_record_bound(max_raw));
	FUZZ_CHECK(hib_block_hdr_check(&h, h.index + 1, max_raw) == -EBADMSG);

	/* Exactly the record: header and stored_bytes of payload, nothing after. */
	rec = malloc(sizeof(h) + h.stored_bytes);
	out = malloc(h.raw_bytes);
	if (!rec || !out)
		abort();
	memcpy(rec, &h, sizeof(h));
	n = size > sizeof(h) ? size - sizeof(h) : 0;
	n = n < h.stored_bytes ? n : h.stored_bytes;
	memset(rec + sizeof(h), 0, h.stored_bytes);
	memcpy(rec + sizeof(h), data + sizeof(h), n);
	if (keyed && (flags & 4) && (h.flags & HIB_BFLAG_SEALED))
		seal_payload((struct hib_block_hdr *)rec, rec + sizeof(h));
	codec_ctx_set_key(c, keyed ? fuzz_data_key : NULL);
	if (flags & 2)
		codec_seal(c, rec);
	r = codec_decode(c, rec, out);
	FUZZ_CHECK(r == 0 || r == -EBADMSG || r == HIB_ERR_AUTH);
	if (r == 0) {
		FUZZ_CHECK(!!(h.flags & HIB_BFLAG_SEALED) == keyed);
		/* A plain record proves what it decoded to. */
		if (!keyed)
			FUZZ_CHECK(XXH3_64bits_withSeed(out, h.raw_bytes, FUZZ_IMAGE_ID) ==
				   h.raw_xxh3);
	}
	codec_ctx_set_key(c, NULL);
	free(rec);
	free(out);
}

static void round_trip(uint32_t block, const uint8_t *data, size_t size)
{
	size_t raw_len = (size + HIB_PAGE_SIZE - 1) / HIB_PAGE_SIZE * HIB_PAGE_SIZE;
	size_t bound = codec_record_bound(block);
	uint8_t *raw, *rec, *out;

	if (raw_len == 0)
		raw_len = HIB_PAGE_SIZE;
	if (raw_len > block)
		raw_len = block;
	raw = calloc(1, raw_len);
	rec = malloc(bound);
	out = malloc(raw_len);
	if (!raw || !rec || !out)
		abort();
	memcpy(raw, data, size < raw_len ? size : raw_len);

	for (int e = 0; e < 4; e++) {
		for (int k = 0; k < 2; k++) {
			struct hib_block_hdr *h = (struct hib_block_hdr *)rec;
			const uint8_t *key = k ? fuzz_data_key : NULL;
			uint32_t index = (uint32_t)(e * 2 + k);
			size_t len;
			int r;

			codec_ctx_set_key(enc_ctx[e], key);
			memset(rec, 0xa5, bound); /* stale bytes the padding must cover */
			r = codec_encode(enc_ctx[e], raw, (uint32_t)raw_len, index,
					 (uint64_t)index * block, rec);
			FUZZ_CHECK(r == 0);
			codec_seal(enc_ctx[e], rec);
			codec_ctx_set_key(enc_ctx[e], NULL);
			FUZZ_CHECK(hib_block_hdr_check(h, index, block) == 0);
			FUZZ_CHECK(h->raw_bytes == raw_len &&
				   h->stream_offset == (uint64_t)index * block);
			FUZZ_CHECK(!!(h->flags & HIB_BFLAG_SEALED) == !!key);
			len = hib_block_pages(h->stored_bytes) * HIB_PAGE_SIZE;
			FUZZ_CHECK(len <= bound);
			/* Zero padding to the page: no stale memory reaches the disk. */
			for (size_t i = sizeof(*h) + h->stored_bytes; i < len; i++)
				FUZZ_CHECK(rec[i] == 0);
			/* Only a plain image stores all-zero blocks as bare headers. */
			if (h->codec == HIB_BLOCK_ZERO)
				FUZZ_CHECK(!key);

			/* Decode with every context, as resume's workers may be any. */
			for (int d = 0; d < 3; d++) {
				uint8_t *copy = malloc(len);

				if (!copy)
					abort();
				memcpy(copy, rec, len);
				codec_ctx_set_key(dec_ctx[d], key);
				memset(out, 0x5a, raw_len);
				r = codec_decode(dec_ctx[d], copy, out);
				FUZZ_CHECK(r == 0);
				FUZZ_CHECK(memcmp(out, raw, raw_len) == 0);
				/* The other key state refuses it. */
				memcpy(copy, rec, len);
				codec_ctx_set_key(dec_ctx[d], key ? NULL : fuzz_data_key);
				FUZZ_CHECK(codec_decode(dec_ctx[d], copy, out) == HIB_ERR_AUTH);
				codec_ctx_set_key(dec_ctx[d], NULL);
				free(copy);
			}
		}
	}
	free(raw);
	free(rec);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t flags;
	uint32_t block;

	if (size < 2)
		return 0;
	flags = data[0];
	block = (uint32_t)(data[1] % 64 + 1) * HIB_PAGE_SIZE;
	if (flags & 8)
		round_trip(block, data + 2, size - 2);
	else
		decode_one(flags, block, data + 2, size - 2);
	return 0;
}
