// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The working set, recorded before the snapshot (hib_ws_record) and brought
 * back after resume (hib_ws_restore) from /proc and the page cache.
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
#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/util.h"
#include "workset/workset.h"

#define PROC_FLOOR_KB 256    /* processes with less anon memory are not worth it */
#define FILE_FLOOR_KB 16384  /* ... unless they map this much of files */
#define SCAN_MAX_PIDS 32768  /* /proc entries looked at, at most */
#define TEXT_MAX (64u << 20) /* an smaps text larger than this is skipped */
#define FILE_RANGES_MAX 1024 /* ranges of one file; past it the rest is one range */
#define GAP_PAGES 8          /* holes this small are read with their neighbours */
#define MINCORE_CHUNK (256u << 20)
#define SEEN_SLOTS (4 * HIB_WS_MAX_FILES)
#define PAGE 4096u
#define WATCHDOG_GRACE_MS 500 /* past the limit, before the restoring process is ended */
#define REAP_MS 1000          /* for the ended process to be gone: then left to its end */

#ifndef SYS_openat2
#define SYS_openat2 437 /* the same number on every architecture */
#endif

/* ---- small readers ----------------------------------------------------------- */

/* All of @path, NUL-terminated, at most @max bytes; malloc'd in *ret. */
static int read_text(const char *path, size_t max, char **ret)
{
	_cleanup_(closep) int fd = open(path, O_RDONLY | O_CLOEXEC);
	_cleanup_(freep) char *buf = NULL;
	size_t len = 0, cap = 0;

	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			char *p;

			cap = cap ? cap * 2 : 16384;
			if (cap > max + 1)
				return -EFBIG;
			p = realloc(buf, cap);
			if (!p)
				return -ENOMEM;
			buf = p;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = 0;
	*ret = TAKE_PTR(buf);
	return 0;
}

static int proc_kb(pid_t pid, const char *file, const char *key, uint64_t *ret)
{
	_cleanup_(freep) char *text = NULL;
	char path[64];
	int r;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	else
		snprintf(path, sizeof(path), "/proc/%s", file);
	r = read_text(path, 1u << 20, &text);
	return r < 0 ? r : hib_ws_parse_kb(text, key, ret);
}

static int proc_start_time(pid_t pid, uint64_t *ret)
{
	_cleanup_(freep) char *text = NULL;
	char path[64];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	r = read_text(path, 1u << 16, &text);
	return r < 0 ? r : hib_ws_parse_start_time(text, ret);
}

static uint64_t mem_available_kb(void)
{
	uint64_t v;

	return proc_kb(0, "meminfo", "MemAvailable", &v) < 0 ? UINT64_MAX : v;
}

/* @path opened with @how; without O_NOATIME when that is not ours to ask. */
static int open_how(const char *path, struct open_how *how)
{
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, how, sizeof(*how));

	if (fd < 0 && errno == EPERM && (how->flags & O_NOATIME)) {
		how->flags &= ~(uint64_t)O_NOATIME;
		fd = (int)syscall(SYS_openat2, AT_FDCWD, path, how, sizeof(*how));
	}
	return fd;
}

/* @path for reading if it is a regular file (not a link to one: /proc gives
 * the real paths), opened so that nothing happens but reads: a device or a
 * FIFO put there since is not opened at all. O_NOATIME: this is not a use.
 * @no_links (the restore, from a record): a symlink in any component, or a
 * /proc magic link, is not followed but skipped (openat2 RESOLVE_NO_SYMLINKS
 * | RESOLVE_NO_MAGICLINKS): the tree may have changed since the record, and
 * root reads what is there. A kernel without openat2 (before 5.6): skipped
 * too, never opened the way that follows them. */
static int open_regular(const char *path, bool no_links)
{
	const int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
	struct open_how how = { .flags = flags | O_NOATIME,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	struct stat st;
	int fd;

	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	if (no_links) {
		fd = open_how(path, &how);
	} else {
		fd = open(path, flags | O_NOATIME);
		if (fd < 0 && errno == EPERM)
			fd = open(path, flags);
	}
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)))
		fd = (close(fd), -1);
	return fd;
}

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

	if (proc_kb(pid, "status", "RssAnon", &anon) < 0)
		return false;
	(void)proc_kb(pid, "status", "VmSwap", &swap);
	(void)proc_kb(pid, "status", "RssFile", &file);
	if ((anon + swap < PROC_FLOOR_KB && file < FILE_FLOOR_KB) ||
	    proc_start_time(pid, &ret->start) < 0)
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
	fd = open_regular(path, false);
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
	if (read_text(path, TEXT_MAX, &maps) == 0)
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
	if (read_text("/proc/swaps", 1u << 20, &swaps) < 0)
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

/* ---- the restore ---------------------------------------------------------------- */

struct restore_ctx {
	struct hib_ws_limits limits;
	struct hib_ws_restore_stats *st;
	unsigned char *buf; /* BUF_LEN: what /proc/PID/mem gives back, wiped after */
};
#define BUF_LEN (1u << 20)

static bool stop_now(struct restore_ctx *c)
{
	if (c->st->stop == HIB_WS_DONE)
		c->st->stop = hib_ws_should_stop(&c->limits, hib_now_ms(), mem_available_kb());
	return c->st->stop != HIB_WS_DONE;
}

/* Reads the swapped pages of [start, end) through /proc/PID/mem: the read
 * faults each one into the process (pagemap bit 62: swapped). */
static void touch_swapped(struct restore_ctx *c, int pagemap, int mem, uint64_t start, uint64_t end)
{
	uint64_t pm[BUF_LEN / PAGE]; /* a run of them fits in c->buf */

	for (uint64_t va = start; va < end && !stop_now(c); va += sizeof(pm) / 8 * PAGE) {
		size_t pages = (size_t)MIN((end - va) / PAGE, (uint64_t)ARRAY_SIZE(pm));
		ssize_t got = pread(pagemap, pm, pages * 8, (off_t)(va / PAGE * 8));

		if (got <= 0)
			return;
		for (size_t p = 0; p < (size_t)got / 8;) {
			size_t q = p;

			while (q < (size_t)got / 8 && (pm[q] >> 62 & 1))
				q++;
			if (q > p && pread(mem, c->buf, (q - p) * PAGE, (off_t)(va + p * PAGE)) < 0)
				return;
			p = q == p ? p + 1 : q;
		}
	}
}

/* process_madvise(MADV_WILLNEED) over @v: the swap reads all queued at once. */
static void willneed(struct restore_ctx *c, int pidfd, const struct hib_ws_vma *v, size_t n)
{
	struct iovec iov[512];

	for (size_t i = 0; i < n; i += ARRAY_SIZE(iov)) {
		size_t k = MIN(n - i, ARRAY_SIZE(iov));

		for (size_t j = 0; j < k; j++)
			iov[j] = (struct iovec){ (void *)(uintptr_t)v[i + j].start,
						 (size_t)(v[i + j].end - v[i + j].start) };
		if (syscall(SYS_process_madvise, pidfd, iov, k, MADV_WILLNEED, 0) < 0) {
			if (!c->st->madvise_errno)
				c->st->madvise_errno = errno;
			return;
		}
	}
}

static int open_proc(pid_t pid, const char *file)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* @pid's VMAs with swap, from its smaps; their number, 0 on any failure. */
static size_t swapped_vmas(pid_t pid, struct hib_ws_vma **ret)
{
	_cleanup_(freep) char *smaps = NULL;
	struct hib_ws_vma *v;
	char path[64];
	uint64_t kb;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	if (read_text(path, TEXT_MAX, &smaps) < 0)
		return 0;
	n = hib_ws_parse_smaps(smaps, NULL, 0, &kb);
	if (n <= 0 || !(v = calloc((size_t)n, sizeof(*v))))
		return 0;
	n = hib_ws_parse_smaps(smaps, v, (size_t)n, &kb);
	*ret = v;
	return n > 0 ? (size_t)n : 0;
}

/* Queues the swap reads of @pid's swapped memory (process_madvise(WILLNEED)). */
static void swapin_queue(struct restore_ctx *c, pid_t pid)
{
	_cleanup_(freep) struct hib_ws_vma *v = NULL;
	_cleanup_(closep) int pidfd = -1;
	size_t n = swapped_vmas(pid, &v);

	if (n == 0)
		return;
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd >= 0)
		willneed(c, pidfd, v, n);
	else if (!c->st->madvise_errno)
		c->st->madvise_errno = errno;
}

/* Maps @pid's swapped memory back: read through /proc/PID/mem, which finds
 * the pages swapin_queue asked for in the swap cache, or reads them. */
static void swapin_map(struct restore_ctx *c, pid_t pid)
{
	_cleanup_(freep) struct hib_ws_vma *v = NULL;
	_cleanup_(closep) int pagemap = -1, mem = -1;
	size_t n = swapped_vmas(pid, &v);

	if (n == 0)
		return;
	pagemap = open_proc(pid, "pagemap");
	mem = open_proc(pid, "mem");
	for (size_t i = 0; i < n && pagemap >= 0 && mem >= 0 && !stop_now(c); i++)
		touch_swapped(c, pagemap, mem, v[i].start, v[i].end);
}

struct victim {
	uint32_t idx;
	uint64_t swap_kb;
};

static int victim_cmp(const void *a, const void *b)
{
	const struct victim *x = a, *y = b;

	return x->swap_kb < y->swap_kb ? 1 : x->swap_kb > y->swap_kb ? -1 : 0;
}

/* The recorded processes still there (same start time) with swap, largest first. */
static void restore_procs(struct restore_ctx *c, const struct hib_ws_view *v)
{
	struct victim vic[HIB_WS_MAX_PROCS];
	size_t n = 0;

	for (uint32_t i = 0; i < v->n_procs; i++) {
		uint64_t start, kb;

		if (proc_start_time(v->procs[i].pid, &start) < 0 ||
		    start != v->procs[i].start_time ||
		    proc_kb(v->procs[i].pid, "status", "VmSwap", &kb) < 0 || kb == 0)
			continue;
		vic[n++] = (struct victim){ i, kb };
	}
	qsort(vic, n, sizeof(*vic), victim_cmp);
	/* Every process's reads queued before any is mapped: the disk has all of
	 * them at once, and a process that wakes first finds its pages coming. */
	for (size_t i = 0; i < n && !stop_now(c); i++)
		swapin_queue(c, v->procs[vic[i].idx].pid);
	for (size_t i = 0; i < n && !stop_now(c); i++) {
		pid_t pid = v->procs[vic[i].idx].pid;
		uint64_t after;

		swapin_map(c, pid);
		c->st->procs++;
		if (proc_kb(pid, "status", "VmSwap", &after) == 0 && after < vic[i].swap_kb)
			c->st->swapin_kb += vic[i].swap_kb - after;
	}
}

/* The file's recorded ranges into the page cache. readahead(2) reads at most the
 * device's readahead window a call, hence the steps. */
static void restore_file(struct restore_ctx *c, const struct hib_ws_view *v,
			 const struct hib_ws_file *f)
{
	const uint64_t step = 128 * 1024;
	_cleanup_(closep) int fd = open_regular(v->paths + f->path_off, true);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return;
	c->st->files++;
	for (uint32_t i = 0; i < f->n_ranges && !stop_now(c); i++) {
		const struct hib_ws_range *rg = &v->ranges[f->first_range + i];
		uint64_t end = MIN(rg->off + rg->len, (uint64_t)st.st_size);

		for (uint64_t at = rg->off; at < end; at += step)
			if (readahead(fd, (off_t)at, (size_t)MIN(step, end - at)) == 0)
				c->st->file_bytes += MIN(step, end - at);
	}
}

struct files_job {
	struct restore_ctx c;
	const struct hib_ws_view *v;
};

static void *restore_files(void *arg)
{
	struct files_job *j = arg;

	for (uint32_t i = 0; i < j->v->n_files && !stop_now(&j->c); i++)
		restore_file(&j->c, j->v, &j->v->files[i]);
	return NULL;
}

/* ---- the watchdog ---------------------------------------------------------------- */

/* Until @fd (the read end of a pipe whose other end only the child holds)
 * says the child is gone, @ms at most (0: no limit): whether it is gone. */
static bool wait_gone(int fd, uint64_t ms)
{
	uint64_t end = hib_now_ms() + ms;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = hib_now_ms();
		int n;

		if (ms && now >= end)
			return false;
		n = poll(&p, 1, ms ? (int)MIN(end - now, (uint64_t)INT_MAX) : -1);
		if (n > 0)
			return true; /* POLLHUP: the last holder of the write end ended */
		if (n < 0 && errno != EINTR)
			return false;
	}
}

int hib_ws_run_bounded(void (*fn)(void *arg), void *arg, uint64_t limit_ms)
{
	int p[2], r = 1;
	pid_t pid, parent = getpid();

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(p[0]), close(p[1]);
		return r;
	}
	if (pid == 0) {
		/* Not outliving the process that would end it. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(1);
		close(p[0]);
		fn(arg);
		_exit(0);
	}
	close(p[1]);
	if (!wait_gone(p[0], limit_ms)) {
		/* Blocked in a read no signal but SIGKILL ends (a userfaultfd or
		 * FUSE mapping through /proc/PID/mem): the process goes. */
		kill(pid, SIGKILL);
		r = 0;
		(void)wait_gone(p[0], REAP_MS);
	}
	close(p[0]);
	/* Stuck even after SIGKILL (uninterruptible I/O): left unreaped, not waited on. */
	while (waitpid(pid, NULL, r ? 0 : WNOHANG) < 0 && errno == EINTR)
		;
	return r;
}

/* What the restoring process writes, seen by the one that waits for it. */
struct restore_shared {
	struct hib_ws_restore_stats procs, files;
};

struct restore_job {
	const void *rec; /* what @v points into: held here for the child's sake too */
	const struct hib_ws_view *v;
	struct hib_ws_limits limits;
	struct restore_shared *sh;
};

/* The processes here, the files beside them in a thread of their own. */
static void restore_run(void *arg)
{
	struct restore_job *j = arg;
	struct restore_ctx c = { .limits = j->limits, .st = &j->sh->procs };
	struct files_job fj = { .v = j->v };
	pthread_t files;
	bool apart;

	c.buf = malloc(BUF_LEN);
	if (!c.buf)
		return;
	fj.c = (struct restore_ctx){ .limits = j->limits, .st = &j->sh->files };
	/* The files beside the swap-in, not after it: they are often on another
	 * disk, and on the same one the queue is kept full. Same bounds. */
	apart = pthread_create(&files, NULL, restore_files, &fj) == 0;
	restore_procs(&c, j->v);
	if (apart)
		pthread_join(files, NULL);
	else
		restore_files(&fj);
	explicit_bzero(c.buf, BUF_LEN); /* other processes' memory */
	free(c.buf);
}

int hib_ws_restore(const void *rec, size_t len, uint64_t limit_ms, struct hib_ws_restore_stats *ret)
{
	struct hib_ws_restore_stats st;
	struct restore_shared *sh;
	struct restore_job j;
	struct hib_ws_view v;
	uint64_t total = 0;
	int r = hib_ws_decode(rec, len, &v);

	if (r < 0)
		return r;
	(void)proc_kb(0, "meminfo", "MemTotal", &total);
	j = (struct restore_job){ rec,
				  &v,
				  { hib_now_ms(), limit_ms, hib_ws_floor_kb(total) },
				  NULL };
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return -errno;
	sh->procs = sh->files = (struct hib_ws_restore_stats){ .stop = HIB_WS_DONE };
	j.sh = sh;
	/* The limit is checked between reads; a read that never returns is
	 * ended with the process doing it, a little after the limit. */
	r = hib_ws_run_bounded(restore_run, &j, limit_ms ? limit_ms + WATCHDOG_GRACE_MS : 0);
	if (r < 0)
		restore_run(&j); /* no process to spare: here, as before, unwatched */
	st = sh->procs;
	st.files = sh->files.files;
	st.file_bytes = sh->files.file_bytes;
	if (r == 0)
		st.stop = HIB_WS_TIME;
	else if (st.stop == HIB_WS_DONE)
		st.stop = sh->files.stop;
	st.ms = hib_now_ms() - j.limits.start_ms;
	munmap(sh, sizeof(*sh));
	*ret = st;
	return 0;
}
