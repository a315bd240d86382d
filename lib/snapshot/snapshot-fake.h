/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Snapshot devices that are not the kernel's: a fake for host tests and a
 * file-backed one for benchmarks. Not part of the public API (include/
 * hibernate.h): tests, fuzzers and bench/ include this header; the shipped
 * binary never does.
 */
#ifndef HIB_SNAPSHOT_FAKE_H
#define HIB_SNAPSHOT_FAKE_H

#include <stdbool.h>
#include <stdint.h>

#include "hibernate.h"

/*
 * A fake snapshot device for tests: produces a deterministic, realistic
 * stream (a header page, PFN metadata pages, data pages of mixed content:
 * zeros, text, random, repeated patterns) of @stream_pages pages, hands out
 * swap pages 1..@swap_pages-1 (every @frag_every-th page skipped, so extents
 * are not trivially contiguous; 0 for contiguous), and in resume mode checks
 * what it is given byte for byte against the same stream.
 */
struct hib_fake_params {
	uint64_t seed;
	uint64_t stream_pages;
	uint64_t swap_pages;
	uint32_t frag_every;
	int64_t fail_read_at;  /* page index whose read() fails with -EIO; -1 never */
	int64_t fail_write_at; /* resume: page index whose write() fails; -1 never */
	int fail_errno;        /* the errno of those failures; 0: EIO */
	/* CREATE_IMAGE answers as in the system restored from the image
	 * (in_suspend 0), so hibernate takes its resumed branch. */
	bool create_resumes;
	/* The first @oversize_creates images say they are @oversize_pages pages
	 * longer (get_image_size; they cannot be read): a kernel that missed
	 * PREF_IMAGE_SIZE, whose image the engine must free and make again. */
	uint32_t oversize_creates;
	uint64_t oversize_pages;
	/* Optional (NULL: none), for tests that watch the time processes are
	 * frozen: on_freeze when FREEZE freezes them, on_thaw when they thaw
	 * (UNFREEZE with no image held, or closing the device while frozen, as
	 * the kernel's release does). Called on the thread that made the call. */
	void (*on_freeze)(void *userdata);
	void (*on_thaw)(void *userdata);
	/* Optional: ATOMIC_RESTORE, just before it restores the image (the last
	 * moment the resuming process exists with the kernel's): for tests that
	 * look at what that process still holds. */
	void (*on_atomic_restore)(void *userdata);
	void *hook_userdata;
};
int hib_snapshot_fake_new(const struct hib_fake_params *p, enum hib_snapshot_mode mode,
			  struct hib_snapshot **ret);
/* After a fake resume: pages accepted, and whether they all matched. */
void hib_snapshot_fake_result(const struct hib_snapshot *s, uint64_t *ret_pages_ok,
			      bool *ret_complete, bool *ret_restored, bool *ret_frozen);
/* read_pages and write_pages calls since the fake was made or reset: a
 * batch counts one, as one readv() or writev() would. */
uint64_t hib_snapshot_fake_calls(const struct hib_snapshot *s);
/* The bytes the last PREF_IMAGE_SIZE asked for; -1 when none was. */
int64_t hib_snapshot_fake_pref(const struct hib_snapshot *s);
/* CREATE_IMAGE calls that made an image. */
uint32_t hib_snapshot_fake_creates(const struct hib_snapshot *s);
/* The same as it was when CREATE_IMAGE made the last image: the wish the
 * snapshot was made under (-1: none asked, or no image made yet). */
int64_t hib_snapshot_fake_pref_at_create(const struct hib_snapshot *s);
/* The kernel's preference the fake reports before any PREF_IMAGE_SIZE (as
 * /sys/power/image_size would): what a cycle must leave behind. */
#define HIB_FAKE_KERNEL_IMAGE_SIZE (3ull << 20)
/* Switch a fake from hibernate mode to resume mode, as a reboot would. */
void hib_snapshot_fake_reset(struct hib_snapshot *s, enum hib_snapshot_mode mode);

/*
 * A snapshot device backed by a file (benchmarks, debugging). Hibernate mode:
 * serves the captured stream in @path and hands out swap pages 1..@swap_pages-1.
 * Resume mode: writes what it is given to @path (NULL: only counts it), and
 * says the stream ended after @expect_bytes (0: never). Never freezes anything.
 */
int hib_snapshot_file_new(const char *path, enum hib_snapshot_mode mode, uint64_t swap_pages,
			  uint64_t expect_bytes, struct hib_snapshot **ret);

#endif
