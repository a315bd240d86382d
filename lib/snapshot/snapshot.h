/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The snapshot device, as the engine sees it: the kernel's /dev/snapshot
 * (snapshot-dev.c) or a fake for host tests (snapshot-fake.c). Each op
 * returns 0 or -errno like the ioctl it stands for.
 */
#ifndef HIB_SNAPSHOT_H
#define HIB_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "hibernate.h"

struct hib_snapshot_ops {
	int (*set_swap_area)(struct hib_snapshot *s, dev_t dev, uint64_t offset_pages);
	int (*freeze)(struct hib_snapshot *s);
	int (*unfreeze)(struct hib_snapshot *s);
	int (*platform_support)(struct hib_snapshot *s, int on);
	/* Counts pages of memory, not the stream (hib_snapshot_pref_pages). */
	int (*pref_image_size)(struct hib_snapshot *s, uint64_t bytes);
	/* The kernel's preference now (/sys/power/image_size: PREF_IMAGE_SIZE
	 * sets the same value, and it outlives the device), to put it back. */
	int (*image_size_pref_get)(struct hib_snapshot *s, uint64_t *bytes);
	/* *in_suspend = 1: image made, write it out; 0: we were just restored. */
	int (*create_image)(struct hib_snapshot *s, int *in_suspend);
	int (*get_image_size)(struct hib_snapshot *s, uint64_t *bytes);
	int (*avail_swap)(struct hib_snapshot *s, uint64_t *bytes);
	/* One free swap page of the area set by set_swap_area, as a byte offset. */
	int (*alloc_swap_page)(struct hib_snapshot *s, uint64_t *byte_offset);
	int (*free_swap_pages)(struct hib_snapshot *s);
	int (*free_image)(struct hib_snapshot *s);
	/*
	 * Up to @pages pages (-EINVAL above HIB_SNAP_BATCH_PAGES) in one call, page
	 * after page in stream order, as readv()/writev() of one-page segments
	 * do on the kernel's device (fs/read_write.c, do_loop_readv_writev):
	 * the bytes moved, a multiple of HIB_PAGE_SIZE; fewer than asked when
	 * the stream ended or the next page failed, and then the next call
	 * says which (0 or -errno: the kernel's loop drops an error that follows
	 * moved pages); 0 at the end; -errno when the first page fails.
	 */
	ssize_t (*read_pages)(struct hib_snapshot *s, void *buf, size_t pages);
	ssize_t (*write_pages)(struct hib_snapshot *s, const void *buf, size_t pages);
	/* Does not return on success on the real device. */
	int (*atomic_restore)(struct hib_snapshot *s);
	int (*power_off)(struct hib_snapshot *s, enum hib_powerdown how);
	/* Suspend to RAM while frozen; returns after the wake-up. */
	int (*s2ram)(struct hib_snapshot *s);
	void (*close)(struct hib_snapshot *s);
};

/* The most pages read_pages and write_pages move in one call: IOV_MAX
 * segments, the most one readv()/writev() takes. */
#define HIB_SNAP_BATCH_PAGES 1024u

/* The stream the kernel's device gives for @pages pages of memory: a header
 * page, a page of PFNs for every 512 pages (8-byte PFNs), then the pages. */
static inline uint64_t hib_snapshot_stream_pages(uint64_t pages)
{
	return 1 + (pages + 511) / 512 + pages;
}

/* The most pages of memory whose stream fits in @stream_pages: what
 * PREF_IMAGE_SIZE, which counts memory pages only, must be told when the
 * stream itself is limited. 0 when not even a header page fits. */
static inline uint64_t hib_snapshot_pref_pages(uint64_t stream_pages)
{
	uint64_t n = stream_pages ? stream_pages - 1 : 0;

	return n - (n + 512) / 513;
}

/* What a snapshot device is, as far as the engine must know (hib_snapshot.caps). */
enum hib_snapshot_cap {
	/*
	 * It freezes this system, and its image is this system's memory: the
	 * engine locks its own memory while it runs, stops the other processes
	 * for a test cycle, asks /proc/swaps whether the target is active, and
	 * records the mounted filesystems' state and checks it and the kernel's
	 * identity before a restore. A device that freezes nothing real (the
	 * fake, the file-backed one) makes none of that about its image.
	 */
	HIB_SNAP_CAP_FREEZES_SYSTEM = 1u << 0,
	/* A successful atomic_restore or power_off returns; the kernel's does not
	 * (the machine is off, or runs the restored image). */
	HIB_SNAP_CAP_RETURNS = 1u << 1,
};

struct hib_snapshot {
	const struct hib_snapshot_ops *ops;
	enum hib_snapshot_mode mode;
	unsigned caps; /* enum hib_snapshot_cap */
};

static inline bool hib_snapshot_can(const struct hib_snapshot *s, enum hib_snapshot_cap cap)
{
	return (s->caps & cap) != 0;
}

#endif
