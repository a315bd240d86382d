// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hib_path_trusted: what root obeys (the config, hook directories, hooks)
 * must be changeable by root alone. The tests chown, so they need root;
 * without it they skip. hib_run_lock: one hibernate at a time.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "util/error.h"
#include "util/util.h"

struct fx {
	char root[64];
	char dir[128], file[160];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	FILE *fp;

	if (!f)
		return -1;
	snprintf(f->root, sizeof(f->root), "/tmp/hib-trust-XXXXXX");
	if (!mkdtemp(f->root) || chmod(f->root, 0755) < 0)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s/d", f->root);
	snprintf(f->file, sizeof(f->file), "%s/hibernate.conf", f->dir);
	if (mkdir(f->dir, 0755) < 0 || chmod(f->dir, 0755) < 0)
		return -1;
	fp = fopen(f->file, "w");
	if (!fp)
		return -1;
	fputs("compress = lz4\n", fp);
	fclose(fp);
	if (chmod(f->file, 0644) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	int r = remove_tree(f->root);

	free(f);
	return r;
}

static void need_root(void)
{
	if (geteuid() != 0) {
		print_message("not root: cannot chown the fixtures\n");
		skip();
	}
}

/* Refused with -EPERM, and the message names @who and the fix. */
static void refused(const char *path, const char *who)
{
	struct hib_error err = { 0 };
	char fix[512];

	assert_int_equal(hib_path_trusted(path, &err), -EPERM);
	assert_int_equal(err.error, -EPERM);
	assert_non_null(strstr(err.msg, who));
	snprintf(fix, sizeof(fix), "chown root:root %s; chmod go-w %s", who, who);
	assert_non_null(strstr(err.msg, fix));
}

static void root_owned_0644_is_trusted(void **state)
{
	struct fx *f = *state;
	struct hib_error err = { 0 };

	need_root();
	assert_int_equal(hib_path_trusted(f->file, &err), 0);
	assert_int_equal(hib_path_trusted(f->dir, &err), 0);
	assert_int_equal(chmod(f->file, 0600), 0);
	assert_int_equal(hib_path_trusted(f->file, &err), 0);
}

static void group_or_world_writable_is_refused(void **state)
{
	struct fx *f = *state;

	need_root();
	assert_int_equal(chmod(f->file, 0664), 0);
	refused(f->file, f->file);
	assert_int_equal(chmod(f->file, 0646), 0);
	refused(f->file, f->file);
}

static void other_owner_is_refused(void **state)
{
	struct fx *f = *state;

	need_root();
	assert_int_equal(chown(f->file, 1000, 0), 0);
	refused(f->file, f->file);
	assert_int_equal(chown(f->file, 0, 1000), 0);
	assert_int_equal(hib_path_trusted(f->file, NULL), 0); /* a group alone changes nothing */
}

static void writable_directory_is_refused_unless_sticky(void **state)
{
	struct fx *f = *state;

	need_root();
	assert_int_equal(chmod(f->dir, 0777), 0);
	refused(f->file, f->dir);
	assert_int_equal(chmod(f->dir, 01777), 0);
	assert_int_equal(hib_path_trusted(f->file, NULL), 0);
	/* Sticky or not, a writable directory is no hook directory. */
	refused(f->dir, f->dir);
	assert_int_equal(chmod(f->dir, 0755), 0);
	assert_int_equal(chown(f->dir, 1000, 1000), 0);
	refused(f->file, f->dir);
}

static void symlink_follows_and_checks_both_ends(void **state)
{
	struct fx *f = *state;
	char link[200], odir[200], olink[240];

	need_root();
	/* To a root-owned file from a root-owned directory: trusted. */
	snprintf(link, sizeof(link), "%s/link.conf", f->root);
	assert_int_equal(symlink(f->file, link), 0);
	assert_int_equal(hib_path_trusted(link, NULL), 0);
	/* The target must pass too. */
	assert_int_equal(chmod(f->file, 0666), 0);
	refused(link, f->file);
	assert_int_equal(chmod(f->file, 0644), 0);
	/* A link where others may write: they could point it anywhere. */
	snprintf(odir, sizeof(odir), "%s/open", f->root);
	snprintf(olink, sizeof(olink), "%s/link.conf", odir);
	assert_int_equal(mkdir(odir, 0755), 0);
	assert_int_equal(chmod(odir, 0777), 0);
	assert_int_equal(symlink(f->file, olink), 0);
	refused(olink, odir);
}

static void missing_is_enoent(void **state)
{
	struct fx *f = *state;
	struct hib_error err = { 0 };
	char path[200];

	snprintf(path, sizeof(path), "%s/nothing", f->dir);
	assert_int_equal(hib_path_trusted(path, &err), -ENOENT);
	assert_non_null(strstr(err.msg, path));
}

/* Two runs: the second is refused at once, naming the first's pid and the
 * file; once the first is gone, the lock is free. */
static void run_lock_refuses_a_second_run(void **state)
{
	struct fx *f = *state;
	struct hib_error err = { 0 };
	char path[200], want[64];
	int ready[2], hold[2], fd, st;
	pid_t pid;
	char c;

	snprintf(path, sizeof(path), "%s/hibernate.lock", f->dir);
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(hold), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int held = hib_run_lock(path, NULL);

		close(hold[1]);
		if (write(ready[1], held >= 0 ? "y" : "n", 1) != 1)
			_exit(2);
		/* Until the test is done with it, or gone: then end of file. */
		(void)!read(hold[0], &c, 1);
		_exit(0);
	}
	close(ready[1]);
	close(hold[0]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	assert_int_equal(c, 'y');
	assert_int_equal(hib_run_lock(path, &err), -EBUSY);
	snprintf(want, sizeof(want), "another hibernate is running (pid %d, ", (int)pid);
	assert_non_null(strstr(err.msg, want));
	assert_non_null(strstr(err.msg, path));
	close(hold[1]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	fd = hib_run_lock(path, &err);
	assert_true(fd >= 0);
	/* Not handed to the hooks. */
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(root_owned_0644_is_trusted, setup, teardown),
		cmocka_unit_test_setup_teardown(group_or_world_writable_is_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(other_owner_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(writable_directory_is_refused_unless_sticky, setup,
						teardown),
		cmocka_unit_test_setup_teardown(symlink_follows_and_checks_both_ends, setup,
						teardown),
		cmocka_unit_test_setup_teardown(missing_is_enoent, setup, teardown),
		cmocka_unit_test_setup_teardown(run_lock_refuses_a_second_run, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
