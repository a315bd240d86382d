// SPDX-License-Identifier: GPL-2.0-or-later
/* xxHash's portable scalar build, beside the library's vector one (xxh.h). */
#define XXH_INLINE_ALL
#define XXH_VECTOR 0 /* XXH_SCALAR */
#include <xxhash.h>

#include "format/xxh.h"

uint64_t hib_xxh3_scalar(const void *p, size_t n, uint64_t seed)
{
	return XXH3_64bits_withSeed(p, n, seed);
}

uint64_t hib_xxh3_two_scalar(const void *a, size_t na, const void *b, size_t nb, uint64_t seed)
{
	XXH3_state_t st;

	XXH3_INITSTATE(&st); /* 0.8.1 reads the old seed: initialise first */
	XXH3_64bits_reset_withSeed(&st, seed);
	XXH3_64bits_update(&st, a, na);
	XXH3_64bits_update(&st, b, nb);
	return XXH3_64bits_digest(&st);
}
