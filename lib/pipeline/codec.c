// SPDX-License-Identifier: GPL-2.0-or-later
#include <lz4.h>
#include <sodium.h>
#include <string.h>
#include <xxhash.h>
#include <zstd.h>

#include "pipeline/codec.h"
#include "util/util.h"

struct hib_codec_ctx {
	enum hib_codec_choice codec;
	int level;
	ZSTD_CCtx *zc;
	ZSTD_DCtx *zd;
	uint64_t seed;
	const uint8_t *key;    /* the image's data key, or NULL; owned by the engine */
	bool raw;              /* store blocks raw for now (codec_ctx_set_raw) */
	void *userdata;
};

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

int codec_ctx_new(enum hib_codec_choice codec, int level, uint32_t block_bytes,
		  struct hib_codec_ctx **ret)
{
	struct hib_codec_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->codec = codec;
	c->level = level;
	/* Decoding may meet any codec, whatever we write with. */
	c->zd = ZSTD_createDCtx();
	if (codec == HIB_COMPRESS_ZSTD) {
		c->zc = ZSTD_createCCtx();
		if (c->zc) {
			ZSTD_CCtx_setParameter(c->zc, ZSTD_c_compressionLevel, level ? level : 3);
			/* Size the context now: no allocation once the image is held. */
			ZSTD_CCtx_setPledgedSrcSize(c->zc, block_bytes);
		}
	}
	if (!c->zd || (codec == HIB_COMPRESS_ZSTD && !c->zc)) {
		codec_ctx_free(c);
		return -ENOMEM;
	}
	*ret = c;
	return 0;
}

void codec_ctx_free(struct hib_codec_ctx *c)
{
	if (!c)
		return;
	ZSTD_freeCCtx(c->zc);
	ZSTD_freeDCtx(c->zd);
	free(c);
}

size_t codec_record_bound(uint32_t block_bytes)
{
	size_t b = MAX((size_t)LZ4_compressBound((int)block_bytes), ZSTD_compressBound(block_bytes));

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

	memset(h, 0, sizeof(*h));
	h->magic = HIB_BLOCK_MAGIC;
	h->index = index;
	h->stream_offset = stream_offset;
	h->raw_bytes = raw_bytes;
	/* A sealed image keeps no fingerprint of its plaintext: the tag authenticates. */
	if (!c->key)
		h->raw_xxh3 = XXH3_64bits_withSeed(raw, raw_bytes, c->seed);

	if (!c->key && all_zero(raw, raw_bytes)) {
		h->codec = HIB_BLOCK_ZERO;
		h->stored_bytes = 0;
		goto done;
	}
	switch (c->raw ? HIB_COMPRESS_NONE : c->codec) {
	case HIB_COMPRESS_LZ4: {
		int k = LZ4_compress_default(raw, (char *)payload, (int)raw_bytes, (int)cap);
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
		/* The header (checksum field still zero) is the additional data. */
		if (crypto_aead_xchacha20poly1305_ietf_encrypt(payload, &clen, payload, n,
							       (const uint8_t *)h, sizeof(*h),
							       NULL, nonce, c->key) != 0 ||
		    clen != n + tag)
			return -EIO;
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
	uint8_t *payload = (uint8_t *)rec + sizeof(*h);
	uint32_t n = h->stored_bytes;

	if (h->stored_xxh3 != hib_block_stored_xxh3(h, payload, c->seed))
		return -EBADMSG;
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
	if (!c->key && XXH3_64bits_withSeed(out, h->raw_bytes, c->seed) != h->raw_xxh3)
		return -EBADMSG;
	return 0;
}
