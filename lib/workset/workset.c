// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The working set recorded before the snapshot (hib_ws_record) from /proc
 * and the page cache; restore.c brings it back after resume.
 *
 * What prealloc pushed to swap is not knowable before it happens, so the
 * record names the processes (pid and start time) and the restore asks each
 * one's smaps which VMAs hold swap then. The file ranges are those in the
 * page cache at record time (mincore over a read-only mapping: it faults
 * nothing in), in the order of the processes that map or hold them, largest
 * anonymous memory first: the recency proxy of this module.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "util/util.h"
#include "workset/workset-priv.h"
#include "workset/workset.h"

#define PROC_FLOOR_KB 256    /* processes with less anon memory are not worth it */
#define FILE_FLOOR_KB 16384  /* ... unless they map this much of files */
#define SCAN_MAX_PIDS 32768  /* /proc entries looked at, at most */
#define FILE_RANGES_MAX 1024 /* ranges of one file; past it the rest is one range */
#define GAP_PAGES 8          /* holes this small are read with their neighbours */
#define MINCORE_CHUNK (256u << 20)
#define SEEN_SLOTS (4 * HIB_WS_MAX_FILES)

/* ---- the record: processes ----------------------------------------------------- */

struct cand {
	pid_t pid;
	uint64_t start, anon_kb;
};

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return x->anon_kb < y->anon_kb ? 1 : x->anon_kb > y->anon_kb ? -1 : 0;
}

/* A user process with anon memory worth restoring, or file pages mapped worth
 * recording (kernel threads have no RssAnon): one that maps its data and holds
 * little heap (a reader of mmap'ed files) is what the files are for. */
static bool proc_candidate(pid_t pid, struct cand *ret)
{
	uint64_t anon, swap = 0, file = 0;

	if (ws_proc_kb(pid, "status", "RssAnon", &anon) < 0)
		return false;
	(void)ws_proc_kb(pid, "status", "VmSwap", &swap);
	(void)ws_proc_kb(pid, "status", "RssFile", &file);
	if ((anon + swap < PROC_FLOOR_KB && file < FILE_FLOOR_KB) ||
	    ws_proc_start_time(pid, &ret->start) < 0)
		return false;
	ret->pid = pid;
	ret->anon_kb = anon + swap;
	return true;
}

/* Every candidate but us, largest first, in *ret (malloc'd). */
static int scan_procs(struct cand **ret, size_t *ret_n)
{
	_cleanup_(freep) struct cand *c = malloc(SCAN_MAX_PIDS * sizeof(*c));
	DIR *d = opendir("/proc");
	struct dirent *de;
	size_t n = 0;

	if (!c || !d) {
		if (d)
			closedir(d);
		return c ? -errno : -ENOMEM;
	}
	while ((de = readdir(d)) && n < SCAN_MAX_PIDS) {
		char *e;
		long pid = strtol(de->d_name, &e, 10);

		if (*e || pid <= 0 || pid == getpid())
			continue;
		if (proc_candidate((pid_t)pid, &c[n]))
			n++;
	}
	closedir(d);
	qsort(c, n, sizeof(*c), cand_cmp);
	*ret = TAKE_PTR(c);
	*ret_n = n;
	return 0;
}

/* ---- the record: files --------------------------------------------------------- */

struct rec_ctx {
	struct hib_ws_builder b;
	struct {
		dev_t dev;
		ino_t ino;
		bool used;
	} seen[SEEN_SLOTS];
	struct hib_ws_range ranges[FILE_RANGES_MAX];
	uint64_t deadline_ms, resident;
	bool full; /* a bound reached: record no more files */
};

/* Whether (@dev, @ino) was seen before; remembers it. */
static bool seen_before(struct rec_ctx *c, dev_t dev, ino_t ino)
{
	size_t i = ((uint64_t)dev * 0x9e3779b97f4a7c15ull ^ (uint64_t)ino) % SEEN_SLOTS;

	for (;; i = (i + 1) % SEEN_SLOTS) {
		if (!c->seen[i].used) {
			c->seen[i].used = true, c->seen[i].dev = dev, c->seen[i].ino = ino;
			return false;
		}
		if (c->seen[i].dev == dev && c->seen[i].ino == ino)
			return true;
	}
}

/* Appends [off, off+len) to the file's ranges, joining small holes. */
static void range_add(struct rec_ctx *c, size_t *n, uint64_t off, uint64_t len, uint64_t size)
{
	struct hib_ws_range *last = *n ? &c->ranges[*n - 1] : NULL;

	if (last && off <= last->off + last->len + GAP_PAGES * PAGE) {
		last->len = off + len - last->off;
		return;
	}
	if (*n == FILE_RANGES_MAX) { /* the rest of the file, as one range */
		last->len = size - last->off;
		return;
	}
	c->ranges[(*n)++] = (struct hib_ws_range){ off, len };
}

/* The resident ranges of @fd's first @size bytes, into c->ranges. */
static int resident_ranges(struct rec_ctx *c, int fd, uint64_t size, size_t *ret_n)
{
	static unsigned char vec[MINCORE_CHUNK / PAGE];
	size_t n = 0;

	for (uint64_t at = 0; at < size; at += MINCORE_CHUNK) {
		size_t len = (size_t)MIN(size - at, (uint64_t)MINCORE_CHUNK);
		void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)at);
		int r;

		if (m == MAP_FAILED)
			return -errno;
		r = mincore(m, len, vec) < 0 ? -errno : 0;
		munmap(m, len);
		if (r < 0)
			return r;
		for (size_t p = 0; p < DIV_ROUND_UP(len, PAGE); p++)
			if (vec[p] & 1)
				range_add(c, &n, at + p * PAGE, PAGE, size);
	}
	*ret_n = n;
	return 0;
}

/* tmpfs and ramfs pages are never dropped to disk's cache: nothing to read back. */
static bool in_memory_fs(int fd)
{
	struct statfs sf;

	return fstatfs(fd, &sf) == 0 && (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC);
}

/* Records @path if it is a regular file, not seen before, with pages in the cache. */
static void record_file(struct rec_ctx *c, const char *path)
{
	_cleanup_(closep) int fd = -1;
	struct stat st;
	size_t n = 0;

	if (c->full || lstat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0 ||
	    seen_before(c, st.st_dev, st.st_ino))
		return;
	if (hib_now_ms() >= c->deadline_ms) {
		c->full = true;
		return;
	}
	fd = ws_open_regular(path, false);
	if (fd < 0 || in_memory_fs(fd) || resident_ranges(c, fd, (uint64_t)st.st_size, &n) < 0 ||
	    n == 0)
		return;
	if (hib_ws_add_file(&c->b, path) < 0) {
		c->full = true;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (hib_ws_add_range(&c->b, c->ranges[i].off, c->ranges[i].len) < 0) {
			c->full = true;
			return;
		}
		c->resident += c->ranges[i].len;
	}
}

/* The files @pid maps, then those it holds open. */
static void record_proc_files(struct rec_ctx *c, pid_t pid)
{
	_cleanup_(freep) char *maps = NULL;
	char path[PATH_MAX], link[64];
	struct dirent *de;
	size_t pos = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (ws_read_text(path, TEXT_MAX, &maps) == 0)
		while (!c->full && hib_ws_parse_maps_next(maps, &pos, path, sizeof(path)) > 0)
			record_file(c, path);
	snprintf(link, sizeof(link), "/proc/%d/fd", (int)pid);
	d = opendir(link);
	while (d && !c->full && (de = readdir(d))) {
		char fdpath[64 + sizeof(de->d_name)];
		ssize_t n;

		snprintf(fdpath, sizeof(fdpath), "%s/%s", link, de->d_name);
		n = readlink(fdpath, path, sizeof(path) - 1);
		if (n <= 0 || path[0] != '/')
			continue;
		path[n] = 0;
		record_file(c, path);
	}
	if (d)
		closedir(d);
}

/* The active swap files and @exclude count as seen: never recorded. */
static void exclude_targets(struct rec_ctx *c, const char *exclude)
{
	_cleanup_(freep) char *swaps = NULL;
	char path[PATH_MAX];
	struct stat st;

	if (exclude && stat(exclude, &st) == 0)
		(void)seen_before(c, st.st_dev, st.st_ino);
	if (ws_read_text("/proc/swaps", 1u << 20, &swaps) < 0)
		return;
	for (const char *line = strchr(swaps, '\n'); line && line[1]; line = strchr(line, '\n')) {
		line++;
		if (sscanf(line, "%4095s", path) == 1 && stat(path, &st) == 0)
			(void)seen_before(c, st.st_dev, st.st_ino);
	}
}

int hib_ws_record(const char *exclude, uint64_t max_ms, void **ret_buf, size_t *ret_len,
		  struct hib_ws_record_stats *ret_stats)
{
	_cleanup_(freep) struct rec_ctx *c = calloc(1, sizeof(*c));
	_cleanup_(freep) struct cand *cand = NULL;
	uint64_t t0 = hib_now_ms();
	size_t n = 0;
	int r;

	if (!c)
		return -ENOMEM;
	c->deadline_ms = t0 + max_ms;
	exclude_targets(c, exclude);
	r = scan_procs(&cand, &n);
	for (size_t i = 0; r == 0 && i < MIN(n, (size_t)HIB_WS_MAX_PROCS); i++)
		r = hib_ws_add_proc(&c->b, cand[i].pid, cand[i].start);
	for (size_t i = 0; r == 0 && i < c->b.n_procs && !c->full; i++)
		record_proc_files(c, c->b.procs[i].pid);
	if (r == 0)
		r = hib_ws_encode(&c->b, ret_buf, ret_len);
	if (r == 0 && ret_stats)
		*ret_stats = (struct hib_ws_record_stats){
			.procs = c->b.n_procs,
			.files = c->b.n_files,
			.ranges = c->b.n_ranges,
			.resident_bytes = c->resident,
			.ms = hib_now_ms() - t0,
			.truncated = c->full || n > HIB_WS_MAX_PROCS,
		};
	hib_ws_builder_free(&c->b);
	return r;
}
