/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared by the unit tests: swap headers in files, file fixtures, images, log capture. */
#ifndef HIB_TEST_HELPERS_H
#define HIB_TEST_HELPERS_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include "hibernate.h"
#include "snapshot/snapshot-fake.h"

#define TEST_PAGE 4096u

/* A fixture could not be made (disk full, no /tmp): not a finding about the
 * code under test, so stop loudly rather than report a misleading failure. */
static inline void die(const char *what)
{
	fprintf(stderr, "test fixture: %s: %s\n", what, strerror(errno));
	abort();
}

/* A fixture's directory tree, gone; 0 or -1. */
static inline int remove_tree(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Size @fd to @pages pages and write a swap header like mkswap's (version 1,
 * last_page, a uuid and label, SWAPSPACE2). */
static inline void make_swap_file(int fd, uint64_t pages)
{
	uint8_t page[4096];
	uint32_t v;

	memset(page, 0, sizeof(page));
	v = 1;
	memcpy(page + 1024, &v, 4); /* version */
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

/* The number after "@key:" in /proc/self/status (VmLck in kB, Threads...),
 * or -1 when the file cannot be read or has no such line. */
static inline long proc_status_field(const char *key)
{
	size_t n = strlen(key);
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *end;

		if (strncmp(line, key, n) != 0 || line[n] != ':')
			continue;
		v = strtol(line + n + 1, &end, 10);
		if (end == line + n + 1)
			v = -1;
		break;
	}
	fclose(f);
	return v;
}

/* ---- files ------------------------------------------------------------- */

/*
 * Every temporary file a test makes is remembered and removed at exit: a
 * failed assertion leaves its case early, before the case's own unlink().
 * (Forked children leave with _exit() or exec, so they never remove them.)
 */
#define TEMP_MAX 256
static char *temp_paths[TEMP_MAX];
static unsigned temp_count;

static inline void temp_cleanup(void)
{
	for (unsigned i = 0; i < temp_count; i++) {
		unlink(temp_paths[i]);
		free(temp_paths[i]);
	}
	temp_count = 0;
}

static inline void temp_track(const char *path)
{
	static bool registered;

	if (!registered && atexit(temp_cleanup) != 0)
		die("atexit");
	registered = true;
	if (temp_count == TEMP_MAX) {
		/* Forget the files the cases removed themselves. */
		unsigned n = 0;
		for (unsigned i = 0; i < temp_count; i++) {
			if (access(temp_paths[i], F_OK) == 0)
				temp_paths[n++] = temp_paths[i];
			else
				free(temp_paths[i]);
		}
		temp_count = n;
	}
	if (temp_count < TEMP_MAX)
		temp_paths[temp_count++] = strdup(path);
}

/* Create an empty temporary file named after @tag; its path goes to @path
 * (PATH_MAX bytes). Returns an open read-write descriptor. */
static inline int make_temp(char *path, const char *tag)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	snprintf(path, PATH_MAX, "%s/hib-%s-XXXXXX", dir && *dir ? dir : "/tmp", tag);
	fd = mkstemp(path);
	if (fd < 0)
		die("mkstemp");
	temp_track(path);
	return fd;
}

/* A temporary swap file of @pages pages; the path goes to @path. */
static inline void make_swap_path(char *path, const char *tag, uint64_t pages)
{
	int fd = make_temp(path, tag);

	make_swap_file(fd, pages);
	close(fd);
}

static inline void write_text_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		die(path);
}

/* @text as the file @rel under a fake root @root, its directories made first. */
/* A small file's text (at most 8 KiB) in a static buffer; "" when it cannot
 * be read: what a stand-in program wrote. */
static inline char *read_small_text(const char *path)
{
	static char buf[8192];
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = 0;
	return buf;
}

static inline void put_under(const char *root, const char *rel, const char *text)
{
	char p[PATH_MAX], cmd[2 * PATH_MAX];

	snprintf(p, sizeof(p), "%s%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", p);
	if (system(cmd) != 0)
		die(cmd);
	write_text_file(p, text);
}

static inline void pread_at(const char *path, uint64_t off, void *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || pread(fd, buf, len, (off_t)off) != (ssize_t)len)
		die(path);
	close(fd);
}

static inline void pwrite_at(const char *path, uint64_t off, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || pwrite(fd, buf, len, (off_t)off) != (ssize_t)len || fsync(fd) != 0)
		die(path);
	close(fd);
}

static inline void read_page0(const char *path, uint8_t page[TEST_PAGE])
{
	pread_at(path, 0, page, TEST_PAGE);
}

/* XOR one byte of a file with @mask (a corruption of exactly one byte). */
static inline void xor_byte_at(const char *path, uint64_t off, uint8_t mask)
{
	uint8_t b;

	pread_at(path, off, &b, 1);
	b ^= mask;
	pwrite_at(path, off, &b, 1);
}

/* XXH3 of the whole content, size included: "not a byte written" in one number. */
static inline uint64_t hash_file(const char *path)
{
	XXH3_state_t st;
	uint8_t buf[65536];
	ssize_t n;
	uint64_t size = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die(path);
	XXH3_64bits_reset(&st);
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		XXH3_64bits_update(&st, buf, (size_t)n);
		size += (uint64_t)n;
	}
	if (n < 0)
		die(path);
	close(fd);
	XXH3_64bits_update(&st, &size, sizeof(size));
	return XXH3_64bits_digest(&st);
}

static inline void copy_file(const char *src, const char *dst)
{
	uint8_t buf[65536];
	ssize_t n;
	int in = open(src, O_RDONLY | O_CLOEXEC);
	int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (in < 0 || out < 0)
		die("copy_file: open");
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			die("copy_file: write");
	if (n < 0 || fsync(out) != 0)
		die("copy_file: read");
	close(in);
	close(out);
}

/* ---- images ------------------------------------------------------------ */

static inline struct hib_fake_params fake_params(uint64_t seed, uint64_t stream_pages,
						 uint64_t swap_pages, uint32_t frag_every)
{
	struct hib_fake_params p = {
		.seed = seed,
		.stream_pages = stream_pages,
		.swap_pages = swap_pages,
		.frag_every = frag_every,
		.fail_read_at = -1,
		.fail_write_at = -1,
	};
	return p;
}

/*
 * What a cycle came to, as one number for assertions: the -errno hib_suspend
 * or hib_resume returned, else the outcome it gave (outcomes are all > 0).
 */
static inline int cycle_result(int r, int outcome)
{
	return r < 0 ? r : outcome;
}

/*
 * Hibernate through a fake built from @fp into the swap file at @path,
 * powerdown NONE. Returns what hib_suspend came to (cycle_result(), or a
 * negative errno from opening the target or the fake); @ret_frozen (may be
 * NULL) says whether the fake was left frozen; @ret_stats may be NULL.
 */
static inline int write_image(const char *path, const struct hib_fake_params *fp,
			      enum hib_codec_choice codec, unsigned threads,
			      struct hib_stats *ret_stats, bool *ret_frozen)
{
	struct hib_target *t = NULL;
	struct hib_snapshot *snap = NULL;
	struct hib_options o;
	enum hib_suspend_outcome outcome = 0;
	bool frozen = true;
	int r;

	hib_options_init(&o);
	o.codec = codec;
	o.threads = threads;
	o.powerdown = HIB_POWERDOWN_NONE;
	r = hib_target_open(path, 0, true, &t);
	if (r < 0)
		return r;
	r = hib_snapshot_fake_new(fp, HIB_SNAP_HIBERNATE, &snap);
	if (r < 0) {
		hib_target_close(t);
		return r;
	}
	r = hib_suspend(t, snap, &o, &outcome, ret_stats);
	r = cycle_result(r, outcome);
	hib_snapshot_fake_result(snap, NULL, NULL, NULL, &frozen);
	if (ret_frozen)
		*ret_frozen = frozen;
	hib_snapshot_close(snap);
	hib_target_close(t);
	return r;
}

/* What a fake resume saw. */
struct resume_result {
	int r; /* what hib_resume came to (cycle_result) */
	uint64_t pages_ok;
	bool complete, restored, frozen;
};

/* Resume the image at @path into a fresh fake made from @fp. */
static inline struct resume_result resume_image(const char *path, const struct hib_fake_params *fp,
						unsigned threads)
{
	struct resume_result res = { .r = -EINVAL };
	struct hib_target *t = NULL;
	struct hib_snapshot *snap = NULL;
	struct hib_options o;
	enum hib_resume_outcome outcome = 0;

	hib_options_init(&o);
	o.threads = threads;
	o.powerdown = HIB_POWERDOWN_NONE;
	res.r = hib_target_open(path, 0, true, &t);
	if (res.r < 0)
		return res;
	res.r = hib_snapshot_fake_new(fp, HIB_SNAP_RESUME, &snap);
	if (res.r < 0) {
		hib_target_close(t);
		return res;
	}
	res.r = hib_resume(t, snap, &o, &outcome, NULL);
	res.r = cycle_result(res.r, outcome);
	hib_snapshot_fake_result(snap, &res.pages_ok, &res.complete, &res.restored, &res.frozen);
	hib_snapshot_close(snap);
	hib_target_close(t);
	return res;
}

/* ---- loop devices ------------------------------------------------------ */

/* Run @cmd through the shell; its output, trailing newlines and spaces cut,
 * into @out if given. Returns its exit status, -1 when it did not exit. */
static inline int run_cmd(const char *cmd, char *out, size_t outlen)
{
	FILE *f = popen(cmd, "r");
	size_t n = 0;
	int st;

	if (!f)
		return -1;
	if (out && outlen) {
		n = fread(out, 1, outlen - 1, f);
		out[n] = 0;
		while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == ' '))
			out[--n] = 0;
	}
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Attach @file to a free loop device, whose path goes to @dev (@len bytes).
 * NULL when done, else why not: the case skips, saying so. */
static inline const char *loop_attach(const char *file, char *dev, size_t len)
{
	static char why[320];
	char cmd[PATH_MAX + 64], out[256];

	if (geteuid() != 0) {
		snprintf(why, sizeof(why), "loop devices need root (euid %u)", (unsigned)geteuid());
		return why;
	}
	if (access("/dev/loop-control", W_OK) != 0) {
		snprintf(why, sizeof(why), "no /dev/loop-control (%s)", strerror(errno));
		return why;
	}
	snprintf(cmd, sizeof(cmd), "losetup -f --show '%s' 2>&1", file);
	if (run_cmd(cmd, out, sizeof(out)) != 0 || strncmp(out, "/dev/", 5) != 0) {
		snprintf(why, sizeof(why), "losetup -f --show failed: %s", out);
		return why;
	}
	snprintf(dev, len, "%s", out);
	return NULL;
}

/* Detach loop device @dev: losetup's exit status. */
static inline int loop_detach(const char *dev)
{
	char cmd[PATH_MAX + 64];

	snprintf(cmd, sizeof(cmd), "losetup -d '%s' 2>&1", dev);
	return run_cmd(cmd, NULL, 0);
}

/* A cmocka fixture: the case attaches @file as @dev; teardown detaches it
 * and removes the file, whichever way the case ended. */
struct loopdev {
	char file[PATH_MAX];
	char dev[256];
};

static inline int loop_setup(void **state)
{
	struct loopdev *l = calloc(1, sizeof(*l));

	if (!l)
		return -1;
	*state = l;
	return 0;
}

static inline int loop_teardown(void **state)
{
	struct loopdev *l = *state;

	if (l->dev[0]) {
		if (loop_detach(l->dev) != 0)
			fprintf(stderr, "# warning: could not detach %s\n", l->dev);
	}
	if (l->file[0])
		unlink(l->file);
	free(l);
	return 0;
}

#endif
