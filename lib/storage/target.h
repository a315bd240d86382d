/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Internal view of a target: the open device (or file) and raw page I/O. The
 * struct itself is storage-private (storage/target-priv.h). */
#ifndef HIB_TARGET_H
#define HIB_TARGET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "storage/extmap.h"
#include "format/format.h"
#include "hibernate.h"
#include "snapshot/snapshot.h"

/* Byte offset of the signature page (page 0 of the swap area) on the device. */
uint64_t hib_target_sig_offset(const struct hib_target *t);
/* The open device or file, for the I/O layer's own reads and writes. */
int hib_target_fd(const struct hib_target *t);

/* A page for the image: from the kernel's swap allocator, or a plain file's own pages. */
int hib_target_alloc_page(struct hib_target *t, struct hib_snapshot *snap, uint64_t *ret_off);
/* How many more pages hib_target_alloc_page can hand out now: the swap
 * area's free pages (AVAIL_SWAP_SIZE), or a plain file's pages not yet
 * handed out. */
int hib_target_avail_pages(struct hib_target *t, struct hib_snapshot *snap, uint64_t *ret_pages);
/* Restart the allocator (the kernel frees its swap pages itself). */
void hib_target_alloc_reset(struct hib_target *t, struct hib_snapshot *snap);
/* Does this target take its pages from the kernel's swap allocator? */
bool hib_target_is_swap(const struct hib_target *t);

/* Raw I/O at a device byte offset; buffers must come from hib_alloc_pages(). */
int hib_target_read(struct hib_target *t, uint64_t off, void *buf, size_t len);
int hib_target_write(struct hib_target *t, uint64_t off, const void *buf, size_t len);
int hib_target_sync(struct hib_target *t);
/* @pages pages at logical pages [@lp, …) of the image whose pages @m maps,
 * run by run. */
int hib_target_read_logical(struct hib_target *t, const struct hib_extmap *m, uint64_t lp,
			    void *buf, uint64_t pages);
int hib_target_write_logical(struct hib_target *t, const struct hib_extmap *m, uint64_t lp,
			     const void *buf, uint64_t pages);
/* 0 when [@off, @off + @len) is page aligned and inside the target, else -ERANGE. */
int hib_target_check_range(const struct hib_target *t, uint64_t off, size_t len);

/* What a spec names (spec.c): the device's path (or a file's), malloc'ed.
 * -EINVAL: malformed; -ENOENT: no such device. */
int hib_target_spec_path(const char *spec, char **ret);

/* /proc/swaps (swaps.c): the only active swap partition's path, malloc'ed.
 * -ENOENT: none, or no table; -ENOTUNIQ: several; else the table's -errno. */
int hib_swaps_only_partition(const char *proc_swaps, char **ret_path);

/* The target order without opening anything (resolve.c): which spec, at
 * which offset, and which rung chose it. */
struct hib_target_choice {
	char *spec; /* malloc'ed */
	uint64_t offset_pages;
	bool offset_set; /* by --offset or offset =, not by resume_offset= */
	enum hib_target_source source;
};
int hib_target_choose(const struct hib_target_request *req, struct hib_target_choice *ret,
		      struct hib_error *err);
void hib_target_choice_free(struct hib_target_choice *c);

/* The signature page (swapsig.c). */
int hib_sig_read(struct hib_target *t, uint8_t page[HIB_PAGE_SIZE], enum hib_sig_state *ret);
/* Put @tail at the end of @page (page 0 as it was, a hib_alloc_pages page:
 * changed in place, nothing is allocated) and write it as page 0, then sync. */
int hib_sig_write_image(struct hib_target *t, uint8_t page[HIB_PAGE_SIZE],
			const struct hib_sig_tail *tail);
/* Put @orig_tail (or, if NULL, a zero tail ending in SWAPSPACE2) back into page 0, sync. */
int hib_sig_restore(struct hib_target *t, const uint8_t *orig_tail);
/* The same in @page (a hib_alloc_pages page), allocating nothing: after the freeze. */
int hib_sig_restore_buf(struct hib_target *t, const uint8_t *orig_tail,
			uint8_t page[HIB_PAGE_SIZE]);
/* What another format's image in @page (page 0, HIB_SIG_KERNEL) is, for
 * messages: "the kernel's own hibernation image (S1SUSPEND)"; NULL for none. */
const char *hib_sig_other_format(const uint8_t page[HIB_PAGE_SIZE]);
/* Discard the image of another format @page (page 0 as read) holds: its last
 * HIB_SIG_TAIL_SIZE bytes zeroed, ending in the free-state signature it
 * replaced (the kernel's orig_sig, when SWAPSPACE2 or HIBIMGFILE on a device),
 * else the target's own; the rest of the page (uuid, label) untouched. Sync. */
int hib_sig_discard_other(struct hib_target *t, uint8_t page[HIB_PAGE_SIZE]);

#endif
