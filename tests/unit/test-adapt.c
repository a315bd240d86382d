// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Adaptive compression (lib/engine/adapt.h): which share of the blocks goes
 * through the compressor.  It steps down while the writer waits for the
 * codec and up while it waits for the disk, and stores raw only where a raw
 * byte saves the write more than it costs the resume; an encrypted image
 * counts the seal, which raw blocks pay as well.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine/adapt.h"

#define MB 1000000ull
#define SEC 1000000000ull
#define MS 1000000ull

/* Rates in MB/s over all @workers: the compressor's (saving @saved of its
 * input), the seal's (0: a plain image) and the disk's. */
static void feed(struct hib_adapt *a, unsigned workers, double codec, double saved, double seal,
		 double disk)
{
	adapt_init(a, workers);
	/* Each worker compresses codec/workers MB a second: 8 runs of 1 s each. */
	for (int i = 0; i < 8; i++)
		adapt_codec_done(a, (uint64_t)(codec / workers * MB),
				 (uint64_t)(codec / workers * (1 - saved) * MB), SEC);
	if (seal > 0)
		adapt_seal_done(a, (uint64_t)(seal / workers * MB), SEC);
	adapt_disk_done(a, (uint64_t)(disk * MB), SEC);
}

/* @n windows of 100 ms in which the writer waited @codec_ms for the codec
 * and @disk_ms for the disk; the fraction after them. */
static double windows(struct hib_adapt *a, unsigned n, unsigned codec_ms, unsigned disk_ms)
{
	for (unsigned i = 0; i < n; i++)
		adapt_window(a, 100 * MS, codec_ms * MS, disk_ms * MS);
	return adapt_fraction(a);
}

/* The fraction after 40 windows in which the codec held the writer back. */
static double codec_bound(unsigned workers, double codec, double saved, double seal, double disk)
{
	struct hib_adapt a;

	feed(&a, workers, codec, saved, seal, disk);
	return windows(&a, 40, 50, 0);
}

static void everything_until_measured(void **state)
{
	struct hib_adapt a;

	(void)state;
	adapt_init(&a, 2);
	assert_true(adapt_fraction(&a) == 1.0);
	adapt_codec_done(&a, MB, MB / 2, SEC);
	adapt_disk_done(&a, 1000 * MB, SEC); /* a disk far faster, but one run only */
	/* Windows before the rates are known do not count. */
	assert_true(windows(&a, 40, 90, 0) == 1.0);
	for (uint64_t seq = 0; seq < 64; seq++)
		assert_true(adapt_compress(&a, seq));
}

static void rates_reported(void **state)
{
	struct hib_adapt a;
	struct hib_adapt_rates r;

	(void)state;
	feed(&a, 2, 200, 0.25, 80, 150);
	r = adapt_rates(&a);
	assert_true(r.codec > 199.9 && r.codec < 200.1);
	assert_true(r.seal > 79.9 && r.seal < 80.1);
	assert_true(r.disk > 149.9 && r.disk < 150.1);
	assert_true(r.saved > 0.2499 && r.saved < 0.2501);
}

/*
 * The text workload at a 500 MB/s throttle under TCG: lz4 at ~200 MB/s over
 * 2 workers saving 42%, the disk measured at 236 MB/s (its latency: all-raw
 * wrote at 331).  A margin of 2 on those rates compressed everything, and
 * all-raw hibernated 2 s sooner and resumed no later.  While the codec holds
 * the writer back, the share steps down, window by window, to the floor.
 */
static void codec_waits_step_down(void **state)
{
	struct hib_adapt a;
	double f = 1.0, g;
	int n = 0;

	(void)state;
	feed(&a, 2, 200, 0.42, 0, 236);
	while (f > 1.0 / 32) {
		g = windows(&a, 1, 50, 0);
		assert_true(g < f);
		f = g;
		assert_true(++n <= 16);
	}
	assert_true(windows(&a, 10, 50, 0) == 1.0 / 32);
	assert_true(adapt_lowest(&a) == 1.0 / 32);
	/* The least step is one in 16: an eighth's wait still moves. */
	feed(&a, 2, 200, 0.42, 0, 236);
	assert_true(windows(&a, 1, 13, 0) == 30.0 / 32);
}

/* A codec far slower than the disk (zstd -19 under TCG, ~2 MB/s): the writer
 * waits nearly all the time, and the floor is reached in 5 windows. */
static void long_waits_step_far(void **state)
{
	struct hib_adapt a;

	(void)state;
	feed(&a, 2, 2, 0.6, 0, 100);
	assert_true(windows(&a, 4, 95, 0) > 1.0 / 32);
	assert_true(windows(&a, 1, 95, 0) == 1.0 / 32);
	/* And back, as fast, when the disk waits as long. */
	assert_true(windows(&a, 5, 0, 95) < 1.0);
	assert_true(windows(&a, 20, 0, 95) == 1.0);
}

/* Then the disk holds it back: up again, to everything. */
static void disk_waits_step_up(void **state)
{
	struct hib_adapt a;

	(void)state;
	feed(&a, 2, 200, 0.42, 0, 236);
	windows(&a, 8, 50, 0);
	assert_true(adapt_fraction(&a) < 0.6);
	assert_true(windows(&a, 1, 0, 30) > windows(&a, 0, 0, 0) - 1e-9);
	assert_true(windows(&a, 20, 0, 30) == 1.0);
	/* A wait of less than an eighth of the window is noise: neither way.
	 * With the codec's under a 64th, the codec kept up, and takes one more
	 * in 32 a window. */
	windows(&a, 4, 50, 0);
	double f = adapt_fraction(&a);
	assert_true(windows(&a, 10, 10, 10) == f);
	assert_true(windows(&a, 1, 1, 10) == f + 1.0 / 32);
	assert_true(windows(&a, 3, 0, 0) == f + 4.0 / 32);
	assert_true(adapt_lowest(&a) < 0.6);
}

/*
 * The codec slow at first (the write's first windows under TCG: 64 MB/s over
 * 2 workers, against 144 later), then keeping up: no one waits.  The share
 * stepped down at first comes back up, to everything, in quiet windows; a
 * codec wait again steps it down.
 */
static void quiet_windows_step_up(void **state)
{
	struct hib_adapt a;

	(void)state;
	feed(&a, 2, 144, 0.33, 0, 143);
	assert_true(windows(&a, 3, 30, 0) == 21.0 / 32);
	assert_true(windows(&a, 10, 0, 0) == 31.0 / 32);
	assert_true(windows(&a, 1, 0, 0) == 1.0);
	assert_true(windows(&a, 1, 0, 0) == 1.0);
	assert_true(windows(&a, 1, 30, 0) < 1.0);
	assert_true(adapt_lowest(&a) == 21.0 / 32);
}

/*
 * Against a model of the pipeline (a window of B bytes: the codec needs
 * f·B/(W·C), the disk B·(1 - f·k)/D; the writer waits for the slower), the
 * share settles within two steps of where the two meet, W·C / (D + W·C·k).
 */
static void settles_where_codec_and_disk_meet(void **state)
{
	const double wc = 200, k = 0.42, d = 330, meet = wc / (d + wc * k);
	struct hib_adapt a;
	double lo = 1, hi = 0;

	(void)state;
	feed(&a, 2, wc, k, 0, 236); /* the disk measured lower than it is */
	for (int i = 0; i < 200; i++) {
		double f = adapt_fraction(&a), codec = f / wc, disk = (1 - f * k) / d;
		double wall = codec > disk ? codec : disk;

		adapt_window(&a, (uint64_t)(wall * SEC), (uint64_t)((wall - disk) * SEC),
			     (uint64_t)((wall - codec) * SEC));
		if (i >= 50) {
			lo = f < lo ? f : lo;
			hi = f > hi ? f : hi;
		}
	}
	print_message("meet %.3f: settled between %.3f and %.3f\n", meet, lo, hi);
	assert_true(lo >= meet - 2.0 / 32 - 1e-9 && hi <= meet + 2.0 / 32 + 1e-9);
}

/* A raw byte costs the resume k/D and saves the write 1/(W·C): with a disk
 * slower than W·C·k, everything stays compressed however the codec waits. */
static void raw_must_pay_at_resume(void **state)
{
	(void)state;
	assert_true(codec_bound(2, 200, 0.5, 0, 90) == 1.0);
	assert_true(codec_bound(2, 200, 0.5, 0, 110) == 1.0 / 32);
}

/* Nothing saved: the floor at once, so the compressor stays measured. */
static void nothing_saved(void **state)
{
	struct hib_adapt a;

	(void)state;
	feed(&a, 2, 100, 0.0, 0, 1000);
	assert_true(adapt_fraction(&a) == 1.0 / 32);
}

/*
 * An encrypted image under TCG, as measured in the bench's encrypted cell:
 * the seal at ~80 MB/s over 2 workers, lz4 alone at ~200 MB/s saving a third,
 * the disk at ~195 MB/s.  Raw blocks pay the seal on every byte, at
 * hibernation and at resume: compress everything, however the codec waits.
 */
static void encrypted_seal_counts_for_raw_blocks(void **state)
{
	(void)state;
	assert_true(codec_bound(2, 200, 0.33, 80, 195) == 1.0);
	/* The same codec and disk without the seal would go raw. */
	assert_true(codec_bound(2, 200, 0.33, 0, 195) == 1.0 / 32);
}

/* Compressing spares the seal more than it costs: always compress, even
 * against a disk far faster than the compressor. */
static void encrypted_compression_pays_for_itself(void **state)
{
	(void)state;
	/* e = 1/300 - 0.5/100 < 0 */
	assert_true(codec_bound(2, 300, 0.5, 100, 5000) == 1.0);
}

/* A fast seal and a fast disk: raw pays, and the codec's waits lower it. */
static void encrypted_fast_seal_goes_raw(void **state)
{
	(void)state;
	assert_true(codec_bound(2, 100, 0.5, 2000, 1000) == 1.0 / 32);
}

/* Blocks are picked evenly by sequence number: f of them, in every run. */
static void picked_evenly(void **state)
{
	struct hib_adapt a;
	unsigned compressed = 0;
	double f;

	(void)state;
	feed(&a, 2, 100, 0.5, 0, 1000);
	f = windows(&a, 3, 50, 0);
	assert_true(f > 0.3 && f < 0.7);
	for (uint64_t seq = 0; seq < 1000; seq++)
		compressed += adapt_compress(&a, seq);
	assert_in_range(compressed, (unsigned)(f * 1000) - 1, (unsigned)(f * 1000) + 1);
	assert_int_equal(atomic_load(&a.raw_blocks), 1000 - compressed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(everything_until_measured),
		cmocka_unit_test(rates_reported),
		cmocka_unit_test(codec_waits_step_down),
		cmocka_unit_test(long_waits_step_far),
		cmocka_unit_test(disk_waits_step_up),
		cmocka_unit_test(quiet_windows_step_up),
		cmocka_unit_test(settles_where_codec_and_disk_meet),
		cmocka_unit_test(raw_must_pay_at_resume),
		cmocka_unit_test(nothing_saved),
		cmocka_unit_test(encrypted_seal_counts_for_raw_blocks),
		cmocka_unit_test(encrypted_compression_pays_for_itself),
		cmocka_unit_test(encrypted_fast_seal_goes_raw),
		cmocka_unit_test(picked_evenly),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
