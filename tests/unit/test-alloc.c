// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Nothing is allocated while processes are frozen. Once FREEZE has stopped
 * them, memory this process newly needs can only come from pushing other
 * pages out to swap (the swap area the image goes to), and the snapshot's
 * pages are already counted: so hibernate allocates everything before the
 * freeze. This counts every malloc, calloc, realloc, reallocarray,
 * posix_memalign, aligned_alloc, memalign, valloc and pvalloc made by any
 * thread of this process between the fake device's freeze and thaw -- by the
 * library and by what it calls (zstd, lz4, libsodium, liburing, libxxhash,
 * glibc) -- over whole cycles into a swap file: each codec, one thread and
 * several, --verify, encryption, a fragmented area, an image at its
 * --image-size limit, without io_uring, a cancel, a read error, a full area,
 * suspend-to-both, the resumed branch, and the resume of what was written
 * (from its freeze before ATOMIC_RESTORE, which the fake returns from); and
 * the stale-image record, which only the kernel's device makes. Each case
 * prints its count and fails on any allocation, with the allocating call
 * stacks.
 *
 * One thing is not counted: what pthread_create() allocates for a thread it
 * creates (glibc callocs the new thread's TLS vector, and takes its stack
 * from a cache or mmap). No pthreads program avoids it, and the threads
 * cannot be made before the freeze: SNAPSHOT_FREEZE freezes every task but
 * the caller, our own other threads included. So pthread_create is wrapped
 * here, and the calling thread's allocations while the real one runs are
 * left out -- those and nothing else.
 *
 * The counting replaces malloc & co. in this program (forwarding to glibc's
 * __libc_* entry points, which every library here then calls). Under
 * AddressSanitizer or valgrind, which own malloc themselves, that is not
 * possible: the cases say so and are skipped; tests/run-unit's plain build
 * counts.
 */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "helpers.h"

#if defined(__SANITIZE_ADDRESS__)
#define ALLOC_COUNTING 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ALLOC_COUNTING 0
#endif
#endif
#ifndef ALLOC_COUNTING
#define ALLOC_COUNTING 1
#endif

#define PASSPHRASE "tr0ub4dor&3 is not a good one"
#define STACKS 4
#define STACK_DEPTH 24

static atomic_bool window; /* between the fake's freeze and thaw */
static atomic_uint allocs; /* counted in the window */
static void *stacks[STACKS][STACK_DEPTH];
static int stack_depth[STACKS];
static const char *counting_off; /* why allocations are not counted, or NULL */

/* The project builds with -fvisibility=hidden: these must be seen by the
 * shared libraries (glibc's own strdup, fopen, pthread_create included). */
#define INTERPOSE __attribute__((visibility("default")))

#if ALLOC_COUNTING
static _Thread_local bool in_pthread_create;
static _Thread_local bool in_count; /* backtrace() must not count itself */

static void count_alloc(void)
{
	unsigned n;

	if (!atomic_load(&window) || in_pthread_create || in_count)
		return;
	n = atomic_fetch_add(&allocs, 1);
	if (n < STACKS) {
		in_count = true;
		stack_depth[n] = backtrace(stacks[n], STACK_DEPTH);
		in_count = false;
	}
}

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
extern void *__libc_valloc(size_t n);
extern void *__libc_pvalloc(size_t n);

INTERPOSE void *malloc(size_t n)
{
	count_alloc();
	return __libc_malloc(n);
}

INTERPOSE void *calloc(size_t n, size_t size)
{
	count_alloc();
	return __libc_calloc(n, size);
}

INTERPOSE void *realloc(void *p, size_t n)
{
	count_alloc();
	return __libc_realloc(p, n);
}

INTERPOSE void *reallocarray(void *p, size_t n, size_t size)
{
	size_t bytes;

	count_alloc();
	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_realloc(p, bytes);
}

INTERPOSE void *memalign(size_t align, size_t n)
{
	count_alloc();
	return __libc_memalign(align, n);
}

INTERPOSE void *aligned_alloc(size_t align, size_t n)
{
	count_alloc();
	return __libc_memalign(align, n);
}

INTERPOSE int posix_memalign(void **ret, size_t align, size_t n)
{
	void *p;

	count_alloc();
	if (!align || align % sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	p = __libc_memalign(align, n);
	if (!p)
		return ENOMEM;
	*ret = p;
	return 0;
}

INTERPOSE void *valloc(size_t n)
{
	count_alloc();
	return __libc_valloc(n);
}

INTERPOSE void *pvalloc(size_t n)
{
	count_alloc();
	return __libc_pvalloc(n);
}

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static pthread_create_fn real_pthread_create;

/* See the top: what the real pthread_create allocates for the new thread is
 * left out, on the calling thread and only while it runs. */
INTERPOSE int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *),
			     void *arg)
{
	int r;

	in_pthread_create = true;
	r = real_pthread_create(thread, attr, fn, arg);
	in_pthread_create = false;
	return r;
}
#endif

static void window_open(void *ud)
{
	(void)ud;
	atomic_store(&window, true);
}

static void window_close(void *ud)
{
	(void)ud;
	atomic_store(&window, false);
}

static void window_reset(void)
{
	atomic_store(&window, false);
	atomic_store(&allocs, 0);
	memset(stack_depth, 0, sizeof(stack_depth));
}

/* The count of one cycle's window, printed; the stacks of the first few
 * allocations when there were any (addresses: addr2line -e PROGRAM). */
static void window_check(const char *name, const char *half)
{
	unsigned n = atomic_load(&allocs);

	if (atomic_load(&window))
		fail_msg("%s: %s returned with processes still frozen", name, half);
	print_message("%s: %s: %u allocations between freeze and thaw\n", name, half, n);
	if (n == 0)
		return;
	for (unsigned i = 0; i < MIN(n, (unsigned)STACKS); i++) {
		fprintf(stderr, "allocation %u of %u:\n", i + 1, n);
		backtrace_symbols_fd(stacks[i], stack_depth[i], STDERR_FILENO);
	}
	fail_msg("%s: %s allocated %u times while processes were frozen", name, half, n);
}

/* Messages are formatted (as they are for any program that takes them) and
 * kept without allocating; HIB_TEST_VERBOSE shows them. */
static void log_keep(enum hib_loglevel level, const char *msg, void *ud)
{
	(void)level, (void)ud;
	if (getenv("HIB_TEST_VERBOSE")) {
		if (write(STDERR_FILENO, msg, strlen(msg)) < 0 || write(STDERR_FILENO, "\n", 1) < 0)
			return;
	}
}

static void progress_count(const char *phase, uint64_t done, uint64_t total, void *ud)
{
	(void)phase, (void)done, (void)total;
	atomic_fetch_add((atomic_uint *)ud, 1);
}

/* Esc after a few blocks. */
static bool cancel_soon(void *ud)
{
	return atomic_fetch_add((atomic_uint *)ud, 1) >= 5;
}

static int ask_passphrase(int attempt, const char *what, struct hib_secret *ret, void *ud)
{
	(void)attempt, (void)what, (void)ud;
	*ret = (struct hib_secret){ HIB_SECRET_PASSPHRASE, PASSPHRASE, strlen(PASSPHRASE) };
	return 0;
}

enum outcome { WRITTEN, CANCELLED, RAM, RESUMED, READ_ERROR, AREA_FULL };

struct alloc_case {
	const char *name;
	enum hib_codec_choice codec;
	int level;
	unsigned threads;
	uint64_t stream_pages;
	uint32_t frag_every;
	bool verify, encrypt, no_uring;
	enum outcome outcome;
	bool limit; /* --image-size of exactly the stream: the map's tightest bound */
};

#define LZ4 .codec = HIB_COMPRESS_LZ4
#define ZSTD(l) .codec = HIB_COMPRESS_ZSTD, .level = (l)
#define NONE .codec = HIB_COMPRESS_NONE

static const struct alloc_case cases[] = {
	{ "lz4_1_thread", LZ4, .threads = 1, .stream_pages = 3000 },
	{ "lz4_4_threads", LZ4, .threads = 4, .stream_pages = 3000 },
	{ "zstd3_1_thread", ZSTD(3), .threads = 1, .stream_pages = 1500 },
	{ "zstd3_3_threads", ZSTD(3), .threads = 3, .stream_pages = 1500 },
	{ "zstd19_1_thread", ZSTD(19), .threads = 1, .stream_pages = 400 },
	{ "zstd19_2_threads", ZSTD(19), .threads = 2, .stream_pages = 400 },
	{ "none_1_thread", NONE, .threads = 1, .stream_pages = 2000 },
	{ "none_4_threads", NONE, .threads = 4, .stream_pages = 2000 },
	/* Every other page of the area taken: an extent per page, several map pages. */
	{ "lz4_fragmented", LZ4, .threads = 2, .stream_pages = 3000, .frag_every = 2 },
	{ "lz4_verify", LZ4, .threads = 2, .stream_pages = 3000, .frag_every = 3, .verify = true },
	{ "zstd3_verify_1_thread", ZSTD(3), .threads = 1, .stream_pages = 1500, .verify = true },
	{ "zstd3_encrypted", ZSTD(3), .threads = 2, .stream_pages = 1500, .encrypt = true },
	{ "lz4_encrypted_verify", LZ4, .threads = 1, .stream_pages = 1500, .frag_every = 5,
	  .verify = true, .encrypt = true },
	{ "lz4_no_uring_verify", LZ4, .threads = 2, .stream_pages = 2000, .frag_every = 4,
	  .verify = true, .no_uring = true },
	/* Sealed raw blocks take a page more than their stream, and no two pages
	 * touch: exactly as many extents as the image-size limit lets the map hold. */
	{ "none_encrypted_at_the_limit", NONE, .threads = 2, .stream_pages = 1500, .frag_every = 2,
	  .encrypt = true, .limit = true },
	{ "lz4_cancelled", LZ4, .threads = 2, .stream_pages = 3000, .outcome = CANCELLED },
	{ "zstd3_cancelled_1_thread", ZSTD(3), .threads = 1, .stream_pages = 1500,
	  .outcome = CANCELLED },
	/* Woken from RAM: the signature is put back while still frozen. */
	{ "lz4_suspend_to_both", LZ4, .threads = 2, .stream_pages = 1500, .outcome = RAM },
	/* The restored system: the resume side's report is read and wiped. */
	{ "lz4_resumed_branch", LZ4, .threads = 2, .stream_pages = 500, .outcome = RESUMED },
	/* Failures while frozen: logged (%m and all) and unwound. */
	{ "lz4_read_error", LZ4, .threads = 2, .stream_pages = 1500, .outcome = READ_ERROR },
	{ "none_area_full", NONE, .threads = 2, .stream_pages = 1500, .frag_every = 2,
	  .outcome = AREA_FULL },
};

static void options_for(const struct alloc_case *c, struct hib_options *o, atomic_uint *progress,
			atomic_uint *cancel_calls, const struct hib_secret *secret)
{
	hib_options_init(o);
	o->codec = c->codec;
	o->codec_level = c->level;
	o->threads = c->threads;
	o->powerdown = c->outcome == RAM ? HIB_POWERDOWN_SUSPEND : HIB_POWERDOWN_NONE;
	o->verify = c->verify;
	if (c->limit)
		o->image_size = (int64_t)(c->stream_pages * HIB_PAGE_SIZE);
	o->progress = progress_count;
	o->progress_userdata = progress;
	if (c->outcome == CANCELLED) {
		o->cancel = cancel_soon;
		o->cancel_userdata = cancel_calls;
	}
	if (c->encrypt) {
		o->secret = secret;
		o->ask_secret = ask_passphrase;
	}
}

static int want_result(enum outcome o)
{
	switch (o) {
	case WRITTEN:
		return HIB_SUSPEND_WRITTEN;
	case CANCELLED:
		return HIB_SUSPEND_CANCELLED;
	case RAM:
		return HIB_SUSPEND_RAM;
	case RESUMED:
		return HIB_SUSPEND_RESUMED;
	case READ_ERROR:
		return -EIO;
	case AREA_FULL:
		return -ENOSPC;
	}
	return 0;
}

/* Resume what a case wrote, counting from resume's freeze to the end. */
static void resume_counted(const struct alloc_case *c, const char *path,
			   const struct hib_fake_params *fp0, const struct hib_options *o)
{
	struct hib_fake_params fp = *fp0;
	struct hib_target *t = NULL;
	struct hib_snapshot *snap = NULL;
	enum hib_resume_outcome outcome = 0;
	uint64_t ok = 0;
	bool complete = false, restored = false;

	assert_int_equal(hib_target_open(path, 0, true, &t), 0);
	assert_int_equal(hib_snapshot_fake_new(&fp, HIB_SNAP_RESUME, &snap), 0);
	window_reset();
	assert_int_equal(hib_resume(t, snap, o, &outcome, NULL), 0);
	assert_int_equal(outcome, HIB_RESUME_RESTORED);
	hib_snapshot_fake_result(snap, &ok, &complete, &restored, NULL);
	/* The fake stays frozen after ATOMIC_RESTORE: closing it thaws. */
	hib_snapshot_close(snap);
	window_check(c->name, "resume");
	hib_target_close(t);
	assert_true(restored && complete);
	assert_int_equal(ok, fp.stream_pages);
}

static void cycle_allocates_nothing_while_frozen(void **state)
{
	const struct alloc_case *c = *state;
	struct hib_secret secret = { HIB_SECRET_PASSPHRASE, PASSPHRASE, strlen(PASSPHRASE) };
	uint64_t swap_pages =
		c->outcome == AREA_FULL
			? c->stream_pages / 2
			: (c->stream_pages + 200) * (c->frag_every == 2 ? 2 : 1) * 3 / 2;
	struct hib_fake_params fp = fake_params(77, c->stream_pages, swap_pages, c->frag_every);
	atomic_uint progress = 0, cancel_calls = 0;
	struct hib_target *t = NULL;
	struct hib_snapshot *snap = NULL;
	struct hib_options o;
	enum hib_suspend_outcome outcome = 0;
	char path[PATH_MAX];
	int r;

	if (counting_off) {
		print_message("# skipped: %s\n", counting_off);
		skip();
	}
	fp.on_freeze = window_open;
	fp.on_thaw = window_close;
	fp.create_resumes = c->outcome == RESUMED;
	if (c->outcome == READ_ERROR)
		fp.fail_read_at = (int64_t)c->stream_pages / 2;
	make_swap_path(path, "alloc", swap_pages);
	options_for(c, &o, &progress, &cancel_calls, &secret);
	o.io_mode = c->no_uring ? HIB_IO_SYNC : HIB_IO_AUTO;

	assert_int_equal(hib_target_open(path, 0, true, &t), 0);
	assert_int_equal(hib_snapshot_fake_new(&fp, HIB_SNAP_HIBERNATE, &snap), 0);
	window_reset();
	r = hib_suspend(t, snap, &o, &outcome, NULL);
	r = cycle_result(r, (int)outcome);
	window_check(c->name, "hibernate");
	hib_snapshot_close(snap);
	hib_target_close(t);
	assert_int_equal(r, want_result(c->outcome));
	if (c->outcome == WRITTEN) {
		assert_true(atomic_load(&progress) > 0);
		resume_counted(c, path, &fp, &o);
	}
	unlink(path);
}

/* The kernel's device only (the fake has no filesystems to record): reading
 * the mount table and every mounted block filesystem's superblock, after the
 * freeze, in what engine_fs_buf_new made before it. */
static void fs_record_allocates_nothing(void **state)
{
	struct hib_header *h;
	struct engine_fs_buf b;
	int r;

	(void)state;
	if (counting_off) {
		print_message("# skipped: %s\n", counting_off);
		skip();
	}
	h = hib_alloc_pages(TEST_PAGE);
	assert_non_null(h);
	assert_int_equal(engine_fs_buf_new(&b), 0);
	window_reset();
	window_open(NULL);
	r = engine_fs_record(h, &b);
	window_close(NULL);
	window_check("fs_record", "recording the mounted filesystems");
	assert_int_equal(r, 0);
	print_message("fs_record: %u block filesystems recorded (those this user can read)\n",
		      h->nr_fs);
	engine_fs_buf_free(&b);
	free(h);
}

/*
 * Whether the counting sees allocations at all: one made here and one made
 * inside glibc (strdup), counted; one inside pthread_create, not. Otherwise
 * (malloc not ours: valgrind, a sanitizer, a preloaded allocator) the cases
 * are skipped with the reason, rather than passing for counting nothing.
 */
#if ALLOC_COUNTING
static void *thread_nop(void *arg)
{
	return arg;
}

static const char *counting_check(void)
{
	void *(*volatile alloc)(size_t) = malloc;
	pthread_t th;
	void *p, *q;

	real_pthread_create = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
	if (!real_pthread_create)
		return "no pthread_create behind this program's";
	/* backtrace() loads its unwinder at the first call, with malloc. */
	backtrace(stacks[0], STACK_DEPTH);
	window_reset();
	atomic_store(&window, true);
	p = alloc(24);
	q = strdup("counted inside glibc");
	if (pthread_create(&th, NULL, thread_nop, NULL) == 0)
		pthread_join(th, NULL);
	atomic_store(&window, false);
	free(p);
	free(q);
	if (atomic_load(&allocs) != 2)
		return "malloc is not this program's here (valgrind, a sanitizer or a preloaded "
		       "allocator replaced it): allocations are counted in the plain build";
	window_reset();
	return NULL;
}
#else
static const char *counting_check(void)
{
	return "built with AddressSanitizer, which owns malloc (and pthread_create): "
	       "allocations are counted in the plain build";
}
#endif

int main(void)
{
	struct CMUnitTest tests[ARRAY_SIZE(cases) + 1];
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		tests[n++] = (struct CMUnitTest){ .name = cases[i].name,
						  .test_func = cycle_allocates_nothing_while_frozen,
						  .initial_state = (void *)&cases[i] };
	tests[n++] = (struct CMUnitTest){ .name = "fs_record",
					  .test_func = fs_record_allocates_nothing };
	counting_off = counting_check();
	hib_set_log(log_keep, NULL);
	return _cmocka_run_group_tests("alloc", tests, n, NULL, NULL);
}
