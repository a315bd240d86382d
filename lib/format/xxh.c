// SPDX-License-Identifier: GPL-2.0-or-later
#include <pthread.h>
#include <time.h>
#include <xxhash.h>

#include "format/xxh.h"

uint64_t hib_xxh3_lib(const void *p, size_t n, uint64_t seed)
{
	return XXH3_64bits_withSeed(p, n, seed);
}

uint64_t hib_xxh3_two_lib(const void *a, size_t na, const void *b, size_t nb, uint64_t seed)
{
	XXH3_state_t st;

	XXH3_INITSTATE(&st); /* 0.8.1 reads the old seed: initialise first */
	XXH3_64bits_reset_withSeed(&st, seed);
	XXH3_64bits_update(&st, a, na);
	XXH3_64bits_update(&st, b, nb);
	return XXH3_64bits_digest(&st);
}

/* The process's choice: the same for every thread, made once. */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int use_scalar;

static uint64_t ns_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The best of 3 runs over 64 KiB (ns). */
static uint64_t best_ns(uint64_t (*fn)(const void *, size_t, uint64_t), const void *buf, size_t n)
{
	uint64_t best = UINT64_MAX, sink = 0;

	for (int i = 0; i < 3; i++) {
		uint64_t t = ns_now();

		sink ^= fn(buf, n, (uint64_t)i);
		t = ns_now() - t;
		if (t < best)
			best = t;
	}
	__asm__ volatile("" : : "r"(sink));
	return best;
}

static void choose(void)
{
	static uint8_t buf[64 * 1024];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131u + (i >> 9));
	/* The scalar one only when clearly faster: the library's is the default. */
	use_scalar = best_ns(hib_xxh3_scalar, buf, sizeof(buf)) * 5 <
		     best_ns(hib_xxh3_lib, buf, sizeof(buf)) * 4;
}

const char *hib_xxh3_impl(void)
{
	pthread_once(&once, choose);
	return use_scalar ? "scalar" : "library";
}

uint64_t hib_xxh3(const void *p, size_t n, uint64_t seed)
{
	pthread_once(&once, choose);
	return use_scalar ? hib_xxh3_scalar(p, n, seed) : hib_xxh3_lib(p, n, seed);
}

uint64_t hib_xxh3_two(const void *a, size_t na, const void *b, size_t nb, uint64_t seed)
{
	pthread_once(&once, choose);
	return use_scalar ? hib_xxh3_two_scalar(a, na, b, nb, seed)
			  : hib_xxh3_two_lib(a, na, b, nb, seed);
}
