// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The whole cycle through the fake snapshot device into a regular file that
 * carries a real swap header: hibernate, inspect, resume, and the stream the
 * fake receives back must match byte for byte.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <liburing.h>

#include "hibernate.h"
#include "helpers.h"

struct cycle_case {
	enum hib_codec_choice codec;
	unsigned threads;
	uint64_t stream_pages;
	uint32_t frag_every;
};

/* The order of the restore's last steps: 'b' before_restore, 'f' the freeze. */
static char restore_order[8];

static void note_step(char c)
{
	size_t n = strlen(restore_order);

	if (n < sizeof(restore_order) - 1)
		restore_order[n] = c;
}

static void on_before_restore(void *ud)
{
	(void)ud;
	note_step('b');
}

static void on_freeze(void *ud)
{
	(void)ud;
	note_step('f');
}

static void run_cycle(const struct cycle_case *cc, enum hib_io_mode io_mode)
{
	char path[] = "/tmp/hib-test-XXXXXX";
	uint64_t swap_pages = cc->stream_pages * 2 + 64;
	struct hib_fake_params fp = {
		.seed = 42,
		.stream_pages = cc->stream_pages,
		.swap_pages = swap_pages,
		.frag_every = cc->frag_every,
		.fail_read_at = -1,
		.fail_write_at = -1,
		.on_freeze = on_freeze,
	};
	struct hib_target *t = NULL;
	struct hib_snapshot *snap = NULL;
	struct hib_options o;
	struct hib_stats st;
	enum hib_suspend_outcome written = 0;
	enum hib_resume_outcome resumed = 0;
	struct hib_image_info info;
	uint8_t before[4096], after[4096];
	uint64_t ok;
	bool complete, restored, frozen;
	int fd;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	make_swap_file(fd, swap_pages);
	assert_int_equal(pread(fd, before, sizeof(before), 0), (ssize_t)sizeof(before));
	close(fd);

	hib_options_init(&o);
	o.codec = cc->codec;
	o.threads = cc->threads;
	o.powerdown = HIB_POWERDOWN_NONE;
	o.no_adaptive = true; /* every block through the codec (adaptive: below) */
	o.io_mode = io_mode;

	assert_int_equal(hib_target_open(path, 0, true, &t), 0);
	assert_int_equal(hib_snapshot_fake_new(&fp, HIB_SNAP_HIBERNATE, &snap), 0);
	assert_int_equal(hib_suspend(t, snap, &o, &written, &st), 0);
	assert_int_equal(written, HIB_SUSPEND_WRITTEN);
	assert_int_equal(st.stream_bytes, cc->stream_pages * 4096);
	hib_snapshot_fake_result(snap, NULL, NULL, NULL, &frozen);
	assert_false(frozen);

	assert_int_equal(hib_image_info(t, &info), 0);
	assert_int_equal(info.state, HIB_SIG_IMAGE);
	assert_true(info.header_valid);
	assert_int_equal(info.stream_bytes, cc->stream_pages * 4096);
	if (cc->codec != HIB_COMPRESS_NONE)
		assert_true(info.stored_bytes < info.stream_bytes);

	hib_snapshot_fake_reset(snap, HIB_SNAP_RESUME);
	o.before_restore = on_before_restore;
	memset(restore_order, 0, sizeof(restore_order));
	assert_int_equal(hib_resume(t, snap, &o, &resumed, NULL), 0);
	assert_int_equal(resumed, HIB_RESUME_RESTORED);
	/* The splash's last chance comes before the freeze, once. */
	assert_string_equal(restore_order, "bf");
	hib_snapshot_fake_result(snap, &ok, &complete, &restored, NULL);
	assert_true(restored);
	assert_true(complete);
	assert_int_equal(ok, cc->stream_pages);

	/* Invalidated before the restore: page 0 is the swap header we started with. */
	fd = open(path, O_RDONLY);
	assert_int_equal(pread(fd, after, sizeof(after), 0), (ssize_t)sizeof(after));
	close(fd);
	assert_memory_equal(before, after, sizeof(before));
	hib_snapshot_fake_reset(snap, HIB_SNAP_RESUME);
	assert_int_equal(hib_resume(t, snap, &o, &resumed, NULL), 0);
	assert_int_equal(resumed, HIB_RESUME_NO_IMAGE);

	hib_snapshot_close(snap);
	hib_target_close(t);
	unlink(path);
}

static void test_cycle(void **state)
{
	run_cycle(*state, HIB_IO_AUTO);
}

/* The same cycles through plain pread/pwrite. */
static void test_cycle_sync_io(void **state)
{
	run_cycle(*state, HIB_IO_SYNC);
}

/* The log's "adaptive compression: N of M blocks stored raw" line, if any. */
static unsigned adaptive_raw_blocks;
static bool adaptive_off_for_room;
static void catch_adaptive(enum hib_loglevel level, const char *msg, void *ud)
{
	unsigned n, m;

	(void)level;
	(void)ud;
	if (getenv("HIB_TEST_VERBOSE"))
		fprintf(stderr, "LOG %s\n", msg);
	if (sscanf(msg, "adaptive compression: %u of %u", &n, &m) == 2)
		adaptive_raw_blocks = n;
	if (strstr(msg, "adaptive compression off: the area's"))
		adaptive_off_for_room = true;
}

/* One cycle with zstd at its slowest into a file (fast next to it): returns
 * the blocks stored raw by adaptive compression and the image's size. */
#define ADAPTIVE_STREAM_PAGES 2048
#define ADAPTIVE_ROOMY (2 * ADAPTIVE_STREAM_PAGES + 64)

static unsigned adaptive_cycle(bool no_adaptive, enum hib_io_mode io_mode, uint64_t swap_pages,
			       uint64_t *ret_stored)
{
	/* In memory: a "disk" far faster than zstd -19. */
	char path[] = "/dev/shm/hib-test-XXXXXX";
	const uint64_t stream_pages = ADAPTIVE_STREAM_PAGES;
	struct hib_fake_params fp = {
		.seed = 9,
		.stream_pages = stream_pages,
		.swap_pages = swap_pages,
		.fail_read_at = -1,
		.fail_write_at = -1,
		.on_freeze = on_freeze,
	};
	struct hib_target *t = NULL;
	struct hib_snapshot *snap = NULL;
	struct hib_options o;
	struct hib_stats st;
	enum hib_suspend_outcome written = 0;
	enum hib_resume_outcome resumed = 0;
	uint64_t ok;
	bool complete, restored;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	make_swap_file(fd, swap_pages);
	close(fd);
	hib_options_init(&o);
	o.codec = HIB_COMPRESS_ZSTD;
	o.codec_level = 19;
	o.threads = 2;
	o.block_bytes = 64 * 1024;
	o.no_adaptive = no_adaptive;
	o.io_mode = io_mode;
	o.powerdown = HIB_POWERDOWN_NONE;
	adaptive_raw_blocks = 0;
	adaptive_off_for_room = false;
	hib_set_log(catch_adaptive, NULL);
	assert_int_equal(hib_target_open(path, 0, true, &t), 0);
	assert_int_equal(hib_snapshot_fake_new(&fp, HIB_SNAP_HIBERNATE, &snap), 0);
	assert_int_equal(hib_suspend(t, snap, &o, &written, &st), 0);
	assert_int_equal(written, HIB_SUSPEND_WRITTEN);
	*ret_stored = st.stored_bytes;
	/* Raw and compressed blocks mixed: it must resume byte for byte. */
	hib_snapshot_fake_reset(snap, HIB_SNAP_RESUME);
	o.before_restore = on_before_restore;
	memset(restore_order, 0, sizeof(restore_order));
	assert_int_equal(hib_resume(t, snap, &o, &resumed, NULL), 0);
	assert_int_equal(resumed, HIB_RESUME_RESTORED);
	/* The splash's last chance comes before the freeze, once. */
	assert_string_equal(restore_order, "bf");
	hib_snapshot_fake_result(snap, &ok, &complete, &restored, NULL);
	assert_true(restored && complete);
	assert_int_equal(ok, stream_pages);
	quiet_logs();
	hib_snapshot_close(snap);
	hib_target_close(t);
	unlink(path);
	return adaptive_raw_blocks;
}

/* Adaptive compression tells a waiting disk by its io_uring queue. */
static bool io_uring_available(void)
{
	struct io_uring ring;

	if (io_uring_queue_init(4, &ring, 0) < 0) {
		print_message(
			"# skipped: io_uring unavailable here: adaptive compression is off\n");
		return false;
	}
	io_uring_queue_exit(&ring);
	return true;
}

static void adaptive_stores_raw_while_the_disk_waits(void **state)
{
	uint64_t adaptive_bytes, fixed_bytes;
	unsigned raw;

	(void)state;
	if (!io_uring_available())
		skip();
	raw = adaptive_cycle(false, HIB_IO_AUTO, ADAPTIVE_ROOMY, &adaptive_bytes);
	if (raw == 0)
		fail_msg("zstd -19 into a file: no block was stored raw");
	assert_false(adaptive_off_for_room);
	assert_int_equal(adaptive_cycle(true, HIB_IO_AUTO, ADAPTIVE_ROOMY, &fixed_bytes), 0);
	print_message("adaptive: %u of 128 blocks raw, %llu bytes; fixed: %llu bytes\n", raw,
		      (unsigned long long)adaptive_bytes, (unsigned long long)fixed_bytes);
	/* Raw blocks are larger: the image shows they were really stored raw. */
	assert_true(adaptive_bytes > fixed_bytes);
}

/* Synchronous writes hide the disk's rate: adaptive compression stays off. */
static void adaptive_off_with_sync_io(void **state)
{
	uint64_t bytes;

	(void)state;
	assert_int_equal(adaptive_cycle(false, HIB_IO_SYNC, ADAPTIVE_ROOMY, &bytes), 0);
}

/* An area that takes the stream compressed (about 750 pages here) but not
 * stored raw (2048 pages and a header page a block): adaptive compression
 * stores nothing raw, says why, and the image is written where a fixed
 * codec's is. Storing raw there filled the area and failed the cycle. */
static void adaptive_keeps_to_the_area(void **state)
{
	uint64_t bytes;

	(void)state;
	if (!io_uring_available())
		skip();
	assert_int_equal(adaptive_cycle(false, HIB_IO_AUTO, 1500, &bytes), 0);
	assert_true(adaptive_off_for_room);
	assert_true(bytes < 1500 * 4096ull);
}

int main(void)
{
	static const struct cycle_case cases[] = {
		{ HIB_COMPRESS_NONE, 1, 300, 0 }, { HIB_COMPRESS_LZ4, 1, 1000, 0 },
		{ HIB_COMPRESS_LZ4, 4, 3000, 7 }, { HIB_COMPRESS_ZSTD, 3, 2000, 0 },
		{ HIB_COMPRESS_LZ4, 2, 64, 2 }, /* exactly one block, every other page free */
		{ HIB_COMPRESS_LZ4, 2, 65, 0 }, /* one block and a page */
	};
	enum { N = sizeof(cases) / sizeof(cases[0]) };
	struct CMUnitTest tests[2 * N + 3];
	size_t n = 0;

	for (size_t i = 0; i < N; i++)
		tests[n++] =
			(struct CMUnitTest)cmocka_unit_test_prestate(test_cycle, (void *)&cases[i]);
	for (size_t i = 0; i < N; i++)
		tests[n++] = (struct CMUnitTest)cmocka_unit_test_prestate(test_cycle_sync_io,
									  (void *)&cases[i]);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(adaptive_stores_raw_while_the_disk_waits);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(adaptive_off_with_sync_io);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(adaptive_keeps_to_the_area);
	quiet_logs();
	return _cmocka_run_group_tests("tests", tests, n, NULL, NULL);
}
