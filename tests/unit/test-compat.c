// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Images written by earlier versions still resume. tests/unit/images/format2-*
 * are images of format version 2 written through the fake snapshot device by
 * the code of commit 446faea (they were its fuzz seeds raw-tiny-*, without the
 * fuzzer's two mode bytes); they are fixtures, never regenerated. Each is
 * resumed here by today's library into a fake that compares every byte it is
 * given with the stream it would have produced. A change to the on-disk
 * format, or to how it is read, fails here before it strands a user's image.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "format/format.h"
#include "helpers.h"

#ifndef HIB_SOURCE_ROOT
#define HIB_SOURCE_ROOT "."
#endif

/* Their stream: the fake's seed 11, 15 pages, in a 48-page area (fuzz-image.h's
 * base "tiny-lz4"); the encrypted one is sealed with the fuzzers' key file. */
#define SEED_STREAM 11
#define SEED_PAGES 15
#define SEED_AREA 48
#define SEED_KEYFILE "fuzz key file: a fixture, not a secret\n"

static int ask_keyfile(int attempt, const char *what, struct hib_secret *ret, void *ud)
{
	(void)attempt;
	(void)what;
	(void)ud;
	ret->kind = HIB_SECRET_KEYFILE;
	ret->data = SEED_KEYFILE;
	ret->len = sizeof(SEED_KEYFILE) - 1;
	return 0;
}

/* The image, zero-padded to the area it was written in. */
static void seed_to_area(const char *seed, char *path)
{
	char src[PATH_MAX];
	uint8_t *buf = calloc(SEED_AREA, HIB_PAGE_SIZE);
	FILE *f;
	size_t n;
	int fd;

	assert_non_null(buf);
	snprintf(src, sizeof(src), "%s/tests/unit/images/%s.img", HIB_SOURCE_ROOT, seed);
	f = fopen(src, "re");
	assert_non_null(f);
	n = fread(buf, 1, (size_t)SEED_AREA * HIB_PAGE_SIZE, f);
	fclose(f);
	assert_true(n > HIB_PAGE_SIZE);
	fd = make_temp(path, "compat");
	assert_int_equal(write(fd, buf, (size_t)SEED_AREA * HIB_PAGE_SIZE),
			 (ssize_t)SEED_AREA * HIB_PAGE_SIZE);
	close(fd);
	free(buf);
}

static void resume_seed(const char *seed, bool encrypted)
{
	struct hib_fake_params fp = fake_params(SEED_STREAM, SEED_PAGES, SEED_AREA, 0);
	struct hib_target *t = NULL;
	struct hib_snapshot *snap = NULL;
	struct hib_image_info info;
	struct hib_options o;
	enum hib_resume_outcome outcome = 0;
	char path[PATH_MAX];
	uint64_t pages_ok = 0;
	bool complete = false, restored = false, frozen = true;
	enum hib_sig_state st;

	seed_to_area(seed, path);
	assert_int_equal(hib_target_open(path, 0, true, &t), 0);
	assert_int_equal(hib_image_info(t, &info), 0);
	assert_int_equal(info.state, HIB_SIG_IMAGE);
	assert_true(info.header_valid);
	assert_int_equal(info.stream_bytes, (uint64_t)SEED_PAGES * HIB_PAGE_SIZE);

	hib_options_init(&o);
	o.threads = 2;
	if (encrypted)
		o.ask_secret = ask_keyfile;
	assert_int_equal(hib_snapshot_fake_new(&fp, HIB_SNAP_RESUME, &snap), 0);
	assert_int_equal(hib_resume(t, snap, &o, &outcome, NULL), 0);
	assert_int_equal(outcome, HIB_RESUME_RESTORED);
	hib_snapshot_fake_result(snap, &pages_ok, &complete, &restored, &frozen);
	assert_true(complete);
	assert_true(restored);
	assert_int_equal(pages_ok, SEED_PAGES);
	/* Resumed once: the area is plain swap again. */
	assert_int_equal(hib_target_probe(t, &st), 0);
	assert_int_equal(st, HIB_SIG_SWAP);
	hib_snapshot_close(snap);
	hib_target_close(t);
	unlink(path);
}

static void old_lz4_image_resumes(void **state)
{
	(void)state;
	resume_seed("format2-lz4", false);
}

static void old_raw_image_resumes(void **state)
{
	(void)state;
	resume_seed("format2-none", false);
}

static void old_encrypted_zstd_image_resumes(void **state)
{
	(void)state;
	resume_seed("format2-zstd-encrypted", true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(old_lz4_image_resumes),
		cmocka_unit_test(old_raw_image_resumes),
		cmocka_unit_test(old_encrypted_zstd_image_resumes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
