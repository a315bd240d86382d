// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hib_initrd_scan on initramfs files built here: an early uncompressed cpio
 * and a main archive in zstd or lz4's legacy frame, with and without the
 * words; words across the edges of the buffers; compressions not looked into;
 * a cut zstd frame, a corrupt cpio and an empty file said, not crashed on.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "frontend/initrd.h"
#include "helpers.h"
#include "initrd-build.h"
#include "util/util.h"

static const char hook[] = "#!/bin/sh\n# local-premount\n/usr/sbin/hibernate resume \"$@\"\n";
static const char other[] = "#!/bin/sh\n/sbin/hibernate config location\n";

static char path[PATH_MAX];

static int setup(void **state)
{
	(void)state;
	close(make_temp(path, "initrd"));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

/* The early archive: microcode, which never holds the words. */
static void early(struct tbuf *b)
{
	char ucode[3000];

	memset(ucode, 0xA5, sizeof(ucode));
	cpio_archive(b, "kernel/x86/microcode/GenuineIntel.bin", ucode, sizeof(ucode));
}

static void main_archive(struct tbuf *m, const char *script)
{
	char filler[20000];

	for (size_t i = 0; i < sizeof(filler); i++)
		filler[i] = (char)('a' + i % 23);
	cpio_entry(m, "usr/lib/modules/filler", filler, sizeof(filler));
	cpio_archive(m, "scripts/local-premount/hibernate", script, strlen(script));
}

static int scan(struct hib_initrd_scan *sc, struct hib_error *err)
{
	return hib_initrd_scan(path, "hibernate resume", sc, err);
}

static void zstd_main_with_hook_found(void **state)
{
	struct tbuf b = { 0 }, m = { 0 };
	struct hib_initrd_scan sc;
	struct hib_error err;

	(void)state;
	early(&b);
	main_archive(&m, hook);
	zstd_append(&b, &m);
	tb_write(&b, path);
	assert_int_equal(scan(&sc, &err), 0);
	assert_int_equal(sc.result, HIB_INITRD_FOUND);
	assert_string_equal(sc.codec, "zstd");
	assert_int_equal(sc.archive, 1);
	free(b.p);
	free(m.p);
}

static void zstd_main_without_hook_absent(void **state)
{
	struct tbuf b = { 0 }, m = { 0 };
	struct hib_initrd_scan sc;
	struct hib_error err;

	(void)state;
	early(&b);
	main_archive(&m, other);
	zstd_append(&b, &m);
	tb_write(&b, path);
	assert_int_equal(scan(&sc, &err), 0);
	assert_int_equal(sc.result, HIB_INITRD_ABSENT);
	assert_int_equal(sc.archives, 2);
	free(b.p);
	free(m.p);
}

/* pzstd writes a skippable frame before each frame: passed over. */
static void zstd_skippable_frame_passed_over(void **state)
{
	struct tbuf b = { 0 }, m = { 0 };
	struct hib_initrd_scan sc;
	struct hib_error err;

	(void)state;
	early(&b);
	le32_put(&b, 0x184D2A50u);
	le32_put(&b, 4);
	le32_put(&b, 12345);
	main_archive(&m, hook);
	zstd_append(&b, &m);
	tb_write(&b, path);
	assert_int_equal(scan(&sc, &err), 0);
	assert_int_equal(sc.result, HIB_INITRD_FOUND);
	assert_string_equal(sc.codec, "zstd");
	free(b.p);
	free(m.p);
}

/* The words across the zstd output buffer's edge, at every split: the
 * decompressed bytes around them random, so the input's edges move too. */
static void words_across_zstd_buffers(void **state)
{
	const size_t nl = strlen("hibernate resume");

	(void)state;
	srand(7);
	for (size_t k = 1; k <= 3; k++)
		for (size_t split = 1; split < nl; split++) {
			struct tbuf b = { 0 }, m = { 0 };
			struct hib_initrd_scan sc;
			struct hib_error err;
			size_t at = k * HIB_INITRD_BUF - split, len = at + 4096;
			char *data = malloc(len);
			/* 110-byte header + "f\0" padded to 4: the data starts at 112. */
			size_t off = at - 112;

			for (size_t i = 0; i < len; i++)
				data[i] = (char)(i % 3 ? rand() : 'z');
			memcpy(data + off, "hibernate resume", nl);
			cpio_archive(&m, "f", data, len);
			zstd_append(&b, &m);
			tb_write(&b, path);
			assert_int_equal(scan(&sc, &err), 0);
			assert_int_equal(sc.result, HIB_INITRD_FOUND);
			free(data);
			free(b.p);
			free(m.p);
		}
}

/* lz4 -l, with blocks far smaller than the words: each block's output adds
 * to what the search keeps from the ones before. */
static void lz4_legacy_found_and_absent(void **state)
{
	static const size_t blocks[] = { 5, 4096, 8u << 20 };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(blocks); i++)
		for (int with = 0; with < 2; with++) {
			struct tbuf b = { 0 }, m = { 0 };
			struct hib_initrd_scan sc;
			struct hib_error err;

			early(&b);
			main_archive(&m, with ? hook : other);
			lz4_legacy_append(&b, &m, blocks[i]);
			tb_write(&b, path);
			assert_int_equal(scan(&sc, &err), 0);
			assert_int_equal(sc.result, with ? HIB_INITRD_FOUND : HIB_INITRD_ABSENT);
			if (with)
				assert_string_equal(sc.codec, "lz4");
			free(b.p);
			free(m.p);
		}
}

/* COMPRESS=none: the words in an uncompressed archive. */
static void uncompressed_found(void **state)
{
	struct tbuf b = { 0 };
	struct hib_initrd_scan sc;
	struct hib_error err;

	(void)state;
	early(&b);
	main_archive(&b, hook);
	tb_write(&b, path);
	assert_int_equal(scan(&sc, &err), 0);
	assert_int_equal(sc.result, HIB_INITRD_FOUND);
	assert_string_equal(sc.codec, "none");
	assert_int_equal(sc.archive, 1);
	free(b.p);
}

/* gzip and the others are not linked: named, never "absent". */
static void gzip_not_looked_into(void **state)
{
	static const struct {
		const char *magic, *name;
		size_t len;
	} c[] = { { "\x1f\x8b\x08\x00", "gzip", 4 },
		  { "\xfd"
		    "7zXZ\0",
		    "xz", 6 },
		  { "\x5d\0\0\x80", "lzma", 4 },
		  { "BZh9", "bzip2", 4 },
		  { "\x89LZO", "lzo", 4 },
		  { "\x7f"
		    "ELF",
		    "unknown", 4 } };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
		struct tbuf b = { 0 };
		struct hib_initrd_scan sc;
		struct hib_error err;

		early(&b);
		tb_put(&b, c[i].magic, c[i].len);
		tb_put(&b, "junk-junk-junk", 14);
		tb_write(&b, path);
		assert_int_equal(scan(&sc, &err), 0);
		assert_int_equal(sc.result, HIB_INITRD_UNREAD);
		assert_string_equal(sc.codec, c[i].name);
		assert_int_equal(sc.archive, 1);
		assert_int_equal(sc.offset, 3584);
		free(b.p);
	}
}

/* A zstd frame cut in the middle: an error that says so, no crash. */
static void truncated_zstd_said(void **state)
{
	struct tbuf b = { 0 }, m = { 0 };
	struct hib_initrd_scan sc;
	struct hib_error err;

	(void)state;
	early(&b);
	main_archive(&m, other);
	zstd_append(&b, &m);
	b.n -= 40;
	tb_write(&b, path);
	assert_int_equal(scan(&sc, &err), -EBADMSG);
	assert_non_null(strstr(err.msg, "cut short"));
	assert_non_null(strstr(err.msg, path));
	/* Corrupt rather than cut (the frame header's reserved bit): zstd's
	 * own reason. */
	b.n += 40;
	b.p[3584 + 4] |= 0x08;
	tb_write(&b, path);
	assert_int_equal(scan(&sc, &err), -EBADMSG);
	assert_non_null(strstr(err.msg, "zstd"));
	free(b.p);
	free(m.p);
}

static void corrupt_cpio_and_empty_file_said(void **state)
{
	struct tbuf b = { 0 };
	struct hib_initrd_scan sc;
	struct hib_error err;

	(void)state;
	early(&b);
	memcpy(b.p + 94, "zzzzzzzz", 8); /* c_namesize */
	tb_write(&b, path);
	assert_int_equal(scan(&sc, &err), -EBADMSG);
	assert_non_null(strstr(err.msg, "cpio"));
	/* A size past the end of the file. */
	b.n = 0;
	early(&b);
	memcpy(b.p + 54, "7FFFFFFF", 8); /* c_filesize */
	tb_write(&b, path);
	assert_int_equal(scan(&sc, &err), -EBADMSG);
	b.n = 0;
	tb_write(&b, path);
	assert_int_equal(scan(&sc, &err), -ENODATA);
	assert_int_equal(hib_initrd_scan("/nonexistent/initrd", "x", &sc, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "/nonexistent/initrd"));
	free(b.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(zstd_main_with_hook_found, setup, teardown),
		cmocka_unit_test_setup_teardown(zstd_main_without_hook_absent, setup, teardown),
		cmocka_unit_test_setup_teardown(zstd_skippable_frame_passed_over, setup, teardown),
		cmocka_unit_test_setup_teardown(words_across_zstd_buffers, setup, teardown),
		cmocka_unit_test_setup_teardown(lz4_legacy_found_and_absent, setup, teardown),
		cmocka_unit_test_setup_teardown(uncompressed_found, setup, teardown),
		cmocka_unit_test_setup_teardown(gzip_not_looked_into, setup, teardown),
		cmocka_unit_test_setup_teardown(truncated_zstd_said, setup, teardown),
		cmocka_unit_test_setup_teardown(corrupt_cpio_and_empty_file_said, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
