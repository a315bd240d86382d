// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hib_path_trusted, hib_open_trusted: what root obeys (the config, hook
 * directories, hooks) must be changeable by root alone, every directory from /
 * on. The tests chown, so they need root; without it they skip. hib_run_lock:
 * one hibernate at a time.
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

/* A link in the middle of the path, in a directory others may write: they
 * could point it anywhere. realpath() saw only where it pointed then. */
static void middle_symlink_in_open_directory_is_refused(void **state)
{
	struct fx *f = *state;
	char odir[200], link[240], path[300];

	need_root();
	snprintf(odir, sizeof(odir), "%s/open", f->root);
	snprintf(link, sizeof(link), "%s/lnk", odir);
	snprintf(path, sizeof(path), "%s/hibernate.conf", link);
	assert_int_equal(mkdir(odir, 0755), 0);
	assert_int_equal(chmod(odir, 0777), 0);
	assert_int_equal(symlink(f->dir, link), 0);
	refused(path, odir);
}

/* hib_open_trusted follows no link at all, wherever it is, and says so. */
static void open_trusted_refuses_any_symlink(void **state)
{
	struct fx *f = *state;
	struct hib_error err = { 0 };
	char link[200], path[300];

	need_root();
	snprintf(link, sizeof(link), "%s/lnk", f->root);
	snprintf(path, sizeof(path), "%s/hibernate.conf", link);
	assert_int_equal(symlink(f->dir, link), 0);
	assert_int_equal(hib_path_trusted(path, NULL), 0); /* root's link: fine to follow */
	assert_int_equal(hib_open_trusted(path, 0, &err), -ELOOP);
	assert_non_null(strstr(err.msg, link));
	assert_non_null(strstr(err.msg, "readlink -f"));
	assert_int_equal(unlink(link), 0);
	assert_int_equal(symlink(f->file, link), 0); /* the last component a link */
	assert_int_equal(hib_open_trusted(link, 0, &err), -ELOOP);
	assert_non_null(strstr(err.msg, link));
}

/* Not only the directory holding the file: every one above it. */
static void group_writable_directory_above_is_refused(void **state)
{
	struct fx *f = *state;
	struct hib_error err = { 0 };

	need_root();
	assert_int_equal(chmod(f->root, 0775), 0);
	refused(f->file, f->root);
	assert_int_equal(hib_open_trusted(f->file, 0, &err), -EPERM);
	assert_non_null(strstr(err.msg, f->root));
	assert_int_equal(chmod(f->root, 0755), 0);
	assert_int_equal(chown(f->root, 1000, 0), 0);
	refused(f->file, f->root);
}

/* The descriptor is what was checked: the path replaced after the check
 * (here by a file anyone could have written) changes nothing read through it. */
static void open_trusted_reads_what_was_checked(void **state)
{
	struct fx *f = *state;
	struct hib_error err = { 0 };
	char evil[200], buf[64] = "";
	int fd, fd2;
	FILE *fp;

	need_root();
	fd = hib_open_trusted(f->file, 0, &err);
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_false(fcntl(fd, F_GETFL) & O_NONBLOCK);
	snprintf(evil, sizeof(evil), "%s/evil", f->dir);
	fp = fopen(evil, "w");
	assert_non_null(fp);
	fputs("OnSuspend = evil\n", fp);
	fclose(fp);
	assert_int_equal(chmod(evil, 0666), 0);
	assert_int_equal(rename(evil, f->file), 0);
	assert_int_equal(read(fd, buf, sizeof(buf) - 1), 15);
	assert_string_equal(buf, "compress = lz4\n");
	close(fd);
	/* What opening the path again (check, then open by name) would have read. */
	fd2 = open(f->file, O_RDONLY | O_CLOEXEC);
	assert_true(fd2 >= 0);
	memset(buf, 0, sizeof(buf));
	assert_true(read(fd2, buf, sizeof(buf) - 1) > 0);
	assert_string_equal(buf, "OnSuspend = evil\n");
	close(fd2);
	assert_int_equal(hib_open_trusted(f->file, 0, &err), -EPERM);
}

/* A FIFO is refused at once, not waited on; a directory only when asked for. */
static void open_trusted_wants_a_regular_file(void **state)
{
	struct fx *f = *state;
	struct hib_error err = { 0 };
	char fifo[200];
	int fd;

	need_root();
	snprintf(fifo, sizeof(fifo), "%s/fifo", f->dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(hib_open_trusted(fifo, 0, &err), -EINVAL);
	assert_int_equal(hib_open_trusted(f->dir, 0, &err), -EINVAL);
	fd = hib_open_trusted(f->dir, O_DIRECTORY, &err);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(hib_open_trusted("/tmp", O_DIRECTORY, &err), -EPERM);
}

/* In a sticky directory others write, a second name for a root file may be theirs. */
static void hard_link_in_sticky_directory_is_refused(void **state)
{
	struct fx *f = *state;
	struct hib_error err = { 0 };
	char other[200];

	need_root();
	snprintf(other, sizeof(other), "%s/other", f->dir);
	assert_int_equal(link(f->file, other), 0);
	assert_int_equal(hib_path_trusted(f->file, NULL), 0); /* root's directory: fine */
	assert_int_equal(chmod(f->dir, 01777), 0);
	assert_int_equal(hib_path_trusted(f->file, &err), -EPERM);
	assert_non_null(strstr(err.msg, "hard link"));
	assert_int_equal(unlink(other), 0);
	assert_int_equal(hib_path_trusted(f->file, NULL), 0);
}

/* A relative path: the working directory's path is walked too. */
static void relative_path_walks_from_root(void **state)
{
	struct fx *f = *state;
	char cwd[4096];
	int fd;

	need_root();
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(f->dir), 0);
	fd = hib_open_trusted("./hibernate.conf", 0, NULL);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(f->root, 0777), 0);
	assert_int_equal(hib_open_trusted("hibernate.conf", 0, NULL), -EPERM);
	assert_int_equal(hib_path_trusted("../d/hibernate.conf", NULL), -EPERM);
	assert_int_equal(chdir(cwd), 0);
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
		cmocka_unit_test_setup_teardown(middle_symlink_in_open_directory_is_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(open_trusted_refuses_any_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(group_writable_directory_above_is_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(open_trusted_reads_what_was_checked, setup,
						teardown),
		cmocka_unit_test_setup_teardown(open_trusted_wants_a_regular_file, setup, teardown),
		cmocka_unit_test_setup_teardown(hard_link_in_sticky_directory_is_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(relative_path_walks_from_root, setup, teardown),
		cmocka_unit_test_setup_teardown(run_lock_refuses_a_second_run, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
