/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Files on btrfs: FIEMAP gives btrfs logical addresses, and st_dev is a
 * per-subvolume number, so the device and the device offsets come from the
 * filesystem itself (its device list and its chunk tree). A pure core (chunk
 * items to device offsets, the profile checks) and the ioctls that feed it.
 */
#ifndef HIB_BTRFS_H
#define HIB_BTRFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hibernate.h"

/* One chunk item of the chunk tree, as far as mapping data needs. */
struct hib_btrfs_chunk {
	uint64_t logical; /* the item's key offset: the chunk's first logical byte */
	uint64_t length;
	uint64_t type; /* BTRFS_BLOCK_GROUP_* bits */
	uint16_t num_stripes;
	uint64_t devid;    /* stripe 0's device */
	uint64_t physical; /* stripe 0's byte on that device */
};

struct hib_btrfs_chunks {
	struct hib_btrfs_chunk *v; /* sorted by logical, not overlapping */
	size_t n, cap;
};

/* A chunk from an item's bytes (struct btrfs_chunk, little endian) and its key
 * offset. -EBADMSG when @len is too short for the stripes it claims. */
int hib_btrfs_chunk_parse(uint64_t logical, const void *item, size_t len,
			  struct hib_btrfs_chunk *ret);
/* Append @c; the caller keeps them in logical order (the tree's order). */
int hib_btrfs_chunks_add(struct hib_btrfs_chunks *cs, const struct hib_btrfs_chunk *c);
void hib_btrfs_chunks_free(struct hib_btrfs_chunks *cs);

/*
 * The device byte behind logical byte @logical, and how many bytes from there
 * to its chunk's end (the run the device holds in order): only for a chunk of
 * the single profile with one stripe, where it is stripe 0's offset plus the
 * distance from the chunk's start. -ENOENT: no chunk holds @logical;
 * -EOPNOTSUPP: a DUP or RAID chunk. @err says which, with the fix.
 */
int hib_btrfs_map(const struct hib_btrfs_chunks *cs, uint64_t logical, uint64_t *ret_physical,
		  uint64_t *ret_run, struct hib_error *err);

/* What a file on btrfs needs to be written through the device. */
struct hib_btrfs_fs {
	struct hib_btrfs_chunks chunks;
	dev_t dev; /* the filesystem's one block device */
};

/*
 * For the open file @fd on btrfs: refuse a compressed or copy-on-write file
 * and a filesystem on several devices, then find the device
 * (BTRFS_IOC_FS_INFO, BTRFS_IOC_DEV_INFO) and read the chunk tree
 * (BTRFS_IOC_TREE_SEARCH; root only). @err gets the reason and the fix.
 */
int hib_btrfs_read(int fd, struct hib_btrfs_fs *ret, struct hib_error *err);
void hib_btrfs_free(struct hib_btrfs_fs *fs);

#endif
