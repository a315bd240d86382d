// SPDX-License-Identifier: GPL-2.0-or-later
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "pipeline/pipeline.h"
#include "util/util.h"

enum { JOB_FREE, JOB_FILLED, JOB_WORKING, JOB_DONE, JOB_CONSUMED, JOB_RELEASED };

/* Workers only need a little stack; mlockall(MCL_FUTURE) would fault in the 8 MiB default. */
#define WORKER_STACK (256u * 1024u)
/* The workers' nice, over the producer's and the consumer's (pipeline.h). */
#define WORKER_NICE 5

struct worker_arg {
	struct hib_pipeline *p;
	unsigned id;
	uint64_t work_ns; /* CPU time in work(), stored once, as the worker ends */
};

struct hib_pipeline {
	pthread_mutex_t mu;
	/* One condition per kind of waiter, each woken only for what it waits
	 * for: on 2 CPUs every spurious wakeup of three threads per block was a
	 * context switch taken from the codec. */
	pthread_cond_t work_cv; /* workers: a job filled */
	pthread_cond_t done_cv; /* the consumer: the job at next_consume done */
	pthread_cond_t free_cv; /* the producer: a slot released */
	struct hib_job *jobs;
	unsigned slots;
	unsigned ahead; /* the most slots the producer holds past the tail */
	/* Every slot's buffers, in two mappings the kernel fills as they are
	 * first touched (pipeline.h). */
	void *in_map, *out_map;
	size_t in_map_bytes, out_map_bytes;
	unsigned workers;
	pthread_t *tids;
	struct worker_arg *args; /* each worker's, made with the pipeline */
	unsigned started;
	void **worker_ctx;
	hib_work_fn work;
	uint64_t next_free;    /* producer's next seq */
	uint64_t next_consume; /* consumer's next seq to take */
	uint64_t next_done;    /* oldest seq not yet released: the ring's tail */
	int aborted;
	int stopping;
	size_t memory;
	uint64_t inline_ns; /* CPU time in work() run inline (no workers) */
};

static struct hib_job *slot(struct hib_pipeline *p, uint64_t seq)
{
	return &p->jobs[seq % p->slots];
}

static size_t page_round(size_t bytes)
{
	return (MAX(bytes, (size_t)1) + 4095) & ~(size_t)4095;
}

static void *map_anon(size_t bytes)
{
	void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return m == MAP_FAILED ? NULL : m;
}

/* Each slot's in and out buffer, page-aligned, zero until written. */
static int map_buffers(struct hib_pipeline *p, unsigned slots, size_t in_bytes, size_t out_bytes)
{
	size_t in_step = page_round(in_bytes), out_step = page_round(out_bytes);

	p->in_map_bytes = in_step * slots;
	p->out_map_bytes = out_step * slots;
	p->in_map = map_anon(p->in_map_bytes);
	p->out_map = map_anon(p->out_map_bytes);
	if (!p->in_map || !p->out_map)
		return -ENOMEM;
	for (unsigned i = 0; i < slots; i++) {
		p->jobs[i].in = p->jobs[i].own_in = (uint8_t *)p->in_map + in_step * i;
		p->jobs[i].out = (uint8_t *)p->out_map + out_step * i;
		p->jobs[i].seq = i;
	}
	return 0;
}

int pipeline_new(unsigned slots, unsigned workers, size_t in_bytes, size_t out_bytes,
		 hib_work_fn work, void **worker_ctx, struct hib_pipeline **ret)
{
	struct hib_pipeline *p;

	if (slots < 2)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work_cv, NULL);
	pthread_cond_init(&p->done_cv, NULL);
	pthread_cond_init(&p->free_cv, NULL);
	p->slots = p->ahead = slots;
	p->workers = workers;
	p->work = work;
	p->worker_ctx = worker_ctx;
	p->jobs = calloc(slots, sizeof(*p->jobs));
	p->tids = calloc(workers ? workers : 1, sizeof(*p->tids));
	p->args = calloc(workers ? workers : 1, sizeof(*p->args));
	if (!p->jobs || !p->tids || !p->args)
		goto oom;
	if (map_buffers(p, slots, in_bytes, out_bytes) < 0)
		goto oom;
	p->memory = slots * (in_bytes + out_bytes);
	*ret = p;
	return 0;
oom:
	pipeline_free(p);
	return -ENOMEM;
}

/* With the lock held: the job is done; wake the consumer if it waits for it. */
static void mark_done(struct hib_pipeline *p, struct hib_job *job)
{
	job->state = JOB_DONE;
	if (job->seq == p->next_consume)
		pthread_cond_signal(&p->done_cv);
}

/* With the lock held: wake every waiter (abort, stop). */
static void wake_all(struct hib_pipeline *p)
{
	pthread_cond_broadcast(&p->work_cv);
	pthread_cond_broadcast(&p->done_cv);
	pthread_cond_broadcast(&p->free_cv);
}

static void *worker_main(void *arg)
{
	struct worker_arg a = *(struct worker_arg *)arg;
	struct hib_pipeline *p = a.p;
	uint64_t work_ns = 0; /* this thread's alone: no lock, summed after the join */

	/* This thread only (a nice is a thread's own on Linux); best effort. */
	errno = 0;
	int base = getpriority(PRIO_PROCESS, 0);
	if (errno == 0)
		(void)setpriority(PRIO_PROCESS, (id_t)gettid(), MIN(base + WORKER_NICE, 19));
	pthread_mutex_lock(&p->mu);
	for (;;) {
		struct hib_job *job = NULL;

		/* The oldest filled job first: the consumer waits for it. */
		for (uint64_t s = p->next_consume; s < p->next_free; s++)
			if (slot(p, s)->state == JOB_FILLED) {
				job = slot(p, s);
				break;
			}
		if (!job) {
			if (p->stopping || p->aborted)
				break;
			pthread_cond_wait(&p->work_cv, &p->mu);
			continue;
		}
		job->state = JOB_WORKING;
		pthread_mutex_unlock(&p->mu);
		if (!job->err) { /* a producer's error passes through, in order */
			uint64_t t0 = hib_thread_cpu_ns();

			job->err = p->work(job, p->worker_ctx ? p->worker_ctx[a.id] : NULL);
			work_ns += hib_thread_cpu_ns() - t0;
		}
		pthread_mutex_lock(&p->mu);
		mark_done(p, job);
	}
	pthread_mutex_unlock(&p->mu);
	((struct worker_arg *)arg)->work_ns = work_ns;
	return NULL;
}

int pipeline_start(struct hib_pipeline *p)
{
	pthread_attr_t attr;
	int r = 0;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, WORKER_STACK);
	for (unsigned i = 0; i < p->workers; i++) {
		p->args[i] = (struct worker_arg){ .p = p, .id = i };
		r = -pthread_create(&p->tids[i], &attr, worker_main, &p->args[i]);
		if (r < 0)
			break;
		p->started++;
	}
	pthread_attr_destroy(&attr);
	if (r < 0)
		pipeline_stop(p);
	return r;
}

struct hib_job *pipeline_next_free(struct hib_pipeline *p)
{
	struct hib_job *job;

	pthread_mutex_lock(&p->mu);
	while (!p->aborted && p->next_free - p->next_done >= p->ahead)
		pthread_cond_wait(&p->free_cv, &p->mu);
	if (p->aborted) {
		pthread_mutex_unlock(&p->mu);
		return NULL;
	}
	job = slot(p, p->next_free);
	job->seq = p->next_free;
	job->in = job->own_in;
	job->in_len = job->out_len = 0;
	job->err = 0;
	job->user = 0;
	job->flags = 0;
	pthread_mutex_unlock(&p->mu);
	return job;
}

bool pipeline_free_ready(struct hib_pipeline *p)
{
	bool ready;

	pthread_mutex_lock(&p->mu);
	ready = p->aborted || p->next_free - p->next_done < p->ahead;
	pthread_mutex_unlock(&p->mu);
	return ready;
}

void pipeline_submit(struct hib_pipeline *p, struct hib_job *job)
{
	job->submit_ns = hib_now_ns();
	if (p->started == 0) {
		if (!job->err) {
			uint64_t t0 = hib_thread_cpu_ns();

			job->err = p->work(job, p->worker_ctx ? p->worker_ctx[0] : NULL);
			p->inline_ns += hib_thread_cpu_ns() - t0;
		}
		pthread_mutex_lock(&p->mu);
		mark_done(p, job);
	} else {
		pthread_mutex_lock(&p->mu);
		job->state = JOB_FILLED;
		pthread_cond_signal(&p->work_cv); /* one job, one worker */
	}
	p->next_free++;
	pthread_mutex_unlock(&p->mu);
}

struct hib_job *pipeline_next_done(struct hib_pipeline *p)
{
	struct hib_job *job;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		if (p->aborted) {
			job = NULL;
			break;
		}
		if (p->next_consume < p->next_free && slot(p, p->next_consume)->state == JOB_DONE) {
			job = slot(p, p->next_consume);
			job->state = JOB_CONSUMED;
			p->next_consume++;
			break;
		}
		pthread_cond_wait(&p->done_cv, &p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	return job;
}

bool pipeline_done_ready(struct hib_pipeline *p)
{
	bool ready;

	pthread_mutex_lock(&p->mu);
	ready = p->aborted ||
		(p->next_consume < p->next_free && slot(p, p->next_consume)->state == JOB_DONE);
	pthread_mutex_unlock(&p->mu);
	return ready;
}

void pipeline_release(struct hib_pipeline *p, struct hib_job *job)
{
	bool moved = false;

	pthread_mutex_lock(&p->mu);
	/* Jobs may be released out of order (their writes finish in any order);
	 * the ring's tail moves over every released one at its head. */
	job->state = JOB_RELEASED;
	while (p->next_done < p->next_consume && slot(p, p->next_done)->state == JOB_RELEASED) {
		slot(p, p->next_done)->state = JOB_FREE;
		p->next_done++;
		moved = true;
	}
	if (moved)
		pthread_cond_signal(&p->free_cv);
	pthread_mutex_unlock(&p->mu);
}

void pipeline_limit(struct hib_pipeline *p, unsigned ahead)
{
	pthread_mutex_lock(&p->mu);
	p->ahead = ahead ? MIN(MAX(ahead, 2u), p->slots) : p->slots;
	pthread_cond_signal(&p->free_cv);
	pthread_mutex_unlock(&p->mu);
}

void pipeline_abort(struct hib_pipeline *p)
{
	pthread_mutex_lock(&p->mu);
	p->aborted = 1;
	wake_all(p);
	pthread_mutex_unlock(&p->mu);
}

void pipeline_stop(struct hib_pipeline *p)
{
	pthread_mutex_lock(&p->mu);
	p->stopping = 1;
	wake_all(p);
	pthread_mutex_unlock(&p->mu);
	for (unsigned i = 0; i < p->started; i++)
		pthread_join(p->tids[i], NULL);
	p->started = 0;
}

void pipeline_free(struct hib_pipeline *p)
{
	if (!p)
		return;
	pipeline_stop(p);
	if (p->in_map)
		munmap(p->in_map, p->in_map_bytes);
	if (p->out_map)
		munmap(p->out_map, p->out_map_bytes);
	free(p->jobs);
	free(p->tids);
	free(p->args);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->work_cv);
	pthread_cond_destroy(&p->done_cv);
	pthread_cond_destroy(&p->free_cv);
	free(p);
}

size_t pipeline_memory(const struct hib_pipeline *p)
{
	return p->memory;
}

unsigned pipeline_workers(const struct hib_pipeline *p)
{
	return p->workers;
}

unsigned pipeline_slots(const struct hib_pipeline *p)
{
	return p->slots;
}

uint64_t pipeline_work_ns(const struct hib_pipeline *p)
{
	uint64_t ns = p->inline_ns;

	for (unsigned i = 0; i < p->workers; i++)
		ns += p->args[i].work_ns;
	return ns;
}
