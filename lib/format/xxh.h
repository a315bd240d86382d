/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * XXH3-64 over the image's blocks, the hot checksum of the write and the
 * load, from whichever of two builds of xxHash is faster on this CPU: the
 * library's (SSE2 on x86-64) or the portable scalar one.  Both give the same
 * hash: the choice is speed alone.  Measured: natively SSE2 is ~2.3x the
 * scalar's speed (17 against 7.4 GB/s), and both are far above any codec;
 * under QEMU's TCG, which emulates SSE2 an instruction at a time, the scalar
 * build is ~3.5x faster (1.3 GB/s against 0.38), and the checksums were a
 * third of a CPU-bound write.  Picked once per process by timing both.
 */
#ifndef HIB_XXH_H
#define HIB_XXH_H

#include <stddef.h>
#include <stdint.h>

/* XXH3_64bits_withSeed(p, n, seed). */
uint64_t hib_xxh3(const void *p, size_t n, uint64_t seed);
/* XXH3-64 with @seed over @a then @b, as one input (streamed). */
uint64_t hib_xxh3_two(const void *a, size_t na, const void *b, size_t nb, uint64_t seed);

/* The two builds, for the tests (and the choice). */
uint64_t hib_xxh3_lib(const void *p, size_t n, uint64_t seed);
uint64_t hib_xxh3_two_lib(const void *a, size_t na, const void *b, size_t nb, uint64_t seed);
uint64_t hib_xxh3_scalar(const void *p, size_t n, uint64_t seed);
uint64_t hib_xxh3_two_scalar(const void *a, size_t na, const void *b, size_t nb, uint64_t seed);
/* Which one hib_xxh3 uses: "library" (its vector build) or "scalar". */
const char *hib_xxh3_impl(void);

#endif
