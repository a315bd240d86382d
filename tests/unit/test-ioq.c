// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The I/O queue (lib/storage/ioq.c), each case with io_uring and with
 * pread/pwrite: every request reported once with its tag; what is written
 * reads back; at most @depth in flight; a short transfer is sent again for
 * the rest, or fails with its tag when no more can be moved (the end of a
 * file or device, the file size limit); errors reach done with their tag;
 * drain reports everything and free waits for what the kernel has. On a
 * regular file (O_DIRECT where the filesystem allows it), pipes (short
 * transfers on demand) and a loop device.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>
#include <linux/fs.h>

#include <cmocka.h>
#include <liburing.h>

#include "storage/ioq.h"
#include "util/util.h"
#include "helpers.h"

#define P TEST_PAGE
#define MAX_TAGS 128u
/* Tags use all 64 bits: the queue must hand them back untouched. */
#define TAG(i) (0xfeed000000000000ull | (uint64_t)(i))

static const enum hib_io_mode modes[] = { HIB_IO_AUTO, HIB_IO_SYNC };

/* What done reported, by tag. */
struct seen {
	unsigned calls;
	unsigned count[MAX_TAGS];
	int res[MAX_TAGS];
};

static void record(uint64_t tag, int res, void *userdata)
{
	struct seen *s = userdata;
	uint64_t i = tag & 0xffff;

	if ((tag & ~0xffffull) != TAG(0) || i >= MAX_TAGS)
		fail_msg("done called with a tag never queued: %#llx", (unsigned long long)tag);
	s->calls++;
	s->count[i]++;
	s->res[i] = res;
}

/* Requests [first, first + n) each reported exactly once, with @res. */
static void expect_done(const struct seen *s, unsigned first, unsigned n, int res)
{
	for (unsigned i = first; i < first + n; i++) {
		if (s->count[i] != 1)
			fail_msg("tag %u reported %u times", i, s->count[i]);
		if (s->res[i] != res)
			fail_msg("tag %u: %d, expected %d", i, s->res[i], res);
	}
}

static bool uring_here(void)
{
	struct io_uring ring;

	if (io_uring_queue_init(2, &ring, 0) < 0)
		return false;
	io_uring_queue_exit(&ring);
	return true;
}

static struct hib_ioq *new_queue(int fd, unsigned depth, enum hib_io_mode mode, struct seen *s)
{
	struct hib_ioq *q = NULL;

	memset(s, 0, sizeof(*s));
	assert_int_equal(hib_ioq_new(fd, depth, mode, record, s, &q), 0);
	assert_int_equal(hib_ioq_is_uring(q), mode == HIB_IO_AUTO && uring_here());
	return q;
}

static void pattern(uint8_t *buf, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (uint8_t)x;
	}
}

static uint8_t *pages(size_t n)
{
	uint8_t *p = hib_alloc_pages(n * P);

	if (!p)
		die("hib_alloc_pages");
	return p;
}

/*
 * Each case runs once per mode, on a file of FILE_PAGES pages holding
 * pattern(FILE_SEED), opened with O_DIRECT where the filesystem takes it,
 * with two buffers of as many pages (a holds the file's pattern). Teardown
 * frees the case's queue and all of it, however the case ended.
 */
#define FILE_PAGES 512u
#define FILE_SEED 1u

struct ioq_case {
	enum hib_io_mode mode;
	char path[PATH_MAX];
	int fd;
	bool direct;
	uint8_t *a, *b;
	struct seen s;
	struct hib_ioq *q;
};

static int case_setup(void **state)
{
	struct ioq_case *c = *state;
	int fd = make_temp(c->path, "ioq");

	c->a = pages(FILE_PAGES);
	c->b = pages(FILE_PAGES);
	pattern(c->a, FILE_PAGES * P, FILE_SEED);
	if (pwrite(fd, c->a, FILE_PAGES * P, 0) != (ssize_t)(FILE_PAGES * P))
		die("pwrite");
	close(fd);
	c->fd = open(c->path, O_RDWR | O_DIRECT | O_CLOEXEC);
	c->direct = c->fd >= 0;
	if (c->fd < 0)
		c->fd = open(c->path, O_RDWR | O_CLOEXEC);
	if (c->fd < 0)
		die(c->path);
	c->q = NULL;
	return 0;
}

static int case_teardown(void **state)
{
	struct ioq_case *c = *state;

	hib_ioq_free(c->q);
	c->q = NULL;
	close(c->fd);
	unlink(c->path);
	free(c->a);
	free(c->b);
	return 0;
}

/* The case's queue, on @fd, reporting into c->s. */
static struct hib_ioq *case_queue(struct ioq_case *c, int fd, unsigned depth)
{
	hib_ioq_free(c->q);
	c->q = new_queue(fd, depth, c->mode, &c->s);
	return c->q;
}

/* Writes all over the fd, then reads of the same places: @n requests of
 * 1..4 pages in slots of 4 pages, in an order that jumps about. */
static void write_read_back(int fd, unsigned depth, enum hib_io_mode mode, unsigned n)
{
	uint8_t *src = pages(4 * n), *dst = pages(4 * n);
	struct seen s;
	struct hib_ioq *q = new_queue(fd, depth, mode, &s);

	assert_true(2 * n <= MAX_TAGS && n % 7 != 0);
	pattern(src, 4 * n * P, n + mode);
	memset(dst, 0, 4 * n * P);
	for (unsigned i = 0; i < n; i++) {
		uint64_t slot = (uint64_t)i * 7 % n;

		assert_int_equal(hib_ioq_write(q, src + slot * 4 * P, (i % 4 + 1) * P, slot * 4 * P,
					       TAG(i)),
				 0);
		assert_true(hib_ioq_inflight(q) <= depth);
	}
	assert_int_equal(hib_ioq_drain(q), 0);
	assert_int_equal(hib_ioq_inflight(q), 0);
	assert_int_equal(s.calls, n);
	expect_done(&s, 0, n, 0);
	for (unsigned i = 0; i < n; i++) {
		uint64_t slot = (uint64_t)i * 7 % n;

		assert_int_equal(hib_ioq_read(q, dst + slot * 4 * P, (i % 4 + 1) * P, slot * 4 * P,
					      TAG(n + i)),
				 0);
		assert_true(hib_ioq_inflight(q) <= depth);
	}
	assert_int_equal(hib_ioq_drain(q), 0);
	expect_done(&s, n, n, 0);
	for (unsigned i = 0; i < n; i++) {
		uint64_t slot = (uint64_t)i * 7 % n;

		assert_memory_equal(dst + slot * 4 * P, src + slot * 4 * P, (i % 4 + 1) * P);
	}
	hib_ioq_free(q);
	free(src);
	free(dst);
}

static void writes_read_back(void **state)
{
	struct ioq_case *c = *state;

	write_read_back(c->fd, 3, c->mode, 40);
	write_read_back(c->fd, 64, c->mode, 40);
}

/* A read across the end of the file gets what is there, then -EIO. */
static void read_past_the_end_fails_with_its_tag(void **state)
{
	struct ioq_case *c = *state;
	struct hib_ioq *q;

	assert_int_equal(ftruncate(c->fd, 8 * P), 0);
	q = case_queue(c, c->fd, 2);
	assert_int_equal(hib_ioq_read(q, c->b, 4 * P, 0, TAG(1)), 0);
	assert_int_equal(hib_ioq_read(q, c->b + 6 * P, 4 * P, 6 * P, TAG(2)), 0);
	assert_int_equal(hib_ioq_read(q, c->b + 12 * P, P, 12 * P, TAG(3)), 0);
	assert_int_equal(hib_ioq_read(q, c->b + 4 * P, 2 * P, 4 * P, TAG(4)), 0);
	assert_int_equal(hib_ioq_drain(q), 0);
	assert_int_equal(c->s.calls, 4);
	expect_done(&c->s, 1, 1, 0);
	expect_done(&c->s, 2, 2, -EIO);
	expect_done(&c->s, 4, 1, 0);
	/* Everything up to the end, the crossing read's first part too. */
	assert_memory_equal(c->b, c->a, 8 * P);
}

/* A write across RLIMIT_FSIZE stops short at the limit: the rest fails
 * with -EFBIG, reported with the write's tag. */
static void write_past_the_size_limit_fails_with_its_tag(void **state)
{
	struct ioq_case *c = *state;
	struct hib_ioq *q;
	struct rlimit old, lim;
	void (*old_sig)(int);
	sigset_t xfsz, old_mask;
	int r, drained;
	struct stat st;

	assert_int_equal(ftruncate(c->fd, 4 * P), 0);
	pattern(c->b, 4 * P, 33);
	q = case_queue(c, c->fd, 4);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 6 * P;
	/* Ignored, and blocked too: under valgrind an io_uring worker's SIGXFSZ
	 * kills the process even when ignored. */
	old_sig = signal(SIGXFSZ, SIG_IGN);
	sigemptyset(&xfsz);
	sigaddset(&xfsz, SIGXFSZ);
	pthread_sigmask(SIG_BLOCK, &xfsz, &old_mask);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	r = hib_ioq_write(q, c->b, 4 * P, 4 * P, TAG(7));
	drained = hib_ioq_drain(q);
	/* Put the limit back before any assertion can leave the case. */
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	signal(SIGXFSZ, old_sig);
	assert_int_equal(r, 0);
	assert_int_equal(drained, 0);
	assert_int_equal(c->s.calls, 1);
	expect_done(&c->s, 7, 1, -EFBIG);
	assert_int_equal(fstat(c->fd, &st), 0);
	assert_int_equal(st.st_size, 6 * P);
	pread_at(c->path, 4 * P, c->a, 2 * P);
	assert_memory_equal(c->a, c->b, 2 * P);
}

/* A pipe's read returns what is there: half now, half later. The queue must
 * send the rest again and report the read once, whole. pread has no use for
 * a pipe: -ESPIPE, with the tag. */
static void short_reads_are_sent_again(void **state)
{
	struct ioq_case *c = *state;
	uint8_t half[P];
	struct hib_ioq *q;
	int p[2], avail = -1;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	q = case_queue(c, p[0], 4);
	memset(half, 'a', P);
	assert_int_equal(write(p[1], half, P), P);
	assert_int_equal(hib_ioq_read(q, c->b, 2 * P, 0, TAG(5)), 0);
	if (!hib_ioq_is_uring(q)) {
		assert_int_equal(c->s.calls, 1);
		expect_done(&c->s, 5, 1, -ESPIPE);
	} else {
		assert_int_equal(hib_ioq_reap_timeout(q, 20000), 0);
		assert_int_equal(c->s.calls, 0);
		/* The first half was taken: a short read, and the rest is pending. */
		assert_int_equal(ioctl(p[0], FIONREAD, &avail), 0);
		assert_int_equal(avail, 0);
		assert_int_equal(hib_ioq_inflight(q), 1);
		memset(half, 'b', P);
		assert_int_equal(write(p[1], half, P), P);
		assert_int_equal(hib_ioq_drain(q), 0);
		assert_int_equal(c->s.calls, 1);
		expect_done(&c->s, 5, 1, 0);
		assert_memory_equal(c->b + P, half, P);
		memset(half, 'a', P);
		assert_memory_equal(c->b, half, P);
	}
	close(p[0]);
	close(p[1]);
}

/* A write into a one-page pipe goes a page at a time as the other end reads. */
static void short_writes_are_sent_again(void **state)
{
	struct ioq_case *c = *state;
	struct hib_ioq *q;
	size_t got = 0;
	int p[2];

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_true(fcntl(p[1], F_SETPIPE_SZ, (int)P) >= (int)P);
	assert_int_equal(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
	q = case_queue(c, p[1], 4);
	assert_int_equal(hib_ioq_write(q, c->a, 4 * P, 0, TAG(6)), 0);
	if (!hib_ioq_is_uring(q)) {
		assert_int_equal(c->s.calls, 1);
		expect_done(&c->s, 6, 1, -ESPIPE);
	} else {
		for (unsigned tries = 0; got < 4 * P; tries++) {
			ssize_t n;

			assert_true(tries < 1000);
			assert_int_equal(hib_ioq_reap_timeout(q, 10000), 0);
			n = read(p[0], c->b + got, 4 * P - got);
			if (n < 0)
				assert_int_equal(errno, EAGAIN);
			else
				got += (size_t)n;
		}
		assert_int_equal(hib_ioq_drain(q), 0);
		assert_int_equal(c->s.calls, 1);
		expect_done(&c->s, 6, 1, 0);
		assert_memory_equal(c->b, c->a, 4 * P);
	}
	close(p[0]);
	close(p[1]);
}

/* A bad descriptor, a misaligned O_DIRECT buffer and offset: each fails with
 * its own tag, and the queue goes on working. */
static void errors_reach_done_with_their_tags(void **state)
{
	struct ioq_case *c = *state;
	struct hib_ioq *q = NULL;
	struct seen s;

	assert_int_equal(hib_ioq_new(c->fd, 2, (enum hib_io_mode)7, record, &s, &q), -EINVAL);
	assert_null(q);
	q = case_queue(c, -1, 2);
	assert_int_equal(hib_ioq_read(q, c->b, P, 0, TAG(8)), 0);
	assert_int_equal(hib_ioq_drain(q), 0);
	expect_done(&c->s, 8, 1, -EBADF);

	q = case_queue(c, c->fd, 2);
	if (c->direct) {
		assert_int_equal(hib_ioq_read(q, c->b + 1, P, 0, TAG(9)), 0);
		assert_int_equal(hib_ioq_write(q, c->b, P, 1, TAG(10)), 0);
	} else {
		print_message("no O_DIRECT here: alignment is not checked\n");
	}
	assert_int_equal(hib_ioq_read(q, c->b + 2 * P, P, 2 * P, TAG(11)), 0);
	assert_int_equal(hib_ioq_drain(q), 0);
	if (c->direct)
		expect_done(&c->s, 9, 2, -EINVAL);
	expect_done(&c->s, 11, 1, 0);
	assert_memory_equal(c->b + 2 * P, c->a + 2 * P, P);
}

/* Free with reads in flight: it waits for them (their buffers are whole
 * afterwards) without calling done, and drops what was never sent. */
static void free_waits_for_the_kernel(void **state)
{
	struct ioq_case *c = *state;
	struct hib_ioq *q = case_queue(c, c->fd, 8);
	const size_t per = FILE_PAGES / 8 * P;
	unsigned calls;

	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(hib_ioq_read(q, c->b + i * per, per, i * per, TAG(i)), 0);
	assert_int_equal(hib_ioq_submit(q), 0);
	calls = c->s.calls;
	hib_ioq_free(q);
	c->q = NULL;
	assert_int_equal(c->s.calls, calls);
	assert_memory_equal(c->b, c->a, FILE_PAGES * P);

	q = case_queue(c, c->fd, 8);
	assert_int_equal(hib_ioq_read(q, c->b, P, 0, TAG(0)), 0);
	hib_ioq_free(q); /* never sent: nothing to wait for */
	c->q = NULL;
}

/*
 * A request that never completes (held behind a read of an empty pipe, as one
 * punted to a frozen io-wq worker would be): after the stall it is cancelled
 * and written by pwrite, the other request completes as usual, and the queue
 * goes on by pwrite. The cancelled write never comes back later.
 */
static void stalled_request_falls_back_to_pwrite(void **state)
{
	struct ioq_case *c = *state;
	struct hib_ioq *q;
	uint64_t t0;
	int p[2];

	if (c->mode != HIB_IO_AUTO || !uring_here()) {
		print_message("# skipped: %s\n",
			      c->mode != HIB_IO_AUTO
				      ? "the stall is io_uring's: this queue has no ring"
				      : "io_uring is not available here");
		skip();
	}
	q = case_queue(c, c->fd, 4);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pattern(c->b, 12 * P, 5);
	hib_ioq_test_stall(q, 300000, p[0]);
	assert_int_equal(hib_ioq_write(q, c->b, 4 * P, 0, TAG(0)), 0); /* held */
	assert_int_equal(hib_ioq_write(q, c->b + 4 * P, 4 * P, 4 * P, TAG(1)), 0);
	t0 = hib_now_ms();
	assert_int_equal(hib_ioq_drain(q), 0);
	assert_true(hib_now_ms() - t0 >= 300);
	expect_done(&c->s, 0, 2, 0);
	assert_false(hib_ioq_is_uring(q));
	assert_int_equal(hib_ioq_write(q, c->b + 8 * P, 4 * P, 8 * P, TAG(2)), 0);
	expect_done(&c->s, 2, 1, 0); /* by pwrite, at once */
	assert_int_equal(pread(c->fd, c->a, 12 * P, 0), (ssize_t)(12 * P));
	assert_memory_equal(c->a, c->b, 12 * P);
	/* Unheld now, a write not cancelled would land on what is written since. */
	memset(c->a, 0x5a, 4 * P);
	assert_int_equal(pwrite(c->fd, c->a, 4 * P, 0), (ssize_t)(4 * P));
	assert_int_equal(write(p[1], "x", 1), 1);
	usleep(100000);
	hib_ioq_free(q);
	c->q = NULL;
	assert_int_equal(pread(c->fd, c->b, 4 * P, 0), (ssize_t)(4 * P));
	assert_memory_equal(c->a, c->b, 4 * P);
	assert_int_equal(c->s.calls, 3);
	close(p[0]);
	close(p[1]);
}

/* Through a block device, in both modes: what is written reads back, and
 * transfers across its end stop there (-ENOSPC writing, -EIO reading). */
static void loop_device_reads_writes_and_ends(void **state)
{
	struct loopdev *l = *state;
	const char *why;
	uint64_t size = 0;
	int fd;

	fd = make_temp(l->file, "ioq-loop");
	assert_int_equal(ftruncate(fd, 64 * P), 0);
	close(fd);
	why = loop_attach(l->file, l->dev, sizeof(l->dev));
	if (why) {
		print_message("# skipped: %s\n", why);
		skip();
	}
	for (size_t m = 0; m < ARRAY_SIZE(modes); m++) {
		uint8_t *buf = pages(4);
		struct seen s;
		struct hib_ioq *q;

		fd = open(l->dev, O_RDWR | O_DIRECT | O_CLOEXEC);
		assert_true(fd >= 0);
		assert_int_equal(ioctl(fd, BLKGETSIZE64, &size), 0);
		assert_int_equal(size, 64 * P);
		write_read_back(fd, 4, modes[m], 15);
		q = new_queue(fd, 4, modes[m], &s);
		pattern(buf, 4 * P, 9);
		assert_int_equal(hib_ioq_write(q, buf, 4 * P, 62 * P, TAG(20)), 0);
		assert_int_equal(hib_ioq_read(q, buf, 2 * P, 63 * P, TAG(21)), 0);
		assert_int_equal(hib_ioq_drain(q), 0);
		assert_int_equal(s.calls, 2);
		expect_done(&s, 20, 1, -ENOSPC);
		expect_done(&s, 21, 1, -EIO);
		hib_ioq_free(q);
		close(fd);
		free(buf);
	}
}

int main(void)
{
	static const struct {
		const char *name;
		CMUnitTestFunction fn;
	} file_cases[] = {
#define CASE(fn) { #fn, fn }
		CASE(writes_read_back),
		CASE(read_past_the_end_fails_with_its_tag),
		CASE(write_past_the_size_limit_fails_with_its_tag),
		CASE(short_reads_are_sent_again),
		CASE(short_writes_are_sent_again),
		CASE(errors_reach_done_with_their_tags),
		CASE(free_waits_for_the_kernel),
		CASE(stalled_request_falls_back_to_pwrite),
#undef CASE
	};
	enum { N = ARRAY_SIZE(file_cases) * ARRAY_SIZE(modes) };
	static struct ioq_case cases[N];
	static char names[N][96];
	struct CMUnitTest tests[N + 1];
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(file_cases); i++)
		for (size_t m = 0; m < ARRAY_SIZE(modes); m++, n++) {
			cases[n].mode = modes[m];
			snprintf(names[n], sizeof(names[n]), "%s_%s", file_cases[i].name,
				 modes[m] == HIB_IO_SYNC ? "sync" : "auto");
			tests[n] = (struct CMUnitTest){ .name = names[n],
							.test_func = file_cases[i].fn,
							.initial_state = &cases[n],
							.setup_func = case_setup,
							.teardown_func = case_teardown };
		}
	tests[n++] = (struct CMUnitTest){ .name = "loop_device_reads_writes_and_ends",
					  .test_func = loop_device_reads_writes_and_ends,
					  .setup_func = loop_setup,
					  .teardown_func = loop_teardown };
	quiet_logs();
	return _cmocka_run_group_tests("ioq", tests, n, NULL, NULL);
}
