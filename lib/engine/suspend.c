// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Hibernate: the cycle, phase by phase (hib_suspend, at the end).
 *
 *   prepare      check the target, allocate everything, mlockall
 *   freeze       FREEZE
 *   snapshot     CREATE_IMAGE (resumed? take the report, and done)
 *   write        stream: reader (this thread) → codec workers → writer thread
 *                (allocates swap pages, writes blocks); map, header, [verify],
 *                sync
 *   seal         the signature, synced
 *   power down   (or return: written, --test, woken from RAM)
 *
 * Each phase records how far it got; one unwind undoes exactly that, newest
 * first: the signature put back, swap pages and the image freed, processes
 * thawed, memory unlocked, swap turned off again.
 *
 * From FREEZE to the thaw nothing is allocated (tests/unit/test-alloc.c
 * counts it), but what pthread_create takes for the codec and writer threads
 * (a stack, a TLS vector): they cannot start earlier, as FREEZE freezes every
 * task but the caller, this process's other threads too.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/swap.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <time.h>
#include <xxhash.h>

#include "engine/adapt.h"
#include "storage/dmstack.h"
#include "storage/ioq.h"
#include "pipeline/crypt.h"
#include "engine/engine.h"
#include "storage/swaps.h"

struct suspend_ctx {
	struct hib_target *t;
	struct hib_snapshot *snap;
	const struct hib_options *o;
	struct engine_pipe ep;
	struct hib_extmap map;
	uint64_t image_id;
	uint64_t stream_bytes;
	uint64_t stored_pages;
	uint32_t nr_blocks;
	int writer_err;
	uint64_t written_stream; /* progress, stream bytes already on disk */
	uint8_t *key;            /* the data key of an encrypted image */
	struct hib_ioq *ioq;     /* the writer's queue to the target */
	struct writer *writer;
	uint64_t last_progress_ms;
	/* Adaptive compression (adapt.h): workers ask it block by block; the
	 * writer tells it how fast the disk goes. */
	bool adaptive;
	struct hib_adapt adapt;
	/* Taken by the reader around a block's reads and by the writer around a
	 * block's page allocations: /dev/snapshot's ioctls only trylock the
	 * mutex its read() holds, so with a busy reader they fail with EBUSY
	 * again and again (seen under TCG: 100000 retries ran out). */
	pthread_mutex_t snap_mu;
	uint64_t hdr_off;   /* the header page, allocated before the snapshot */
	uint64_t *map_offs; /* write_map's: where each map page goes */
	struct hib_map_page *map_page;
	uint8_t *verify_rec; /* --verify's: a record read back, its block decoded, */
	uint8_t *verify_out;
	struct hib_readahead *verify_ra; /* and its reads, given the map's range later */
	struct engine_fs_buf fs;         /* engine_fs_record's, the kernel's device only */
	XXH3_state_t stream_st;          /* the blocks' raw_xxh3, in order (the writer) */
	uint64_t snap_ns;                /* the reader's time inside /dev/snapshot's read() */
};

static int alloc_page(struct suspend_ctx *sc, uint64_t *off)
{
	for (int tries = 0;; tries++) {
		int r = hib_target_alloc_page(sc->t, sc->snap, off);
		/* /dev/snapshot's ioctls only trylock the mutex our reader holds in read(). */
		if (r != -EBUSY || tries > 100000)
			return r;
		sched_yield();
	}
}

static int encode_work(struct hib_job *job, void *worker_ctx)
{
	struct hib_block_hdr *h = job->out;
	int r;

	struct suspend_ctx *sc = codec_ctx_userdata(worker_ctx);
	bool measure = sc && sc->adaptive;
	uint64_t t0 = 0;

	if (job->in_len == 0) { /* end of stream */
		job->out_len = 0;
		return 0;
	}
	if (measure && !adapt_compress(&sc->adapt, job->seq))
		measure = false; /* stored raw: the disk is faster than the codec */
	codec_ctx_set_raw(worker_ctx, sc && sc->adaptive && !measure);
	if (measure)
		t0 = hib_now_ns();
	r = codec_encode(worker_ctx, job->in, (uint32_t)job->in_len, (uint32_t)job->seq, job->user,
			 job->out);
	/* Zero blocks cost the codec nothing and would flatter its rate. */
	if (r == 0 && measure && h->codec != HIB_BLOCK_ZERO)
		adapt_codec_done(&sc->adapt, job->in_len, h->stored_bytes, hib_now_ns() - t0);
	if (r < 0)
		return r;
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
		int r = alloc_page(sc, &off);

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

	pthread_mutex_lock(&sc->snap_mu);
	r = alloc_block_pages(sc, pages);
	pthread_mutex_unlock(&sc->snap_mu);
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

static void *writer_main(void *arg)
{
	struct suspend_ctx *sc = arg;
	struct writer *w = sc->writer;
	struct hib_pipeline *p = sc->ep.pipe;
	int r = 0, k;

	for (;;) {
		struct hib_job *job;

		/* Room for one more block in flight; completions first. */
		/* Blocks held for their writes keep their slots: leave the reader two,
		 * or it waits for a slot while we wait for its next block. */
		while (w->count >= MIN(HIB_WRITE_DEPTH, pipeline_slots(p) - 2) && !w->err) {
			r = hib_ioq_reap(sc->ioq, true);
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
		while (sc->adaptive && w->count > 0 && !w->err && !pipeline_done_ready(p)) {
			r = hib_ioq_reap_timeout(sc->ioq, 200);
			if (r < 0)
				goto out;
			retire(w, false);
		}
		job = pipeline_next_done(p);
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
		r = hib_ioq_reap(sc->ioq, false);
		if (r < 0)
			goto out;
		retire(w, false);
	}
out:
	k = hib_ioq_drain(sc->ioq);
	if (r == 0)
		r = k < 0 ? k : w->err;
	retire(w, true);
	if (r < 0) {
		sc->writer_err = r;
		pipeline_abort(p);
	}
	return NULL;
}

/* Read the whole stream into the pipeline. */
static int produce_stream(struct suspend_ctx *sc)
{
	struct hib_pipeline *p = sc->ep.pipe;
	uint64_t off = 0;
	bool end = false;

	while (!end) {
		struct hib_job *job = pipeline_next_free(p);
		uint8_t *buf;

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
		while (job->in_len < sc->ep.block_bytes) {
			ssize_t n = sc->snap->ops->read_page(sc->snap, buf + job->in_len);
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

/*
 * --verify: read every block back from the disk and check it, as resume will,
 * before the signature makes the image count. Catches a disk or a mapping
 * that does not return what was written.
 */
/* Read-ahead for --verify: made before the freeze and held through the
 * snapshot, so kept small (4 MiB). */
#define VERIFY_RA_CHUNK_PAGES 256u
#define VERIFY_RA_DEPTH 4u

/*
 * What the cycle uses while frozen besides the pipeline and the extent map,
 * made before the freeze: --verify's buffers and a read-ahead over the map
 * (its range given once the image is written), and the stale-image record's
 * buffers (only where the device freezes a real system with filesystems).
 */
static int frozen_bufs_new(struct suspend_ctx *sc)
{
	int r;

	if (sc->o->verify) {
		sc->verify_rec = hib_alloc_pages(codec_record_bound(sc->ep.block_bytes));
		sc->verify_out = hib_alloc_pages(sc->ep.block_bytes);
		if (!sc->verify_rec || !sc->verify_out)
			return log_err(-ENOMEM, "verify: allocating the buffers failed: %m");
		r = hib_readahead_new(sc->t, VERIFY_RA_CHUNK_PAGES, VERIFY_RA_DEPTH, sc->o->io_mode,
				      &sc->verify_ra);
		if (r < 0)
			return log_err(r, "verify: setting up the reads failed: %m");
	}
	if (hib_snapshot_can(sc->snap, HIB_SNAP_CAP_FREEZES_SYSTEM)) {
		r = engine_fs_buf_new(&sc->fs);
		if (r < 0)
			return log_err(r, "allocating the mount table's buffer failed: %m");
	}
	return 0;
}

/* Those, and the extent map's (reserve_map). */
static void frozen_bufs_free(struct suspend_ctx *sc)
{
	hib_readahead_free(sc->verify_ra); /* before the map: reads of its pages may be in flight */
	free(sc->verify_rec);
	free(sc->verify_out);
	engine_fs_buf_free(&sc->fs);
	extmap_free(&sc->map);
	free(sc->map_offs);
	free(sc->map_page);
}

static int verify_image(struct suspend_ctx *sc, uint64_t stream_xxh3)
{
	struct hib_codec_ctx *c = sc->ep.ctx[0]; /* the workers have stopped */
	uint32_t block_bytes = sc->ep.block_bytes;
	uint8_t *rec = sc->verify_rec, *out = sc->verify_out;
	struct hib_readahead *ra = sc->verify_ra;
	XXH3_state_t st;
	uint64_t lp = 0, stream = 0, t0 = hib_now_ms();
	int r;

	hib_xxh3_reset(&st, sc->image_id);
	r = hib_readahead_start(ra, &sc->map, 0, sc->map.pages);
	if (r < 0)
		return log_err(r, "verify: setting up the reads failed: %m");
	for (uint32_t i = 0; i < sc->nr_blocks; i++) {
		struct hib_block_hdr *b = (struct hib_block_hdr *)rec;

		r = engine_read_block(ra, sc->map.pages, block_bytes, i, stream, &lp, rec);
		if (r < 0 && r != -EBADMSG)
			return log_err(r, "verify: reading block %u failed: %m", i);
		if (r == 0)
			r = codec_decode(c, rec, out);
		if (r < 0)
			return log_err(r, "verify: block %u does not read back as written", i);
		XXH3_64bits_update(&st, &b->raw_xxh3, sizeof(b->raw_xxh3));
		stream += b->raw_bytes;
	}
	if (stream != sc->stream_bytes || XXH3_64bits_digest(&st) != stream_xxh3)
		return log_err(-EBADMSG, "verify: the image read back differs from the snapshot");
	log_info("verify: %u blocks read back and checked in %llu ms", sc->nr_blocks,
		 (unsigned long long)(hib_now_ms() - t0));
	return 0;
}

/* Map pages, chained; each allocated from the swap area like the data. */
static int write_map(struct suspend_ctx *sc, uint64_t *ret_first, uint32_t *ret_pages)
{
	uint32_t n = extmap_pages_needed(&sc->map);
	uint64_t *offs = sc->map_offs; /* room for the map's reservation */
	struct hib_map_page *mp = sc->map_page;
	int r;

	for (uint32_t i = 0; i < n; i++) {
		r = alloc_page(sc, &offs[i]);
		if (r < 0)
			return log_err(r, "%s: no swap page left for the extent map: %m",
				       hib_target_path(sc->t));
	}
	r = image_write_map(sc->t, &sc->map, sc->image_id, offs, n, mp);
	if (r < 0)
		return r;
	*ret_first = offs[0];
	*ret_pages = n;
	return 0;
}

/* Run the stream through the codec workers to the writer thread; the chain of
 * the blocks' checksums into *@ret_xxh3. -ECANCELED: the cancel callback said so. */
static int write_stream(struct suspend_ctx *sc, uint64_t *ret_xxh3)
{
	pthread_t writer;
	pthread_attr_t attr;
	int r;

	hib_xxh3_reset(&sc->stream_st, sc->image_id);
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
	r = produce_stream(sc);
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

static int check_target(struct hib_target *t, struct hib_snapshot *snap, uint8_t *page,
			bool auto_swapon)
{
	const char *name = hib_target_name(t);
	enum hib_sig_state st;
	int r;

	if (!hib_target_writable(t))
		return -EBADF;
	r = hib_sig_read(t, page, &st);
	if (r < 0)
		return log_err(r, "%s: unable to read the swap header: %m", name);
	switch (st) {
	case HIB_SIG_SWAP:
		if (hib_target_kind(t) == HIB_TARGET_PLAINFILE)
			return log_err(-EMEDIUMTYPE, "%s: changed under us", name);
		break;
	case HIB_SIG_FILE:
		if (hib_target_kind(t) != HIB_TARGET_PLAINFILE)
			return log_err(-EMEDIUMTYPE,
				       "%s at page %llu holds an image file: name the file "
				       "itself with --device FILE, so its pages can be mapped",
				       hib_target_path(t),
				       (unsigned long long)hib_target_offset_pages(t));
		return 0;
	case HIB_SIG_IMAGE:
	case HIB_SIG_BROKEN:
		return log_err(-EEXIST,
			       "%s already holds a hibernation image; resume it, or discard it "
			       "with: hibernate invalidate --device %s",
			       name, name);
	default:
		/* Named by device and offset: the offset is the likelier mistake. */
		if (hib_target_offset_pages(t) && !hib_target_file(t))
			return log_err(-EMEDIUMTYPE,
				       "%s has no swap header at page %llu (%s); refusing to write "
				       "to it. Check --offset or resume_offset= ('hibernate offset "
				       "FILE' prints it for a swap file)",
				       name, (unsigned long long)hib_target_offset_pages(t),
				       hib_sig_state_name(st));
		return log_err(-EMEDIUMTYPE,
			       "%s is not a swap area (%s); refusing to write to it. Make it one "
			       "with mkswap, or name the right device with --device",
			       name, hib_sig_state_name(st));
	}
	if (hib_snapshot_can(snap, HIB_SNAP_CAP_FREEZES_SYSTEM) && hib_target_is_swap(t)) {
		r = hib_target_swap_active(t, NULL);
		if (r == 0 && auto_swapon) {
			/* Only a named file or device can be turned on; the kernel wants the
			 * swap area active to hand out its pages. */
			if (hib_target_offset_pages(t) && !hib_target_file(t))
				return log_err(-ENXIO,
					       "%s: a swap file named by device and offset cannot "
					       "be turned on: name the file with --device",
					       hib_target_path(t));
			r = hib_target_auto_swapon(t);
			if (r < 0)
				return log_err(r, "swapon %s failed: %m", name);
			log_info("%s: swap turned on for this cycle", name);
			r = 1;
		}
		if (r == 0)
			return log_err(-ENXIO,
				       "%s is not an active swap area; the kernel hands out image "
				       "pages only from active swap: swapon %s (or set "
				       "auto-swapon = yes in /etc/hibernate.conf)",
				       name, name);
	}
	return 0;
}

/* ---- the cycle --------------------------------------------------------- */

/* How far hibernate got: each phase done, in order. The unwind undoes them. */
enum suspend_phase {
	SUSPEND_NONE,     /* nothing done that the system must get back */
	SUSPEND_PREPARED, /* target checked, its pages and every buffer taken, memory locked */
	SUSPEND_FROZEN,   /* processes frozen */
	SUSPEND_SNAPSHOT, /* the kernel holds the atomic copy */
	SUSPEND_WRITTEN,  /* blocks, map and header on disk, flushed */
	SUSPEND_SEALED,   /* the signature write has begun: page 0 is ours to put back */
};

/* A hibernate cycle: the stream's context, and what its phases hold. */
struct cycle {
	struct suspend_ctx sc; /* shared with the codec and writer threads */
	enum suspend_phase phase;
	enum hib_suspend_outcome outcome; /* 0 until a phase decides how the cycle ends */
	struct hib_stats stats;
	struct hib_header *h; /* the header page (hib_alloc_pages) */
	uint8_t *orig_page;   /* page 0 as it was */
	uint32_t block_bytes;
	struct hib_zram_plan zram; /* zram areas; those prepare swapped off are marked */
	uint64_t t0;               /* FREEZE began (ms) */
	uint64_t tp;               /* where the last log_phase() ended */
};

/* The target checked, the kernel told its swap area, and the header page taken:
 * before the snapshot, so the restored system knows where the resume side
 * leaves its report (struct hib_report). */
static int prepare_target(struct cycle *c)
{
	struct suspend_ctx *sc = &c->sc;
	struct hib_target *t = sc->t;
	struct hib_error err;
	int r;

	/* Whatever its signature says: a thin LV or an unopened LUKS container is
	 * never ours to write. */
	r = hib_target_check_stack(t, NULL, &err);
	if (r < 0)
		return log_err(r, "%s", err.msg);
	r = check_target(t, sc->snap, c->orig_page, sc->o->auto_swapon);
	if (r < 0)
		return r;
	if (hib_target_is_swap(t)) {
		r = sc->snap->ops->set_swap_area(sc->snap, hib_target_devnum(t),
						 hib_target_offset_pages(t));
		if (r < 0)
			return log_err(r, "%s: the kernel refused it as the image's swap area: %m",
				       hib_target_name(t));
	}
	hib_target_alloc_reset(t, sc->snap);
	r = alloc_page(sc, &sc->hdr_off);
	if (r < 0)
		return log_err(r, "%s: no page for the image header: %m", hib_target_name(t));
	return 0;
}

/* Everything the cycle needs is allocated now: nothing may need swap once frozen. */
static int prepare_buffers(struct cycle *c)
{
	struct suspend_ctx *sc = &c->sc;
	const struct hib_options *o = sc->o;
	struct hib_target *t = sc->t;
	uint32_t block_bytes = c->block_bytes;
	int r;

	sc->image_id = hib_random_u64();
	r = engine_pipe_new(o, block_bytes, sc->image_id, encode_work, block_bytes,
			    codec_record_bound(block_bytes), &sc->ep);
	if (r < 0)
		return log_err(r, "allocating the pipeline's buffers failed: %m");
	sc->writer = calloc(1, sizeof(*sc->writer));
	if (!sc->writer)
		return -ENOMEM;
	sc->writer->sc = sc;
	/* Blocks may span several extents: room for a few writes each. */
	r = hib_ioq_new(hib_target_fd(t), HIB_WRITE_DEPTH * 4, sc->o->io_mode, write_done,
			sc->writer, &sc->ioq);
	if (r < 0)
		return log_err(r, "setting up the writer failed: %m");
	r = frozen_bufs_new(sc);
	if (r < 0)
		return r;
	/* Adaptive needs worker threads (inline, the codec is the reader) and
	 * asynchronous writes (a synchronous write hides the disk's rate). */
	sc->adaptive = !o->no_adaptive && o->codec != HIB_COMPRESS_NONE && sc->ep.workers > 0 &&
		       hib_ioq_is_uring(sc->ioq);
	adapt_init(&sc->adapt, sc->ep.workers);
	for (unsigned i = 0; i < (sc->ep.workers ? sc->ep.workers : 1); i++)
		codec_ctx_set_userdata(sc->ep.ctx[i], sc);
	log_debug("pipeline: %u worker threads, %zu KiB of buffers, writes through %s%s",
		  sc->ep.workers, pipeline_memory(sc->ep.pipe) >> 10,
		  hib_ioq_is_uring(sc->ioq) ? "io_uring" : "pwrite",
		  sc->adaptive ? ", adaptive compression" : "");
	return 0;
}

/* A passphrase's Argon2id cost: within what readers take, and not more memory
 * than the initramfs of this machine will have to derive the key at resume. */
static int kdf_cost_check(const struct hib_options *o)
{
	struct sysinfo si;
	uint64_t ops, mem, ram = 0;
	int r;

	if (!o->secret || o->secret->kind != HIB_SECRET_PASSPHRASE)
		return 0;
	/* Only a configured size: the default worked on every machine before. */
	if (o->kdf_memory && sysinfo(&si) == 0)
		ram = (uint64_t)si.totalram * si.mem_unit;
	r = crypt_kdf_cost(o->kdf_passes, o->kdf_memory, ram, &ops, &mem);
	if (r == -ERANGE)
		return log_err(r,
			       "Argon2id cost out of range: %u passes (%llu to %llu), %llu MiB "
			       "(%llu to %llu); fix kdf-passes and kdf-memory in hibernate.conf",
			       o->kdf_passes, HIB_ARGON_OPS_MIN, HIB_ARGON_OPS_MAX,
			       (unsigned long long)(o->kdf_memory >> 20), HIB_ARGON_MEM_MIN >> 20,
			       HIB_ARGON_MEM_MAX >> 20);
	if (r == -E2BIG)
		return log_err(r,
			       "kdf-memory %llu MiB is more than half of this machine's %llu MiB: "
			       "the initramfs could not derive the key at resume; lower kdf-memory "
			       "in hibernate.conf",
			       (unsigned long long)(o->kdf_memory >> 20),
			       (unsigned long long)(ram >> 20));
	return r;
}

/* The header as far as it is known before the snapshot, and the image's key. */
static int prepare_header(struct cycle *c)
{
	struct suspend_ctx *sc = &c->sc;
	const struct hib_options *o = sc->o;
	struct utsname u;
	int r;

	hib_header_init(c->h, sc->image_id, (uint64_t)time(NULL), (uint32_t)o->codec,
			o->codec_level, c->block_bytes, uname(&u) == 0 ? &u : NULL, c->orig_page);
	if (!o->secret && !o->tpm)
		return 0;
	r = kdf_cost_check(o);
	if (r < 0)
		return r;
	/* Argon2id wants its memory now, long before anything is frozen; and the
	 * TSS allocates and talks to the TPM: never between freeze and thaw. */
	r = o->tpm ? crypt_setup_tpm(o->tpm, c->h, &sc->key)
		   : crypt_setup(o->secret, o->kdf_passes, o->kdf_memory, c->h, &sc->key);
	if (r == -EOPNOTSUPP)
		return log_err(r,
			       "encrypt = tpm: this hibernate was built without TPM support (the "
			       "static build); use the package's dynamically linked binary, or "
			       "encrypt = yes");
	if (r == -ENODEV)
		return log_err(r,
			       "encrypt = tpm: no TPM 2.0 at /dev/tpmrm0 or /dev/tpm0 (enable it "
			       "in the firmware, or use encrypt = yes)");
	if (r < 0 && o->tpm)
		return log_err(r, "sealing the image's key to the TPM failed: %m (is tpm-pcrs = "
				  "a list of PCRs its SHA-256 bank has?)");
	if (r < 0)
		return log_err(r, "setting up the image's encryption failed: %m");
	for (unsigned i = 0; i < (sc->ep.workers ? sc->ep.workers : 1); i++)
		codec_ctx_set_key(sc->ep.ctx[i], sc->key);
	return 0;
}

/*
 * Room in the extent map for every extent the image can have, so the writer
 * never grows it while the image is held. An extent holds at least a page:
 * there are at most as many as the pages the image takes, which are at most
 * the area's free pages (counted last before the freeze), and at most what a
 * stream up to the user's limit, or up to RAM (the kernel's copy is in
 * memory; a PFN per page and a header page come with it), takes on disk: its
 * pages and one more per block (a record's header, and a sealed one's tag).
 * An extent costs 24 bytes (16 in the map, 8 in its index), so 6 MiB per GiB
 * the image can take, if no two of its pages touch. Called last before the
 * freeze, after mlockall, which brought our swapped-out pages back and freed
 * their slots.
 */
static int reserve_map(struct suspend_ctx *sc, uint32_t block_bytes)
{
	uint64_t pages, stream = UINT64_MAX;
	int r = hib_target_avail_pages(sc->t, sc->snap, &pages);

	if (r < 0)
		return log_err(r, "%s: the free space of the area is unknown: %m",
			       hib_target_name(sc->t));
	if (sc->o->image_size > 0)
		stream = (uint64_t)sc->o->image_size / HIB_PAGE_SIZE;
	if (hib_snapshot_can(sc->snap, HIB_SNAP_CAP_FREEZES_SYSTEM)) {
		struct sysinfo si;

		if (sysinfo(&si) == 0) {
			uint64_t ram = (uint64_t)si.totalram * si.mem_unit / HIB_PAGE_SIZE;

			stream = MIN(stream, hib_snapshot_stream_pages(ram));
		}
	}
	if (stream != UINT64_MAX)
		pages = MIN(pages, stream + DIV_ROUND_UP(stream, block_bytes / HIB_PAGE_SIZE));
	r = extmap_reserve(&sc->map, (size_t)MIN(pages, (uint64_t)SIZE_MAX));
	if (r == 0) {
		/* write_map's too: a map page's place for every HIB_MAP_ENTRIES extents. */
		sc->map_offs = calloc(extmap_pages_needed_for(sc->map.cap), sizeof(*sc->map_offs));
		sc->map_page = hib_alloc_pages(HIB_PAGE_SIZE);
		if (!sc->map_offs || !sc->map_page)
			r = -ENOMEM;
	}
	if (r < 0)
		return log_err(r, "allocating the extent map (%llu extents) failed: %m",
			       (unsigned long long)pages);
	log_debug("extent map: room for %zu extents, %zu KiB", sc->map.cap,
		  sc->map.cap * (sizeof(*sc->map.ext) + sizeof(*sc->map.start)) >> 10);
	return 0;
}

#define KIB_TO_MIB(k) ((unsigned long long)DIV_ROUND_UP((k), 1024))

/* What hib_zram_plan_fits refused, or swapoff found: the pages do not fit. */
static int zram_refuse(const struct cycle *c, const struct hib_swap_area *a)
{
	return log_err(-ENOMEM,
		       "%s holds %llu MiB of swapped-out pages, more than the memory available "
		       "and the other swap areas can take besides %llu MiB kept free (%llu MiB): "
		       "it cannot be swapped off for the cycle, and left on it keeps in RAM what "
		       "the kernel must move to %s. Close programs, or set zram = keep in "
		       "/etc/hibernate.conf to try with it on",
		       a->path, KIB_TO_MIB(a->used_kib), KIB_TO_MIB(HIB_ZRAM_MARGIN_KIB),
		       KIB_TO_MIB(c->zram.room_kib), hib_target_name(c->sc.t));
}

/*
 * zram swap out of the way, last before the freeze (the hooks have run, our
 * buffers are taken): swapped off, its pages come back into RAM, and the
 * kernel's preallocation then moves what must go to the target, not into
 * zram. A zram area cannot be lowered below the target while it is on (the
 * kernel changes a priority only through swapoff and swapon), so pages that
 * do not fit are a refusal, not a lesser way round.
 */
static int zram_move_out(struct cycle *c)
{
	const struct hib_swap_env *env = hib_swap_env_get();
	int r;

	if (env->system && !hib_snapshot_can(c->sc.snap, HIB_SNAP_CAP_FREEZES_SYSTEM))
		return 0;
	r = hib_zram_plan_make(env, c->sc.t, &c->zram);
	if (r < 0)
		return log_err(r, "reading the active swap areas failed: %m");
	if (c->sc.o->zram == HIB_ZRAM_KEEP) {
		for (size_t i = 0; i < c->zram.n; i++)
			log_info("%s (%llu MiB used) kept on as swap (zram = keep)",
				 c->zram.areas[i].a.path, KIB_TO_MIB(c->zram.areas[i].a.used_kib));
		c->zram.n = 0;
		return 0;
	}
	if (c->zram.n && !hib_zram_plan_fits(&c->zram))
		return zram_refuse(c, &c->zram.areas[0].a);
	for (size_t i = 0; i < c->zram.n; i++) {
		struct hib_zram_area *z = &c->zram.areas[i];

		r = hib_swap_off(env, z->a.path);
		if (r == -ENOMEM) /* the kernel put it back on, as it was */
			return zram_refuse(c, &z->a);
		if (r < 0)
			return log_err(r,
				       "swapoff %s failed: %m; set zram = keep in "
				       "/etc/hibernate.conf to leave it on",
				       z->a.path);
		z->off = true;
		log_info("%s (%llu MiB used) swapped off for the cycle", z->a.path,
			 KIB_TO_MIB(z->a.used_kib));
	}
	return 0;
}

/* Every zram area zram_move_out swapped off, on again as it was: whichever
 * way the cycle ended. */
static void zram_put_back(struct cycle *c)
{
	const struct hib_swap_env *env = hib_swap_env_get();

	for (size_t i = c->zram.n; i-- > 0;) {
		const struct hib_swap_area *a = &c->zram.areas[i].a;
		int r;

		if (!c->zram.areas[i].off)
			continue;
		r = hib_zram_on(env, a);
		if (r < 0)
			log_err(r, "swapon %s failed: %m; it stays off: run swapon -d -p %d %s",
				a->path, MAX(a->prio, 0), a->path);
		else if (a->prio >= 0)
			hib_log(HIB_LOG_PROGRESS,
				"%s (%llu MiB used) swapped off for the cycle, back on with "
				"priority %d",
				a->path, KIB_TO_MIB(a->used_kib), a->prio);
		else
			hib_log(HIB_LOG_PROGRESS,
				"%s (%llu MiB used) swapped off for the cycle, back on with "
				"the kernel's next priority (it had %d, its own)",
				a->path, KIB_TO_MIB(a->used_kib), a->prio);
	}
	hib_zram_plan_free(&c->zram);
}

/* Refuse a target that is not plain swap before a byte is written or a process
 * frozen; then take everything the cycle needs. */
static int hibernate_prepare(struct cycle *c)
{
	int r;

	c->orig_page = hib_alloc_pages(HIB_PAGE_SIZE);
	c->h = hib_alloc_pages(HIB_PAGE_SIZE);
	if (!c->orig_page || !c->h)
		return -ENOMEM;
	/* Only what readers take: see hib_block_size_ok. */
	if (!hib_block_size_ok(c->block_bytes))
		return log_err(-EINVAL,
			       "block size %u: blocks are powers of two from %u KiB to %u MiB; "
			       "leave the option's block_bytes 0 for the default",
			       c->block_bytes, HIB_BLOCK_MIN_BYTES >> 10,
			       HIB_BLOCK_MAX_BYTES >> 20);
	r = prepare_target(c);
	if (r == 0)
		r = prepare_buffers(c);
	if (r == 0)
		r = prepare_header(c);
	if (r == 0)
		r = zram_move_out(c);
	if (r < 0)
		return r;
	if (hib_snapshot_can(c->sc.snap, HIB_SNAP_CAP_FREEZES_SYSTEM) &&
	    mlockall(MCL_CURRENT | MCL_FUTURE) < 0)
		log_warn("mlockall failed (%s): pages of this program may be swapped",
			 strerror(errno));
	c->phase = SUSPEND_PREPARED;
	/* Last: the area's free pages as the freeze will find them. */
	return reserve_map(&c->sc, c->block_bytes);
}

static int hibernate_freeze(struct cycle *c)
{
	struct hib_snapshot *snap = c->sc.snap;
	const struct hib_options *o = c->sc.o;
	int r;

	c->t0 = hib_now_ms();
	c->tp = c->t0;
	r = snap->ops->freeze(snap);
	if (r < 0)
		return log_err(r, "freezing processes failed: %m");
	c->phase = SUSPEND_FROZEN;
	log_phase(&c->tp, "freeze");
	if (o->powerdown == HIB_POWERDOWN_PLATFORM) {
		r = snap->ops->platform_support(snap, 1);
		if (r < 0)
			log_warn("platform (ACPI S4) support refused: %s", strerror(-r));
		else
			c->h->flags |= HIB_HFLAG_PLATFORM;
	}
	if (o->image_size >= 0) {
		/* The limit is on the stream; the kernel's wish counts memory pages:
		 * one exactly met would leave the stream over it by its PFN pages. */
		uint64_t pages = hib_snapshot_pref_pages((uint64_t)o->image_size / HIB_PAGE_SIZE);

		r = snap->ops->pref_image_size(snap, pages * HIB_PAGE_SIZE);
		if (r < 0)
			return log_err(r, "setting the preferred image size failed: %m");
	}
	return 0;
}

/* We are the restored system. The resume side has invalidated the image and
 * left its report where the header was: read it, zero it, while the page is
 * still ours (the snapshot device frees it on close). */
static void take_report(struct cycle *c)
{
	struct hib_report rep;

	/* c->h, the header this cycle never wrote, is the page to read it in. */
	if (image_take_report(c->sc.t, c->sc.hdr_off, c->sc.image_id, c->h, &rep) < 0)
		return;
	c->stats.resumed_report = true;
	c->stats.stream_bytes = rep.stream_bytes;
	c->stats.stored_bytes = rep.stored_bytes;
	c->stats.snapshot_ms = rep.snapshot_ms;
	c->stats.io_ms = rep.write_ms;
	c->stats.threads = rep.write_threads;
	c->stats.load_ms = rep.load_ms;
	c->stats.load_threads = rep.load_threads;
	c->stats.written_unix = rep.created_unix;
	c->stats.loaded_unix = rep.loaded_unix;
}

/* The atomic copy. Returns twice: here, to write it out, and in the restored
 * system (HIB_SUSPEND_RESUMED). */
static int hibernate_snapshot(struct cycle *c)
{
	struct suspend_ctx *sc = &c->sc;
	const struct hib_options *o = sc->o;
	int in_suspend = 0, r;

	r = sc->snap->ops->create_image(sc->snap, &in_suspend);
	if (r < 0)
		return log_err(r, "the kernel could not make the snapshot: %m%s",
			       r == -ENOMEM ? " (not enough free memory for the copy; try a "
					      "smaller --image-size)"
					    : "");
	c->phase = SUSPEND_SNAPSHOT;
	if (!in_suspend) {
		take_report(c);
		c->outcome = HIB_SUSPEND_RESUMED;
		return 0;
	}
	c->h->stat_snapshot_ms = hib_now_ms() - c->t0;
	log_phase(&c->tp, "snapshot");
	r = sc->snap->ops->get_image_size(sc->snap, &sc->stream_bytes);
	if (r < 0)
		return log_err(r, "the kernel did not give the image size: %m");
	log_info("snapshot: %llu MiB in %llu ms", (unsigned long long)(sc->stream_bytes >> 20),
		 (unsigned long long)c->h->stat_snapshot_ms);
	/* PREF_IMAGE_SIZE is only a wish: the kernel frees what it can and makes the
	 * image anyway. A limit the user set is a limit. */
	if (o->image_size > 0 && sc->stream_bytes > (uint64_t)o->image_size)
		return log_err(-E2BIG,
			       "the image is %llu MiB, over the limit of %llu MiB: the kernel "
			       "could not free enough memory; raise --image-size or close programs",
			       (unsigned long long)(sc->stream_bytes >> 20),
			       (unsigned long long)((uint64_t)o->image_size >> 20));
	/* Now, not before: FREEZE synced, and nothing writes a filesystem any more. */
	if (hib_snapshot_can(sc->snap, HIB_SNAP_CAP_FREEZES_SYSTEM))
		engine_fs_record(c->h, &sc->fs);
	return 0;
}

/* What the stream's write made known into the header; the map; the header page. */
static int write_metadata(struct cycle *c, uint64_t stream_xxh3, uint64_t t0)
{
	struct suspend_ctx *sc = &c->sc;
	struct hib_header *h = c->h;
	int r;

	h->stream_bytes = sc->stream_bytes;
	h->stream_xxh3 = stream_xxh3;
	h->nr_blocks = sc->nr_blocks;
	h->data_pages = sc->map.pages;
	h->map_extents = (uint32_t)sc->map.n;
	h->stat_stored_bytes = sc->stored_pages * HIB_PAGE_SIZE;
	h->stat_threads = sc->ep.workers;
	r = write_map(sc, &h->map_offset, &h->map_pages);
	if (r < 0)
		return r;
	hib_test_pause("map");
	h->stat_write_ms = hib_now_ms() - t0;
	if (sc->key) {
		/* A sealed image keeps no plaintext fingerprint; the MAC covers the header. */
		h->stream_xxh3 = 0;
		r = crypt_header_mac_set(sc->key, h);
		if (r < 0)
			return log_err(r,
				       "%s: computing the image header's MAC failed: %m; "
				       "no image written",
				       hib_target_path(sc->t));
	}
	return image_write_header(sc->t, sc->hdr_off, h);
}

/* After the snapshot: the stream to disk, then the map and header that find it,
 * [read back,] flushed. Cancelling ends the cycle here (HIB_SUSPEND_CANCELLED). */
static int hibernate_write(struct cycle *c)
{
	struct suspend_ctx *sc = &c->sc;
	uint64_t stream_xxh3 = 0, t0 = hib_now_ms();
	int r;

	r = write_stream(sc, &stream_xxh3);
	if (r == -ECANCELED) {
		c->outcome = HIB_SUSPEND_CANCELLED;
		return 0;
	}
	if (r < 0)
		return r;
	c->tp = t0;
	log_phase(&c->tp, "write");
	hib_test_pause("data");
	r = write_metadata(c, stream_xxh3, t0);
	if (r < 0)
		return r;
	log_phase(&c->tp, "map+header");
	hib_test_pause("header");
	if (sc->o->verify) {
		r = verify_image(sc, stream_xxh3);
		if (r < 0)
			return r;
		log_phase(&c->tp, "verify");
	}
	/* Everything must be on the disk before the signature says it is there. */
	r = hib_target_sync(sc->t);
	if (r < 0)
		return log_err(r, "%s: flushing the image to disk failed: %m",
			       hib_target_path(sc->t));
	log_phase(&c->tp, "sync");
	hib_test_pause("sync");
	c->phase = SUSPEND_WRITTEN;
	return 0;
}

/* What the write came to, for the log and the stats. */
static void written_report(struct cycle *c)
{
	struct suspend_ctx *sc = &c->sc;
	const struct hib_header *h = c->h;

	/* How much of the write the kernel's copy-out took (one page per read()):
	 * the reader feeds everything else, so it is a floor for the phase. */
	log_info("image written: %llu MiB stream in %llu MiB on disk, %zu extents, %llu ms "
		 "(reading /dev/snapshot: %llu ms)",
		 (unsigned long long)(sc->stream_bytes >> 20),
		 (unsigned long long)((sc->stored_pages * HIB_PAGE_SIZE) >> 20), sc->map.n,
		 (unsigned long long)h->stat_write_ms, (unsigned long long)(sc->snap_ns / 1000000));
	if (sc->adaptive) {
		double codec, disk, saved;

		adapt_rates(&sc->adapt, &codec, &disk, &saved);
		log_info("adaptive compression: %llu of %u blocks stored raw; codec %.0f MB/s "
			 "saving %.0f%%, disk %.0f MB/s: %.0f%% compressed at the end",
			 (unsigned long long)atomic_load(&sc->adapt.raw_blocks), sc->nr_blocks,
			 codec, 100 * saved, disk, 100.0 * adapt_fraction(&sc->adapt));
	}
	c->stats.stream_bytes = sc->stream_bytes;
	c->stats.stored_bytes = (sc->stored_pages + h->map_pages + 1) * HIB_PAGE_SIZE;
	c->stats.extents = sc->map.n;
	c->stats.threads = sc->ep.workers;
	c->stats.snapshot_ms = h->stat_snapshot_ms;
	c->stats.io_ms = h->stat_write_ms;
	c->stats.pipeline_bytes = pipeline_memory(sc->ep.pipe);
	c->stats.blocks = sc->nr_blocks;
	c->stats.snapshot_io_ms = sc->snap_ns / 1000000;
	c->stats.adaptive = sc->adaptive;
	c->stats.raw_blocks = atomic_load(&sc->adapt.raw_blocks);
}

/* The signature, last: from now on the image counts. */
static int hibernate_seal(struct cycle *c)
{
	struct suspend_ctx *sc = &c->sc;
	int r;

	/* Before the write: a page 0 half written must be put back too. */
	c->phase = SUSPEND_SEALED;
	r = image_write_sig(sc->t, c->h, sc->hdr_off, c->orig_page);
	if (r < 0)
		return r;
	log_phase(&c->tp, "signature");
	hib_test_pause("signature");
	written_report(c);
	if (sc->o->stats)
		sc->o->stats(HIB_STATS_HIBERNATE, &c->stats, sc->o->stats_userdata);
	return 0;
}

static int hibernate_power_down(struct cycle *c)
{
	struct hib_snapshot *snap = c->sc.snap;
	enum hib_powerdown how = c->sc.o->powerdown;
	int r;

	switch (how) {
	case HIB_POWERDOWN_NONE:
		c->outcome = HIB_SUSPEND_WRITTEN; /* the image stays: the caller asked for that */
		return 0;
	case HIB_POWERDOWN_TEST:
		/* The caller restores the image next, through a new handle; the unwind
		 * thaws everything, and the others must not run in between. */
		engine_test_cycle_stop_others(snap);
		c->outcome = HIB_SUSPEND_TEST_WRITTEN;
		return 0;
	case HIB_POWERDOWN_SUSPEND:
		/* Suspend to both: sleep in RAM with the image on disk. Back here means
		 * RAM survived: the image must go, the filesystems will move on. */
		r = snap->ops->s2ram(snap);
		if (r == 0) {
			c->outcome = HIB_SUSPEND_RAM;
			return 0;
		}
		log_warn("suspend to RAM failed (%s); powering off instead", strerror(-r));
		how = HIB_POWERDOWN_SHUTDOWN;
		break;
	default:
		break;
	}
	r = snap->ops->power_off(snap, how);
	/* Still here: the machine did not power down. */
	if (r == 0 && hib_snapshot_can(snap, HIB_SNAP_CAP_RETURNS)) {
		c->outcome = HIB_SUSPEND_WRITTEN;
		return 0;
	}
	return log_err(r ? r : -EIO, "powering off failed: %m");
}

/* Undo what the phases reached did, newest first, as the cycle ended: failed
 * (@r < 0) or with c->outcome. */
static void hibernate_unwind(struct cycle *c, int r)
{
	struct suspend_ctx *sc = &c->sc;
	struct hib_snapshot *snap = sc->snap;
	/* Written, and left for the caller: powerdown none, --test. */
	bool image_stays = r == 0 && (c->outcome == HIB_SUSPEND_WRITTEN ||
				      c->outcome == HIB_SUSPEND_TEST_WRITTEN);
	/* No image on disk will be read from its pages. Resumed: the header page was
	 * taken before the snapshot, so this kernel's swap map still counts it; give it
	 * back now, not when the device is closed (a swapoff before that, after
	 * --auto-swapon, would wait for the page's owner for ever). */
	bool pages_unused = r < 0 || c->outcome == HIB_SUSPEND_CANCELLED ||
			    c->outcome == HIB_SUSPEND_RESUMED;

	if (c->phase >= SUSPEND_SEALED && !image_stays) {
		const char *path = hib_target_path(sc->t);
		/* What to put back is h->orig_tail: orig_page is free to read page 0 into. */
		int k = hib_sig_restore_buf(sc->t, c->h->orig_tail, c->orig_page);

		if (k < 0)
			log_err(k, "%s: unable to restore the swap signature: %m; run: mkswap %s",
				path, path);
	}
	if (c->phase >= SUSPEND_PREPARED && pages_unused)
		hib_target_alloc_reset(sc->t, snap);
	if (c->phase >= SUSPEND_SNAPSHOT)
		snap->ops->free_image(snap);
	if (c->phase >= SUSPEND_FROZEN)
		snap->ops->unfreeze(snap);
	if (c->phase >= SUSPEND_PREPARED && hib_snapshot_can(snap, HIB_SNAP_CAP_FREEZES_SYSTEM))
		munlockall();
	hib_ioq_free(sc->ioq);
	free(sc->writer);
	crypt_key_free(sc->key);
	engine_pipe_free(&sc->ep);
	frozen_bufs_free(sc);
	free(c->h);
	free(c->orig_page);
	zram_put_back(c);
}

int hib_suspend(struct hib_target *t, struct hib_snapshot *snap, const struct hib_options *o,
		enum hib_suspend_outcome *ret_outcome, struct hib_stats *ret_stats)
{
	static int (*const phases[])(struct cycle *) = {
		hibernate_prepare, hibernate_freeze, hibernate_snapshot,
		hibernate_write,   hibernate_seal,   hibernate_power_down,
	};
	struct cycle c = {
		.sc = { .t = t, .snap = snap, .o = o, .snap_mu = PTHREAD_MUTEX_INITIALIZER },
		.block_bytes = o->block_bytes ? o->block_bytes : HIB_DEFAULT_BLOCK_BYTES,
	};
	int r = 0;

	/* Phase after phase, until one fails or decides how the cycle ends. */
	for (size_t i = 0; i < ARRAY_SIZE(phases) && r == 0 && !c.outcome; i++)
		r = phases[i](&c);
	hibernate_unwind(&c, r);
	if (r < 0)
		return r;
	if (ret_outcome)
		*ret_outcome = c.outcome;
	if (ret_stats)
		*ret_stats = c.stats;
	return 0;
}
