// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The snapshot device in batches: read_pages and write_pages move up to a
 * block's pages in one call, as readv()/writev() of one-page segments do on
 * the kernel's /dev/snapshot (fs/read_write.c, do_loop_readv_writev). The
 * fake's loop is the kernel's: a batch stops at the end of the stream or at
 * a page that fails, drops that page's error when pages moved before it, and
 * the next call meets it. These tests hold the engine to it: a cycle moves
 * the stream in one call a block, and an error in the middle of a batch
 * comes out as itself (a short batch taken for the end would come out as the
 * stream's wrong length, -EIO), on both sides.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "helpers.h"
#include "snapshot/snapshot.h"

#define SEED 28
#define STREAM 600     /* pages: 9 blocks of 64 and one of 24 */
#define BLOCK_PAGES 64 /* the default block, 256 KiB */
#define NR_BLOCKS 10
#define ODD_ERRNO ENXIO /* an errno nothing but the fake's failure gives */

static uint8_t buf[HIB_SNAP_BATCH_PAGES + 1][TEST_PAGE];

static struct hib_snapshot *fake_ready(struct hib_fake_params *fp)
{
	struct hib_snapshot *s = NULL;
	int in_suspend = 0;

	assert_int_equal(hib_snapshot_fake_new(fp, HIB_SNAP_HIBERNATE, &s), 0);
	assert_int_equal(s->ops->freeze(s), 0);
	assert_int_equal(s->ops->create_image(s, &in_suspend), 0);
	assert_int_equal(in_suspend, 1);
	return s;
}

/* The fake's readv: whole batches, a short one at the end, then 0. */
static void fake_read_batches_to_the_end(void **state)
{
	struct hib_fake_params fp = fake_params(SEED, 100, 200, 0);
	struct hib_snapshot *s = fake_ready(&fp);
	uint8_t one[TEST_PAGE];

	(void)state;
	assert_int_equal(s->ops->read_pages(s, buf, 64), 64 * TEST_PAGE);
	assert_int_equal(s->ops->read_pages(s, buf[64], 64), 36 * TEST_PAGE);
	assert_int_equal(s->ops->read_pages(s, buf, 64), 0);
	assert_int_equal(hib_snapshot_fake_calls(s), 3);
	hib_snapshot_close(s);

	/* The same pages as one page a call. */
	s = fake_ready(&fp);
	for (unsigned i = 0; i < 100; i++) {
		assert_int_equal(s->ops->read_pages(s, one, 1), TEST_PAGE);
		assert_memory_equal(one, buf[i], TEST_PAGE);
	}
	assert_int_equal(s->ops->read_pages(s, one, 1), 0);
	/* More segments than one readv() takes. */
	assert_int_equal(s->ops->read_pages(s, buf, HIB_SNAP_BATCH_PAGES + 1), -EINVAL);
	hib_snapshot_close(s);
}

/* An error after moved pages is dropped, and the next call gets it. */
static void fake_read_error_mid_batch(void **state)
{
	struct hib_fake_params fp = fake_params(SEED, 100, 200, 0);
	struct hib_snapshot *s;

	(void)state;
	fp.fail_read_at = 10;
	fp.fail_errno = ODD_ERRNO;
	s = fake_ready(&fp);
	assert_int_equal(s->ops->read_pages(s, buf, 64), 10 * TEST_PAGE);
	assert_int_equal(s->ops->read_pages(s, buf[10], 54), -ODD_ERRNO);
	assert_int_equal(s->ops->read_pages(s, buf[10], 54), -ODD_ERRNO);
	hib_snapshot_close(s);
}

/* The fake's writev in resume: checked page by page, stops at the failing
 * page and at the end (0), like the kernel's snapshot_write. */
static void fake_write_batches(void **state)
{
	struct hib_fake_params fp = fake_params(SEED, 100, 200, 0);
	struct hib_snapshot *s = fake_ready(&fp);
	uint64_t ok = 0;
	bool complete = false, restored = false;

	(void)state;
	assert_int_equal(s->ops->read_pages(s, buf, 100), 100 * TEST_PAGE);
	hib_snapshot_close(s);

	fp.fail_write_at = 70;
	fp.fail_errno = ODD_ERRNO;
	assert_int_equal(hib_snapshot_fake_new(&fp, HIB_SNAP_RESUME, &s), 0);
	assert_int_equal(s->ops->write_pages(s, buf, 64), 64 * TEST_PAGE);
	assert_int_equal(s->ops->write_pages(s, buf[64], 36), 6 * TEST_PAGE);
	assert_int_equal(s->ops->write_pages(s, buf[70], 30), -ODD_ERRNO);
	hib_snapshot_fake_result(s, &ok, NULL, NULL, NULL);
	assert_int_equal(ok, 70);
	hib_snapshot_close(s);

	fp.fail_write_at = -1;
	assert_int_equal(hib_snapshot_fake_new(&fp, HIB_SNAP_RESUME, &s), 0);
	assert_int_equal(s->ops->freeze(s), 0);
	assert_int_equal(s->ops->write_pages(s, buf, 64), 64 * TEST_PAGE);
	/* Past the end: the pages the stream holds, then 0. */
	assert_int_equal(s->ops->write_pages(s, buf[64], 37), 36 * TEST_PAGE);
	assert_int_equal(s->ops->write_pages(s, buf[100], 1), 0);
	assert_int_equal(s->ops->atomic_restore(s), 0);
	hib_snapshot_fake_result(s, &ok, &complete, &restored, NULL);
	assert_int_equal(ok, 100);
	assert_true(complete);
	assert_true(restored);
	hib_snapshot_close(s);
}

/* Hibernate through the fake made from @fp into @path; the fake's calls. */
static int suspend_counting(const char *path, const struct hib_fake_params *fp, unsigned threads,
			    uint64_t *ret_calls)
{
	struct hib_target *t = NULL;
	struct hib_snapshot *snap = NULL;
	struct hib_options o;
	enum hib_suspend_outcome outcome = 0;
	int r;

	hib_options_init(&o);
	o.threads = threads;
	o.powerdown = HIB_POWERDOWN_NONE;
	assert_int_equal(hib_target_open(path, 0, true, &t), 0);
	assert_int_equal(hib_snapshot_fake_new(fp, HIB_SNAP_HIBERNATE, &snap), 0);
	r = hib_suspend(t, snap, &o, &outcome, NULL);
	r = cycle_result(r, outcome); /* after the call: it sets outcome */
	*ret_calls = hib_snapshot_fake_calls(snap);
	hib_snapshot_close(snap);
	hib_target_close(t);
	return r;
}

/* Resume @path into the fake made from @fp; the fake's result and calls. */
static struct resume_result resume_counting(const char *path, const struct hib_fake_params *fp,
					    uint64_t *ret_calls)
{
	struct resume_result res;
	struct hib_target *t = NULL;
	struct hib_snapshot *snap = NULL;
	struct hib_options o;
	enum hib_resume_outcome outcome = 0;

	hib_options_init(&o);
	o.threads = 2;
	o.powerdown = HIB_POWERDOWN_NONE;
	assert_int_equal(hib_target_open(path, 0, true, &t), 0);
	assert_int_equal(hib_snapshot_fake_new(fp, HIB_SNAP_RESUME, &snap), 0);
	res.r = hib_resume(t, snap, &o, &outcome, NULL);
	res.r = cycle_result(res.r, outcome);
	hib_snapshot_fake_result(snap, &res.pages_ok, &res.complete, &res.restored, &res.frozen);
	*ret_calls = hib_snapshot_fake_calls(snap);
	hib_snapshot_close(snap);
	hib_target_close(t);
	return res;
}

/* One call a block both ways (and one to find the end), byte for byte. */
static void cycle_moves_the_stream_in_batches(void **state)
{
	struct hib_fake_params fp = fake_params(SEED, STREAM, STREAM * 2 + 64, 3);
	struct resume_result res;
	char path[PATH_MAX];
	uint64_t calls = 0;

	(void)state;
	make_swap_path(path, "batch", fp.swap_pages);
	assert_int_equal(suspend_counting(path, &fp, 2, &calls), HIB_SUSPEND_WRITTEN);
	/* 9 full blocks, the short last one, and the 0 after it. */
	assert_int_equal(calls, NR_BLOCKS + 1);
	res = resume_counting(path, &fp, &calls);
	assert_int_equal(res.r, HIB_RESUME_RESTORED);
	assert_true(res.complete);
	assert_int_equal(res.pages_ok, STREAM);
	/* One call a block, and the final write that must see 0. */
	assert_int_equal(calls, NR_BLOCKS + 1);
	unlink(path);
}

struct batch_fail_case {
	const char *name;
	int64_t at;
	unsigned threads;
};

static const struct batch_fail_case read_cases[] = {
	{ "suspend_read_error_mid_batch_keeps_its_errno", 300, 1 },
	{ "suspend_read_error_mid_batch_keeps_its_errno_4_threads", 300, 4 },
	{ "suspend_read_error_batch_start_keeps_its_errno", 4 * BLOCK_PAGES, 2 },
	{ "suspend_read_error_in_short_last_batch_keeps_its_errno", STREAM - 1, 2 },
};

static void suspend_read_error_in_batch(void **state)
{
	const struct batch_fail_case *c = *state;
	struct hib_fake_params fp = fake_params(SEED + 1, STREAM, STREAM * 2 + 64, 0);
	char path[PATH_MAX];
	uint64_t calls = 0;

	fp.fail_read_at = c->at;
	fp.fail_errno = ODD_ERRNO;
	make_swap_path(path, "batchrd", fp.swap_pages);
	assert_int_equal(suspend_counting(path, &fp, c->threads, &calls), -ODD_ERRNO);
	unlink(path);
}

static const struct batch_fail_case write_cases[] = {
	{ "resume_write_error_mid_batch_keeps_its_errno", BLOCK_PAGES + 6, 2 },
	{ "resume_write_error_batch_start_keeps_its_errno", 2 * BLOCK_PAGES, 2 },
	{ "resume_write_error_in_short_last_batch_keeps_its_errno", STREAM - 1, 2 },
};

static void resume_write_error_in_batch(void **state)
{
	const struct batch_fail_case *c = *state;
	struct hib_fake_params fp = fake_params(SEED + 2, STREAM, STREAM * 2 + 64, 0);
	struct resume_result res;
	char path[PATH_MAX];
	uint64_t calls = 0;

	make_swap_path(path, "batchwr", fp.swap_pages);
	assert_int_equal(suspend_counting(path, &fp, 2, &calls), HIB_SUSPEND_WRITTEN);
	fp.fail_write_at = c->at;
	fp.fail_errno = ODD_ERRNO;
	res = resume_counting(path, &fp, &calls);
	assert_int_equal(res.r, -ODD_ERRNO);
	assert_int_equal(res.pages_ok, (uint64_t)c->at);
	assert_false(res.restored);
	assert_false(res.frozen);
	unlink(path);
}

/* The file-backed device: a batch is one pread, short at the end. */
static void file_device_batches(void **state)
{
	struct hib_fake_params fp = fake_params(SEED, 100, 200, 0);
	struct hib_snapshot *f = fake_ready(&fp);
	struct hib_snapshot *s = NULL;
	char path[PATH_MAX];
	int fd, in_suspend = 0;

	(void)state;
	assert_int_equal(f->ops->read_pages(f, buf, 100), 100 * TEST_PAGE);
	hib_snapshot_close(f);
	fd = make_temp(path, "stream");
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, 100 * TEST_PAGE), 100 * TEST_PAGE);
	close(fd);
	assert_int_equal(hib_snapshot_file_new(path, HIB_SNAP_HIBERNATE, 200, 0, &s), 0);
	assert_int_equal(s->ops->freeze(s), 0);
	assert_int_equal(s->ops->create_image(s, &in_suspend), 0);
	assert_int_equal(s->ops->read_pages(s, buf[200], 64), 64 * TEST_PAGE);
	assert_int_equal(s->ops->read_pages(s, buf[264], 64), 36 * TEST_PAGE);
	assert_int_equal(s->ops->read_pages(s, buf[300], 64), 0);
	assert_memory_equal(buf[200], buf[0], 100 * TEST_PAGE);
	hib_snapshot_close(s);

	assert_int_equal(hib_snapshot_file_new(NULL, HIB_SNAP_RESUME, 0, 100 * TEST_PAGE, &s), 0);
	assert_int_equal(s->ops->write_pages(s, buf, 64), 64 * TEST_PAGE);
	assert_int_equal(s->ops->write_pages(s, buf[64], 64), 36 * TEST_PAGE);
	assert_int_equal(s->ops->write_pages(s, buf[100], 1), 0);
	hib_snapshot_close(s);
	unlink(path);
}

#define NAMED(fn)                                                                                  \
	{                                                                                          \
		.name = #fn, .test_func = fn                                                       \
	}
#define CASE(arr, i, fn)                                                                           \
	{                                                                                          \
		.name = arr[i].name, .test_func = fn, .initial_state = (void *)&arr[i]             \
	}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		NAMED(fake_read_batches_to_the_end),
		NAMED(fake_read_error_mid_batch),
		NAMED(fake_write_batches),
		NAMED(cycle_moves_the_stream_in_batches),
		CASE(read_cases, 0, suspend_read_error_in_batch),
		CASE(read_cases, 1, suspend_read_error_in_batch),
		CASE(read_cases, 2, suspend_read_error_in_batch),
		CASE(read_cases, 3, suspend_read_error_in_batch),
		CASE(write_cases, 0, resume_write_error_in_batch),
		CASE(write_cases, 1, resume_write_error_in_batch),
		CASE(write_cases, 2, resume_write_error_in_batch),
		NAMED(file_device_batches),
	};

	quiet_logs();
	return cmocka_run_group_tests_name("snapshot", tests, NULL, NULL);
}
