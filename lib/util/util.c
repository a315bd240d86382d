// SPDX-License-Identifier: GPL-2.0-or-later
#include <ctype.h>
#include <fcntl.h>
#include <libgen.h>
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

/* @path (no symlinks left in it) owned by root and writable by root alone; a
 * directory that holds (@holder) may be writable by others when sticky. */
static int root_only(const char *path, bool holder, const char *what, struct hib_error *err)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return hib_error_set(err, -errno, "%s: %s", path, strerror(errno));
	if (st.st_uid != 0)
		return hib_error_set(
			err, -EPERM,
			"%s%s is owned by uid %u, not root, so not only root can change "
			"it: refused; fix: chown root:root %s; chmod go-w %s",
			path, what, (unsigned)st.st_uid, path, path);
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) &&
	    !(holder && S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX)))
		return hib_error_set(err, -EPERM,
				     "%s%s is writable by %s, so not only root can change it: "
				     "refused; fix: chown root:root %s; chmod go-w %s",
				     path, what, st.st_mode & S_IWOTH ? "everyone" : "its group",
				     path, path);
	return 0;
}

int hib_path_trusted(const char *path, struct hib_error *err)
{
	_cleanup_(freep) char *real = realpath(path, NULL);
	_cleanup_(freep) char *real_dir = NULL, *link_dir = NULL;
	int r;

	if (!real)
		return hib_error_set(err, -errno, "%s: %s", path, strerror(errno));
	real_dir = strdup(real);
	link_dir = strdup(path);
	if (!real_dir || !link_dir)
		return hib_error_set(err, -ENOMEM, "%s: %s", path, strerror(ENOMEM));
	r = root_only(real, false, "", err);
	if (r == 0)
		r = root_only(dirname(real_dir), true, " (the directory holding it)", err);
	/* A symlink: the link's own directory decides where it points. */
	if (r == 0 && strcmp(real, path) != 0)
		r = root_only(dirname(link_dir), true, " (the directory holding the link)", err);
	if (r < 0 && strcmp(real, path) != 0)
		return hib_error_prefix(err, r, "%s -> %s: ", path, real);
	return r;
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
