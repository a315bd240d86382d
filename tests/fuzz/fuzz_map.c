// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The extent map: hib_map_page_check on a chain of map pages (as they are,
 * and resealed so the field checks run), then what image_load does
 * with the pages that pass: extmap_add, extmap_index, extmap_lookup and
 * extmap_check_bounds, each compared with a naive model over the extents as
 * they were listed (before extmap_add merged neighbours).
 *
 * Input: [image_id u64][device pages u32][signature page u32][lookups u8 x 16]
 *        then up to 8 map pages (the last zero-padded).
 */
#include "storage/extmap.h"
#include "format/format.h"
#include "fuzz-common.h"

#define HDR 32u
#define MAX_PAGES 8u
#define MAX_EXT (MAX_PAGES * HIB_MAP_ENTRIES)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fuzz_quiet_logs();
	return 0;
}

static struct hib_extent raw[MAX_EXT];
static size_t nraw;

/* Logical page @lp through the unmerged list. */
static bool model_lookup(uint64_t lp, uint64_t *off, uint64_t *run)
{
	for (size_t i = 0; i < nraw; i++) {
		if (lp < raw[i].pages) {
			*off = raw[i].offset + lp * HIB_PAGE_SIZE;
			*run = raw[i].pages - lp;
			return true;
		}
		lp -= raw[i].pages;
	}
	return false;
}

static int model_bounds(uint64_t lo, uint64_t hi, uint64_t skip)
{
	for (size_t i = 0; i < nraw; i++) {
		unsigned __int128 a = raw[i].offset;
		unsigned __int128 e = a + (unsigned __int128)raw[i].pages * HIB_PAGE_SIZE;

		if (a < lo || e > hi)
			return -ERANGE;
		if ((unsigned __int128)skip < e && a < (unsigned __int128)skip + HIB_PAGE_SIZE)
			return -ERANGE;
	}
	return 0;
}

static void check_lookup(const struct hib_extmap *m, uint64_t lp)
{
	uint64_t off = 0, run = 0, moff, mrun;
	int r = extmap_lookup(m, lp, &off, &run);

	if (!model_lookup(lp, &moff, &mrun)) {
		FUZZ_CHECK(r == -ERANGE);
		return;
	}
	FUZZ_CHECK(r == 0);
	FUZZ_CHECK(off == moff);
	/* Merging only lengthens runs, never past the end of the map. */
	FUZZ_CHECK(run >= mrun && run <= m->pages - lp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct hib_map_page page __attribute__((aligned(HIB_PAGE_SIZE)));
	struct hib_extmap m = { 0 };
	uint64_t id, dev_bytes, skip, total = 0;
	size_t npages;
	bool chain = true;
	int r;

	if (size < HDR)
		return 0;
	id = fuzz_le(data, size, 8);
	dev_bytes = fuzz_le(data + 8, size - 8, 4) * HIB_PAGE_SIZE;
	skip = fuzz_le(data + 12, size - 12, 4) * HIB_PAGE_SIZE;
	npages = (size - HDR + HIB_PAGE_SIZE - 1) / HIB_PAGE_SIZE;
	if (npages > MAX_PAGES)
		npages = MAX_PAGES;
	nraw = 0;

	for (uint32_t i = 0; i < npages; i++) {
		size_t at = HDR + (size_t)i * HIB_PAGE_SIZE, n = size - at;
		uint64_t sum;
		int r2;

		memset(&page, 0, sizeof(page));
		memcpy(&page, data + at, n < HIB_PAGE_SIZE ? n : HIB_PAGE_SIZE);
		sum = page.xxh3;
		r = hib_map_page_check(&page, id, i);
		FUZZ_CHECK(r == 0 || r == -EBADMSG);
		hib_map_page_seal(&page, id);
		if (r == 0)
			FUZZ_CHECK(page.xxh3 == sum); /* a valid page is already sealed */
		r2 = hib_map_page_check(&page, id, i);
		FUZZ_CHECK(r2 == 0 || r2 == -EBADMSG);
		if (r == 0)
			FUZZ_CHECK(r2 == 0);
		if (r2 < 0) {
			chain = false;
			continue;
		}
		/* What a page that passes promises. */
		FUZZ_CHECK(page.count > 0 && page.count <= HIB_MAP_ENTRIES);
		FUZZ_CHECK(page.next_offset % HIB_PAGE_SIZE == 0);
		FUZZ_CHECK(hib_map_page_check(&page, id ^ 1, i) == -EBADMSG);
		FUZZ_CHECK(hib_map_page_check(&page, id, i + 1) == -EBADMSG);
		for (uint32_t k = 0; k < page.count; k++) {
			const struct hib_extent *e = &page.ext[k];

			FUZZ_CHECK(e->offset % HIB_PAGE_SIZE == 0 && e->pages > 0);
			FUZZ_CHECK((unsigned __int128)e->offset +
					   (unsigned __int128)e->pages * HIB_PAGE_SIZE <=
				   UINT64_MAX);
		}
		/* The engine stops at the first bad page of the chain. */
		if (!chain)
			continue;
		for (uint32_t k = 0; k < page.count; k++) {
			r = extmap_add(&m, page.ext[k].offset, page.ext[k].pages);
			FUZZ_CHECK(r == 0);
			raw[nraw++] = page.ext[k];
			total += page.ext[k].pages;
		}
	}

	FUZZ_CHECK(m.pages == total);
	FUZZ_CHECK(m.n <= nraw);
	FUZZ_CHECK(extmap_pages_needed(&m) == (m.n + HIB_MAP_ENTRIES - 1) / HIB_MAP_ENTRIES);
	/* Before the index, nothing can be looked up. */
	if (m.pages) {
		uint64_t off, run;
		FUZZ_CHECK(extmap_lookup(&m, 0, &off, &run) == -ERANGE);
	}
	r = extmap_index(&m);
	FUZZ_CHECK(r == 0);

	/* Lookups: both ends, every extent's edges, and the input's own picks. */
	check_lookup(&m, 0);
	check_lookup(&m, m.pages);
	check_lookup(&m, m.pages + 1);
	check_lookup(&m, UINT64_MAX);
	if (m.pages)
		check_lookup(&m, m.pages - 1);
	{
		uint64_t lp = 0;
		for (size_t i = 0; i < nraw && i < 64; i++) {
			check_lookup(&m, lp);
			check_lookup(&m, lp + raw[i].pages - 1);
			lp += raw[i].pages;
		}
	}
	for (size_t i = 0; i < 16; i++) {
		uint8_t b = data[16 + i];
		check_lookup(&m, m.pages ? (uint64_t)b * (m.pages / 256 + 1) % (m.pages + 2) : b);
	}

	/* The bounds the engine asks for: inside the device, clear of page 0. */
	FUZZ_CHECK(extmap_check_bounds(&m, 0, dev_bytes, skip) == model_bounds(0, dev_bytes, skip));
	FUZZ_CHECK(extmap_check_bounds(&m, 0, UINT64_MAX, UINT64_MAX - HIB_PAGE_SIZE + 1) ==
		   model_bounds(0, UINT64_MAX, UINT64_MAX - HIB_PAGE_SIZE + 1));
	FUZZ_CHECK(extmap_check_bounds(&m, skip, dev_bytes, 0) == model_bounds(skip, dev_bytes, 0));
	extmap_free(&m);
	FUZZ_CHECK(m.ext == NULL && m.start == NULL && m.n == 0 && m.pages == 0);
	return 0;
}
