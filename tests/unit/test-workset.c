// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The working set (lib/workset): the record's serialized form and its bounds,
 * the /proc parsers, when the restore stops (a fake clock), and one record
 * and restore on this host's /proc over a process of the test's own; the
 * restore's own guards: no symlink followed, a read that blocks ended.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "workset/workset.h"

/* A record of 3 processes and 2 files, the first with 2 ranges, the second with 1. */
static void build_small(struct hib_ws_builder *b)
{
	memset(b, 0, sizeof(*b));
	assert_int_equal(hib_ws_add_proc(b, 100, 1000), 0);
	assert_int_equal(hib_ws_add_proc(b, 200, 2000), 0);
	assert_int_equal(hib_ws_add_proc(b, 300, 3000), 0);
	assert_int_equal(hib_ws_add_file(b, "/usr/lib/libc.so.6"), 0);
	assert_int_equal(hib_ws_add_range(b, 0, 8192), 0);
	assert_int_equal(hib_ws_add_range(b, 65536, 4096), 0);
	assert_int_equal(hib_ws_add_file(b, "/home/u/notes with spaces.txt"), 0);
	assert_int_equal(hib_ws_add_range(b, 4096, 1 << 20), 0);
}

static void round_trip(void **state)
{
	struct hib_ws_builder b;
	struct hib_ws_view v;
	void *buf;
	size_t len;

	(void)state;
	build_small(&b);
	assert_int_equal(hib_ws_encode(&b, &buf, &len), 0);
	hib_ws_builder_free(&b);
	assert_int_equal(hib_ws_decode(buf, len, &v), 0);
	assert_int_equal(v.n_procs, 3);
	assert_int_equal(v.procs[1].pid, 200);
	assert_int_equal(v.procs[2].start_time, 3000);
	assert_int_equal(v.n_files, 2);
	assert_int_equal(v.n_ranges, 3);
	assert_string_equal(v.paths + v.files[0].path_off, "/usr/lib/libc.so.6");
	assert_string_equal(v.paths + v.files[1].path_off, "/home/u/notes with spaces.txt");
	assert_int_equal(v.files[0].first_range, 0);
	assert_int_equal(v.files[0].n_ranges, 2);
	assert_int_equal(v.files[1].first_range, 2);
	assert_int_equal(v.files[1].n_ranges, 1);
	assert_int_equal(v.ranges[1].off, 65536);
	assert_int_equal(v.ranges[2].len, 1 << 20);
	free(buf);
}

static void empty_round_trip(void **state)
{
	struct hib_ws_builder b = { 0 };
	struct hib_ws_view v;
	void *buf;
	size_t len;

	(void)state;
	assert_int_equal(hib_ws_encode(&b, &buf, &len), 0);
	assert_int_equal(len, sizeof(struct hib_ws_header));
	assert_int_equal(hib_ws_decode(buf, len, &v), 0);
	assert_int_equal(v.n_procs + v.n_files + v.n_ranges + v.paths_len, 0);
	free(buf);
}

static void bound_procs(void **state)
{
	struct hib_ws_builder b = { 0 };

	(void)state;
	for (int i = 0; i < HIB_WS_MAX_PROCS; i++)
		assert_int_equal(hib_ws_add_proc(&b, i + 1, (uint64_t)i), 0);
	assert_int_equal(hib_ws_add_proc(&b, 9999, 1), -E2BIG);
	assert_int_equal(b.n_procs, HIB_WS_MAX_PROCS);
	assert_int_equal(b.procs[HIB_WS_MAX_PROCS - 1].pid, HIB_WS_MAX_PROCS);
	hib_ws_builder_free(&b);
}

static void bound_files_and_paths(void **state)
{
	struct hib_ws_builder b = { 0 };
	char path[PATH_MAX];

	(void)state;
	assert_int_equal(hib_ws_add_range(&b, 0, 4096), -EINVAL); /* no file yet */
	assert_int_equal(hib_ws_add_file(&b, "relative/path"), -EINVAL);
	for (int i = 0; i < HIB_WS_MAX_FILES; i++) {
		snprintf(path, sizeof(path), "/f%d", i);
		assert_int_equal(hib_ws_add_file(&b, path), 0);
	}
	assert_int_equal(hib_ws_add_file(&b, "/one-too-many"), -E2BIG);
	assert_int_equal(b.n_files, HIB_WS_MAX_FILES);
	hib_ws_builder_free(&b);

	/* Paths: 1 MiB of them at most, NULs included. */
	memset(path, 'p', sizeof(path) - 1);
	path[0] = '/';
	path[PATH_MAX - 1] = 0; /* PATH_MAX bytes with its NUL */
	for (unsigned i = 0; i < HIB_WS_MAX_PATHS / PATH_MAX; i++)
		assert_int_equal(hib_ws_add_file(&b, path), 0);
	assert_int_equal(b.paths_len, HIB_WS_MAX_PATHS);
	assert_int_equal(hib_ws_add_file(&b, "/x"), -E2BIG);
	hib_ws_builder_free(&b);
}

static void bound_ranges(void **state)
{
	struct hib_ws_builder b = { 0 };
	struct hib_ws_view v;
	void *buf;
	size_t len;

	(void)state;
	assert_int_equal(hib_ws_add_file(&b, "/big"), 0);
	for (uint64_t i = 0; i < HIB_WS_MAX_RANGES; i++)
		assert_int_equal(hib_ws_add_range(&b, i * 8192, 4096), 0);
	assert_int_equal(hib_ws_add_range(&b, 1ull << 40, 4096), -E2BIG);
	/* The largest record there can be still decodes. */
	assert_int_equal(hib_ws_encode(&b, &buf, &len), 0);
	assert_true(len <= HIB_WS_MAX_BYTES);
	assert_int_equal(hib_ws_decode(buf, len, &v), 0);
	assert_int_equal(v.files[0].n_ranges, HIB_WS_MAX_RANGES);
	free(buf);
	hib_ws_builder_free(&b);
}

/* @buf's header with its checksum made right again, after a change to it. */
static void reseal(void *buf, size_t len)
{
	struct hib_ws_header h;

	memcpy(&h, buf, sizeof(h));
	h.xxh3 = XXH3_64bits((uint8_t *)buf + sizeof(h), len - sizeof(h));
	memcpy(buf, &h, sizeof(h));
}

static void *small_record(size_t *ret_len)
{
	struct hib_ws_builder b;
	void *buf;

	build_small(&b);
	assert_int_equal(hib_ws_encode(&b, &buf, ret_len), 0);
	hib_ws_builder_free(&b);
	return buf;
}

static void bad_records_refused(void **state)
{
	size_t len;
	uint8_t *buf = small_record(&len), *big;
	struct hib_ws_header *h = (struct hib_ws_header *)buf;
	struct hib_ws_view v = { .n_procs = 77 };
	uint32_t paths_len = h->paths_len;

	(void)state;
	assert_int_equal(hib_ws_decode(buf, len - 1, &v), -EBADMSG); /* truncated */
	assert_int_equal(hib_ws_decode(buf, sizeof(*h) - 1, &v), -EBADMSG);
	big = calloc(1, len + 16);
	memcpy(big, buf, len);
	reseal(big, len + 16); /* trailing bytes, even checksummed */
	assert_int_equal(hib_ws_decode(big, len + 16, &v), -EBADMSG);
	free(big);
	buf[len - 3] ^= 1; /* a path's byte: the checksum */
	assert_int_equal(hib_ws_decode(buf, len, &v), -EBADMSG);
	buf[len - 3] ^= 1;
	h->version = HIB_WS_VERSION + 1;
	assert_int_equal(hib_ws_decode(buf, len, &v), -EPROTO);
	h->version = HIB_WS_VERSION;
	h->magic[0] ^= 0x20;
	assert_int_equal(hib_ws_decode(buf, len, &v), -EBADMSG);
	h->magic[0] ^= 0x20;
	h->n_procs = HIB_WS_MAX_PROCS + 1; /* oversized: refused before the length */
	assert_int_equal(hib_ws_decode(buf, len, &v), -E2BIG);
	h->n_procs = 3;
	h->n_ranges = HIB_WS_MAX_RANGES + 1;
	assert_int_equal(hib_ws_decode(buf, len, &v), -E2BIG);
	h->n_ranges = 3;
	h->paths_len = HIB_WS_MAX_PATHS + 1;
	assert_int_equal(hib_ws_decode(buf, len, &v), -E2BIG);
	h->paths_len = paths_len;
	assert_int_equal(v.n_procs, 77); /* nothing written on failure */
	assert_int_equal(hib_ws_decode(buf, len, &v), 0);
	free(buf);
}

/* Well-formed and checksummed, but pointing outside its own tables. */
static void inconsistent_records_refused(void **state)
{
	size_t len;
	uint8_t *buf = small_record(&len);
	struct hib_ws_file *files = (void *)(buf + sizeof(struct hib_ws_header) + 3 * 16);
	struct hib_ws_view v;

	(void)state;
	files[1].n_ranges = 2; /* 2 + 2 > 3 ranges */
	reseal(buf, len);
	assert_int_equal(hib_ws_decode(buf, len, &v), -EBADMSG);
	files[1].n_ranges = 1;
	files[1].first_range = UINT32_MAX;
	reseal(buf, len);
	assert_int_equal(hib_ws_decode(buf, len, &v), -EBADMSG);
	files[1].first_range = 2;
	files[1].path_off = 5000; /* past the paths */
	reseal(buf, len);
	assert_int_equal(hib_ws_decode(buf, len, &v), -EBADMSG);
	files[1].path_off = 3; /* inside a path, not at a '/' */
	reseal(buf, len);
	assert_int_equal(hib_ws_decode(buf, len, &v), -EBADMSG);
	files[1].path_off = 0;
	buf[len - 1] = 'x'; /* the last path not terminated */
	reseal(buf, len);
	assert_int_equal(hib_ws_decode(buf, len, &v), -EBADMSG);
	free(buf);
}

static const char smaps_text[] =
	"55d0c0a00000-55d0c0a21000 r--p 00000000 fe:01 1234   /usr/bin/prog\n"
	"Size:                132 kB\n"
	"Rss:                 132 kB\n"
	"Swap:                  0 kB\n"
	"VmFlags: rd mr mw me dw sd\n"
	"7f0000000000-7f0000400000 rw-p 00000000 00:00 0 \n"
	"Size:               4096 kB\n"
	"Anonymous:          1024 kB\n"
	"Swap:               3072 kB\n"
	"SwapPss:            3072 kB\n"
	"THPeligible:    0\n"
	"VmFlags: rd wr mr mw me ac sd\n"
	"7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]\n"
	"Size:                132 kB\n"
	"Swap:                 12 kB\n"
	"VmFlags: rd wr mr mw me gd ac\n";

static void smaps_swapped_vmas(void **state)
{
	struct hib_ws_vma v[4], one;
	uint64_t kb = 0;

	(void)state;
	assert_int_equal(hib_ws_parse_smaps(smaps_text, v, 4, &kb), 2);
	assert_int_equal(kb, 3084);
	assert_int_equal(v[0].start, 0x7f0000000000ull);
	assert_int_equal(v[0].end, 0x7f0000400000ull);
	assert_int_equal(v[0].swap_kb, 3072);
	assert_int_equal(v[1].start, 0x7ffc00000000ull);
	assert_int_equal(v[1].swap_kb, 12);
	/* Counted past @max, written up to it. */
	assert_int_equal(hib_ws_parse_smaps(smaps_text, &one, 1, &kb), 2);
	assert_int_equal(one.swap_kb, 3072);
	assert_int_equal(hib_ws_parse_smaps(smaps_text, NULL, 0, &kb), 2);
	assert_int_equal(hib_ws_parse_smaps("", v, 4, &kb), 0);
	assert_int_equal(kb, 0);
	assert_int_equal(hib_ws_parse_smaps("garbage line\n", v, 4, &kb), -EBADMSG);
	assert_int_equal(hib_ws_parse_smaps("7f00-7e00 rw-p 0 00:00 0\nSwap: 4 kB\n", v, 4, &kb),
			 -EBADMSG); /* end before start */
	assert_int_equal(hib_ws_parse_smaps("7f00-8000 rw-p 0 00:00 0\nSwap: many kB\n", v, 4, &kb),
			 -EBADMSG);
}

static void maps_files(void **state)
{
	static const char maps[] =
		"55d0c0a00000-55d0c0a21000 r--p 00000000 fe:01 1234                       /usr/bin/prog\n"
		"55d0c1000000-55d0c1021000 rw-p 00000000 00:00 0                          [heap]\n"
		"7f0000000000-7f0000400000 rw-p 00000000 00:00 0 \n"
		"7f0000400000-7f0000500000 r--p 00000000 fe:01 99    /home/u/my file.db\n"
		"7f0000500000-7f0000600000 r--p 00000000 fe:01 98    /tmp/gone (deleted)\n"
		"7f0000600000-7f0000700000 rw-s 00000000 00:05 97    /dev/zero\n"
		"7f0000700000-7f0000800000 rw-s 00000000 00:01 96    /memfd:buf (deleted)\n"
		"7f0000800000-7f0000900000 r--p 00000000 fe:01 95    /usr/lib/libc.so.6\n";
	char path[PATH_MAX], small[8];
	size_t pos = 0;

	(void)state;
	assert_int_equal(hib_ws_parse_maps_next(maps, &pos, path, sizeof(path)), 1);
	assert_string_equal(path, "/usr/bin/prog");
	assert_int_equal(hib_ws_parse_maps_next(maps, &pos, path, sizeof(path)), 1);
	assert_string_equal(path, "/home/u/my file.db");
	assert_int_equal(hib_ws_parse_maps_next(maps, &pos, path, sizeof(path)), 1);
	assert_string_equal(path, "/usr/lib/libc.so.6");
	assert_int_equal(hib_ws_parse_maps_next(maps, &pos, path, sizeof(path)), 0);
	/* A path that does not fit is skipped, not cut. */
	pos = 0;
	assert_int_equal(hib_ws_parse_maps_next(maps, &pos, small, sizeof(small)), 0);
	pos = 0;
	assert_int_equal(hib_ws_parse_maps_next("not a maps line\n", &pos, path, sizeof(path)),
			 -EBADMSG);
}

static void stat_start_time(void **state)
{
	/* comm may hold spaces and ')': the last ')' ends it. */
	static const char stat[] =
		"4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 500 0 0 0 7 3 0 0 20 0 1 0 "
		"987654 12345678 300 18446744073709551615\n";
	uint64_t t = 0, kb = 0;

	(void)state;
	assert_int_equal(hib_ws_parse_start_time(stat, &t), 0);
	assert_int_equal(t, 987654);
	assert_int_equal(hib_ws_parse_start_time("4242 (x) S 1 2 3\n", &t), -EBADMSG);
	assert_int_equal(hib_ws_parse_start_time("no paren", &t), -EBADMSG);
	assert_int_equal(hib_ws_parse_kb("Name:\tx\nVmSwap:\t  2048 kB\nRssAnon: 5 kB\n", "VmSwap",
					 &kb),
			 0);
	assert_int_equal(kb, 2048);
	assert_int_equal(hib_ws_parse_kb("VmSwapX: 1 kB\n", "VmSwap", &kb), -ENOENT);
	assert_int_equal(hib_ws_parse_kb("MemAvailable: lots\n", "MemAvailable", &kb), -EBADMSG);
}

static void stop_logic(void **state)
{
	struct hib_ws_limits l = { .start_ms = 10000,
				   .limit_ms = 30000,
				   .floor_kb = hib_ws_floor_kb(1024 * 1024) };

	(void)state;
	assert_int_equal(hib_ws_floor_kb(1024 * 1024), 65536);        /* 1 GiB: 64 MiB */
	assert_int_equal(hib_ws_floor_kb(16 * 1024 * 1024), 1048576); /* 16 GiB: 1 GiB */
	assert_int_equal(hib_ws_floor_kb(0), 65536);
	assert_int_equal(hib_ws_should_stop(&l, 10000, 500000), HIB_WS_DONE);
	assert_int_equal(hib_ws_should_stop(&l, 39999, 500000), HIB_WS_DONE);
	assert_int_equal(hib_ws_should_stop(&l, 40000, 500000), HIB_WS_TIME);
	assert_int_equal(hib_ws_should_stop(&l, 20000, 65535), HIB_WS_MEMORY);
	assert_int_equal(hib_ws_should_stop(&l, 20000, 65536), HIB_WS_DONE);
	assert_int_equal(hib_ws_should_stop(&l, 20000, UINT64_MAX), HIB_WS_DONE); /* unknown */
	assert_int_equal(hib_ws_should_stop(&l, 50000, 0), HIB_WS_TIME);          /* time first */
	l.limit_ms = 0;
	assert_int_equal(hib_ws_should_stop(&l, UINT64_MAX / 2, 500000), HIB_WS_DONE);
	assert_string_equal(hib_ws_stop_name(HIB_WS_MEMORY), "memory low");
	assert_string_equal(hib_ws_stop_name(HIB_WS_TIME), "time limit");
}

/* The index in @v of the file @path, or -1. */
static int file_index(const struct hib_ws_view *v, const char *path)
{
	for (uint32_t i = 0; i < v->n_files; i++)
		if (strcmp(v->paths + v->files[i].path_off, path) == 0)
			return (int)i;
	return -1;
}

/* A child that maps @path and holds 2 MiB of anonymous memory, until killed. */
static pid_t holder(const char *path, size_t size)
{
	int sync[2];
	pid_t pid;
	char c;

	if (pipe(sync) < 0 || (pid = fork()) < 0)
		die("fork");
	if (pid == 0) {
		int fd = open(path, O_RDONLY);
		void *m = fd < 0 ? MAP_FAILED : mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
		char *anon = malloc(2 << 20);

		if (m == MAP_FAILED || !anon)
			_exit(1);
		memset(anon, 1, 2 << 20);
		if (write(sync[1], "k", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(sync[1]);
	if (read(sync[0], &c, 1) != 1)
		die("holder");
	close(sync[0]);
	return pid;
}

static unsigned resident_pages(int fd, size_t size)
{
	unsigned char vec[64];
	void *m = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	unsigned n = 0;

	assert_true(m != MAP_FAILED);
	assert_int_equal(mincore(m, size, vec), 0);
	for (size_t i = 0; i < size / TEST_PAGE; i++)
		n += vec[i] & 1;
	munmap(m, size);
	return n;
}

/* On this host: the record finds a process and the file it maps, in the cache;
 * the restore reads it back once dropped. The excluded file stays out. */
static void record_and_restore_here(void **state)
{
	const size_t size = 64 * TEST_PAGE;
	char path[PATH_MAX], other[PATH_MAX];
	int fd = make_temp(path, "ws"), fd2 = make_temp(other, "ws-excl");
	char data[64 * 4096];
	struct hib_ws_record_stats rs;
	struct hib_ws_restore_stats st;
	struct hib_ws_view v;
	pid_t a, b;
	void *rec;
	size_t len;
	int i;

	struct statfs sf;

	(void)state;
	/* tmpfs files are not recorded (their cache is never dropped). */
	if (fstatfs(fd, &sf) == 0 && (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC)) {
		close(fd), close(fd2);
		skip();
	}
	memset(data, 0x5a, sizeof(data));
	assert_int_equal(pwrite(fd, data, size, 0), (ssize_t)size);
	assert_int_equal(pwrite(fd2, data, size, 0), (ssize_t)size);
	fsync(fd), fsync(fd2);
	a = holder(path, size);
	b = holder(other, size);
	assert_int_equal(hib_ws_record(other, 10000, &rec, &len, &rs), 0);
	kill(a, SIGKILL), kill(b, SIGKILL);
	waitpid(a, NULL, 0), waitpid(b, NULL, 0);
	assert_int_equal(hib_ws_decode(rec, len, &v), 0);
	assert_int_equal(rs.procs, v.n_procs);
	assert_true(file_index(&v, path) >= 0);
	assert_int_equal(file_index(&v, other), -1);
	i = file_index(&v, path);
	assert_int_equal(v.files[i].n_ranges, 1);
	assert_int_equal(v.ranges[v.files[i].first_range].len, size);
	for (uint32_t p = 0; p < v.n_procs; p++)
		assert_int_not_equal(v.procs[p].pid, getpid());

	/* Dropped from the cache, then read back (where the filesystem drops it). */
	assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	if (resident_pages(fd, size) == 0) {
		assert_int_equal(hib_ws_restore(rec, len, 30000, &st), 0);
		assert_int_equal(st.stop, HIB_WS_DONE);
		assert_true(st.files >= 1);
		assert_true(st.file_bytes >= size);
		for (int tries = 0; tries < 100 && resident_pages(fd, size) < 64; tries++)
			usleep(10000); /* readahead is asynchronous */
		assert_int_equal(resident_pages(fd, size), 64);
	}
	assert_int_equal(hib_ws_restore(rec, len - 1, 30000, &st), -EBADMSG);
	free(rec);
	close(fd), close(fd2);
	unlink(path), unlink(other);
}

/* A record of @path alone, one page of it. */
static void record_one(const char *path, void **rec, size_t *len)
{
	struct hib_ws_builder b = { 0 };

	assert_int_equal(hib_ws_add_file(&b, path), 0);
	assert_int_equal(hib_ws_add_range(&b, 0, TEST_PAGE), 0);
	assert_int_equal(hib_ws_encode(&b, rec, len), 0);
	hib_ws_builder_free(&b);
}

/* Whether this kernel (or valgrind, which may not know the call) has openat2. */
static bool have_openat2(const char *path)
{
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC };
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));

	if (fd >= 0)
		close(fd);
	return fd >= 0 || errno != ENOSYS;
}

/* The file is opened (st.files counts it) only by a path with no link in it;
 * without openat2, not at all (never by a path that follows links). */
static void restore_follows_no_symlink(void **state)
{
	char dir[PATH_MAX], file[PATH_MAX + 8], link[PATH_MAX + 8], via[PATH_MAX * 2];
	char page[TEST_PAGE];
	struct hib_ws_restore_stats st;
	void *rec;
	size_t len;
	int fd;

	(void)state;
	fd = make_temp(dir, "ws-dir");
	close(fd);
	assert_int_equal(unlink(dir), 0);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(file, sizeof(file), "%s/f", dir);
	snprintf(link, sizeof(link), "%s.link", dir);
	snprintf(via, sizeof(via), "%s/f", link);
	memset(page, 0x5a, sizeof(page));
	fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, page, sizeof(page)), (ssize_t)sizeof(page));
	close(fd);
	assert_int_equal(symlink(dir, link), 0);

	record_one(file, &rec, &len); /* the control: the real path is read */
	assert_int_equal(hib_ws_restore(rec, len, 30000, &st), 0);
	free(rec);
	assert_int_equal(st.files, have_openat2(file) ? 1 : 0);
	record_one(via, &rec, &len); /* a directory on the way is a link: not opened */
	assert_int_equal(hib_ws_restore(rec, len, 30000, &st), 0);
	free(rec);
	assert_int_equal(st.files, 0);
	assert_int_equal(st.stop, HIB_WS_DONE);
	unlink(link), unlink(file), rmdir(dir);
}

/* ---- the watchdog: a read that never returns ----------------------------- */

/* A read that never returns. What blocks for real is a read of /proc/PID/mem
 * over a FUSE mapping whose daemon does not answer (userfaultfd does not: the
 * kernel's remote access fails it with EIO, checked on 6.18); a pipe nobody
 * writes stands in for it. */
struct blocker {
	int pipe_rd;
	int *shared; /* 1 once the read began, 2 if it ever returned */
};

static void blocking_read(void *arg)
{
	struct blocker *b = arg;
	char c;

	*b->shared = 1;
	(void)!read(b->pipe_rd, &c, 1);
	*b->shared = 2;
}

static void quick(void *arg)
{
	struct blocker *b = arg;

	*b->shared = 7;
}

/* The limit holds even when a read does not come back: the process doing it
 * is ended soon after, and what it shared until then is there. */
static void watchdog_ends_a_blocked_read(void **state)
{
	int *shared =
		mmap(NULL, TEST_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct blocker b = { .shared = shared };
	struct timespec a, z;
	int p[2];
	uint64_t ms;

	(void)state;
	assert_true(shared != MAP_FAILED);
	assert_int_equal(pipe(p), 0);
	b.pipe_rd = p[0];
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(hib_ws_run_bounded(blocking_read, &b, 1000), 0);
	clock_gettime(CLOCK_MONOTONIC, &z);
	ms = (uint64_t)((z.tv_sec - a.tv_sec) * 1000 + (z.tv_nsec - a.tv_nsec) / 1000000);
	assert_int_equal(*shared, 1); /* the read began, and never returned */
	assert_true(ms >= 1000);
	assert_true(ms < 4000); /* the limit, a second at most to reap, slow machines */
	assert_int_equal(hib_ws_run_bounded(quick, &b, 300), 1);
	assert_int_equal(*shared, 7);
	close(p[0]), close(p[1]);
	munmap(shared, TEST_PAGE);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(empty_round_trip),
		cmocka_unit_test(bound_procs),
		cmocka_unit_test(bound_files_and_paths),
		cmocka_unit_test(bound_ranges),
		cmocka_unit_test(bad_records_refused),
		cmocka_unit_test(inconsistent_records_refused),
		cmocka_unit_test(smaps_swapped_vmas),
		cmocka_unit_test(maps_files),
		cmocka_unit_test(stat_start_time),
		cmocka_unit_test(stop_logic),
		cmocka_unit_test(record_and_restore_here),
		cmocka_unit_test(restore_follows_no_symlink),
		cmocka_unit_test(watchdog_ends_a_blocked_read),
	};

	return cmocka_run_group_tests_name("workset", tests, NULL, NULL);
}
