// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The extent map: pages handed out one by one merge into extents, every
 * logical page finds its device page (across extent boundaries too), and a
 * map read back from disk is refused when it reaches the signature page or
 * past the device.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "storage/extmap.h"
#include "helpers.h"

#define P HIB_PAGE_SIZE

static uint64_t rng_next(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void contiguous_pages_merge(void **state)
{
	struct hib_extmap m = { 0 };

	(void)state;
	for (uint64_t i = 0; i < 1000; i++)
		assert_int_equal(extmap_add(&m, (5 + i) * P, 1), 0);
	assert_int_equal(m.n, 1);
	assert_int_equal(m.pages, 1000);
	assert_int_equal(m.ext[0].offset, 5 * P);
	assert_int_equal(m.ext[0].pages, 1000);
	/* Runs that continue the last extent merge too, whatever their length. */
	assert_int_equal(extmap_add(&m, 1005 * P, 24), 0);
	assert_int_equal(m.n, 1);
	assert_int_equal(m.pages, 1024);
	extmap_free(&m);
	assert_int_equal(m.n, 0);
	assert_null(m.ext);
}

static void gaps_and_backward_pages_start_extents(void **state)
{
	struct hib_extmap m = { 0 };

	(void)state;
	assert_int_equal(extmap_add(&m, 10 * P, 2), 0); /* 10, 11 */
	assert_int_equal(extmap_add(&m, 13 * P, 1), 0); /* a gap: new extent */
	assert_int_equal(extmap_add(&m, 9 * P, 1), 0);  /* before the last: new extent */
	assert_int_equal(extmap_add(&m, 10 * P, 1), 0); /* continues 9 */
	assert_int_equal(m.n, 3);
	assert_int_equal(m.pages, 5);
	assert_int_equal(m.ext[0].offset, 10 * P);
	assert_int_equal(m.ext[0].pages, 2);
	assert_int_equal(m.ext[1].offset, 13 * P);
	assert_int_equal(m.ext[1].pages, 1);
	assert_int_equal(m.ext[2].offset, 9 * P);
	assert_int_equal(m.ext[2].pages, 2);
	extmap_free(&m);
}

static void bad_adds_refused(void **state)
{
	struct hib_extmap m = { 0 };

	(void)state;
	assert_int_equal(extmap_add(&m, 3 * P + 512, 1), -EINVAL);
	assert_int_equal(extmap_add(&m, 3 * P, 0), -EINVAL);
	assert_int_equal(m.n, 0);
	assert_int_equal(m.pages, 0);
	extmap_free(&m);
}

static void lookup_before_index_or_beyond_end(void **state)
{
	struct hib_extmap m = { 0 };
	uint64_t off = 0xdead, run = 0xbeef;

	(void)state;
	assert_int_equal(extmap_index(&m), 0); /* an empty map indexes */
	assert_int_equal(extmap_lookup(&m, 0, &off, &run), -ERANGE);
	assert_int_equal(extmap_add(&m, 4 * P, 3), 0);
	extmap_free(&m);
	assert_int_equal(extmap_add(&m, 4 * P, 3), 0);
	assert_int_equal(extmap_lookup(&m, 0, &off, &run), -ERANGE); /* not indexed yet */
	assert_int_equal(extmap_index(&m), 0);
	assert_int_equal(extmap_lookup(&m, 3, &off, &run), -ERANGE);
	assert_int_equal(extmap_lookup(&m, UINT64_MAX, &off, &run), -ERANGE);
	assert_int_equal(off, 0xdead);
	assert_int_equal(run, 0xbeef);
	assert_int_equal(extmap_lookup(&m, 2, &off, &run), 0);
	assert_int_equal(off, 6 * P);
	assert_int_equal(run, 1);
	extmap_free(&m);
}

/* A reserved map holds what it was reserved for, in the same arrays, and
 * refuses one extent more instead of growing; pages that merge still fit. */
static void reserved_map_never_grows(void **state)
{
	struct hib_extmap m = { 0 };
	const struct hib_extent *ext;
	const uint64_t *start;
	uint64_t off = 0, run = 0;

	(void)state;
	assert_int_equal(extmap_reserve(&m, 100), 0);
	assert_int_equal(m.cap, 100);
	ext = m.ext;
	start = m.start;
	assert_int_equal(extmap_add(&m, 3 * P, 1), 0);
	assert_int_equal(extmap_lookup(&m, 0, &off, &run), -ERANGE); /* not indexed yet */
	for (uint64_t i = 1; i < 100; i++) {
		assert_int_equal(extmap_add(&m, (3 + 2 * i) * P, 1), 0);
		assert_int_equal(extmap_index(&m), 0);
	}
	assert_int_equal(m.n, 100);
	assert_int_equal(extmap_add(&m, 1000 * P, 1), -ENOSPC);
	assert_int_equal(extmap_add(&m, 202 * P, 5), 0); /* continues the last extent */
	assert_int_equal(m.n, 100);
	assert_int_equal(m.pages, 105);
	assert_ptr_equal(m.ext, ext);
	assert_ptr_equal(m.start, start);
	assert_int_equal(extmap_lookup(&m, 103, &off, &run), 0); /* 201..206 from page 99 */
	assert_int_equal(off, 205 * P);
	assert_int_equal(run, 2);
	assert_int_equal(extmap_lookup(&m, 1, &off, &run), 0);
	assert_int_equal(off, 5 * P);
	assert_int_equal(run, 1);
	extmap_free(&m);
	assert_false(m.fixed);
	/* Reserving nothing still leaves room for one extent. */
	assert_int_equal(extmap_reserve(&m, 0), 0);
	assert_int_equal(extmap_add(&m, 7 * P, 2), 0);
	assert_int_equal(extmap_add(&m, 10 * P, 1), -ENOSPC);
	extmap_free(&m);
}

/* Every logical page against a page-by-page reference, over random extents. */
static void lookups_match_reference(void **state)
{
	uint64_t seeds[] = { 1, 2, 3 };

	(void)state;
	for (size_t s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++) {
		struct hib_extmap m = { 0 };
		uint64_t x = seeds[s], dev = 1, lp = 0, total;
		uint64_t *ref = NULL;
		size_t cap = 0;

		/* Pages as an allocator hands them out: runs, skips, sometimes back. */
		for (int i = 0; i < 3000; i++) {
			uint64_t r = rng_next(&x);
			uint64_t len = 1 + r % 7;

			if (r % 11 == 0)
				dev = 1 + (r >> 8) % 100000; /* jump anywhere */
			else if (r % 3 == 0)
				dev += 1 + (r >> 8) % 5; /* a gap */
			if (lp + len > cap) {
				cap = 2 * (lp + len);
				ref = realloc(ref, cap * sizeof(*ref));
				assert_non_null(ref);
			}
			for (uint64_t k = 0; k < len; k++)
				ref[lp + k] = (dev + k) * P;
			assert_int_equal(extmap_add(&m, dev * P, len), 0);
			dev += len;
			lp += len;
		}
		total = lp;
		assert_int_equal(m.pages, total);
		assert_int_equal(extmap_index(&m), 0);
		for (lp = 0; lp < total; lp++) {
			uint64_t off, run, k;

			assert_int_equal(extmap_lookup(&m, lp, &off, &run), 0);
			if (off != ref[lp])
				fail_msg("seed %llu: logical page %llu at %llu, want %llu",
					 (unsigned long long)seeds[s], (unsigned long long)lp,
					 (unsigned long long)off, (unsigned long long)ref[lp]);
			/* run: exactly the pages that continue contiguously on the device,
			 * up to an extent end (which, merged, is a discontinuity). */
			assert_true(run >= 1);
			assert_true(lp + run <= total);
			for (k = 1; k < run; k++)
				assert_int_equal(ref[lp + k], ref[lp] + k * P);
			if (lp + run < total)
				assert_int_not_equal(ref[lp + run], ref[lp] + run * P);
		}
		free(ref);
		extmap_free(&m);
	}
}

static void pages_needed_for_map(void **state)
{
	struct hib_extmap m = { 0 };

	(void)state;
	assert_int_equal(extmap_pages_needed(&m), 0);
	for (uint64_t i = 0; i < HIB_MAP_ENTRIES; i++)
		assert_int_equal(extmap_add(&m, (2 * i + 1) * P, 1), 0);
	assert_int_equal(m.n, HIB_MAP_ENTRIES);
	assert_int_equal(extmap_pages_needed(&m), 1);
	assert_int_equal(extmap_add(&m, (2 * HIB_MAP_ENTRIES + 1) * P, 1), 0);
	assert_int_equal(extmap_pages_needed(&m), 2);
	extmap_free(&m);
}

static struct hib_extmap one_extent(uint64_t off, uint64_t pages)
{
	struct hib_extmap m = { 0 };

	assert_int_equal(extmap_add(&m, off, pages), 0);
	return m;
}

struct bounds_case {
	const char *name;
	uint64_t off, pages; /* one extent, bytes and pages */
	uint64_t lo, hi;     /* the device, bytes */
	uint64_t skip;       /* the signature page, bytes */
	int want;
};

#define DEV (100 * P)
static const struct bounds_case bounds_cases[] = {
	{ "bounds_accept_extent_inside_device", 1 * P, 10, 0, DEV, 0, 0 },
	{ "bounds_accept_extent_ending_at_device_end", 90 * P, 10, 0, DEV, 0, 0 },
	{ "bounds_reject_extent_past_device_end", 91 * P, 10, 0, DEV, 0, -ERANGE },
	{ "bounds_reject_extent_starting_past_end", 200 * P, 1, 0, DEV, 0, -ERANGE },
	{ "bounds_reject_extent_on_signature_page", 0, 1, 0, DEV, 0, -ERANGE },
	{ "bounds_reject_extent_covering_signature_page", 5 * P, 10, 0, DEV, 8 * P, -ERANGE },
	{ "bounds_reject_extent_ending_on_signature_page", 5 * P, 4, 0, DEV, 8 * P, -ERANGE },
	{ "bounds_reject_extent_starting_on_signature_page", 8 * P, 4, 0, DEV, 8 * P, -ERANGE },
	{ "bounds_accept_extent_just_before_signature_page", 5 * P, 3, 0, DEV, 8 * P, 0 },
	{ "bounds_accept_extent_just_after_signature_page", 9 * P, 3, 0, DEV, 8 * P, 0 },
	{ "bounds_reject_extent_below_low_limit", 2 * P, 3, 4 * P, DEV, 0, -ERANGE },
	{ "bounds_reject_extent_length_wrapping", 10 * P, UINT64_MAX / P, 0, DEV, 0, -ERANGE },
};

static void bounds(void **state)
{
	const struct bounds_case *c = *state;
	struct hib_extmap m = one_extent(c->off, c->pages);

	assert_int_equal(extmap_check_bounds(&m, c->lo, c->hi, c->skip), c->want);
	extmap_free(&m);
}

/* One bad extent among good ones is enough to refuse the map. */
static void bounds_check_every_extent(void **state)
{
	struct hib_extmap m = { 0 };

	(void)state;
	for (uint64_t i = 1; i < 40; i += 2)
		assert_int_equal(extmap_add(&m, i * P, 1), 0);
	assert_int_equal(extmap_check_bounds(&m, 0, DEV, 0), 0);
	assert_int_equal(extmap_check_bounds(&m, 0, DEV, 20 * P), 0);
	assert_int_equal(extmap_check_bounds(&m, 0, DEV, 21 * P), -ERANGE);
	assert_int_equal(extmap_check_bounds(&m, 0, 38 * P, 0), -ERANGE);
	extmap_free(&m);
}

/* Logical I/O through a scattered map lands each page where the map says. */
static void logical_io_across_extents(void **state)
{
	char path[PATH_MAX];
	struct hib_target *t = NULL;
	struct hib_extmap m = { 0 };
	static const uint64_t devpages[] = { 3, 4, 5, 9, 10, 2, 30, 31, 32, 33, 20 };
	const uint64_t n = sizeof(devpages) / sizeof(devpages[0]);
	uint8_t *buf = hib_alloc_pages(n * P), *back = hib_alloc_pages(n * P);
	int fd;

	(void)state;
	assert_non_null(buf);
	assert_non_null(back);
	fd = make_temp(path, "extmap");
	assert_int_equal(ftruncate(fd, 40 * P), 0);
	close(fd);
	for (uint64_t i = 0; i < n; i++) {
		assert_int_equal(extmap_add(&m, devpages[i] * P, 1), 0);
		memset(buf + i * P, (int)(0x10 + i), P);
	}
	assert_int_equal(extmap_index(&m), 0);
	assert_int_equal(m.n, 5); /* {3,4,5} {9,10} {2} {30..33} {20} */
	assert_int_equal(hib_target_open(path, 0, true, &t), 0);
	/* Spans that start and end inside extents. */
	assert_int_equal(hib_target_write_logical(t, &m, 0, buf, 2), 0);
	assert_int_equal(hib_target_write_logical(t, &m, 2, buf + 2 * P, n - 2), 0);
	assert_int_equal(hib_target_read_logical(t, &m, 1, back + P, n - 1), 0);
	assert_int_equal(hib_target_read_logical(t, &m, 0, back, 1), 0);
	assert_memory_equal(back, buf, n * P);
	for (uint64_t i = 0; i < n; i++) {
		uint8_t pg[P];
		pread_at(path, devpages[i] * P, pg, P);
		if (memcmp(pg, buf + i * P, P) != 0)
			fail_msg("logical page %llu not at device page %llu", (unsigned long long)i,
				 (unsigned long long)devpages[i]);
	}
	/* Past the map: refused, nothing read. */
	assert_int_equal(hib_target_read_logical(t, &m, n - 1, back, 2), -ERANGE);
	hib_target_close(t);
	extmap_free(&m);
	free(buf);
	free(back);
	unlink(path);
}

#define NAMED(fn)                                                                                  \
	{                                                                                          \
		.name = #fn, .test_func = fn                                                       \
	}

int main(void)
{
	enum { N_FIXED = 9, N_B = sizeof(bounds_cases) / sizeof(bounds_cases[0]) };
	static const struct CMUnitTest fixed[N_FIXED] = {
		NAMED(contiguous_pages_merge),    NAMED(gaps_and_backward_pages_start_extents),
		NAMED(bad_adds_refused),          NAMED(lookup_before_index_or_beyond_end),
		NAMED(lookups_match_reference),   NAMED(pages_needed_for_map),
		NAMED(bounds_check_every_extent), NAMED(logical_io_across_extents),
		NAMED(reserved_map_never_grows),
	};
	struct CMUnitTest tests[N_FIXED + N_B];
	size_t n = 0;

	for (size_t i = 0; i < N_FIXED; i++)
		tests[n++] = fixed[i];
	for (size_t i = 0; i < N_B; i++)
		tests[n++] = (struct CMUnitTest){ .name = bounds_cases[i].name,
						  .test_func = bounds,
						  .initial_state = (void *)&bounds_cases[i] };
	quiet_logs();
	return _cmocka_run_group_tests("extmap", tests, n, NULL, NULL);
}
