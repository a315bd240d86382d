// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Resume: the initramfs side.
 *
 *   signature? no → return, nothing touched.
 *   tail, header, map → checked; kernel identity → must match.
 *   reader thread (blocks off the disk) → workers (checksum, decode,
 *   checksum) → this thread feeds /dev/snapshot in order.
 *   whole-stream checksum → invalidate the signature → FREEZE →
 *   ATOMIC_RESTORE (does not return).
 *
 * Any failure before ATOMIC_RESTORE: the image is discarded (SWAPSPACE2 put
 * back) and the boot goes on. The booting system will mount and change the
 * filesystems the image remembers, so a kept image could only do harm later.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <xxhash.h>

#include "pipeline/crypt.h"
#include "engine/engine.h"
#include "storage/readahead.h"

struct resume_ctx {
	struct hib_target *t;
	uint8_t *key;              /* data key of an encrypted image */
	struct engine_image img;
	struct engine_pipe ep;
	int reader_err;
	uint64_t snap_ns;          /* time inside /dev/snapshot's write() */
	enum hib_io_mode io_mode;  /* the options', for the reader */
};

static int decode_work(struct hib_job *job, void *worker_ctx)
{
	const struct hib_block_hdr *h = job->in;
	int r = codec_decode(worker_ctx, job->in, job->out);


	if (r < 0)
		return r;
	job->out_len = h->raw_bytes;
	return 0;
}

/* Read-ahead in chunks of 1 MiB, 8 in flight: the device sees large
 * sequential reads while the workers decode. */
#define RESUME_RA_CHUNK_PAGES 256u
#define RESUME_RA_DEPTH 8u

/* Fail the block the reader is at: the feeder reports it, in order. */
static void reader_fail(struct resume_ctx *rc, struct hib_job *job, int r)
{
	job->err = r;
	pipeline_submit(rc->ep.pipe, job);
}

static void *reader_main(void *arg)
{
	struct resume_ctx *rc = arg;
	const struct hib_header *hdr = rc->img.hdr;
	struct hib_pipeline *p = rc->ep.pipe;
	_cleanup_(hib_readahead_freep) struct hib_readahead *ra = NULL;
	uint64_t lp = 0, stream_off = 0;
	int r;

	r = hib_readahead_new(rc->t, RESUME_RA_CHUNK_PAGES, RESUME_RA_DEPTH, rc->io_mode, &ra);
	if (r == 0)
		r = hib_readahead_start(ra, &rc->img.map, 0, rc->img.map.pages);
	if (r < 0) {
		struct hib_job *job = pipeline_next_free(p);

		log_err(r, "%s: setting up the reads failed: %m", rc->t->path);
		if (job)
			reader_fail(rc, job, r);
		return NULL;
	}
	log_debug("reading with %s, %llu KiB ahead",
		  hib_readahead_is_uring(ra) ? "io_uring" : "pread",
		  (unsigned long long)(hib_readahead_buffer_bytes(ra) >> 10));
	for (uint32_t i = 0; i < hdr->nr_blocks; i++) {
		struct hib_job *job = pipeline_next_free(p);
		uint64_t at = lp;

		if (!job)
			return NULL;
		r = engine_read_block(ra, rc->img.map.pages, hdr->block_raw_bytes, i, stream_off,
				      &lp, job->in);
		if (r < 0) {
			if (r == -EBADMSG)
				log_err(r, "%s: block %u: header corrupt (logical page %llu)",
					rc->t->path, i, (unsigned long long)at);
			else
				log_err(r, "%s: block %u: read failed: %m", rc->t->path, i);
			reader_fail(rc, job, r);
			return NULL;
		}
		job->in_len = (lp - at) * HIB_PAGE_SIZE;
		job->user = stream_off;
		stream_off += ((struct hib_block_hdr *)job->in)->raw_bytes;
		pipeline_submit(p, job);
	}
	return NULL;
}

/* Feed the decoded stream to the snapshot device, in order. */
static int feed_snapshot(struct resume_ctx *rc, struct hib_snapshot *snap,
			 const struct hib_options *o)
{
	const struct hib_header *hdr = rc->img.hdr;
	struct hib_pipeline *p = rc->ep.pipe;
	XXH3_state_t st;
	uint64_t fed = 0, last = 0;
	int r = 0;

	/* libxxhash 0.8.1 reads the state's old seed to decide whether to rebuild its
	 * secret: a stack state must be initialised or the hash is wrong at random. */
	XXH3_INITSTATE(&st);
	XXH3_64bits_reset_withSeed(&st, hdr->image_id);
	for (uint32_t i = 0; i < hdr->nr_blocks; i++) {
		struct hib_job *job = pipeline_next_done(p);
		const uint8_t *buf;

		if (!job)
			return -ECANCELED;
		if (job->err) {
			r = job->err;
			if (r == -EBADMSG)
				log_err(r, "%s: block %u (stream bytes %llu..) failed its checksum",
					rc->t->path, i, (unsigned long long)job->user);
			else if (r == HIB_ERR_AUTH)
				log_err(r, "%s: block %u (stream bytes %llu..) failed authentication: "
					"tampered with, or not sealed with this image's key",
					rc->t->path, i, (unsigned long long)job->user);
			return r;
		}
		if (job->user != fed || fed + job->out_len > hdr->stream_bytes) {
			log_err(-EBADMSG, "%s: block %u does not continue the stream", rc->t->path, i);
			return -EBADMSG;
		}
		buf = job->out;
		XXH3_64bits_update(&st, &((const struct hib_block_hdr *)job->in)->raw_xxh3,
				   sizeof(uint64_t));
		uint64_t t_write = hib_now_ns();
		for (size_t k = 0; k < job->out_len; k += HIB_PAGE_SIZE) {
			ssize_t n = snap->ops->write_page(snap, buf + k);
			if (n < 0)
				return log_err((int)n, "the kernel refused image page %llu: %m",
					       (unsigned long long)((fed + k) / HIB_PAGE_SIZE));
			if (n != HIB_PAGE_SIZE)
				return log_err(-EIO,
					       "the kernel took the whole image at page %llu of "
					       "%llu: the image does not fit this kernel",
					       (unsigned long long)((fed + k) / HIB_PAGE_SIZE),
					       (unsigned long long)(hdr->stream_bytes / HIB_PAGE_SIZE));
		}
		rc->snap_ns += hib_now_ns() - t_write;
		fed += job->out_len;
		pipeline_release(p, job);
		if (o && o->progress && (hib_now_ms() - last > 200 || fed == hdr->stream_bytes)) {
			last = hib_now_ms();
			o->progress("load", fed, hdr->stream_bytes, o->progress_userdata);
		}
	}
	if (fed != hdr->stream_bytes)
		return log_err(-EBADMSG, "%s: the blocks hold %llu bytes, the header says %llu",
			       rc->t->path, (unsigned long long)fed,
			       (unsigned long long)hdr->stream_bytes);
	if (!(hdr->flags & HIB_HFLAG_ENCRYPTED) && XXH3_64bits_digest(&st) != hdr->stream_xxh3)
		return log_err(-EBADMSG, "%s: the checksum of the whole image does not match",
			       rc->t->path);
	return 0;
}

/* Ask for the secret until it opens the image's key, or the attempts run out.
 * A key file gets one attempt: it does not get better by asking again. */
static int unlock(struct resume_ctx *rc, const struct hib_options *o)
{
	bool keyfile = rc->img.hdr->crypt.kdf == HIB_KDF_KEYFILE;
	const char *what = keyfile ? "key file" : "passphrase";
	int attempts = keyfile ? 1 : o->secret_attempts > 0 ? o->secret_attempts : 3;
	int r = -EACCES;

	if (!o->ask_secret)
		return log_err(-ENOKEY, "%s: the image is encrypted and no %s was given", rc->t->path,
			       what);
	for (int i = 1; i <= attempts; i++) {
		struct hib_secret s = { 0 };

		r = o->ask_secret(i, what, &s, o->ask_secret_userdata);
		if (r < 0)
			return log_err(r, "%s: no %s: %m", rc->t->path, what);
		if ((s.kind == HIB_SECRET_KEYFILE) != keyfile)
			return log_err(-EACCES,
				       "%s: the image was sealed with a %s, and a %s was given; "
				       "booting without the image",
				       rc->t->path, what, keyfile ? "passphrase" : "key file");
		r = crypt_open(&s, rc->img.hdr, &rc->key);
		if (r == -EACCES) {
			if (i < attempts)
				log_warn("wrong %s (attempt %d of %d)", what, i, attempts);
			continue;
		}
		if (r == -EBADMSG)
			return log_err(r, "%s: the image's key parameters are out of bounds "
				       "(tampered with, or written by a newer version)", rc->t->path);
		if (r < 0)
			return log_err(r, "%s: unlocking the image failed: %m", rc->t->path);
		break;
	}
	if (r < 0) {
		if (keyfile)
			return log_err(-EACCES, "%s: the key file does not open this image (another "
				       "key file, or the image's key was tampered with); booting "
				       "without the image", rc->t->path);
		return log_err(-EACCES, "%s: wrong passphrase %d times; booting without the image",
			       rc->t->path, attempts);
	}
	/* The key opens, so any difference in the header now is tampering. */
	r = crypt_header_mac_check(rc->key, rc->img.hdr);
	if (r < 0)
		return log_err(r, "%s: the image header was tampered with (MAC mismatch)",
			       rc->t->path);
	return 0;
}

static int check_kernel(const struct hib_target *t, const struct hib_header *h)
{
	struct utsname u;

	if (uname(&u) < 0)
		return -errno;
	if (strcmp(u.release, h->kernel_release) || strcmp(u.version, h->kernel_version) ||
	    strcmp(u.machine, h->machine))
		return log_err(-EXDEV,
			       "%s: the image was written by kernel %s (%s), this is %s (%s); "
			       "only a boot of the kernel that wrote it can resume it",
			       t->path, h->kernel_release, h->kernel_version, u.release, u.version);
	return 0;
}

int hib_resume(struct hib_target *t, struct hib_snapshot *snap, const struct hib_options *o,
	       struct hib_stats *ret_stats)
{
	struct resume_ctx rc = { .t = t };
	struct hib_options defaults;
	pthread_t reader;
	bool invalidated = false;
	uint64_t t0 = hib_now_ms();
	int r;

	if (!o) {
		hib_options_init(&defaults);
		o = &defaults;
	}
	rc.io_mode = o->io_mode;
	r = engine_image_load(t, &rc.img);
	if (r == -ENOENT)
		return HIB_RESUME_NO_IMAGE;
	if (r < 0)
		goto discard;
	if (!t->writable) {
		r = -EBADF;
		goto out;
	}
	log_info("%s: image of %llu MiB (%llu MiB on disk) written by %s",
		 t->path, (unsigned long long)(rc.img.hdr->stream_bytes >> 20),
		 (unsigned long long)(rc.img.hdr->stat_stored_bytes >> 20),
		 rc.img.hdr->kernel_release);
	if (!snap) {
		r = -ENODEV;
		goto discard;
	}
	/* An active swap area (hibernate --test restores from the area it just
	 * wrote): the kernel refuses writes to it (ETXTBSY) unless this handle names
	 * it, and we must write its signature. In an initramfs no swap is active. */
	if (!snap->is_fake && hib_target_is_swap(t) && hib_target_swap_active(t, NULL) == 1 &&
	    snap->ops->set_swap_area(snap, t->dev, t->offset_pages) < 0)
		log_debug("%s: active swap, and the kernel refused it as the swap area",
			  t->path);
	if (!snap->is_fake) {
		r = check_kernel(t, rc.img.hdr);
		if (r == -EXDEV && o->keep_on_kernel_mismatch) {
			log_warn("%s: image kept for a boot of kernel %s (kernel-mismatch = keep)",
				 t->path, rc.img.hdr->kernel_release);
			goto out;
		}
		if (r == 0)
			r = engine_fs_check(t, rc.img.hdr);
		if (r < 0)
			goto discard;
	}
	if (rc.img.hdr->flags & HIB_HFLAG_ENCRYPTED) {
		r = unlock(&rc, o);
		if (r < 0)
			goto discard;
	}

	r = engine_pipe_new(o, rc.img.hdr->block_raw_bytes, rc.img.hdr->image_id, decode_work,
			    codec_record_bound(rc.img.hdr->block_raw_bytes),
			    rc.img.hdr->block_raw_bytes, &rc.ep);
	if (r < 0) {
		log_err(r, "allocating the pipeline's buffers failed: %m");
		goto discard;
	}
	for (unsigned i = 0; rc.key && i < (rc.ep.workers ? rc.ep.workers : 1); i++)
		codec_ctx_set_key(rc.ep.ctx[i], rc.key);
	r = pipeline_start(rc.ep.pipe);
	if (r < 0)
		goto discard;
	r = -pthread_create(&reader, NULL, reader_main, &rc);
	if (r < 0) {
		pipeline_stop(rc.ep.pipe);
		goto discard;
	}
	r = feed_snapshot(&rc, snap, o);
	pipeline_abort(rc.ep.pipe);
	pthread_join(reader, NULL);
	pipeline_stop(rc.ep.pipe);
	if (r < 0)
		goto discard;
	{
		uint64_t tp = t0;
		log_phase(&tp, "load");
	}

	/* One more write: the kernel finishes its last page (and, since 6.5, the
	 * zero pages left out of the stream) and must say it has the whole image. */
	{
		_cleanup_(freep) uint8_t *zero = hib_alloc_pages(HIB_PAGE_SIZE);
		ssize_t n;

		if (!zero) {
			r = -ENOMEM;
			goto discard;
		}
		n = snap->ops->write_page(snap, zero);
		if (n != 0) {
			r = n < 0 ? (int)n : -EBADMSG;
			log_err(r, "the kernel expected more of the image than it holds: %m");
			goto discard;
		}
	}

	hib_test_pause("loaded");
	/* Never resume the same image twice: invalidate before restoring. */
	r = hib_sig_restore(t, rc.img.hdr->orig_tail);
	if (r < 0) {
		log_err(r, "%s: unable to invalidate the image before restoring it: %m; "
			   "not restoring", t->path);
		goto out;
	}
	invalidated = true;
	hib_test_pause("invalidated");
	/* The header's place gets the cycle's numbers, for the resumed system. */
	engine_image_report(t, &rc.img, hib_now_ms() - t0, rc.ep.workers ? rc.ep.workers : 1);
	if (ret_stats) {
		memset(ret_stats, 0, sizeof(*ret_stats));
		ret_stats->stream_bytes = rc.img.hdr->stream_bytes;
		ret_stats->stored_bytes = rc.img.hdr->stat_stored_bytes;
		ret_stats->extents = rc.img.map.n;
		ret_stats->threads = rc.ep.workers;
		ret_stats->io_ms = hib_now_ms() - t0;
		ret_stats->pipeline_bytes = pipeline_memory(rc.ep.pipe);
	}
	/* The kernel's share: it allocates and fills a page per write(). */
	log_info("image loaded and verified in %llu ms (writing /dev/snapshot: %llu ms); restoring",
		 (unsigned long long)(hib_now_ms() - t0), (unsigned long long)(rc.snap_ns / 1000000));

	r = snap->ops->freeze(snap);
	if (r < 0) {
		log_err(r, "freezing processes before the restore failed: %m");
		goto out;
	}
	if (rc.img.hdr->flags & HIB_HFLAG_PLATFORM)
		snap->ops->platform_support(snap, 1);
	r = snap->ops->atomic_restore(snap);
	/* Only the fake comes back with 0. */
	if (r == 0 && snap->is_fake) {
		r = HIB_RESUME_RESTORED;
		goto out;
	}
	log_err(r ? r : -EIO, "the kernel could not restore the image: %m");
	snap->ops->unfreeze(snap);
	if (r == 0)
		r = -EIO;
	goto out;

discard:
	if (!invalidated && t->writable) {
		int k = hib_sig_restore(t, rc.img.hdr ? rc.img.hdr->orig_tail : NULL);
		if (k < 0)
			log_err(k, "%s: unable to restore the swap signature: %m; run: mkswap %s",
				t->path, t->path);
		else
			log_warn("%s: image discarded, the swap area is usable again", t->path);
		if (k == 0 && rc.img.hdr)
			engine_image_wipe(t, &rc.img);
	}
out:
	crypt_key_free(rc.key);
	engine_pipe_free(&rc.ep);
	engine_image_free(&rc.img);
	return r;
}
