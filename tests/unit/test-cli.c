// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The hibernate program: options, exit codes, messages, and the commands
 * that never need the snapshot device (status, invalidate, resume of a target
 * with no image). Every run gets --config pointing at a file of this test, so
 * the host's /etc/hibernate.conf does not matter, and resume gets a
 * --snapshot-device that does not exist: the host's /dev/snapshot is never
 * opened, whatever the program does.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include <cmocka.h>

#include "frontend/config.h"
#include "frontend/stats.h"
#include "helpers.h"

#ifndef HIBERNATE_BIN_DEFAULT
#define HIBERNATE_BIN_DEFAULT ""
#endif

#define NO_SNAPSHOT "/nonexistent/hib-test/snapshot"

static const char *bin(void)
{
	const char *b = getenv("HIBERNATE_BIN");

	return b && *b ? b : HIBERNATE_BIN_DEFAULT;
}

struct run {
	int status; /* exit code, or 128 + signal */
	char *out;
	char *err;
};

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

static char *slurp(int fd)
{
	size_t cap = 4096, n = 0;
	char *s = malloc(cap);
	ssize_t k;

	if (!s)
		die("malloc");
	lseek(fd, 0, SEEK_SET);
	while ((k = read(fd, s + n, cap - n - 1)) > 0) {
		n += (size_t)k;
		if (cap - n < 2 && !(s = realloc(s, cap *= 2)))
			die("realloc");
	}
	s[n] = 0;
	close(fd);
	return s;
}

/* Run the program with @args (NULL-terminated), stdin empty; 10 s at most. */
static struct run run_argv(const char *const *args)
{
	char outp[PATH_MAX], errp[PATH_MAX];
	int out = make_temp(outp, "cli-out"), err = make_temp(errp, "cli-err");
	const char *argv[32];
	struct run r = { 0 };
	size_t n = 0;
	pid_t pid;
	int st = 0;

	unlink(outp);
	unlink(errp);
	argv[n++] = bin();
	for (; *args && n < 31; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		dup2(null, 0);
		dup2(out, 1);
		dup2(err, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	for (int waited = 0;; waited += 10) {
		struct timespec ts = { 0, 10000000 };
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (waited > 10000) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			break;
		}
		nanosleep(&ts, NULL);
	}
	r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r.out = slurp(out);
	r.err = slurp(err);
	if (getenv("HIB_TEST_VERBOSE"))
		fprintf(stderr, "# exit %d\n# stdout: %s\n# stderr: %s\n", r.status, r.out, r.err);
	return r;
}

#define RUN(...) run_argv((const char *const[]){ __VA_ARGS__, NULL })

static void expect(const struct run *r, int status, const char *in_out, const char *in_err)
{
	if (r->status != status || (in_out && !strstr(r->out, in_out)) ||
	    (in_err && !strstr(r->err, in_err)))
		fail_msg(
			"exit %d (want %d)\n--- stdout (want '%s'):\n%s--- stderr (want '%s'):\n%s",
			r->status, status, in_out ? in_out : "", r->out, in_err ? in_err : "",
			r->err);
}

/* Fixtures: an empty config file and a swap file, per case. */
struct fx {
	char conf[PATH_MAX];
	char swap[PATH_MAX];
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct stat st;

	if (!f)
		return -1;
	if (!*bin() || stat(bin(), &st) != 0 || !(st.st_mode & S_IXUSR)) {
		fprintf(stderr, "no hibernate program at '%s' (HIBERNATE_BIN)\n", bin());
		free(f);
		return -1;
	}
	close(make_temp(f->conf, "conf"));
	make_swap_path(f->swap, "cli", 600);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	unlink(f->conf);
	unlink(f->swap);
	free(f);
	return 0;
}

static void help_prints_usage(void **state)
{
	struct fx *f = *state;
	struct run r = RUN("--config", f->conf, "--help");

	expect(&r, 0, "Usage:", NULL);
	assert_non_null(strstr(r.out, "hibernate status"));
	assert_string_equal(r.err, "");
	run_free(&r);
	r = RUN("-h");
	expect(&r, 0, "Usage:", NULL);
	run_free(&r);
}

static void version_prints_library_version(void **state)
{
	char want[64];
	struct run r;

	(void)state;
	snprintf(want, sizeof(want), "hibernate %s\n", hib_version());
	r = RUN("--version");
	expect(&r, 0, NULL, NULL);
	assert_string_equal(r.out, want);
	run_free(&r);
	r = RUN("-V");
	expect(&r, 0, NULL, NULL);
	assert_string_equal(r.out, want);
	run_free(&r);
}

struct usage_case {
	const char *name;
	const char *args[8];
	const char *in_err;
};

static const struct usage_case usage_cases[] = {
	{ "unknown_option_exits_2", { "status", "--frobnicate" }, "Try 'hibernate --help'" },
	{ "unknown_short_option_exits_2", { "-Z", "status" }, "Try 'hibernate --help'" },
	{ "missing_option_argument_exits_2", { "status", "--device" }, "Try 'hibernate --help'" },
	{ "unknown_command_exits_2", { "sleep" }, "unknown command 'sleep'" },
	{ "extra_argument_exits_2", { "status", "now" }, "unexpected argument 'now'" },
	{ "bad_offset_exits_2", { "status", "--offset", "12abc" }, "--offset" },
	{ "systemd_sleep_unknown_operation_exits_2",
	  { "--systemd-sleep", "suspend" },
	  "--systemd-sleep: 'suspend' is none of hibernate, hybrid-sleep" },
	{ "negative_offset_exits_2", { "status", "--offset", "-5" }, "--offset" },
	{ "empty_offset_exits_2", { "status", "--offset", "" }, "--offset" },
	{ "bogus_compress_exits_2", { "status", "--compress", "bogus" }, "compress" },
	{ "lz4_level_exits_2", { "status", "-c", "lz4:5" }, "compress" },
	{ "bad_threads_exits_2", { "status", "--threads", "many" }, "threads" },
	{ "bad_image_size_exits_2", { "status", "--image-size", "big" }, "image-size" },
	{ "bad_powerdown_exits_2", { "status", "--powerdown", "nap" }, "powerdown" },
	{ "bad_loglevel_exits_2", { "status", "--loglevel", "9" }, "loglevel" },
	{ "offset_without_file_exits_2", { "offset" }, "offset" },
	{ "prepare_file_without_size_exits_2",
	  { "prepare-file", "/nonexistent/img" },
	  "prepare-file" },
	{ "config_without_action_exits_2", { "config" }, "config: get KEY" },
	{ "config_unknown_action_exits_2", { "config", "set" }, "config: get KEY" },
	{ "config_get_without_key_exits_2", { "config", "get" }, "config: get KEY" },
	{ "config_get_two_keys_exits_2", { "config", "get", "a", "b" }, "config: get KEY" },
	{ "config_dump_with_key_exits_2", { "config", "dump", "device" }, "config: get KEY" },
	{ "config_get_unknown_key_exits_2", { "config", "get", "nope" }, "unknown key 'nope'" },
	{ "config_get_hook_line_exits_2", { "config", "get", "OnSuspend" }, "unknown key" },
};

static void bad_usage(void **state)
{
	const struct usage_case *c = *state;
	struct fx f;
	struct fx *fp = &f;
	const char *args[16];
	size_t n = 0;
	struct run r;

	assert_int_equal(fx_setup((void **)&fp), 0);
	args[n++] = "--config";
	args[n++] = fp->conf;
	args[n++] = "--device";
	args[n++] = fp->swap;
	for (size_t i = 0; c->args[i]; i++)
		args[n++] = c->args[i];
	args[n] = NULL;
	r = run_argv(args);
	expect(&r, 2, NULL, c->in_err);
	if (!strstr(r.err, "Try 'hibernate --help'"))
		fail_msg("no pointer to --help: %s", r.err);
	assert_string_equal(r.out, "");
	run_free(&r);
	fx_teardown((void **)&fp);
}

static void status_plain_swap(void **state)
{
	struct fx *f = *state;
	uint64_t h = hash_file(f->swap);
	struct run r = RUN("status", "--config", f->conf, "--device", f->swap);
	struct stat st;
	char want[64];

	assert_int_equal(stat(f->swap, &st), 0);
	snprintf(want, sizeof(want), "size-bytes: %lld\n", (long long)st.st_size);
	expect(&r, 0, "image: none", NULL);
	assert_non_null(strstr(r.out, f->swap));
	assert_non_null(strstr(r.out, "offset-pages: 0\n"));
	assert_non_null(strstr(r.out, want));
	assert_non_null(strstr(r.out, "SWAPSPACE2"));
	assert_int_equal(hash_file(f->swap), h);
	run_free(&r);
}

static void status_missing_device(void **state)
{
	struct fx *f = *state;
	struct run r = RUN("status", "--config", f->conf, "--device", "/nonexistent/swap");

	expect(&r, 1, NULL, "/nonexistent/swap");
	assert_string_equal(r.out, "");
	run_free(&r);
}

static void status_not_a_device_spec(void **state)
{
	struct fx *f = *state;
	struct run r = RUN("status", "--config", f->conf, "--device", "swap-please");

	expect(&r, 1, NULL, "swap-please");
	run_free(&r);
}

static void status_offset_beyond_end(void **state)
{
	struct fx *f = *state;
	struct run r = RUN("status", "--config", f->conf, "--device", f->swap, "--offset", "600");

	expect(&r, 1, NULL, "beyond the end");
	assert_non_null(strstr(r.err, f->swap));
	run_free(&r);
}

static void status_of_zeros_says_not_swap(void **state)
{
	struct fx *f = *state;
	struct run r;
	int fd = open(f->swap, O_WRONLY | O_TRUNC);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 64 * TEST_PAGE), 0);
	close(fd);
	r = RUN("status", "--config", f->conf, "--device", f->swap);
	expect(&r, 0, "not a swap area", NULL);
	assert_non_null(strstr(r.out, "image: none"));
	run_free(&r);
}

static void config_unknown_key_names_file_and_line(void **state)
{
	struct fx *f = *state;
	char want[PATH_MAX + 8];
	struct run r;

	write_text_file(f->conf, "# conf\ncompress = lz4\nresume-device = /dev/vda2\n");
	r = RUN("status", "--config", f->conf, "--device", f->swap);
	snprintf(want, sizeof(want), "%s:3:", f->conf);
	expect(&r, 1, NULL, want);
	assert_non_null(strstr(r.err, "resume-device"));
	run_free(&r);
}

static void config_bad_value_names_file_line_key(void **state)
{
	struct fx *f = *state;
	char want[PATH_MAX + 8];
	struct run r;

	write_text_file(f->conf, "threads = 2\n\nthreads = -3\n");
	r = RUN("status", "--config", f->conf, "--device", f->swap);
	snprintf(want, sizeof(want), "%s:3:", f->conf);
	expect(&r, 1, NULL, want);
	assert_non_null(strstr(r.err, "threads"));
	run_free(&r);
}

static void config_named_but_missing(void **state)
{
	struct fx *f = *state;
	struct run r =
		RUN("status", "--config", "/nonexistent/hibernate.conf", "--device", f->swap);

	expect(&r, 1, NULL, "/nonexistent/hibernate.conf");
	run_free(&r);
}

/* Root obeys the file: one others may write is refused, with the fix. */
static void config_writable_by_others_refused(void **state)
{
	struct fx *f = *state;
	char want[2 * PATH_MAX + 64];
	struct run r;

	if (geteuid() != 0)
		skip();
	write_text_file(f->conf, "OnSuspend 10 echo hi\n");
	assert_int_equal(chmod(f->conf, 0666), 0);
	r = RUN("status", "--config", f->conf, "--device", f->swap);
	snprintf(want, sizeof(want), "chown root:root %s; chmod go-w %s", f->conf, f->conf);
	expect(&r, 1, NULL, want);
	run_free(&r);
	assert_int_equal(chmod(f->conf, 0644), 0);
	r = RUN("status", "--config", f->conf, "--device", f->swap);
	expect(&r, 0, NULL, NULL);
	run_free(&r);
}

/* While another run holds /run/hibernate.lock, hibernate refuses at once,
 * naming it; the lock is ours here, as a running hibernate would hold it. */
static void second_hibernate_refused(void **state)
{
	struct fx *f = *state;
	char want[128];
	struct run r;
	int fd;

	if (geteuid() != 0)
		skip();
	fd = open("/run/hibernate.lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	assert_int_equal(ftruncate(fd, 0), 0);
	dprintf(fd, "%d\n", (int)getpid());
	r = RUN("--config", f->conf, "--device", f->swap);
	snprintf(want, sizeof(want), "another hibernate is running (pid %d, /run/hibernate.lock)",
		 (int)getpid());
	expect(&r, 1, NULL, want);
	run_free(&r);
	close(fd);
}

/* The test-only variables (hibernate(8)) are not even named in a binary built
 * without -Dtest_knobs=true, the default: root obeys no HIBERNATE_HOOKS_DIRS. */
static void test_knobs_absent_by_default(void **state)
{
	static const char *const knobs[] = { "HIBERNATE_HOOKS_DIRS", "HIBERNATE_TEST_PAUSE",
					     "HIBERNATE_DOCTOR_ROOT", "HIBERNATE_TEST_POWER_SUPPLY",
					     "HIBERNATE_TEST_STATE_DIR" };
	FILE *fp = fopen(bin(), "rb");
	static char buf[1 << 16];
	size_t n, keep = 0;

	(void)state;
#ifdef HIB_TEST_KNOBS
	skip();
#endif
	assert_non_null(fp);
	/* Each window overlaps the last by a name's length, so none is cut in two. */
	while ((n = fread(buf + keep, 1, sizeof(buf) - keep, fp)) > 0) {
		n += keep;
		for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++)
			if (memmem(buf, n, knobs[i], strlen(knobs[i])))
				fail_msg("%s names %s: built with test knobs", bin(), knobs[i]);
		keep = n < 32 ? n : 32;
		memmove(buf, buf + n - keep, keep);
	}
	fclose(fp);
}

/* doctor looks for the resume step's command, "/hibernate resume", in the
 * initramfs, where the binary is too: the binary must not carry it, or an
 * initramfs without the step would pass. */
static void binary_lacks_resume_step_command(void **state)
{
	static const char step[] = "/hibernate resume";
	FILE *fp = fopen(bin(), "rb");
	static char buf[1 << 16];
	size_t n, keep = 0;

	(void)state;
	assert_non_null(fp);
	while ((n = fread(buf + keep, 1, sizeof(buf) - keep, fp)) > 0) {
		n += keep;
		if (memmem(buf, n, step, sizeof(step) - 1))
			fail_msg("%s carries \"%s\": doctor would find it in any initramfs "
				 "holding the binary",
				 bin(), step);
		keep = n < 32 ? n : 32;
		memmove(buf, buf + n - keep, keep);
	}
	fclose(fp);
}

/* The device may come from the config file. */
static void config_device_used(void **state)
{
	struct fx *f = *state;
	char text[PATH_MAX + 32];
	struct run r;

	snprintf(text, sizeof(text), "device = %s\n", f->swap);
	write_text_file(f->conf, text);
	r = RUN("status", "--config", f->conf);
	expect(&r, 0, "image: none", NULL);
	assert_non_null(strstr(r.out, f->swap));
	run_free(&r);
	/* --device wins over it. */
	r = RUN("status", "--config", f->conf, "--device", "/nonexistent/other");
	expect(&r, 1, NULL, "/nonexistent/other");
	run_free(&r);
}

/* config get: the value the program uses, bare, one line; nothing on stderr. */
static void config_get_prints_the_effective_value(void **state)
{
	struct fx *f = *state;
	struct run r;

	write_text_file(f->conf, "kernel-mismatch = \"keep\"\n"
				 "  key-file = '/etc/my key'  \n"
				 "# device = /dev/commented\n");
	r = RUN("--config", f->conf, "config", "get", "kernel-mismatch");
	expect(&r, 0, NULL, NULL);
	assert_string_equal(r.out, "keep\n");
	assert_string_equal(r.err, "");
	run_free(&r);
	r = RUN("config", "get", "key-file", "--config", f->conf);
	expect(&r, 0, NULL, NULL);
	assert_string_equal(r.out, "/etc/my key\n");
	run_free(&r);
	/* Unset: an empty line, and success. */
	r = RUN("--config", f->conf, "config", "get", "device");
	expect(&r, 0, NULL, NULL);
	assert_string_equal(r.out, "\n");
	run_free(&r);
	/* An option that stands for a key is part of the effective value. */
	r = RUN("--config", f->conf, "--key-file", "/other", "config", "get", "key-file");
	expect(&r, 0, NULL, NULL);
	assert_string_equal(r.out, "/other\n");
	run_free(&r);
}

/* A file the program refuses gives a script no value: exit 1, the file and line said. */
static void config_get_of_a_bad_file_fails(void **state)
{
	struct fx *f = *state;
	char want[PATH_MAX + 8];
	struct run r;

	write_text_file(f->conf, "key-file = /k\nkernel-mismatch = \"kept\"\n");
	snprintf(want, sizeof(want), "%s:2:", f->conf);
	r = RUN("--config", f->conf, "config", "get", "key-file");
	expect(&r, 1, NULL, want);
	assert_string_equal(r.out, "");
	run_free(&r);
	r = RUN("--config", f->conf, "config", "check");
	expect(&r, 1, NULL, want);
	assert_non_null(strstr(r.err, "kernel-mismatch"));
	assert_string_equal(r.out, "");
	run_free(&r);
	r = RUN("--config", "/nonexistent/hibernate.conf", "config", "check");
	expect(&r, 1, NULL, "/nonexistent/hibernate.conf");
	run_free(&r);
}

static void config_check_of_a_good_file(void **state)
{
	struct fx *f = *state;
	struct run r;

	write_text_file(f->conf, "device = \"/dev/vda2\"\nOnSuspend 10 true\n");
	r = RUN("--config", f->conf, "config", "check");
	expect(&r, 0, "valid", NULL);
	assert_string_equal(r.err, "");
	run_free(&r);
}

/* config dump: every key, "key = value" (value: the rest of the line), then the
 * OnSuspend / OnResume lines as the file has them. */
static void config_dump_lists_every_key(void **state)
{
	struct fx *f = *state;
	const char *key;
	char want[128];
	struct run r;

	write_text_file(f->conf, "services = \"a b\"\nOnResume 07 logger x\n");
	r = RUN("--config", f->conf, "config", "dump");
	expect(&r, 0, "\nservices = a b\n", NULL);
	assert_non_null(strstr(r.out, "\nkey-file = \n"));
	assert_non_null(strstr(r.out, "\nOnResume 07 logger x\n"));
	for (size_t i = 0; (key = hib_config_key(i, NULL)); i++) {
		snprintf(want, sizeof(want), "%s = ", key);
		if (!strstr(r.out, want))
			fail_msg("config dump lacks '%s':\n%s", key, r.out);
	}
	run_free(&r);
}

static void resume_without_image_writes_nothing(void **state)
{
	struct fx *f = *state;
	uint64_t h = hash_file(f->swap);
	struct run r = RUN("resume", "-q", "--config", f->conf, "--device", f->swap,
			   "--snapshot-device", NO_SNAPSHOT);

	expect(&r, 0, NULL, NULL);
	assert_int_equal(hash_file(f->swap), h);
	run_free(&r);
}

/* resume= naming a filesystem or zeros: no image, the boot goes on, but said. */
static void resume_of_non_swap_warns_and_writes_nothing(void **state)
{
	struct fx *f = *state;
	int fd = open(f->swap, O_WRONLY | O_TRUNC);
	uint64_t h;
	struct run r;

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 64 * TEST_PAGE), 0);
	close(fd);
	h = hash_file(f->swap);
	r = RUN("resume", "--config", f->conf, "--device", f->swap, "--snapshot-device",
		NO_SNAPSHOT);
	expect(&r, 0, NULL, "not a swap area");
	assert_non_null(strstr(r.err, f->swap));
	assert_int_equal(hash_file(f->swap), h);
	run_free(&r);
}

static void resume_of_foreign_target_writes_nothing(void **state)
{
	struct fx *f = *state;
	uint8_t kernel[20] = "SWAPSPACE2S1SUSPEND";
	uint64_t h;
	struct run r;

	pwrite_at(f->swap, TEST_PAGE - 20, kernel, sizeof(kernel));
	h = hash_file(f->swap);
	r = RUN("resume", "-q", "--config", f->conf, "--device", f->swap, "--snapshot-device",
		NO_SNAPSHOT);
	expect(&r, 0, NULL, NULL);
	assert_int_equal(hash_file(f->swap), h);
	run_free(&r);
}

/* Hibernate fails on the target before it needs the snapshot device. */
static void hibernate_missing_device_fails(void **state)
{
	struct fx *f = *state;
	struct run r = RUN("--config", f->conf, "--device", "/nonexistent/swap",
			   "--snapshot-device", NO_SNAPSHOT);

	expect(&r, 1, NULL, "/nonexistent/swap");
	run_free(&r);
}

/* suspend-then-hibernate that could not hibernate does not suspend either: it
 * fails before the sleep, naming the target. */
static void suspend_then_hibernate_without_target_fails_first(void **state)
{
	struct fx *f = *state;
	struct run r = RUN("--config", f->conf, "--device", "/nonexistent/swap",
			   "--snapshot-device", NO_SNAPSHOT, "--systemd-sleep",
			   "suspend-then-hibernate");

	expect(&r, 1, NULL, "/nonexistent/swap");
	if (!strstr(r.err, "cannot hibernate with hibernate(8), so it does not suspend either"))
		fail_msg("no word on the suspend not done: %s", r.err);
	if (strstr(r.err, "suspending to RAM"))
		fail_msg("it went to suspend: %s", r.err);
	run_free(&r);
}

static void invalidate_plain_swap(void **state)
{
	struct fx *f = *state;
	uint64_t h = hash_file(f->swap);
	struct run r = RUN("invalidate", "--config", f->conf, "--device", f->swap);

	expect(&r, 0, NULL, "no image");
	assert_int_equal(hash_file(f->swap), h);
	run_free(&r);
}

static void invalidate_missing_device(void **state)
{
	struct fx *f = *state;
	struct run r = RUN("invalidate", "--config", f->conf, "--device", "/nonexistent/swap");

	expect(&r, 1, NULL, "/nonexistent/swap");
	run_free(&r);
}

/* An image made through the library: status shows it, invalidate drops it. */
static void invalidate_image_then_status(void **state)
{
	struct fx *f = *state;
	struct hib_fake_params fp = fake_params(5, 250, 600, 0);
	struct hib_stats st;
	uint8_t page0[TEST_PAGE], after[TEST_PAGE];
	char want[64];
	struct run r;

	read_page0(f->swap, page0);
	quiet_logs();
	assert_int_equal(write_image(f->swap, &fp, HIB_COMPRESS_LZ4, 2, &st, NULL),
			 HIB_SUSPEND_WRITTEN);

	r = RUN("status", "--config", f->conf, "--device", f->swap);
	expect(&r, 0, "image: present", NULL);
	snprintf(want, sizeof(want), "stream-bytes: %" PRIu64 "\n", st.stream_bytes);
	assert_non_null(strstr(r.out, want));
	snprintf(want, sizeof(want), "image-bytes: %" PRIu64 "\n", st.stored_bytes);
	assert_non_null(strstr(r.out, want));
	assert_non_null(strstr(r.out, "codec: lz4\n"));
	run_free(&r);

	r = RUN("invalidate", "--config", f->conf, "--device", f->swap);
	expect(&r, 0, NULL, "discarded");
	run_free(&r);
	read_page0(f->swap, after);
	assert_memory_equal(after, page0, TEST_PAGE);

	r = RUN("status", "--config", f->conf, "--device", f->swap);
	expect(&r, 0, "image: none", NULL);
	run_free(&r);
}

static void status_damaged_image(void **state)
{
	struct fx *f = *state;
	struct hib_fake_params fp = fake_params(6, 100, 600, 0);
	struct run r;

	quiet_logs();
	assert_int_equal(write_image(f->swap, &fp, HIB_COMPRESS_NONE, 1, NULL, NULL),
			 HIB_SUSPEND_WRITTEN);
	xor_byte_at(f->swap, TEST_PAGE - 100, 0x01);
	r = RUN("status", "--config", f->conf, "--device", f->swap);
	expect(&r, 0, "image: damaged", NULL);
	run_free(&r);
	/* invalidate still gives the swap area back */
	r = RUN("invalidate", "--config", f->conf, "--device", f->swap);
	expect(&r, 0, NULL, NULL);
	run_free(&r);
	r = RUN("status", "--config", f->conf, "--device", f->swap);
	expect(&r, 0, "image: none", NULL);
	run_free(&r);
}

/* ---- the tables (hibernate --cli-tables) --------------------------------- */

/* Split @line at tabs into at most @max fields (empty ones kept); returns how many. */
static size_t split_tabs(char *line, char **field, size_t max)
{
	size_t n = 0;

	while (line && n < max)
		field[n++] = strsep(&line, "\t");
	return n;
}

static bool is_config_key(const char *key)
{
	const char *k;

	for (size_t i = 0; (k = hib_config_key(i, NULL)); i++)
		if (strcmp(k, key) == 0)
			return true;
	return false;
}

struct cli_opt {
	char *name, *flag, *arg, *key, *shown, *how, *why;
};

struct cli_tables {
	struct run run;
	char *cmd[16];
	size_t n_cmd;
	struct cli_opt opt[64];
	size_t n_opt;
	char *key[64][3]; /* name, option, why */
	size_t n_key;
	char *stats[64][2]; /* side, key */
	size_t n_stats;
};

static void tables_load(struct fx *f, struct cli_tables *t)
{
	char *save = NULL;

	memset(t, 0, sizeof(*t));
	t->run = RUN("--config", f->conf, "--cli-tables");
	expect(&t->run, 0, "option\t--device\t", NULL);
	for (char *line = strtok_r(t->run.out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *fl[9];
		size_t n = split_tabs(line, fl, 9);

		if (n == 3 && strcmp(fl[0], "command") == 0 && t->n_cmd < 16)
			t->cmd[t->n_cmd++] = fl[1];
		else if (n == 8 && strcmp(fl[0], "option") == 0 && t->n_opt < 64)
			t->opt[t->n_opt++] =
				(struct cli_opt){ fl[1], fl[2], fl[3], fl[4], fl[5], fl[6], fl[7] };
		else if (n == 4 && strcmp(fl[0], "key") == 0 && t->n_key < 64)
			memcpy(t->key[t->n_key++], &fl[1], sizeof(t->key[0]));
		else if (n == 3 && strcmp(fl[0], "stats") == 0 && t->n_stats < 64)
			memcpy(t->stats[t->n_stats++], &fl[1], sizeof(t->stats[0]));
		else
			fail_msg("--cli-tables: unexpected line '%s' (%zu fields)", fl[0], n);
	}
	assert_true(t->n_cmd > 0 && t->n_opt > 0 && t->n_key > 0 && t->n_stats > 0);
}

static const struct cli_opt *tables_option(const struct cli_tables *t, const char *name)
{
	for (size_t i = 0; i < t->n_opt; i++)
		if (strcmp(t->opt[i].name, name) == 0)
			return &t->opt[i];
	return NULL;
}

/* One source of truth: every key of config-keys.c has its option or says why not, and
 * every option names a key config-keys.c has or says why not. */
static void tables_hold_every_config_key(void **state)
{
	struct cli_tables t;

	tables_load(*state, &t);
	for (size_t i = 0; i < t.n_key; i++) {
		const char *name = t.key[i][0], *opt = t.key[i][1], *why = t.key[i][2];
		const struct cli_opt *o = tables_option(&t, opt);

		assert_string_equal(name, hib_config_key(i, NULL));
		if (strcmp(opt, "-") == 0 && !*why)
			fail_msg("config key '%s' has no option and no reason for it", name);
		if (strcmp(opt, "-") != 0 && (!o || strcmp(o->key, name) != 0))
			fail_msg("config key '%s' names option '%s', which does not set it", name,
				 opt);
	}
	assert_null(hib_config_key(t.n_key, NULL));
	for (size_t i = 0; i < t.n_opt; i++) {
		const struct cli_opt *o = &t.opt[i];

		if (strcmp(o->key, "-") == 0 && !*o->why)
			fail_msg("option %s sets no config key and says no reason", o->name);
		if (strcmp(o->key, "-") != 0 && !is_config_key(o->key))
			fail_msg("option %s names config key '%s', which config-keys.c lacks",
				 o->name, o->key);
	}
	run_free(&t.run);
}

/* --help is made from the tables: every shown command and option is in it, and
 * nothing hidden. */
static void help_lists_the_tables(void **state)
{
	struct fx *f = *state;
	struct cli_tables t;
	struct run h = RUN("--config", f->conf, "--help");
	char want[128];

	tables_load(f, &t);
	expect(&h, 0, "Usage:", NULL);
	for (size_t i = 1; i < t.n_cmd; i++) { /* the first is the default: no word */
		snprintf(want, sizeof(want), " hibernate %s ", t.cmd[i]);
		if (!strstr(h.out, want))
			fail_msg("--help lacks command '%s':\n%s", t.cmd[i], h.out);
	}
	for (size_t i = 0; i < t.n_opt; i++) {
		const struct cli_opt *o = &t.opt[i];
		bool shown = strcmp(o->shown, "shown") == 0;

		if (strcmp(o->flag, "-") != 0)
			snprintf(want, sizeof(want), "%s, %s", o->flag, o->name);
		else
			snprintf(want, sizeof(want), "    %s", o->name);
		if (shown != (strstr(h.out, want) != NULL))
			fail_msg("--help %s '%s':\n%s", shown ? "lacks" : "shows the hidden", want,
				 h.out);
	}
	run_free(&h);
	run_free(&t.run);
}

/* tests/check-man holds hibernate(8) to the STATS keys listed here: all of them, side
 * by side. */
static void tables_list_the_stats_keys(void **state)
{
	struct cli_tables t;
	int prev = -1;
	size_t k = 0;

	tables_load(*state, &t);
	for (size_t i = 0; i < t.n_stats; i++) {
		int side = HIB_STATS_HIBERNATE;
		const char *name;

		while ((name = hib_stats_side_name(side)) && strcmp(name, t.stats[i][0]) != 0)
			side++;
		if (side != prev) {
			assert_int_equal(side, prev + 1);
			if (prev >= 0)
				assert_null(hib_stats_key(prev, k));
			prev = side;
			k = 0;
		}
		assert_string_equal(t.stats[i][1], hib_stats_key(side, k++));
	}
	assert_int_equal(prev, HIB_STATS_RESUMED);
	assert_null(hib_stats_key(prev, k));
	run_free(&t.run);
}

/* The line of @text that starts with @start, malloc'ed; NULL when there is none. */
static char *config_line(const char *text, const char *start)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, start, strlen(start)) == 0)
			return strndup(p, strcspn(p, "\n"));
	return NULL;
}

/* An argument for each option that takes one and sets a key after the file. */
static const char *const sample_args[][2] = {
	{ "--compress", "zstd:3" },
	{ "--threads", "2" },
	{ "--image-size", "100" },
	{ "--powerdown", "reboot" },
	{ "--key-file", "/nonexistent/key" },
	{ "--loglevel", "2" },
	{ "--io", "sync" },
	{ "--tpm-pcrs", "0,2,4-7" },
	{ "--tpm-fallback", "passphrase" },
};

/* Each option that stands for a key sets that key: status says it came from an option. */
static void options_set_their_keys(void **state)
{
	struct fx *f = *state;
	struct cli_tables t;

	tables_load(f, &t);
	for (size_t i = 0; i < t.n_opt; i++) {
		const struct cli_opt *o = &t.opt[i];
		const char *arg = NULL;
		char want[64], *line;
		struct run r;

		if (strcmp(o->how, "file") != 0)
			continue;
		for (size_t k = 0; k < sizeof(sample_args) / sizeof(sample_args[0]); k++)
			if (strcmp(sample_args[k][0], o->name) == 0)
				arg = sample_args[k][1];
		if (strcmp(o->arg, "-") != 0 && !arg)
			fail_msg("test-cli has no sample argument for %s", o->name);
		r = strcmp(o->arg, "-") != 0
			    ? RUN("status", "--config", f->conf, "--device", f->swap, o->name, arg)
			    : RUN("status", "--config", f->conf, "--device", f->swap, o->name);
		expect(&r, 0, "config:\n", NULL);
		snprintf(want, sizeof(want), "  %-15s ", o->key);
		line = config_line(r.out, want);
		if (!line || !strstr(line, "(option)"))
			fail_msg("%s did not set config key '%s':\n%s", o->name, o->key, r.out);
		if (arg && !strstr(line, arg))
			fail_msg("%s %s: key '%s' does not show the value:\n%s", o->name, arg,
				 o->key, r.out);
		free(line);
		run_free(&r);
	}
	run_free(&t.run);
}

/* require-encryption follows the encryption configured, unless it is set. */
static void require_encryption_default_follows_encryption(void **state)
{
	static const struct {
		const char *conf, *want;
	} cases[] = {
		{ "", "no (resume takes plain images too)" },
		{ "encrypt = yes\n", "yes (only images sealed with a passphrase)" },
		{ "key-file = /etc/k\n", "yes (only images sealed with a key file)" },
		{ "encrypt = yes\nkey-file = /etc/k\n",
		  "yes (only images sealed with a key file)" },
		{ "key-file = /etc/k\nrequire-encryption = no\n", "no (" },
		{ "require-encryption = yes\n", "yes (only images sealed with a passphrase)" },
		/* The TPM wins over a key file, as in the key hibernate picks. */
		{ "encrypt = tpm\nkey-file = /etc/k\n",
		  "yes (only images sealed with a key sealed to the TPM)" },
	};
	struct fx *f = *state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct run r;
		char *line;

		write_text_file(f->conf, cases[i].conf);
		r = RUN("status", "--config", f->conf, "--device", f->swap);
		expect(&r, 0, "config:\n", NULL);
		line = config_line(r.out, "  require-encryption ");
		if (!line || !strstr(line, cases[i].want))
			fail_msg("config '%s': want require-encryption '%s':\n%s", cases[i].conf,
				 cases[i].want, r.out);
		free(line);
		run_free(&r);
	}
}

/* An image its own resume would refuse is not written: nothing is done. */
static void hibernate_refuses_plain_image_when_encryption_required(void **state)
{
	struct fx *f = *state;
	uint64_t before = hash_file(f->swap);
	struct run r;

	write_text_file(f->conf, "key-file = /etc/k\n");
	r = RUN("--config", f->conf, "--device", f->swap, "--snapshot-device", NO_SNAPSHOT,
		"--no-hooks");
	expect(&r, 1, NULL, "require-encryption is on (key-file is set)");
	assert_non_null(strstr(r.err, "Set encrypt = yes"));
	run_free(&r);
	assert_true(hash_file(f->swap) == before);
}

/* A passphrase with no terminal and no password agent: said plainly, with the
 * fix, before anything is touched (a unit's stdin is /dev/null). */
static void hibernate_without_terminal_or_agent_says_so(void **state)
{
	struct fx *f = *state;
	uint64_t before = hash_file(f->swap);
	struct run r;

	if (access("/run/systemd/system", F_OK) == 0) {
		/* Here systemd's agents would be asked, and would wait for an answer. */
		skip();
	}
	r = RUN("--config", f->conf, "--device", f->swap, "--offset", "0", "--snapshot-device",
		NO_SNAPSHOT, "--no-hooks", "--encrypt");
	expect(&r, 1, NULL, "nowhere to ask \"Passphrase for the hibernation image:\"");
	assert_non_null(strstr(r.err, "key-file ="));
	run_free(&r);
	assert_true(hash_file(f->swap) == before);
}

/* The key file's rules reach the user as the library words them. */
static void hibernate_refuses_readable_key_file(void **state)
{
	struct fx *f = *state;
	char key[PATH_MAX], want[PATH_MAX + 16];
	uint64_t before = hash_file(f->swap);
	struct run r;
	int fd = make_temp(key, "cli-key");

	assert_int_equal(write(fd, "0123456789abcdef0123456789abcdef", 32), 32);
	assert_int_equal(fchmod(fd, 0644), 0);
	close(fd);
	/* --offset 0: the swap file as a disk image, not the blocks under it. */
	r = RUN("--config", f->conf, "--device", f->swap, "--offset", "0", "--snapshot-device",
		NO_SNAPSHOT, "--no-hooks", "--encrypt", "--key-file", key);
	snprintf(want, sizeof(want), "chmod 600 %s", key);
	expect(&r, 1, NULL, want);
	run_free(&r);
	assert_true(hash_file(f->swap) == before);
}

#define FX(fn)                                                                                     \
	{                                                                                          \
		.name = #fn, .test_func = fn, .setup_func = fx_setup, .teardown_func = fx_teardown \
	}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		FX(help_prints_usage),
		FX(tables_hold_every_config_key),
		FX(help_lists_the_tables),
		FX(tables_list_the_stats_keys),
		FX(options_set_their_keys),
		FX(version_prints_library_version),
		FX(status_plain_swap),
		FX(status_missing_device),
		FX(status_not_a_device_spec),
		FX(status_offset_beyond_end),
		FX(status_of_zeros_says_not_swap),
		FX(config_unknown_key_names_file_and_line),
		FX(config_bad_value_names_file_line_key),
		FX(config_named_but_missing),
		FX(config_writable_by_others_refused),
		FX(second_hibernate_refused),
		FX(test_knobs_absent_by_default),
		FX(binary_lacks_resume_step_command),
		FX(config_device_used),
		FX(require_encryption_default_follows_encryption),
		FX(hibernate_refuses_plain_image_when_encryption_required),
		FX(hibernate_without_terminal_or_agent_says_so),
		FX(hibernate_refuses_readable_key_file),
		FX(config_get_prints_the_effective_value),
		FX(config_get_of_a_bad_file_fails),
		FX(config_check_of_a_good_file),
		FX(config_dump_lists_every_key),
		FX(resume_without_image_writes_nothing),
		FX(resume_of_foreign_target_writes_nothing),
		FX(resume_of_non_swap_warns_and_writes_nothing),
		FX(hibernate_missing_device_fails),
		FX(suspend_then_hibernate_without_target_fails_first),
		FX(invalidate_plain_swap),
		FX(invalidate_missing_device),
		FX(invalidate_image_then_status),
		FX(status_damaged_image),
	};
	enum {
		N_F = sizeof(fixed) / sizeof(fixed[0]),
		N_U = sizeof(usage_cases) / sizeof(usage_cases[0]),
	};
	struct CMUnitTest tests[N_F + N_U];
	size_t n = 0;

	for (size_t i = 0; i < N_F; i++)
		tests[n++] = fixed[i];
	for (size_t i = 0; i < N_U; i++)
		tests[n++] = (struct CMUnitTest){ .name = usage_cases[i].name,
						  .test_func = bad_usage,
						  .initial_state = (void *)&usage_cases[i] };
	return _cmocka_run_group_tests("cli", tests, n, NULL, NULL);
}
