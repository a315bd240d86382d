// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "storage/extmap.h"
#include "util/util.h"

void extmap_free(struct hib_extmap *m)
{
	free(m->ext);
	free(m->start);
	memset(m, 0, sizeof(*m));
}

/* Room for @cap extents, in the index too once there is one. */
static int extmap_grow(struct hib_extmap *m, size_t cap)
{
	struct hib_extent *e = realloc(m->ext, cap * sizeof(*e));

	if (!e)
		return -ENOMEM;
	m->ext = e;
	if (m->start) {
		uint64_t *s = realloc(m->start, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		m->start = s;
	}
	m->cap = cap;
	return 0;
}

int extmap_reserve(struct hib_extmap *m, size_t max_extents)
{
	size_t cap = MAX(max_extents, (size_t)1);
	int r;

	if (cap > SIZE_MAX / sizeof(*m->ext))
		return -ENOMEM;
	if (cap > m->cap) {
		r = extmap_grow(m, cap);
		if (r < 0)
			return r;
	}
	if (!m->start) {
		m->start = malloc(m->cap * sizeof(*m->start));
		if (!m->start)
			return -ENOMEM;
	}
	m->fixed = true;
	return 0;
}

int extmap_add(struct hib_extmap *m, uint64_t byte_offset, uint64_t pages)
{
	if (pages == 0 || byte_offset % HIB_PAGE_SIZE)
		return -EINVAL;
	if (m->n > 0) {
		struct hib_extent *last = &m->ext[m->n - 1];
		if (last->offset + last->pages * HIB_PAGE_SIZE == byte_offset) {
			last->pages += pages;
			m->pages += pages;
			return 0;
		}
	}
	if (m->n == m->cap) {
		int r;

		if (m->fixed)
			return -ENOSPC;
		r = extmap_grow(m, m->cap ? m->cap * 2 : 64);
		if (r < 0)
			return r;
	}
	m->ext[m->n].offset = byte_offset;
	m->ext[m->n].pages = pages;
	m->n++;
	m->pages += pages;
	return 0;
}

int extmap_index(struct hib_extmap *m)
{
	uint64_t lp = 0;

	if (!m->start) {
		m->start = malloc(MAX(m->cap, (size_t)1) * sizeof(*m->start));
		if (!m->start)
			return -ENOMEM;
	}
	for (size_t i = 0; i < m->n; i++) {
		m->start[i] = lp;
		lp += m->ext[i].pages;
	}
	m->indexed = m->n;
	return 0;
}

int extmap_lookup(const struct hib_extmap *m, uint64_t lp, uint64_t *ret_off, uint64_t *ret_run)
{
	size_t lo = 0, hi = m->n;

	if (lp >= m->pages || !m->start || m->indexed != m->n)
		return -ERANGE;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->start[mid] <= lp)
			lo = mid;
		else
			hi = mid;
	}
	*ret_off = m->ext[lo].offset + (lp - m->start[lo]) * HIB_PAGE_SIZE;
	*ret_run = m->ext[lo].pages - (lp - m->start[lo]);
	return 0;
}

int extmap_check_bounds(const struct hib_extmap *m, uint64_t lo, uint64_t hi, uint64_t skip)
{
	for (size_t i = 0; i < m->n; i++) {
		uint64_t a = m->ext[i].offset, len = m->ext[i].pages * HIB_PAGE_SIZE;
		if (a < lo || a > hi || len > hi - a)
			return -ERANGE;
		if (skip < a + len && a < skip + HIB_PAGE_SIZE)
			return -ERANGE;
	}
	return 0;
}
