// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Where a passphrase is asked (lib/frontend/askpass.c): the choice between
 * the terminal, a script's stdin and systemd's agents, and the agent's run —
 * its arguments, its answer taken whole or refused, nothing of ours open in
 * it. The agent here is a shell script standing in for systemd-ask-password.
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

#include "frontend/askpass.h"
#include "helpers.h"

struct fx {
	char dir[PATH_MAX];
	char agent[PATH_MAX + 32];
	char args[PATH_MAX + 32];
};

static int fx_setup(void **state)
{
	const char *tmp = getenv("TMPDIR");
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s/hib-askpass-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->dir))
		die("mkdtemp");
	snprintf(f->agent, sizeof(f->agent), "%s/systemd-ask-password", f->dir);
	snprintf(f->args, sizeof(f->args), "%s/args", f->dir);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	remove_tree(f->dir);
	free(f);
	return 0;
}

/* The stand-in agent: records its arguments and open descriptors, then runs @body. */
static void write_agent(struct fx *f, const char *body)
{
	FILE *s = fopen(f->agent, "w");

	if (!s)
		die("fopen agent");
	fprintf(s,
		"#!/bin/sh\n"
		"for a in \"$@\"; do printf '%%s\\n' \"$a\"; done > '%s'\n"
		"ls /proc/self/fd > '%s.fds'\n"
		"%s\n",
		f->args, f->args, body);
	if (fclose(s) != 0 || chmod(f->agent, 0755) != 0)
		die("write agent");
}

static void choice_follows_the_situation(void **state)
{
	static const struct {
		bool tty, data, plymouth, systemd, agent;
		enum hib_askpass_via want;
	} cases[] = {
		/* A terminal is asked directly, even under systemd. */
		{ true, false, false, true, true, HIB_ASKPASS_TTY },
		{ true, false, false, false, false, HIB_ASKPASS_TTY },
		/* A splash owns the screen: through its agent, terminal or not. */
		{ true, false, true, true, true, HIB_ASKPASS_AGENT },
		{ false, true, true, true, true, HIB_ASKPASS_AGENT },
		/* ... and where no agent can reach it (initramfs-tools runs no
		 * systemd), the splash's own question. */
		{ true, false, true, false, true, HIB_ASKPASS_PLYMOUTH },
		{ true, false, true, true, false, HIB_ASKPASS_PLYMOUTH },
		{ false, false, true, false, false, HIB_ASKPASS_PLYMOUTH },
		/* A script pipes the passphrase in. */
		{ false, true, false, true, true, HIB_ASKPASS_STDIN },
		{ false, true, false, false, false, HIB_ASKPASS_STDIN },
		/* A unit's /dev/null: the agents, or nowhere. */
		{ false, false, false, true, true, HIB_ASKPASS_AGENT },
		{ false, false, false, true, false, HIB_ASKPASS_NONE },
		{ false, false, false, false, true, HIB_ASKPASS_NONE },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hib_askpass_env env = { .stdin_tty = cases[i].tty,
					       .stdin_data = cases[i].data,
					       .plymouth = cases[i].plymouth,
					       .systemd = cases[i].systemd };

		if (cases[i].agent)
			snprintf(env.agent, sizeof(env.agent), "/usr/bin/systemd-ask-password");
		if (hib_askpass_choose(&env) != cases[i].want)
			fail_msg("case %zu: got %d, want %d", i, hib_askpass_choose(&env),
				 cases[i].want);
	}
}

static void probe_takes_the_first_executable_candidate(void **state)
{
	struct fx *f = *state;
	struct hib_askpass_env env;
	const char *candidates[] = { "/nonexistent-hib/systemd-ask-password", f->agent, NULL };

	write_agent(f, "exit 0");
	hib_askpass_probe_at(&env, candidates);
	assert_string_equal(env.agent, f->agent);
	candidates[1] = NULL;
	hib_askpass_probe_at(&env, candidates);
	assert_string_equal(env.agent, "");
	/* Found but not executable is not found. */
	chmod(f->agent, 0644);
	candidates[1] = f->agent;
	hib_askpass_probe_at(&env, candidates);
	assert_string_equal(env.agent, "");
}

/* An agent first in the caller's $PATH is not the one run: only the fixed
 * places count. (The old probe searched $PATH and found this one.) */
static void probe_ignores_path(void **state)
{
	struct fx *f = *state;
	struct hib_askpass_env env;
	char *old = strdup(getenv("PATH") ? getenv("PATH") : "");

	write_agent(f, "exit 0");
	setenv("PATH", f->dir, 1);
	hib_askpass_probe(&env);
	setenv("PATH", old, 1);
	free(old);
	assert_string_not_equal(env.agent, f->agent);
	if (env.agent[0] && strcmp(env.agent, "/usr/bin/systemd-ask-password") != 0)
		assert_string_equal(env.agent, "/bin/systemd-ask-password");
}

/* The agent sees the default environment, none of the caller's variables.
 * (The old execv passed ours: the canary and this PATH reached it.) */
static void agent_gets_a_built_environment(void **state)
{
	struct fx *f = *state;
	struct hib_error err;
	char body[PATH_MAX * 2], envfile[PATH_MAX + 40], buf[16];
	char *old = strdup(getenv("PATH") ? getenv("PATH") : "");
	size_t len = 0;

	snprintf(envfile, sizeof(envfile), "%s.env", f->args);
	snprintf(body, sizeof(body), "env | grep -Ev '^(PWD|SHLVL|_)=' | sort > '%s'; echo yes",
		 envfile);
	write_agent(f, body);
	setenv("HIB_TEST_CALLER_SECRET", "leaked", 1);
	setenv("PATH", "/tmp/hib-evil:/usr/bin:/bin", 1);
	assert_int_equal(hib_askpass_agent(f->agent, "image", "P:", 0, buf, sizeof(buf), &len,
					   &err),
			 0);
	unsetenv("HIB_TEST_CALLER_SECRET");
	setenv("PATH", old, 1);
	free(old);
	assert_int_equal(len, 3);
	assert_string_equal(read_small_text(envfile),
			    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n");
}

static void probe_sees_a_pipe_on_stdin(void **state)
{
	struct hib_askpass_env env;
	int saved = dup(STDIN_FILENO), p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	dup2(p[0], STDIN_FILENO);
	hib_askpass_probe(&env);
	assert_false(env.stdin_tty);
	assert_true(env.stdin_data);
	int null = open("/dev/null", O_RDONLY);
	dup2(null, STDIN_FILENO);
	hib_askpass_probe(&env);
	assert_false(env.stdin_tty);
	assert_false(env.stdin_data);
	dup2(saved, STDIN_FILENO);
	close(saved);
	close(null);
	close(p[0]);
	close(p[1]);
}

static void agent_answer_taken_without_newline(void **state)
{
	struct fx *f = *state;
	struct hib_error err;
	char buf[64];
	size_t len = 0;
	int keep = open("/dev/null", O_RDONLY); /* not O_CLOEXEC: must not reach the agent */

	write_agent(f, "printf 'correct horse battery\\n'");
	assert_int_equal(hib_askpass_agent(f->agent, "image",
					   "Passphrase for the hibernation image:", 90, buf,
					   sizeof(buf), &len, &err),
			 0);
	close(keep);
	assert_int_equal(len, strlen("correct horse battery"));
	assert_memory_equal(buf, "correct horse battery", len);
	assert_string_equal(read_small_text(f->args),
			    "--id=hibernate:image\n--icon=drive-harddisk\n"
			    "--timeout=90\n--no-tty\n"
			    "Passphrase for the hibernation image:\n");
	/* stdin, stdout, stderr and the directory ls reads: nothing of ours. */
	char fds[PATH_MAX + 40];
	snprintf(fds, sizeof(fds), "%s.fds", f->args);
	assert_string_equal(read_small_text(fds), "0\n1\n2\n3\n");
}

/* The stand-in agent runs @body; hib_askpass_agent's result with a @size
 * buffer, whose answer length must stay untouched unless it succeeds. */
static int ask_with(struct fx *f, const char *body, size_t size, size_t *len, struct hib_error *err)
{
	char buf[64];

	assert_true(size <= sizeof(buf));
	write_agent(f, body);
	*len = 7;
	return hib_askpass_agent(f->agent, "image", "P:", 0, buf, size, len, err);
}

static void agent_without_answer_cancels(void **state)
{
	struct fx *f = *state;
	struct hib_error err;
	size_t len;

	assert_int_equal(ask_with(f, "exit 1", 64, &len, &err), -ECANCELED);
	assert_non_null(strstr(err.msg, f->agent));
	assert_non_null(strstr(err.msg, "no answer"));
	assert_int_equal(len, 7);
	assert_non_null(strstr(read_small_text(f->args), "--timeout=0\n"));
}

static void agent_empty_answer_refused(void **state)
{
	struct fx *f = *state;
	struct hib_error err;
	size_t len;

	assert_int_equal(ask_with(f, "printf '\\n'", 64, &len, &err), -ENODATA);
	assert_int_equal(len, 7);
}

static void agent_overlong_answer_refused_not_cut(void **state)
{
	struct fx *f = *state;
	struct hib_error err;
	size_t len;

	/* 16 bytes and the newline: one more than fits. */
	assert_int_equal(ask_with(f, "printf '0123456789abcdef\\n'; head -c 100000 /dev/zero", 16,
				  &len, &err),
			 -E2BIG);
	assert_non_null(strstr(err.msg, "longer than 15 bytes"));
	assert_int_equal(len, 7);
	/* Exactly what fits, with its newline, is taken. */
	assert_int_equal(ask_with(f, "printf '0123456789abcde\\n'", 16, &len, &err), 0);
	assert_int_equal(len, 15);
}

static void missing_agent_named(void **state)
{
	struct fx *f = *state;
	struct hib_error err;
	char buf[16];
	size_t len = 7;

	assert_int_equal(hib_askpass_agent(f->agent, "image", "P:", 0, buf, sizeof(buf), &len,
					   &err),
			 -ENOENT);
	assert_non_null(strstr(err.msg, f->agent));
}

#define FX(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		FX(choice_follows_the_situation),
		FX(probe_takes_the_first_executable_candidate),
		FX(probe_ignores_path),
		FX(agent_gets_a_built_environment),
		FX(probe_sees_a_pipe_on_stdin),
		FX(agent_answer_taken_without_newline),
		FX(agent_without_answer_cancels),
		FX(agent_empty_answer_refused),
		FX(agent_overlong_answer_refused_not_cut),
		FX(missing_agent_named),
	};
	quiet_logs();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
