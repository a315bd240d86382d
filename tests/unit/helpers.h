/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared by the unit tests: swap headers in files, log capture. */
#ifndef HIB_TEST_HELPERS_H
#define HIB_TEST_HELPERS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hibernate.h"

/* Size @fd to @pages pages and write a swap header like mkswap's (version 1,
 * last_page, a uuid and label, SWAPSPACE2). */
static inline void make_swap_file(int fd, uint64_t pages)
{
	uint8_t page[4096];
	uint32_t v;

	memset(page, 0, sizeof(page));
	v = 1;
	memcpy(page + 1024, &v, 4);                  /* version */
	v = (uint32_t)(pages - 1);
	memcpy(page + 1028, &v, 4);                  /* last_page */
	memcpy(page + 1036, "0123456789abcdef", 16); /* uuid */
	memcpy(page + 1052, "testswap", 8);          /* label */
	memcpy(page + 4086, "SWAPSPACE2", 10);
	if (ftruncate(fd, (off_t)(pages * 4096)) != 0 || pwrite(fd, page, 4096, 0) != 4096)
		abort();
}

static inline void drop_log(enum hib_loglevel l, const char *m, void *u)
{
	(void)l, (void)m, (void)u;
}

static inline void quiet_logs(void)
{
	if (!getenv("HIB_TEST_VERBOSE"))
		hib_set_log(drop_log, NULL);
}

#endif
