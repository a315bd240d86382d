// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Targets: choosing one in the documented order (hib_target_resolve),
 * opening what a spec names (and refusing what it must not), reading what
 * page 0 holds, knowing whether the area is active swap, and the error record
 * every failure fills. Only regular files here; tests/unit/test-engine.c runs
 * a loop device.
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
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

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
	{ "open_missing_path_is_enoent", "/nonexistent/hib-test/swap", 0, -ENOENT },
	{ "open_directory_is_enodev", "@dir", 0, -ENODEV },
	{ "open_char_device_is_enodev", "/dev/null", 0, -ENODEV },
	{ "open_garbage_is_einval", "garbage", 0, -EINVAL },
	{ "open_empty_spec_is_einval", "", 0, -EINVAL },
	{ "open_empty_uuid_is_einval", "UUID=", 0, -EINVAL },
	{ "open_empty_label_is_einval", "LABEL=", 0, -EINVAL },
	{ "open_bad_devnum_is_einval", "8:x", 0, -EINVAL },
	{ "open_devnum_with_tail_is_einval", "8:1x", 0, -EINVAL },
	{ "open_hex_devnum_with_tail_is_einval", "801x", 0, -EINVAL },
	{ "open_hex_devnum_too_long_is_einval", "123456789", 0, -EINVAL },
	{ "open_hex_devnum_of_no_device_is_enoent", "fff00", 0, -ENOENT },
	{ "open_unknown_partuuid_is_enoent", "PARTUUID=0BADC0DE-0000-4000-8000-000000000000", 0,
	  -ENOENT },
	{ "open_offset_at_end_is_erange", "@file", PAGES, -ERANGE },
	{ "open_offset_far_beyond_end_is_erange", "@file", 1u << 30, -ERANGE },
	{ "open_offset_overflowing_bytes_is_erange", "@file", UINT64_MAX / 4096, -ERANGE },
	{ "open_offset_max_is_erange", "@file", UINT64_MAX, -ERANGE },
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
	static const char *const sigs[] = { "S1SUSPEND", "ULSUSPEND", "LINHIB0001" };
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
	static const enum hib_sig_state all[] = { HIB_SIG_SWAP,   HIB_SIG_IMAGE,   HIB_SIG_BROKEN,
						  HIB_SIG_KERNEL, HIB_SIG_FOREIGN, HIB_SIG_FILE };
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

/* ---- choosing the target: hib_target_resolve --------------------------- */

/* Every strdup() of the program goes through here (meson.build links this test
 * with --wrap=strdup): the n-th from the arming on fails, as on a full heap. */
char *__real_strdup(const char *s);
char *__wrap_strdup(const char *s);
static int strdup_fail_at; /* 0: never */

char *__wrap_strdup(const char *s)
{
	if (strdup_fail_at > 0 && --strdup_fail_at == 0) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_strdup(s);
}

/* /proc/swaps with these areas (a path NULL: none), first @a of @a_type. */
static void swaps_table(const struct fx *f, const char *a, const char *a_type, const char *b,
			const char *b_type)
{
	char table[4 * PATH_MAX];
	int n = snprintf(table, sizeof(table), HEAD);

	if (a)
		n += snprintf(table + n, sizeof(table) - (size_t)n, "%s\t%s\t0\t0\t-2\n", a,
			      a_type);
	if (b)
		snprintf(table + n, sizeof(table) - (size_t)n, "%s\t%s\t0\t0\t-3\n", b, b_type);
	write_text_file(f->swaps, table);
}

/* A request that finds nothing unless the case adds something. */
static struct hib_target_request nothing(const struct fx *f)
{
	swaps_table(f, NULL, NULL, NULL, NULL);
	return (struct hib_target_request){ .cmdline = "quiet", .proc_swaps = f->swaps };
}

/* hib_target_resolve, checking the error record against what it returned. */
static int resolve(const struct hib_target_request *req, struct hib_target **ret,
		   struct hib_error *err)
{
	struct hib_target *before = *ret;
	int r;

	memset(err, 0x5a, sizeof(*err)); /* whatever the caller's stack held */
	r = hib_target_resolve(req, ret, err);
	assert_int_equal(err->error, r < 0 ? r : 0);
	assert_true(memchr(err->msg, 0, sizeof(err->msg)) != NULL);
	if (r == 0) {
		assert_string_equal(err->msg, "");
		assert_non_null(*ret);
	} else {
		assert_true(strlen(err->msg) > 10);
		assert_ptr_equal(*ret, before); /* ret written only on success */
	}
	return r;
}

static void expect_chosen(const struct hib_target_request *req, const char *path, uint64_t offset,
			  enum hib_target_source source)
{
	struct hib_target *t = NULL;
	struct hib_error err;

	assert_int_equal(resolve(req, &t, &err), 0);
	assert_string_equal(hib_target_path(t), path);
	assert_string_equal(hib_target_name(t), path);
	assert_int_equal(hib_target_offset_pages(t), offset);
	assert_int_equal(hib_target_source(t), source);
	assert_int_equal(hib_target_kind(t), HIB_TARGET_DEVICE);
	assert_int_equal(hib_target_writable(t), req->writable);
	assert_int_equal(hib_target_file_size(t), 0);
	hib_target_close(t);
}

static void resolve_option_first(void **state)
{
	struct fx *f = *state;
	struct hib_target_request req = nothing(f);

	/* Everything names something; --device wins. */
	swaps_table(f, f->dir, "partition", NULL, NULL);
	req.spec = f->path;
	req.config_spec = "/nonexistent/hib-test/config";
	req.cmdline = "quiet resume=/nonexistent/hib-test/cmdline resume_offset=3";
	req.writable = true;
	expect_chosen(&req, f->path, 0, HIB_TARGET_FROM_OPTION);
}

static void resolve_config_second(void **state)
{
	struct fx *f = *state;
	struct hib_target_request req = nothing(f);

	req.config_spec = f->path;
	req.cmdline = "resume=/nonexistent/hib-test/cmdline";
	expect_chosen(&req, f->path, 0, HIB_TARGET_FROM_CONFIG);
}

static void resolve_cmdline_third(void **state)
{
	struct fx *f = *state;
	struct hib_target_request req = nothing(f);
	char cmdline[2 * PATH_MAX];

	/* resume= beats the active swap partition, with its resume_offset=. */
	swaps_table(f, f->dir, "partition", NULL, NULL);
	snprintf(cmdline, sizeof(cmdline), "ro resume=%s resume_offset=5 quiet", f->path);
	req.cmdline = cmdline;
	expect_chosen(&req, f->path, 5, HIB_TARGET_FROM_CMDLINE);
}

static void resolve_only_swap_partition_last(void **state)
{
	struct fx *f = *state;
	struct hib_target_request req = nothing(f);

	/* Swap files do not count: the kernel's resume needs resume_offset= for them. */
	swaps_table(f, f->dir, "file", f->path, "partition");
	expect_chosen(&req, f->path, 0, HIB_TARGET_FROM_ONLY_SWAP);
}

static void resolve_offsets(void **state)
{
	struct fx *f = *state;
	struct hib_target_request req = nothing(f);
	char cmdline[2 * PATH_MAX];

	/* --offset goes with device = too: each option overrides its own key. */
	req.config_spec = f->path;
	req.offset_pages = 3;
	req.offset_set = true;
	expect_chosen(&req, f->path, 3, HIB_TARGET_FROM_CONFIG);
	/* offset = with --device, and --offset over offset =. */
	req = nothing(f);
	req.spec = f->path;
	req.config_offset_pages = 7;
	req.config_offset_set = true;
	expect_chosen(&req, f->path, 7, HIB_TARGET_FROM_OPTION);
	req.offset_pages = 2;
	req.offset_set = true;
	expect_chosen(&req, f->path, 2, HIB_TARGET_FROM_OPTION);
	/* A configured offset over resume_offset=; 0 is an offset too. */
	req = nothing(f);
	snprintf(cmdline, sizeof(cmdline), "resume=%s resume_offset=5", f->path);
	req.cmdline = cmdline;
	req.config_offset_set = true;
	expect_chosen(&req, f->path, 0, HIB_TARGET_FROM_CMDLINE);
}

static void resolve_several_swaps_refused(void **state)
{
	struct fx *f = *state;
	struct hib_target_request req = nothing(f);
	struct hib_target *t = (struct hib_target *)0x1;
	struct hib_error err;

	swaps_table(f, f->path, "partition", f->dir, "partition");
	assert_int_equal(resolve(&req, &t, &err), -ENOTUNIQ);
	assert_non_null(strstr(err.msg, "several swap areas are active"));
	/* ... and every way to choose. */
	assert_non_null(strstr(err.msg, "--device"));
	assert_non_null(strstr(err.msg, "'device =' in /etc/hibernate.conf"));
	assert_non_null(strstr(err.msg, "resume="));
	/* Named, the choice is made. */
	req.config_spec = f->path;
	expect_chosen(&req, f->path, 0, HIB_TARGET_FROM_CONFIG);
}

static void resolve_nothing_found(void **state)
{
	struct fx *f = *state;
	struct hib_target_request req = nothing(f);
	struct hib_target *t = (struct hib_target *)0x1;
	struct hib_error err;

	assert_int_equal(resolve(&req, &t, &err), -ENOENT);
	assert_non_null(strstr(err.msg,
			       "no target: no device = in /etc/hibernate.conf, no resume="));
	assert_non_null(strstr(err.msg, "--device"));
	assert_non_null(strstr(err.msg, "prepare-file"));
	/* No table at all is no swap at all; resume_offset= alone names nothing. */
	req.proc_swaps = "/nonexistent/hib-test/swaps";
	req.cmdline = "resume_offset=12";
	assert_int_equal(resolve(&req, &t, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "no target"));
}

struct named_case {
	const char *spec; /* "@dir": the fixture's directory */
	uint64_t offset;
	int want;
	const char *says;
};

static void resolve_named_but_unusable(void **state)
{
	static const struct named_case cases[] = {
		{ "/nonexistent/hib-test/swap", 0, -ENOENT, "no such device" },
		{ "UUID=", 0, -EINVAL, "not a device: use a /dev path, UUID=" },
		{ "swap-please", 0, -EINVAL, "not a device" },
		{ "@dir", 0, -ENODEV, "not a block device or regular file" },
		{ "@file", PAGES, -ERANGE, "offset 64 pages lies beyond the end of the device" },
	};
	struct fx *f = *state;

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		struct hib_target_request req = nothing(f);
		struct hib_target *t = (struct hib_target *)0x1;
		struct hib_error err;
		const char *spec = cases[i].spec;

		if (strcmp(spec, "@dir") == 0)
			spec = f->dir;
		else if (strcmp(spec, "@file") == 0)
			spec = f->path;
		req.config_spec = spec;
		req.config_offset_pages = cases[i].offset;
		req.config_offset_set = cases[i].offset > 0;
		assert_int_equal(resolve(&req, &t, &err), cases[i].want);
		/* The spec as the user wrote it, then what is wrong. */
		if (strncmp(err.msg, spec, strlen(spec)) != 0 || !strstr(err.msg, cases[i].says))
			fail_msg("%s: '%s'", spec, err.msg);
	}
}

/* A regular file without an offset is a file target, for hibernate only. */
static void resolve_regular_file_as_file_target(void **state)
{
	struct fx *f = *state;
	struct hib_target_request req = nothing(f);
	struct hib_target *t = (struct hib_target *)0x1;
	struct hib_error err;
	char want[2 * PATH_MAX];

	/* Mapped through its filesystem, which refuses it (the fixture is sparse)
	 * before any device is opened. */
	req.spec = f->path;
	req.file_target = true;
	assert_int_equal(resolve(&req, &t, &err), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s: cannot be a hibernation target: it has a hole at byte 4096", f->path);
	assert_non_null(strstr(err.msg, want));
	/* With an offset, from either side, it is a disk image, as it is without file_target. */
	req.offset_set = true;
	expect_chosen(&req, f->path, 0, HIB_TARGET_FROM_OPTION);
	req.offset_set = false;
	req.config_offset_set = true;
	expect_chosen(&req, f->path, 0, HIB_TARGET_FROM_OPTION);
	req.config_offset_set = false;
	req.file_target = false;
	expect_chosen(&req, f->path, 0, HIB_TARGET_FROM_OPTION);
}

/* Out of memory at each allocation in turn: the record says so, every time. */
static void resolve_enomem_fills_the_record(void **state)
{
	struct fx *f = *state;
	char cmdline[2 * PATH_MAX];
	struct hib_target_request reqs[3];
	int failed = 0;

	reqs[0] = nothing(f);
	reqs[0].spec = f->path;
	snprintf(cmdline, sizeof(cmdline), "resume=%s", f->path);
	reqs[1] = nothing(f);
	reqs[1].cmdline = cmdline;
	swaps_table(f, f->path, "partition", NULL, NULL);
	reqs[2] = (struct hib_target_request){ .cmdline = "", .proc_swaps = f->swaps };
	for (size_t i = 0; i < ARRAY_LEN(reqs); i++) {
		for (int n = 1;; n++) {
			struct hib_target *t = (struct hib_target *)0x1;
			struct hib_error err;
			int r;

			strdup_fail_at = n;
			r = resolve(&reqs[i], &t, &err);
			strdup_fail_at = 0;
			if (r == 0) {
				hib_target_close(t);
				break;
			}
			assert_int_equal(r, -ENOMEM);
			if (!strstr(err.msg, strerror(ENOMEM)))
				fail_msg("request %zu, strdup %d: '%s'", i, n, err.msg);
			failed++;
		}
	}
	/* Two each: the copy of the spec (from the request, resume= or the table),
	 * then the device's path. */
	assert_int_equal(failed, 6);
}

static void source_names_distinct(void **state)
{
	static const enum hib_target_source all[] = {
		HIB_TARGET_FROM_SPEC,    HIB_TARGET_FROM_OPTION,    HIB_TARGET_FROM_CONFIG,
		HIB_TARGET_FROM_CMDLINE, HIB_TARGET_FROM_ONLY_SWAP,
	};
	struct fx *f = *state;
	struct hib_target *t = NULL;

	for (size_t i = 0; i < ARRAY_LEN(all); i++) {
		assert_true(strlen(hib_target_source_name(all[i])) > 0);
		for (size_t j = i + 1; j < ARRAY_LEN(all); j++)
			assert_string_not_equal(hib_target_source_name(all[i]),
						hib_target_source_name(all[j]));
	}
	assert_non_null(strstr(hib_target_source_name(HIB_TARGET_FROM_CMDLINE), "resume="));
	/* Opened by name, not resolved. */
	assert_int_equal(hib_target_open(f->path, 0, false, &t), 0);
	assert_int_equal(hib_target_source(t), HIB_TARGET_FROM_SPEC);
	assert_false(hib_target_writable(t));
	hib_target_close(t);
}

/* /proc/swaps's names, escapes and all, against an open target. */
static void is_area_by_identity(void **state)
{
	struct fx *f = *state;
	struct hib_target *t = NULL;
	char link[2 * PATH_MAX], esc[2 * PATH_MAX];

	snprintf(link, sizeof(link), "%s/my swap", f->dir);
	assert_int_equal(symlink(f->path, link), 0);
	snprintf(esc, sizeof(esc), "%s/my\\040swap", f->dir);
	assert_int_equal(hib_target_open(f->path, 0, false, &t), 0);
	assert_true(hib_target_is_area(t, f->path));
	assert_true(hib_target_is_area(t, esc));
	assert_false(hib_target_is_area(t, f->dir));
	assert_false(hib_target_is_area(t, f->swaps));
	assert_false(hib_target_is_area(t, "/nonexistent/hib-test/swap"));
	hib_target_close(t);
	unlink(link);
}

/* ---- the error record of file targets, locating and preparing files ------ */

static void file_errors_fill_the_record(void **state)
{
	struct fx *f = *state;
	struct hib_file_location l;
	struct hib_target *t = (struct hib_target *)0x1;
	struct hib_error err;
	char want[2 * PATH_MAX];

	/* The fixture has a hole after its first page. */
	memset(&err, 0x5a, sizeof(err));
	assert_int_equal(hib_file_locate(f->path, &l, &err), -EINVAL);
	assert_int_equal(err.error, -EINVAL);
	snprintf(want, sizeof(want), "%s: cannot be located for resume: it has a hole at byte 4096",
		 f->path);
	assert_non_null(strstr(err.msg, want));
	assert_non_null(strstr(err.msg, "dd if=/dev/zero"));
	/* Not a file, and not there. */
	memset(&err, 0x5a, sizeof(err));
	assert_int_equal(hib_target_open_file(f->dir, true, &t, &err), -EINVAL);
	snprintf(want, sizeof(want), "%s: cannot be a hibernation target: not a regular file",
		 f->dir);
	assert_string_equal(err.msg, want);
	assert_ptr_equal(t, (struct hib_target *)0x1);
	memset(&err, 0x5a, sizeof(err));
	assert_int_equal(hib_file_locate("/nonexistent/hib-test/f", &l, &err), -ENOENT);
	assert_int_equal(err.error, -ENOENT);
	assert_non_null(strstr(err.msg, "/nonexistent/hib-test/f: cannot be located for resume: "
					"cannot open: "));
}

static void prepare_file_fills_the_record(void **state)
{
	struct fx *f = *state;
	struct hib_error err;
	char img[2 * PATH_MAX], want[2 * PATH_MAX];

	/* Someone's data is not overwritten. */
	memset(&err, 0x5a, sizeof(err));
	assert_int_equal(hib_prepare_file(f->path, 64 * TEST_PAGE, &err), -EEXIST);
	assert_int_equal(err.error, -EEXIST);
	snprintf(want, sizeof(want), "%s: exists and is not an image file", f->path);
	assert_non_null(strstr(err.msg, want));
	/* Too small. */
	snprintf(img, sizeof(img), "%s/img", f->dir);
	memset(&err, 0x5a, sizeof(err));
	assert_int_equal(hib_prepare_file(img, 4 * TEST_PAGE, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "at least 64 KiB"));
	assert_int_equal(strncmp(err.msg, img, strlen(img)), 0);
	/* Made, and made again: the record is cleared on success. */
	for (int i = 0; i < 2; i++) {
		memset(&err, 0x5a, sizeof(err));
		assert_int_equal(hib_prepare_file(img, 16 * TEST_PAGE, &err), 0);
		assert_int_equal(err.error, 0);
		assert_string_equal(err.msg, "");
	}
	assert_int_equal(unlink(img), 0);
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
		FX(resolve_option_first),
		FX(resolve_config_second),
		FX(resolve_cmdline_third),
		FX(resolve_only_swap_partition_last),
		FX(resolve_offsets),
		FX(resolve_several_swaps_refused),
		FX(resolve_nothing_found),
		FX(resolve_named_but_unusable),
		FX(resolve_regular_file_as_file_target),
		FX(resolve_enomem_fills_the_record),
		FX(source_names_distinct),
		FX(is_area_by_identity),
		FX(file_errors_fill_the_record),
		FX(prepare_file_fills_the_record),
	};
	enum {
		N_F = sizeof(fixed) / sizeof(fixed[0]),
		N_S = sizeof(spec_cases) / sizeof(spec_cases[0]),
	};
	struct CMUnitTest tests[N_F + N_S];
	size_t n = 0;

	for (size_t i = 0; i < N_S; i++)
		tests[n++] = (struct CMUnitTest){ .name = spec_cases[i].name,
						  .test_func = open_spec,
						  .initial_state = (void *)&spec_cases[i] };
	for (size_t i = 0; i < N_F; i++)
		tests[n++] = fixed[i];
	quiet_logs();
	return _cmocka_run_group_tests("target", tests, n, NULL, NULL);
}
