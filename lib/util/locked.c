// SPDX-License-Identifier: GPL-2.0-or-later
/* Locked, guarded memory for a secret (locked.h). */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/locked.h"

static size_t page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);

	return p > 0 ? (size_t)p : 4096;
}

/* The mapping: a guard page, the data pages, a guard page. */
static size_t data_bytes(size_t size)
{
	size_t pg = page_size();

	return (size + pg - 1) / pg * pg;
}

void *hib_locked_alloc(size_t size)
{
	size_t pg = page_size(), data;
	uint8_t *base, *p;
	int saved;

	if (size == 0 || size > SIZE_MAX / 2) {
		errno = EINVAL;
		return NULL;
	}
	data = data_bytes(size);
	base = mmap(NULL, data + 2 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	p = base + pg;
	if (mprotect(p, data, PROT_READ | PROT_WRITE) < 0 || mlock(p, data) < 0)
		goto fail;
	(void)madvise(p, data, MADV_DONTDUMP); /* best effort: dumps are off anyway */
	return p;
fail:
	saved = errno;
	munmap(base, data + 2 * pg);
	errno = saved;
	return NULL;
}

void hib_locked_free(void *p, size_t size)
{
	size_t pg = page_size(), data;

	if (!p)
		return;
	data = data_bytes(size);
	explicit_bzero(p, data);
	munlock(p, data);
	munmap((uint8_t *)p - pg, data + 2 * pg);
}
