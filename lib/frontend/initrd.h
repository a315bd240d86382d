/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Whether an initramfs file carries some words: its uncompressed cpio archives
 * (newc, each to its TRAILER!!!) and the compressed archive after them, read
 * through zstd or lz4's legacy frame (what the kernel unpacks). gzip, xz, lzma,
 * bzip2 and lzo are not linked: such an archive is named, not looked into.
 * Streamed: no buffer holds more than a block; stops at the first hit.
 */
#ifndef HIB_FRONTEND_INITRD_H
#define HIB_FRONTEND_INITRD_H

#include <stddef.h>
#include <stdint.h>

#include "hibernate.h"

/* The output buffer of the zstd stream (tests place words across it). */
#define HIB_INITRD_BUF (64 * 1024)
/* At most this many bytes are decompressed, a bound against a bomb. */
#define HIB_INITRD_MAX_OUT (4ULL << 30)

enum hib_initrd_result {
	HIB_INITRD_FOUND,  /* the words are there */
	HIB_INITRD_ABSENT, /* everything was looked into: they are not */
	HIB_INITRD_UNREAD, /* an archive compressed with .codec was not looked into */
};

struct hib_initrd_scan {
	enum hib_initrd_result result;
	/* FOUND: the archive's compression ("none", "zstd", "lz4"); UNREAD: the
	 * one not looked into ("gzip", "xz", "lzma", "bzip2", "lzo", "unknown"). */
	char codec[16];
	int archive;     /* FOUND, UNREAD: which archive, from 0 */
	int archives;    /* how many archives were seen */
	uint64_t offset; /* UNREAD: where it starts in the file */
};

/*
 * Look through the initramfs at @path for @needle (at most 63 bytes). 0 and
 * @out filled, or -errno and @err naming the file and what is wrong with it
 * (unreadable, a cpio or compressed frame that is cut short or corrupt).
 */
int hib_initrd_scan(const char *path, const char *needle, struct hib_initrd_scan *out,
		    struct hib_error *err);

#endif
