// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The one child-process runner (util/spawn.h): fork, and in the child only
 * async-signal-safe calls up to execve — descriptors put in place, every other
 * one closed, signals reset, a process group of its own. An exec failure comes
 * back to the parent as the errno written on a close-on-exec pipe (EOF on it
 * means the exec happened). Then the output is read with poll() against the
 * time limit and the stop question, and the child reaped.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/error.h"
#include "util/spawn.h"
#include "util/util.h"

/* How often stop is asked; how often an exit is looked for without a pidfd. */
#define STOP_POLL_MS 100
#define REAP_POLL_MS 10
/* Where closing descriptors one by one stops when close_range is missing. */
#define CLOSE_LOOP_MAX 65536

static const char *const default_env[] = { HIB_SPAWN_DEFAULT_ENV, NULL };

/* What the child is given, all ours, all >= 3 and close-on-exec until dup2. */
struct plumbing {
	int src[3];         /* becomes the child's 0, 1, 2 */
	int out_r;          /* the capture pipe's read end, or -1 */
	int exec_r, exec_w; /* the exec-error pipe */
	int close_max;      /* the fallback loop's bound */
	sigset_t none;
	char *const *envp;
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* @fd moved above 2 (so no dup2 onto 0..2 can clobber it), close-on-exec.
 * -errno; @fd closed either way when @own. */
static int above2(int fd, bool own)
{
	int r;

	if (fd < 0)
		return -EBADF;
	r = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (r < 0)
		r = -errno;
	if (own)
		close(fd);
	return r;
}

static void plumbing_close(struct plumbing *pl)
{
	for (int i = 0; i < 3; i++)
		close_fd(&pl->src[i]);
	close_fd(&pl->out_r);
	close_fd(&pl->exec_r);
	close_fd(&pl->exec_w);
}

static int plumbing_open(struct plumbing *pl, const struct hib_spawn *sp)
{
	bool capture = sp->out && sp->out_size;
	int null = above2(open("/dev/null", O_RDWR | O_CLOEXEC), true), p[2], e[2];

	*pl = (struct plumbing){ .src = { -1, -1, -1 }, .out_r = -1, .exec_r = -1, .exec_w = -1 };
	if (null < 0)
		return null;
	pl->src[0] = above2(sp->stdin_fd >= 0 ? sp->stdin_fd : null, false);
	if (capture && pipe2(p, O_CLOEXEC) == 0) {
		pl->out_r = above2(p[0], true);
		pl->src[1] = above2(p[1], true);
	} else if (!capture) {
		pl->src[1] = above2(null, false);
	}
	if (sp->stderr_mode == HIB_SPAWN_STDERR_MERGE)
		pl->src[2] = above2(capture ? pl->src[1] : null, false);
	else if (sp->stderr_mode == HIB_SPAWN_STDERR_INHERIT)
		pl->src[2] =
			above2(fcntl(STDERR_FILENO, F_GETFD) < 0 ? null : STDERR_FILENO, false);
	else
		pl->src[2] = above2(null, false);
	if (pipe2(e, O_CLOEXEC) == 0) {
		pl->exec_r = above2(e[0], true);
		pl->exec_w = above2(e[1], true);
	}
	close(null);
	if (pl->src[0] < 0 || pl->src[1] < 0 || pl->src[2] < 0 || (capture && pl->out_r < 0) ||
	    pl->exec_r < 0 || pl->exec_w < 0) {
		int r = pl->src[0] < 0 ? pl->src[0] : pl->src[1] < 0 ? pl->src[1] : -EMFILE;

		plumbing_close(pl);
		return r;
	}
	long max = sysconf(_SC_OPEN_MAX);
	pl->close_max = max > 0 && max < CLOSE_LOOP_MAX ? (int)max : CLOSE_LOOP_MAX;
	pl->envp = (char *const *)(sp->envp ? sp->envp : default_env);
	sigemptyset(&pl->none);
	return 0;
}

/* Every descriptor from 3 up but @keep. */
static void close_others(int keep, int max)
{
	bool ok = (keep == 3 || close_range(3, (unsigned)keep - 1, 0) == 0) &&
		  close_range((unsigned)keep + 1, ~0U, 0) == 0;

	for (int fd = 3; !ok && fd < max; fd++)
		if (fd != keep)
			close(fd);
}

/* The child, between fork and exec: async-signal-safe calls only. */
static void __attribute__((noreturn)) child(const struct plumbing *pl, const char *const *argv)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	int e;

	setpgid(0, 0);
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			sigaction(s, &dfl, NULL);
	for (int i = 0; i < 3; i++)
		if (dup2(pl->src[i], i) < 0)
			goto fail;
	close_others(pl->exec_w, pl->close_max);
	sigprocmask(SIG_SETMASK, &pl->none, NULL);
	execve(argv[0], (char *const *)argv, pl->envp);
fail:
	e = errno;
	while (write(pl->exec_w, &e, sizeof(e)) < 0 && errno == EINTR)
		;
	_exit(127);
}

/* The exec's outcome: 0 when it happened, else the child's errno (negated). */
static int exec_result(int fd)
{
	int e = 0;
	ssize_t n;

	do
		n = read(fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(e) && e > 0 ? -e : 0;
}

static void reap(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
}

/* Past its time or stopped: its whole group killed, then reaped. */
static void end_child(pid_t pid, int *status)
{
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	reap(pid, status);
}

/* What is readable on @fd into the output (the part past its room read and
 * dropped); false at EOF or on an error. */
static bool take_output(int fd, const struct hib_spawn *sp, struct hib_spawn_result *res)
{
	size_t cap = sp->out_raw ? sp->out_size : sp->out_size - 1;
	char sink[256];
	ssize_t n;

	if (res->out_len < cap) {
		n = read(fd, sp->out + res->out_len, cap - res->out_len);
		if (n > 0)
			res->out_len += (size_t)n;
	} else {
		n = read(fd, sink, sizeof(sink));
		explicit_bzero(sink, sizeof(sink));
		if (n > 0)
			res->truncated = true;
	}
	if (!sp->out_raw)
		sp->out[res->out_len] = 0;
	return n > 0 || (n < 0 && (errno == EINTR || errno == EAGAIN));
}

static int poll_wait(uint64_t deadline, bool stop, bool blind)
{
	uint64_t now = hib_now_ms();
	int64_t wait = -1;

	if (deadline)
		wait = now >= deadline ? 0 : (int64_t)MIN(deadline - now, (uint64_t)INT_MAX);
	if (stop)
		wait = wait < 0 ? STOP_POLL_MS : MIN(wait, STOP_POLL_MS);
	if (blind)
		wait = wait < 0 ? REAP_POLL_MS : MIN(wait, REAP_POLL_MS);
	return (int)wait;
}

/* The child's output to its EOF, then its end, within the limit: 0, -ETIME or -EINTR. */
static int await_child(const struct hib_spawn *sp, pid_t pid, int out_r, uint64_t deadline,
		       int *status, struct hib_spawn_result *res)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0), r = 0;

	for (;;) {
		struct pollfd p = { .fd = out_r >= 0 ? out_r : pidfd, .events = POLLIN };

		if (out_r < 0 && waitpid(pid, status, WNOHANG) == pid)
			break;
		if (sp->stop && sp->stop(sp->userdata))
			r = -EINTR;
		else if (deadline && hib_now_ms() >= deadline)
			r = -ETIME;
		if (r) {
			end_child(pid, status);
			break;
		}
		if (poll(&p, 1, poll_wait(deadline, sp->stop, p.fd < 0)) > 0 && out_r >= 0 &&
		    !take_output(out_r, sp, res))
			close_fd(&out_r);
	}
	close_fd(&out_r);
	close_fd(&pidfd);
	return r;
}

static int fork_child(const struct hib_spawn *sp, struct plumbing *pl, pid_t *ret_pid)
{
	sigset_t all, old;
	pid_t pid;
	int r;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (pid == 0)
		child(pl, sp->argv);
	r = pid < 0 ? -errno : 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0)
		return r;
	/* Here too: a kill of the group must reach it before it got to its own setpgid. */
	setpgid(pid, pid);
	*ret_pid = pid;
	return 0;
}

int hib_spawn_run(const struct hib_spawn *sp, struct hib_spawn_result *ret, struct hib_error *err)
{
	const char *prog = sp->argv && sp->argv[0] ? sp->argv[0] : "(no program)";
	uint64_t deadline = sp->timeout_ms ? hib_now_ms() + sp->timeout_ms : 0;
	struct hib_spawn_result res = { 0 };
	struct plumbing pl;
	int r, status = 0;
	pid_t pid;

	hib_error_clear(err);
	if (ret)
		*ret = res;
	if (prog[0] != '/')
		return hib_error_set(err, -EINVAL,
				     "%s: not an absolute path (programs are run by theirs, "
				     "never looked up in $PATH)",
				     prog);
	if (sp->out && sp->out_size && !sp->out_raw)
		sp->out[0] = 0;
	r = plumbing_open(&pl, sp);
	if (r == 0)
		r = fork_child(sp, &pl, &pid);
	if (r < 0) {
		plumbing_close(&pl);
		return hib_error_set(err, r, "cannot run %s: %s", prog, strerror(-r));
	}
	int out_r = pl.out_r;
	pl.out_r = -1;
	close_fd(&pl.exec_w);
	for (int i = 0; i < 3; i++)
		close_fd(&pl.src[i]);
	r = exec_result(pl.exec_r);
	plumbing_close(&pl);
	if (r < 0) {
		close_fd(&out_r);
		reap(pid, &status);
		return hib_error_set(err, r, "cannot run %s: %s", prog, strerror(-r));
	}
	r = await_child(sp, pid, out_r, deadline, &status, &res);
	res.status = WIFEXITED(status) ? WEXITSTATUS(status)
				       : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	if (ret)
		*ret = res;
	if (r == -ETIME)
		return hib_error_set(err, r, "%s did not finish within %u ms: killed", prog,
				     sp->timeout_ms);
	if (r == -EINTR)
		return hib_error_set(err, r, "%s was cut short: the run is being stopped", prog);
	return 0;
}

int hib_spawn_check(const struct hib_spawn *sp, struct hib_spawn_result *ret, struct hib_error *err)
{
	struct hib_spawn_result res;
	int r = hib_spawn_run(sp, &res, err);

	if (ret)
		*ret = res;
	if (r < 0 || res.status == 0)
		return r;
	if (sp->out && res.out_len) {
		const char *o = sp->out;
		size_t len = strcspn(o, "\n");

		if (sp->out_raw) {
			const char *nl = memchr(o, '\n', res.out_len);
			len = nl ? (size_t)(nl - o) : res.out_len;
		}
		if (len)
			return hib_error_set(err, -EPROTO, "%s exited with status %d: %.*s",
					     sp->argv[0], res.status, (int)len, o);
	}
	return hib_error_set(err, -EPROTO, "%s exited with status %d", sp->argv[0], res.status);
}
