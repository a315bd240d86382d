// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The write phase's stream, snapshot to disk: this thread reads the kernel's
 * copy into the pipeline, the codec workers encode it block by block
 * (suspend_encode_work), and the writer thread gives each block, in order,
 * the target's next pages and queues its writes. Its state and queue are made
 * in prepare (suspend_writer_new); only the threads start while frozen.
 */
#include <stdlib.h>

#include "engine/suspend-priv.h"
#include "format/xxh.h"
#include "storage/ioq.h"

/* Tell adaptive compression what the block's steps cost. */
static void adapt_measured(struct suspend_ctx *sc, struct hib_codec_ctx *c,
			   const struct hib_job *job, bool compressed)
{
	const struct hib_block_hdr *h = job->out;
	struct hib_codec_times t = codec_ctx_last_times(c);

	/* Zero blocks cost the codec nothing and would flatter its rate. */
	if (compressed && h->codec != HIB_BLOCK_ZERO)
		adapt_codec_done(&sc->adapt, job->in_len, h->stored_bytes, t.compress_ns);
	if (t.sealed_bytes)
		adapt_seal_done(&sc->adapt, t.sealed_bytes, t.seal_ns);
}

int suspend_encode_work(struct hib_job *job, void *worker_ctx)
{
	struct hib_block_hdr *h = job->out;
	struct suspend_ctx *sc = codec_ctx_userdata(worker_ctx);
	bool adaptive = sc && sc->adaptive;
	bool compress;
	int r;

	if (job->in_len == 0) { /* end of stream */
		job->out_len = 0;
		return 0;
	}
	compress = !adaptive || adapt_compress(&sc->adapt, job->seq);
	/* Stored raw when adaptive compression says the disk waits for the codec. */
	codec_ctx_set_raw(worker_ctx, !compress);
	r = codec_encode(worker_ctx, job->in, (uint32_t)job->in_len, (uint32_t)job->seq, job->user,
			 job->out);
	if (r < 0)
		return r;
	if (adaptive)
		adapt_measured(sc, worker_ctx, job, compress);
	codec_seal(worker_ctx, job->out);
	job->out_len = hib_block_pages(h->stored_bytes) * HIB_PAGE_SIZE;
	return 0;
}

static void report(struct suspend_ctx *sc, bool force)
{
	uint64_t now = hib_now_ms();

	if (!sc->o->progress)
		return;
	if (!force && now - sc->last_progress_ms < 200)
		return;
	sc->last_progress_ms = now;
	sc->o->progress("write", sc->written_stream, sc->stream_bytes, sc->o->progress_userdata);
}

/*
 * The writer: takes encoded blocks in order, gives each the next pages of the
 * target (allocation and the extent map stay strictly sequential), and queues
 * their writes; a block's slot goes back to the pipeline when its last write
 * has completed. Up to HIB_WRITE_DEPTH blocks are in flight.
 */
#define HIB_WRITE_DEPTH 8

struct inflight {
	struct hib_job *job;
	unsigned pending; /* writes of this block not yet complete */
};

struct writer {
	struct suspend_ctx *sc;
	struct inflight q[HIB_WRITE_DEPTH * 4];
	unsigned head, count; /* FIFO of blocks in flight, oldest at head */
	int err;
	uint64_t busy_since_ns; /* blocks in flight since then (0: none) */
	uint64_t busy_bytes;    /* bytes completed since then */
	/* Adaptive compression's window: blocks queued in it, when it began
	 * (0: not yet), and the writer's waits then. */
	unsigned win_blocks;
	uint64_t win_start_ns, win_idle_ns, win_disk_ns;
};

/* The disk's rate for adaptive compression: bytes over the time blocks were
 * in flight, told when the queue empties and every 32 MiB while it does not. */
static void disk_rate(struct writer *w, uint64_t bytes)
{
	uint64_t now;

	if (!w->sc->adaptive || !w->busy_since_ns)
		return;
	w->busy_bytes += bytes;
	if (w->count > 0 && w->busy_bytes < (32u << 20))
		return;
	now = hib_now_ns();
	adapt_disk_done(&w->sc->adapt, w->busy_bytes, now - w->busy_since_ns);
	w->busy_bytes = 0;
	w->busy_since_ns = w->count > 0 ? now : 0;
}

/* Every ADAPT_WINDOW blocks, or ADAPT_WINDOW_NS if that comes first, tell
 * adaptive compression who waited: the disk for the codec (the writer waited
 * for an encoded block with no write in flight, the block submitted to the
 * codec), or the writer for the disk.  Not counted: a wait while writes are
 * in flight (the disk was busy: storing raw would only queue more behind
 * it), nor one for the reader (raw blocks would come no sooner).  Slow
 * blocks end windows by the time (zstd -19 under TCG makes 0.1 MiB/s: 16
 * blocks would be 40 s, and the floor 5 windows away).
 * The first window holds the pipeline's start, and is not told. */
static void adapt_window_end(struct writer *w)
{
	struct suspend_ctx *sc = w->sc;
	uint64_t now;

	if (!sc->adaptive)
		return;
	now = hib_now_ns();
	if (++w->win_blocks < ADAPT_WINDOW && now - w->win_start_ns < ADAPT_WINDOW_NS)
		return;
	if (w->win_start_ns)
		adapt_window(&sc->adapt, now - w->win_start_ns, sc->wait_idle_ns - w->win_idle_ns,
			     sc->wait_disk_ns - w->win_disk_ns);
	w->win_blocks = 0;
	w->win_start_ns = now;
	w->win_idle_ns = sc->wait_idle_ns;
	w->win_disk_ns = sc->wait_disk_ns;
}

static void write_done(uint64_t tag, int res, void *ud)
{
	struct writer *w = ud;
	struct inflight *f = &w->q[tag % ARRAY_SIZE(w->q)];

	if (res < 0 && !w->err) {
		w->err = res;
		log_err(res, "%s: writing block %llu failed: %m", hib_target_path(w->sc->t),
			(unsigned long long)f->job->seq);
	}
	f->pending--;
}

/* The writer's state and its queue to the target, before the freeze. */
int suspend_writer_new(struct suspend_ctx *sc)
{
	int r;

	sc->writer = calloc(1, sizeof(*sc->writer));
	if (!sc->writer)
		return -ENOMEM;
	sc->writer->sc = sc;
	/* Blocks may span several extents: room for a few writes each. */
	r = hib_ioq_new(hib_target_fd(sc->t), HIB_WRITE_DEPTH * 4, sc->o->io_mode, write_done,
			sc->writer, &sc->ioq);
	if (r < 0)
		return log_err(r, "setting up the writer failed: %m");
	return 0;
}

/* Give back, in order, the blocks whose writes are all done. */
static void retire(struct writer *w, bool all)
{
	struct suspend_ctx *sc = w->sc;

	while (w->count) {
		struct inflight *f = &w->q[w->head];
		if (f->pending && !all)
			break;
		sc->written_stream = f->job->user + f->job->in_len;
		w->head = (w->head + 1) % ARRAY_SIZE(w->q);
		w->count--;
		disk_rate(w, f->job->out_len);
		pipeline_release(sc->ep.pipe, f->job);
	}
	report(sc, false);
}

/* The next @pages pages of the target for a block, into the extent map. */
static int alloc_block_pages(struct suspend_ctx *sc, uint64_t pages)
{
	for (uint64_t i = 0; i < pages; i++) {
		uint64_t off;
		int r = suspend_alloc_page(sc, &off);

		if (r == -ENOSPC)
			return log_err(r,
				       "%s: not enough space: %llu MiB written of a %llu MiB "
				       "stream, the area is full (%llu MiB)",
				       hib_target_name(sc->t),
				       (unsigned long long)(sc->map.pages * HIB_PAGE_SIZE >> 20),
				       (unsigned long long)(sc->stream_bytes >> 20),
				       (unsigned long long)(hib_target_size(sc->t) >> 20));
		if (r < 0)
			return log_err(r, "allocating a swap page failed: %m");
		r = extmap_add(&sc->map, off, 1);
		if (r < 0)
			return log_err(r,
				       "the extent map is full (%zu extents): the area "
				       "handed out more pages than it had free before "
				       "the freeze",
				       sc->map.cap);
	}
	return 0;
}

static int queue_block(struct writer *w, struct hib_job *job)
{
	struct suspend_ctx *sc = w->sc;
	uint64_t pages = job->out_len / HIB_PAGE_SIZE, lp = sc->map.pages, done = 0;
	unsigned slot = (w->head + w->count) % ARRAY_SIZE(w->q);
	struct inflight *f = &w->q[slot];
	int r;

	r = alloc_block_pages(sc, pages);
	if (r < 0)
		return r;
	r = extmap_index(&sc->map);
	if (r < 0)
		return r;
	f->job = job;
	f->pending = 1; /* held until every run is queued */
	if (w->count++ == 0 && sc->adaptive)
		w->busy_since_ns = hib_now_ns();
	/* Each write's tag is the block's FIFO slot. */
	while (done < pages) {
		uint64_t off, run;
		r = extmap_lookup(&sc->map, lp + done, &off, &run);
		if (r < 0)
			return r;
		run = MIN(run, pages - done);
		f->pending++;
		r = hib_ioq_write(sc->ioq, (const uint8_t *)job->out + done * HIB_PAGE_SIZE,
				  run * HIB_PAGE_SIZE, off, slot);
		if (r < 0) {
			f->pending--;
			return log_err(r, "%s: queueing a write failed: %m",
				       hib_target_path(sc->t));
		}
		done += run;
	}
	f->pending--;
	sc->stored_pages += pages;
	sc->nr_blocks++;
	XXH3_64bits_update(&sc->stream_st, &((const struct hib_block_hdr *)job->out)->raw_xxh3,
			   sizeof(uint64_t));
	return 0;
}

/* The writer waited from @since for @job, the disk idle from @idle (0: its
 * writes in flight all along).  The codec held the disk back only while both
 * the disk was idle and the block was the codec's: before its submit_ns it
 * was the reader's, still reading it out of /dev/snapshot. */
static void codec_waited(struct suspend_ctx *sc, const struct hib_job *job, uint64_t since,
			 uint64_t idle)
{
	uint64_t now = hib_now_ns();

	sc->wait_codec_ns += now - since;
	if (idle && job)
		sc->wait_idle_ns += now - MIN(now, MAX(idle, job->submit_ns));
}

static void writer_run(struct suspend_ctx *sc);

/* The writer's thread: writer_run, its CPU time kept for the write's log line. */
static void *writer_main(void *arg)
{
	struct suspend_ctx *sc = arg;
	uint64_t t0 = hib_thread_cpu_ns();

	writer_run(sc);
	sc->write_cpu_ns = hib_thread_cpu_ns() - t0; /* read after the join */
	return NULL;
}

static void writer_run(struct suspend_ctx *sc)
{
	struct writer *w = sc->writer;
	struct hib_pipeline *p = sc->ep.pipe;
	int r = 0, k;

	for (;;) {
		struct hib_job *job;

		/* Room for one more block in flight; completions first. */
		/* Blocks held for their writes keep their slots: leave the reader two,
		 * or it waits for a slot while we wait for its next block. */
		while (w->count >= MIN(HIB_WRITE_DEPTH, pipeline_slots(p) - 2) && !w->err) {
			uint64_t t = hib_now_ns();

			r = hib_ioq_reap(sc->ioq, true);
			sc->wait_disk_ns += hib_now_ns() - t;
			if (r < 0)
				goto out;
			retire(w, false);
		}
		if (w->err) {
			r = w->err;
			goto out;
		}
		/* Waiting for the codec with writes in flight: keep reaping, so
		 * the disk's busy time ends when its writes do (adaptive only:
		 * it is what measures the disk). */
		uint64_t t = hib_now_ns(), idle;

		while (sc->adaptive && w->count > 0 && !w->err && !pipeline_done_ready(p)) {
			sc->codec_polls++;
			r = hib_ioq_reap_timeout(sc->ioq, 200);
			if (r < 0)
				goto out;
			retire(w, false);
		}
		idle = w->count == 0 ? hib_now_ns() : 0;
		job = pipeline_next_done(p);
		codec_waited(sc, job, t, idle);
		if (!job)
			break; /* aborted by the reader */
		if (job->err) {
			r = job->err;
			log_err(r, "compressing block %llu failed: %m",
				(unsigned long long)job->seq);
			pipeline_release(p, job);
			break;
		}
		if (job->out_len == 0) {
			pipeline_release(p, job);
			break;
		}
		r = queue_block(w, job);
		if (r < 0)
			goto out;
		adapt_window_end(w);
		r = hib_ioq_reap(sc->ioq, false);
		if (r < 0)
			goto out;
		retire(w, false);
	}
out:
	sc->drain_ns = hib_now_ns();
	k = hib_ioq_drain(sc->ioq);
	sc->drain_ns = hib_now_ns() - sc->drain_ns;
	if (r == 0)
		r = k < 0 ? k : w->err;
	retire(w, true);
	if (r < 0) {
		sc->writer_err = r;
		pipeline_abort(p);
	}
}

/* The ring full: take the writer's pages from the target meanwhile, a
 * batch at a time, until a slot is free or the pool full (or dry). */
#define POOL_BATCH 64u
static void take_pages_ahead(struct suspend_ctx *sc)
{
	struct hib_pipeline *p = sc->ep.pipe;
	uint64_t taken;

	do {
		taken = sc->pool.taken;
		if (pipeline_free_ready(p))
			return;
		pthread_mutex_lock(&sc->snap_mu);
		suspend_pool_fill(sc, POOL_BATCH);
		pthread_mutex_unlock(&sc->snap_mu);
	} while (sc->pool.taken > taken);
}

/* Read the whole stream into the pipeline. */
static int produce_stream(struct suspend_ctx *sc)
{
	struct hib_pipeline *p = sc->ep.pipe;
	uint64_t off = 0;
	bool end = false;

	while (!end) {
		take_pages_ahead(sc);
		uint64_t t = hib_now_ns();
		struct hib_job *job = pipeline_next_free(p);
		uint8_t *buf;

		sc->wait_slot_ns += hib_now_ns() - t;
		if (!job)
			return sc->writer_err ? sc->writer_err : -ECANCELED;
		if (sc->o->cancel && sc->o->cancel(sc->o->cancel_userdata)) {
			log_warn("cancelled while writing the image, at %llu of %llu MiB",
				 (unsigned long long)(off >> 20),
				 (unsigned long long)(sc->stream_bytes >> 20));
			return -ECANCELED;
		}
		buf = job->in;
		job->in_len = 0;
		pthread_mutex_lock(&sc->snap_mu);
		uint64_t t_read = hib_now_ns();
		/* A block in batches: a short one is not the end, the next call says. */
		while (job->in_len < sc->ep.block_bytes) {
			size_t want = MIN((sc->ep.block_bytes - job->in_len) / HIB_PAGE_SIZE,
					  (size_t)HIB_SNAP_BATCH_PAGES);
			ssize_t n = sc->snap->ops->read_pages(sc->snap, buf + job->in_len, want);
			if (n < 0) {
				pthread_mutex_unlock(&sc->snap_mu);
				log_err((int)n, "reading the snapshot at byte %llu failed: %m",
					(unsigned long long)(off + job->in_len));
				return (int)n;
			}
			if (n == 0) {
				end = true;
				break;
			}
			job->in_len += (size_t)n;
		}
		sc->snap_ns += hib_now_ns() - t_read;
		pthread_mutex_unlock(&sc->snap_mu);
		job->user = off;
		off += job->in_len;
		pipeline_submit(p, job);
		if (end && job->in_len > 0) {
			/* Still owe the writer its end marker. */
			job = pipeline_next_free(p);
			if (!job)
				return sc->writer_err ? sc->writer_err : -ECANCELED;
			job->in_len = 0;
			pipeline_submit(p, job);
		}
	}
	if (off != sc->stream_bytes) {
		log_err(-EIO, "the snapshot gave %llu bytes, the kernel announced %llu",
			(unsigned long long)off, (unsigned long long)sc->stream_bytes);
		return -EIO;
	}
	return 0;
}

/* Raw blocks take more of the area than compressed ones. Adaptive
 * compression stores them only where the whole stream stored raw fits in the
 * area's free pages (engine_raw_area_pages): then any mix fits. Else every
 * block is compressed, as --no-adaptive would, and the image fits where a
 * fixed codec's does. */
static void adaptive_room(struct suspend_ctx *sc)
{
	uint64_t need = engine_raw_area_pages(DIV_ROUND_UP(sc->stream_bytes, HIB_PAGE_SIZE),
					      sc->ep.block_bytes / HIB_PAGE_SIZE);

	if (!sc->adaptive || need <= sc->area_pages)
		return;
	sc->adaptive = false;
	log_info("adaptive compression off: the area's %llu MiB free would not take the "
		 "%llu MiB stream stored raw; every block compressed",
		 (unsigned long long)(sc->area_pages * HIB_PAGE_SIZE >> 20),
		 (unsigned long long)(need * HIB_PAGE_SIZE >> 20));
}

/* Run the stream through the codec workers to the writer thread; the chain of
 * the blocks' checksums into *@ret_xxh3. -ECANCELED: the cancel callback said so. */
int suspend_write_stream(struct suspend_ctx *sc, uint64_t *ret_xxh3)
{
	pthread_t writer;
	pthread_attr_t attr;
	uint64_t t0;
	int r;

	hib_xxh3_reset(&sc->stream_st, sc->image_id);
	adaptive_room(sc);
	r = pipeline_start(sc->ep.pipe);
	if (r < 0)
		return log_err(r, "starting %u codec threads failed: %m", sc->ep.workers);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	r = -pthread_create(&writer, &attr, writer_main, sc);
	pthread_attr_destroy(&attr);
	if (r < 0) {
		pipeline_stop(sc->ep.pipe);
		return log_err(r, "starting the writer thread failed: %m");
	}
	t0 = hib_thread_cpu_ns();
	r = produce_stream(sc);
	sc->read_cpu_ns = hib_thread_cpu_ns() - t0;
	if (r < 0)
		pipeline_abort(sc->ep.pipe);
	pthread_join(writer, NULL);
	pipeline_stop(sc->ep.pipe);
	if (r == 0 && sc->writer_err)
		r = sc->writer_err;
	if (r < 0)
		return r;
	report(sc, true);
	*ret_xxh3 = XXH3_64bits_digest(&sc->stream_st);
	return 0;
}

void suspend_write_log(struct suspend_ctx *sc, uint64_t write_ms)
{
	/* How much of the write the kernel's copy-out took (a block's pages per
	 * readv()): the reader feeds everything else, so it is a floor for the phase. */
	log_info("image written: %llu MiB stream in %llu MiB on disk, %zu extents, %llu ms "
		 "(reading /dev/snapshot: %llu ms; codec: %llu ms of CPU over %u threads; "
		 "allocating %llu pages: %llu ms, %llu of them by the reader while it waited)",
		 (unsigned long long)(sc->stream_bytes >> 20),
		 (unsigned long long)((sc->stored_pages * HIB_PAGE_SIZE) >> 20), sc->map.n,
		 (unsigned long long)write_ms, (unsigned long long)(sc->snap_ns / 1000000),
		 (unsigned long long)(pipeline_work_ns(sc->ep.pipe) / 1000000),
		 MAX(sc->ep.workers, 1u), (unsigned long long)sc->alloc_pages,
		 (unsigned long long)(sc->alloc_ns / 1000000), (unsigned long long)sc->pool.taken);
	log_info(
		"write: the reader waited %llu ms for free slots; the writer waited %llu ms for "
		"encoded blocks (%llu ms of it the codec's with the disk idle; %llu polls of its "
		"writes), %llu ms for its writes with the queue full and %llu ms for the last "
		"ones; CPU: the reader %llu ms, the writer %llu ms; checksums by xxHash's %s build",
		(unsigned long long)(sc->wait_slot_ns / 1000000),
		(unsigned long long)(sc->wait_codec_ns / 1000000),
		(unsigned long long)(sc->wait_idle_ns / 1000000),
		(unsigned long long)sc->codec_polls,
		(unsigned long long)(sc->wait_disk_ns / 1000000),
		(unsigned long long)(sc->drain_ns / 1000000),
		(unsigned long long)(sc->read_cpu_ns / 1000000),
		(unsigned long long)(sc->write_cpu_ns / 1000000), hib_xxh3_impl());
	if (sc->adaptive) {
		struct hib_adapt_rates r = adapt_rates(&sc->adapt);

		log_info(
			"adaptive compression: %llu of %u blocks stored raw; codec %.0f MB/s "
			"saving %.0f%%, seal %.0f MB/s, disk %.0f MB/s: %.0f%% compressed at the end, "
			"%.0f%% at the lowest",
			(unsigned long long)atomic_load(&sc->adapt.raw_blocks), sc->nr_blocks,
			r.codec, 100 * r.saved, r.seal, r.disk, 100.0 * adapt_fraction(&sc->adapt),
			100.0 * adapt_lowest(&sc->adapt));
	}
}
