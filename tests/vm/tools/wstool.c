// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The working-set scenario's two helpers; busybox has neither. Built static
 * on the host into that scenario's initramfs.
 *   wstool hog MIB FILE   MIB of anonymous memory (not zeros), FILE held open;
 *                         creates /run/wstool.PID.ready once filled, then
 *                         waits, touching nothing, until killed
 *   wstool incore FILE    "RESIDENT TOTAL": FILE's pages in the page cache
 *                         (mincore over a mapping, which faults nothing in)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int hog(long mib, const char *file)
{
	size_t len = (size_t)mib << 20;
	unsigned char *m =
		mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = open(file, O_RDONLY);

	if (m == MAP_FAILED || fd < 0) {
		perror("wstool hog");
		return 1;
	}
	char ready[64];

	for (size_t i = 0; i < len; i += 512)
		m[i] = (unsigned char)(i >> 9 | 1);
	snprintf(ready, sizeof(ready), "/run/wstool.%d.ready", (int)getpid());
	close(open(ready, O_WRONLY | O_CREAT, 0600));
	for (;;)
		pause();
}

static int incore(const char *file)
{
	int fd = open(file, O_RDONLY);
	struct stat st;
	size_t pages, n = 0;
	unsigned char *vec;
	void *m;

	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0) {
		perror("wstool incore");
		return 1;
	}
	pages = ((size_t)st.st_size + 4095) / 4096;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	vec = malloc(pages);
	if (m == MAP_FAILED || !vec || mincore(m, (size_t)st.st_size, vec) < 0) {
		perror("wstool incore");
		return 1;
	}
	for (size_t i = 0; i < pages; i++)
		n += vec[i] & 1;
	printf("%zu %zu\n", n, pages);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "hog") == 0)
		return hog(atol(argv[2]), argv[3]);
	if (argc == 3 && strcmp(argv[1], "incore") == 0)
		return incore(argv[2]);
	fprintf(stderr, "usage: wstool hog MIB FILE | wstool incore FILE\n");
	return 2;
}
