// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Resume: the initramfs side, phase by phase (hib_resume, at the end).
 *
 *   locate       signature? no → return, nothing touched. Tail, header, map
 *                → checked.
 *   verify       kernel identity → must match; filesystems unchanged; the
 *                key unlocked (unlock.c), the image read ahead meanwhile
 *                (preload.c).
 *   load         (load.c) reader thread (blocks from memory, then off the
 *                disk) → workers (checksum, decode, checksum) → this thread
 *                feeds /dev/snapshot in order; whole-stream checksum; the
 *                data key wiped.
 *   invalidate   SWAPSPACE2 back, the report in the header's place.
 *   restore      FREEZE → ATOMIC_RESTORE (does not return).
 *
 * Any failure before the invalidation: the image is discarded (SWAPSPACE2 put
 * back) and the boot goes on. The booting system will mount and change the
 * filesystems the image remembers, so a kept image could only do harm later.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "pipeline/crypt.h"
#include "engine/preload.h"
#include "engine/resume-priv.h"
#include "util/cpustat.h"

static int check_kernel(const struct hib_target *t, const struct hib_header *h)
{
	struct utsname u;

	if (uname(&u) < 0)
		return -errno;
	if (hib_header_kernel_check(h, &u) < 0)
		return log_err(-EXDEV,
			       "%s: the image was written by kernel %s (%s), this is %s (%s); "
			       "only a boot of the kernel that wrote it can resume it",
			       hib_target_path(t), h->kernel_release, h->kernel_version, u.release,
			       u.version);
	return 0;
}

/* ---- the cycle --------------------------------------------------------- */

/* How far resume got: each phase done, in order. The unwind undoes them. */
enum resume_phase {
	RESUME_NONE,        /* no image of ours found: nothing written */
	RESUME_FOUND,       /* page 0 holds our signature, maybe damaged: a failure
			       discards the image */
	RESUME_VERIFIED,    /* this kernel's image, filesystems unchanged, key unlocked */
	RESUME_LOADED,      /* the kernel holds the whole image */
	RESUME_INVALIDATED, /* the signature write has begun: never discarded again */
	RESUME_FROZEN,      /* processes frozen for the restore */
};

/* A resume cycle: the stream's context, and what its phases hold. */
struct cycle {
	struct resume_ctx rc; /* shared with the reader thread */
	struct hib_snapshot *snap;
	const struct hib_options *o;
	enum resume_phase phase;
	enum hib_resume_outcome outcome; /* 0 until a phase decides how the cycle ends */
	struct hib_stats stats;
	uint64_t t0;                /* resume began (ms) */
	struct hib_cpu_sample cpu0; /* the CPUs' busy time then */
};

/*
 * require-encryption and the other formats: the kernel's own image (and
 * uswsusp's...) is never sealed with this system's key, and the kernel's
 * resume, which an initramfs runs after ours for the same device, would
 * restore it -- whoever can write the swap area offline can write one. A
 * downgrade: refused and discarded here, before that step can see it.
 */
static int refuse_other_format(struct hib_target *t, enum hib_require want)
{
	_cleanup_(freep) uint8_t *page = NULL;
	const char *path = hib_target_path(t);
	enum hib_sig_state st;
	int r;

	if (want == HIB_REQUIRE_NOTHING)
		return 0;
	page = hib_alloc_pages(HIB_PAGE_SIZE);
	if (!page)
		return -ENOMEM;
	r = hib_sig_read(t, page, &st);
	if (r < 0 || st != HIB_SIG_KERNEL)
		return r;
	log_warn("%s: refused: it holds %s, which is not encrypted, and require-encryption accepts "
		 "only images sealed with %s",
		 path, hib_sig_other_format(page), hib_require_name(want));
	if (!hib_target_writable(t))
		return -EBADF;
	r = hib_sig_discard_other(t, page);
	if (r < 0)
		return log_err(r, "%s: unable to discard the image: %m; run: mkswap %s", path,
			       path);
	log_warn("%s: image discarded, the swap area is usable again", path);
	return -EPERM;
}

/* The image: tail, header, map, all checked. */
static int resume_locate(struct cycle *c)
{
	struct hib_target *t = c->rc.t;
	const struct hib_header *h;
	int r;

	r = image_load(t, &c->rc.img);
	if (r == -ENOENT) {
		c->outcome = HIB_RESUME_NO_IMAGE;
		return refuse_other_format(t, c->o->require_encryption);
	}
	/* Ours, damaged or not. The boot goes on without it and will change the
	 * filesystems it remembers: from here on a failure discards it. */
	c->phase = RESUME_FOUND;
	if (r < 0)
		return r;
	if (!hib_target_writable(t))
		return -EBADF;
	h = c->rc.img.hdr;
	log_info("%s: image of %llu MiB (%llu MiB on disk) written by %s", hib_target_path(t),
		 (unsigned long long)(h->stream_bytes >> 20),
		 (unsigned long long)(h->stat_stored_bytes >> 20), h->kernel_release);
	if (!c->snap)
		return -ENODEV;
	return 0;
}

/* How the image is sealed, as require-encryption names it; -1 for a key
 * derivation this version does not know. */
static int image_sealing(const struct hib_header *h)
{
	if (!(h->flags & HIB_HFLAG_ENCRYPTED))
		return HIB_REQUIRE_NOTHING;
	switch (h->crypt.kdf) {
	case HIB_KDF_ARGON2ID:
		return HIB_REQUIRE_PASSPHRASE;
	case HIB_KDF_KEYFILE:
		return HIB_REQUIRE_KEY_FILE;
	case HIB_KDF_TPM2:
		return HIB_REQUIRE_TPM;
	}
	return -1;
}

/* require-encryption, from the header alone: a plain image needs no key to
 * forge, and one sealed with another kind of key than this system's was not
 * necessarily sealed by its owner. */
static int check_sealing(const struct hib_target *t, const struct hib_header *h,
			 enum hib_require want)
{
	int got = image_sealing(h);
	char found[64];

	if (want == HIB_REQUIRE_NOTHING || got == (int)want)
		return 0;
	if (got == HIB_REQUIRE_NOTHING)
		snprintf(found, sizeof(found), "not encrypted");
	else
		snprintf(found, sizeof(found), "sealed with %s",
			 hib_require_name((enum hib_require)got));
	return log_err(-EPERM,
		       "%s: refused: the image is %s, and require-encryption accepts only images "
		       "sealed with %s",
		       hib_target_path(t), found, hib_require_name(want));
}

/* An active swap area (hibernate --test restores from the area it just wrote):
 * the kernel refuses writes to it (ETXTBSY) unless this handle names it, and
 * we must write its signature. In an initramfs no swap is active. */
static void name_swap_area(struct cycle *c)
{
	struct hib_target *t = c->rc.t;

	if (hib_target_is_swap(t) && hib_target_swap_active(t, NULL) == 1 &&
	    c->snap->ops->set_swap_area(c->snap, hib_target_devnum(t), hib_target_offset_pages(t)) <
		    0)
		log_debug("%s: active swap, and the kernel refused it as the swap area",
			  hib_target_path(t));
}

/* Sealed as required, only the kernel that wrote it, over the filesystems as
 * it left them, and with the key that sealed it. */
static int resume_verify(struct cycle *c)
{
	struct resume_ctx *rc = &c->rc;
	struct hib_target *t = rc->t;
	const struct hib_header *h = rc->img.hdr;
	bool kernel = hib_snapshot_can(c->snap, HIB_SNAP_CAP_FREEZES_SYSTEM);
	int r;

	if (kernel)
		name_swap_area(c);
	r = check_sealing(t, h, c->o->require_encryption);
	if (r < 0)
		return r;
	if (kernel) {
		r = check_kernel(t, h);
		if (r == -EXDEV && c->o->keep_on_kernel_mismatch) {
			log_warn("%s: image kept for a boot of kernel %s (kernel-mismatch = keep)",
				 hib_target_path(t), h->kernel_release);
			c->outcome = HIB_RESUME_KEPT;
			return 0;
		}
		if (r == 0)
			r = engine_fs_check(t, h, c->o->allow_unchecked_fs);
		if (r < 0)
			return r;
	}
	if (h->flags & HIB_HFLAG_ENCRYPTED) {
		r = resume_unlock_image(rc, c->o);
		if (r < 0)
			return r;
	}
	c->phase = RESUME_VERIFIED;
	return 0;
}

/* Every block read, checked and decoded by the pipeline, fed to the kernel in order. */
static int resume_load(struct cycle *c)
{
	uint64_t tp = c->t0;
	int r = resume_load_stream(&c->rc, c->snap, c->o);

	if (r < 0)
		return r;
	log_phase(&tp, "load");
	c->phase = RESUME_LOADED;
	return 0;
}

/* Never resume the same image twice: invalidate it before restoring, and leave
 * the cycle's numbers in the header's place for the resumed system. */
static int resume_invalidate(struct cycle *c)
{
	struct resume_ctx *rc = &c->rc;
	struct hib_target *t = rc->t;
	const struct hib_header *h = rc->img.hdr;
	struct hib_cpu_sample cpu1;
	int r;

	hib_test_pause("loaded");
	/* Before the write: a failed one is not tried again by the unwind (it would
	 * fail the same way), and nothing is restored either way. */
	c->phase = RESUME_INVALIDATED;
	r = hib_sig_restore(t, h->orig_tail);
	if (r < 0)
		return log_err(r,
			       "%s: unable to invalidate the image before restoring it: %m; "
			       "not restoring",
			       hib_target_path(t));
	hib_test_pause("invalidated");
	image_write_report(t, &rc->img, hib_now_ms() - c->t0, rc->ep.workers ? rc->ep.workers : 1);
	c->stats.stream_bytes = h->stream_bytes;
	c->stats.stored_bytes = h->stat_stored_bytes + (uint64_t)(h->map_pages + 1) * HIB_PAGE_SIZE;
	c->stats.extents = rc->img.map.n;
	c->stats.threads = rc->ep.workers;
	c->stats.io_ms = hib_now_ms() - c->t0;
	cpu1 = hib_cpu_sample();
	c->stats.cpu_busy_ms = hib_cpu_busy_ms(&c->cpu0, &cpu1);
	c->stats.cpus = hib_cpus_online();
	c->stats.pipeline_bytes = pipeline_memory(rc->ep.pipe);
	c->stats.blocks = h->nr_blocks;
	c->stats.snapshot_io_ms = rc->snap_ns / 1000000;
	c->stats.codec_ms = pipeline_work_ns(rc->ep.pipe) / 1000000;
	c->stats.preload_bytes = rc->preload_bytes;
	c->stats.preload_ms = rc->preload_ms;
	return 0;
}

/* Where the time after the secret went: the KDF, stopping the read-ahead, the
 * load's first block into the kernel, its longest (the one that reaches the
 * first data page, where the kernel takes its pages for the whole image: 0.6-2
 * s under TCG) and the feeder's wait for decoded blocks. */
static void log_load_times(const struct resume_ctx *rc)
{
	log_info("after the secret: key derived in %llu ms, read-ahead stopped in %llu ms; load: "
		 "first block in the kernel after %llu ms, the longest %llu ms (at stream KiB "
		 "%llu), waiting for decoded blocks %llu ms; the reader waited %llu ms for free "
		 "slots and %llu ms reading blocks, %llu MiB read ahead at most; CPU: the feeder "
		 "%llu ms, the reader %llu ms",
		 (unsigned long long)(rc->kdf_ns / 1000000),
		 (unsigned long long)(rc->stop_ns / 1000000),
		 (unsigned long long)(rc->first_ns / 1000000),
		 (unsigned long long)(rc->snap_max_ns / 1000000),
		 (unsigned long long)(rc->snap_max_at >> 10),
		 (unsigned long long)(rc->wait_ns / 1000000),
		 (unsigned long long)(rc->read_slot_ns / 1000000),
		 (unsigned long long)(rc->read_block_ns / 1000000),
		 (unsigned long long)(rc->ra_peak_bytes >> 20),
		 (unsigned long long)(rc->feed_cpu_ns / 1000000),
		 (unsigned long long)(rc->read_cpu_ns / 1000000));
}

/* Freeze and hand the image to the kernel, which does not come back. */
static int resume_restore(struct cycle *c)
{
	struct hib_snapshot *snap = c->snap;
	int r;

	/* The kernel's share: it allocates and fills a page per segment of writev(). */
	log_info("image loaded and verified in %llu ms (writing /dev/snapshot: %llu ms; codec: "
		 "%llu ms of CPU over %u threads); restoring",
		 (unsigned long long)(hib_now_ms() - c->t0),
		 (unsigned long long)(c->rc.snap_ns / 1000000),
		 (unsigned long long)c->stats.codec_ms, MAX(c->rc.ep.workers, 1u));
	log_load_times(&c->rc);
	if (c->o->stats)
		c->o->stats(HIB_STATS_RESUME, &c->stats, c->o->stats_userdata);
	if (c->o->before_restore)
		c->o->before_restore(c->o->before_restore_userdata);
	r = snap->ops->freeze(snap);
	if (r < 0)
		return log_err(r, "freezing processes before the restore failed: %m");
	c->phase = RESUME_FROZEN;
	if (c->rc.img.hdr->flags & HIB_HFLAG_PLATFORM)
		snap->ops->platform_support(snap, 1);
	r = snap->ops->atomic_restore(snap);
	if (r == 0 && hib_snapshot_can(snap, HIB_SNAP_CAP_RETURNS)) {
		c->outcome = HIB_RESUME_RESTORED;
		return 0;
	}
	return log_err(r ? r : -EIO, "the kernel could not restore the image: %m");
}

/* A failure before the invalidation: the swap area back as it was, and the
 * header page (wrapped key, map) wiped. Read-only, nothing can be written. */
static void discard(struct cycle *c)
{
	struct hib_target *t = c->rc.t;
	const char *path = hib_target_path(t);
	int k;

	if (!hib_target_writable(t))
		return;
	k = image_discard(t, &c->rc.img);
	if (k < 0)
		log_err(k, "%s: unable to restore the swap signature: %m; run: mkswap %s", path,
			path);
	else
		log_warn("%s: image discarded, the swap area is usable again", path);
}

/* Undo what the phases reached did, newest first, as the cycle ended: failed
 * (@r < 0) or with c->outcome. */
static void resume_unwind(struct cycle *c, int r)
{
	if (c->phase >= RESUME_FROZEN && r < 0)
		c->snap->ops->unfreeze(c->snap);
	if (c->phase >= RESUME_FOUND && c->phase < RESUME_INVALIDATED && r < 0)
		discard(c);
	crypt_key_free(c->rc.key);
	engine_preload_free(c->rc.pre);
	engine_pipe_free(&c->rc.ep);
	image_free(&c->rc.img);
}

int hib_resume(struct hib_target *t, struct hib_snapshot *snap, const struct hib_options *o,
	       enum hib_resume_outcome *ret_outcome, struct hib_stats *ret_stats)
{
	static int (*const phases[])(struct cycle *) = {
		resume_locate, resume_verify, resume_load, resume_invalidate, resume_restore,
	};
	struct hib_options defaults;
	struct cycle c = { .rc = { .t = t },
			   .snap = snap,
			   .o = o,
			   .t0 = hib_now_ms(),
			   .cpu0 = hib_cpu_sample() };
	int r = 0;

	if (!o) {
		hib_options_init(&defaults);
		c.o = &defaults;
	}
	c.rc.io_mode = c.o->io_mode;
	/* Phase after phase, until one fails or decides how the cycle ends. */
	for (size_t i = 0; i < ARRAY_SIZE(phases) && r == 0 && !c.outcome; i++)
		r = phases[i](&c);
	resume_unwind(&c, r);
	if (r < 0)
		return r;
	if (ret_outcome)
		*ret_outcome = c.outcome;
	if (ret_stats)
		*ret_stats = c.stats;
	return 0;
}
