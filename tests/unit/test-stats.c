// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The numbers of a cycle for scripts: hib_options.stats is called once per
 * side with the same numbers the caller gets back, and the STATS line
 * (lib/frontend/stats.h) prints every key of its side once, in order, as a
 * raw integer of the field the key names.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "frontend/stats.h"
#include "util/cpustat.h"
#include "helpers.h"

struct seen {
	unsigned calls;
	enum hib_stats_side side;
	struct hib_stats st;
};

static void catch_stats(enum hib_stats_side side, const struct hib_stats *st, void *ud)
{
	struct seen *s = ud;

	s->calls++;
	s->side = side;
	s->st = *st;
}

struct fx {
	char path[PATH_MAX];
	struct hib_fake_params fp;
	struct hib_options o;
	struct seen seen;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	quiet_logs();
	f->fp = fake_params(11, 700, 2 * 700 + 64, 50);
	make_swap_path(f->path, "stats", f->fp.swap_pages);
	hib_options_init(&f->o);
	f->o.threads = 2;
	f->o.powerdown = HIB_POWERDOWN_NONE;
	f->o.stats = catch_stats;
	f->o.stats_userdata = &f->seen;
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	unlink(f->path);
	free(f);
	return 0;
}

/* One side over the fake: hib_suspend (HIB_SNAP_HIBERNATE) or hib_resume. */
static int run_side(struct fx *f, enum hib_snapshot_mode mode, struct hib_stats *ret_stats)
{
	struct hib_target *t = NULL;
	struct hib_snapshot *snap = NULL;
	enum hib_suspend_outcome so = 0;
	enum hib_resume_outcome ro = 0;
	int r;

	assert_int_equal(hib_target_open(f->path, 0, true, &t), 0);
	assert_int_equal(hib_snapshot_fake_new(&f->fp, mode, &snap), 0);
	if (mode == HIB_SNAP_HIBERNATE) {
		r = hib_suspend(t, snap, &f->o, &so, ret_stats);
		r = cycle_result(r, (int)so);
	} else {
		r = hib_resume(t, snap, &f->o, &ro, ret_stats);
		r = cycle_result(r, (int)ro);
	}
	hib_snapshot_close(snap);
	hib_target_close(t);
	return r;
}

/* Both sides call back once, with what they return, and agree on the image. */
static void both_sides_report_their_numbers(void **state)
{
	struct fx *f = *state;
	struct hib_stats hib, res;
	struct hib_image_info info;
	struct hib_target *t = NULL;

	/* The hibernate side leaves the resumed-only fields as they were. */
	memset(&hib, 0, sizeof(hib));
	memset(&res, 0, sizeof(res));
	assert_int_equal(run_side(f, HIB_SNAP_HIBERNATE, &hib), HIB_SUSPEND_WRITTEN);
	assert_int_equal(f->seen.calls, 1);
	assert_int_equal(f->seen.side, HIB_STATS_HIBERNATE);
	assert_memory_equal(&f->seen.st, &hib, sizeof(hib));
	assert_int_equal(hib.stream_bytes, f->fp.stream_pages * TEST_PAGE);
	assert_true(hib.blocks > 0);
	assert_true(hib.extents > 1); /* frag_every: a fragmented swap area */
	assert_true(hib.raw_blocks <= hib.blocks);
	assert_true(hib.snapshot_io_ms <= hib.io_ms);
	/* The CPUs' busy time: at most every CPU for the whole phase (10 ms ticks). */
	assert_int_equal(hib.cpus, hib_cpus_online());
	assert_true(hib.cpu_busy_ms <= (uint64_t)hib.cpus * (hib.io_ms + 20));
	/* `hibernate status` counts the image the same way (image-bytes). */
	assert_int_equal(hib_target_open(f->path, 0, false, &t), 0);
	assert_int_equal(hib_image_info(t, &info), 0);
	hib_target_close(t);
	assert_int_equal(info.stored_bytes, hib.stored_bytes);
	assert_int_equal(info.nr_blocks, hib.blocks);

	f->seen.calls = 0;
	assert_int_equal(run_side(f, HIB_SNAP_RESUME, &res), HIB_RESUME_RESTORED);
	assert_int_equal(f->seen.calls, 1);
	assert_int_equal(f->seen.side, HIB_STATS_RESUME);
	assert_memory_equal(&f->seen.st, &res, sizeof(res));
	assert_int_equal(res.stream_bytes, hib.stream_bytes);
	assert_int_equal(res.stored_bytes, hib.stored_bytes);
	assert_int_equal(res.blocks, hib.blocks);
	assert_int_equal(res.extents, hib.extents);
	assert_true(res.snapshot_io_ms <= res.io_ms);
	assert_int_equal(res.cpus, hib_cpus_online());
	assert_true(res.cpu_busy_ms <= (uint64_t)res.cpus * (res.io_ms + 20));
}

/*
 * /proc/stat's "cpu" line: busy is user + nice + system + irq + softirq +
 * steal (guest time is inside user); idle and iowait are not.  Kernels
 * before steal have 7 fields.  Anything else is refused.
 */
static void cpu_line_parsed(void **state)
{
	uint64_t busy = 0;
	struct hib_cpu_sample a = { .busy_ticks = 1000, .ok = true };
	struct hib_cpu_sample b = { .busy_ticks = 1000 + 3 * sysconf(_SC_CLK_TCK), .ok = true };
	struct hib_cpu_sample bad = { 0 };

	(void)state;
	assert_int_equal(hib_cpu_parse("cpu  10 20 30 4000 500 6 7 8 90 100\ncpu0 1 2 3\n", &busy),
			 0);
	assert_int_equal(busy, 10 + 20 + 30 + 6 + 7 + 8);
	assert_int_equal(hib_cpu_parse("cpu 1 2 3 4 5 6 7\n", &busy), 0);
	assert_int_equal(busy, 1 + 2 + 3 + 6 + 7);
	assert_int_equal(hib_cpu_parse("cpu0 1 2 3 4 5 6 7 8\n", &busy), -EINVAL);
	assert_int_equal(hib_cpu_parse("cpu 1 2 3\n", &busy), -EINVAL);
	assert_int_equal(hib_cpu_parse("", &busy), -EINVAL);

	assert_int_equal(hib_cpu_busy_ms(&a, &b), 3000);
	assert_int_equal(hib_cpu_busy_ms(&b, &a), 0); /* never negative */
	assert_int_equal(hib_cpu_busy_ms(&a, &bad), 0);
	/* This machine's /proc/stat reads, and its busy time only grows. */
	a = hib_cpu_sample();
	b = hib_cpu_sample();
	assert_true(a.ok && b.ok);
	assert_true(b.busy_ticks >= a.busy_ticks);
}

/* A caller that keeps no numbers still has them reported. */
static void reported_without_ret_stats(void **state)
{
	struct fx *f = *state;

	assert_int_equal(run_side(f, HIB_SNAP_HIBERNATE, NULL), HIB_SUSPEND_WRITTEN);
	assert_int_equal(f->seen.calls, 1);
	assert_int_equal(f->seen.st.stream_bytes, f->fp.stream_pages * TEST_PAGE);
	f->seen.calls = 0;
	assert_int_equal(run_side(f, HIB_SNAP_RESUME, NULL), HIB_RESUME_RESTORED);
	assert_int_equal(f->seen.calls, 1);
	assert_int_equal(f->seen.st.stream_bytes, f->fp.stream_pages * TEST_PAGE);
	assert_true(f->seen.st.blocks > 0);
}

/* A refused cycle reports nothing: the numbers are of a side that happened. */
static void no_report_when_refused(void **state)
{
	struct fx *f = *state;
	char zeros[TEST_PAGE] = { 0 };

	pwrite_at(f->path, 0, zeros, sizeof(zeros)); /* no swap header: refused */
	assert_true(run_side(f, HIB_SNAP_HIBERNATE, NULL) < 0);
	assert_int_equal(run_side(f, HIB_SNAP_RESUME, NULL), HIB_RESUME_NO_IMAGE);
	assert_int_equal(f->seen.calls, 0);
}

/* Every field a different number, so a key printing the wrong field shows. */
static struct hib_stats distinct_stats(void)
{
	struct hib_stats st = {
		.stream_bytes = 101,
		.stored_bytes = 102,
		.extents = 103,
		.threads = 104,
		.snapshot_ms = 105,
		.io_ms = 106,
		.pipeline_bytes = 107,
		.blocks = 108,
		.snapshot_io_ms = 109,
		.adaptive = true,
		.raw_blocks = 111,
		.resumed_report = true,
		.load_ms = 112,
		.load_threads = 113,
		.written_unix = 1700000000,
		.loaded_unix = 1700000123,
		.preload_bytes = 114,
		.preload_ms = 115,
		.codec_ms = 120,
		.cpu_busy_ms = 121,
		.cpus = 122,
	};
	return st;
}

static void line_has_every_key_once_in_order(void **state)
{
	struct hib_stats st = distinct_stats();

	(void)state;
	for (int side = HIB_STATS_HIBERNATE; side <= HIB_STATS_RESUMED; side++) {
		char line[1024], want[64], *save = NULL, *tok;
		size_t i = 0;

		assert_true(hib_stats_format(side, &st, line, sizeof(line)) < (int)sizeof(line));
		tok = strtok_r(line, " ", &save);
		assert_string_equal(tok, "STATS");
		snprintf(want, sizeof(want), "side=%s", hib_stats_side_name(side));
		assert_string_equal(strtok_r(NULL, " ", &save), want);
		while ((tok = strtok_r(NULL, " ", &save))) {
			const char *key = hib_stats_key(side, i++);
			size_t n = key ? strlen(key) : 0;
			char *end;

			if (!key || strncmp(tok, key, n) != 0 || tok[n] != '=')
				fail_msg("side %d: '%s' where key '%s' belongs", side, tok,
					 key ? key : "(none)");
			errno = 0;
			strtoull(tok + n + 1, &end, 10);
			assert_true(*end == 0 && errno == 0 && end > tok + n + 1);
		}
		assert_null(hib_stats_key(side, i));
		assert_true(i > 5);
	}
}

static void line_prints_each_keys_field(void **state)
{
	struct hib_stats st = distinct_stats();
	char line[1024];

	(void)state;
	hib_stats_format(HIB_STATS_HIBERNATE, &st, line, sizeof(line));
	assert_string_equal(line, "STATS side=hibernate stream_bytes=101 stored_bytes=102 "
				  "extents=103 blocks=108 threads=104 snapshot_ms=105 write_ms=106 "
				  "snapshot_read_ms=109 codec_ms=120 cpu_busy_ms=121 cpus=122 "
				  "adaptive=1 raw_blocks=111 "
				  "pipeline_bytes=107");
	hib_stats_format(HIB_STATS_RESUME, &st, line, sizeof(line));
	assert_string_equal(line, "STATS side=resume stream_bytes=101 stored_bytes=102 "
				  "extents=103 blocks=108 threads=104 load_ms=106 "
				  "snapshot_write_ms=109 codec_ms=120 cpu_busy_ms=121 cpus=122 "
				  "preload_bytes=114 preload_ms=115 "
				  "pipeline_bytes=107");
	hib_stats_format(HIB_STATS_RESUMED, &st, line, sizeof(line));
	assert_string_equal(line, "STATS side=resumed stream_bytes=101 data_bytes=102 "
				  "threads=104 snapshot_ms=105 write_ms=106 load_ms=112 "
				  "load_threads=113 written_unix=1700000000 "
				  "loaded_unix=1700000123");
}

static void short_buffer_truncates_and_says_how_long(void **state)
{
	struct hib_stats st = distinct_stats();
	char whole[1024], part[24];
	int n = hib_stats_format(HIB_STATS_HIBERNATE, &st, whole, sizeof(whole));

	(void)state;
	assert_int_equal(hib_stats_format(HIB_STATS_HIBERNATE, &st, part, sizeof(part)), n);
	assert_int_equal(strlen(part), sizeof(part) - 1);
	assert_memory_equal(part, whole, sizeof(part) - 1);
	assert_int_equal(hib_stats_format((enum hib_stats_side)7, &st, part, sizeof(part)),
			 -EINVAL);
	assert_null(hib_stats_side_name((enum hib_stats_side)7));
}

#define FX(fn)                                                                                     \
	{                                                                                          \
		.name = #fn, .test_func = fn, .setup_func = fx_setup, .teardown_func = fx_teardown \
	}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		FX(both_sides_report_their_numbers),
		FX(reported_without_ret_stats),
		FX(no_report_when_refused),
		cmocka_unit_test(line_has_every_key_once_in_order),
		cmocka_unit_test(line_prints_each_keys_field),
		cmocka_unit_test(short_buffer_truncates_and_says_how_long),
		cmocka_unit_test(cpu_line_parsed),
	};

	return cmocka_run_group_tests_name("stats", tests, NULL, NULL);
}
