// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The working set brought back after resume (hib_ws_restore), in a child
 * process under a watchdog (hib_ws_run_bounded): the recorded processes'
 * swapped memory (process_madvise, then /proc/PID/mem), and beside it, in a
 * thread of its own, the recorded files' ranges (readahead).
 */
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/util.h"
#include "workset/workset-priv.h"
#include "workset/workset.h"

#define WATCHDOG_GRACE_MS 500 /* past the limit, before the restoring process is ended */
#define REAP_MS 1000          /* for the ended process to be gone: then left to its end */

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
		c->st->stop = hib_ws_should_stop(&c->limits, hib_now_ms(), ws_mem_available_kb());
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
	if (ws_read_text(path, TEXT_MAX, &smaps) < 0)
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

		if (ws_proc_start_time(v->procs[i].pid, &start) < 0 ||
		    start != v->procs[i].start_time ||
		    ws_proc_kb(v->procs[i].pid, "status", "VmSwap", &kb) < 0 || kb == 0)
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
		if (ws_proc_kb(pid, "status", "VmSwap", &after) == 0 && after < vic[i].swap_kb)
			c->st->swapin_kb += vic[i].swap_kb - after;
	}
}

/* The file's recorded ranges into the page cache. readahead(2) reads at most the
 * device's readahead window a call, hence the steps. */
static void restore_file(struct restore_ctx *c, const struct hib_ws_view *v,
			 const struct hib_ws_file *f)
{
	const uint64_t step = 128 * 1024;
	_cleanup_(closep) int fd = ws_open_regular(v->paths + f->path_off, true);
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
	(void)ws_proc_kb(0, "meminfo", "MemTotal", &total);
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
