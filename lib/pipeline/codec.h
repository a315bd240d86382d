/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Block codecs: turn up to block_bytes of stream into one block record
 * (struct hib_block_hdr + payload) and back. A block is stored raw when the
 * codec does not win, and as a bare header when it is all zeros. One context
 * per worker thread, made before the freeze with every byte the codecs will
 * use (zstd's static contexts, LZ4's state): encoding and decoding allocate
 * nothing, so nothing is allocated while the image is held.
 */
#ifndef HIB_CODEC_H
#define HIB_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/format.h"
#include "hibernate.h"

struct hib_codec_ctx;

/* A context for blocks of at most @block_bytes of stream. */
int codec_ctx_new(enum hib_codec_choice codec, int level, uint32_t block_bytes,
		  struct hib_codec_ctx **ret);
void codec_ctx_free(struct hib_codec_ctx *c);
/* The image id: seeds every checksum this context computes or checks. */
void codec_ctx_set_seed(struct hib_codec_ctx *c, uint64_t seed);
/* Seal (and open) every block with this 32-byte data key; NULL: plain image. */
void codec_ctx_set_key(struct hib_codec_ctx *c, const uint8_t *key);

/* Store the next blocks raw whatever the codec (adaptive compression: the
 * disk is waiting for the codec). Zero blocks are still bare headers. */
void codec_ctx_set_raw(struct hib_codec_ctx *c, bool raw);
/* What the last codec_encode spent on its steps, when timing is on (0
 * otherwise): adaptive compression weighs the compressor alone against the
 * disk, and the seal, which raw blocks pay too, per byte it sealed. */
struct hib_codec_times {
	uint64_t compress_ns;  /* the compressor's run (0: stored raw by choice, or zero) */
	uint64_t seal_ns;      /* the AEAD over the payload (0: plain image) */
	uint64_t sealed_bytes; /* the payload it sealed */
};
void codec_ctx_set_timing(struct hib_codec_ctx *c, bool on);
struct hib_codec_times codec_ctx_last_times(const struct hib_codec_ctx *c);
/* The engine's pointer, for its work function. */
void codec_ctx_set_userdata(struct hib_codec_ctx *c, void *userdata);
void *codec_ctx_userdata(const struct hib_codec_ctx *c);

/* Bytes a record buffer needs for blocks of @block_bytes, header included, page-rounded. */
size_t codec_record_bound(uint32_t block_bytes);

/*
 * Encode @raw (@raw_bytes, a page multiple, at most the context's block_bytes:
 * a larger block finds no room in zstd's workspace and is stored raw), block
 * @index starting at @stream_offset of the stream, into @rec
 * (codec_record_bound() bytes): header and payload, compressed, and encrypted
 * with the context's key. Returns 0 or -errno.
 */
int codec_encode(struct hib_codec_ctx *c, const void *raw, uint32_t raw_bytes, uint32_t index,
		 uint64_t stream_offset, void *rec);
/* Seal the record: the checksum over header and payload. */
void codec_seal(struct hib_codec_ctx *c, void *rec);
/*
 * Check the record's checksum, open its seal (in place), decode it into @out
 * (hdr->raw_bytes), check the decoded checksum. -EBADMSG on any mismatch;
 * HIB_ERR_AUTH when the checksum holds but the seal does not open (or is
 * missing, or present in an unencrypted image): someone who could recompute
 * the checksum changed the block, or it was sealed under another key.
 */
#define HIB_ERR_AUTH (-EKEYREJECTED)
int codec_decode(struct hib_codec_ctx *c, void *rec, void *out);
/* codec_decode without the record's checksum, which the caller checked over
 * these very bytes (the resume's read-ahead, preload.c): the seal is still
 * opened, the decoded data still checked. */
int codec_decode_checked(struct hib_codec_ctx *c, void *rec, void *out);

#endif
