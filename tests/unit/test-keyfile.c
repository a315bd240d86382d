// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The key file's rules (lib/frontend/keyfile.c): a regular file owned by root
 * with no group or other bits, 32 to 4096 bytes, read whole and never through
 * a symbolic link. Each refusal names the file and the fix. Files must be
 * root's to pass, so the cases need root (they skip otherwise).
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

#include "frontend/keyfile.h"
#include "helpers.h"

struct fx {
	char dir[PATH_MAX];
	char path[PATH_MAX + 16];
};

static int fx_setup(void **state)
{
	const char *tmp = getenv("TMPDIR");
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s/hib-keyfile-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->dir))
		die("mkdtemp");
	snprintf(f->path, sizeof(f->path), "%s/key", f->dir);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (run_cmd(cmd, NULL, 0) != 0)
		fprintf(stderr, "# warning: could not remove %s\n", f->dir);
	free(f);
	return 0;
}

static void need_root(void)
{
	if (geteuid() != 0)
		skip(); /* only root's files pass, and only root can give them to root */
}

/* A key file of @len bytes (byte i is i * 7 + 1) and @mode, owned by @uid. */
static void make_key(const char *path, size_t len, mode_t mode, uid_t uid)
{
	uint8_t buf[8192];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(len <= sizeof(buf));
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 7 + 1);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len || fchmod(fd, mode) != 0 ||
	    fchown(fd, uid, 0) != 0)
		die(path);
	close(fd);
}

/* Read @path: must fail with @want, naming the file and saying @fix. */
static void expect_refused(const char *path, int want, const char *fix)
{
	struct hib_key_file k = { 0 };
	struct hib_error err;

	assert_int_equal(hib_key_file_check(path, &err), want);
	assert_int_equal(err.error, want);
	assert_int_equal(hib_key_file_read(path, &k, &err), want);
	assert_null(k.data);
	assert_int_equal(err.error, want);
	if (strncmp(err.msg, path, strlen(path)) != 0)
		fail_msg("the message does not start with the file: %s", err.msg);
	if (!strstr(err.msg, fix))
		fail_msg("the message does not say '%s': %s", fix, err.msg);
}

/* Read @path: must succeed with the @len bytes make_key wrote. */
static void expect_read(const char *path, size_t len)
{
	struct hib_key_file k = { 0 };
	struct hib_error err;

	assert_int_equal(hib_key_file_check(path, &err), 0);
	assert_int_equal(hib_key_file_read(path, &k, &err), 0);
	assert_int_equal(err.error, 0);
	assert_string_equal(err.msg, "");
	assert_non_null(k.data);
	assert_int_equal(k.len, len);
	for (size_t i = 0; i < len; i++)
		assert_int_equal(k.data[i], (uint8_t)(i * 7 + 1));
	hib_key_file_free(&k);
	assert_null(k.data);
	assert_int_equal(k.len, 0);
}

static void exactly_32_bytes_of_root_0600_read_whole(void **state)
{
	struct fx *f = *state;

	need_root();
	make_key(f->path, 32, 0600, 0);
	expect_read(f->path, 32);
	make_key(f->path, 64, 0400, 0); /* stricter is fine */
	expect_read(f->path, 64);
}

static void largest_key_file_read_whole(void **state)
{
	struct fx *f = *state;

	need_root();
	make_key(f->path, HIB_KEY_FILE_MAX, 0600, 0);
	expect_read(f->path, HIB_KEY_FILE_MAX);
}

static void bytes_31_refused(void **state)
{
	struct fx *f = *state;

	need_root();
	make_key(f->path, 31, 0600, 0);
	expect_refused(f->path, -EMSGSIZE, "head -c 64 /dev/urandom");
}

static void empty_file_refused(void **state)
{
	struct fx *f = *state;

	need_root();
	make_key(f->path, 0, 0600, 0);
	expect_refused(f->path, -EMSGSIZE, "head -c 64 /dev/urandom");
}

/* Bigger than the maximum: refused, never cut to its first bytes. */
static void too_big_refused_not_truncated(void **state)
{
	struct fx *f = *state;

	need_root();
	make_key(f->path, HIB_KEY_FILE_MAX + 1, 0600, 0);
	expect_refused(f->path, -EMSGSIZE, "nothing is cut off");
}

static void group_readable_refused(void **state)
{
	struct fx *f = *state;

	need_root();
	make_key(f->path, 64, 0640, 0);
	expect_refused(f->path, -EPERM, "chmod 600 ");
}

static void other_readable_refused(void **state)
{
	struct fx *f = *state;

	need_root();
	make_key(f->path, 64, 0604, 0);
	expect_refused(f->path, -EPERM, "chmod 600 ");
	make_key(f->path, 64, 0620, 0); /* writable is as bad: the key can be replaced */
	expect_refused(f->path, -EPERM, "chmod 600 ");
}

static void not_owned_by_root_refused(void **state)
{
	struct fx *f = *state;

	need_root();
	make_key(f->path, 64, 0600, 1000);
	expect_refused(f->path, -EPERM, "chown root:root ");
}

static void symlink_refused(void **state)
{
	struct fx *f = *state;
	char link[PATH_MAX + 16];

	need_root();
	make_key(f->path, 64, 0600, 0);
	snprintf(link, sizeof(link), "%s/link", f->dir);
	assert_int_equal(symlink(f->path, link), 0);
	expect_refused(link, -ELOOP, "readlink -f ");
	expect_read(f->path, 64); /* the file itself is fine */
}

static void directory_refused(void **state)
{
	struct fx *f = *state;

	need_root();
	assert_int_equal(mkdir(f->path, 0700), 0);
	expect_refused(f->path, -EISDIR, "head -c 64 /dev/urandom");
}

/* Refused at once: nobody writes to the FIFO, and opening it must not wait. */
static void fifo_refused(void **state)
{
	struct fx *f = *state;

	need_root();
	assert_int_equal(mkfifo(f->path, 0600), 0);
	expect_refused(f->path, -EINVAL, "not a regular file");
}

static void missing_file_named(void **state)
{
	struct fx *f = *state;

	expect_refused(f->path, -ENOENT, "check key-file in " HIB_CONFIG_PATH);
}

#define FX(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		FX(exactly_32_bytes_of_root_0600_read_whole),
		FX(largest_key_file_read_whole),
		FX(bytes_31_refused),
		FX(empty_file_refused),
		FX(too_big_refused_not_truncated),
		FX(group_readable_refused),
		FX(other_readable_refused),
		FX(not_owned_by_root_refused),
		FX(symlink_refused),
		FX(directory_refused),
		FX(fifo_refused),
		FX(missing_file_named),
	};
	quiet_logs();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
