// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The `plymouth` client run by its fixed path through util/spawn.c, with the
 * default environment and a short time limit: a splash that stopped
 * answering costs the resume two seconds, never the boot.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "frontend/askpass.h"
#include "frontend/plymouth.h"
#include "util/error.h"
#include "util/spawn.h"

static const char *const client_paths[] = { "/usr/bin/plymouth", "/bin/plymouth", NULL };

/* A message or progress: two seconds; a question waits for the person. */
#define PLYMOUTH_TIMEOUT_MS 2000
#define PLYMOUTH_QUIT_TIMEOUT_MS 10000

/* @argv through the client: its exit status, or <0 (said in @err). */
static int plymouth_run(const char *const *argv, unsigned timeout_ms, char *out, size_t out_size,
			struct hib_spawn_result *res, struct hib_error *err)
{
	struct hib_spawn sp = { .argv = argv,
				.timeout_ms = timeout_ms,
				.stdin_fd = -1,
				.stderr_mode = HIB_SPAWN_STDERR_NULL,
				.out = out,
				.out_size = out_size,
				.out_raw = out != NULL };
	int r = hib_spawn_run(&sp, res, err);

	return r < 0 ? r : res->status;
}

bool hib_plymouth_probe_at(struct hib_plymouth *p, const char *run_dir, const char *const *clients)
{
	char pid[256];
	struct hib_error err;
	struct hib_spawn_result res;

	FILE *f;

	*p = (struct hib_plymouth){ .last_pct = -1 };
	snprintf(pid, sizeof(pid), "%s/plymouth/pid", run_dir && *run_dir ? run_dir : "/run");
	f = fopen(pid, "re");
	if (!f)
		return false;
	if (fscanf(f, "%d", &p->pid) != 1 || p->pid <= 0)
		p->pid = 0;
	fclose(f);
	for (clients = clients ? clients : client_paths; *clients; clients++) {
		const char *argv[] = { *clients, "--ping", NULL };

		if (access(*clients, X_OK) != 0)
			continue;
		if (plymouth_run(argv, PLYMOUTH_TIMEOUT_MS, NULL, 0, &res, &err) == 0)
			snprintf(p->client, sizeof(p->client), "%s", *clients);
		break;
	}
	return p->client[0] != 0;
}

bool hib_plymouth_probe(struct hib_plymouth *p)
{
	return hib_plymouth_probe_at(p, NULL, NULL);
}

int hib_plymouth_message(const struct hib_plymouth *p, const char *text, struct hib_error *err)
{
	char arg[512];
	const char *argv[] = { p->client, "display-message", arg, NULL };
	struct hib_spawn_result res;
	int r;

	if (!hib_plymouth_active(p))
		return hib_error_set(err, -ENOENT, "no splash: plymouthd is not running");
	snprintf(arg, sizeof(arg), "--text=%s", text);
	r = plymouth_run(argv, PLYMOUTH_TIMEOUT_MS, NULL, 0, &res, err);
	if (r > 0)
		return hib_error_set(err, -EPROTO, "%s display-message exited with %d", p->client,
				     r);
	return r;
}

int hib_plymouth_progress(struct hib_plymouth *p, const char *what, int pct, int step,
			  struct hib_error *err)
{
	char arg[64], text[128];
	const char *argv[] = { p->client, "system-update", arg, NULL };
	struct hib_spawn_result res;
	int r;

	if (pct < 0)
		pct = 0;
	if (pct > 100)
		pct = 100;
	if (p->last_pct >= 0 && pct != 100 && pct < p->last_pct + (step > 0 ? step : 1))
		return 0;
	if (pct == p->last_pct)
		return 0;
	p->last_pct = pct;
	snprintf(arg, sizeof(arg), "--progress=%d", pct);
	r = plymouth_run(argv, PLYMOUTH_TIMEOUT_MS, NULL, 0, &res, err);
	if (r < 0)
		return r;
	snprintf(text, sizeof(text), "%s %d%%", what, pct);
	r = hib_plymouth_message(p, text, err);
	return r < 0 ? r : 1;
}

/* @pid has exited: no /proc entry, or a zombie's. */
static bool process_gone(int pid)
{
	char path[64], state = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return true;
	/* "PID (COMM) STATE ...": COMM may hold spaces and parentheses. */
	if (fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
		state = 0;
	fclose(f);
	return state == 'Z' || state == 'X';
}

/* Wait up to @ms for @pid to exit; true when it has. */
static bool wait_gone(int pid, int ms)
{
	const struct timespec step = { 0, 20 * 1000 * 1000 };

	for (int i = 0; i < ms / 20 && !process_gone(pid); i++)
		nanosleep(&step, NULL);
	return process_gone(pid);
}

int hib_plymouth_quit(struct hib_plymouth *p, struct hib_error *err)
{
	const char *argv[] = { p->client, "quit", "--retain-splash", NULL };
	struct hib_spawn_result res;
	int r;

	if (!hib_plymouth_active(p))
		return 0;
	/* Slow to answer on a busy machine (seen past 2 s under TCG). */
	r = plymouth_run(argv, PLYMOUTH_QUIT_TIMEOUT_MS, NULL, 0, &res, err);
	p->client[0] = 0;
	if (p->pid <= 0 || wait_gone(p->pid, 5000))
		return r > 0   ? hib_error_set(err, -EPROTO, "plymouth quit exited with %d", r)
		       : r < 0 ? r
			       : 0;
	/* Still there: frozen, it would hold the console forever and the
	 * restore (the image already invalidated) would hang. Its world is
	 * about to be replaced by the image's anyway. */
	kill(p->pid, SIGKILL);
	wait_gone(p->pid, 2000);
	return hib_error_set(err, -ETIMEDOUT,
			     "plymouthd (pid %d) did not quit: killed, so the restore can take "
			     "the console",
			     p->pid);
}

int hib_plymouth_ask(const struct hib_plymouth *p, const char *prompt, char *buf, size_t size,
		     size_t *ret_len, struct hib_error *err)
{
	char arg[512];
	const char *argv[] = { p->client, "ask-for-password", arg, "--number-of-tries=1", NULL };
	struct hib_spawn_result res;
	int r;

	if (!hib_plymouth_active(p))
		return hib_error_set(err, -ENOENT, "no splash: plymouthd is not running");
	snprintf(arg, sizeof(arg), "--prompt=%s", prompt);
	r = plymouth_run(argv, 0, buf, size, &res, err);
	if (r < 0)
		return r;
	if (r != 0)
		return hib_error_set(err, -ECANCELED,
				     "%s ask-for-password gave no answer (exit %d)", p->client, r);
	return hib_askpass_answer(p->client, &res, buf, size, ret_len, err);
}
