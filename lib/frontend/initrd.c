// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * An initramfs looked through for some words, as the kernel unpacks it
 * (init/initramfs.c): uncompressed newc cpio archives one after another, zero
 * padding between them, then a compressed one found by its magic. Debian's
 * initramfs-tools writes the early (microcode) cpio uncompressed and the main
 * one with zstd since bookworm; lz4 is its legacy frame (`lz4 -l`). Read by
 * pread in blocks; the words are found across the blocks' edges.
 */
#include <errno.h>
#include <fcntl.h>
#include <lz4.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "frontend/initrd.h"
#include "util/error.h"
#include "util/util.h"

#define CPIO_HDR 110
#define LZ4_LEGACY_MAGIC 0x184C2102u
#define LZ4_LEGACY_BLOCK (8u << 20)

struct needle {
	const char *s;
	size_t len;
	char carry[64];
	size_t kept;
	bool found;
};

struct scan {
	const char *path;
	int fd;
	uint64_t size;
	uint64_t out_total;
	struct needle nd;
	struct hib_initrd_scan *out;
	struct hib_error *err;
	unsigned char buf[HIB_INITRD_BUF];
};

/* Feed @n bytes to the search: the words may begin in what came before. */
static void needle_feed(struct needle *nd, const void *p, size_t n)
{
	char win[128];
	size_t head, total;

	if (nd->found || n == 0)
		return;
	head = MIN(n, nd->len - 1);
	memcpy(win, nd->carry, nd->kept);
	memcpy(win + nd->kept, p, head);
	if (memmem(win, nd->kept + head, nd->s, nd->len) || memmem(p, n, nd->s, nd->len)) {
		nd->found = true;
		return;
	}
	/* Keep the last len - 1 bytes of carry + p. */
	total = nd->kept + n;
	if (n >= nd->len - 1) {
		memcpy(nd->carry, (const char *)p + n - (nd->len - 1), nd->len - 1);
	} else {
		size_t from_carry = MIN(nd->kept, nd->len - 1 - n);

		memmove(nd->carry, nd->carry + nd->kept - from_carry, from_carry);
		memcpy(nd->carry + from_carry, p, n);
	}
	nd->kept = MIN(total, nd->len - 1);
}

static int read_at(struct scan *s, uint64_t off, void *p, size_t n, size_t *got)
{
	ssize_t r;

	*got = 0;
	while (*got < n) {
		r = pread(s->fd, (char *)p + *got, n - *got, (off_t)(off + *got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return hib_error_set(s->err, -errno, "%s: cannot read at byte %llu: %m",
					     s->path, (unsigned long long)(off + *got));
		if (r == 0)
			break;
		*got += (size_t)r;
	}
	return 0;
}

static bool hex_field(const unsigned char *h, uint32_t *v)
{
	*v = 0;
	for (int i = 0; i < 8; i++) {
		int c = h[i], d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return false;
		*v = *v << 4 | (uint32_t)d;
	}
	return true;
}

#define ALIGN4(x) (((x) + 3) & ~(uint64_t)3)

/* The end of the newc archive at @off: after its TRAILER!!! entry. */
static int cpio_end(struct scan *s, uint64_t off, uint64_t *end)
{
	unsigned char h[CPIO_HDR + 12];
	uint32_t fsize, nsize;
	size_t got;
	int r;

	for (;;) {
		r = read_at(s, off, h, sizeof(h), &got);
		if (r < 0)
			return r;
		if (got < CPIO_HDR || (memcmp(h, "070701", 6) && memcmp(h, "070702", 6)) ||
		    !hex_field(h + 54, &fsize) || !hex_field(h + 94, &nsize) || nsize == 0)
			return hib_error_set(s->err, -EBADMSG,
					     "%s: the cpio archive is cut short or corrupt at byte "
					     "%llu: rebuild it (update-initramfs -u or dracut -f)",
					     s->path, (unsigned long long)off);
		bool trailer = nsize == 11 && got >= CPIO_HDR + 11 &&
			       memcmp(h + CPIO_HDR, "TRAILER!!!", 11) == 0;

		off = ALIGN4(off + CPIO_HDR + nsize);
		off = ALIGN4(off + fsize);
		if (off > s->size)
			return hib_error_set(s->err, -EBADMSG,
					     "%s: a cpio entry runs past the end of the file: "
					     "rebuild it (update-initramfs -u or dracut -f)",
					     s->path);
		if (trailer) {
			*end = off;
			return 0;
		}
	}
}

/* An uncompressed archive: its bytes searched as they are. */
static int scan_cpio(struct scan *s, uint64_t *off)
{
	uint64_t end = 0, at;
	size_t got;
	int r;

	r = cpio_end(s, *off, &end);
	if (r < 0)
		return r;
	for (at = *off; at < end && !s->nd.found; at += got) {
		r = read_at(s, at, s->buf, MIN(sizeof(s->buf), end - at), &got);
		if (r < 0)
			return r;
		needle_feed(&s->nd, s->buf, got);
	}
	*off = end;
	return 0;
}

static int out_bytes(struct scan *s, const void *p, size_t n, const char *codec)
{
	s->out_total += n;
	if (s->out_total > HIB_INITRD_MAX_OUT)
		return hib_error_set(s->err, -EFBIG,
				     "%s: the %s archive unpacks to more than %llu GiB: not "
				     "looked into further",
				     s->path, codec, HIB_INITRD_MAX_OUT >> 30);
	needle_feed(&s->nd, p, n);
	return 0;
}

static void zstd_free(ZSTD_DStream **z)
{
	ZSTD_freeDStream(*z);
}

/* One zstd frame from @off; @off is left after it. */
static int scan_zstd(struct scan *s, uint64_t *off)
{
	_cleanup_(zstd_free) ZSTD_DStream *z = ZSTD_createDStream();
	unsigned char *outb = NULL;
	size_t got = 0, ret = 1;
	uint64_t at = *off;
	ZSTD_inBuffer in = { s->buf, 0, 0 };
	int r = 0;

	outb = malloc(HIB_INITRD_BUF);
	if (!z || !outb) {
		free(outb);
		return hib_error_set(s->err, -ENOMEM, "%s: no memory to unpack zstd", s->path);
	}
	ZSTD_initDStream(z);
	while (ret != 0 && !s->nd.found) {
		ZSTD_outBuffer o = { outb, HIB_INITRD_BUF, 0 };

		if (in.pos == in.size) {
			r = read_at(s, at, s->buf, sizeof(s->buf), &got);
			if (r < 0)
				break;
			if (got == 0) {
				r = hib_error_set(
					s->err, -EBADMSG,
					"%s: the zstd archive is cut short (the file ends "
					"inside its frame): rebuild it (update-initramfs -u "
					"or dracut -f)",
					s->path);
				break;
			}
			in = (ZSTD_inBuffer){ s->buf, got, 0 };
			at += got;
		}
		ret = ZSTD_decompressStream(z, &o, &in);
		if (ZSTD_isError(ret)) {
			r = hib_error_set(s->err, -EBADMSG,
					  "%s: the zstd archive is corrupt (%s): rebuild it "
					  "(update-initramfs -u or dracut -f)",
					  s->path, ZSTD_getErrorName(ret));
			break;
		}
		r = out_bytes(s, outb, o.pos, "zstd");
		if (r < 0)
			break;
	}
	free(outb);
	*off = at - (in.size - in.pos);
	return r;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* lz4's legacy frame from @off: [le32 size][block] until the file ends or a
 * size of 0; each block at most 8 MiB unpacked. */
static int scan_lz4(struct scan *s, uint64_t *off)
{
	const uint32_t bound = (uint32_t)LZ4_compressBound(LZ4_LEGACY_BLOCK);
	unsigned char len[4];
	char *in = malloc(bound), *outb = malloc(LZ4_LEGACY_BLOCK);
	uint64_t at = *off + 4;
	size_t got;
	int r = 0, n;

	if (!in || !outb) {
		r = hib_error_set(s->err, -ENOMEM, "%s: no memory to unpack lz4", s->path);
		goto out;
	}
	while (!s->nd.found) {
		r = read_at(s, at, len, 4, &got);
		if (r < 0 || got < 4 || le32(len) == 0)
			break;
		uint32_t sz = le32(len);

		at += 4;
		if (sz == LZ4_LEGACY_MAGIC)
			continue;
		r = sz > bound ? -EBADMSG : read_at(s, at, in, sz, &got);
		if (r == 0 && got < sz)
			r = -EBADMSG;
		n = r < 0 ? -1 : LZ4_decompress_safe(in, outb, (int)sz, LZ4_LEGACY_BLOCK);
		if (n < 0) {
			r = hib_error_set(s->err, r < 0 ? r : -EBADMSG,
					  "%s: the lz4 archive is cut short or corrupt at byte "
					  "%llu: rebuild it (update-initramfs -u or dracut -f)",
					  s->path, (unsigned long long)(at - 4));
			break;
		}
		at += sz;
		r = out_bytes(s, outb, (size_t)n, "lz4");
		if (r < 0)
			break;
	}
out:
	free(in);
	free(outb);
	*off = s->size;
	return r;
}

static const struct {
	const char *name;
	const char *magic;
	size_t len;
} unread[] = {
	{ "gzip", "\x1f\x8b", 2 },
	{ "gzip", "\x1f\x9e", 2 },
	{ "xz",
	  "\xfd"
	  "7zXZ\0",
	  6 },
	{ "lzma", "\x5d\0\0", 3 },
	{ "bzip2", "BZh", 3 },
	{ "lzo", "\x89LZO", 4 },
	{ "lz4 (new frame)", "\x04\x22\x4d\x18", 4 },
};

static void set_codec(struct scan *s, const char *name)
{
	snprintf(s->out->codec, sizeof(s->out->codec), "%s", name);
}

/* The archive at @off, which starts with @m (@n bytes of it). */
static int scan_one(struct scan *s, uint64_t *off, const unsigned char *m, size_t n)
{
	if (n >= 6 && (!memcmp(m, "070701", 6) || !memcmp(m, "070702", 6))) {
		set_codec(s, "none");
		return scan_cpio(s, off);
	}
	/* A zstd frame, or a skippable one (pzstd puts one before each). */
	if (n >= 4 && (le32(m) == 0xFD2FB528u || (le32(m) & 0xFFFFFFF0u) == 0x184D2A50u)) {
		set_codec(s, "zstd");
		return scan_zstd(s, off);
	}
	if (n >= 4 && le32(m) == LZ4_LEGACY_MAGIC) {
		set_codec(s, "lz4");
		return scan_lz4(s, off);
	}
	set_codec(s, "unknown");
	for (size_t i = 0; i < ARRAY_SIZE(unread); i++)
		if (n >= unread[i].len && !memcmp(m, unread[i].magic, unread[i].len))
			set_codec(s, unread[i].name);
	s->out->result = HIB_INITRD_UNREAD;
	s->out->offset = *off;
	return 1;
}

/* Past the zeros the kernel skips between archives: 0, or 1 at the end. */
static int skip_zeros(struct scan *s, uint64_t *off)
{
	size_t got, i;
	int r;

	while (*off < s->size) {
		r = read_at(s, *off, s->buf, MIN(sizeof(s->buf), s->size - *off), &got);
		if (r < 0)
			return r;
		for (i = 0; i < got && s->buf[i] == 0; i++)
			;
		*off += i;
		if (i < got)
			return 0;
		if (got == 0)
			break;
	}
	return 1;
}

static int scan_all(struct scan *s)
{
	unsigned char m[8];
	uint64_t off = 0;
	size_t got;
	int r;

	s->out->result = HIB_INITRD_ABSENT;
	for (;;) {
		r = skip_zeros(s, &off);
		if (r > 0 && s->out->archives == 0)
			return hib_error_set(s->err, -ENODATA,
					     "%s: holds no archive (it is empty or all zeros): "
					     "rebuild it (update-initramfs -u or dracut -f)",
					     s->path);
		if (r != 0)
			return r < 0 ? r : 0;
		r = read_at(s, off, m, sizeof(m), &got);
		if (r < 0)
			return r;
		s->out->archive = s->out->archives++;
		r = scan_one(s, &off, m, got);
		if (r != 0)
			return r < 0 ? r : 0;
		if (s->nd.found) {
			s->out->result = HIB_INITRD_FOUND;
			return 0;
		}
	}
}

int hib_initrd_scan(const char *path, const char *needle, struct hib_initrd_scan *out,
		    struct hib_error *err)
{
	struct scan *s;
	struct stat st;
	int r;

	hib_error_clear(err);
	memset(out, 0, sizeof(*out));
	if (!needle[0] || strlen(needle) >= sizeof(s->nd.carry))
		return hib_error_set(err, -EINVAL, "the words to look for are empty or too long");
	s = calloc(1, sizeof(*s));
	if (!s)
		return hib_error_set(err, -ENOMEM, "%s: no memory to look into it", path);
	s->path = path;
	s->out = out;
	s->err = err;
	s->nd.s = needle;
	s->nd.len = strlen(needle);
	s->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (s->fd < 0) {
		r = hib_error_set(err, -errno, "%s: cannot open it: %m", path);
	} else if (fstat(s->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		r = hib_error_set(err, -EINVAL, "%s: not a regular file", path);
	} else {
		s->size = (uint64_t)st.st_size;
		r = scan_all(s);
	}
	if (s->fd >= 0)
		close(s->fd);
	free(s);
	return r;
}
