/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Small helpers shared by the library: cleanup attributes, logging, time, I/O. */
#ifndef HIB_UTIL_H
#define HIB_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "hibernate.h"

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _unused_ __attribute__((unused))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define DIV_ROUND_UP(n, d) (((n) + (d)-1) / (d))

/* Hand ownership out of a _cleanup_ variable. */
#define TAKE_PTR(p)                                                                                \
	({                                                                                         \
		__typeof__(p) _p = (p);                                                            \
		(p) = NULL;                                                                        \
		_p;                                                                                \
	})
#define TAKE_FD(fd)                                                                                \
	({                                                                                         \
		int _fd = (fd);                                                                    \
		(fd) = -1;                                                                         \
		_fd;                                                                               \
	})

static inline void freep(void *p)
{
	free(*(void **)p);
}
static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

/* Logging: formatted, handed to the callback the program installed. */
void hib_log(enum hib_loglevel level, const char *fmt, ...) _printf_(2, 3);
/* Log and return the negative errno given, so `return log_err(r, …)` reads well.
 * "%m" in fmt prints strerror(-r). */
int hib_log_errno(enum hib_loglevel level, int r, const char *fmt, ...) _printf_(3, 4);

#define log_err(r, ...) hib_log_errno(HIB_LOG_ERR, (r), __VA_ARGS__)
#define log_warn(...) hib_log(HIB_LOG_WARN, __VA_ARGS__)
#define log_info(...) hib_log(HIB_LOG_INFO, __VA_ARGS__)
#define log_debug(...) hib_log(HIB_LOG_DEBUG, __VA_ARGS__)

uint64_t hib_now_ms(void);
uint64_t hib_now_ns(void);
/* The calling thread's CPU time (ns): what it ran, not how long it waited. */
uint64_t hib_thread_cpu_ns(void);

/* @s without the blanks around it: the end cut in place, the start skipped. */
char *hib_strip(char *s);
/* A small text file (sysfs, /proc, a config) read whole into @buf, cut at
 * @len - 1 bytes and NUL-terminated: the bytes read, or -errno. */
int hib_read_text(const char *path, char *buf, size_t len);

/* How long a phase of the cycle took: shown in debug builds, at loglevel 5 otherwise.
 * Updates *t0 to now, for the next phase. */
#ifdef HIB_DEBUG_TIMINGS
#define HIB_TIMING_LEVEL HIB_LOG_PROGRESS
#else
#define HIB_TIMING_LEVEL HIB_LOG_DEBUG
#endif
#define log_phase(t0, name)                                                                        \
	do {                                                                                       \
		uint64_t _now = hib_now_ms();                                                      \
		hib_log(HIB_TIMING_LEVEL, "phase %-10s %6llu ms", (name),                          \
			(unsigned long long)(_now - *(t0)));                                       \
		*(t0) = _now;                                                                      \
	} while (0)

/*
 * Trust: whether only root can change what a path names, since root acts on
 * it (runs it, obeys it). Every component is walked from / with
 * openat(O_PATH|O_NOFOLLOW) and fstat'd, so what is checked is what the walk
 * went through, not a second resolution of the path:
 *  - every directory on the way (/ included) owned by root and not writable
 *    by group or others, unless sticky (/tmp, 1777): there others can add
 *    entries but only root can rename or remove a root-owned one, and the
 *    entry below is checked in turn;
 *  - the object owned by root and not writable by group or others, sticky or
 *    not (a writable directory is no hook directory); in a directory others
 *    may write (sticky), a file with more than one name (hard link) is refused:
 *    the other name may be someone else's doing.
 * A relative path is walked from / through the working directory's path.
 */
/*
 * hib_path_trusted: for callers that use @path afterwards by its name (a hook
 * directory, a hook run by path). Symlinks are followed, each one's target
 * walked like the rest, so the directory holding a link is checked (whoever
 * writes it can point the link elsewhere): with every directory on every way
 * root's alone, only root can change what the name resolves to later. 0 when
 * trusted; -EPERM naming the path and the fix, -ELOOP, or -errno (-ENOENT when
 * absent, -ENOTDIR) in @err.
 */
struct hib_error;
int hib_path_trusted(const char *path, struct hib_error *err);
/*
 * hib_open_trusted: the object opened, to be used through the descriptor that
 * was checked (nothing can be swapped in between). A symlink anywhere in
 * @path is refused (-ELOOP, naming the link and the fix: a path without
 * links). @flags: 0 (O_RDONLY), or with O_DIRECTORY, O_PATH, O_NONBLOCK; the
 * object must be a regular file unless O_DIRECTORY (a FIFO is refused, never
 * waited on). Always O_CLOEXEC. Returns the descriptor; -EPERM, -ELOOP, -EINVAL
 * (not a regular file, or other flags), -errno (-ENOENT when absent) with the
 * message in @err.
 */
int hib_open_trusted(const char *path, int flags, struct hib_error *err);

/*
 * Take the run lock @path (created root-only if absent): flock(LOCK_EX|LOCK_NB)
 * on it, our pid written in it. Returns the descriptor (O_CLOEXEC: hooks and
 * what they leave running do not hold it), to keep open for as long as the
 * run; -EBUSY when another process holds it (@err names its pid and @path),
 * -EPERM when @path is not a root-owned regular file, or -errno.
 */
int hib_run_lock(const char *path, struct hib_error *err);

/* A test-only environment variable (meson -Dtest_knobs=true): NULL in other
 * builds, whose binaries then hold not even the name. */
#ifdef HIB_TEST_KNOBS
#define hib_test_knob(name) getenv(name)
#else
#define hib_test_knob(name) ((void)0, (const char *)NULL)
#endif

/* Full-length positional I/O: -errno, or -EIO on a short transfer at EOF. */
int hib_pread_full(int fd, void *buf, size_t len, uint64_t off);
int hib_pwrite_full(int fd, const void *buf, size_t len, uint64_t off);

/* Page-aligned, zeroed allocation (for O_DIRECT). NULL on failure. */
void *hib_alloc_pages(size_t bytes);

/* Random 64-bit value from getrandom(); falls back to time and pid. */
uint64_t hib_random_u64(void);

/*
 * Fault-injection hook for the VM tests (tests/vm/scenarios/powercut): with
 * HIBERNATE_TEST_PAUSE=POINT[:SECONDS] in the environment, reaching POINT logs
 * a warning naming it and sleeps SECONDS (default 60), so the test can cut the
 * power exactly there. Points: data, map, header, sync, signature (hibernate,
 * after each is on disk), loaded, invalidated (resume). Inert without the variable.
 */
void hib_test_pause(const char *point);

#endif
