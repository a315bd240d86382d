// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Hooks: order, unwinding, exit codes, timeouts, directory precedence and
 * masking, the systemd-sleep and pm-utils conventions. Each hook is a small
 * shell script that appends what it was called with to a shared log.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "frontend/hooks.h"

struct fx {
	char root[64];
	char etc[128], usr[128], sd[128], pm[128], log[128];
	const char *dirs[3];
	const char *sd_dirs[2];
	const char *pm_dirs[2];
	struct hib_hook_config c;
	char *env[2];
	char envbuf[200];
};

static void script(const char *dir, const char *name, const char *body)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\n%s\n", body);
	fclose(f);
	assert_int_equal(chmod(path, 0755), 0);
}

/* A hook that logs "NAME ARGS" and exits with @rc in its pre phase. */
static void logger(struct fx *f, const char *dir, const char *name, int rc)
{
	char body[512];

	snprintf(body, sizeof(body),
		 "echo \"%s $*\" >> \"$HOOKLOG\"\n"
		 "[ \"$1\" = pre ] && exit %d\n"
		 "[ \"$1\" = hibernate ] && exit %d\nexit 0",
		 name, rc, rc);
	(void)f;
	script(dir, name, body);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	snprintf(f->root, sizeof(f->root), "/tmp/hib-hooks-XXXXXX");
	if (!mkdtemp(f->root))
		return -1;
	snprintf(f->etc, sizeof(f->etc), "%s/etc", f->root);
	snprintf(f->usr, sizeof(f->usr), "%s/usr", f->root);
	snprintf(f->sd, sizeof(f->sd), "%s/sd", f->root);
	snprintf(f->pm, sizeof(f->pm), "%s/pm", f->root);
	snprintf(f->log, sizeof(f->log), "%s/log", f->root);
	mkdir(f->etc, 0700);
	mkdir(f->usr, 0700);
	mkdir(f->sd, 0700);
	mkdir(f->pm, 0700);
	f->dirs[0] = f->etc;
	f->dirs[1] = f->usr;
	f->sd_dirs[0] = f->sd;
	f->pm_dirs[0] = f->pm;
	snprintf(f->envbuf, sizeof(f->envbuf), "HOOKLOG=%s", f->log);
	f->env[0] = f->envbuf;
	f->c.dirs = f->dirs;
	f->c.systemd_dirs = f->sd_dirs;
	f->c.pmutils_dirs = f->pm_dirs;
	f->c.env = f->env;
	f->c.timeout_s = 5;
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

static int run(struct fx *f, char *msg, size_t len, bool post)
{
	struct hib_hooks *h = NULL;
	struct hib_error err;
	int r;

	assert_int_equal(hib_hooks_collect(&f->c, &h, &err), 0);
	r = hib_hooks_pre(h, &f->c, msg, len);
	if (r == 0 && post)
		hib_hooks_post(h, &f->c);
	hib_hooks_free(h);
	return r;
}

static void pre_ascending_post_descending(void **state)
{
	struct fx *f = *state;
	char msg[256];

	logger(f, f->usr, "50-b", 0);
	logger(f, f->usr, "10-a", 0);
	logger(f, f->etc, "90-c", 0);
	assert_int_equal(run(f, msg, sizeof(msg), true), 0);
	assert_string_equal(read_small_text(f->log), "10-a pre hibernate\n50-b pre hibernate\n"
						     "90-c pre hibernate\n90-c post hibernate\n"
						     "50-b post hibernate\n10-a post hibernate\n");
}

static void failure_unwinds_only_what_ran(void **state)
{
	struct fx *f = *state;
	char msg[256];

	logger(f, f->usr, "10-a", 0);
	logger(f, f->usr, "20-b", 0);
	logger(f, f->usr, "30-fails", 1);
	logger(f, f->usr, "40-never", 0);
	assert_int_equal(run(f, msg, sizeof(msg), true), -EIO);
	assert_string_equal(read_small_text(f->log), "10-a pre hibernate\n20-b pre hibernate\n"
						     "30-fails pre hibernate\n20-b post hibernate\n"
						     "10-a post hibernate\n");
	assert_non_null(strstr(msg, "30-fails"));
	assert_non_null(strstr(msg, "exit status 1"));
}

static void force_goes_on_after_a_failure(void **state)
{
	struct fx *f = *state;
	char msg[256];

	f->c.force = true;
	logger(f, f->usr, "10-fails", 1);
	logger(f, f->usr, "20-b", 0);
	assert_int_equal(run(f, msg, sizeof(msg), true), 0);
	/* The failed hook gets no post: its pre did not do its work. */
	assert_string_equal(read_small_text(f->log), "10-fails pre hibernate\n20-b pre hibernate\n"
						     "20-b post hibernate\n");
}

static void exit_2_aborts_with_the_hooks_message(void **state)
{
	struct fx *f = *state;
	char msg[256];

	logger(f, f->usr, "10-a", 0);
	script(f->usr, "20-veto", "[ \"$1\" = pre ] && { echo 'a DVD is being burned'; exit 2; }");
	assert_int_equal(run(f, msg, sizeof(msg), true), -ECANCELED);
	assert_string_equal(msg, "20-veto: a DVD is being burned");
	assert_string_equal(read_small_text(f->log), "10-a pre hibernate\n10-a post hibernate\n");
}

static void exit_3_aborts_silently(void **state)
{
	struct fx *f = *state;
	char msg[256];

	script(f->usr, "20-quiet", "echo noise; exit 3");
	assert_int_equal(run(f, msg, sizeof(msg), true), -ECANCELED);
	assert_string_equal(msg, "");
}

static void timeout_kills_and_aborts(void **state)
{
	struct fx *f = *state;
	char msg[256];

	f->c.timeout_s = 1;
	script(f->usr, "10-hangs", "sleep 30 & sleep 30");
	assert_int_equal(run(f, msg, sizeof(msg), true), -EIO);
	assert_non_null(strstr(msg, "did not finish within 1 s"));
}

static void etc_overrides_usr_and_dev_null_masks(void **state)
{
	struct fx *f = *state;
	char msg[256], link[256];

	script(f->usr, "10-x", "echo usr-x >> \"$HOOKLOG\"");
	script(f->etc, "10-x", "echo etc-x >> \"$HOOKLOG\"");
	script(f->usr, "20-masked", "echo masked-ran >> \"$HOOKLOG\"");
	snprintf(link, sizeof(link), "%s/20-masked", f->etc);
	assert_int_equal(symlink("/dev/null", link), 0);
	assert_int_equal(run(f, msg, sizeof(msg), false), 0);
	assert_string_equal(read_small_text(f->log), "etc-x\n");
}

static void badly_named_and_non_executable_ignored(void **state)
{
	struct fx *f = *state;
	char msg[256], path[256];

	script(f->usr, "noprefix", "echo bad >> \"$HOOKLOG\"");
	script(f->usr, "5-short", "echo bad >> \"$HOOKLOG\"");
	script(f->usr, "30-notexec", "echo bad >> \"$HOOKLOG\"");
	snprintf(path, sizeof(path), "%s/30-notexec", f->usr);
	chmod(path, 0644);
	logger(f, f->usr, "40-ok", 0);
	assert_int_equal(run(f, msg, sizeof(msg), false), 0);
	assert_string_equal(read_small_text(f->log), "40-ok pre hibernate\n");
}

static void environment_is_set(void **state)
{
	struct fx *f = *state;
	char msg[256];

	f->c.mode = "test";
	script(f->usr, "10-env",
	       "echo \"$HIBERNATE_PHASE $HIBERNATE_MODE $SYSTEMD_SLEEP_ACTION\" >> \"$HOOKLOG\"");
	assert_int_equal(run(f, msg, sizeof(msg), true), 0);
	assert_string_equal(read_small_text(f->log), "pre test hibernate\npost test hibernate\n");
}

static void compat_hooks_join_when_enabled(void **state)
{
	struct fx *f = *state;
	char msg[256];

	logger(f, f->usr, "10-ours", 0);
	logger(f, f->usr, "90-ours", 0);
	logger(f, f->pm, "75pm", 0);
	logger(f, f->sd, "sd-hook", 0);
	logger(f, f->sd, "95-sd-numbered", 0); /* a number means nothing to systemd */
	/* Disabled: only ours. */
	assert_int_equal(run(f, msg, sizeof(msg), true), 0);
	assert_string_equal(read_small_text(f->log),
			    "10-ours pre hibernate\n90-ours pre hibernate\n"
			    "90-ours post hibernate\n10-ours post hibernate\n");
	unlink(f->log);
	f->c.systemd = f->c.pmutils = true;
	assert_int_equal(run(f, msg, sizeof(msg), true), 0);
	/* systemd-sleep hooks sit in the middle (50), pm-utils by their number; each
	 * called the way its own framework calls it. */
	assert_string_equal(
		read_small_text(f->log),
		"10-ours pre hibernate\n95-sd-numbered pre hibernate\nsd-hook pre hibernate\n"
		"75pm hibernate\n90-ours pre hibernate\n90-ours post hibernate\n75pm thaw\n"
		"sd-hook post hibernate\n95-sd-numbered post hibernate\n10-ours post hibernate\n");
}

/* systemd-sleep's arguments for each unit it runs: the operation second, this
 * step of it in SYSTEMD_SLEEP_ACTION; our own hooks keep "pre hibernate". */
static void systemd_hooks_get_the_operation(void **state)
{
	struct fx *f = *state;
	char msg[256];

	script(f->sd, "sd-env", "echo \"sd $* $SYSTEMD_SLEEP_ACTION\" >> \"$HOOKLOG\"");
	script(f->usr, "10-ours", "echo \"ours $* $SYSTEMD_SLEEP_ACTION\" >> \"$HOOKLOG\"");
	f->c.systemd = true;
	f->c.systemd_verb = "suspend-then-hibernate";
	f->c.systemd_action = "suspend";
	assert_int_equal(run(f, msg, sizeof(msg), true), 0);
	assert_string_equal(read_small_text(f->log), "ours pre hibernate suspend\n"
						     "sd pre suspend-then-hibernate suspend\n"
						     "sd post suspend-then-hibernate suspend\n"
						     "ours post hibernate suspend\n");
	unlink(f->log);
	f->c.systemd_verb = f->c.systemd_action = "hybrid-sleep";
	assert_int_equal(run(f, msg, sizeof(msg), true), 0);
	assert_string_equal(read_small_text(f->log), "ours pre hibernate hybrid-sleep\n"
						     "sd pre hybrid-sleep hybrid-sleep\n"
						     "sd post hybrid-sleep hybrid-sleep\n"
						     "ours post hibernate hybrid-sleep\n");
}

static void compat_failure_is_plain_failure(void **state)
{
	struct fx *f = *state;
	char msg[256];

	f->c.pmutils = true;
	logger(f, f->usr, "10-ours", 0);
	logger(f, f->pm, "20pm", 2); /* 2 means nothing special to pm-utils */
	assert_int_equal(run(f, msg, sizeof(msg), true), -EIO);
	assert_string_equal(read_small_text(f->log), "10-ours pre hibernate\n20pm hibernate\n"
						     "10-ours post hibernate\n");
}

static void inline_hooks_take_their_place(void **state)
{
	struct fx *f = *state;
	char msg[256];
	const struct hib_inline_hook inl[] = {
		{ 15, "echo on-suspend-15 >> \"$HOOKLOG\"", NULL },
		{ 15, NULL, "echo on-resume-15 >> \"$HOOKLOG\"" },
		{ 95, NULL, "echo on-resume-95 >> \"$HOOKLOG\"" },
	};

	f->c.inl = inl;
	f->c.n_inline = 3;
	logger(f, f->usr, "10-a", 0);
	logger(f, f->usr, "50-b", 0);
	assert_int_equal(run(f, msg, sizeof(msg), true), 0);
	assert_string_equal(read_small_text(f->log),
			    "10-a pre hibernate\non-suspend-15\n50-b pre hibernate\n"
			    "on-resume-95\n50-b post hibernate\non-resume-15\n"
			    "10-a post hibernate\n");
	/* A failure at 50: OnResume 95 was never reached, OnResume 15 was. */
	unlink(f->log);
	logger(f, f->usr, "50-b", 1);
	assert_int_equal(run(f, msg, sizeof(msg), true), -EIO);
	assert_string_equal(read_small_text(f->log),
			    "10-a pre hibernate\non-suspend-15\n50-b pre hibernate\n"
			    "on-resume-15\n10-a post hibernate\n");
}

/* Only what hibernate-hooks(7) lists, whatever the caller's environment holds
 * (the shell adds PWD itself). */
static void environment_is_clean(void **state)
{
	struct fx *f = *state;
	char msg[256], expect[512];

	setenv("FOO", "bar", 1);
	setenv("LD_PRELOAD", "/nonexistent/evil.so", 1);
	setenv("PATH", "/tmp/evil:/usr/bin:/bin", 1);
	f->c.mode = "hibernate";
	script(f->usr, "10-env",
	       "[ \"$1\" = pre ] && env | grep -v '^PWD=' | sort >> \"$HOOKLOG\"");
	assert_int_equal(run(f, msg, sizeof(msg), true), 0);
	unsetenv("FOO");
	unsetenv("LD_PRELOAD");
	setenv("PATH", "/usr/sbin:/usr/bin:/sbin:/bin", 1);
	snprintf(expect, sizeof(expect),
		 "HIBERNATE_MODE=hibernate\nHIBERNATE_PHASE=pre\nHOOKLOG=%s\nLANG=C\n"
		 "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"
		 "SYSTEMD_SLEEP_ACTION=hibernate\n",
		 f->log);
	assert_string_equal(read_small_text(f->log), expect);
}

/* Refused as a whole, naming the path and the fix; nothing runs. */
static void refuse(struct fx *f, const char *who)
{
	struct hib_hooks *h = NULL;
	struct hib_error err;
	char fix[512];

	assert_int_equal(hib_hooks_collect(&f->c, &h, &err), -EPERM);
	assert_null(h);
	assert_non_null(strstr(err.msg, who));
	snprintf(fix, sizeof(fix), "chown root:root %s; chmod go-w %s", who, who);
	assert_non_null(strstr(err.msg, fix));
	assert_string_equal(read_small_text(f->log), "");
}

static void untrusted_hook_refuses_the_cycle(void **state)
{
	struct fx *f = *state;
	char path[256];

	if (geteuid() != 0)
		skip();
	logger(f, f->usr, "10-a", 0);
	logger(f, f->etc, "50-b", 0);
	snprintf(path, sizeof(path), "%s/50-b", f->etc);
	assert_int_equal(chmod(path, 0775), 0);
	refuse(f, path);
	assert_int_equal(chmod(path, 0755), 0);
	assert_int_equal(chown(path, 1000, 1000), 0);
	refuse(f, path);
	/* A hook directory others may write: refused even with no hook in it yet. */
	unlink(path);
	assert_int_equal(chmod(f->etc, 0777), 0);
	refuse(f, f->etc);
	assert_int_equal(chmod(f->etc, 0755), 0);
	assert_int_equal(chown(f->sd, 1000, 0), 0);
	f->c.systemd = true;
	refuse(f, f->sd);
}

static volatile sig_atomic_t stop_signal;

static void on_alarm(int sig)
{
	stop_signal = sig;
}

/* A signal while a pre hook runs: that hook is killed at once, none after it
 * runs, and every post runs, the cut one's included. */
static void interrupted_pre_unwinds(void **state)
{
	struct fx *f = *state;
	struct sigaction sa = { .sa_handler = on_alarm };
	char msg[256];
	time_t t0 = time(NULL);

	logger(f, f->usr, "10-a", 0);
	script(f->usr, "20-slow",
	       "echo \"20-slow $*\" >> \"$HOOKLOG\"\n[ \"$1\" = pre ] && sleep 20\nexit 0");
	logger(f, f->usr, "30-c", 0);
	stop_signal = 0;
	f->c.interrupted = &stop_signal;
	sigaction(SIGALRM, &sa, NULL);
	alarm(1);
	assert_int_equal(run(f, msg, sizeof(msg), true), -EINTR);
	assert_true(time(NULL) - t0 < 4);
	assert_non_null(strstr(msg, "20-slow was cut short"));
	assert_string_equal(read_small_text(f->log),
			    "10-a pre hibernate\n20-slow pre hibernate\n"
			    "20-slow post hibernate\n10-a post hibernate\n");
	/* Already set before the first: nothing runs at all. */
	unlink(f->log);
	assert_int_equal(run(f, msg, sizeof(msg), true), -EINTR);
	assert_string_equal(read_small_text(f->log), "");
	signal(SIGALRM, SIG_DFL);
}

static void no_hooks_is_fine(void **state)
{
	struct fx *f = *state;
	char msg[256];

	assert_int_equal(run(f, msg, sizeof(msg), true), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(pre_ascending_post_descending, setup, teardown),
		cmocka_unit_test_setup_teardown(failure_unwinds_only_what_ran, setup, teardown),
		cmocka_unit_test_setup_teardown(force_goes_on_after_a_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(exit_2_aborts_with_the_hooks_message, setup,
						teardown),
		cmocka_unit_test_setup_teardown(exit_3_aborts_silently, setup, teardown),
		cmocka_unit_test_setup_teardown(timeout_kills_and_aborts, setup, teardown),
		cmocka_unit_test_setup_teardown(etc_overrides_usr_and_dev_null_masks, setup,
						teardown),
		cmocka_unit_test_setup_teardown(badly_named_and_non_executable_ignored, setup,
						teardown),
		cmocka_unit_test_setup_teardown(environment_is_set, setup, teardown),
		cmocka_unit_test_setup_teardown(compat_hooks_join_when_enabled, setup, teardown),
		cmocka_unit_test_setup_teardown(compat_failure_is_plain_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(inline_hooks_take_their_place, setup, teardown),
		cmocka_unit_test_setup_teardown(no_hooks_is_fine, setup, teardown),
		cmocka_unit_test_setup_teardown(systemd_hooks_get_the_operation, setup, teardown),
		cmocka_unit_test_setup_teardown(environment_is_clean, setup, teardown),
		cmocka_unit_test_setup_teardown(untrusted_hook_refuses_the_cycle, setup, teardown),
		cmocka_unit_test_setup_teardown(interrupted_pre_unwinds, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
