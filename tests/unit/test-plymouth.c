// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Plymouth's splash as our screen (lib/frontend/plymouth.c): the client found
 * only where plymouthd runs and answers, the messages and progress it is
 * given (every step, not every callback), and the passphrase asked through
 * it, taken whole or refused. The client here is a shell script standing in
 * for /usr/bin/plymouth; it logs each call's arguments, one call a line.
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
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "frontend/plymouth.h"
#include "helpers.h"

struct fx {
	char dir[PATH_MAX];
	char client[PATH_MAX + 32];
	char calls[PATH_MAX + 32];
	char run[PATH_MAX + 32];
};

static int fx_setup(void **state)
{
	const char *tmp = getenv("TMPDIR");
	struct fx *f = calloc(1, sizeof(*f));
	char pid[PATH_MAX + 64];

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s/hib-plymouth-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->dir))
		die("mkdtemp");
	snprintf(f->client, sizeof(f->client), "%s/plymouth", f->dir);
	snprintf(f->calls, sizeof(f->calls), "%s/calls", f->dir);
	snprintf(f->run, sizeof(f->run), "%s/run", f->dir);
	snprintf(pid, sizeof(pid), "%s/plymouth", f->run);
	if (mkdir(f->run, 0755) || mkdir(pid, 0755))
		die("mkdir run");
	snprintf(pid, sizeof(pid), "%s/plymouth/pid", f->run);
	if (close(open(pid, O_WRONLY | O_CREAT, 0644)))
		die("pid");
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

/* The stand-in client: logs "$*" as a line, then runs @body. */
static void write_client(struct fx *f, const char *body)
{
	FILE *s = fopen(f->client, "w");

	if (!s)
		die("fopen client");
	fprintf(s, "#!/bin/sh\necho \"$*\" >> '%s'\n%s\n", f->calls, body);
	if (fclose(s) != 0 || chmod(f->client, 0755) != 0)
		die("write client");
}

/* Probe with our client as the only candidate. */
static bool probe(struct fx *f, struct hib_plymouth *p)
{
	const char *clients[] = { f->client, NULL };

	return hib_plymouth_probe_at(p, f->run, clients);
}

static void probe_needs_the_daemon_to_answer(void **state)
{
	struct fx *f = *state;
	struct hib_plymouth p;
	char pid[PATH_MAX + 64];

	write_client(f, "exit 1");
	assert_false(probe(f, &p));
	assert_false(hib_plymouth_active(&p));
	assert_string_equal(read_small_text(f->calls), "--ping\n");

	write_client(f, "exit 0");
	assert_true(probe(f, &p));
	assert_string_equal(p.client, f->client);

	/* No pid file: no splash, and no client started at all. */
	unlink(f->calls);
	snprintf(pid, sizeof(pid), "%s/plymouth/pid", f->run);
	unlink(pid);
	assert_false(probe(f, &p));
	assert_string_equal(read_small_text(f->calls), "");
}

static void messages_go_to_the_splash(void **state)
{
	struct fx *f = *state;
	struct hib_plymouth p;
	struct hib_error err;

	write_client(f, "exit 0");
	assert_true(probe(f, &p));
	assert_int_equal(hib_plymouth_message(&p, "The saved image was refused: x", &err), 0);
	assert_string_equal(read_small_text(f->calls),
			    "--ping\ndisplay-message --text=The saved image was refused: x\n");
	write_client(f, "exit 3");
	assert_int_equal(hib_plymouth_message(&p, "m", &err), -EPROTO);
	assert_non_null(strstr(err.msg, f->client));
}

static void progress_every_step_and_the_end(void **state)
{
	struct fx *f = *state;
	struct hib_plymouth p;
	struct hib_error err;
	int pct, shown = 0;

	write_client(f, "exit 0");
	assert_true(probe(f, &p));
	unlink(f->calls);
	for (pct = 0; pct <= 100; pct++)
		shown += hib_plymouth_progress(&p, "Resuming", pct, 10, &err);
	/* 0, 10, ..., 100: eleven, each a bar and a line. */
	assert_int_equal(shown, 11);
	assert_non_null(strstr(read_small_text(f->calls), "system-update --progress=40\n"
							  "display-message --text=Resuming 40%\n"));
	assert_null(strstr(read_small_text(f->calls), "--progress=41"));
	/* 100 again: nothing new. */
	assert_int_equal(hib_plymouth_progress(&p, "Resuming", 100, 10, &err), 0);
}

static void quit_keeps_the_picture_and_ends_the_splash(void **state)
{
	struct fx *f = *state;
	struct hib_plymouth p;
	struct hib_error err;

	write_client(f, "exit 0");
	assert_true(probe(f, &p));
	assert_int_equal(hib_plymouth_quit(&p, &err), 0);
	assert_false(hib_plymouth_active(&p));
	assert_string_equal(read_small_text(f->calls), "--ping\nquit --retain-splash\n");
	/* Once gone, nothing more is sent to it. */
	assert_int_equal(hib_plymouth_quit(&p, &err), 0);
	assert_int_equal(hib_plymouth_message(&p, "m", &err), -ENOENT);
	assert_string_equal(read_small_text(f->calls), "--ping\nquit --retain-splash\n");
}

/* A stand-in plymouthd: a child of ours that waits to be killed, its pid in
 * the fixture's /run/plymouth/pid. */
static pid_t start_daemon(struct fx *f)
{
	char pidfile[PATH_MAX + 64];
	pid_t daemon = fork();
	FILE *s;

	if (daemon == 0) {
		pause();
		_exit(0);
	}
	assert_true(daemon > 0);
	snprintf(pidfile, sizeof(pidfile), "%s/plymouth/pid", f->run);
	s = fopen(pidfile, "w");
	assert_non_null(s);
	fprintf(s, "%d\n", daemon);
	fclose(s);
	return daemon;
}

/* plymouthd answers quit before it lets the terminal go: quit returns only
 * once it is gone. The daemon here is a child that the stand-in client has
 * killed 300 ms after it answered. */
static void quit_waits_for_the_daemon_to_go(void **state)
{
	struct fx *f = *state;
	struct hib_plymouth p;
	struct hib_error err;
	char body[256];
	pid_t daemon = start_daemon(f);

	snprintf(body, sizeof(body),
		 "[ \"$1\" = quit ] && { setsid -f sh -c 'sleep 0.3; kill %d'; } "
		 "</dev/null >/dev/null 2>&1\nexit 0",
		 daemon);
	write_client(f, body);
	assert_true(probe(f, &p));
	assert_int_equal(p.pid, daemon);
	assert_int_equal(hib_plymouth_quit(&p, &err), 0);
	/* Gone (a zombie of ours) when quit returned. */
	assert_int_equal(waitpid(daemon, NULL, WNOHANG), daemon);
}

/* A plymouthd that answers quit and stays: frozen, it would hang the
 * restore; it is killed after 5 s, and quit says so. */
static void quit_kills_a_daemon_that_stays(void **state)
{
	struct fx *f = *state;
	struct hib_plymouth p;
	struct hib_error err;
	int status = 0;
	pid_t daemon = start_daemon(f);

	write_client(f, "exit 0");
	assert_true(probe(f, &p));
	assert_int_equal(hib_plymouth_quit(&p, &err), -ETIMEDOUT);
	assert_non_null(strstr(err.msg, "killed"));
	assert_int_equal(waitpid(daemon, &status, WNOHANG), daemon);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

static void nothing_without_a_splash(void **state)
{
	struct hib_plymouth p = { .client = "", .last_pct = -1 };
	struct hib_error err;
	char buf[8];
	size_t len;

	(void)state;
	assert_int_equal(hib_plymouth_message(&p, "m", &err), -ENOENT);
	assert_int_equal(hib_plymouth_ask(&p, "P:", buf, sizeof(buf), &len, &err), -ENOENT);
}

static void passphrase_asked_in_the_splash(void **state)
{
	struct fx *f = *state;
	struct hib_plymouth p;
	struct hib_error err;
	char buf[32];
	size_t len = 0;

	write_client(f, "[ \"$1\" = ask-for-password ] && printf 'open sesame\\n'; exit 0");
	assert_true(probe(f, &p));
	assert_int_equal(hib_plymouth_ask(&p, "Passphrase for the image", buf, sizeof(buf), &len,
					  &err),
			 0);
	assert_int_equal(len, 11);
	assert_memory_equal(buf, "open sesame", 11);
	assert_non_null(strstr(read_small_text(f->calls),
			       "ask-for-password --prompt=Passphrase for the "
			       "image --number-of-tries=1\n"));
}

static void passphrase_refusals(void **state)
{
	struct fx *f = *state;
	struct hib_plymouth p;
	struct hib_error err;
	char buf[8];
	size_t len = 0;

	write_client(f, "[ \"$1\" = ask-for-password ] && exit 1; exit 0");
	assert_true(probe(f, &p));
	assert_int_equal(hib_plymouth_ask(&p, "P", buf, sizeof(buf), &len, &err), -ECANCELED);
	write_client(f, "[ \"$1\" = ask-for-password ] && printf '\\n'; exit 0");
	assert_int_equal(hib_plymouth_ask(&p, "P", buf, sizeof(buf), &len, &err), -ENODATA);
	/* Longer than the buffer: refused, never cut to a different passphrase. */
	write_client(f, "[ \"$1\" = ask-for-password ] && printf '0123456789abc'; exit 0");
	assert_int_equal(hib_plymouth_ask(&p, "P", buf, sizeof(buf), &len, &err), -E2BIG);
	assert_int_equal(len, 0);
}

#define FX(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		FX(probe_needs_the_daemon_to_answer),
		FX(messages_go_to_the_splash),
		FX(progress_every_step_and_the_end),
		cmocka_unit_test(nothing_without_a_splash),
		FX(passphrase_asked_in_the_splash),
		FX(passphrase_refusals),
		FX(quit_keeps_the_picture_and_ends_the_splash),
		FX(quit_waits_for_the_daemon_to_go),
		FX(quit_kills_a_daemon_that_stays),
	};
	quiet_logs();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
