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

#define FX(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		FX(plain_image_refused_when_a_key_file_is_required),
		FX(plain_image_refused_when_a_passphrase_is_required),
		FX(other_kind_of_key_refused_before_asking),
		FX(images_sealed_as_required_resume),
		FX(nothing_required_resumes_plain_and_sealed),
	};
	quiet_logs();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
