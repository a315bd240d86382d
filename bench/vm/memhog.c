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
 *   map:FILE   FILE mapped read-only and read through the mapping (page cache
 *              the process holds, as a program holds its binaries and data)
 * then prints "memhog ready MB" on stdout and sleeps until killed.  Nothing
 * of it is mlocked: under memory pressure it may be swapped out.
 *
 * On SIGUSR1 (the comeback workload: the user is back) it reads one byte of
 * every page it holds, heap and mappings, in address order, and prints
 * "memhog walked majflt=N ms=M": the major faults the walk took (getrusage)
 * and how long it took.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024UL * 1024UL)

struct rec {
	struct rec *next, *prev;
	uint64_t id;
	uint32_t flags, refs;
	double weight;
	char name[24];
};

/* What the walk reads: every region, heap and file mappings. */
static struct {
	volatile unsigned char *p;
	size_t bytes;
} held[64];
static int n_held;
static volatile sig_atomic_t walk_asked;

static void hold(void *p, size_t bytes)
{
	if (n_held == (int)(sizeof(held) / sizeof(held[0]))) {
		fprintf(stderr, "memhog: too many regions\n");
		exit(2);
	}
	held[n_held].p = p;
	held[n_held++].bytes = bytes;
}

static void *region(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("memhog: mmap");
		exit(1);
	}
	hold(p, bytes);
	return p;
}

/* map:FILE: the whole file, read once through the mapping; returns MiB. */
static unsigned long map_file(const char *path)
{
	volatile unsigned char *p;
	unsigned long sum = 0;
	struct stat st;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0) {
		perror(path);
		exit(1);
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("memhog: mmap file");
		exit(1);
	}
	close(fd);
	hold((void *)p, (size_t)st.st_size);
	for (off_t off = 0; off < st.st_size; off += 4096)
		sum += p[off];
	(void)sum;
	return (unsigned long)(st.st_size / (off_t)MIB);
}

static void on_usr1(int sig)
{
	(void)sig;
	walk_asked = 1;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* The user is back: every page once, then how many had to come off the disk. */
static void walk(void)
{
	struct rusage before, after;
	struct timespec t0;
	unsigned long sum = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	getrusage(RUSAGE_SELF, &before);
	for (int i = 0; i < n_held; i++)
		for (size_t off = 0; off < held[i].bytes; off += 4096)
			sum += held[i].p[off];
	getrusage(RUSAGE_SELF, &after);
	printf("memhog walked majflt=%ld ms=%ld sum=%lu\n", after.ru_majflt - before.ru_majflt,
	       ms_since(&t0), sum & 0xff);
	fflush(stdout);
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

		if (strncmp(argv[i], "map:", 4) == 0) {
			total += map_file(argv[i] + 4);
			continue;
		}
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
	signal(SIGUSR1, on_usr1);
	printf("memhog ready %lu\n", total);
	fflush(stdout);
	for (;;) {
		pause();
		if (walk_asked) {
			walk_asked = 0;
			walk();
		}
	}
}
