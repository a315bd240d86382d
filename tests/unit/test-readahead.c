// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The read-ahead over an image's logical pages: every page comes back as the
 * map says, in chunks that do and do not divide its runs, with io_uring and
 * with pread; refusals; and in the background, a thread that keeps reading
 * while the consumer waits, up to its window and no further.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "storage/extmap.h"
#include "storage/readahead.h"
#include "helpers.h"

#define P HIB_PAGE_SIZE

/* A scattered map over a file target: 97 logical pages in runs of 1..7
 * device pages, placed backwards and with gaps, each page's bytes its index. */
struct ra_fixture {
	char path[PATH_MAX];
	struct hib_target *t;
	struct hib_extmap m;
	uint64_t n;
};

static void ra_setup(struct ra_fixture *f)
{
	uint64_t dev = 300, lp = 0;
	uint8_t *pg = hib_alloc_pages(P);
	int fd;

	assert_non_null(pg);
	memset(f, 0, sizeof(*f));
	fd = make_temp(f->path, "readahead");
	assert_int_equal(ftruncate(fd, 400 * P), 0);
	for (unsigned run = 1; lp < 97; run = run % 7 + 1) {
		for (unsigned k = 0; k < run && lp < 97; k++, lp++) {
			memset(pg, (int)(lp & 0xff), P);
			memcpy(pg, &lp, sizeof(lp));
			assert_int_equal(pwrite(fd, pg, P, (off_t)((dev + k) * P)), (ssize_t)P);
			assert_int_equal(extmap_add(&f->m, (dev + k) * P, 1), 0);
		}
		dev -= 9; /* the next run before this one, with a gap */
	}
	close(fd);
	free(pg);
	f->n = lp;
	assert_int_equal(extmap_index(&f->m), 0);
	assert_int_equal(hib_target_open(f->path, 0, false, &f->t), 0);
}

static void ra_teardown(struct ra_fixture *f)
{
	hib_target_close(f->t);
	extmap_free(&f->m);
	unlink(f->path);
}

static void ra_expect(const uint8_t *buf, uint64_t lp, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		uint64_t got;
		memcpy(&got, buf + i * P, sizeof(got));
		if (got != lp + i || buf[i * P + P - 1] != (uint8_t)((lp + i) & 0xff))
			fail_msg("logical page %llu holds page %llu", (unsigned long long)(lp + i),
				 (unsigned long long)got);
	}
}

/* Read-ahead returns every page in order, for chunk sizes that do and do
 * not divide the runs, shallow and deep, with io_uring and with pread. */
static void readahead_reads_what_the_map_says(void **state)
{
	struct ra_fixture f;
	uint8_t *buf = hib_alloc_pages(16 * P);
	static const unsigned chunks[] = { 1, 3, 8, 64, 200 };
	static const unsigned depths[] = { 1, 2, 5, 32 };

	(void)state;
	assert_non_null(buf);
	ra_setup(&f);
	for (int mode = HIB_IO_AUTO; mode <= HIB_IO_SYNC; mode++)
		for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++)
			for (size_t d = 0; d < sizeof(depths) / sizeof(depths[0]); d++) {
				struct hib_readahead *ra = NULL;
				uint64_t lp = 0;
				unsigned step = 1;

				assert_int_equal(hib_readahead_new(f.t, chunks[c], depths[d],
								   (enum hib_io_mode)mode, &ra),
						 0);
				assert_int_equal(hib_readahead_start(ra, &f.m, 0, f.n), 0);
				/* Requests of 1..16 pages, like block records. */
				while (lp < f.n) {
					uint64_t n = MIN((uint64_t)step, f.n - lp);
					assert_int_equal(hib_readahead_copy(ra, lp, buf, n), 0);
					ra_expect(buf, lp, n);
					lp += n;
					step = step % 16 + 1;
				}
				hib_readahead_free(ra);
			}
	ra_teardown(&f);
	free(buf);
}

/* A read-ahead made before its map is filled (--verify sets it up before the
 * freeze): every buffer at once, no range until hib_readahead_start gives one,
 * then the pages the map says, and again from another start. */
static void readahead_made_before_its_map(void **state)
{
	struct ra_fixture f;
	uint8_t *buf = hib_alloc_pages(8 * P);

	(void)state;
	assert_non_null(buf);
	ra_setup(&f);
	for (int uring = 0; uring < 2; uring++) {
		struct hib_extmap m = { 0 };
		struct hib_readahead *ra = NULL;

		assert_int_equal(hib_readahead_new(f.t, 4, 3, uring ? HIB_IO_AUTO : HIB_IO_SYNC,
						   &ra),
				 0);
		assert_int_equal(hib_readahead_buffer_bytes(ra), 3 * 4 * P);
		assert_int_equal(hib_readahead_copy(ra, 0, buf, 1), -ERANGE);
		for (size_t i = 0; i < f.m.n; i++)
			assert_int_equal(extmap_add(&m, f.m.ext[i].offset, f.m.ext[i].pages), 0);
		assert_int_equal(extmap_index(&m), 0);
		assert_int_equal(hib_readahead_start(ra, &m, 0, f.n + 1), -EINVAL);
		assert_int_equal(hib_readahead_start(ra, &m, 0, f.n), 0);
		for (uint64_t lp = 0; lp < f.n; lp += 5) {
			uint64_t n = MIN(5, f.n - lp);
			assert_int_equal(hib_readahead_copy(ra, lp, buf, n), 0);
			ra_expect(buf, lp, n);
		}
		assert_int_equal(hib_readahead_start(ra, &m, 10, 50), 0);
		assert_int_equal(hib_readahead_copy(ra, 12, buf, 3), 0);
		ra_expect(buf, 12, 3);
		hib_readahead_free(ra);
		extmap_free(&m);
	}
	ra_teardown(&f);
	free(buf);
}

/* A window in the middle, skipping ahead, and the refusals. */
static void readahead_window_skips_and_refusals(void **state)
{
	struct ra_fixture f;
	struct hib_readahead *ra = NULL;
	uint8_t *buf = hib_alloc_pages(8 * P);

	(void)state;
	assert_non_null(buf);
	ra_setup(&f);
	assert_int_equal(hib_readahead_new(f.t, 4, 3, HIB_IO_AUTO, &ra), 0);
	assert_int_equal(hib_readahead_start(ra, &f.m, 10, 50), 0);
	assert_int_equal(hib_readahead_buffer_bytes(ra), 3 * 4 * P);
	assert_int_equal(hib_readahead_copy(ra, 9, buf, 1), -ERANGE); /* before the window */
	assert_int_equal(hib_readahead_copy(ra, 12, buf, 3), 0);
	ra_expect(buf, 12, 3);
	assert_int_equal(hib_readahead_copy(ra, 11, buf, 1), -ERANGE); /* backwards */
	assert_int_equal(hib_readahead_copy(ra, 40, buf, 5), 0);       /* far ahead */
	ra_expect(buf, 40, 5);
	assert_int_equal(hib_readahead_copy(ra, 56, buf, 4), 0); /* up to the end */
	ra_expect(buf, 56, 4);
	assert_int_equal(hib_readahead_copy(ra, 59, buf, 2), -ERANGE); /* past it */
	/* Windows outside the map are refused at once. */
	assert_int_equal(hib_readahead_start(ra, &f.m, 90, 8), -EINVAL);
	/* A second pass on the same buffers, from the start. */
	assert_int_equal(hib_readahead_start(ra, &f.m, 0, f.n), 0);
	assert_int_equal(hib_readahead_copy(ra, 0, buf, 8), 0);
	ra_expect(buf, 0, 8);
	hib_readahead_free(ra);
	assert_int_equal(hib_readahead_new(f.t, 0, 3, HIB_IO_AUTO, &ra), -EINVAL);
	ra_teardown(&f);
	free(buf);
}

/* Copy logical pages [@from, @to) in requests of 1..16 pages, checking each. */
static void ra_copy_all(struct hib_readahead *ra, uint64_t from, uint64_t to)
{
	uint8_t *buf = hib_alloc_pages(16 * P);
	unsigned step = 1;

	assert_non_null(buf);
	for (uint64_t lp = from; lp < to;) {
		uint64_t n = MIN((uint64_t)step, to - lp);

		assert_int_equal(hib_readahead_copy(ra, lp, buf, n), 0);
		ra_expect(buf, lp, n);
		lp += n;
		step = step % 16 + 1;
	}
	free(buf);
}

/* A map pointing past the end of the device, in the foreground and in the
 * background: the read fails with an error, never hangs, and the pages
 * before it still read. */
static void readahead_reports_a_map_past_the_device(void **state)
{
	struct ra_fixture f;
	uint8_t *buf = hib_alloc_pages(P);

	(void)state;
	assert_non_null(buf);
	ra_setup(&f);
	assert_int_equal(extmap_add(&f.m, 1000 * P, 4), 0); /* the file has 400 pages */
	assert_int_equal(extmap_index(&f.m), 0);
	for (int mode = HIB_IO_AUTO; mode <= HIB_IO_SYNC; mode++)
		for (int bg = 0; bg <= 1; bg++) {
			struct hib_readahead *ra = NULL;

			assert_int_equal(hib_readahead_new(f.t, 8, 4, (enum hib_io_mode)mode, &ra),
					 0);
			assert_int_equal(hib_readahead_start(ra, &f.m, 0, f.n + 4), 0);
			if (bg)
				assert_int_equal(hib_readahead_background(ra, 20, 20), 0);
			ra_copy_all(ra, bg ? 0 : f.n - 1, f.n);
			assert_int_equal(hib_readahead_copy(ra, f.n + 1, buf, 1), -ERANGE);
			hib_readahead_free(ra);
		}
	ra_teardown(&f);
	free(buf);
}

/* One pass over @f: @handover pages read in the foreground, then the rest
 * in the background @window chunks ahead, each page checked. */
static void background_pass(struct ra_fixture *f, enum hib_io_mode mode, unsigned chunk,
			    unsigned depth, unsigned window, uint64_t handover)
{
	struct hib_readahead *ra = NULL;

	assert_int_equal(hib_readahead_new(f->t, chunk, depth, mode, &ra), 0);
	assert_int_equal(hib_readahead_start(ra, &f->m, 0, f->n), 0);
	ra_copy_all(ra, 0, handover);
	assert_int_equal(hib_readahead_background(ra, window, window), 0);
	assert_int_equal(hib_readahead_buffer_bytes(ra), (uint64_t)MAX(window, depth) * chunk * P);
	ra_copy_all(ra, handover, f->n);
	assert_true(hib_readahead_peak_bytes(ra) <= hib_readahead_buffer_bytes(ra));
	hib_readahead_free(ra);
}

/* In the background every page comes back as in the foreground: windows
 * smaller and larger than the pass, chunks that do and do not divide the
 * runs, handed over at the start and after reads in the foreground (chunks
 * read ahead then kept), with io_uring and with pread. */
static void readahead_background_reads_what_the_map_says(void **state)
{
	struct ra_fixture f;
	static const unsigned chunks[] = { 1, 3, 8 };
	static const unsigned depths[] = { 1, 2, 5 };
	static const unsigned windows[] = { 0, 4, 40 };
	static const uint64_t handover[] = { 0, 1, 10 };

	(void)state;
	ra_setup(&f);
	for (int mode = HIB_IO_AUTO; mode <= HIB_IO_SYNC; mode++)
		for (unsigned i = 0; i < 3 * 3 * 3 * 3; i++)
			background_pass(&f, (enum hib_io_mode)mode, chunks[i % 3],
					depths[i / 3 % 3], windows[i / 9 % 3], handover[i / 27]);
	ra_teardown(&f);
}

/* Wait (at most 10 s) until @ra has held @bytes read ahead at once. */
static void wait_peak(struct hib_readahead *ra, uint64_t bytes)
{
	for (int i = 0; i < 10000 && hib_readahead_peak_bytes(ra) < bytes; i++)
		usleep(1000);
	assert_int_equal(hib_readahead_peak_bytes(ra), bytes);
}

/* A read-ahead of 4-page chunks, 2 in flight, over @f in @mode, in the
 * background with @window and @ahead (widened first in the foreground when
 * @widen_first, which must do nothing); page 0 taken into @buf, then the
 * thread holds @ahead chunks and no more (checked again 50 ms later). */
static struct hib_readahead *held_after_page_0(struct ra_fixture *f, int mode, unsigned window,
					       unsigned ahead, bool widen_first, uint8_t *buf)
{
	struct hib_readahead *ra = NULL;

	assert_int_equal(hib_readahead_new(f->t, 4, 2, (enum hib_io_mode)mode, &ra), 0);
	assert_int_equal(hib_readahead_start(ra, &f->m, 0, f->n), 0);
	if (widen_first)
		hib_readahead_widen(ra);
	assert_int_equal(hib_readahead_background(ra, window, ahead), 0);
	assert_int_equal(hib_readahead_copy(ra, 0, buf, 1), 0);
	ra_expect(buf, 0, 1);
	wait_peak(ra, (uint64_t)ahead * 4 * P);
	usleep(50 * 1000);
	assert_int_equal(hib_readahead_peak_bytes(ra), (uint64_t)ahead * 4 * P);
	return ra;
}

/* The consumer takes a page and stops: the thread reads on, its window full
 * and no further. The file then emptied, the pages of the window still come
 * back (they were read while the consumer waited) and the next is not there. */
static void readahead_background_reads_while_the_consumer_waits(void **state)
{
	uint8_t *buf = hib_alloc_pages(P);

	(void)state;
	assert_non_null(buf);
	for (int mode = HIB_IO_AUTO; mode <= HIB_IO_SYNC; mode++) {
		struct ra_fixture f;
		struct hib_readahead *ra;

		ra_setup(&f);
		ra = held_after_page_0(&f, mode, 10, 10, false, buf); /* pages 0..39 */
		assert_int_equal(truncate(f.path, 0), 0);
		ra_copy_all(ra, 1, 40);
		/* Page 40 is read only now, from the emptied file. */
		if (hib_readahead_copy(ra, 40, buf, 1) == 0) {
			uint64_t got;

			memcpy(&got, buf, sizeof(got));
			assert_int_not_equal(got, 40);
		}
		hib_readahead_free(ra);
		ra_teardown(&f);
	}
	free(buf);
}

/* Held to @ahead chunks until widened: the thread fills 2 chunks past the
 * consumer's and stops there (checked again 50 ms later); widened, it fills
 * the window of 10.  Widening a read-ahead in the foreground does nothing. */
static void readahead_background_widens(void **state)
{
	uint8_t *buf = hib_alloc_pages(P);

	(void)state;
	assert_non_null(buf);
	for (int mode = HIB_IO_AUTO; mode <= HIB_IO_SYNC; mode++) {
		struct ra_fixture f;
		struct hib_readahead *ra;

		ra_setup(&f);
		ra = held_after_page_0(&f, mode, 10, 2, true, buf);
		hib_readahead_widen(ra);
		wait_peak(ra, 10 * 4 * P);
		ra_copy_all(ra, 1, f.n);
		hib_readahead_free(ra);
		ra_teardown(&f);
	}
	free(buf);
}

/* Freed while its thread reads, before anything is copied out and midway;
 * a second pass is refused once in the background. */
static void readahead_background_freed_while_reading(void **state)
{
	struct ra_fixture f;
	uint8_t *buf = hib_alloc_pages(P);

	(void)state;
	assert_non_null(buf);
	ra_setup(&f);
	for (int mode = HIB_IO_AUTO; mode <= HIB_IO_SYNC; mode++)
		for (uint64_t upto = 0; upto < 60; upto += 30) {
			struct hib_readahead *ra = NULL;

			assert_int_equal(hib_readahead_new(f.t, 2, 3, (enum hib_io_mode)mode, &ra),
					 0);
			assert_int_equal(hib_readahead_start(ra, &f.m, 0, f.n), 0);
			assert_int_equal(hib_readahead_background(ra, 50, 50), 0);
			assert_int_equal(hib_readahead_background(ra, 50, 50), -EINVAL);
			assert_int_equal(hib_readahead_start(ra, &f.m, 0, f.n), -EBUSY);
			ra_copy_all(ra, 0, upto);
			hib_readahead_free(ra);
		}
	ra_teardown(&f);
	free(buf);
}

#define NAMED(fn)                                                                                  \
	{                                                                                          \
		.name = #fn, .test_func = fn                                                       \
	}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		NAMED(readahead_reads_what_the_map_says),
		NAMED(readahead_window_skips_and_refusals),
		NAMED(readahead_reports_a_map_past_the_device),
		NAMED(readahead_made_before_its_map),
		NAMED(readahead_background_reads_what_the_map_says),
		NAMED(readahead_background_reads_while_the_consumer_waits),
		NAMED(readahead_background_widens),
		NAMED(readahead_background_freed_while_reading),
	};

	quiet_logs();
	return cmocka_run_group_tests_name("readahead", tests, NULL, NULL);
}
