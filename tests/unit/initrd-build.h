/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Initramfs files built byte by byte for the tests: newc cpio entries written
 * by hand, compressed with libzstd or into lz4's legacy frame, as
 * initramfs-tools and `lz4 -l` write them.
 */
#ifndef HIB_TEST_INITRD_BUILD_H
#define HIB_TEST_INITRD_BUILD_H

#include <lz4.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

struct tbuf {
	unsigned char *p;
	size_t n, cap;
};

static inline void tb_put(struct tbuf *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 4096;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static inline void tb_pad4(struct tbuf *b)
{
	static const char z[4];

	tb_put(b, z, (4 - b->n % 4) % 4);
}

/* One newc entry (a regular file, or the trailer when @name is TRAILER!!!). */
static inline void cpio_entry(struct tbuf *b, const char *name, const void *data, size_t len)
{
	char h[111];
	snprintf(h, sizeof(h), "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X", 1u,
		 strcmp(name, "TRAILER!!!") ? 0100755u : 0u, 0u, 0u, 1u, 0u, (unsigned)len, 0u, 0u,
		 0u, 0u, (unsigned)strlen(name) + 1, 0u);
	tb_put(b, h, 110);
	tb_put(b, name, strlen(name) + 1);
	/* Alignment counts from the archive's start, which the tests keep at 4. */
	tb_pad4(b);
	tb_put(b, data, len);
	tb_pad4(b);
}

/* A whole archive: one file and the trailer, padded to 512 as cpio does. */
static inline void cpio_archive(struct tbuf *b, const char *name, const void *data, size_t len)
{
	static const char z[512];

	cpio_entry(b, name, data, len);
	cpio_entry(b, "TRAILER!!!", "", 0);
	tb_put(b, z, (512 - b->n % 512) % 512);
}

static inline void zstd_append(struct tbuf *b, const struct tbuf *in)
{
	size_t cap = ZSTD_compressBound(in->n), n;
	void *o = malloc(cap);

	n = ZSTD_compress(o, cap, in->p, in->n, 3);
	if (ZSTD_isError(n))
		abort();
	tb_put(b, o, n);
	free(o);
}

static inline void le32_put(struct tbuf *b, uint32_t v)
{
	unsigned char x[4] = { v, v >> 8, v >> 16, v >> 24 };

	tb_put(b, x, 4);
}

/* lz4 -l: the legacy magic, then [le32 size][block] of at most 8 MiB each. */
static inline void lz4_legacy_append(struct tbuf *b, const struct tbuf *in, size_t block)
{
	int cap = LZ4_compressBound((int)block);
	char *o = malloc(cap);

	le32_put(b, 0x184C2102u);
	for (size_t at = 0; at < in->n; at += block) {
		int chunk = (int)(in->n - at < block ? in->n - at : block);
		int n = LZ4_compress_default((const char *)in->p + at, o, chunk, cap);

		if (n <= 0)
			abort();
		le32_put(b, (uint32_t)n);
		tb_put(b, o, (size_t)n);
	}
	free(o);
}

static inline void tb_write(const struct tbuf *b, const char *path)
{
	FILE *f = fopen(path, "we");

	if (!f || fwrite(b->p, 1, b->n, f) != b->n || fclose(f) != 0)
		abort();
}

#endif
