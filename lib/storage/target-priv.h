/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a target is made of, for lib/storage's own files only: everything
 * else goes through the accessors (include/hibernate.h, storage/target.h),
 * so that how a target is opened (a partition, a file's blocks, later btrfs,
 * LVM, LUKS) can change behind them.
 */
#ifndef HIB_TARGET_PRIV_H
#define HIB_TARGET_PRIV_H

#include "storage/target.h"

struct hib_target {
	enum hib_target_kind kind;
	char *path;                 /* what is opened: the device, or a disk image file */
	char *file;                 /* a file target's file (swap or image file) */
	struct hib_extmap file_map; /* a plain file's pages on the device */
	uint64_t file_next;         /* its allocator: next file page to hand out */
	uint64_t file_unwritten;    /* a swap file's pages in unwritten (fallocated) extents */
	int fd;
	dev_t dev;      /* st_rdev of a block device, 0 for a file */
	dev_t file_dev; /* st_dev of a regular file */
	ino_t file_ino;
	bool is_blk;
	bool writable;
	uint64_t offset_pages;         /* where the swap header sits */
	uint64_t size;                 /* bytes */
	enum hib_target_source source; /* which rung of hib_target_resolve chose it */
	bool swapped_on;               /* turned on for a cycle by hib_target_auto_swapon */
};

#endif
