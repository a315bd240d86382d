/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The extent map: which device pages hold the image's logical pages, in
 * order. Built page by page while writing (adjacent pages merge into one
 * extent), stored as a chain of map pages, read back on resume.
 */
#ifndef HIB_EXTMAP_H
#define HIB_EXTMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

struct hib_extmap {
	struct hib_extent *ext;
	size_t n, cap;
	uint64_t pages;  /* logical pages mapped */
	uint64_t *start; /* logical page where ext[i] begins (built by extmap_index),
				  cap entries once allocated */
	size_t indexed;  /* extents the index covers: lookups need all n */
	bool fixed;      /* reserved: never grows (extmap_reserve) */
};

void extmap_free(struct hib_extmap *m);
/*
 * Room for @max_extents extents (at least 1), index included, allocated now:
 * from then on extmap_add and extmap_index never allocate, and an extent past
 * the room is refused with -ENOSPC instead of growing the map. For a map
 * filled while the image is held, where nothing may be allocated.
 */
int extmap_reserve(struct hib_extmap *m, size_t max_extents);
int extmap_add(struct hib_extmap *m, uint64_t byte_offset, uint64_t pages);
/* Build the lookup index; call after the last add (and again after more adds). */
int extmap_index(struct hib_extmap *m);
/* Device byte offset of logical page @lp and how many pages run on contiguously. */
int extmap_lookup(const struct hib_extmap *m, uint64_t lp, uint64_t *ret_off, uint64_t *ret_run);
/* Map pages needed to store @extents extents, and the map. */
static inline uint32_t extmap_pages_needed_for(size_t extents)
{
	return (uint32_t)((extents + HIB_MAP_ENTRIES - 1) / HIB_MAP_ENTRIES);
}
static inline uint32_t extmap_pages_needed(const struct hib_extmap *m)
{
	return extmap_pages_needed_for(m->n);
}
/* Every extent inside [lo, hi) bytes and none overlapping [skip, skip + page). */
int extmap_check_bounds(const struct hib_extmap *m, uint64_t lo, uint64_t hi, uint64_t skip);

#endif
