// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The resume's load: a reader thread takes the image's blocks (first those
 * the preload read while the secret was awaited, then off the disk, read
 * ahead) → the codec workers check and decode them → the calling thread
 * feeds /dev/snapshot in the stream's order and checks the whole stream's
 * checksum; the data key is wiped as soon as the last block is decoded.
 */
#include <pthread.h>
#include <stdlib.h>
#include <xxhash.h>

#include "pipeline/crypt.h"
#include "engine/preload.h"
#include "engine/resume-priv.h"
#include "storage/readahead.h"
#include "storage/swaps.h"

static int decode_work(struct hib_job *job, void *worker_ctx)
{
	const struct hib_block_hdr *h = job->in;
	int r = job->flags & ENGINE_JOB_SUM_CHECKED
			? codec_decode_checked(worker_ctx, job->in, job->out)
			: codec_decode(worker_ctx, job->in, job->out);

	if (r < 0)
		return r;
	job->out_len = h->raw_bytes;
	return 0;
}

/* Read-ahead in chunks of 1 MiB, 8 in flight: the device sees large
 * sequential reads while the workers decode.  In the background, up to
 * RESUME_RA_WINDOW_MAX ahead as the memory allows (ra_window): the kernel
 * takes its pages for the whole image at the first data page, which holds the
 * feeder 1-2 s under TCG, and the disk keeps reading meanwhile.  Only from
 * that page on: before it, the read-ahead stays RESUME_RA_DEPTH ahead.  A
 * fast disk filled the whole window before the kernel took its pages, and the
 * load took 0.6 s longer unthrottled (text, 6.12, TCG): its frames were
 * probably where the kernel would have put the image's own pages, which then
 * go to other pages first. */
#define RESUME_RA_CHUNK_PAGES 256u
#define RESUME_RA_DEPTH 8u
#define RESUME_RA_WINDOW_MAX (256ull << 20)

/* Spare slots in the ring, from the same room as the window, at most half of
 * it: while the kernel holds the feeder at the first data page, the workers
 * go on decoding into them on the other CPUs, where the ring of engine_pipe_new
 * alone stops them after a few MiB.  The reader is held out of them until
 * that page, as the read-ahead is out of its window. */
#define RESUME_SPARE_MAX (256ull << 20)

/* Fail the block the reader is at: the feeder reports it, in order. */
static void reader_fail(struct resume_ctx *rc, struct hib_job *job, int r)
{
	job->err = r;
	pipeline_submit(rc->ep.pipe, job);
}

/* The read-ahead over the image's pages from logical page @lp. */
static int reader_readahead(struct resume_ctx *rc, uint64_t lp, struct hib_readahead **ret)
{
	int r = hib_readahead_new(rc->t, RESUME_RA_CHUNK_PAGES, RESUME_RA_DEPTH, rc->io_mode, ret);

	if (r == 0)
		r = hib_readahead_start(*ret, &rc->img.map, lp, rc->img.map.pages - lp);
	return r;
}

static void reader_run(struct resume_ctx *rc);

/* The reader's thread: reader_run, its CPU time kept for the load's log line. */
static void *reader_main(void *arg)
{
	struct resume_ctx *rc = arg;
	uint64_t t0 = hib_thread_cpu_ns();

	reader_run(rc);
	rc->read_cpu_ns = hib_thread_cpu_ns() - t0; /* read after the join */
	return NULL;
}

/* Blocks @pos on, read off @ra, to the pipeline in order; a failure is the
 * block's, for the feeder to report. */
static void reader_blocks(struct resume_ctx *rc, struct hib_readahead *ra,
			  const struct engine_read_pos *pos)
{
	const struct hib_header *hdr = rc->img.hdr;
	struct hib_pipeline *p = rc->ep.pipe;
	uint64_t lp = pos->lp, stream_off = pos->stream_off;

	for (uint32_t i = pos->block; i < hdr->nr_blocks; i++) {
		uint64_t t = hib_now_ns();
		struct hib_job *job = pipeline_next_free(p);
		uint64_t at = lp;
		int r;

		rc->read_slot_ns += hib_now_ns() - t;
		if (!job)
			return;
		t = hib_now_ns();
		r = engine_read_block(ra, rc->img.map.pages, hdr->block_raw_bytes, i, stream_off,
				      &lp, job->in);
		rc->read_block_ns += hib_now_ns() - t;
		if (r < 0) {
			if (r == -EBADMSG)
				log_err(r, "%s: block %u: header corrupt (logical page %llu)",
					hib_target_path(rc->t), i, (unsigned long long)at);
			else
				log_err(r, "%s: block %u: read failed: %m", hib_target_path(rc->t),
					i);
			reader_fail(rc, job, r);
			return;
		}
		job->in_len = (lp - at) * HIB_PAGE_SIZE;
		job->user = stream_off;
		stream_off += ((struct hib_block_hdr *)job->in)->raw_bytes;
		pipeline_submit(p, job);
	}
}

static void reader_run(struct resume_ctx *rc)
{
	_cleanup_(hib_readahead_freep) struct hib_readahead *ra = NULL;
	struct engine_read_pos pos;
	int r;

	/* First what was read while the secret was awaited, then the disk. */
	if (engine_preload_drain(rc->pre, rc->ep.pipe, &pos, &ra) < 0)
		return;
	if (pos.block == rc->img.hdr->nr_blocks)
		return;
	r = ra ? 0 : reader_readahead(rc, pos.lp, &ra);
	if (r < 0) {
		struct hib_job *job = pipeline_next_free(rc->ep.pipe);

		log_err(r, "%s: setting up the reads failed: %m", hib_target_path(rc->t));
		if (job)
			reader_fail(rc, job, r);
		return;
	}
	if (hib_readahead_background(ra, rc->ra_window, RESUME_RA_DEPTH) < 0)
		log_debug("no thread for the read-ahead: reading as the blocks are asked for");
	pthread_mutex_lock(&rc->ra_mu);
	rc->ra = ra;
	pthread_mutex_unlock(&rc->ra_mu);
	log_debug("reading with %s, up to %llu KiB ahead; a ring of %u slots",
		  hib_readahead_is_uring(ra) ? "io_uring" : "pread",
		  (unsigned long long)(hib_readahead_buffer_bytes(ra) >> 10),
		  pipeline_slots(rc->ep.pipe));
	reader_blocks(rc, ra, &pos);
	rc->ra_peak_bytes = hib_readahead_peak_bytes(ra);
	pthread_mutex_lock(&rc->ra_mu);
	rc->ra = NULL;
	pthread_mutex_unlock(&rc->ra_mu);
}

/* The kernel's data pages begin: it takes its pages for the whole image now,
 * and the read-ahead may take the rest of its window meanwhile, the workers
 * the ring's spare slots. */
static void widen(struct resume_ctx *rc)
{
	pipeline_limit(rc->ep.pipe, 0);
	pthread_mutex_lock(&rc->ra_mu);
	if (rc->ra)
		hib_readahead_widen(rc->ra);
	pthread_mutex_unlock(&rc->ra_mu);
}

/* Where the kernel's data pages begin in the stream, or a little before:
 * after its header page and a page of PFNs for every 512 data pages.  Since
 * 6.5 the zero pages the stream leaves out have PFNs too, which puts the
 * start a little later: the window then opens a few metadata blocks early. */
static uint64_t data_start(const struct hib_header *h)
{
	uint64_t pages = h->stream_bytes / HIB_PAGE_SIZE;

	return pages ? (1 + DIV_ROUND_UP(pages - 1, 513)) * HIB_PAGE_SIZE : 0;
}

/*
 * One decoded block of @len bytes, at stream byte @fed, to the snapshot
 * device in batches, in the stream's order (the kernel takes the header,
 * then the PFN pages, then the data pages in the order they name). A short
 * batch is not the end: the next call at the page it stopped at says 0 or
 * the error the kernel's loop dropped.
 */
static int feed_block(struct hib_snapshot *snap, const uint8_t *buf, size_t len, uint64_t fed,
		      uint64_t stream_bytes)
{
	for (size_t k = 0; k < len;) {
		size_t want = MIN((len - k) / HIB_PAGE_SIZE, (size_t)HIB_SNAP_BATCH_PAGES);
		ssize_t n = snap->ops->write_pages(snap, buf + k, want);

		if (n < 0)
			return log_err((int)n, "the kernel refused image page %llu: %m",
				       (unsigned long long)((fed + k) / HIB_PAGE_SIZE));
		if (n == 0)
			return log_err(-EIO,
				       "the kernel took the whole image at page %llu of %llu: "
				       "the image does not fit this kernel",
				       (unsigned long long)((fed + k) / HIB_PAGE_SIZE),
				       (unsigned long long)(stream_bytes / HIB_PAGE_SIZE));
		k += (size_t)n;
	}
	return 0;
}

/* Feed the decoded stream to the snapshot device, in order. */
static int feed_snapshot(struct resume_ctx *rc, struct hib_snapshot *snap,
			 const struct hib_options *o)
{
	const struct hib_header *hdr = rc->img.hdr;
	struct hib_pipeline *p = rc->ep.pipe;
	XXH3_state_t st;
	uint64_t fed = 0, last = 0, widen_at = data_start(hdr);
	bool widened = false;
	int r = 0;

	hib_xxh3_reset(&st, hdr->image_id);
	for (uint32_t i = 0; i < hdr->nr_blocks; i++) {
		uint64_t t_wait = hib_now_ns();
		struct hib_job *job = pipeline_next_done(p);
		const uint8_t *buf;

		rc->wait_ns += hib_now_ns() - t_wait;

		if (!job)
			return -ECANCELED;
		if (job->err) {
			r = job->err;
			if (r == -EBADMSG)
				log_err(r, "%s: block %u (stream bytes %llu..) failed its checksum",
					hib_target_path(rc->t), i, (unsigned long long)job->user);
			else if (r == HIB_ERR_AUTH)
				log_err(r,
					"%s: block %u (stream bytes %llu..) failed authentication: "
					"tampered with, or not sealed with this image's key",
					hib_target_path(rc->t), i, (unsigned long long)job->user);
			return r;
		}
		if (job->user != fed || fed + job->out_len > hdr->stream_bytes) {
			log_err(-EBADMSG, "%s: block %u does not continue the stream",
				hib_target_path(rc->t), i);
			return -EBADMSG;
		}
		buf = job->out;
		XXH3_64bits_update(&st, &((const struct hib_block_hdr *)job->in)->raw_xxh3,
				   sizeof(uint64_t));
		if (!widened && fed + job->out_len > widen_at) {
			widen(rc);
			widened = true;
		}
		uint64_t t_write = hib_now_ns();
		r = feed_block(snap, buf, job->out_len, fed, hdr->stream_bytes);
		uint64_t took = hib_now_ns() - t_write;
		rc->snap_ns += took;
		if (took > rc->snap_max_ns) {
			rc->snap_max_ns = took;
			rc->snap_max_at = fed;
		}
		if (i == 0)
			rc->first_ns = hib_now_ns() - rc->first_ns;
		if (r < 0)
			return r;
		fed += job->out_len;
		pipeline_release(p, job);
		if (o && o->progress && (hib_now_ms() - last > 200 || fed == hdr->stream_bytes)) {
			last = hib_now_ms();
			o->progress("load", fed, hdr->stream_bytes, o->progress_userdata);
		}
	}
	if (fed != hdr->stream_bytes)
		return log_err(-EBADMSG, "%s: the blocks hold %llu bytes, the header says %llu",
			       hib_target_path(rc->t), (unsigned long long)fed,
			       (unsigned long long)hdr->stream_bytes);
	if (!(hdr->flags & HIB_HFLAG_ENCRYPTED) && XXH3_64bits_digest(&st) != hdr->stream_xxh3)
		return log_err(-EBADMSG, "%s: the checksum of the whole image does not match",
			       hib_target_path(rc->t));
	return 0;
}

/* One more write: the kernel finishes its last page (and, since 6.5, the
 * zero pages left out of the stream) and must say it has the whole image. */
static int feed_end(struct hib_snapshot *snap)
{
	_cleanup_(freep) uint8_t *zero = hib_alloc_pages(HIB_PAGE_SIZE);
	ssize_t n;
	int r;

	if (!zero)
		return -ENOMEM;
	n = snap->ops->write_pages(snap, zero, 1);
	if (n == 0)
		return 0;
	r = n < 0 ? (int)n : -EBADMSG;
	return log_err(r, "the kernel expected more of the image than it holds: %m");
}

/*
 * The data key is done with once the last block is decoded: wipe it now, not
 * when hib_resume returns, which after a restore it never does. The memory of
 * this process belongs to the boot kernel; ATOMIC_RESTORE copies the image's
 * pages over the page frames they came from and leaves every other frame as
 * it is, and the restored kernel counts those as free without clearing them.
 * The key would stay in RAM the running system does not know it has, for any
 * later kernel memory leak, cold-boot or DMA attack to find -- and the key
 * opens the image's blocks, which invalidation leaves on the swap area until
 * they are overwritten. (The secret that unwraps it: forget_secret, unlock.c.)
 */
static void forget_key(struct resume_ctx *rc)
{
	for (unsigned i = 0; rc->key && i < (rc->ep.workers ? rc->ep.workers : 1); i++)
		codec_ctx_set_key(rc->ep.ctx[i], NULL);
	crypt_key_free(rc->key);
	rc->key = NULL;
}

/* What MemAvailable holds above the load's floor (the preload's rule: the
 * kernel's pages for the stream first), for the ring's spare slots and the
 * read-ahead's window. */
static uint64_t load_room(const struct hib_options *o, const struct hib_header *h)
{
	const char *meminfo = hib_swap_env_get()->meminfo;
	uint64_t total = hib_meminfo_kib(meminfo, "MemTotal") << 10;
	uint64_t avail = hib_meminfo_kib(meminfo, "MemAvailable") << 10;
	uint64_t floor = engine_load_floor(o, h, total);

	return avail > floor ? avail - floor : 0;
}

int resume_load_stream(struct resume_ctx *rc, struct hib_snapshot *snap,
		       const struct hib_options *o)
{
	const struct hib_header *h = rc->img.hdr;
	uint64_t t0, room, spare;
	pthread_t reader;
	int r;

	room = load_room(o, h);
	spare = MIN(room / 2, RESUME_SPARE_MAX);
	r = engine_pipe_new(o, h->block_raw_bytes, h->image_id, decode_work,
			    codec_record_bound(h->block_raw_bytes), h->block_raw_bytes, spare,
			    &rc->ep);
	if (r < 0)
		return log_err(r, "allocating the pipeline's buffers failed: %m");
	for (unsigned i = 0; rc->key && i < (rc->ep.workers ? rc->ep.workers : 1); i++)
		codec_ctx_set_key(rc->ep.ctx[i], rc->key);
	r = pipeline_start(rc->ep.pipe);
	if (r < 0)
		return r;
	/* 0%: the checks passed and the load begins (the caller's history tells a
	 * refused image from a failed load by it), and the bar shows at once. */
	if (o->progress)
		o->progress("load", 0, h->stream_bytes, o->progress_userdata);
	rc->ra_window = (unsigned)(MIN(room - spare, RESUME_RA_WINDOW_MAX) /
				   (RESUME_RA_CHUNK_PAGES * HIB_PAGE_SIZE));
	rc->first_ns = hib_now_ns();
	pthread_mutex_init(&rc->ra_mu, NULL);
	r = -pthread_create(&reader, NULL, reader_main, rc);
	if (r < 0) {
		pthread_mutex_destroy(&rc->ra_mu);
		pipeline_stop(rc->ep.pipe);
		return r;
	}
	t0 = hib_thread_cpu_ns();
	r = feed_snapshot(rc, snap, o);
	rc->feed_cpu_ns = hib_thread_cpu_ns() - t0;
	pipeline_abort(rc->ep.pipe);
	pthread_join(reader, NULL);
	pthread_mutex_destroy(&rc->ra_mu);
	pipeline_stop(rc->ep.pipe);
	forget_key(rc);
	return r < 0 ? r : feed_end(snap);
}
