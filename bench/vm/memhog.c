// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * memhog — the process heap of the bench workload (bench/vm/README: make
 * bench).  Built static on the host, run in the guest:
 *
 *   memhog ZERO_MB STRUCT_MB [FILE:MB ...]
 *
 * Allocates and touches, in its own anonymous memory:
 *   ZERO_MB    pages written with zeros (real pages, all zero: what a program
 *              that calloc'ed and never used a buffer holds)
 *   STRUCT_MB  a linked heap of small records (pointers, counters, doubles,
 *              short names), the shape of a real program's heap
 *   FILE:MB    the first MB MiB of FILE copied into the heap (text, binaries,
 *              random bytes: whatever FILE holds)
 * then prints "memhog ready MB" on stdout and sleeps until killed.  Nothing
 * of it is mlocked: under memory pressure it may be swapped out.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MIB (1024UL * 1024UL)

struct rec {
	struct rec *next, *prev;
	uint64_t id;
	uint32_t flags, refs;
	double weight;
	char name[24];
};

static void *region(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("memhog: mmap");
		exit(1);
	}
	return p;
}

int main(int argc, char **argv)
{
	unsigned long zero_mb, struct_mb, total = 0;
	int i;

	if (argc < 3) {
		fprintf(stderr, "usage: memhog ZERO_MB STRUCT_MB [FILE:MB ...]\n");
		return 2;
	}
	zero_mb = strtoul(argv[1], NULL, 10);
	struct_mb = strtoul(argv[2], NULL, 10);

	if (zero_mb) {
		unsigned char *z = region(zero_mb * MIB);

		memset(z, 0, zero_mb * MIB); /* write faults: real zero pages */
		total += zero_mb;
	}
	if (struct_mb) {
		size_t n = struct_mb * MIB / sizeof(struct rec);
		struct rec *r = region(n * sizeof(struct rec));
		uint64_t x = 0x9e3779b97f4a7c15ULL;

		for (size_t k = 0; k < n; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* a list threaded through the array in a scattered order */
			r[k].next = &r[(k * 7919 + 1) % n];
			r[k].prev = k ? &r[k - 1] : NULL;
			r[k].id = k;
			r[k].flags = (uint32_t)(x & 0x7);
			r[k].refs = (uint32_t)(x >> 60);
			r[k].weight = (double)(x % 10000) / 100.0;
			snprintf(r[k].name, sizeof(r[k].name), "item-%lu",
				 (unsigned long)(x % 100000));
		}
		total += struct_mb;
	}
	for (i = 3; i < argc; i++) {
		char *colon = strrchr(argv[i], ':');
		unsigned long mb;
		size_t got = 0;
		unsigned char *p;
		int fd;

		if (!colon) {
			fprintf(stderr, "memhog: %s: want FILE:MB\n", argv[i]);
			return 2;
		}
		*colon = '\0';
		mb = strtoul(colon + 1, NULL, 10);
		p = region(mb * MIB);
		fd = open(argv[i], O_RDONLY);
		if (fd < 0) {
			perror(argv[i]);
			return 1;
		}
		while (got < mb * MIB) {
			ssize_t r = read(fd, p + got, mb * MIB - got);

			if (r <= 0)
				break;
			got += (size_t)r;
		}
		close(fd);
		if (got < mb * MIB) {
			fprintf(stderr, "memhog: %s: only %zu bytes\n", argv[i], got);
			return 1;
		}
		total += mb;
	}
	printf("memhog ready %lu\n", total);
	fflush(stdout);
	for (;;)
		pause();
}
