// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Where the image goes on the target: its pages handed out one at a time (the
 * header page, each block's, the map's), the extent map that records them,
 * its room reserved last before the freeze so the writer never grows it, and
 * its pages written once the stream is on disk.
 */
#include <sched.h>
#include <stdlib.h>
#include <sys/sysinfo.h>

#include "engine/suspend-priv.h"

/* The target's next page, snap_mu held. */
static int target_page(struct suspend_ctx *sc, uint64_t *off)
{
	uint64_t t0 = hib_now_ns();

	for (int tries = 0;; tries++) {
		int r = hib_target_alloc_page(sc->t, sc->snap, off);
		/* /dev/snapshot's ioctls only trylock the mutex our reader holds in read(). */
		if (r != -EBUSY || tries > 100000) {
			/* The swap allocator's hibernation path (ALLOC_SWAP_PAGE a
			 * page on swap) is said to be slower since 6.15: timed. */
			sc->alloc_ns += hib_now_ns() - t0;
			sc->alloc_pages += r == 0;
			return r;
		}
		sched_yield();
	}
}

static bool pool_take(struct suspend_pool *p, uint64_t *off)
{
	bool got;

	pthread_mutex_lock(&p->mu);
	got = p->n > 0;
	if (got) {
		*off = p->off[p->head];
		p->head = (p->head + 1) % SUSPEND_POOL_PAGES;
		p->n--;
	}
	pthread_mutex_unlock(&p->mu);
	return got;
}

/* The pool's pages are older than any the target hands out after them: a
 * page is taken from the target only with the pool empty under snap_mu,
 * which its fillers hold, so the image's pages keep the target's order. */
int suspend_alloc_page(struct suspend_ctx *sc, uint64_t *off)
{
	int r = 0;

	if (pool_take(&sc->pool, off))
		return 0;
	pthread_mutex_lock(&sc->snap_mu);
	if (!pool_take(&sc->pool, off))
		r = target_page(sc, off);
	pthread_mutex_unlock(&sc->snap_mu);
	return r;
}

int suspend_pool_new(struct suspend_ctx *sc)
{
	sc->pool.off = calloc(SUSPEND_POOL_PAGES, sizeof(*sc->pool.off));
	return sc->pool.off ? 0 : -ENOMEM;
}

void suspend_pool_free(struct suspend_ctx *sc)
{
	free(sc->pool.off);
	sc->pool.off = NULL;
}

/* Past the tail, which the writer's takes do not move, then published. */
void suspend_pool_fill(struct suspend_ctx *sc, unsigned pages)
{
	struct suspend_pool *p = &sc->pool;
	unsigned tail, want, k = 0;

	if (!p->off || p->dry)
		return;
	pthread_mutex_lock(&p->mu);
	tail = (p->head + p->n) % SUSPEND_POOL_PAGES;
	want = MIN(pages, SUSPEND_POOL_PAGES - p->n);
	pthread_mutex_unlock(&p->mu);
	while (k < want && target_page(sc, &p->off[(tail + k) % SUSPEND_POOL_PAGES]) == 0)
		k++;
	p->dry = k < want;
	p->taken += k;
	pthread_mutex_lock(&p->mu);
	p->n += k;
	pthread_mutex_unlock(&p->mu);
}

/*
 * The area pages an image takes whose stream of @stream_pages is stored raw
 * in blocks of @block_pages: its pages, a page more a block (a record's
 * header, and a sealed one's tag), a map page for every HIB_MAP_ENTRIES
 * extents (an extent at least a page), the header's page and one more.  No
 * block takes more than raw, so any mix of raw and compressed fits there.
 */
uint64_t engine_raw_area_pages(uint64_t stream_pages, uint64_t block_pages)
{
	uint64_t need = stream_pages + DIV_ROUND_UP(stream_pages, MAX(block_pages, 1));

	return need + DIV_ROUND_UP(need, HIB_MAP_ENTRIES) + 2;
}

/* Its inverse: the longest stream, in pages, whose raw image fits in @area
 * pages.  From an estimate a few pages off, to the exact one. */
uint64_t engine_raw_stream_room(uint64_t area, uint64_t block_pages)
{
	double b = (double)MAX(block_pages, 1), m = (double)HIB_MAP_ENTRIES;
	uint64_t s = area > 2 ? (uint64_t)((double)(area - 2) * b / (b + 1) * m / (m + 1)) : 0;

	while (s > 0 && engine_raw_area_pages(s, block_pages) > area)
		s--;
	while (engine_raw_area_pages(s + 1, block_pages) <= area)
		s++;
	return s; /* fits, or 0: not even the header does */
}

/*
 * Room in the extent map for every extent the image can have, so the writer
 * never grows it while the image is held. An extent holds at least a page:
 * there are at most as many as the pages the image takes, which are at most
 * the area's free pages (counted last before the freeze), and at most what a
 * stream up to the user's limit, or up to RAM (the kernel's copy is in
 * memory; a PFN per page and a header page come with it), takes on disk: its
 * pages and one more per block (a record's header, and a sealed one's tag).
 * An extent costs 24 bytes (16 in the map, 8 in its index), so 6 MiB per GiB
 * the image can take, if no two of its pages touch. Called last before the
 * freeze, after mlockall, which brought our swapped-out pages back and freed
 * their slots.
 */
int suspend_reserve_map(struct suspend_ctx *sc, uint32_t block_bytes)
{
	uint64_t pages, stream = UINT64_MAX;
	int r = hib_target_avail_pages(sc->t, sc->snap, &pages);

	if (r < 0)
		return log_err(r, "%s: the free space of the area is unknown: %m",
			       hib_target_name(sc->t));
	sc->area_pages = pages;
	if (sc->o->image_size > 0)
		stream = (uint64_t)sc->o->image_size / HIB_PAGE_SIZE;
	if (hib_snapshot_can(sc->snap, HIB_SNAP_CAP_FREEZES_SYSTEM)) {
		struct sysinfo si;

		if (sysinfo(&si) == 0) {
			uint64_t ram = (uint64_t)si.totalram * si.mem_unit / HIB_PAGE_SIZE;

			stream = MIN(stream, hib_snapshot_stream_pages(ram));
		}
	}
	if (stream != UINT64_MAX)
		pages = MIN(pages, stream + DIV_ROUND_UP(stream, block_bytes / HIB_PAGE_SIZE));
	r = extmap_reserve(&sc->map, (size_t)MIN(pages, (uint64_t)SIZE_MAX));
	if (r == 0) {
		/* suspend_write_map's too: a map page's place for every HIB_MAP_ENTRIES extents. */
		sc->map_offs = calloc(extmap_pages_needed_for(sc->map.cap), sizeof(*sc->map_offs));
		sc->map_page = hib_alloc_pages(HIB_PAGE_SIZE);
		if (!sc->map_offs || !sc->map_page)
			r = -ENOMEM;
	}
	if (r < 0)
		return log_err(r, "allocating the extent map (%llu extents) failed: %m",
			       (unsigned long long)pages);
	log_debug("extent map: room for %zu extents, %zu KiB", sc->map.cap,
		  sc->map.cap * (sizeof(*sc->map.ext) + sizeof(*sc->map.start)) >> 10);
	return 0;
}

/* Map pages, chained; each allocated from the swap area like the data. */
int suspend_write_map(struct suspend_ctx *sc, uint64_t *ret_first, uint32_t *ret_pages)
{
	uint32_t n = extmap_pages_needed(&sc->map);
	uint64_t *offs = sc->map_offs; /* room for the map's reservation */
	struct hib_map_page *mp = sc->map_page;
	int r;

	for (uint32_t i = 0; i < n; i++) {
		r = suspend_alloc_page(sc, &offs[i]);
		if (r < 0)
			return log_err(r, "%s: no swap page left for the extent map: %m",
				       hib_target_path(sc->t));
	}
	r = image_write_map(sc->t, &sc->map, sc->image_id, offs, n, mp);
	if (r < 0)
		return r;
	*ret_first = offs[0];
	*ret_pages = n;
	return 0;
}
