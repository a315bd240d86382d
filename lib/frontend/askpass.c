// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Where a passphrase is asked. A terminal is asked directly; without one
 * (systemd units, dracut's systemd initrd) or under a splash, systemd's
 * agents are, through systemd-ask-password: the answer comes back on a pipe
 * and goes nowhere else (no kernel keyring, no cache).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frontend/askpass.h"
#include "util/error.h"
#include "util/spawn.h"

/* Where the agent is looked for: fixed places, never the caller's $PATH (root
 * would run whatever comes first in it, with the passphrase its output). */
static const char *const agent_paths[] = { "/usr/bin/systemd-ask-password",
					   "/bin/systemd-ask-password", NULL };

void hib_askpass_probe_at(struct hib_askpass_env *ret, const char *const *agents)
{
	struct stat st;

	*ret = (struct hib_askpass_env){ .stdin_tty = isatty(STDIN_FILENO) };
	if (!ret->stdin_tty && fstat(STDIN_FILENO, &st) == 0)
		ret->stdin_data = S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ||
				  S_ISREG(st.st_mode);
	ret->plymouth = access("/run/plymouth/pid", F_OK) == 0;
	ret->systemd = access("/run/systemd/system", F_OK) == 0;
	for (; agents && *agents && !ret->agent[0]; agents++)
		if (access(*agents, X_OK) == 0)
			snprintf(ret->agent, sizeof(ret->agent), "%s", *agents);
}

void hib_askpass_probe(struct hib_askpass_env *ret)
{
	hib_askpass_probe_at(ret, agent_paths);
}

enum hib_askpass_via hib_askpass_choose(const struct hib_askpass_env *env)
{
	bool agents = env->systemd && env->agent[0];

	if (env->plymouth)
		return agents ? HIB_ASKPASS_AGENT : HIB_ASKPASS_PLYMOUTH;
	if (env->stdin_tty)
		return HIB_ASKPASS_TTY;
	if (env->stdin_data)
		return HIB_ASKPASS_STDIN;
	return agents ? HIB_ASKPASS_AGENT : HIB_ASKPASS_NONE;
}

/* The agent's own time limit, and then a little more before it is killed. */
#define AGENT_GRACE_S 5

int hib_askpass_answer(const char *who, const struct hib_spawn_result *res, char *buf, size_t size,
		       size_t *ret_len, struct hib_error *err)
{
	size_t len = res->out_len;

	if (res->truncated || (len == size && buf[len - 1] != '\n'))
		return hib_error_set(err, -E2BIG, "%s: the answer is longer than %zu bytes", who,
				     size - 1);
	if (len && buf[len - 1] == '\n')
		len--;
	if (!len)
		return hib_error_set(err, -ENODATA, "%s: the answer is empty", who);
	*ret_len = len;
	return 0;
}

int hib_askpass_agent(const char *agent, const char *id, const char *prompt, unsigned timeout_s,
		      char *buf, size_t size, size_t *ret_len, struct hib_error *err)
{
	char id_arg[128], timeout_arg[32];
	const char *argv[] = { agent,  id_arg, "--icon=drive-harddisk", timeout_arg, "--no-tty",
			       prompt, NULL };
	/* The default environment only: nothing of the caller's reaches it. Its
	 * answer straight into @buf, every byte of it usable; its messages to our stderr. */
	struct hib_spawn sp = { .argv = argv,
				.timeout_ms = timeout_s ? (timeout_s + AGENT_GRACE_S) * 1000u : 0,
				.stdin_fd = -1,
				.stderr_mode = HIB_SPAWN_STDERR_INHERIT,
				.out = buf,
				.out_size = size,
				.out_raw = true };
	struct hib_spawn_result res;
	int r;

	snprintf(id_arg, sizeof(id_arg), "--id=hibernate:%s", id);
	snprintf(timeout_arg, sizeof(timeout_arg), "--timeout=%u", timeout_s);
	r = hib_spawn_run(&sp, &res, err);
	if (r < 0 && r != -ETIME)
		return r;
	if (r == -ETIME || res.status != 0)
		return hib_error_set(err, -ECANCELED,
				     "%s gave no answer (cancelled, timed out, or no password "
				     "agent is running)",
				     agent);
	return hib_askpass_answer(agent, &res, buf, size, ret_len, err);
}
