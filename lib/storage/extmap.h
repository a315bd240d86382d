/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The extent map: which device pages hold the image's logical pages, in
 * order. Built page by page while writing (adjacent pages merge into one
 * extent), stored as a chain of map pages, read back on resume.
 */
#ifndef HIB_EXTMAP_H
#define HIB_EXTMAP_H

#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

struct hib_extmap {
	struct hib_extent *ext;
	size_t n, cap;
	uint64_t pages;        /* logical pages mapped */
	uint64_t *start;       /* logical page where ext[i] begins (built by extmap_index) */
};

void extmap_free(struct hib_extmap *m);
int extmap_add(struct hib_extmap *m, uint64_t byte_offset, uint64_t pages);
/* Build the lookup index; call after the last add. */
int extmap_index(struct hib_extmap *m);
/* Device byte offset of logical page @lp and how many pages run on contiguously. */
int extmap_lookup(const struct hib_extmap *m, uint64_t lp, uint64_t *ret_off, uint64_t *ret_run);
/* Map pages needed to store the map. */
static inline uint32_t extmap_pages_needed(const struct hib_extmap *m)
{
	return (uint32_t)((m->n + HIB_MAP_ENTRIES - 1) / HIB_MAP_ENTRIES);
}
/* Every extent inside [lo, hi) bytes and none overlapping [skip, skip + page). */
int extmap_check_bounds(const struct hib_extmap *m, uint64_t lo, uint64_t hi, uint64_t skip);

#endif
