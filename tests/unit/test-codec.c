// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Block codecs (lib/pipeline/codec.h): each codec gives back what it was
 * given; zero blocks cost a header and nothing else; what does not compress
 * is stored raw; a record changed anywhere, or checked with another image's
 * seed, is refused; and no record outgrows the buffer a reader gives it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <lz4.h>
#include <zstd.h>

#include "pipeline/codec.h"
#include "helpers.h"
#include "util/util.h"

#define SEED 0x9b05688c2b3e6c1full

static uint64_t rng_next(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

enum content { C_MIXED, C_ZERO, C_RANDOM };

/* Pages like a memory image: text, zeros, random, repeated words, sparse. */
static void fill(uint8_t *buf, size_t bytes, enum content c, uint64_t seed)
{
	static const char *const words[] = { "page ",   "swap ",   "kernel ", "struct ",
					     "return ", "0x7fff ", "\n" };
	uint64_t x = seed;

	if (c == C_ZERO) {
		memset(buf, 0, bytes);
		return;
	}
	for (size_t p = 0; p < bytes / HIB_PAGE_SIZE; p++) {
		uint8_t *pg = buf + p * HIB_PAGE_SIZE;
		unsigned kind = c == C_RANDOM ? 2 : (unsigned)(rng_next(&x) % 5);

		switch (kind) {
		case 0: {
			size_t n = 0;
			while (n < HIB_PAGE_SIZE) {
				const char *w = words[rng_next(&x) % 7];
				for (size_t j = 0; w[j] && n < HIB_PAGE_SIZE; j++)
					pg[n++] = (uint8_t)w[j];
			}
			break;
		}
		case 1:
			memset(pg, 0, HIB_PAGE_SIZE);
			break;
		case 2:
			for (size_t k = 0; k < HIB_PAGE_SIZE; k += 8) {
				uint64_t v = rng_next(&x);
				memcpy(pg + k, &v, 8);
			}
			break;
		case 3: {
			uint64_t v = rng_next(&x);
			for (size_t k = 0; k < HIB_PAGE_SIZE; k += 8)
				memcpy(pg + k, &v, 8);
			break;
		}
		default:
			memset(pg, 0, HIB_PAGE_SIZE);
			for (size_t k = 0; k < HIB_PAGE_SIZE; k += 64) {
				uint64_t v = rng_next(&x);
				memcpy(pg + k, &v, 8);
			}
		}
	}
	/* Never all zero by chance: mixed content is meant to need a payload. */
	if (c == C_MIXED)
		buf[0] |= 1;
}

/* A codec context, a raw block, a record buffer and a decode buffer. */
struct fixture {
	struct hib_codec_ctx *ctx;
	uint32_t block;
	size_t bound;
	uint8_t *raw, *rec, *out;
};

static void fixture_new(struct fixture *f, enum hib_codec_choice codec, uint32_t block)
{
	memset(f, 0, sizeof(*f));
	f->block = block;
	f->bound = codec_record_bound(block);
	assert_int_equal(codec_ctx_new(codec, 0, block, &f->ctx), 0);
	codec_ctx_set_seed(f->ctx, SEED);
	f->raw = hib_alloc_pages(block);
	f->rec = hib_alloc_pages(f->bound);
	f->out = hib_alloc_pages(block);
	assert_non_null(f->raw);
	assert_non_null(f->rec);
	assert_non_null(f->out);
}

static void fixture_free(struct fixture *f)
{
	codec_ctx_free(f->ctx);
	free(f->raw);
	free(f->rec);
	free(f->out);
}

/* Encode @raw_bytes of f->raw as block @index, seal it, as the writer does. */
static struct hib_block_hdr *encode(struct fixture *f, uint32_t raw_bytes, uint32_t index)
{
	struct hib_block_hdr *h = (struct hib_block_hdr *)f->rec;

	assert_int_equal(codec_encode(f->ctx, f->raw, raw_bytes, index, (uint64_t)index * f->block,
				      f->rec),
			 0);
	codec_seal(f->ctx, f->rec);
	assert_true(hib_block_pages(h->stored_bytes) * HIB_PAGE_SIZE <= f->bound);
	return h;
}

static const enum hib_codec_choice codecs[] = { HIB_COMPRESS_NONE, HIB_COMPRESS_LZ4,
						HIB_COMPRESS_ZSTD };
static const uint16_t block_codec_of[] = { HIB_BLOCK_RAW, HIB_BLOCK_LZ4, HIB_BLOCK_ZSTD };

static void round_trip(void **state)
{
	enum hib_codec_choice codec = *(enum hib_codec_choice *)*state;
	static const uint32_t blocks[] = { 4096, 64 * 1024, 256 * 1024 };

	for (size_t b = 0; b < sizeof(blocks) / sizeof(blocks[0]); b++) {
		/* A full block, then the short last block of a stream. */
		uint32_t sizes[] = { blocks[b], 3 * HIB_PAGE_SIZE };
		struct fixture f;

		fixture_new(&f, codec, blocks[b]);
		for (size_t s = 0; s < 2 && sizes[s] <= f.block; s++) {
			uint32_t raw_bytes = sizes[s];
			struct hib_block_hdr *h;

			fill(f.raw, raw_bytes, C_MIXED, blocks[b] + raw_bytes);
			h = encode(&f, raw_bytes, 5);
			assert_int_equal(h->magic, HIB_BLOCK_MAGIC);
			assert_int_equal(h->raw_bytes, raw_bytes);
			assert_int_equal(hib_block_hdr_check(h, 5, f.block), 0);
			if (h->codec == HIB_BLOCK_RAW) {
				assert_int_equal(h->stored_bytes, raw_bytes);
			} else {
				/* Compressed only when it saves a page on disk, and only
				 * by the codec asked for. */
				assert_int_equal(h->codec, block_codec_of[codec]);
				assert_true(hib_block_pages(h->stored_bytes) <
					    hib_block_pages(raw_bytes));
			}
			/* Mixed pages compress well: from 16 pages on, a compressing
			 * codec must have been used. */
			if (codec == HIB_COMPRESS_NONE)
				assert_int_equal(h->codec, HIB_BLOCK_RAW);
			else if (raw_bytes >= 16 * HIB_PAGE_SIZE)
				assert_int_equal(h->codec, block_codec_of[codec]);
			memset(f.out, 0xee, f.block);
			assert_int_equal(codec_decode(f.ctx, f.rec, f.out), 0);
			assert_memory_equal(f.out, f.raw, raw_bytes);
		}
		fixture_free(&f);
	}
}

static void zero_block_has_no_payload(void **state)
{
	enum hib_codec_choice codec = *(enum hib_codec_choice *)*state;
	struct fixture f;
	struct hib_block_hdr *h;

	fixture_new(&f, codec, 64 * 1024);
	memset(f.rec, 0xa5, f.bound); /* stale bytes of an earlier block */
	fill(f.raw, f.block, C_ZERO, 0);
	h = encode(&f, f.block, 0);
	assert_int_equal(h->codec, HIB_BLOCK_ZERO);
	assert_int_equal(h->stored_bytes, 0);
	assert_int_equal(hib_block_pages(h->stored_bytes), 1);
	assert_int_equal(hib_block_hdr_check(h, 0, f.block), 0);
	/* The one page the record takes is header and zeros. */
	for (size_t i = sizeof(*h); i < HIB_PAGE_SIZE; i++)
		if (f.rec[i])
			fail_msg("zero block record: byte %zu is 0x%02x, not zero", i, f.rec[i]);
	memset(f.out, 0xee, f.block);
	assert_int_equal(codec_decode(f.ctx, f.rec, f.out), 0);
	assert_memory_equal(f.out, f.raw, f.block);
	fixture_free(&f);
}

static void random_block_stored_raw(void **state)
{
	enum hib_codec_choice codec = *(enum hib_codec_choice *)*state;
	struct fixture f;
	struct hib_block_hdr *h;

	fixture_new(&f, codec, 256 * 1024);
	fill(f.raw, f.block, C_RANDOM, 99);
	h = encode(&f, f.block, 3);
	assert_int_equal(h->codec, HIB_BLOCK_RAW);
	assert_int_equal(h->stored_bytes, f.block);
	assert_memory_equal(f.rec + sizeof(*h), f.raw, f.block);
	assert_int_equal(codec_decode(f.ctx, f.rec, f.out), 0);
	assert_memory_equal(f.out, f.raw, f.block);
	fixture_free(&f);
}

/* The padding up to the record's last page is zero, whatever was there before. */
static void padding_is_zeroed(void **state)
{
	enum hib_codec_choice codec = *(enum hib_codec_choice *)*state;
	struct fixture f;
	struct hib_block_hdr *h;
	size_t end;

	fixture_new(&f, codec, 64 * 1024);
	memset(f.rec, 0xa5, f.bound);
	fill(f.raw, f.block, C_MIXED, 7);
	h = encode(&f, f.block, 1);
	end = hib_block_pages(h->stored_bytes) * HIB_PAGE_SIZE;
	for (size_t i = sizeof(*h) + h->stored_bytes; i < end; i++)
		if (f.rec[i])
			fail_msg("record byte %zu (payload ends at %zu) is 0x%02x", i,
				 sizeof(*h) + h->stored_bytes, f.rec[i]);
	fixture_free(&f);
}

/*
 * Flip @bit of record byte @i and decode. The reader checks the header's bounds
 * before it trusts stored_bytes and raw_bytes enough to read that much, so a
 * flip that makes them exceed the buffers must be stopped there; any other flip
 * must be stopped by codec_decode itself.
 */
static int flip_and_decode(struct fixture *f, const uint8_t *good, size_t len, size_t i, int bit,
			   uint32_t index)
{
	struct hib_block_hdr *h = (struct hib_block_hdr *)f->rec;
	int r;

	memcpy(f->rec, good, len);
	f->rec[i] ^= (uint8_t)(1u << bit);
	if (h->raw_bytes > f->block || sizeof(*h) + (size_t)h->stored_bytes > f->bound) {
		r = hib_block_hdr_check(h, index, f->block);
		return r < 0 ? -EBADMSG : 0;
	}
	return codec_decode(f->ctx, f->rec, f->out);
}

static void every_bit_flip_rejected(void **state)
{
	enum hib_codec_choice codec = *(enum hib_codec_choice *)*state;
	static const enum content contents[] = { C_MIXED, C_ZERO, C_RANDOM };

	for (size_t c = 0; c < sizeof(contents) / sizeof(contents[0]); c++) {
		struct fixture f;
		struct hib_block_hdr *h;
		uint8_t *good;
		size_t len;

		fixture_new(&f, codec, 4 * HIB_PAGE_SIZE);
		fill(f.raw, f.block, contents[c], 1234 + c);
		h = encode(&f, f.block, 2);
		len = sizeof(*h) + h->stored_bytes;
		good = malloc(f.bound);
		assert_non_null(good);
		memcpy(good, f.rec, f.bound);
		for (size_t i = 0; i < len; i++)
			for (int bit = 0; bit < 8; bit++) {
				int r = flip_and_decode(&f, good, f.bound, i, bit, 2);
				if (r != -EBADMSG)
					fail_msg("codec %d content %zu: flip of byte %zu bit %d "
						 "(record %zu bytes, block codec %u): %d",
						 codec, c, i, bit, len,
						 ((struct hib_block_hdr *)good)->codec, r);
			}
		free(good);
		fixture_free(&f);
	}
}

/* A full-size block: every header bit and a spread of payload bits. */
static void bit_flips_in_large_block_rejected(void **state)
{
	enum hib_codec_choice codec = *(enum hib_codec_choice *)*state;
	struct fixture f;
	struct hib_block_hdr *h;
	uint8_t *good;
	size_t len;
	uint64_t x = 77;

	fixture_new(&f, codec, 256 * 1024);
	fill(f.raw, f.block, C_MIXED, 4242);
	h = encode(&f, f.block, 9);
	len = sizeof(*h) + h->stored_bytes;
	good = malloc(f.bound);
	assert_non_null(good);
	memcpy(good, f.rec, f.bound);
	for (size_t i = 0; i < sizeof(*h); i++)
		for (int bit = 0; bit < 8; bit++)
			if (flip_and_decode(&f, good, len, i, bit, 9) != -EBADMSG)
				fail_msg("header byte %zu bit %d accepted", i, bit);
	for (int k = 0; k < 300; k++) {
		size_t i = sizeof(*h) + rng_next(&x) % h->stored_bytes;
		int bit = (int)(rng_next(&x) % 8);
		if (flip_and_decode(&f, good, len, i, bit, 9) != -EBADMSG)
			fail_msg("payload byte %zu bit %d accepted", i, bit);
	}
	/* The last payload byte too: an off-by-one in the checksummed length hides there. */
	if (flip_and_decode(&f, good, len, len - 1, 0, 9) != -EBADMSG)
		fail_msg("last payload byte accepted");
	free(good);
	fixture_free(&f);
}

static void wrong_seed_rejected(void **state)
{
	enum hib_codec_choice codec = *(enum hib_codec_choice *)*state;
	static const enum content contents[] = { C_MIXED, C_ZERO, C_RANDOM };

	for (size_t c = 0; c < sizeof(contents) / sizeof(contents[0]); c++) {
		struct fixture f;

		fixture_new(&f, codec, 64 * 1024);
		fill(f.raw, f.block, contents[c], 5 + c);
		encode(&f, f.block, 0);
		codec_ctx_set_seed(f.ctx, SEED + 1);
		assert_int_equal(codec_decode(f.ctx, f.rec, f.out), -EBADMSG);
		codec_ctx_set_seed(f.ctx, SEED);
		assert_int_equal(codec_decode(f.ctx, f.rec, f.out), 0);
		fixture_free(&f);
	}
}

/* Resume decodes with contexts made for whatever codec it was given. */
static void any_context_decodes_any_codec(void **state)
{
	(void)state;
	for (size_t w = 0; w < 3; w++) {
		struct fixture f;

		fixture_new(&f, codecs[w], 64 * 1024);
		fill(f.raw, f.block, C_MIXED, 31 + w);
		encode(&f, f.block, 0);
		for (size_t r = 0; r < 3; r++) {
			struct hib_codec_ctx *rd = NULL;

			assert_int_equal(codec_ctx_new(codecs[r], 0, f.block, &rd), 0);
			codec_ctx_set_seed(rd, SEED);
			memset(f.out, 0, f.block);
			assert_int_equal(codec_decode(rd, f.rec, f.out), 0);
			assert_memory_equal(f.out, f.raw, f.block);
			codec_ctx_free(rd);
		}
		fixture_free(&f);
	}
}

static void zstd_levels_round_trip(void **state)
{
	static const int levels[] = { 1, 3, 9, 19 };

	(void)state;
	for (size_t l = 0; l < sizeof(levels) / sizeof(levels[0]); l++) {
		struct fixture f;
		struct hib_codec_ctx *c = NULL;

		fixture_new(&f, HIB_COMPRESS_NONE, 64 * 1024);
		assert_int_equal(codec_ctx_new(HIB_COMPRESS_ZSTD, levels[l], f.block, &c), 0);
		codec_ctx_free(f.ctx);
		f.ctx = c;
		codec_ctx_set_seed(f.ctx, SEED);
		fill(f.raw, f.block, C_MIXED, 100 + l);
		assert_int_equal(encode(&f, f.block, 0)->codec, HIB_BLOCK_ZSTD);
		assert_int_equal(codec_decode(f.ctx, f.rec, f.out), 0);
		assert_memory_equal(f.out, f.raw, f.block);
		fixture_free(&f);
	}
}

/*
 * zstd's contexts are static, sized when the context is made: every level
 * must fit every block a context can be given, at every size up to its
 * block_bytes (zstd picks other parameters per size tier: level 4 needs more
 * for 128 KiB than for 256 KiB), or the block would silently go raw.
 */
static void zstd_static_context_fits_every_block(void **state)
{
	static const uint32_t blocks[] = { 64 * 1024, 256 * 1024 };
	static const char text[] = "struct page *swap_page = kernel_page(pfn);\n";

	(void)state;
	for (size_t b = 0; b < ARRAY_SIZE(blocks); b++)
		for (int level = 1; level <= 19; level++) {
			struct fixture f;
			struct hib_codec_ctx *c = NULL;

			fixture_new(&f, HIB_COMPRESS_NONE, blocks[b]);
			assert_int_equal(codec_ctx_new(HIB_COMPRESS_ZSTD, level, f.block, &c), 0);
			codec_ctx_free(f.ctx);
			f.ctx = c;
			codec_ctx_set_seed(f.ctx, SEED);
			/* Text: every page compresses, so only a context that is too
			 * small stores one raw. */
			for (uint32_t i = 0; i < f.block; i++) {
				uint32_t k = i * 7 + i / HIB_PAGE_SIZE;
				f.raw[i] = (uint8_t)text[k % (sizeof(text) - 1)];
			}
			for (uint32_t sz = HIB_PAGE_SIZE;; sz = MIN(2 * sz, f.block)) {
				const struct hib_block_hdr *h = encode(&f, sz, 0);

				if (h->codec != HIB_BLOCK_ZSTD)
					fail_msg("zstd:%d, %u KiB of a %u KiB block: stored as %u",
						 level, sz >> 10, f.block >> 10, h->codec);
				assert_int_equal(codec_decode(f.ctx, f.rec, f.out), 0);
				assert_memory_equal(f.out, f.raw, sz);
				if (sz == f.block)
					break;
			}
			fixture_free(&f);
		}
}

static const uint32_t bound_sizes[] = {
	4096,       8192,        64 * 1024,       128 * 1024,
	256 * 1024, 1024 * 1024, 4 * 1024 * 1024, 16 * 1024 * 1024
};

/* The bound covers what either library may write, and the header, in whole pages. */
static void record_bound_covers_codecs(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bound_sizes) / sizeof(bound_sizes[0]); i++) {
		uint32_t b = bound_sizes[i];
		size_t bound = codec_record_bound(b);

		assert_int_equal(bound % HIB_PAGE_SIZE, 0);
		assert_true(bound >= sizeof(struct hib_block_hdr) + b);
		assert_true(bound >=
			    sizeof(struct hib_block_hdr) + (size_t)LZ4_compressBound((int)b));
		assert_true(bound >= sizeof(struct hib_block_hdr) + ZSTD_compressBound(b));
	}
}

/* Worst-case input through each codec: the record stays within the bound. */
static void record_bound_respected_by_encoder(void **state)
{
	enum hib_codec_choice codec = *(enum hib_codec_choice *)*state;

	for (size_t i = 0; i < 6; i++) {
		struct fixture f;
		struct hib_block_hdr *h;

		fixture_new(&f, codec, bound_sizes[i]);
		memset(f.rec, 0xa5, f.bound);
		fill(f.raw, f.block, C_RANDOM, i);
		h = encode(&f, f.block, 0);
		assert_true(hib_block_pages(h->stored_bytes) * HIB_PAGE_SIZE <= f.bound);
		fixture_free(&f);
	}
}

/*
 * The reader checks a block header, then reads hib_block_pages(stored_bytes)
 * pages into a buffer of codec_record_bound(block) bytes, and only then
 * verifies the checksum. So every stored_bytes the check accepts must fit
 * that buffer, or a damaged header overruns it.
 */
static void block_check_keeps_record_within_bound(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bound_sizes) / sizeof(bound_sizes[0]); i++) {
		uint32_t b = bound_sizes[i];
		size_t cap = codec_record_bound(b) - sizeof(struct hib_block_hdr);
		uint16_t cs[] = { HIB_BLOCK_LZ4, HIB_BLOCK_ZSTD };

		for (size_t k = 0; k < 2; k++) {
			struct hib_block_hdr h = {
				.magic = HIB_BLOCK_MAGIC,
				.index = 0,
				.raw_bytes = b,
				.stored_bytes = (uint32_t)cap + 1,
				.codec = cs[k],
			};
			if (hib_block_hdr_check(&h, 0, b) == 0)
				fail_msg(
					"block size %u codec %u: header check accepts stored_bytes "
					"%u, a record of %llu bytes, but the reader's buffer is "
					"%zu bytes",
					b, cs[k], h.stored_bytes,
					(unsigned long long)(hib_block_pages(h.stored_bytes) *
							     HIB_PAGE_SIZE),
					codec_record_bound(b));
		}
	}
}

/* One case per codec, named after the codec. */
#define CODEC_CASE(fn, i, suffix)                                                                  \
	(struct CMUnitTest)                                                                        \
	{                                                                                          \
		.name = #fn suffix, .test_func = fn, .initial_state = (void *)&codecs[i]           \
	}
#define PER_CODEC(fn)                                                                              \
	CODEC_CASE(fn, 0, "_none"), CODEC_CASE(fn, 1, "_lz4"), CODEC_CASE(fn, 2, "_zstd")
#define NAMED(fn)                                                                                  \
	(struct CMUnitTest)                                                                        \
	{                                                                                          \
		.name = #fn, .test_func = fn                                                       \
	}

/*
 * codec_decode_checked (the resume's read-ahead checked the record's checksum
 * already): it does not compute it again -- a record whose stored checksum is
 * wrong decodes -- and the seal still guards the payload: a byte changed and
 * the checksum recomputed over it is refused as by codec_decode.
 */
static void checked_skips_only_the_checksum(void **state)
{
	static const uint8_t key[32] = { 7, 1, 2 };
	struct fixture f;
	struct hib_block_hdr *h;
	uint8_t *good;
	size_t len;

	(void)state;
	fixture_new(&f, HIB_COMPRESS_LZ4, 64 * 1024);
	codec_ctx_set_key(f.ctx, key);
	fill(f.raw, f.block, C_MIXED, 5);
	h = encode(&f, f.block, 2);
	assert_true(h->flags & HIB_BFLAG_SEALED);
	len = sizeof(*h) + h->stored_bytes;
	good = malloc(len);
	assert_non_null(good);
	memcpy(good, f.rec, len);

	h->stored_xxh3 ^= 1;
	assert_int_equal(codec_decode(f.ctx, f.rec, f.out), -EBADMSG);
	memcpy(f.rec, good, len);
	h->stored_xxh3 ^= 1;
	memset(f.out, 0, f.block);
	assert_int_equal(codec_decode_checked(f.ctx, f.rec, f.out), 0);
	assert_memory_equal(f.out, f.raw, f.block);

	/* (A failed open wipes the payload in place: each call gets a copy.) */
	memcpy(f.rec, good, len);
	f.rec[sizeof(*h) + h->stored_bytes / 2] ^= 0x10;
	codec_seal(f.ctx, f.rec);
	memcpy(good, f.rec, len);
	assert_int_equal(codec_decode_checked(f.ctx, f.rec, f.out), HIB_ERR_AUTH);
	memcpy(f.rec, good, len);
	assert_int_equal(codec_decode(f.ctx, f.rec, f.out), HIB_ERR_AUTH);
	free(good);
	fixture_free(&f);
}

/*
 * The step times adaptive compression weighs: the compressor's run apart
 * from the seal, which a block stored raw pays as well (over its whole
 * payload); nothing timed unless asked.
 */
static void step_times(void **state)
{
	static const uint8_t key[32] = { 9, 4 };
	struct fixture f;
	struct hib_block_hdr *h;
	struct hib_codec_times t;

	(void)state;
	fixture_new(&f, HIB_COMPRESS_LZ4, 256 * 1024);
	fill(f.raw, f.block, C_MIXED, 11);
	encode(&f, f.block, 0);
	t = codec_ctx_last_times(f.ctx);
	assert_true(t.compress_ns == 0 && t.seal_ns == 0 && t.sealed_bytes == 0);

	codec_ctx_set_timing(f.ctx, true);
	h = encode(&f, f.block, 1);
	assert_int_equal(h->codec, HIB_BLOCK_LZ4);
	t = codec_ctx_last_times(f.ctx);
	assert_true(t.compress_ns > 0);
	assert_true(t.seal_ns == 0 && t.sealed_bytes == 0); /* a plain image */

	codec_ctx_set_key(f.ctx, key);
	h = encode(&f, f.block, 2);
	t = codec_ctx_last_times(f.ctx);
	assert_true(t.compress_ns > 0 && t.seal_ns > 0);
	assert_int_equal(t.sealed_bytes, h->stored_bytes - HIB_SEAL_TAG);

	codec_ctx_set_raw(f.ctx, true);
	h = encode(&f, f.block, 3);
	assert_int_equal(h->codec, HIB_BLOCK_RAW);
	t = codec_ctx_last_times(f.ctx);
	assert_true(t.seal_ns > 0);
	assert_int_equal(t.sealed_bytes, f.block);

	/* Zero blocks are bare headers when plain: no step runs. */
	codec_ctx_set_key(f.ctx, NULL);
	codec_ctx_set_raw(f.ctx, false);
	fill(f.raw, f.block, C_ZERO, 0);
	encode(&f, f.block, 4);
	t = codec_ctx_last_times(f.ctx);
	assert_true(t.compress_ns == 0 && t.seal_ns == 0 && t.sealed_bytes == 0);
	fixture_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PER_CODEC(round_trip),
		PER_CODEC(zero_block_has_no_payload),
		PER_CODEC(random_block_stored_raw),
		PER_CODEC(padding_is_zeroed),
		PER_CODEC(every_bit_flip_rejected),
		PER_CODEC(bit_flips_in_large_block_rejected),
		PER_CODEC(wrong_seed_rejected),
		PER_CODEC(record_bound_respected_by_encoder),
		NAMED(any_context_decodes_any_codec),
		NAMED(zstd_levels_round_trip),
		NAMED(zstd_static_context_fits_every_block),
		NAMED(record_bound_covers_codecs),
		NAMED(block_check_keeps_record_within_bound),
		NAMED(checked_skips_only_the_checksum),
		NAMED(step_times),
	};

	quiet_logs();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
