/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one way libhibernate and the program start another program: fork and
 * exec of an absolute path (never a search of $PATH, never a shell but one
 * named in argv), with an environment the caller built, in a process group
 * of its own, stdin from /dev/null unless given, every other descriptor
 * closed, a time limit, its output captured, and its end as a result.
 *
 * Not for a child that runs our own code (the working set's restore forks
 * without exec): that is not another program.
 */
#ifndef HIB_SPAWN_H
#define HIB_SPAWN_H

#include <stdbool.h>
#include <stddef.h>

#include "hibernate.h"

/* What the child's stderr is. */
enum hib_spawn_stderr {
	HIB_SPAWN_STDERR_MERGE,   /* into the captured output, beside stdout (hooks) */
	HIB_SPAWN_STDERR_NULL,    /* /dev/null */
	HIB_SPAWN_STDERR_INHERIT, /* ours (a password agent's own messages) */
};

struct hib_spawn {
	const char *const *argv; /* argv[0]: an absolute path */
	/* The child's whole environment. NULL: HIB_SPAWN_DEFAULT_ENV only. */
	const char *const *envp;
	/* Milliseconds from the start; 0: no limit. Past it the child's whole process
	 * group is killed (SIGKILL) and reaped: -ETIME. */
	unsigned timeout_ms;
	int stdin_fd; /* -1: /dev/null */
	enum hib_spawn_stderr stderr_mode;
	/* Captured stdout (and stderr when merged), NUL-terminated, cut at
	 * out_size - 1 (the rest read and dropped: truncated). NULL or 0: the
	 * output goes to /dev/null. The caller owns the buffer (it may be locked
	 * memory: the runner copies nothing elsewhere but a small stack buffer it
	 * wipes). */
	char *out;
	size_t out_size;
	/* Bytes, not a string: all out_size bytes of out are used and no NUL is
	 * added (a password agent's answer fills the caller's buffer to its end). */
	bool out_raw;
	/* Asked about every 100 ms while the child runs; true ends it as a timeout
	 * does, with -EINTR (a signal that stops the run). NULL: never. */
	bool (*stop)(void *userdata);
	void *userdata;
};

#define HIB_SPAWN_DEFAULT_ENV "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

struct hib_spawn_result {
	int status;     /* its exit code, or 128 + the signal that ended it */
	size_t out_len; /* bytes in out, without the NUL */
	bool truncated; /* it wrote more than out could hold */
};

/*
 * Run @sp's program to its end, or to its time limit or stop.
 * @return 0 when it ran and was reaped (whatever its exit code: *ret says),
 * -ETIME past the limit, -EINTR when stop said so (killed and reaped in both
 * cases, *ret filled with what it wrote), -ENOENT or -EACCES when it could not
 * be executed, -EINVAL when argv[0] is not an absolute path, or -errno.
 * @err names argv[0] on every failure; @ret may be NULL.
 *
 * Nothing is allocated: the caller's output buffer is the only place the
 * output goes. The child starts with every signal at its default and none
 * blocked. Its output is read to its end (EOF), then it is reaped, both
 * within the one time limit: a daemon it leaves holding its stdout keeps the
 * run going until then.
 */
int hib_spawn_run(const struct hib_spawn *sp, struct hib_spawn_result *ret, struct hib_error *err);

/*
 * The same, and an exit code other than 0 is an error too (-EPROTO): @err
 * then says "PROGRAM exited with status N" and the first line of its
 * captured output, if any. @ret may be NULL.
 */
int hib_spawn_check(const struct hib_spawn *sp, struct hib_spawn_result *ret,
		    struct hib_error *err);

#endif
