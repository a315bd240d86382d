// SPDX-License-Identifier: GPL-2.0-or-later
#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

#include "util/error.h"
#include "util/util.h"

static hib_log_fn log_fn;
static void *log_userdata;

void hib_set_log(hib_log_fn fn, void *userdata)
{
	log_fn = fn;
	log_userdata = userdata;
}

static void log_v(enum hib_loglevel level, int err, const char *fmt, va_list ap)
{
	char msg[1024];

	if (!log_fn)
		return;
	/* %m must name the error we were given, not whatever errno holds now. */
	errno = err;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	log_fn(level, msg, log_userdata);
}

void hib_log(enum hib_loglevel level, const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	va_start(ap, fmt);
	log_v(level, errno, fmt, ap);
	va_end(ap);
	errno = saved;
}

int hib_log_errno(enum hib_loglevel level, int r, const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	va_start(ap, fmt);
	log_v(level, r < 0 ? -r : r, fmt, ap);
	va_end(ap);
	errno = saved;
	return r < 0 ? r : -r;
}

uint64_t hib_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t hib_thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

char *hib_strip(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

int hib_read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
	return (int)n;
}

uint64_t hib_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int hib_pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;

	while (len > 0) {
		ssize_t n = pread(fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

int hib_pwrite_full(int fd, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ENOSPC;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

void *hib_alloc_pages(size_t bytes)
{
	void *p = NULL;

	if (bytes == 0)
		bytes = 4096;
	if (posix_memalign(&p, 4096, bytes) != 0)
		return NULL;
	memset(p, 0, bytes);
	return p;
}

uint64_t hib_random_u64(void)
{
	uint64_t v;
	struct timespec ts;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
		return v;
	/* Early boot without entropy: the id only has to differ between images. */
	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 16);
}

const char *hib_version(void)
{
	return HIB_VERSION_STRING;
}

void hib_test_pause(const char *point)
{
#ifdef HIB_TEST_KNOBS
	const char *e = hib_test_knob("HIBERNATE_TEST_PAUSE");
	unsigned long secs = 60;
	size_t n;

	if (!e)
		return;
	n = strcspn(e, ":");
	if (n != strlen(point) || strncmp(e, point, n) != 0)
		return;
	if (e[n] == ':')
		secs = strtoul(e + n + 1, NULL, 10);
	hib_log(HIB_LOG_WARN, "test pause at '%s' for %lu s (HIBERNATE_TEST_PAUSE)", point, secs);
	sleep((unsigned)secs);
#else
	(void)point;
#endif
}

/* ---- trust: every directory from / to the object ---------------------------- */

struct walk {
	const char *path; /* as given, for the messages */
	bool follow;      /* symlinks followed (hib_path_trusted) or refused */
	bool sticky;      /* the directory holding the entry is others' to write, sticky */
	unsigned links;
	char dir[PATH_MAX];  /* the directory walked to, as a path ("" for /) */
	char name[PATH_MAX]; /* the entry looked at: what a message names */
};

static const char *shown(const char *p)
{
	return p[0] ? p : "/";
}

/* Owned by root and writable by root alone; a directory on the way (@final
 * false) may be writable by others when sticky: then only root can rename or
 * remove a root-owned entry in it (which is checked next). */
static int trust_stat(struct walk *w, const struct stat *st, bool final, struct hib_error *err)
{
	const char *n = shown(w->name), *what = final ? "" : " (a directory on the way)";

	if (st->st_uid != 0)
		return hib_error_set(
			err, -EPERM,
			"%s%s is owned by uid %u, not root, so not only root can change "
			"it: refused; fix: chown root:root %s; chmod go-w %s",
			n, what, (unsigned)st->st_uid, n, n);
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && (final || !(st->st_mode & S_ISVTX)))
		return hib_error_set(err, -EPERM,
				     "%s%s is writable by %s, so not only root can change it: "
				     "refused; fix: chown root:root %s; chmod go-w %s",
				     n, what, st->st_mode & S_IWOTH ? "everyone" : "its group", n,
				     n);
	/* In /tmp, another name for a root file (a hard link) is anyone's to make. */
	if (final && w->sticky && !S_ISDIR(st->st_mode) && st->st_nlink > 1)
		return hib_error_set(
			err, -EPERM,
			"%s has %u names (hard links) and is in a directory others may "
			"write: one of them may not be root's doing: refused; fix: keep "
			"it in a directory only root can write",
			n, (unsigned)st->st_nlink);
	if (!final)
		w->sticky = (st->st_mode & (S_IWGRP | S_IWOTH)) != 0;
	return 0;
}

/* The next component of *@rest ("." skipped), *@rest moved past it and the
 * slashes after it; NULL at the end. */
static char *next_component(char **rest)
{
	char *c;

	for (;;) {
		while (**rest == '/')
			(*rest)++;
		if (!**rest)
			return NULL;
		c = *rest;
		*rest += strcspn(c, "/");
		if (**rest)
			*(*rest)++ = 0;
		while (**rest == '/')
			(*rest)++;
		if (strcmp(c, ".") != 0)
			return c;
	}
}

/* @w->name: the entry @c in @w->dir (cut at PATH_MAX: it only names it). */
static void walk_name(struct walk *w, const char *c)
{
	size_t n = MIN(strlen(w->dir), sizeof(w->name) - 2);

	memcpy(w->name, w->dir, n);
	w->name[n] = '/';
	snprintf(w->name + n + 1, sizeof(w->name) - n - 1, "%s", c);
}

/* @w->dir one entry down (or up for ".."). */
static void walk_into(struct walk *w, const char *c)
{
	char *slash;

	if (strcmp(c, "..") != 0) {
		memcpy(w->dir, w->name, sizeof(w->dir));
		return;
	}
	slash = strrchr(w->dir, '/');
	if (slash)
		*slash = 0;
}

/* / opened and checked: where a walk starts, and an absolute link goes on. */
static int walk_root(struct walk *w, int *dirfd, struct hib_error *err)
{
	struct stat st;

	closep(dirfd);
	*dirfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	w->dir[0] = w->name[0] = 0;
	w->sticky = false;
	if (*dirfd < 0 || fstat(*dirfd, &st) < 0)
		return hib_error_set(err, -errno, "/: %s", strerror(errno));
	return trust_stat(w, &st, false, err);
}

/* @w->path made absolute in @buf: a relative one after the working directory. */
static int walk_path(struct walk *w, char *buf, size_t len, struct hib_error *err)
{
	size_t n = 0;

	if (w->path[0] != '/') {
		if (!getcwd(buf, len - 1))
			return hib_error_set(err, -errno,
					     "%s: cannot tell the directory it is in: %s", w->path,
					     strerror(errno));
		n = strlen(buf);
		buf[n++] = '/';
	}
	if (n + strlen(w->path) >= len)
		return hib_error_set(err, -ENAMETOOLONG, "%s: %s", w->path, strerror(ENAMETOOLONG));
	strcpy(buf + n, w->path);
	return 0;
}

static int link_refused(struct walk *w, struct hib_error *err)
{
	return hib_error_set(err, -ELOOP,
			     "%s is a symbolic link, which may point elsewhere by the time the "
			     "path is used: refused; fix: name the file by a path without links "
			     "(readlink -f %s)",
			     w->name, w->path);
}

/* The symlink @fd followed: its target put before what is left of the path. */
static int walk_link(struct walk *w, int fd, char *buf, size_t len, char **rest, int *dirfd,
		     struct hib_error *err)
{
	char target[PATH_MAX], left[PATH_MAX];
	ssize_t n;

	if (!w->follow)
		return link_refused(w, err);
	if (++w->links > 40)
		return hib_error_set(err, -ELOOP, "%s: %s", w->path, strerror(ELOOP));
	n = readlinkat(fd, "", target, sizeof(target) - 1);
	if (n < 0)
		return hib_error_set(err, -errno, "%s: %s", w->name, strerror(errno));
	target[n] = 0;
	snprintf(left, sizeof(left), "%s", *rest);
	if ((size_t)snprintf(buf, len, "%s/%s", target, left) >= len)
		return hib_error_set(err, -ENAMETOOLONG, "%s: %s", w->path, strerror(ENAMETOOLONG));
	*rest = buf;
	/* Absolute: from / again (the link's own directory was checked on the way). */
	return target[0] == '/' ? walk_root(w, dirfd, err) : 0;
}

/* The last entry, opened with @flags and checked: the descriptor. */
static int walk_last(struct walk *w, int dirfd, const char *c, int flags, struct hib_error *err)
{
	_cleanup_(closep) int fd = -1;
	struct stat st;
	int r;

	/* O_NONBLOCK: a FIFO is refused, not waited on; taken off again below. */
	fd = openat(dirfd, c, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 && errno == ELOOP)
		return link_refused(w, err);
	if (fd < 0 || fstat(fd, &st) < 0)
		return hib_error_set(err, -errno, "%s: %s", w->name, strerror(errno));
	if (S_ISLNK(st.st_mode)) /* O_PATH | O_NOFOLLOW opens the link itself */
		return link_refused(w, err);
	if (!(flags & O_DIRECTORY) && !S_ISREG(st.st_mode))
		return hib_error_set(
			err, -EINVAL,
			"%s: not a regular file (a directory, device, FIFO or socket): "
			"refused",
			w->name);
	r = trust_stat(w, &st, true, err);
	if (r < 0)
		return r;
	if (!(flags & O_PATH) && fcntl(fd, F_SETFL, flags & O_NONBLOCK) < 0)
		return hib_error_set(err, -errno, "%s: %s", w->name, strerror(errno));
	return TAKE_FD(fd);
}

/* One step: @c in @dirfd, a directory on the way (then *@dirfd becomes it: 0),
 * a link (followed or refused: 0), or the last entry (its descriptor in
 * *@ret_fd: 1). */
static int walk_step(struct walk *w, char *buf, size_t len, char **rest, int *dirfd, char *c,
		     int flags, int *ret_fd, struct hib_error *err)
{
	bool last = !**rest;
	_cleanup_(closep) int fd = -1;
	struct stat st;
	int r;

	walk_name(w, c);
	if (last && !w->follow) {
		*ret_fd = walk_last(w, *dirfd, c, flags, err);
		return *ret_fd < 0 ? *ret_fd : 1;
	}
	fd = openat(*dirfd, c, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return hib_error_set(err, -errno, "%s: %s", w->name, strerror(errno));
	if (S_ISLNK(st.st_mode))
		return walk_link(w, fd, buf, len, rest, dirfd, err);
	if (last) {
		r = trust_stat(w, &st, true, err);
		if (r == 0)
			*ret_fd = TAKE_FD(fd);
		return r < 0 ? r : 1;
	}
	if (!S_ISDIR(st.st_mode))
		return hib_error_set(err, -ENOTDIR, "%s: %s", w->name, strerror(ENOTDIR));
	r = trust_stat(w, &st, false, err);
	if (r < 0)
		return r;
	walk_into(w, c);
	closep(dirfd);
	*dirfd = TAKE_FD(fd);
	return 0;
}

/* From / to the end of @w->path: the object's descriptor, or -errno. */
static int walk(struct walk *w, int flags, struct hib_error *err)
{
	_cleanup_(closep) int dirfd = -1;
	char buf[2 * PATH_MAX], *rest = buf, *c;
	int r, fd = -1;

	hib_error_clear(err);
	r = walk_path(w, buf, sizeof(buf), err);
	if (r == 0)
		r = walk_root(w, &dirfd, err);
	while (r == 0) {
		c = next_component(&rest);
		/* "/" itself, or what a link to it ends at. */
		r = walk_step(w, buf, sizeof(buf), &rest, &dirfd, c ? c : (char *)".", flags, &fd,
			      err);
		if (r > 0)
			return fd;
	}
	if (strcmp(shown(w->name), w->path) != 0)
		return hib_error_prefix(err, r, "%s: ", w->path);
	return r;
}

int hib_path_trusted(const char *path, struct hib_error *err)
{
	struct walk w = { .path = path, .follow = true };
	int fd = walk(&w, O_PATH, err);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

int hib_open_trusted(const char *path, int flags, struct hib_error *err)
{
	struct walk w = { .path = path, .follow = false };

	if ((flags & ~(O_DIRECTORY | O_PATH | O_NONBLOCK)) != 0)
		return hib_error_set(err, -EINVAL, "%s: hib_open_trusted: flags %#x", path,
				     (unsigned)flags);
	return walk(&w, flags, err);
}

int hib_run_lock(const char *path, struct hib_error *err)
{
	_cleanup_(closep) int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	char pid[24] = "";
	struct stat st;
	int n;

	if (fd < 0)
		return hib_error_set(err, -errno, "%s: cannot open the run lock: %s", path,
				     strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0)
		return hib_error_set(err, -EPERM,
				     "%s: the run lock is not a regular file of root's: remove it",
				     path);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int r = -errno;

		if (r != -EWOULDBLOCK)
			return hib_error_set(err, r, "%s: cannot lock: %s", path, strerror(-r));
		n = (int)pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? strcspn(pid, "\n") : 0] = 0;
		return hib_error_set(err, -EBUSY,
				     "another hibernate is running (pid %s, %s): wait for it to "
				     "finish",
				     pid[0] ? pid : "?", path);
	}
	/* For the message above, in whoever comes next while we run; without it, "pid ?". */
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)n, 0) != n)
		pid[0] = 0;
	return TAKE_FD(fd);
}
