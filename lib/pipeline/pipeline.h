/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An ordered ring of jobs worked on by N threads.
 *
 * Threads and who touches what:
 *   - one producer fills job->in and job->in_len (or sets job->err, which then
 *     skips the work and reaches the consumer in order), then pipeline_submit();
 *   - workers run work(job, worker_ctx) on submitted jobs, any order, and
 *     fill job->out / job->out_len / job->err;
 *   - one consumer takes jobs back strictly in submission order with
 *     pipeline_next_done(), and gives each back with pipeline_release() —
 *     at once, or later and in any order (e.g. when its write completes);
 *     a slot is reused only when every older job was released too.
 * Producer and consumer may be the same thread or two. Every buffer and the
 * workers' state are allocated by pipeline_new(), before the freeze; running
 * it allocates nothing. The slots' buffers are mapped there and the kernel
 * gives them pages as they are first written: the hibernation's mlockall
 * fills them before the freeze, and a resume's ring of many slots takes
 * memory only as far as it goes (pipeline_limit). The one exception is pthread_create() in
 * pipeline_start(): glibc maps the thread's stack (small, WORKER_STACK) and
 * callocs its TLS vector, which no pthreads program avoids, and the threads
 * cannot be made earlier: SNAPSHOT_FREEZE freezes every task but the caller,
 * our own other threads included.
 * The workers run WORKER_NICE below the producer and the consumer: where
 * the threads outnumber the CPUs (the reader, the writer and 2 workers on 2
 * vCPUs), the threads that move the ring get the CPU when they can run, and
 * the workers take what they leave; while the others wait, the workers lose
 * nothing.  Measured (make bench's text cell on 6.1, TCG, 2 vCPUs, medians
 * of 3 interleaved with the same binary without it): hibernate 12.6 s
 * against 15.5 s unthrottled, 14.2 against 17.0 at 150 MB/s; the writer,
 * starved before (on a CPU 4 s of a 9 s write), no longer holds the ring.
 * With zero workers, work runs inline inside pipeline_submit().
 * pipeline_abort() wakes everyone: blocked calls then return NULL.
 */
#ifndef HIB_PIPELINE_H
#define HIB_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hib_job {
	uint64_t seq; /* submission order, from 0 */
	/* The slot's in_bytes from pipeline_next_free; a producer may point it at
	 * memory of its own that outlives the job (the resume's read-ahead). */
	void *in;
	size_t in_len;
	void *out;
	size_t out_len;
	uint64_t user;      /* free for the producer (e.g. stream offset) */
	uint32_t flags;     /* free for the producer; 0 from pipeline_next_free */
	uint64_t submit_ns; /* when pipeline_submit took it (hib_now_ns) */
	int err;
	int state;    /* private */
	void *own_in; /* private: the slot's own input buffer */
};

typedef int (*hib_work_fn)(struct hib_job *job, void *worker_ctx);

struct hib_pipeline;

int pipeline_new(unsigned slots, unsigned workers, size_t in_bytes, size_t out_bytes,
		 hib_work_fn work, void **worker_ctx, struct hib_pipeline **ret);
/* Start the worker threads (after the freeze and snapshot). */
int pipeline_start(struct hib_pipeline *p);
/* Producer: the next free job in order; NULL when aborted. */
struct hib_job *pipeline_next_free(struct hib_pipeline *p);
/* Producer: would pipeline_next_free() return at once? */
bool pipeline_free_ready(struct hib_pipeline *p);
void pipeline_submit(struct hib_pipeline *p, struct hib_job *job);
/* Consumer: the next finished job in order; NULL when aborted. */
struct hib_job *pipeline_next_done(struct hib_pipeline *p);
/* Consumer: would pipeline_next_done() return at once? */
bool pipeline_done_ready(struct hib_pipeline *p);
void pipeline_release(struct hib_pipeline *p, struct hib_job *job);
/* The producer holds at most @ahead slots past the ring's tail (at least 2;
 * 0 or more than the slots: all of them, as from pipeline_new).  Any thread,
 * any time: a waiting producer goes on at once when it widens. */
void pipeline_limit(struct hib_pipeline *p, unsigned ahead);
void pipeline_abort(struct hib_pipeline *p);
/* Join the workers; the pipeline can be freed after. */
void pipeline_stop(struct hib_pipeline *p);
void pipeline_free(struct hib_pipeline *p);
size_t pipeline_memory(const struct hib_pipeline *p);
unsigned pipeline_workers(const struct hib_pipeline *p);
unsigned pipeline_slots(const struct hib_pipeline *p);
/* The CPU time (ns) work() took, summed over the workers (or the producer,
 * when it ran inline): each worker stores its own sum as it ends, so read it
 * after pipeline_stop(); a running worker's share is not in it yet. */
uint64_t pipeline_work_ns(const struct hib_pipeline *p);

#endif
