// SPDX-License-Identifier: GPL-2.0-or-later
#include <lz4.h>
#include <sodium.h>
#include <string.h>
/* The static-context functions (ZSTD_initStaticCCtx & co) are in zstd's
 * experimental section, which the shared library exports as well. */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "format/xxh.h"
#include "pipeline/codec.h"
#include "util/util.h"

struct hib_codec_ctx {
	enum hib_codec_choice codec;
	int level;
	ZSTD_CCtx *zc; /* static contexts, in the workspaces below */
	ZSTD_DCtx *zd;
	void *zc_space;
	void *zd_space;
	void *lz4_state; /* LZ4's hash table: its own, not on the stack or heap per block */
	uint64_t seed;
	const uint8_t *key; /* the image's data key, or NULL; owned by the engine */
	bool raw;           /* store blocks raw for now (codec_ctx_set_raw) */
	bool timing;        /* time the last encode's steps (codec_ctx_set_timing) */
	struct hib_codec_times last;
	void *userdata;
};

void codec_ctx_set_timing(struct hib_codec_ctx *c, bool on)
{
	c->timing = on;
}

struct hib_codec_times codec_ctx_last_times(const struct hib_codec_ctx *c)
{
	return c->last;
}

static uint64_t step_start(const struct hib_codec_ctx *c)
{
	return c->timing ? hib_now_ns() : 0;
}

static uint64_t step_ns(const struct hib_codec_ctx *c, uint64_t t0)
{
	return c->timing ? hib_now_ns() - t0 : 0;
}

void codec_ctx_set_raw(struct hib_codec_ctx *c, bool raw)
{
	c->raw = raw;
}

void codec_ctx_set_userdata(struct hib_codec_ctx *c, void *userdata)
{
	c->userdata = userdata;
}

void *codec_ctx_userdata(const struct hib_codec_ctx *c)
{
	return c->userdata;
}

void codec_ctx_set_key(struct hib_codec_ctx *c, const uint8_t *key)
{
	c->key = key;
}

void codec_ctx_set_seed(struct hib_codec_ctx *c, uint64_t seed)
{
	c->seed = seed;
}

/*
 * Workspace a zstd context of @level needs for any input up to @block_bytes.
 * zstd picks its parameters by the input's size: a table for each of four
 * size tiers (up to 16 KiB, 128 KiB, 256 KiB, larger), then windows shrunk to
 * the input's power of two.  So every parameter set a block can get is the
 * one of some power of two below @block_bytes, or of @block_bytes itself
 * (a smaller input is not always cheaper: level 4 needs more for 128 KiB than
 * for 256 KiB).  ZSTD_estimateCCtxSize(level) would size for inputs of any
 * size: 85 MB per worker at level 19, against 5.5 MB for 256 KiB blocks.
 */
static size_t zstd_cctx_bytes(int level, uint32_t block_bytes)
{
	size_t need = 0;

	for (size_t sz = HIB_PAGE_SIZE;; sz *= 2) {
		size_t in = MIN(sz, (size_t)block_bytes);
		ZSTD_compressionParameters cp = ZSTD_getCParams(level, in, 0);

		need = MAX(need, ZSTD_estimateCCtxSize_usingCParams(cp));
		if (sz >= block_bytes)
			return need;
	}
}

/*
 * Both zstd contexts live in workspaces allocated here, as static contexts:
 * zstd then never allocates, and a block that needed more would fail (and be
 * stored raw) instead of growing the process once the image is held.
 */
static int zstd_ctx_init(struct hib_codec_ctx *c, uint32_t block_bytes)
{
	size_t dbytes = ZSTD_estimateDCtxSize();

	/* Decoding may meet any codec, whatever we write with. */
	c->zd_space = hib_alloc_pages(dbytes);
	if (!c->zd_space)
		return -ENOMEM;
	c->zd = ZSTD_initStaticDCtx(c->zd_space, dbytes);
	if (!c->zd)
		return -ENOMEM;
	if (c->codec == HIB_COMPRESS_ZSTD) {
		int level = c->level ? c->level : 3;
		size_t cbytes = zstd_cctx_bytes(level, block_bytes);

		c->zc_space = hib_alloc_pages(cbytes);
		if (!c->zc_space)
			return -ENOMEM;
		c->zc = ZSTD_initStaticCCtx(c->zc_space, cbytes);
		if (!c->zc ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(c->zc, ZSTD_c_compressionLevel, level)))
			return -ENOMEM;
	}
	return 0;
}

int codec_ctx_new(enum hib_codec_choice codec, int level, uint32_t block_bytes,
		  struct hib_codec_ctx **ret)
{
	struct hib_codec_ctx *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	c->codec = codec;
	c->level = level;
	r = zstd_ctx_init(c, block_bytes);
	if (r == 0 && codec == HIB_COMPRESS_LZ4) {
		/* LZ4_compress_default keeps it on the stack, or mallocs it per call
		 * in a liblz4 built with LZ4_HEAPMODE: here it is neither. */
		c->lz4_state = hib_alloc_pages((size_t)LZ4_sizeofState());
		if (!c->lz4_state)
			r = -ENOMEM;
	}
	if (r < 0) {
		codec_ctx_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

void codec_ctx_free(struct hib_codec_ctx *c)
{
	if (!c)
		return;
	/* Static contexts own nothing: their workspaces are all there is. */
	free(c->zc_space);
	free(c->zd_space);
	free(c->lz4_state);
	free(c);
}

size_t codec_record_bound(uint32_t block_bytes)
{
	size_t b =
		MAX((size_t)LZ4_compressBound((int)block_bytes), ZSTD_compressBound(block_bytes));

	b = MAX(b, block_bytes) + sizeof(struct hib_block_hdr) + HIB_SEAL_TAG;
	return DIV_ROUND_UP(b, HIB_PAGE_SIZE) * HIB_PAGE_SIZE;
}

static int all_zero(const void *buf, size_t len)
{
	const uint64_t *p = buf;

	for (size_t i = 0; i < len / 8; i++)
		if (p[i])
			return 0;
	return 1;
}

/* One nonce per block of an image; the data key is random per image. */
static void block_nonce(const struct hib_codec_ctx *c, uint32_t index,
			uint8_t nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES])
{
	memset(nonce, 0, crypto_aead_xchacha20poly1305_ietf_NPUBBYTES);
	memcpy(nonce, &c->seed, 8);
	memcpy(nonce + 8, &index, 4);
}

int codec_encode(struct hib_codec_ctx *c, const void *raw, uint32_t raw_bytes, uint32_t index,
		 uint64_t stream_offset, void *rec)
{
	struct hib_block_hdr *h = rec;
	uint8_t *payload = (uint8_t *)rec + sizeof(*h);
	size_t cap = codec_record_bound(raw_bytes) - sizeof(*h) - HIB_SEAL_TAG;
	uint32_t tag = c->key ? HIB_SEAL_TAG : 0;
	size_t n = 0;
	int codec = HIB_BLOCK_RAW;
	uint64_t t0;

	c->last = (struct hib_codec_times){ 0 };
	memset(h, 0, sizeof(*h));
	h->magic = HIB_BLOCK_MAGIC;
	h->index = index;
	h->stream_offset = stream_offset;
	h->raw_bytes = raw_bytes;
	/* A sealed image keeps no fingerprint of its plaintext: the tag authenticates. */
	if (!c->key)
		h->raw_xxh3 = hib_xxh3(raw, raw_bytes, c->seed);

	if (!c->key && all_zero(raw, raw_bytes)) {
		h->codec = HIB_BLOCK_ZERO;
		h->stored_bytes = 0;
		goto done;
	}
	t0 = step_start(c);
	switch (c->raw ? HIB_COMPRESS_NONE : c->codec) {
	case HIB_COMPRESS_LZ4: {
		/* What LZ4_compress_default does, in the context's own state. */
		int k = LZ4_compress_fast_extState(c->lz4_state, raw, (char *)payload,
						   (int)raw_bytes, (int)cap, 1);
		if (k > 0) {
			n = (size_t)k;
			codec = HIB_BLOCK_LZ4;
		}
		break;
	}
	case HIB_COMPRESS_ZSTD: {
		size_t k = ZSTD_compress2(c->zc, payload, cap, raw, raw_bytes);
		if (!ZSTD_isError(k)) {
			n = k;
			codec = HIB_BLOCK_ZSTD;
		}
		break;
	}
	case HIB_COMPRESS_NONE:
		break;
	}
	c->last.compress_ns = step_ns(c, t0);
	/* Not even a page saved on disk: store it raw, decoding it would only cost time. */
	if (codec == HIB_BLOCK_RAW ||
	    hib_block_pages((uint32_t)n + tag) >= hib_block_pages(raw_bytes + tag)) {
		memcpy(payload, raw, raw_bytes);
		n = raw_bytes;
		codec = HIB_BLOCK_RAW;
	}
	h->codec = (uint16_t)codec;
	h->stored_bytes = (uint32_t)(n + tag);
	if (c->key) {
		uint8_t nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
		unsigned long long clen;

		h->flags |= HIB_BFLAG_SEALED;
		block_nonce(c, index, nonce);
		t0 = step_start(c);
		/* The header (checksum field still zero) is the additional data. */
		if (crypto_aead_xchacha20poly1305_ietf_encrypt(payload, &clen, payload, n,
							       (const uint8_t *)h, sizeof(*h), NULL,
							       nonce, c->key) != 0 ||
		    clen != n + tag)
			return -EIO;
		c->last.seal_ns = step_ns(c, t0);
		c->last.sealed_bytes = n;
	}
done:
	/* Zero the padding: the disk gets no stale bytes of earlier blocks. */
	memset(payload + h->stored_bytes, 0,
	       hib_block_pages(h->stored_bytes) * HIB_PAGE_SIZE - sizeof(*h) - h->stored_bytes);
	return 0;
}

void codec_seal(struct hib_codec_ctx *c, void *rec)
{
	struct hib_block_hdr *h = rec;

	h->stored_xxh3 = hib_block_stored_xxh3(h, (uint8_t *)rec + sizeof(*h), c->seed);
}

int codec_decode(struct hib_codec_ctx *c, void *rec, void *out)
{
	struct hib_block_hdr *h = rec;

	if (h->stored_xxh3 != hib_block_stored_xxh3(h, (uint8_t *)rec + sizeof(*h), c->seed))
		return -EBADMSG;
	return codec_decode_checked(c, rec, out);
}

int codec_decode_checked(struct hib_codec_ctx *c, void *rec, void *out)
{
	struct hib_block_hdr *h = rec;
	uint8_t *payload = (uint8_t *)rec + sizeof(*h);
	uint32_t n = h->stored_bytes;

	/* Sealed if and only if the image is: a stripped seal is tampering too. */
	if (!!(h->flags & HIB_BFLAG_SEALED) != !!c->key)
		return HIB_ERR_AUTH;
	if (c->key) {
		uint8_t nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
		struct hib_block_hdr ad = *h;
		unsigned long long mlen;

		if (n < HIB_SEAL_TAG)
			return HIB_ERR_AUTH;
		ad.stored_xxh3 = 0;
		block_nonce(c, h->index, nonce);
		if (crypto_aead_xchacha20poly1305_ietf_decrypt(payload, &mlen, NULL, payload, n,
							       (const uint8_t *)&ad, sizeof(ad),
							       nonce, c->key) != 0)
			return HIB_ERR_AUTH;
		n = (uint32_t)mlen;
	}
	switch (h->codec) {
	case HIB_BLOCK_ZERO:
		memset(out, 0, h->raw_bytes);
		break;
	case HIB_BLOCK_RAW:
		if (n != h->raw_bytes)
			return -EBADMSG;
		memcpy(out, payload, h->raw_bytes);
		break;
	case HIB_BLOCK_LZ4: {
		int k = LZ4_decompress_safe((const char *)payload, out, (int)n, (int)h->raw_bytes);
		if (k != (int)h->raw_bytes)
			return -EBADMSG;
		break;
	}
	case HIB_BLOCK_ZSTD: {
		size_t k = ZSTD_decompressDCtx(c->zd, out, h->raw_bytes, payload, n);
		if (ZSTD_isError(k) || k != h->raw_bytes)
			return -EBADMSG;
		break;
	}
	default:
		return -EBADMSG;
	}
	if (!c->key && hib_xxh3(out, h->raw_bytes, c->seed) != h->raw_xxh3)
		return -EBADMSG;
	return 0;
}
