// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Hibernate: the cycle, phase by phase (hib_suspend, then its phases in
 * order).
 *
 *   prepare      check the target (admit.c), allocate everything, zram out of
 *                the way (zram.c), mlockall, room for the extent map (map.c)
 *   freeze       FREEZE
 *   snapshot     CREATE_IMAGE (resumed? take the report, and done)
 *   write        stream (writer.c): reader (this thread) → codec workers →
 *                writer thread (allocates swap pages, writes blocks); map
 *                (map.c), header, [verify (verify.c)], sync
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
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <time.h>

#include "engine/suspend-priv.h"
#include "pipeline/crypt.h"
#include "storage/dmstack.h"
#include "storage/ioq.h"
#include "util/cpustat.h"

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
	struct hib_zram_plan zram;  /* zram areas; those prepare swapped off are marked */
	uint64_t t0;                /* FREEZE began (ms) */
	uint64_t tp;                /* where the last log_phase() ended */
	struct hib_cpu_sample cpu0; /* the CPUs' busy time when the write began */
};

static int hibernate_prepare(struct cycle *c);
static int hibernate_freeze(struct cycle *c);
static int hibernate_snapshot(struct cycle *c);
static int hibernate_write(struct cycle *c);
static int hibernate_seal(struct cycle *c);
static int hibernate_power_down(struct cycle *c);
static void hibernate_unwind(struct cycle *c, int r);

int hib_suspend(struct hib_target *t, struct hib_snapshot *snap, const struct hib_options *o,
		enum hib_suspend_outcome *ret_outcome, struct hib_stats *ret_stats)
{
	static int (*const phases[])(struct cycle *) = {
		hibernate_prepare, hibernate_freeze, hibernate_snapshot,
		hibernate_write,   hibernate_seal,   hibernate_power_down,
	};
	struct cycle c = {
		.sc = { .t = t,
			.snap = snap,
			.o = o,
			.snap_mu = PTHREAD_MUTEX_INITIALIZER,
			.pool = { .mu = PTHREAD_MUTEX_INITIALIZER } },
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
		r = suspend_verify_new(sc);
		if (r < 0)
			return r;
	}
	if (hib_snapshot_can(sc->snap, HIB_SNAP_CAP_FREEZES_SYSTEM)) {
		r = engine_fs_buf_new(&sc->fs);
		if (r < 0)
			return log_err(r, "allocating the mount table's buffer failed: %m");
	}
	return 0;
}

/* Those, and the extent map's (suspend_reserve_map). */
static void frozen_bufs_free(struct suspend_ctx *sc)
{
	suspend_verify_free(sc); /* before the map: reads of its pages may be in flight */
	engine_fs_buf_free(&sc->fs);
	extmap_free(&sc->map);
	free(sc->map_offs);
	free(sc->map_page);
}

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
	r = suspend_check_target(t, sc->snap, c->orig_page, sc->o->auto_swapon);
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
	r = suspend_alloc_page(sc, &sc->hdr_off);
	if (r < 0)
		return log_err(r, "%s: no page for the image header: %m", hib_target_name(t));
	return 0;
}

/* Everything the cycle needs is allocated now: nothing may need swap once frozen. */
static int prepare_buffers(struct cycle *c)
{
	struct suspend_ctx *sc = &c->sc;
	const struct hib_options *o = sc->o;
	uint32_t block_bytes = c->block_bytes;
	int r;

	sc->image_id = hib_random_u64();
	r = engine_pipe_new(o, block_bytes, sc->image_id, suspend_encode_work, block_bytes,
			    codec_record_bound(block_bytes), 0, &sc->ep);
	if (r < 0)
		return log_err(r, "allocating the pipeline's buffers failed: %m");
	r = suspend_writer_new(sc);
	if (r < 0)
		return r;
	r = frozen_bufs_new(sc);
	if (r < 0)
		return r;
	r = suspend_pool_new(sc);
	if (r < 0)
		return log_err(r, "allocating the pool of pages taken ahead failed: %m");
	/* Adaptive needs worker threads (inline, the codec is the reader) and
	 * asynchronous writes (a synchronous write hides the disk's rate). */
	sc->adaptive = !o->no_adaptive && o->codec != HIB_COMPRESS_NONE && sc->ep.workers > 0 &&
		       hib_ioq_is_uring(sc->ioq);
	adapt_init(&sc->adapt, sc->ep.workers);
	for (unsigned i = 0; i < (sc->ep.workers ? sc->ep.workers : 1); i++) {
		codec_ctx_set_userdata(sc->ep.ctx[i], sc);
		codec_ctx_set_timing(sc->ep.ctx[i], sc->adaptive);
	}
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
		r = suspend_zram_move_out(&c->sc, &c->zram);
	if (r < 0)
		return r;
	if (hib_snapshot_can(c->sc.snap, HIB_SNAP_CAP_FREEZES_SYSTEM) &&
	    mlockall(MCL_CURRENT | MCL_FUTURE) < 0)
		log_warn("mlockall failed (%s): pages of this program may be swapped",
			 strerror(errno));
	c->phase = SUSPEND_PREPARED;
	/* Last: the area's free pages as the freeze will find them. */
	return suspend_reserve_map(&c->sc, c->block_bytes);
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
	return suspend_image_size_wish(&c->sc);
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
	int in_suspend = 0, r;
	bool held = false;

	r = suspend_create_image(sc, &in_suspend, &held);
	if (held)
		c->phase = SUSPEND_SNAPSHOT;
	if (r < 0)
		return r;
	if (!in_suspend) {
		take_report(c);
		c->outcome = HIB_SUSPEND_RESUMED;
		return 0;
	}
	c->h->stat_snapshot_ms = hib_now_ms() - c->t0;
	log_phase(&c->tp, "snapshot");
	log_info("snapshot: %llu MiB in %llu ms", (unsigned long long)(sc->stream_bytes >> 20),
		 (unsigned long long)c->h->stat_snapshot_ms);
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
	struct hib_cpu_sample cpu1;
	int r;

	h->stream_bytes = sc->stream_bytes;
	h->stream_xxh3 = stream_xxh3;
	h->nr_blocks = sc->nr_blocks;
	h->data_pages = sc->map.pages;
	h->map_extents = (uint32_t)sc->map.n;
	h->stat_stored_bytes = sc->stored_pages * HIB_PAGE_SIZE;
	h->stat_threads = sc->ep.workers;
	r = suspend_write_map(sc, &h->map_offset, &h->map_pages);
	if (r < 0)
		return r;
	hib_test_pause("map");
	h->stat_write_ms = hib_now_ms() - t0;
	cpu1 = hib_cpu_sample();
	c->stats.cpu_busy_ms = hib_cpu_busy_ms(&c->cpu0, &cpu1);
	c->stats.cpus = hib_cpus_online();
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

	c->cpu0 = hib_cpu_sample();
	r = suspend_write_stream(sc, &stream_xxh3);
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
		r = suspend_verify_image(sc, stream_xxh3);
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

	suspend_write_log(sc, h->stat_write_ms);
	c->stats.stream_bytes = sc->stream_bytes;
	c->stats.stored_bytes = (sc->stored_pages + h->map_pages + 1) * HIB_PAGE_SIZE;
	c->stats.extents = sc->map.n;
	c->stats.threads = sc->ep.workers;
	c->stats.snapshot_ms = h->stat_snapshot_ms;
	c->stats.io_ms = h->stat_write_ms;
	c->stats.pipeline_bytes = pipeline_memory(sc->ep.pipe);
	c->stats.blocks = sc->nr_blocks;
	c->stats.snapshot_io_ms = sc->snap_ns / 1000000;
	c->stats.codec_ms = pipeline_work_ns(sc->ep.pipe) / 1000000;
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
	if (c->phase >= SUSPEND_FROZEN) {
		suspend_image_size_put_back(sc);
		snap->ops->unfreeze(snap);
	}
	if (c->phase >= SUSPEND_PREPARED && hib_snapshot_can(snap, HIB_SNAP_CAP_FREEZES_SYSTEM))
		munlockall();
	hib_ioq_free(sc->ioq);
	free(sc->writer);
	suspend_pool_free(sc);
	crypt_key_free(sc->key);
	engine_pipe_free(&sc->ep);
	frozen_bufs_free(sc);
	free(c->h);
	free(c->orig_page);
	suspend_zram_put_back(&c->zram);
}
