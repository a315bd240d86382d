// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * An encrypted image read while its secret is awaited (lib/engine/preload.c),
 * through the fake snapshot device:
 *  - a passphrase answered late: the whole image was read meanwhile, and the
 *    load reads no block from the disk (every block's header page on disk is
 *    zeroed before the answer: one block read from the disk fails the load);
 *  - a memory bound smaller than the image: part read ahead, the rest read
 *    after, the stream the kernel gets identical;
 *  - a wrong passphrase three times: the same outcome as without the
 *    read-ahead, the swap area given back, nothing leaked (ASan, valgrind);
 *  - resume-preload = no, no memory to spare, a plain image: nothing read
 *    ahead, the log says why (or says nothing: a plain image awaits nothing);
 *  - the records' memory given back in one munmap() call when the preload is
 *    freed, not during the load: each call interrupts the other CPUs running
 *    the process (munmap is this test's own, counting, below); the load's
 *    read-ahead window likewise;
 *  - the load's read-ahead window bounded by the same rule: MemAvailable
 *    above the kernel's pages for the stream, the pipeline and a reserve.
 * The memory figures come from a meminfo file of the test's (hib_swap_env).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/preload.h"
#include "helpers.h"
#include "storage/swaps.h"

#define STREAM_PAGES 2000u
#define SWAP_PAGES (2 * STREAM_PAGES + 64)
#define THREADS 2
#define BLOCK_BYTES (256u * 1024u)

static const char PASSPHRASE[] = "correct horse battery staple";

struct fx {
	char path[PATH_MAX];
	char meminfo[PATH_MAX];
	struct hib_fake_params fp;
	struct hib_swap_env env;
	uint64_t stream_bytes; /* what the hibernate side's fake gave */
};

/* What the asker does, attempt by attempt. */
struct asker {
	const char *answers[3];
	int n, asked;
	int base_tasks;   /* the process's threads before the resume */
	bool clobber;     /* zero every block header on disk before answering */
	const char *file; /* the swap file */
};

static char logged[16384];

/* Every munmap() of the process, counted: the library's calls come here. */
static int munmap_calls;

int munmap(void *addr, size_t len)
{
	__atomic_add_fetch(&munmap_calls, 1, __ATOMIC_RELAXED);
	return (int)syscall(SYS_munmap, addr, len);
}

static void keep_log(enum hib_loglevel l, const char *m, void *u)
{
	(void)l, (void)u;
	if (strlen(logged) + strlen(m) + 2 < sizeof(logged)) {
		strcat(logged, m);
		strcat(logged, "\n");
	}
}

static int count_tasks(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		die("opendir /proc/self/task");
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Zero the first page of every block record in @path: a block read from the
 * disk after this fails its header check. */
static void clobber_block_headers(const char *path)
{
	uint8_t page[HIB_PAGE_SIZE], zero[HIB_PAGE_SIZE] = { 0 };
	uint32_t magic = HIB_BLOCK_MAGIC;
	int fd = open(path, O_RDWR);
	int n = 0;

	if (fd < 0)
		die("open the image");
	for (off_t off = HIB_PAGE_SIZE; pread(fd, page, sizeof(page), off) == sizeof(page);
	     off += HIB_PAGE_SIZE)
		if (memcmp(page, &magic, sizeof(magic)) == 0) {
			if (pwrite(fd, zero, sizeof(zero), off) != sizeof(zero))
				die("pwrite");
			n++;
		}
	close(fd);
	assert_true(n > 1);
}

/* The user types slowly: wait (at most 10 s) until the reading thread is
 * done, as a slow typist would give it time to; then answer. */
static int ask(int attempt, const char *what, struct hib_secret *ret, void *ud)
{
	struct asker *a = ud;

	(void)what;
	a->asked++;
	if (attempt > a->n)
		return -ENODATA;
	sleep_ms(200);
	for (int i = 0; i < 1000 && count_tasks() > a->base_tasks; i++)
		sleep_ms(10);
	if (a->clobber && attempt == a->n)
		clobber_block_headers(a->file);
	*ret = (struct hib_secret){ .kind = HIB_SECRET_PASSPHRASE,
				    .data = (const uint8_t *)a->answers[attempt - 1],
				    .len = strlen(a->answers[attempt - 1]) };
	return 0;
}

static void set_meminfo(struct fx *f, uint64_t total, uint64_t avail)
{
	char text[128];

	snprintf(text, sizeof(text), "MemTotal: %llu kB\nMemFree: 1 kB\nMemAvailable: %llu kB\n",
		 (unsigned long long)(total >> 10), (unsigned long long)(avail >> 10));
	write_text_file(f->meminfo, text);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	int fd;

	assert_non_null(f);
	fd = make_temp(f->path, "preload");
	make_swap_file(fd, SWAP_PAGES);
	close(fd);
	close(make_temp(f->meminfo, "meminfo"));
	set_meminfo(f, 4ull << 30, 3ull << 30);
	f->fp = fake_params(11, STREAM_PAGES, SWAP_PAGES, 0);
	f->env = (struct hib_swap_env){ .meminfo = f->meminfo };
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	hib_swap_env_set(NULL);
	quiet_logs();
	unlink(f->path);
	unlink(f->meminfo);
	free(f);
	return 0;
}

/* Hibernate into the fixture, sealed with the passphrase (@encrypted) at the
 * cheapest Argon2id cost. */
static void hibernate(struct fx *f, bool encrypted)
{
	struct hib_secret s = { .kind = HIB_SECRET_PASSPHRASE,
				.data = (const uint8_t *)PASSPHRASE,
				.len = sizeof(PASSPHRASE) - 1 };
	struct hib_target *t = NULL;
	struct hib_snapshot *snap = NULL;
	struct hib_options o;
	struct hib_stats st = { 0 };
	enum hib_suspend_outcome written = 0;

	hib_options_init(&o);
	o.threads = THREADS;
	o.powerdown = HIB_POWERDOWN_NONE;
	o.secret = encrypted ? &s : NULL;
	o.kdf_passes = 1;
	o.kdf_memory = 8ull << 20;
	assert_int_equal(hib_target_open(f->path, 0, true, &t), 0);
	assert_int_equal(hib_snapshot_fake_new(&f->fp, HIB_SNAP_HIBERNATE, &snap), 0);
	assert_int_equal(hib_suspend(t, snap, &o, &written, &st), 0);
	assert_int_equal(written, HIB_SUSPEND_WRITTEN);
	f->stream_bytes = st.stream_bytes;
	hib_snapshot_close(snap);
	hib_target_close(t);
}

/* Resume with @a answering and the options @no_preload; what hib_resume
 * came to (cycle_result), its stats into @st, the fake's verdict into
 * @complete. The log into `logged`. */
static int resume(struct fx *f, struct asker *a, bool no_preload, struct hib_stats *st,
		  bool *complete)
{
	struct hib_target *t = NULL;
	struct hib_snapshot *snap = NULL;
	struct hib_options o;
	enum hib_resume_outcome outcome = 0;
	int r;

	hib_options_init(&o);
	o.threads = THREADS;
	o.no_preload = no_preload;
	o.ask_secret = ask;
	o.ask_secret_userdata = a;
	a->file = f->path;
	a->base_tasks = count_tasks();
	assert_int_equal(hib_target_open(f->path, 0, true, &t), 0);
	assert_int_equal(hib_snapshot_fake_new(&f->fp, HIB_SNAP_RESUME, &snap), 0);
	logged[0] = 0;
	hib_set_log(keep_log, NULL);
	hib_swap_env_set(&f->env);
	r = hib_resume(t, snap, &o, &outcome, st);
	r = cycle_result(r, outcome);
	hib_swap_env_set(NULL);
	quiet_logs();
	hib_snapshot_fake_result(snap, NULL, complete, NULL, NULL);
	if (getenv("HIB_TEST_VERBOSE"))
		fprintf(stderr, "%s", logged);
	hib_snapshot_close(snap);
	hib_target_close(t);
	return r;
}

/* The line of the log that starts with @start, or NULL. */
static const char *log_line(const char *start)
{
	const char *p = logged;

	while (p && *p) {
		if (strncmp(p, start, strlen(start)) == 0)
			return p;
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	return NULL;
}

static void whole_image_read_while_waiting(void **state)
{
	struct fx *f = *state;
	struct asker a = { .answers = { PASSPHRASE }, .n = 1, .clobber = true };
	struct hib_stats st = { 0 };
	bool complete = false;

	hibernate(f, true);
	/* Every block header on disk is gone by the time the passphrase is
	 * given: the load can only succeed from what was read before. */
	assert_int_equal(resume(f, &a, false, &st, &complete), HIB_RESUME_RESTORED);
	assert_true(complete);
	assert_int_equal(a.asked, 1);
	assert_true(st.preload_bytes > 0);
	assert_null(strstr(logged, "reading with")); /* the load made no read-ahead of its own */
	assert_non_null(strstr(log_line("read "), "ahead while waiting for the passphrase ("));
}

/* The control: the same clobbering without the read-ahead fails the load,
 * so the case above shows no block was read from the disk. */
static void disabled_reads_from_the_disk(void **state)
{
	struct fx *f = *state;
	struct asker a = { .answers = { PASSPHRASE }, .n = 1, .clobber = true };
	struct hib_stats st = { 0 };
	bool complete = false;

	hibernate(f, true);
	assert_int_equal(resume(f, &a, true, &st, &complete), -EBADMSG);
	assert_false(complete);
	assert_non_null(log_line("not reading the image ahead while waiting for the passphrase: "
				 "disabled (resume-preload = no)"));
}

static void disabled_resumes_as_before(void **state)
{
	struct fx *f = *state;
	struct asker a = { .answers = { PASSPHRASE }, .n = 1 };
	struct hib_stats st = { .preload_bytes = 1 };
	bool complete = false;

	hibernate(f, true);
	assert_int_equal(resume(f, &a, true, &st, &complete), HIB_RESUME_RESTORED);
	assert_true(complete);
	assert_int_equal(st.preload_bytes, 0);
	assert_null(log_line("read "));
}

/* Room for about a block and a half above the floor: part read ahead, the
 * rest off the disk, and the kernel gets the same stream. */
static void bound_smaller_than_the_image(void **state)
{
	struct fx *f = *state;
	struct asker a = { .answers = { PASSPHRASE }, .n = 1 };
	struct hib_stats st = { 0 };
	struct hib_options o;
	struct hib_header h = { .stream_bytes = 0, .block_raw_bytes = BLOCK_BYTES };
	uint64_t total = 4ull << 30, bound = codec_record_bound(BLOCK_BYTES);
	bool complete = false;

	hibernate(f, true);
	hib_options_init(&o);
	o.threads = THREADS;
	h.stream_bytes = f->stream_bytes;
	h.crypt.kdf = HIB_KDF_ARGON2ID; /* Argon2id's memory stays free too */
	h.crypt.memlimit = 8ull << 20;
	assert_true(f->stream_bytes > 8 * BLOCK_BYTES);
	set_meminfo(f, total, engine_preload_floor(&o, &h, total) + bound * 3 / 2);
	assert_int_equal(resume(f, &a, false, &st, &complete), HIB_RESUME_RESTORED);
	assert_true(complete);
	assert_true(st.preload_bytes > 0);
	assert_true(st.preload_bytes <= bound * 3 / 2);
	assert_non_null(strstr(logged, "reading with")); /* the rest, off the disk */
	assert_non_null(strstr(log_line("read "), "; no memory to spare for more"));
}

static void no_memory_reads_nothing_ahead(void **state)
{
	struct fx *f = *state;
	struct asker a = { .answers = { PASSPHRASE }, .n = 1 };
	struct hib_stats st = { .preload_bytes = 1 };
	bool complete = false;

	hibernate(f, true);
	/* The reserve alone (64 MiB at least) is more than this. */
	set_meminfo(f, 512ull << 20, 60ull << 20);
	assert_int_equal(resume(f, &a, false, &st, &complete), HIB_RESUME_RESTORED);
	assert_true(complete);
	assert_int_equal(st.preload_bytes, 0);
	assert_non_null(log_line("not reading the image ahead while waiting for the passphrase: "
				 "no memory to spare"));
}

/* Three wrong passphrases: refused as without the read-ahead, the swap area
 * given back; what was read is freed (the sanitizer and valgrind runs
 * see a leak). */
static void wrong_passphrase_ends_as_without(void **state)
{
	struct fx *f = *state;
	bool complete = true;

	for (int off = 0; off <= 1; off++) {
		struct asker a = { .answers = { "wrong", "wronger", "wrongest" }, .n = 3 };
		struct hib_stats st = { 0 };
		uint8_t page0[TEST_PAGE];

		hibernate(f, true);
		assert_int_equal(resume(f, &a, off, &st, &complete), -EACCES);
		assert_false(complete);
		assert_int_equal(a.asked, 3);
		read_page0(f->path, page0);
		assert_memory_equal(page0 + TEST_PAGE - 10, "SWAPSPACE2", 10);
		if (!off)
			assert_non_null(strstr(log_line("read "),
					       "; dropped: the image is not resumed"));
	}
}

/* Memory read ahead goes back in one munmap() call, not chunk by chunk nor
 * record by record: each interrupts the other CPUs running the process. The
 * preload's records (the whole image read ahead; a restore that succeeds
 * ends this process, so the call is never made then) and the load's window
 * (no preload, memory to spare) each cost the resume one call more than a
 * load whose read-ahead keeps to its first buffers (no memory to spare). */
static void read_ahead_given_back_at_once(void **state)
{
	struct fx *f = *state;
	int calls[3];

	for (int run = 0; run < 3; run++) {
		struct asker a = { .answers = { PASSPHRASE }, .n = 1 };
		struct hib_stats st = { 0 };
		bool complete = false;
		int before;

		hibernate(f, true);
		set_meminfo(f, 4ull << 30, run == 2 ? 60ull << 20 : 3ull << 30);
		before = __atomic_load_n(&munmap_calls, __ATOMIC_RELAXED);
		assert_int_equal(resume(f, &a, run > 0, &st, &complete), HIB_RESUME_RESTORED);
		assert_true(complete);
		calls[run] = __atomic_load_n(&munmap_calls, __ATOMIC_RELAXED) - before;
		if (run == 0) {
			assert_null(strstr(logged, "reading with")); /* all read ahead */
			assert_true(st.blocks >= 24);
		}
	}
	if (getenv("HIB_TEST_VERBOSE"))
		fprintf(stderr, "munmap() calls: %d preloaded, %d window, %d neither\n", calls[0],
			calls[1], calls[2]);
	assert_int_equal(calls[0] - calls[2], 1);
	assert_int_equal(calls[1] - calls[2], 1);
}

/* What MemAvailable holds above the load's floor (the kernel's pages for the
 * stream, the pipeline, the reserve) goes half to the ring's spare slots (at
 * most 256 MiB), the rest to the read-ahead of a plain image (at most 256
 * MiB, at least its first 8 MiB), which holds no more than that. */
static void load_window_follows_the_memory(void **state)
{
	struct fx *f = *state;
	struct hib_header h = { .block_raw_bytes = BLOCK_BYTES };
	struct hib_options o;
	uint64_t total = 4ull << 30, floor, in = codec_record_bound(BLOCK_BYTES);
	static const struct {
		int64_t above; /* MemAvailable above the floor */
		uint64_t spare;
		const char *says;
	} cases[] = {
		{ -(1ll << 20), 0, "up to 8192 KiB ahead" },
		/* meminfo is in KiB: a few above the chunk's boundary and below the next. */
		{ (40ll << 20) + (8 << 10), (20ull << 20) + (4 << 10), "up to 20480 KiB ahead" },
		{ (42ll << 20) - (8 << 10), (21ull << 20) - (4 << 10), "up to 20480 KiB ahead" },
		{ 2ll << 30, 256ull << 20, "up to 262144 KiB ahead" },
	};

	hib_options_init(&o);
	o.threads = THREADS;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct asker a = { .n = 0 };
		struct hib_stats st = { 0 };
		bool complete = false;
		const char *most;
		unsigned long long mib = 0;
		char ring[64];
		const char *wants[] = { cases[i].says, ring };

		hibernate(f, false);
		h.stream_bytes = f->stream_bytes;
		floor = engine_load_floor(&o, &h, total);
		set_meminfo(f, total, (uint64_t)((int64_t)floor + cases[i].above));
		assert_int_equal(resume(f, &a, false, &st, &complete), HIB_RESUME_RESTORED);
		assert_true(complete);
		snprintf(ring, sizeof(ring), "a ring of %llu slots",
			 (unsigned long long)((engine_pipe_bytes(&o, in, BLOCK_BYTES) +
					       cases[i].spare) /
					      (in + BLOCK_BYTES)));
		for (size_t k = 0; k < 2; k++)
			if (!strstr(log_line("reading with"), wants[k]))
				fail_msg("MemAvailable %lld bytes above the floor: \"%s\", "
					 "wanted \"%s\"",
					 (long long)cases[i].above, log_line("reading with"),
					 wants[k]);
		most = strstr(logged, " MiB read ahead at most");
		assert_non_null(most);
		while (most > logged && most[-1] >= '0' && most[-1] <= '9')
			most--;
		mib = strtoull(most, NULL, 10);
		assert_true(mib <= 256 && mib <= (f->stream_bytes >> 20) + 1);
	}
}

static void plain_image_awaits_nothing(void **state)
{
	struct fx *f = *state;
	struct asker a = { .n = 0 };
	struct hib_stats st = { .preload_bytes = 1 };
	bool complete = false;

	hibernate(f, false);
	assert_int_equal(resume(f, &a, false, &st, &complete), HIB_RESUME_RESTORED);
	assert_true(complete);
	assert_int_equal(a.asked, 0);
	assert_int_equal(st.preload_bytes, 0);
	assert_null(strstr(logged, "while waiting"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(whole_image_read_while_waiting, setup, teardown),
		cmocka_unit_test_setup_teardown(disabled_reads_from_the_disk, setup, teardown),
		cmocka_unit_test_setup_teardown(disabled_resumes_as_before, setup, teardown),
		cmocka_unit_test_setup_teardown(bound_smaller_than_the_image, setup, teardown),
		cmocka_unit_test_setup_teardown(no_memory_reads_nothing_ahead, setup, teardown),
		cmocka_unit_test_setup_teardown(wrong_passphrase_ends_as_without, setup, teardown),
		cmocka_unit_test_setup_teardown(read_ahead_given_back_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(load_window_follows_the_memory, setup, teardown),
		cmocka_unit_test_setup_teardown(plain_image_awaits_nothing, setup, teardown),
	};

	quiet_logs();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
