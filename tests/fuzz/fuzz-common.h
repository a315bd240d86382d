/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared by the fuzz targets and the seed generator: fixed keys and ids (so
 * seeds and crash files mean the same thing in every run), quiet logging,
 * invariant checks, and files in memory.
 */
#ifndef HIB_FUZZ_COMMON_H
#define HIB_FUZZ_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hibernate.h"

/* The image id (checksum seed) of the records fuzz_block builds and checks. */
#define FUZZ_IMAGE_ID 0x66757a7a2d696d67ull /* "fuzz-img" */

/* The data key fuzz_block seals and opens records with. */
static const uint8_t fuzz_data_key[32] = {
	0x0f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x69, 0x78, 0x87, 0x96, 0xa5,
	0xb4, 0xc3, 0xd2, 0xe1, 0xf0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab,
	0xcd, 0xef, 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10,
};

/* The key file encrypted images are written and opened with (KDF_KEYFILE: fast,
 * unlike Argon2id, which is never run by a fuzzer). */
#define FUZZ_KEYFILE "fuzz key file: a fixture, not a secret\n"

static inline struct hib_secret fuzz_secret(void)
{
	struct hib_secret s = { .kind = HIB_SECRET_KEYFILE,
				.data = FUZZ_KEYFILE,
				.len = sizeof(FUZZ_KEYFILE) - 1 };
	return s;
}

/* A broken invariant: say which, then abort (libFuzzer keeps the input). */
#define FUZZ_CHECK(cond)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__,       \
				#cond);                                                            \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

static inline void fuzz_log_drop(enum hib_loglevel l, const char *m, void *u)
{
	(void)l, (void)m, (void)u;
}

static inline void fuzz_log_stderr(enum hib_loglevel l, const char *m, void *u)
{
	(void)u;
	fprintf(stderr, "hib[%d]: %s\n", (int)l, m);
}

static inline int fuzz_verbose(void)
{
	static int v = -1;

	if (v < 0) {
		const char *e = getenv("HIB_FUZZ_VERBOSE");
		v = e && *e && *e != '0';
	}
	return v;
}

/* HIB_FUZZ_VERBOSE=1 shows the library's messages and the targets' traces
 * (when replaying one input). */
static inline void fuzz_quiet_logs(void)
{
	hib_set_log(fuzz_verbose() ? fuzz_log_stderr : fuzz_log_drop, NULL);
}

#define fuzz_trace(...)                                                                            \
	do {                                                                                       \
		if (fuzz_verbose())                                                                \
			fprintf(stderr, __VA_ARGS__);                                              \
	} while (0)

/* ---- files in memory --------------------------------------------------- */

/* A memfd that the library opens by path ("/proc/self/fd/N"): a regular file
 * that never touches a disk. */
struct memfile {
	int fd;
	char path[64];
};

static inline void memfile_open(struct memfile *m, const char *name)
{
	m->fd = memfd_create(name, MFD_CLOEXEC);
	if (m->fd < 0) {
		perror("memfd_create");
		abort();
	}
	snprintf(m->path, sizeof(m->path), "/proc/self/fd/%d", m->fd);
}

/* Replace the whole content (every byte written: no page of the last run stays). */
static inline void memfile_set(struct memfile *m, const void *data, size_t len)
{
	struct stat st;

	if (fstat(m->fd, &st) != 0 ||
	    ((uint64_t)st.st_size != len && ftruncate(m->fd, (off_t)len) != 0) ||
	    (len && pwrite(m->fd, data, len, 0) != (ssize_t)len)) {
		perror("memfile_set");
		abort();
	}
}

static inline void memfile_get(const struct memfile *m, void *buf, size_t len, uint64_t off)
{
	if (pread(m->fd, buf, len, (off_t)off) != (ssize_t)len) {
		perror("memfile_get");
		abort();
	}
}

/* Little-endian reads from fuzz input, zero past the end. */
static inline uint64_t fuzz_le(const uint8_t *p, size_t avail, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n && i < avail; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

#endif
