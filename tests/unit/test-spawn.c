// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The child-process runner (lib/util/spawn.c): exit codes and signals, the
 * environment it is given and nothing more, its output captured or cut or
 * dropped, its time limit and the stop question ending its whole process
 * group, exec failures told apart, no descriptor of ours in it.
 * The children are /bin/sh scripts.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "util/spawn.h"

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* /bin/sh -c @script, its output into @out (may be NULL), stderr per @mode. */
static int sh(const char *script, const char *const *envp, char *out, size_t size,
	      enum hib_spawn_stderr mode, struct hib_spawn_result *res, struct hib_error *err)
{
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct hib_spawn sp = { .argv = argv,
				.envp = envp,
				.stdin_fd = -1,
				.stderr_mode = mode,
				.out = out,
				.out_size = size };

	return hib_spawn_run(&sp, res, err);
}

static void exit_codes_and_signals(void **state)
{
	struct hib_spawn_result res;
	struct hib_error err;

	(void)state;
	assert_int_equal(sh("exit 0", NULL, NULL, 0, HIB_SPAWN_STDERR_NULL, &res, &err), 0);
	assert_int_equal(res.status, 0);
	assert_int_equal(sh("exit 3", NULL, NULL, 0, HIB_SPAWN_STDERR_NULL, &res, &err), 0);
	assert_int_equal(res.status, 3);
	assert_int_equal(sh("kill -TERM $$", NULL, NULL, 0, HIB_SPAWN_STDERR_NULL, &res, &err), 0);
	assert_int_equal(res.status, 128 + SIGTERM);
}

/* The child's environment is the one given, whole, and nothing of ours. */
static void environment_is_the_built_one(void **state)
{
	const char *envp[] = { "A=1", "B=two words", NULL };
	struct hib_spawn_result res;
	struct hib_error err;
	char out[512];

	(void)state;
	setenv("HIB_TEST_CALLER_SECRET", "leaked", 1);
	/* sh may add PWD, SHLVL and _ of its own: look at ours only. */
	assert_int_equal(sh("env | grep -Ev '^(PWD|SHLVL|_)=' | sort", envp, out, sizeof(out),
			    HIB_SPAWN_STDERR_MERGE, &res, &err),
			 0);
	assert_int_equal(res.status, 0);
	assert_string_equal(out, "A=1\nB=two words\n");
	assert_int_equal(sh("env | grep -Ev '^(PWD|SHLVL|_)=' | sort", NULL, out, sizeof(out),
			    HIB_SPAWN_STDERR_MERGE, &res, &err),
			 0);
	assert_string_equal(out, HIB_SPAWN_DEFAULT_ENV "\n");
	unsetenv("HIB_TEST_CALLER_SECRET");
}

static void output_captured_merged_or_dropped(void **state)
{
	struct hib_spawn_result res;
	struct hib_error err;
	char out[64];

	(void)state;
	assert_int_equal(sh("echo out; echo err >&2", NULL, out, sizeof(out),
			    HIB_SPAWN_STDERR_MERGE, &res, &err),
			 0);
	assert_string_equal(out, "out\nerr\n");
	assert_int_equal(res.out_len, 8);
	assert_false(res.truncated);
	assert_int_equal(sh("echo out; echo err >&2", NULL, out, sizeof(out), HIB_SPAWN_STDERR_NULL,
			    &res, &err),
			 0);
	assert_string_equal(out, "out\n");
	/* No buffer: the output goes nowhere, and the child still ends. */
	assert_int_equal(sh("echo out; exit 4", NULL, NULL, 0, HIB_SPAWN_STDERR_MERGE, &res, &err),
			 0);
	assert_int_equal(res.status, 4);
	assert_int_equal(res.out_len, 0);
}

/* More than the buffer: cut, said so, and the child never blocks on a full pipe. */
static void output_truncated_child_not_blocked(void **state)
{
	struct hib_spawn_result res;
	struct hib_error err;
	char out[16];
	uint64_t t0 = ms_now();

	(void)state;
	assert_int_equal(sh("head -c 1000000 /dev/zero | tr '\\0' x; exit 5", NULL, out,
			    sizeof(out), HIB_SPAWN_STDERR_MERGE, &res, &err),
			 0);
	assert_int_equal(res.status, 5);
	assert_true(res.truncated);
	assert_int_equal(res.out_len, 15);
	assert_string_equal(out, "xxxxxxxxxxxxxxx");
	assert_true(ms_now() - t0 < 10000);
	/* Raw: every byte of the buffer used, no NUL. */
	const char *argv[] = { "/bin/sh", "-c", "printf 0123456789abcdef", NULL };
	struct hib_spawn sp = { .argv = argv,
				.stdin_fd = -1,
				.out = out,
				.out_size = sizeof(out),
				.out_raw = true };
	assert_int_equal(hib_spawn_run(&sp, &res, &err), 0);
	assert_int_equal(res.out_len, 16);
	assert_false(res.truncated);
	assert_memory_equal(out, "0123456789abcdef", 16);
}

/* Past the limit: -ETIME soon after it, the child's whole group killed. */
static void timeout_kills_the_group(void **state)
{
	char dir[] = "/tmp/hib-spawn-XXXXXX", script[256], flag[128];
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct hib_spawn sp = { .argv = argv, .stdin_fd = -1, .timeout_ms = 300 };
	struct hib_spawn_result res;
	struct hib_error err;
	struct stat st;
	uint64_t t0;

	(void)state;
	if (!mkdtemp(dir))
		die("mkdtemp");
	snprintf(flag, sizeof(flag), "%s/grandchild-lived", dir);
	/* A grandchild in the background, its output away from ours (a daemon
	 * would not hold the pipe): only the group kill ends it. */
	snprintf(script, sizeof(script), "(sleep 1; touch %s) >/dev/null 2>&1 & sleep 30", flag);
	t0 = ms_now();
	assert_int_equal(hib_spawn_run(&sp, &res, &err), -ETIME);
	assert_true(ms_now() - t0 < 2000);
	assert_int_equal(res.status, 128 + SIGKILL);
	assert_non_null(strstr(err.msg, "/bin/sh"));
	assert_non_null(strstr(err.msg, "300 ms"));
	sleep(2);
	assert_int_not_equal(stat(flag, &st), 0);
	remove_tree(dir);
}

static int stop_calls;

static bool stop_after_three(void *userdata)
{
	(void)userdata;
	return ++stop_calls > 3;
}

static void stop_ends_it(void **state)
{
	const char *argv[] = { "/bin/sh", "-c", "echo started; sleep 30", NULL };
	char out[64];
	struct hib_spawn sp = { .argv = argv,
				.stdin_fd = -1,
				.out = out,
				.out_size = sizeof(out),
				.stop = stop_after_three };
	struct hib_spawn_result res;
	struct hib_error err;
	uint64_t t0 = ms_now();

	(void)state;
	stop_calls = 0;
	assert_int_equal(hib_spawn_run(&sp, &res, &err), -EINTR);
	/* Asked about every 100 ms, not in a busy loop. */
	assert_true(ms_now() - t0 < 3000);
	assert_true(stop_calls >= 4 && stop_calls < 50);
	assert_int_equal(res.status, 128 + SIGKILL);
	assert_string_equal(out, "started\n");
}

static void exec_failures_told_apart(void **state)
{
	char dir[] = "/tmp/hib-spawn-XXXXXX", path[64];
	const char *argv[] = { path, NULL };
	struct hib_spawn sp = { .argv = argv, .stdin_fd = -1 };
	struct hib_spawn_result res;
	struct hib_error err;
	int fd;

	(void)state;
	if (!mkdtemp(dir))
		die("mkdtemp");
	snprintf(path, sizeof(path), "%s/missing", dir);
	assert_int_equal(hib_spawn_run(&sp, &res, &err), -ENOENT);
	assert_non_null(strstr(err.msg, path));
	snprintf(path, sizeof(path), "%s/not-executable", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	if (fd < 0 || write(fd, "#!/bin/sh\n", 10) != 10)
		die("fixture");
	close(fd);
	assert_int_equal(hib_spawn_run(&sp, &res, &err), -EACCES);
	assert_non_null(strstr(err.msg, path));
	/* Never a search of $PATH. */
	argv[0] = "sh";
	assert_int_equal(hib_spawn_run(&sp, &res, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "sh: not an absolute path"));
	remove_tree(dir);
}

/* Only 0, 1, 2 in the child (and the directory ls reads), whatever we hold open. */
static void no_descriptor_leaks(void **state)
{
	struct hib_spawn_result res;
	struct hib_error err;
	char out[256];
	int keep = open("/dev/null", O_RDONLY); /* not O_CLOEXEC */
	int high = dup2(keep, 200);

	(void)state;
	assert_true(keep >= 0 && high == 200);
	assert_int_equal(sh("ls /proc/self/fd", NULL, out, sizeof(out), HIB_SPAWN_STDERR_INHERIT,
			    &res, &err),
			 0);
	assert_string_equal(out, "0\n1\n2\n3\n");
	close(keep);
	close(high);
}

/* stdin is /dev/null, or the descriptor given. */
static void stdin_null_or_given(void **state)
{
	const char *argv[] = { "/bin/sh", "-c", "cat", NULL };
	char out[64];
	struct hib_spawn sp = { .argv = argv, .stdin_fd = -1, .out = out, .out_size = sizeof(out) };
	struct hib_spawn_result res;
	struct hib_error err;
	int p[2];

	(void)state;
	assert_int_equal(hib_spawn_run(&sp, &res, &err), 0);
	assert_string_equal(out, "");
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "given\n", 6), 6);
	close(p[1]);
	sp.stdin_fd = p[0];
	assert_int_equal(hib_spawn_run(&sp, &res, &err), 0);
	assert_string_equal(out, "given\n");
	close(p[0]);
}

static void check_names_program_and_status(void **state)
{
	const char *argv[] = { "/bin/sh", "-c",
			       "echo 'Unit foo.service not found.'; echo more; "
			       "exit 5",
			       NULL };
	char out[128];
	struct hib_spawn sp = { .argv = argv,
				.stdin_fd = -1,
				.stderr_mode = HIB_SPAWN_STDERR_MERGE,
				.out = out,
				.out_size = sizeof(out) };
	struct hib_spawn_result res;
	struct hib_error err;

	(void)state;
	assert_int_equal(hib_spawn_check(&sp, &res, &err), -EPROTO);
	assert_int_equal(res.status, 5);
	assert_string_equal(err.msg, "/bin/sh exited with status 5: Unit foo.service not found.");
	assert_int_equal(err.error, -EPROTO);
	argv[2] = "exit 0";
	assert_int_equal(hib_spawn_check(&sp, NULL, &err), 0);
	/* No output: the status alone. */
	argv[2] = "kill -KILL $$";
	sp.out = NULL;
	assert_int_equal(hib_spawn_check(&sp, NULL, &err), -EPROTO);
	assert_string_equal(err.msg, "/bin/sh exited with status 137");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exit_codes_and_signals),
		cmocka_unit_test(environment_is_the_built_one),
		cmocka_unit_test(output_captured_merged_or_dropped),
		cmocka_unit_test(output_truncated_child_not_blocked),
		cmocka_unit_test(timeout_kills_the_group),
		cmocka_unit_test(stop_ends_it),
		cmocka_unit_test(exec_failures_told_apart),
		cmocka_unit_test(no_descriptor_leaks),
		cmocka_unit_test(stdin_null_or_given),
		cmocka_unit_test(check_names_program_and_status),
	};
	quiet_logs();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
