// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The ordered pipeline: whatever order workers finish in, the consumer gets
 * jobs back in submission order with their own output; an error the producer
 * puts on a job skips the work and reaches the consumer in its place; abort
 * wakes whoever is blocked.
 *
 * cmocka's assertions are for the main thread only: the producer and worker
 * threads count what they see, and the main thread asserts on the counts.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <cmocka.h>

#include "helpers.h"
#include "pipeline/pipeline.h"
#include "util/util.h"

#define NJOBS 1000
#define IN_BYTES 64
#define MAX_WORKERS 8
#define CTX_MAGIC 0x70697065u

struct shared {
	atomic_uint work_calls;
	atomic_uint work_saw_err; /* work called on a job the producer failed */
	atomic_uint bad_ctx;
	bool jitter;
	unsigned work_err_every; /* work fails jobs with seq % n == 1 */
	unsigned prod_err_every; /* producer fails jobs with seq % n == 3 */
	/* A worker's first job waits (5 s at most) until this many workers have
	 * begun one: two workers are then seen to work, however the machine
	 * schedules them (0: no wait). */
	unsigned rendezvous;
	atomic_uint workers_in;
};

struct wctx {
	unsigned magic;
	uint64_t rng;
	unsigned calls;
	struct shared *sh;
};

static uint64_t rng_next(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t expect_word(uint64_t seq, size_t i)
{
	return (seq * 1000 + i) * 0x9e3779b97f4a7c15ull ^ seq;
}

static size_t in_len_of(uint64_t seq)
{
	return 8 * (1 + seq % (IN_BYTES / 8));
}

static int work(struct hib_job *job, void *ctx)
{
	struct wctx *w = ctx;
	const uint64_t *in = job->in;
	uint64_t *out = job->out;

	if (!w || w->magic != CTX_MAGIC) {
		/* No context to count in: nothing sane to do but report it. */
		static atomic_uint orphan;
		atomic_fetch_add(&orphan, 1);
		return -EFAULT;
	}
	if (w->calls++ == 0 && w->sh->rendezvous) {
		const struct timespec ms = { 0, 1000000 };

		atomic_fetch_add(&w->sh->workers_in, 1);
		for (int i = 0; i < 5000 && atomic_load(&w->sh->workers_in) < w->sh->rendezvous;
		     i++)
			nanosleep(&ms, NULL);
	}
	atomic_fetch_add(&w->sh->work_calls, 1);
	if (job->err)
		atomic_fetch_add(&w->sh->work_saw_err, 1);
	if (w->sh->jitter) {
		/* Make workers finish out of order. */
		uint64_t r = rng_next(&w->rng) % 64;
		if (r < 8) {
			struct timespec ts = { 0, (long)(r * 20000) };
			nanosleep(&ts, NULL);
		} else if (r < 24) {
			sched_yield();
		}
	}
	for (size_t i = 0; i < job->in_len / 8; i++)
		out[i] = in[i] * 0x9e3779b97f4a7c15ull ^ job->seq;
	job->out_len = job->in_len;
	if (w->sh->work_err_every && job->seq % w->sh->work_err_every == 1)
		return -EDOM;
	return 0;
}

struct producer {
	struct hib_pipeline *p;
	struct shared *sh;
	unsigned njobs;
	unsigned got_null;
	unsigned bad_seq;
};

static void *producer_main(void *arg)
{
	struct producer *pr = arg;

	for (uint64_t seq = 0; seq < pr->njobs; seq++) {
		struct hib_job *job = pipeline_next_free(pr->p);
		uint64_t *in;

		if (!job) {
			pr->got_null++;
			break;
		}
		if (job->seq != seq || job->err || job->in_len || job->out_len)
			pr->bad_seq++;
		in = job->in;
		job->in_len = in_len_of(seq);
		for (size_t i = 0; i < job->in_len / 8; i++)
			in[i] = seq * 1000 + i;
		job->user = seq * 7;
		if (pr->sh->prod_err_every && seq % pr->sh->prod_err_every == 3)
			job->err = -EIO;
		pipeline_submit(pr->p, job);
	}
	return NULL;
}

struct order_case {
	const char *name;
	unsigned workers;
	unsigned slots; /* 0: as the engine sizes it */
	unsigned prod_err_every;
	unsigned work_err_every;
};

static void jobs_come_back_in_order(void **state)
{
	const struct order_case *c = *state;
	unsigned nctx = c->workers ? c->workers : 1;
	unsigned slots = c->slots ? c->slots : 2 * nctx + 4;
	struct shared sh = { .jitter = c->workers > 0,
			     .rendezvous = c->workers > 1 ? 2 : 0,
			     .prod_err_every = c->prod_err_every,
			     .work_err_every = c->work_err_every };
	struct wctx ctx[MAX_WORKERS];
	void *ctxp[MAX_WORKERS];
	struct producer pr = { .sh = &sh, .njobs = NJOBS };
	struct hib_pipeline *p = NULL;
	pthread_t tid;
	unsigned out_of_order = 0, bad_out = 0, bad_err = 0, bad_user = 0, expect_calls = 0;
	unsigned calls = 0, got = 0;
	char first[200] = "";

	for (unsigned i = 0; i < MAX_WORKERS; i++) {
		ctx[i] = (struct wctx){ .magic = CTX_MAGIC, .rng = i + 1, .sh = &sh };
		ctxp[i] = &ctx[i];
	}
	assert_int_equal(pipeline_new(slots, c->workers, IN_BYTES, IN_BYTES, work, ctxp, &p), 0);
	assert_int_equal(pipeline_workers(p), c->workers);
	assert_true(pipeline_memory(p) >= (size_t)slots * 2 * IN_BYTES);
	assert_int_equal(pipeline_start(p), 0);
	pr.p = p;
	assert_int_equal(pthread_create(&tid, NULL, producer_main, &pr), 0);

	for (uint64_t seq = 0; seq < NJOBS; seq++) {
		struct hib_job *job = pipeline_next_done(p);
		int want_err = 0;

		if (!job)
			break;
		got++;
		if (job->seq != seq && !out_of_order++)
			snprintf(first, sizeof(first), "job %llu came back as #%llu",
				 (unsigned long long)job->seq, (unsigned long long)seq);
		if (job->user != seq * 7)
			bad_user++;
		if (sh.prod_err_every && seq % sh.prod_err_every == 3)
			want_err = -EIO;
		else if (sh.work_err_every && seq % sh.work_err_every == 1)
			want_err = -EDOM;
		if (job->err != want_err && !bad_err++)
			snprintf(first, sizeof(first), "job %llu: err %d, want %d",
				 (unsigned long long)seq, job->err, want_err);
		if (want_err != -EIO) {
			const uint64_t *out = job->out;
			bool ok = job->out_len == in_len_of(seq);
			expect_calls++;
			for (size_t i = 0; ok && i < in_len_of(seq) / 8; i++)
				ok = out[i] == expect_word(seq, i);
			if (!ok && !bad_out++)
				snprintf(first, sizeof(first), "job %llu: wrong output",
					 (unsigned long long)seq);
		}
		pipeline_release(p, job);
	}
	if (got < NJOBS)
		pipeline_abort(p);
	pthread_join(tid, NULL);
	pipeline_stop(p);
	for (unsigned i = 0; i < nctx; i++)
		calls += ctx[i].calls;
	pipeline_free(p);

	if (*first)
		print_message("# first problem: %s\n", first);
	assert_int_equal(got, NJOBS);
	assert_int_equal(pr.got_null, 0);
	assert_int_equal(pr.bad_seq, 0);
	assert_int_equal(out_of_order, 0);
	assert_int_equal(bad_user, 0);
	assert_int_equal(bad_err, 0);
	assert_int_equal(bad_out, 0);
	/* The work ran once per job the producer did not fail, and never on one it did. */
	assert_int_equal(sh.work_saw_err, 0);
	assert_int_equal(sh.work_calls, expect_calls);
	assert_int_equal(calls, expect_calls);
	/* With several workers, at least two got work (the rendezvous makes sure
	 * of it: whether every one of them does is the scheduler's business on a
	 * busy machine, and failed this test under load). */
	if (c->workers > 1) {
		unsigned busy = 0;

		for (unsigned i = 0; i < c->workers; i++)
			busy += ctx[i].calls > 0;
		assert_true(busy >= 2);
	}
}

static const struct order_case order_cases[] = {
	{ "in_order_0_workers", 0, 0, 0, 0 },
	{ "in_order_1_worker", 1, 0, 0, 0 },
	{ "in_order_4_workers", 4, 0, 0, 0 },
	{ "in_order_4_workers_2_slots", 4, 2, 0, 0 },
	{ "in_order_4_workers_64_slots", 4, 64, 0, 0 },
	{ "producer_error_in_order_0_workers", 0, 0, 10, 0 },
	{ "producer_error_in_order_1_worker", 1, 0, 10, 0 },
	{ "producer_error_in_order_4_workers", 4, 0, 10, 0 },
	{ "work_error_in_order_4_workers", 4, 0, 0, 7 },
	{ "both_errors_in_order_4_workers", 4, 0, 5, 3 },
};

/* Producer and consumer in one thread, the work inline (the single-CPU case). */
static void same_thread_inline(void **state)
{
	struct shared sh = { 0 };
	struct wctx ctx = { .magic = CTX_MAGIC, .sh = &sh };
	void *ctxp[1] = { &ctx };
	struct hib_pipeline *p = NULL;

	(void)state;
	assert_int_equal(pipeline_new(3, 0, IN_BYTES, IN_BYTES, work, ctxp, &p), 0);
	assert_int_equal(pipeline_start(p), 0);
	for (uint64_t seq = 0; seq < NJOBS; seq++) {
		struct hib_job *job = pipeline_next_free(p);
		uint64_t *in;

		assert_non_null(job);
		in = job->in;
		job->in_len = 8;
		in[0] = seq * 1000;
		pipeline_submit(p, job);
		/* Done already: the work ran inside submit. */
		assert_int_equal(ctx.calls, seq + 1);
		job = pipeline_next_done(p);
		assert_non_null(job);
		assert_int_equal(job->seq, seq);
		assert_int_equal(((uint64_t *)job->out)[0], expect_word(seq, 0));
		pipeline_release(p, job);
	}
	pipeline_free(p);
}

/* A producer may point a job's input at memory of its own (the resume's
 * read-ahead does): the work reads it there, the next job from that slot has
 * the slot's buffer again, and the pipeline never frees the producer's. */
static void producer_owned_input(void **state)
{
	struct shared sh = { 0 };
	struct wctx ctx = { .magic = CTX_MAGIC, .sh = &sh };
	void *ctxp[1] = { &ctx };
	struct hib_pipeline *p = NULL;
	uint64_t ext[NJOBS][2];

	(void)state;
	assert_int_equal(pipeline_new(2, 0, IN_BYTES, IN_BYTES, work, ctxp, &p), 0);
	assert_int_equal(pipeline_start(p), 0);
	for (uint64_t seq = 0; seq < NJOBS; seq++) {
		struct hib_job *job = pipeline_next_free(p);

		assert_non_null(job);
		assert_true((uint8_t *)job->in < (uint8_t *)ext ||
			    (uint8_t *)job->in >= (uint8_t *)ext + sizeof(ext));
		ext[seq][0] = seq * 1000;
		job->in = ext[seq];
		job->in_len = 8;
		pipeline_submit(p, job);
		job = pipeline_next_done(p);
		assert_non_null(job);
		assert_int_equal(((uint64_t *)job->out)[0], expect_word(seq, 0));
		pipeline_release(p, job);
	}
	pipeline_free(p); /* frees the slots' buffers, not ext */
}

static void too_few_slots_refused(void **state)
{
	struct hib_pipeline *p = (struct hib_pipeline *)0x1;

	(void)state;
	assert_int_equal(pipeline_new(1, 2, IN_BYTES, IN_BYTES, work, NULL, &p), -EINVAL);
	assert_int_equal(pipeline_new(0, 0, IN_BYTES, IN_BYTES, work, NULL, &p), -EINVAL);
	assert_ptr_equal(p, (struct hib_pipeline *)0x1); /* ret_ written only on success */
}

/* ---- abort -------------------------------------------------------------- */

struct blocker {
	struct hib_pipeline *p;
	bool consumer;    /* block in next_done, else in next_free */
	atomic_int ready; /* about to make the blocking call */
	atomic_int returned;
	struct hib_job *result;
};

static void *blocker_main(void *arg)
{
	struct blocker *b = arg;

	atomic_store(&b->ready, 1);
	b->result = b->consumer ? pipeline_next_done(b->p) : pipeline_next_free(b->p);
	atomic_store(&b->returned, 1);
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

/* Start @b blocking, check it stays blocked, @release it, check it wakes
 * within 5 s (@what names the release for the failure). */
static void held_until(struct blocker *b, void (*release)(struct hib_pipeline *), const char *what)
{
	pthread_t tid;
	struct timespec deadline;

	assert_int_equal(pthread_create(&tid, NULL, blocker_main, b), 0);
	while (!atomic_load(&b->ready))
		sched_yield();
	sleep_ms(50);
	assert_int_equal(atomic_load(&b->returned), 0); /* it is really blocked */
	release(b->p);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 5;
	if (pthread_timedjoin_np(tid, NULL, &deadline) != 0)
		fail_msg("the blocked %s did not wake up within 5 s of %s",
			 b->consumer ? "consumer" : "producer", what);
}

/* Start @b blocking, check it stays blocked, abort, check it wakes with NULL. */
static void abort_wakes(struct blocker *b)
{
	held_until(b, pipeline_abort, "pipeline_abort()");
	assert_null(b->result);
}

static void abort_wakes_blocked_producer(void **state)
{
	unsigned workers = (unsigned)(uintptr_t)*state;
	struct shared sh = { 0 };
	struct wctx ctx[2] = { { .magic = CTX_MAGIC, .sh = &sh },
			       { .magic = CTX_MAGIC, .sh = &sh } };
	void *ctxp[2] = { &ctx[0], &ctx[1] };
	struct blocker b = { .consumer = false };

	assert_int_equal(pipeline_new(2, workers, IN_BYTES, IN_BYTES, work, ctxp, &b.p), 0);
	assert_int_equal(pipeline_start(b.p), 0);
	/* Fill the ring; nobody consumes. */
	for (int i = 0; i < 2; i++) {
		struct hib_job *job = pipeline_next_free(b.p);
		assert_non_null(job);
		job->in_len = 8;
		pipeline_submit(b.p, job);
	}
	abort_wakes(&b);
	pipeline_free(b.p);
}

static void abort_wakes_blocked_consumer(void **state)
{
	unsigned workers = (unsigned)(uintptr_t)*state;
	struct shared sh = { 0 };
	struct wctx ctx[2] = { { .magic = CTX_MAGIC, .sh = &sh },
			       { .magic = CTX_MAGIC, .sh = &sh } };
	void *ctxp[2] = { &ctx[0], &ctx[1] };
	struct blocker b = { .consumer = true };

	assert_int_equal(pipeline_new(4, workers, IN_BYTES, IN_BYTES, work, ctxp, &b.p), 0);
	assert_int_equal(pipeline_start(b.p), 0);
	/* A job taken but never submitted: the consumer waits for it. */
	assert_non_null(pipeline_next_free(b.p));
	abort_wakes(&b);
	pipeline_free(b.p);
}

static void lift_limit(struct hib_pipeline *p)
{
	pipeline_limit(p, 0);
}

/* pipeline_limit: the producer stops @ahead slots past the tail, a waiting
 * producer goes on when the limit is lifted, and then the whole ring is its;
 * every slot's buffers start zeroed and page-aligned. */
static void limit_holds_producer_until_lifted(void **state)
{
	unsigned workers = (unsigned)(uintptr_t)*state;
	struct shared sh = { 0 };
	struct wctx ctx[2] = { { .magic = CTX_MAGIC, .sh = &sh },
			       { .magic = CTX_MAGIC, .sh = &sh } };
	void *ctxp[2] = { &ctx[0], &ctx[1] };
	struct blocker b = { .consumer = false };

	assert_int_equal(pipeline_new(8, workers, IN_BYTES, IN_BYTES, work, ctxp, &b.p), 0);
	pipeline_limit(b.p, 3);
	assert_int_equal(pipeline_start(b.p), 0);
	for (int i = 0; i < 3; i++) {
		struct hib_job *job = pipeline_next_free(b.p);

		assert_non_null(job);
		assert_int_equal((uintptr_t)job->in % 4096, 0);
		assert_int_equal((uintptr_t)job->out % 4096, 0);
		for (size_t k = 0; k < IN_BYTES; k++)
			assert_int_equal(((uint8_t *)job->in)[k] | ((uint8_t *)job->out)[k], 0);
		job->in_len = 8;
		pipeline_submit(b.p, job);
	}
	assert_false(pipeline_free_ready(b.p));
	held_until(&b, lift_limit, "lifting the limit"); /* held at 3 until then */
	assert_non_null(b.result);
	assert_int_equal(b.result->seq, 3);
	b.result->in_len = 8;
	pipeline_submit(b.p, b.result);
	for (int i = 4; i < 8; i++) {
		struct hib_job *job;

		assert_true(pipeline_free_ready(b.p));
		job = pipeline_next_free(b.p);
		assert_non_null(job);
		job->in_len = 8;
		pipeline_submit(b.p, job);
	}
	assert_false(pipeline_free_ready(b.p)); /* all 8, nobody consumed */
	pipeline_free(b.p);
}

static void calls_after_abort_return_null(void **state)
{
	struct shared sh = { 0 };
	struct wctx ctx = { .magic = CTX_MAGIC, .sh = &sh };
	void *ctxp[1] = { &ctx };
	struct hib_pipeline *p = NULL;
	struct hib_job *job;

	(void)state;
	assert_int_equal(pipeline_new(4, 1, IN_BYTES, IN_BYTES, work, ctxp, &p), 0);
	assert_int_equal(pipeline_start(p), 0);
	job = pipeline_next_free(p);
	assert_non_null(job);
	job->in_len = 8;
	pipeline_submit(p, job);
	pipeline_abort(p);
	assert_null(pipeline_next_free(p));
	assert_null(pipeline_next_done(p));
	pipeline_free(p);
}

/* The consumer gives up halfway through a busy stream: everyone stops. */

static void abort_mid_stream_stops_cleanly(void **state)
{
	struct shared sh = { .jitter = true };
	struct wctx ctx[4];
	void *ctxp[4];
	struct producer pr = { .sh = &sh, .njobs = NJOBS };
	pthread_t tid;
	struct timespec deadline;

	(void)state;
	for (unsigned i = 0; i < 4; i++) {
		ctx[i] = (struct wctx){ .magic = CTX_MAGIC, .rng = 9 + i, .sh = &sh };
		ctxp[i] = &ctx[i];
	}
	assert_int_equal(pipeline_new(12, 4, IN_BYTES, IN_BYTES, work, ctxp, &pr.p), 0);
	assert_int_equal(pipeline_start(pr.p), 0);
	assert_int_equal(pthread_create(&tid, NULL, producer_main, &pr), 0);
	for (uint64_t seq = 0; seq < 50; seq++) {
		struct hib_job *job = pipeline_next_done(pr.p);
		assert_non_null(job);
		assert_int_equal(job->seq, seq);
		pipeline_release(pr.p, job);
	}
	pipeline_abort(pr.p);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 5;
	if (pthread_timedjoin_np(tid, NULL, &deadline) != 0)
		fail_msg("the producer did not stop within 5 s of pipeline_abort()");
	assert_int_equal(pr.got_null, 1);
	pipeline_stop(pr.p); /* joins the workers: must not hang */
	pipeline_free(pr.p);
	assert_true(sh.work_calls < NJOBS);
}

/* pipeline_work_ns: the CPU time work() took, summed over the workers (the
 * producer's, inline). A job that spins for SPIN_NS of CPU counts; one that
 * sleeps NAP_MS costs no CPU and must not count: the codec's time is what it
 * ran, not how long it was away (wall time would count the naps too). */
#define TIMED_JOBS 8
#define SPIN_NS 3000000u
#define NAP_MS 5

static int spin_or_nap(struct hib_job *job, void *ctx)
{
	uint64_t t0 = hib_thread_cpu_ns();

	(void)ctx;
	if (job->flags) {
		sleep_ms(NAP_MS);
		return 0;
	}
	while (hib_thread_cpu_ns() - t0 < SPIN_NS)
		;
	return 0;
}

static void work_time_is_cpu_time(void **state)
{
	unsigned workers = (unsigned)(uintptr_t)*state;
	void *ctxp[2] = { NULL, NULL };
	struct hib_pipeline *p = NULL;
	uint64_t ns;

	assert_int_equal(pipeline_new(4, workers, 64, 64, spin_or_nap, ctxp, &p), 0);
	assert_int_equal(pipeline_start(p), 0);
	for (unsigned i = 0; i < 2 * TIMED_JOBS; i++) {
		struct hib_job *job = pipeline_next_free(p);

		assert_non_null(job);
		job->in_len = 8;
		job->flags = i % 2; /* every other job naps */
		pipeline_submit(p, job);
		job = pipeline_next_done(p);
		assert_non_null(job);
		pipeline_release(p, job);
	}
	pipeline_stop(p);
	ns = pipeline_work_ns(p);
	print_message("# %u workers: %llu us of work (%u us spun)\n", workers,
		      (unsigned long long)(ns / 1000), TIMED_JOBS * SPIN_NS / 1000);
	assert_true(ns >= (uint64_t)TIMED_JOBS * SPIN_NS);
	assert_true(ns < (uint64_t)TIMED_JOBS * SPIN_NS + TIMED_JOBS * NAP_MS * 1000000ull / 2);
	pipeline_free(p);
}

/* The worker's nice, into the job's output. */
static int record_nice(struct hib_job *job, void *ctx)
{
	(void)ctx;
	errno = 0;
	*(int *)job->out = getpriority(PRIO_PROCESS, 0);
	job->out_len = sizeof(int);
	return errno;
}

/* The workers run below the producer and the consumer (pipeline.h), each
 * thread alone: the caller's own nice stays as it was. */
static void workers_run_below_the_ring(void **state)
{
	void *ctxp[2] = { NULL, NULL };
	struct hib_pipeline *p = NULL;
	int base;

	(void)state;
	errno = 0;
	base = getpriority(PRIO_PROCESS, 0);
	assert_int_equal(errno, 0);
	assert_int_equal(pipeline_new(4, 2, 64, 64, record_nice, ctxp, &p), 0);
	assert_int_equal(pipeline_start(p), 0);
	for (unsigned i = 0; i < 8; i++) {
		struct hib_job *job = pipeline_next_free(p);

		assert_non_null(job);
		job->in_len = 8;
		pipeline_submit(p, job);
		job = pipeline_next_done(p);
		assert_non_null(job);
		assert_int_equal(job->err, 0);
		assert_int_equal(*(int *)job->out, base + 5 > 19 ? 19 : base + 5);
		pipeline_release(p, job);
	}
	pipeline_stop(p);
	pipeline_free(p);
	assert_int_equal(getpriority(PRIO_PROCESS, 0), base);
}

#define NAMED(fn)                                                                                  \
	{                                                                                          \
		.name = #fn, .test_func = fn                                                       \
	}

int main(void)
{
	enum { N_O = sizeof(order_cases) / sizeof(order_cases[0]) };
	static const struct CMUnitTest fixed[] = {
		NAMED(same_thread_inline),
		NAMED(producer_owned_input),
		NAMED(too_few_slots_refused),
		{ .name = "abort_wakes_blocked_producer_0_workers",
		  .test_func = abort_wakes_blocked_producer,
		  .initial_state = (void *)0 },
		{ .name = "abort_wakes_blocked_producer_1_worker",
		  .test_func = abort_wakes_blocked_producer,
		  .initial_state = (void *)1 },
		{ .name = "abort_wakes_blocked_producer_2_workers",
		  .test_func = abort_wakes_blocked_producer,
		  .initial_state = (void *)2 },
		{ .name = "abort_wakes_blocked_consumer_0_workers",
		  .test_func = abort_wakes_blocked_consumer,
		  .initial_state = (void *)0 },
		{ .name = "abort_wakes_blocked_consumer_2_workers",
		  .test_func = abort_wakes_blocked_consumer,
		  .initial_state = (void *)2 },
		{ .name = "limit_holds_producer_until_lifted_0_workers",
		  .test_func = limit_holds_producer_until_lifted,
		  .initial_state = (void *)0 },
		{ .name = "limit_holds_producer_until_lifted_2_workers",
		  .test_func = limit_holds_producer_until_lifted,
		  .initial_state = (void *)2 },
		NAMED(calls_after_abort_return_null),
		NAMED(abort_mid_stream_stops_cleanly),
		NAMED(workers_run_below_the_ring),
		{ .name = "work_time_is_cpu_time_0_workers",
		  .test_func = work_time_is_cpu_time,
		  .initial_state = (void *)0 },
		{ .name = "work_time_is_cpu_time_2_workers",
		  .test_func = work_time_is_cpu_time,
		  .initial_state = (void *)2 },
	};
	enum { N_F = sizeof(fixed) / sizeof(fixed[0]) };
	struct CMUnitTest tests[N_O + N_F];
	size_t n = 0;

	for (size_t i = 0; i < N_O; i++)
		tests[n++] = (struct CMUnitTest){ .name = order_cases[i].name,
						  .test_func = jobs_come_back_in_order,
						  .initial_state = (void *)&order_cases[i] };
	for (size_t i = 0; i < N_F; i++)
		tests[n++] = fixed[i];
	quiet_logs();
	return _cmocka_run_group_tests("pipeline", tests, n, NULL, NULL);
}
