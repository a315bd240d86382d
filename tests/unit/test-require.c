// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * require-encryption through the fake snapshot device: an image that is not
 * sealed with the required kind of key (plain, or another kind) is refused
 * from its header, before the secret is asked for or a page reaches the
 * kernel, and discarded: page 0 is the swap header again, the header page is
 * wiped, and no other byte changes. Images sealed as required resume.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "format/format.h"
#include "helpers.h"

#define STREAM_PAGES 300u
#define SWAP_PAGES (2 * STREAM_PAGES + 64)

static const char PASSPHRASE[] = "correct horse battery staple";
static const char KEY[] = "0123456789abcdef0123456789abcdef-a key file of 48 bytes";

struct fx {
	char path[PATH_MAX];
	struct hib_fake_params fp;
	uint8_t swap_header[TEST_PAGE];
	struct hib_options o;
};

/* The secret resume is given, and how often it was asked for. */
struct asker {
	struct hib_secret secret;
	int asked;
};

static int ask(int attempt, const char *what, struct hib_secret *ret, void *ud)
{
	struct asker *a = ud;

	(void)what;
	a->asked++;
	if (attempt > 1)
		return -EACCES;
	*ret = a->secret;
	return 0;
}

static const struct hib_secret passphrase = { HIB_SECRET_PASSPHRASE, PASSPHRASE,
					      sizeof(PASSPHRASE) - 1 };
static const struct hib_secret key_file = { HIB_SECRET_KEYFILE, KEY, sizeof(KEY) - 1 };

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	int fd;

	if (!f)
		return -1;
	fd = make_temp(f->path, "require");
	f->fp = fake_params(11, STREAM_PAGES, SWAP_PAGES, 0);
	make_swap_file(fd, SWAP_PAGES);
	close(fd);
	read_page0(f->path, f->swap_header);
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

/* Hibernate into the fixture, sealed with @s (NULL: not encrypted). */
static void hibernate(struct fx *f, const struct hib_secret *s)
{
	struct hib_target *t = NULL;
	struct hib_snapshot *snap = NULL;
	struct hib_options o;
	enum hib_suspend_outcome outcome = 0;

	hib_options_init(&o);
	o.threads = 2;
	o.powerdown = HIB_POWERDOWN_NONE;
	o.secret = s;
	assert_int_equal(hib_target_open(f->path, 0, true, &t), 0);
	assert_int_equal(hib_snapshot_fake_new(&f->fp, HIB_SNAP_HIBERNATE, &snap), 0);
	assert_int_equal(hib_suspend(t, snap, &o, &outcome, NULL), 0);
	assert_int_equal(outcome, HIB_SUSPEND_WRITTEN);
	hib_snapshot_close(snap);
	hib_target_close(t);
}

/* Resume with @require and @a answering; what hib_resume came to, and what
 * the fake saw in @ret. */
static int resume(struct fx *f, enum hib_require require, struct asker *a,
		  struct resume_result *ret)
{
	struct hib_target *t = NULL;
	struct hib_snapshot *snap = NULL;
	struct hib_options o;
	enum hib_resume_outcome outcome = 0;
	int r;

	hib_options_init(&o);
	o.threads = 2;
	o.require_encryption = require;
	o.ask_secret = ask;
	o.ask_secret_userdata = a;
	assert_int_equal(hib_target_open(f->path, 0, true, &t), 0);
	assert_int_equal(hib_snapshot_fake_new(&f->fp, HIB_SNAP_RESUME, &snap), 0);
	r = hib_resume(t, snap, &o, &outcome, NULL);
	r = cycle_result(r, outcome);
	hib_snapshot_fake_result(snap, &ret->pages_ok, &ret->complete, &ret->restored,
				 &ret->frozen);
	hib_snapshot_close(snap);
	hib_target_close(t);
	return r;
}

static uint8_t *slurp(const char *path)
{
	uint8_t *b = malloc((size_t)SWAP_PAGES * TEST_PAGE);

	assert_non_null(b);
	pread_at(path, 0, b, (size_t)SWAP_PAGES * TEST_PAGE);
	return b;
}

/* The image on the fixture is refused under @require: nothing asked, nothing
 * fed to the kernel, and only page 0 (the swap header again) and the header
 * page (zeros) written. */
static void expect_refused(struct fx *f, enum hib_require require, const struct hib_secret *s)
{
	struct asker a = { .secret = *s };
	struct resume_result res = { 0 };
	struct hib_sig_tail tail;
	uint8_t *before = slurp(f->path), *after;
	uint64_t hoff;

	memcpy(&tail, before + TEST_PAGE - HIB_SIG_TAIL_SIZE, sizeof(tail));
	hoff = tail.header_offset;
	assert_true(hoff >= TEST_PAGE && hoff < (uint64_t)SWAP_PAGES * TEST_PAGE);
	assert_int_equal(resume(f, require, &a, &res), -EPERM);
	assert_int_equal(a.asked, 0);
	assert_int_equal(res.pages_ok, 0);
	assert_false(res.restored);
	assert_false(res.frozen);
	after = slurp(f->path);
	assert_memory_equal(after, f->swap_header, TEST_PAGE);
	for (size_t i = 0; i < TEST_PAGE; i++)
		if (after[hoff + i])
			fail_msg("the header page is not wiped at byte %zu", i);
	assert_memory_equal(after + TEST_PAGE, before + TEST_PAGE, hoff - TEST_PAGE);
	assert_memory_equal(after + hoff + TEST_PAGE, before + hoff + TEST_PAGE,
			    (size_t)SWAP_PAGES * TEST_PAGE - hoff - TEST_PAGE);
	free(before);
	free(after);
	/* Discarded: there is no image left to resume. */
	assert_int_equal(resume(f, HIB_REQUIRE_NOTHING, &a, &res), HIB_RESUME_NO_IMAGE);
}

static void expect_resumed(struct fx *f, enum hib_require require, const struct hib_secret *s)
{
	struct asker a = { .secret = s ? *s : passphrase };
	struct resume_result res = { 0 };
	uint8_t *after;

	assert_int_equal(resume(f, require, &a, &res), HIB_RESUME_RESTORED);
	assert_true(res.restored && res.complete);
	assert_int_equal(a.asked, s ? 1 : 0);
	after = slurp(f->path);
	assert_memory_equal(after, f->swap_header, TEST_PAGE);
	free(after);
}

/* The downgrade: a plain image where a key file is configured. */
static void plain_image_refused_when_a_key_file_is_required(void **state)
{
	struct fx *f = *state;

	hibernate(f, NULL);
	expect_refused(f, HIB_REQUIRE_KEY_FILE, &key_file);
}

static void plain_image_refused_when_a_passphrase_is_required(void **state)
{
	struct fx *f = *state;

	hibernate(f, NULL);
	expect_refused(f, HIB_REQUIRE_PASSPHRASE, &passphrase);
}

/* Sealed, but not with the kind of key this system uses: whoever chose that
 * passphrase (or key) need not be the owner. */
static void other_kind_of_key_refused_before_asking(void **state)
{
	struct fx *f = *state;

	hibernate(f, &passphrase);
	expect_refused(f, HIB_REQUIRE_KEY_FILE, &key_file);
	hibernate(f, &key_file);
	expect_refused(f, HIB_REQUIRE_PASSPHRASE, &passphrase);
}

static void images_sealed_as_required_resume(void **state)
{
	struct fx *f = *state;

	hibernate(f, &key_file);
	expect_resumed(f, HIB_REQUIRE_KEY_FILE, &key_file);
	hibernate(f, &passphrase);
	expect_resumed(f, HIB_REQUIRE_PASSPHRASE, &passphrase);
}

/* require-encryption off: what was accepted before still is. */
static void nothing_required_resumes_plain_and_sealed(void **state)
{
	struct fx *f = *state;

	hibernate(f, NULL);
	expect_resumed(f, HIB_REQUIRE_NOTHING, NULL);
	hibernate(f, &key_file);
	expect_resumed(f, HIB_REQUIRE_NOTHING, &key_file);
}

/* ---- other formats: the kernel's own image, uswsusp's... ---------------- */

/* Page 0 as the kernel's hibernation leaves it: the swap header, then its
 * swsusp_header at the end (image sector, flags, the replaced signature
 * @orig, its own @sig); the swap area's pages after it unchanged. */
static void write_other_format(struct fx *f, const char *orig, const char *sig)
{
	uint8_t page[TEST_PAGE];
	uint64_t image_sector = 8;
	uint32_t flags = 1;

	memcpy(page, f->swap_header, TEST_PAGE);
	memcpy(page + TEST_PAGE - 20 - 4 - 8, &image_sector, 8);
	memcpy(page + TEST_PAGE - 20 - 4, &flags, 4);
	memcpy(page + TEST_PAGE - 20, orig, 10);
	memset(page + TEST_PAGE - 10, 0, 10);
	memcpy(page + TEST_PAGE - 10, sig, strlen(sig));
	pwrite_at(f->path, 0, page, TEST_PAGE);
}

/* Refused under @require without a question, nothing fed to the kernel; page
 * 0 is @want after, and no other byte changed. */
static void expect_other_refused(struct fx *f, enum hib_require require, const uint8_t *want)
{
	struct asker a = { .secret = key_file };
	struct resume_result res = { 0 };
	uint8_t *before = slurp(f->path), *after;

	assert_int_equal(resume(f, require, &a, &res), -EPERM);
	assert_int_equal(a.asked, 0);
	assert_int_equal(res.pages_ok, 0);
	assert_false(res.restored);
	after = slurp(f->path);
	assert_memory_equal(after, want, TEST_PAGE);
	assert_memory_equal(after + TEST_PAGE, before + TEST_PAGE,
			    (size_t)(SWAP_PAGES - 1) * TEST_PAGE);
	free(before);
	free(after);
	assert_int_equal(resume(f, require, &a, &res), HIB_RESUME_NO_IMAGE);
}

/* The downgrade past our format: an image the kernel's own resume would
 * restore, where encryption is required. The swap header comes back bit for
 * bit, uuid and label included. */
static void kernel_image_refused_when_encryption_is_required(void **state)
{
	static const char *const sigs[] = { "S1SUSPEND", "ULSUSPEND", "LINHIB0001" };
	struct fx *f = *state;

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		write_other_format(f, HIB_SWAP_SIG, sigs[i]);
		expect_other_refused(f, HIB_REQUIRE_KEY_FILE, f->swap_header);
		write_other_format(f, HIB_SWAP_SIG, sigs[i]);
		expect_other_refused(f, HIB_REQUIRE_PASSPHRASE, f->swap_header);
	}
}

/* The signature the image replaced is taken only when it is one of the free
 * states: anything else there becomes SWAPSPACE2. */
static void kernel_image_orig_sig_trusted_only_when_free(void **state)
{
	struct fx *f = *state;
	uint8_t want[TEST_PAGE];

	write_other_format(f, "GARBAGE!!!", "S1SUSPEND");
	expect_other_refused(f, HIB_REQUIRE_KEY_FILE, f->swap_header);
	/* An image file's page 0 stays an image file's. */
	memcpy(want, f->swap_header, TEST_PAGE);
	memcpy(want + TEST_PAGE - 10, HIB_FILE_SIG, 10);
	write_other_format(f, HIB_FILE_SIG, "S1SUSPEND");
	expect_other_refused(f, HIB_REQUIRE_TPM, want);
}

/* Without require-encryption, and read-only: not a byte written. */
static void kernel_image_left_alone_otherwise(void **state)
{
	struct fx *f = *state;
	struct asker a = { .secret = key_file };
	struct resume_result res = { 0 };
	struct hib_target *t = NULL;
	uint8_t *before, *after;

	write_other_format(f, HIB_SWAP_SIG, "S1SUSPEND");
	before = slurp(f->path);
	assert_int_equal(resume(f, HIB_REQUIRE_NOTHING, &a, &res), HIB_RESUME_NO_IMAGE);
	hib_options_init(&f->o);
	f->o.require_encryption = HIB_REQUIRE_KEY_FILE;
	assert_int_equal(hib_target_open(f->path, 0, false, &t), 0);
	assert_int_equal(hib_resume(t, NULL, &f->o, NULL, NULL), -EBADF);
	hib_target_close(t);
	after = slurp(f->path);
	assert_memory_equal(after, before, (size_t)SWAP_PAGES * TEST_PAGE);
	free(before);
	free(after);
}

#define FX(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		FX(plain_image_refused_when_a_key_file_is_required),
		FX(plain_image_refused_when_a_passphrase_is_required),
		FX(other_kind_of_key_refused_before_asking),
		FX(images_sealed_as_required_resume),
		FX(nothing_required_resumes_plain_and_sealed),
		FX(kernel_image_refused_when_encryption_is_required),
		FX(kernel_image_orig_sig_trusted_only_when_free),
		FX(kernel_image_left_alone_otherwise),
	};
	quiet_logs();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
