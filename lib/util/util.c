// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

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
	const char *e = getenv("HIBERNATE_TEST_PAUSE");
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
}
