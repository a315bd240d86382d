// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The working set's small readers: a /proc text whole (bounded), one value of
 * it, and a regular file opened for reading only, never a device or a FIFO
 * put in its place, never through a link when the path comes from a record.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/util.h"
#include "workset/workset-priv.h"
#include "workset/workset.h"

#ifndef SYS_openat2
#define SYS_openat2 437 /* the same number on every architecture */
#endif

/* All of @path, NUL-terminated, at most @max bytes; malloc'd in *ret. */
int ws_read_text(const char *path, size_t max, char **ret)
{
	_cleanup_(closep) int fd = open(path, O_RDONLY | O_CLOEXEC);
	_cleanup_(freep) char *buf = NULL;
	size_t len = 0, cap = 0;

	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			char *p;

			cap = cap ? cap * 2 : 16384;
			if (cap > max + 1)
				return -EFBIG;
			p = realloc(buf, cap);
			if (!p)
				return -ENOMEM;
			buf = p;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = 0;
	*ret = TAKE_PTR(buf);
	return 0;
}

int ws_proc_kb(pid_t pid, const char *file, const char *key, uint64_t *ret)
{
	_cleanup_(freep) char *text = NULL;
	char path[64];
	int r;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	else
		snprintf(path, sizeof(path), "/proc/%s", file);
	r = ws_read_text(path, 1u << 20, &text);
	return r < 0 ? r : hib_ws_parse_kb(text, key, ret);
}

int ws_proc_start_time(pid_t pid, uint64_t *ret)
{
	_cleanup_(freep) char *text = NULL;
	char path[64];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	r = ws_read_text(path, 1u << 16, &text);
	return r < 0 ? r : hib_ws_parse_start_time(text, ret);
}

uint64_t ws_mem_available_kb(void)
{
	uint64_t v;

	return ws_proc_kb(0, "meminfo", "MemAvailable", &v) < 0 ? UINT64_MAX : v;
}

/* @path opened with @how; without O_NOATIME when that is not ours to ask. */
static int open_how(const char *path, struct open_how *how)
{
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, how, sizeof(*how));

	if (fd < 0 && errno == EPERM && (how->flags & O_NOATIME)) {
		how->flags &= ~(uint64_t)O_NOATIME;
		fd = (int)syscall(SYS_openat2, AT_FDCWD, path, how, sizeof(*how));
	}
	return fd;
}

/* @path for reading if it is a regular file (not a link to one: /proc gives
 * the real paths), opened so that nothing happens but reads: a device or a
 * FIFO put there since is not opened at all. O_NOATIME: this is not a use.
 * @no_links (the restore, from a record): a symlink in any component, or a
 * /proc magic link, is not followed but skipped (openat2 RESOLVE_NO_SYMLINKS
 * | RESOLVE_NO_MAGICLINKS): the tree may have changed since the record, and
 * root reads what is there. A kernel without openat2 (before 5.6): skipped
 * too, never opened the way that follows them. */
int ws_open_regular(const char *path, bool no_links)
{
	const int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
	struct open_how how = { .flags = flags | O_NOATIME,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	struct stat st;
	int fd;

	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	if (no_links) {
		fd = open_how(path, &how);
	} else {
		fd = open(path, flags | O_NOATIME);
		if (fd < 0 && errno == EPERM)
			fd = open(path, flags);
	}
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)))
		fd = (close(fd), -1);
	return fd;
}
