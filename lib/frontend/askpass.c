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
#include <sys/wait.h>
#include <unistd.h>

#include "frontend/askpass.h"
#include "util/error.h"

#define AGENT_NAME "systemd-ask-password"

/* @name's path in $PATH into @buf ("" when it is nowhere executable). */
static void find_in_path(const char *name, char *buf, size_t size)
{
	const char *path = getenv("PATH"), *p, *end;

	buf[0] = 0;
	for (p = path ? path : "/usr/bin:/bin"; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ':');
		if (end == p)
			continue;
		if ((size_t)snprintf(buf, size, "%.*s/%s", (int)(end - p), p, name) < size &&
		    access(buf, X_OK) == 0)
			return;
		buf[0] = 0;
	}
}

void hib_askpass_probe(struct hib_askpass_env *ret)
{
	struct stat st;

	*ret = (struct hib_askpass_env){ .stdin_tty = isatty(STDIN_FILENO) };
	if (!ret->stdin_tty && fstat(STDIN_FILENO, &st) == 0)
		ret->stdin_data = S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ||
				  S_ISREG(st.st_mode);
	ret->plymouth = access("/run/plymouth/pid", F_OK) == 0;
	ret->systemd = access("/run/systemd/system", F_OK) == 0;
	find_in_path(AGENT_NAME, ret->agent, sizeof(ret->agent));
}

enum hib_askpass_via hib_askpass_choose(const struct hib_askpass_env *env)
{
	bool agents = env->systemd && env->agent[0];

	if (env->plymouth && agents)
		return HIB_ASKPASS_AGENT;
	if (env->stdin_tty)
		return HIB_ASKPASS_TTY;
	if (env->stdin_data)
		return HIB_ASKPASS_STDIN;
	return agents ? HIB_ASKPASS_AGENT : HIB_ASKPASS_NONE;
}

/* The child: the pipe as stdout, nothing else of ours open, then the agent. */
static void __attribute__((noreturn)) run_agent(int out, const char *const *argv)
{
	if (dup2(out, STDOUT_FILENO) < 0)
		_exit(127);
	closefrom(STDERR_FILENO + 1);
	execv(argv[0], (char *const *)argv);
	_exit(127);
}

/* The agent's stdout into @buf until EOF; -E2BIG (and the rest drained) when it overflows. */
static int read_answer(int fd, char *buf, size_t size, size_t *ret_len)
{
	size_t n = 0;
	bool over = false;
	char sink[64];
	int r = 0;

	for (;;) {
		char *dst = n < size ? buf + n : sink;
		size_t room = n < size ? size - n : sizeof(sink);
		ssize_t k = read(fd, dst, room);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			r = k < 0 ? -errno : 0;
			break;
		}
		if (dst == sink)
			over = true;
		else
			n += (size_t)k;
	}
	explicit_bzero(sink, sizeof(sink));
	if (r == 0 && (over || (n == size && buf[n - 1] != '\n')))
		r = -E2BIG;
	if (r < 0)
		return r;
	if (n && buf[n - 1] == '\n')
		n--;
	*ret_len = n;
	return 0;
}

int hib_askpass_agent(const char *agent, const char *id, const char *prompt, unsigned timeout_s,
		      char *buf, size_t size, size_t *ret_len, struct hib_error *err)
{
	char id_arg[128], timeout_arg[32];
	const char *argv[] = { agent,  id_arg, "--icon=drive-harddisk", timeout_arg, "--no-tty",
			       prompt, NULL };
	int pfd[2], status, r;
	size_t len = 0;
	pid_t pid;

	snprintf(id_arg, sizeof(id_arg), "--id=hibernate:%s", id);
	snprintf(timeout_arg, sizeof(timeout_arg), "--timeout=%u", timeout_s);
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return hib_error_set(err, -errno, "cannot ask through %s: %s", agent,
				     strerror(errno));
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return hib_error_set(err, r, "cannot ask through %s: %s", agent, strerror(-r));
	}
	if (pid == 0)
		run_agent(pfd[1], argv);
	close(pfd[1]);
	r = read_answer(pfd[0], buf, size, &len);
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return hib_error_set(err, -errno, "%s: %s", agent, strerror(errno));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return hib_error_set(err, -ENOENT, "cannot run %s", agent);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return hib_error_set(err, -ECANCELED,
				     "%s gave no answer (cancelled, timed out, or no password "
				     "agent is running)",
				     agent);
	if (r == -E2BIG)
		return hib_error_set(err, r, "%s: the answer is longer than %zu bytes", agent,
				     size - 1);
	if (r < 0)
		return hib_error_set(err, r, "%s: %s", agent, strerror(-r));
	if (!len)
		return hib_error_set(err, -ENODATA, "%s: the answer is empty", agent);
	*ret_len = len;
	return 0;
}
