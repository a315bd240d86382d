/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libhibernate — save a running Linux system to disk through /dev/snapshot
 * and bring it back.
 *
 * Contract for every function here, unless its comment says otherwise:
 *   @return 0 (or a documented positive value) on success, -errno on failure.
 *   Output parameters are named ret_* and written only on success.
 *   Nothing here prints to stdout/stderr or exits: messages go through the
 *   log callback (hib_set_log), and the caller owns the terminal.
 *
 * Sections: logging · errors · targets · snapshot devices · options ·
 *           the cycle · images on disk.
 */
#ifndef HIBERNATE_H
#define HIBERNATE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================= */
/* Logging                                                                 */
/* ======================================================================= */

enum hib_loglevel {
	HIB_LOG_SILENT = 0,
	HIB_LOG_ERR = 1,
	HIB_LOG_WARN = 2,
	HIB_LOG_PROGRESS = 3,
	HIB_LOG_INFO = 4,
	HIB_LOG_DEBUG = 5,
};

typedef void (*hib_log_fn)(enum hib_loglevel level, const char *msg, void *userdata);

/* Where the library's messages go; NULL drops them. Not thread-safe to change
 * while a cycle runs. */
void hib_set_log(hib_log_fn fn, void *userdata);

/* Progress of a long phase: done and total in bytes of the stream. */
typedef void (*hib_progress_fn)(const char *phase, uint64_t done, uint64_t total, void *userdata);

/* Which half of a cycle a struct hib_stats (below, "The cycle") describes. */
enum hib_stats_side {
	HIB_STATS_HIBERNATE = 0, /* the image is on disk, signature and all (hib_suspend) */
	HIB_STATS_RESUME,        /* the image is loaded into the kernel (hib_resume) */
	HIB_STATS_RESUMED,       /* the restored system: what both halves left (resumed_report) */
};

struct hib_stats;
/* A side's numbers, final: called with every other process frozen, just before the
 * power-down or the restore (which do not return), so it must neither block nor
 * allocate. */
typedef void (*hib_stats_fn)(enum hib_stats_side side, const struct hib_stats *st, void *userdata);

/* ======================================================================= */
/* Errors                                                                  */
/* ======================================================================= */

/*
 * Why a call failed, in words for the user. A function that takes one (@err,
 * which may be NULL) clears it on entry and fills it on every failure path,
 * -ENOMEM included: @error is the negative errno it returns, @msg one
 * complete message naming the object (file, device, spec) and, where there
 * is one, the fix. After a success @error is 0 and @msg is "".
 */
struct hib_error {
	int error;
	char msg[1024];
};

/* ======================================================================= */
/* Targets: where the image lives                                          */
/* ======================================================================= */

enum hib_target_kind {
	HIB_TARGET_DEVICE = 1,    /* a block device (partition, or a swapfile by offset) or a
				     disk image file, read and written as it is */
	HIB_TARGET_SWAPFILE = 2,  /* a swap file, written through the blocks under it */
	HIB_TARGET_PLAINFILE = 3, /* a prepared file that is not swap (hibernate prepare-file) */
};

/* What page 0 of the target says. */
enum hib_sig_state {
	HIB_SIG_SWAP = 1,    /* SWAPSPACE2: a usable swap area, no image */
	HIB_SIG_IMAGE = 2,   /* our image signature (tail checksum valid) */
	HIB_SIG_BROKEN = 3,  /* our signature but the tail does not check */
	HIB_SIG_KERNEL = 4,  /* the kernel's own image (S1SUSPEND) or another tool's */
	HIB_SIG_FOREIGN = 5, /* not swap at all */
	HIB_SIG_FILE = 6,    /* a prepared image file (HIBIMGFILE), no image */
};

struct hib_target;

/*
 * Resolve a target specification and open it.
 * @spec: "/dev/…", "UUID=…", "LABEL=…", "PARTUUID=…", "MAJ:MIN", or a path to
 *        a regular file (host tests; treated like a partition).
 * @offset_pages: page of the swap header inside the device (resume_offset=),
 *        0 for a partition.
 * @writable: open for writing (hibernate, invalidate, resume's invalidation).
 * Returns -ENOENT when the spec names nothing, -ENODEV when it is not a block
 * device or file, -EINVAL for a malformed spec, other -errno from open().
 * Nothing is written.
 */
int hib_target_open(const char *spec, uint64_t offset_pages, bool writable,
		    struct hib_target **ret);
/*
 * Open a swap file or prepared image file through the device under it: the
 * file is mapped with FIEMAP (see hib_file_locate for what is refused), its
 * filesystem's block device is opened, and the target's page 0 is the file's
 * first page. The mapping is checked by reading that page both through the
 * filesystem and through the device. @err: "FILE: cannot be a hibernation
 * target: why".
 */
int hib_target_open_file(const char *path, bool writable, struct hib_target **ret,
			 struct hib_error *err);
void hib_target_close(struct hib_target *t);
enum hib_target_kind hib_target_kind(const struct hib_target *t);
/* The swap file or image file behind a file target, else NULL. */
const char *hib_target_file(const struct hib_target *t);

/*
 * Make @path (a regular file on ext4 or xfs; refused on btrfs) a plain image file of @bytes:
 * every byte written (no holes, no unwritten extents), synced, and marked
 * HIBIMGFILE in its first page. Refuses to overwrite a file that exists
 * unless it is already one. @err: "FILE: why".
 */
int hib_prepare_file(const char *path, uint64_t bytes, struct hib_error *err);
void hib_target_closep(struct hib_target **t);

/* What is opened: the device (the one under a file target's file), or a disk image file. */
const char *hib_target_path(const struct hib_target *t);
/* What messages call the target: the file of a file target, else hib_target_path. */
const char *hib_target_name(const struct hib_target *t);
dev_t hib_target_devnum(const struct hib_target *t); /* 0 for a regular file */
uint64_t hib_target_offset_pages(const struct hib_target *t);
uint64_t hib_target_size(const struct hib_target *t); /* bytes of the device/file */
/* Opened for writing (hibernate, invalidate, resume's invalidation)? */
bool hib_target_writable(const struct hib_target *t);
/* Bytes of a file target's file; 0 for other targets. */
uint64_t hib_target_file_size(const struct hib_target *t);
/* A swap file target's pages in unwritten extents (made with fallocate,
 * allowed in swap files only); 0 for other targets. */
uint64_t hib_target_file_unwritten(const struct hib_target *t);

/* Read page 0 and say what it holds. */
int hib_target_probe(struct hib_target *t, enum hib_sig_state *ret);
const char *hib_sig_state_name(enum hib_sig_state s);

/*
 * Is this target an active swap area right now (/proc/swaps)?
 * @proc_swaps: path, NULL for "/proc/swaps" (tests pass their own).
 * Returns 1 active, 0 not, -errno when the table can't be read.
 */
int hib_target_swap_active(const struct hib_target *t, const char *proc_swaps);
/* Is the swap area /proc/swaps names @swaps_name (\ooo escapes and all) this
 * target? By identity, not by name: /dev/vda1 and /dev/disk/by-uuid/… are the
 * same area, and so are a swap file and its device at its first page. */
bool hib_target_is_area(const struct hib_target *t, const char *swaps_name);

/*
 * Turn off the swap area hib_suspend turned on for its cycle (auto_swapon);
 * 0 at once when it did not. Call it after the snapshot device is closed,
 * whichever way the cycle ended: newer kernels (7.2 does, 6.12 does not;
 * "mm/swap, PM: hibernate: fix swapoff race in uswsusp by pinning swap
 * device") hold the swap area named through /dev/snapshot against swapoff
 * (EBUSY) until it is closed.
 * -errno from swapoff(2), the area then still on.
 */
int hib_target_auto_swapoff(struct hib_target *t);

/* Where hib_target_resolve found the target. */
enum hib_target_source {
	HIB_TARGET_FROM_SPEC = 0,      /* hib_target_open*(): the caller named it */
	HIB_TARGET_FROM_OPTION = 1,    /* --device */
	HIB_TARGET_FROM_CONFIG = 2,    /* device = in the configuration file */
	HIB_TARGET_FROM_CMDLINE = 3,   /* resume= on the kernel command line */
	HIB_TARGET_FROM_ONLY_SWAP = 4, /* the only active swap partition */
};

/* The configuration file whose device = and offset = a request carries. */
#define HIB_CONFIG_PATH "/etc/hibernate.conf"

/* What hib_target_resolve chooses from. */
struct hib_target_request {
	const char *spec;      /* --device, or NULL */
	uint64_t offset_pages; /* --offset, when offset_set */
	bool offset_set;
	const char *config_spec;      /* device = in the config file, or NULL */
	uint64_t config_offset_pages; /* offset = in the config file, when config_offset_set */
	bool config_offset_set;
	const char *cmdline;    /* the kernel command line's text; NULL reads /proc/cmdline */
	const char *proc_swaps; /* NULL for /proc/swaps */
	bool writable;
	bool file_target; /* a regular file named without an offset is opened with
					 hib_target_open_file (hibernate writes the blocks under
					 it), not as a disk image */
};

/*
 * Choose the target, in the documented order, and open it: @req->spec, else
 * @req->config_spec, else the kernel command line's resume=, else the only
 * active swap partition. The offset is --offset if set, else offset = if
 * set, else resume_offset= when resume= chose, else 0. With
 * @req->file_target, a regular file chosen while neither offset is set is a
 * file target. hib_target_source() then says which rung chose.
 * -ENOTUNIQ: several swap partitions are active and nothing says which;
 * -ENOENT: nothing names a target, or what is named does not exist; else as
 * hib_target_open and hib_target_open_file. @err says which, and what to do.
 */
int hib_target_resolve(const struct hib_target_request *req, struct hib_target **ret,
		       struct hib_error *err);
enum hib_target_source hib_target_source(const struct hib_target *t);
/* How it was chosen, to follow the word "chosen": "by --device", "by resume= on the
 * kernel command line", "as the only active swap partition", … */
const char *hib_target_source_name(enum hib_target_source s);

/* Parse resume= / resume_offset= / noresume from a kernel command line. */
struct hib_cmdline {
	char *resume;           /* malloc'ed or NULL */
	uint64_t resume_offset; /* pages; 0 if absent */
	bool noresume;
	bool hibernate_no; /* hibernate=no or nohibernate */
};
int hib_cmdline_parse(const char *text, struct hib_cmdline *ret);
void hib_cmdline_free(struct hib_cmdline *c);

/*
 * Where a file lives on its block device (`hibernate offset`): the
 * filesystem's device and UUID and the file's first page on it, which is
 * what resume= and resume_offset= name. Refuses files with holes, shared,
 * encoded or inline extents, unwritten ones (fallocate) unless the file is a
 * swap file (SWAPSPACE2 in its first page); on btrfs (device and offsets from
 * its device list and chunk tree; root only) also compressed and
 * copy-on-write files, DUP/RAID data, several devices and image files;
 * @err then says "FILE: cannot be located for resume: why". Strings are
 * malloc'ed.
 */
struct hib_file_location {
	char *device;
	char *uuid; /* NULL when the filesystem has none */
	uint64_t offset_pages;
	uint64_t file_pages;
	uint64_t extents;
	uint64_t unwritten_pages; /* of a swap file made with fallocate */
	char fstype[16];
};
int hib_file_locate(const char *path, struct hib_file_location *ret, struct hib_error *err);
void hib_file_location_free(struct hib_file_location *l);

/* ======================================================================= */
/* Snapshot devices                                                        */
/* ======================================================================= */

struct hib_snapshot;

enum hib_snapshot_mode { HIB_SNAP_HIBERNATE, HIB_SNAP_RESUME };

/* Open the kernel's /dev/snapshot (@path NULL for the default). -EPERM when
 * hibernation is unavailable (nohibernate, lockdown, secretmem), -EBUSY when
 * another program holds it, -ENOENT when the kernel lacks it. */
int hib_snapshot_open_dev(const char *path, enum hib_snapshot_mode mode, struct hib_snapshot **ret);

void hib_snapshot_close(struct hib_snapshot *s);
void hib_snapshot_closep(struct hib_snapshot **s);

/* ======================================================================= */
/* Options of a cycle                                                      */
/* ======================================================================= */

/* The numbers are the image header's (lib/format/format.h, enum hib_codec). */
enum hib_codec_choice { HIB_COMPRESS_NONE = 0, HIB_COMPRESS_LZ4 = 1, HIB_COMPRESS_ZSTD = 2 };

enum hib_powerdown {
	HIB_POWERDOWN_SHUTDOWN = 0, /* reboot(RB_POWER_OFF) */
	HIB_POWERDOWN_PLATFORM,     /* ACPI S4 through the kernel */
	HIB_POWERDOWN_REBOOT,
	HIB_POWERDOWN_NONE,    /* return after writing, image kept (tests) */
	HIB_POWERDOWN_SUSPEND, /* suspend to RAM; the image is there if power is lost */
	HIB_POWERDOWN_TEST,    /* write, then return so the caller restores it at once:
				       see HIB_SUSPEND_TEST_WRITTEN */
};

/*
 * How the image's blocks move between memory and the target.
 * HIB_IO_AUTO: io_uring, a bounded queue of reads and writes in flight;
 *     where io_uring is unavailable (old kernel, disabled by sysctl,
 *     seccomp) the same as HIB_IO_SYNC, said at loglevel 5.
 * HIB_IO_SYNC: plain pread/pwrite, one at a time. Adaptive compression is
 *     then off: it tells a waiting disk by its queue.
 */
enum hib_io_mode { HIB_IO_AUTO = 0, HIB_IO_SYNC = 1 };

/*
 * zram swap beside the target (Ubuntu, Fedora): the kernel frees memory for
 * the snapshot by swapping out to the area of highest priority, and a zram
 * area keeps what it takes in RAM, so the snapshot can fail for want of
 * memory, or carry those pages anyway.
 * HIB_ZRAM_SWAPOFF: before the freeze, swap every zram area off (its pages
 *     come back into RAM, and what must go then goes to the target); on
 *     again, at its priority, after resume, failure or cancel. Refused
 *     (-ENOMEM, before anything is frozen) when its pages would not fit in
 *     the memory available and the other swap areas.
 * HIB_ZRAM_KEEP: leave zram as it is.
 */
enum hib_zram_mode { HIB_ZRAM_SWAPOFF = 0, HIB_ZRAM_KEEP = 1 };

/* The user's secret for an encrypted image. */
enum hib_secret_kind { HIB_SECRET_PASSPHRASE = 1, HIB_SECRET_KEYFILE = 2 };
struct hib_secret {
	enum hib_secret_kind kind;
	const void *data;
	size_t len;
};

/*
 * require-encryption: the images hib_resume accepts, by how they are sealed.
 * Decided from the header before a block is read; any other image is refused
 * and discarded (-EPERM, the swap signature put back). Without it, whoever
 * can write the swap area while the machine is off can have a plain image of
 * their own restored: its checksums need no key.
 */
enum hib_require {
	HIB_REQUIRE_NOTHING = 0,    /* any image, encrypted or not */
	HIB_REQUIRE_PASSPHRASE = 1, /* encrypted, its key wrapped under a passphrase */
	HIB_REQUIRE_KEY_FILE = 2,   /* encrypted, its key wrapped under a key file */
	HIB_REQUIRE_TPM = 3,        /* encrypted, its key sealed to the TPM (encrypt = tpm) */
};
/* For messages: "a passphrase", "a key file"; "nothing" for HIB_REQUIRE_NOTHING. */
const char *hib_require_name(enum hib_require r);

/*
 * Resume of an encrypted image: asked for the secret, @attempt counting from
 * 1. Fill @ret (the data must stay valid until the next call or the end of
 * hib_resume) and return 0, or return -errno to give up.
 */
typedef int (*hib_secret_fn)(int attempt, const char *what, struct hib_secret *ret, void *userdata);

/* The machine key's enrollment (lib/format/format.h; pipeline/tpm.h makes one). */
struct hib_tpm_machine;

/* Hibernate with the image's key sealed to the TPM 2.0 (encrypt = tpm). */
struct hib_tpm_options {
	uint32_t pcrs;                     /* bit n: PCR n (SHA-256); 0: those of 0..7 it has */
	const struct hib_secret *pin;      /* the PIN it also needs (NULL: none) */
	const struct hib_secret *fallback; /* a passphrase that opens the image too (NULL: none) */
	/* The enrollment the image is bound to, whose storage key is pinned
	 * (required: an image nobody can tell from a forgery is not written). */
	const struct hib_tpm_machine *machine;
};

#define HIB_IMAGE_SIZE_DEFAULT (-1)
#define HIB_IMAGE_SIZE_KERNEL (-2)

struct hib_options {
	enum hib_codec_choice codec;
	int codec_level;  /* 0 = codec default */
	unsigned threads; /* workers; 0 = one per online CPU */
	/* PREF_IMAGE_SIZE bytes, a limit on the stream; HIB_IMAGE_SIZE_DEFAULT:
	 * the kernel's preference, raised a little where the memory in use is
	 * just above it; HIB_IMAGE_SIZE_KERNEL: the kernel's, untouched. */
	int64_t image_size;
	enum hib_powerdown powerdown;
	uint32_t block_bytes; /* stream bytes per block; 0 = default (256 KiB) */
	hib_progress_fn progress;
	void *progress_userdata;
	/* Polled while the image is written; returning true cancels the cycle
	 * (HIB_SUSPEND_CANCELLED: signature untouched, processes thawed). NULL: never. */
	bool (*cancel)(void *userdata);
	void *cancel_userdata;
	/* Read the written image back and check every block before the signature. */
	bool verify;
	/* Compress every block; by default (false) blocks are stored raw while the
	 * disk waits for the codec, so compression never makes hibernating slower. */
	bool no_adaptive;
	/* Writing and reading the image: see enum hib_io_mode (default AUTO). */
	enum hib_io_mode io_mode;
	/* Turn on the swap area for the cycle if it is not active; the caller
	 * turns it off again after (hib_target_auto_swapoff). */
	bool auto_swapon;
	/* zram swap areas during the cycle: see enum hib_zram_mode (default SWAPOFF). */
	enum hib_zram_mode zram;
	/* Hibernate: encrypt the image with this secret (NULL: not encrypted). */
	const struct hib_secret *secret;
	/* Hibernate with a passphrase: Argon2id's passes (1..4; 0 = 2) and memory
	 * (8..256 MiB, at most half of RAM; 0 = 64 MiB). Stored in the image: a
	 * resume uses what the image says. */
	uint32_t kdf_passes;
	uint64_t kdf_memory;
	/* Hibernate: encrypt the image with a key sealed to the TPM (NULL: not);
	 * before @secret. Resume needs nothing: the image says what it needs, and
	 * asks @ask_secret for a PIN ("TPM PIN") or the fallback passphrase
	 * ("TPM fallback passphrase"). */
	const struct hib_tpm_options *tpm;
	/* Resume: how to ask for the secret of an encrypted image, and how often. */
	hib_secret_fn ask_secret;
	void *ask_secret_userdata;
	int secret_attempts; /* 0 = 3 */
	/* Resume: only images sealed this way (see enum hib_require; default: any). */
	enum hib_require require_encryption;
	/* Resume, a TPM-sealed image: the policy is the configuration's
	 * (tpm-pcrs, tpm-pin), never the image's own. It is refused (-EPERM),
	 * before anything is unsealed, unless sealed to exactly the PCRs of
	 * @tpm_pcrs (0: auto, those of 0..7 the TPM has) and, with @tpm_pin, to
	 * a PIN. */
	uint32_t tpm_pcrs;
	bool tpm_pin;
	/* Resume: the fallback passphrase of a TPM-sealed image is asked for only
	 * when configured (tpm-fallback = passphrase), never the image's word. */
	bool tpm_fallback;
	/* Resume: the enrollment a TPM-sealed image must be bound to (the copy
	 * in the initramfs); NULL: every TPM-sealed image is refused. */
	const struct hib_tpm_machine *tpm_machine;
	/* Resume: called (with ask_secret_userdata) as soon as the secret
	 * ask_secret gave has been tried, opened or not: wipe it. A restored image
	 * never returns to the caller, and the memory this process leaves behind
	 * is not wiped by the kernel (see lib/engine/resume.c). NULL: not called. */
	void (*forget_secret)(void *userdata);
	/* Resume: called once the image is loaded and verified, right before
	 * processes are frozen for the restore: the last moment another process
	 * can act. The kernel's restore moves the console to its own VT, which a
	 * frozen process holding the VT (a splash, VT_PROCESS) would never
	 * release: a splash is told to quit here. NULL: not called. */
	void (*before_restore)(void *userdata);
	void *before_restore_userdata;
	/* Resume: an image written by another kernel is kept (for a boot of that
	 * kernel: HIB_RESUME_KEPT) instead of discarded.  Safe because a later resume
	 * still refuses it when this boot changed the filesystems it remembers. */
	bool keep_on_kernel_mismatch;
	/* Resume, an encrypted image: do not read it into memory while its
	 * secret is awaited (resume-preload = no); by default it is, bounded by
	 * the memory available (lib/engine/preload.h). */
	bool no_preload;
	/* Resume: a filesystem the image remembers that cannot be checked here
	 * (its device not visible, or a type whose changes cannot be seen) is
	 * logged and the restore goes on, instead of refusing the image. */
	bool allow_unchecked_fs;
	/* Called once per side with its numbers (HIB_STATS_HIBERNATE from
	 * hib_suspend, HIB_STATS_RESUME from hib_resume); NULL: never. */
	hib_stats_fn stats;
	void *stats_userdata;
};

/* Defaults: lz4, one worker per CPU, kernel's image size, shutdown, io_uring where
 * available. */
void hib_options_init(struct hib_options *o);
int hib_codec_parse(const char *text, enum hib_codec_choice *ret_codec, int *ret_level);
/* The name of a codec choice, or of a header's codec (hib_image_info's codec). */
const char *hib_codec_name(unsigned codec);

/* ======================================================================= */
/* The cycle                                                               */
/* ======================================================================= */

struct hib_stats {
	uint64_t stream_bytes; /* what /dev/snapshot gave (or took) */
	uint64_t stored_bytes; /* bytes of the image on disk, all pages counted */
	uint64_t extents;
	uint32_t threads;
	uint64_t snapshot_ms;    /* freeze + atomic copy */
	uint64_t io_ms;          /* moving the stream to/from disk */
	uint64_t pipeline_bytes; /* memory the pipeline's buffers took */
	uint32_t blocks;         /* blocks of the image */
	uint64_t snapshot_io_ms; /* of io_ms, the time inside /dev/snapshot's read()
				      (hibernate) or write() (resume): the kernel's share */
	uint64_t preload_bytes;  /* resume: of the image, read ahead while its secret
				      was awaited */
	uint64_t preload_ms;     /* resume: the time that reading took */
	bool adaptive;           /* hibernate: adaptive compression was on */
	uint64_t raw_blocks;     /* hibernate: blocks it stored raw by choice */
	uint64_t codec_ms;       /* CPU time the codec workers spent on the blocks, summed over
				    them: compressing, checksumming, sealing (hibernate) or
				    opening, checking, decompressing (resume) */
	uint64_t cpu_busy_ms;    /* the write (hibernate) or the load (resume, from its start): the
				 time the CPUs were not idle, summed over them (/proc/stat; 0 if
				 unreadable) */
	uint32_t cpus;           /* CPUs online */
	/* HIB_SUSPEND_RESUMED: what the cycle's two halves reported, if they did
	 * (resumed_report; stream_bytes, stored_bytes, snapshot_ms and threads
	 * are then the hibernate side's, io_ms its write; stored_bytes counts
	 * the data blocks only, as the report keeps them). */
	bool resumed_report;
	uint64_t load_ms; /* the resume side, start to restore */
	uint32_t load_threads;
	uint64_t written_unix; /* when the image was written */
	uint64_t loaded_unix;  /* when the resume side restored it */
};

/* How a hibernate that did not fail ended. */
enum hib_suspend_outcome {
	HIB_SUSPEND_RESUMED = 1, /* the image was restored and we run again */
	HIB_SUSPEND_WRITTEN = 2, /* powerdown NONE (or a snapshot device whose power-off
					returns): image written, system still up */
	HIB_SUSPEND_RAM = 3,     /* powerdown SUSPEND: woke from RAM, image discarded */
	/* powerdown TEST: image written and valid, every other process SIGSTOPped
	 * (the snapshot is freed and thawed). Close the snapshot, then hib_resume()
	 * from the target; if the image is not restored, hib_test_cycle_abort(). */
	HIB_SUSPEND_TEST_WRITTEN = 4,
	HIB_SUSPEND_CANCELLED = 5, /* o->cancel said so while the image was written: nothing
					saved, swap signature as it was, processes thawed */
};

/*
 * Hibernate: verify the target holds a swap signature (refusing anything else
 * before a single byte is written or a process frozen), freeze, make the
 * atomic copy, write the image, write the signature last, power down.
 * Returns 0 and how it ended in *@ret_outcome (HIB_SUSPEND_RESUMED in the
 * resumed system; the others with the system thawed, and the swap signature
 * as it was unless the image is kept: WRITTEN, TEST_WRITTEN), or -errno with
 * the system thawed and the swap signature as it was.
 * @ret_outcome and @ret_stats may be NULL.
 */
int hib_suspend(struct hib_target *t, struct hib_snapshot *snap, const struct hib_options *o,
		enum hib_suspend_outcome *ret_outcome, struct hib_stats *ret_stats);

/*
 * The test cycle (hibernate --test), only: after HIB_SUSPEND_TEST_WRITTEN,
 * when the image was not restored (hib_resume failed, or could not be run),
 * let the processes hib_suspend stopped run again (SIGCONT to all).
 */
void hib_test_cycle_abort(void);

/* How a resume that did not fail ended (on the kernel's device, a restore does
 * not end: the restored system runs on from its hib_suspend). */
enum hib_resume_outcome {
	HIB_RESUME_NO_IMAGE = 1, /* nothing to do; not a byte written */
	HIB_RESUME_RESTORED = 2, /* only a snapshot device whose restore returns (the fake) */
	HIB_RESUME_KEPT = 3,     /* another kernel's image, left for a boot of it
					(keep_on_kernel_mismatch); nothing restored or written */
};

/*
 * Resume: if the target holds a valid image, read and verify every block
 * while feeding the kernel, invalidate the signature (restoring SWAPSPACE2),
 * then ATOMIC_RESTORE — which does not return on the real device.
 * Returns 0 and how it ended in *@ret_outcome: HIB_RESUME_NO_IMAGE when
 * there is none (nothing written), HIB_RESUME_KEPT, HIB_RESUME_RESTORED. On
 * any failure, the swap signature is restored (unless the target is
 * read-only: -EBADF, nothing written) and -errno returned: -EBADMSG corrupt,
 * -EXDEV image of another kernel, -EPROTO other format version, -ENODEV no
 * @snap, -EPERM not sealed as @o->require_encryption demands (nothing read
 * past the header, nothing written but the signature and the wiped header).
 * With @o->require_encryption set, an image of another format (HIB_SIG_KERNEL:
 * the kernel's own S1SUSPEND, uswsusp's...) is a downgrade: refused, its
 * signature page made the swap area's again (hib_sig_discard_other), -EPERM;
 * -EBADF if the target is read-only. @ret_outcome and @ret_stats may be NULL.
 */
int hib_resume(struct hib_target *t, struct hib_snapshot *snap, const struct hib_options *o,
	       enum hib_resume_outcome *ret_outcome, struct hib_stats *ret_stats);

/* ======================================================================= */
/* Images on disk                                                          */
/* ======================================================================= */

struct hib_image_info {
	enum hib_sig_state state;
	uint64_t image_id;
	uint64_t created_unix;
	char kernel_release[65];
	char kernel_version[129];
	char machine[16];
	uint64_t stream_bytes;
	uint64_t stored_bytes;
	uint32_t codec;
	uint32_t nr_blocks;
	uint32_t map_extents;
	uint32_t threads;
	uint64_t write_ms;
	uint64_t snapshot_ms;
	bool header_valid; /* the header page was read and checks */
	/* 0: not encrypted; else how its key is kept: 1 a passphrase, 2 a key
	 * file, 3 the TPM (the header's key derivation) */
	uint32_t encryption;
};

/* Describe what the target holds (reads only). */
int hib_image_info(struct hib_target *t, struct hib_image_info *ret);

/*
 * Make the target a plain swap area again: if it holds our signature, put
 * back the bytes the tail replaced (from the header when it checks, else a
 * zeroed tail with SWAPSPACE2) and sync. Returns 1 if something was
 * invalidated, 0 if there was nothing to do, -errno on failure.
 */
int hib_image_invalidate(struct hib_target *t);

/* Library version, "MAJOR.MINOR.PATCH". */
const char *hib_version(void);

#ifdef __cplusplus
}
#endif
#endif
