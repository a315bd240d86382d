// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Targets: opening what a spec names (and refusing what it must not),
 * reading what page 0 holds, and knowing whether the area is active swap.
 * Only regular files here; tests/unit/test-engine.c runs a loop device.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "format/format.h"
#include "helpers.h"
#include "storage/target.h"

#define PAGES 64

struct fx {
	char path[PATH_MAX];
	char dir[PATH_MAX + 8];
	char swaps[PATH_MAX];
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	make_swap_path(f->path, "target", PAGES);
	snprintf(f->dir, sizeof(f->dir), "%s.d", f->path);
	if (mkdir(f->dir, 0700) < 0)
		return -1;
	close(make_temp(f->swaps, "swaps"));
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	char link[PATH_MAX + 32];

	/* What the cases put in the directory, should one have stopped early. */
	snprintf(link, sizeof(link), "%s/alias", f->dir);
	unlink(link);
	snprintf(link, sizeof(link), "%s/my swap", f->dir);
	unlink(link);
	unlink(f->path);
	rmdir(f->dir);
	unlink(f->swaps);
	free(f);
	return 0;
}

static void open_regular_file(void **state)
{
	struct fx *f = *state;
	struct hib_target *t = NULL;
	struct stat st;

	assert_int_equal(hib_target_open(f->path, 0, true, &t), 0);
	assert_string_equal(hib_target_path(t), f->path);
	assert_int_equal(hib_target_devnum(t), 0);
	assert_int_equal(hib_target_offset_pages(t), 0);
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(hib_target_size(t), (uint64_t)st.st_size);
	assert_int_equal(hib_target_size(t), PAGES * TEST_PAGE);
	/* Opened as it is (a disk image), not mapped through a filesystem. */
	assert_int_equal(hib_target_kind(t), HIB_TARGET_DEVICE);
	assert_null(hib_target_file(t));
	hib_target_close(t);

	/* Read-only, and the last page that can hold a header. */
	assert_int_equal(hib_target_open(f->path, PAGES - 1, false, &t), 0);
	assert_int_equal(hib_target_offset_pages(t), PAGES - 1);
	hib_target_close(t);
	/* A relative path is a path too. */
	{
		char rel[PATH_MAX + 8], cwd[PATH_MAX];

		const char *slash = strrchr(f->path, '/');

		assert_non_null(getcwd(cwd, sizeof(cwd)));
		assert_int_equal(chdir(f->dir), 0);
		snprintf(rel, sizeof(rel), "../%s", slash + 1);
		assert_int_equal(hib_target_open(rel, 0, false, &t), 0);
		hib_target_close(t);
		assert_int_equal(chdir(cwd), 0);
	}
}

static void open_closep_clears(void **state)
{
	struct fx *f = *state;
	struct hib_target *t = NULL;

	assert_int_equal(hib_target_open(f->path, 0, false, &t), 0);
	hib_target_closep(&t);
	assert_null(t);
	hib_target_closep(&t); /* and again: nothing left to close */
	hib_target_close(NULL);
}

struct spec_case {
	const char *name;
	const char *spec; /* "@file", "@dir": the fixture's */
	uint64_t offset;
	int want;
};

static const struct spec_case spec_cases[] = {
    {"open_missing_path_is_enoent", "/nonexistent/hib-test/swap", 0, -ENOENT},
    {"open_directory_is_enodev", "@dir", 0, -ENODEV},
    {"open_char_device_is_enodev", "/dev/null", 0, -ENODEV},
    {"open_garbage_is_einval", "garbage", 0, -EINVAL},
    {"open_empty_spec_is_einval", "", 0, -EINVAL},
    {"open_empty_uuid_is_einval", "UUID=", 0, -EINVAL},
    {"open_empty_label_is_einval", "LABEL=", 0, -EINVAL},
    {"open_bad_devnum_is_einval", "8:x", 0, -EINVAL},
    {"open_devnum_with_tail_is_einval", "8:1x", 0, -EINVAL},
    {"open_hex_devnum_with_tail_is_einval", "801x", 0, -EINVAL},
    {"open_hex_devnum_too_long_is_einval", "123456789", 0, -EINVAL},
    {"open_hex_devnum_of_no_device_is_enoent", "fff00", 0, -ENOENT},
    {"open_unknown_partuuid_is_enoent", "PARTUUID=0BADC0DE-0000-4000-8000-000000000000", 0, -ENOENT},
    {"open_offset_at_end_is_erange", "@file", PAGES, -ERANGE},
    {"open_offset_far_beyond_end_is_erange", "@file", 1u << 30, -ERANGE},
    {"open_offset_overflowing_bytes_is_erange", "@file", UINT64_MAX / 4096, -ERANGE},
    {"open_offset_max_is_erange", "@file", UINT64_MAX, -ERANGE},
};

static void open_spec(void **state)
{
	const struct spec_case *c = *state;
	struct fx f0;
	struct fx *f = &f0;
	struct hib_target *t = (struct hib_target *)0x1;
	const char *spec = c->spec;

	assert_int_equal(fx_setup((void **)&f), 0);
	if (strcmp(spec, "@file") == 0)
		spec = f->path;
	else if (strcmp(spec, "@dir") == 0)
		spec = f->dir;
	assert_int_equal(hib_target_open(spec, c->offset, true, &t), c->want);
	assert_ptr_equal(t, (struct hib_target *)0x1); /* ret written only on success */
	fx_teardown((void **)&f);
}

/* ---- what page 0 holds ------------------------------------------------- */

static void set_page0(const char *path, const uint8_t *page)
{
	pwrite_at(path, 0, page, TEST_PAGE);
}

static enum hib_sig_state probe(const char *path, uint64_t offset)
{
	struct hib_target *t = NULL;
	enum hib_sig_state st = (enum hib_sig_state)0;

	assert_int_equal(hib_target_open(path, offset, false, &t), 0);
	assert_int_equal(hib_target_probe(t, &st), 0);
	hib_target_close(t);
	return st;
}

static void swap_header_page(uint8_t *page)
{
	char path[PATH_MAX];

	make_swap_path(path, "hdr", 2);
	read_page0(path, page);
	unlink(path);
}

static void probe_swapspace2_is_swap(void **state)
{
	struct fx *f = *state;

	assert_int_equal(probe(f->path, 0), HIB_SIG_SWAP);
}

static void probe_kernel_images(void **state)
{
	static const char *const sigs[] = {"S1SUSPEND", "ULSUSPEND", "LINHIB0001"};
	struct fx *f = *state;
	uint8_t page[TEST_PAGE];

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		/* What the kernel writes: its header at the end, SWAPSPACE2 kept as orig_sig. */
		swap_header_page(page);
		memset(page + TEST_PAGE - 20, 0, 20);
		memcpy(page + TEST_PAGE - 20, HIB_SWAP_SIG, 10);
		memcpy(page + TEST_PAGE - 10, sigs[i], strlen(sigs[i]));
		set_page0(f->path, page);
		if (probe(f->path, 0) != HIB_SIG_KERNEL)
			fail_msg("%s: not seen as another program's image", sigs[i]);
	}
}

static void probe_foreign_pages(void **state)
{
	struct fx *f = *state;
	uint8_t page[TEST_PAGE];
	uint16_t magic = 0xef53;

	/* All zeros. */
	memset(page, 0, sizeof(page));
	set_page0(f->path, page);
	assert_int_equal(probe(f->path, 0), HIB_SIG_FOREIGN);
	/* An ext4 superblock at 1024 (magic 0xEF53 at 0x38 in it). */
	memset(page, 0, sizeof(page));
	memcpy(page + 1024 + 0x38, &magic, 2);
	memcpy(page + 1024 + 0x78, "rootfs", 6); /* volume name */
	memset(page + 2048, 0xff, 512);
	set_page0(f->path, page);
	assert_int_equal(probe(f->path, 0), HIB_SIG_FOREIGN);
	/* The old v0 swap signature is not a usable area for us. */
	memset(page, 0, sizeof(page));
	memcpy(page + TEST_PAGE - 10, "SWAP-SPACE", 10);
	set_page0(f->path, page);
	assert_int_equal(probe(f->path, 0), HIB_SIG_FOREIGN);
	/* SWAPSPACE2 anywhere but the end does not count. */
	swap_header_page(page);
	memmove(page + TEST_PAGE - 20, page + TEST_PAGE - 10, 10);
	memset(page + TEST_PAGE - 10, 0, 10);
	set_page0(f->path, page);
	assert_int_equal(probe(f->path, 0), HIB_SIG_FOREIGN);
}

/* A prepared image file's free state (hibernate prepare-file). */
static void probe_image_file_signature(void **state)
{
	struct fx *f = *state;
	uint8_t page[TEST_PAGE];

	memset(page, 0, sizeof(page));
	memcpy(page + TEST_PAGE - HIB_SIG_LEN, HIB_FILE_SIG, HIB_SIG_LEN);
	set_page0(f->path, page);
	assert_int_equal(probe(f->path, 0), HIB_SIG_FILE);
}

static void make_our_page(uint8_t *page)
{
	struct hib_sig_tail tail;

	swap_header_page(page);
	memset(&tail, 0, sizeof(tail));
	memcpy(tail.magic, HIB_TAIL_MAGIC, 16);
	tail.version = HIB_FORMAT_VERSION;
	tail.page_size = HIB_PAGE_SIZE;
	tail.header_offset = 7 * HIB_PAGE_SIZE;
	tail.image_id = 42;
	memcpy(tail.orig_sig, HIB_SWAP_SIG, HIB_SIG_LEN);
	memcpy(tail.sig, HIB_IMAGE_SIG, HIB_SIG_LEN);
	hib_tail_seal(&tail);
	memcpy(page + TEST_PAGE - HIB_SIG_TAIL_SIZE, &tail, sizeof(tail));
}

static void probe_our_image_and_broken_one(void **state)
{
	struct fx *f = *state;
	uint8_t page[TEST_PAGE];

	make_our_page(page);
	set_page0(f->path, page);
	assert_int_equal(probe(f->path, 0), HIB_SIG_IMAGE);
	page[TEST_PAGE - HIB_SIG_TAIL_SIZE + 40] ^= 1; /* inside the sealed fields */
	set_page0(f->path, page);
	assert_int_equal(probe(f->path, 0), HIB_SIG_BROKEN);
	/* A flipped byte in the magic or in the signature is still our image, damaged. */
	make_our_page(page);
	page[TEST_PAGE - HIB_SIG_TAIL_SIZE + 3] ^= 0x20;
	set_page0(f->path, page);
	assert_int_equal(probe(f->path, 0), HIB_SIG_BROKEN);
	make_our_page(page);
	page[TEST_PAGE - 1] ^= 0x01; /* the signature's NUL */
	set_page0(f->path, page);
	assert_int_equal(probe(f->path, 0), HIB_SIG_BROKEN);
	make_our_page(page);
	page[TEST_PAGE - 10] ^= 0x01; /* its first letter */
	set_page0(f->path, page);
	assert_int_equal(probe(f->path, 0), HIB_SIG_BROKEN);
}

/* With resume_offset=, the header is read where the offset says, not at 0. */
static void probe_reads_at_offset(void **state)
{
	struct fx *f = *state;
	uint8_t page[TEST_PAGE];

	memset(page, 0, sizeof(page));
	set_page0(f->path, page);
	swap_header_page(page);
	pwrite_at(f->path, 5 * TEST_PAGE, page, TEST_PAGE);
	assert_int_equal(probe(f->path, 0), HIB_SIG_FOREIGN);
	assert_int_equal(probe(f->path, 5), HIB_SIG_SWAP);
	assert_int_equal(probe(f->path, 4), HIB_SIG_FOREIGN);
}

static void probe_does_not_write(void **state)
{
	struct fx *f = *state;
	uint64_t before = hash_file(f->path);
	struct hib_target *t = NULL;
	enum hib_sig_state st;

	assert_int_equal(hib_target_open(f->path, 0, true, &t), 0);
	assert_int_equal(hib_target_probe(t, &st), 0);
	hib_target_close(t);
	assert_int_equal(hash_file(f->path), before);
}

static void state_names_distinct(void **state)
{
	static const enum hib_sig_state all[] = {HIB_SIG_SWAP,	 HIB_SIG_IMAGE,	  HIB_SIG_BROKEN,
						 HIB_SIG_KERNEL, HIB_SIG_FOREIGN, HIB_SIG_FILE};
	const size_t n = sizeof(all) / sizeof(all[0]);

	(void)state;
	for (size_t i = 0; i < n; i++) {
		const char *a = hib_sig_state_name(all[i]);
		assert_non_null(a);
		assert_true(strlen(a) > 0);
		assert_string_not_equal(a, hib_sig_state_name((enum hib_sig_state)0));
		for (size_t j = i + 1; j < n; j++)
			assert_string_not_equal(a, hib_sig_state_name(all[j]));
	}
}

/* ---- active swap --------------------------------------------------------- */

static int active(const struct fx *f, const char *table)
{
	struct hib_target *t = NULL;
	int r;

	write_text_file(f->swaps, table);
	assert_int_equal(hib_target_open(f->path, 0, false, &t), 0);
	r = hib_target_swap_active(t, f->swaps);
	hib_target_close(t);
	return r;
}

#define HEAD "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"

static void swap_active_names_the_file(void **state)
{
	struct fx *f = *state;
	char table[3 * PATH_MAX];

	snprintf(table, sizeof(table), HEAD "%s\t\t\t\tfile\t\t252\t\t0\t\t-2\n", f->path);
	assert_int_equal(active(f, table), 1);
	/* Among others, not first. */
	snprintf(table, sizeof(table),
		 HEAD "/dev/vda2\t\t\t\tpartition\t2097148\t\t0\t\t-2\n"
		      "%s\t\t\t\tfile\t\t252\t\t0\t\t-3\n",
		 f->path);
	assert_int_equal(active(f, table), 1);
}

static void swap_active_by_identity_not_name(void **state)
{
	struct fx *f = *state;
	char link[PATH_MAX + 32], table[3 * PATH_MAX];

	/* The same file under another name is the same area. */
	snprintf(link, sizeof(link), "%s/alias", f->dir);
	assert_int_equal(symlink(f->path, link), 0);
	snprintf(table, sizeof(table), HEAD "%s\t\t\t\tfile\t\t252\t\t0\t\t-2\n", link);
	assert_int_equal(active(f, table), 1);
	unlink(link);
}

static void swap_active_unescapes_names(void **state)
{
	struct fx *f = *state;
	char link[PATH_MAX + 32], esc[PATH_MAX + 32], table[3 * PATH_MAX + 64];

	/* /proc/swaps writes a space as \040. */
	snprintf(link, sizeof(link), "%s/my swap", f->dir);
	assert_int_equal(symlink(f->path, link), 0);
	snprintf(esc, sizeof(esc), "%s/my\\040swap", f->dir);
	snprintf(table, sizeof(table), HEAD "%s\t\t\tfile\t\t252\t\t0\t\t-2\n", esc);
	assert_int_equal(active(f, table), 1);
	unlink(link);
}

static void swap_inactive(void **state)
{
	struct fx *f = *state;
	char other[PATH_MAX], table[3 * PATH_MAX];

	assert_int_equal(active(f, HEAD), 0);
	assert_int_equal(active(f, ""), 0);
	/* Another file with the same content is another area. */
	make_swap_path(other, "other", PAGES);
	snprintf(table, sizeof(table),
		 HEAD "%s\t\t\t\tfile\t\t252\t\t0\t\t-2\n/nonexistent\t\tfile\t\t1\t\t0\t\t-3\n",
		 other);
	assert_int_equal(active(f, table), 0);
	unlink(other);
}

static void swap_table_missing(void **state)
{
	struct fx *f = *state;
	struct hib_target *t = NULL;

	assert_int_equal(hib_target_open(f->path, 0, false, &t), 0);
	assert_int_equal(hib_target_swap_active(t, "/nonexistent/proc/swaps"), -ENOENT);
	hib_target_close(t);
}

#define FX(fn)                                                                                     \
	{                                                                                          \
		.name = #fn, .test_func = fn, .setup_func = fx_setup, .teardown_func = fx_teardown \
	}
#define NAMED(fn)                                                                                  \
	{                                                                                          \
		.name = #fn, .test_func = fn                                                       \
	}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
	    FX(open_regular_file),
	    FX(open_closep_clears),
	    FX(probe_swapspace2_is_swap),
	    FX(probe_kernel_images),
	    FX(probe_foreign_pages),
	    FX(probe_image_file_signature),
	    FX(probe_our_image_and_broken_one),
	    FX(probe_reads_at_offset),
	    FX(probe_does_not_write),
	    NAMED(state_names_distinct),
	    FX(swap_active_names_the_file),
	    FX(swap_active_by_identity_not_name),
	    FX(swap_active_unescapes_names),
	    FX(swap_inactive),
	    FX(swap_table_missing),
	};
	enum {
		N_F = sizeof(fixed) / sizeof(fixed[0]),
		N_S = sizeof(spec_cases) / sizeof(spec_cases[0]),
	};
	struct CMUnitTest tests[N_F + N_S];
	size_t n = 0;

	for (size_t i = 0; i < N_S; i++)
		tests[n++] = (struct CMUnitTest){.name = spec_cases[i].name,
						 .test_func = open_spec,
						 .initial_state = (void *)&spec_cases[i]};
	for (size_t i = 0; i < N_F; i++)
		tests[n++] = fixed[i];
	quiet_logs();
	return _cmocka_run_group_tests("target", tests, n, NULL, NULL);
}
