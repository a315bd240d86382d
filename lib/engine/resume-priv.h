/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of the resume share, and only they include: the stream's
 * context (the load's reader thread's too), and what resume.c's phases call
 * in unlock.c (the key of an encrypted image opened) and load.c (the load).
 */
#ifndef HIB_ENGINE_RESUME_PRIV_H
#define HIB_ENGINE_RESUME_PRIV_H

#include <pthread.h>

#include "engine/engine.h"

struct engine_preload;

struct resume_ctx {
	struct hib_target *t;
	uint8_t *key; /* data key of an encrypted image */
	struct image img;
	struct engine_pipe ep;
	int reader_err;
	uint64_t snap_ns; /* time inside /dev/snapshot's writev() */
	/* The longest block in there, and the stream byte it began at: the one
	 * where the kernel takes its pages for the whole image. */
	uint64_t snap_max_ns, snap_max_at;
	enum hib_io_mode io_mode;   /* the options', for the reader */
	struct engine_preload *pre; /* blocks read while the secret was awaited */
	uint64_t preload_bytes, preload_ms;
	/* Where the time after the secret goes (ns), for the log line. */
	uint64_t kdf_ns, stop_ns, first_ns, wait_ns;
	/* The reader's (its thread's alone): waiting for a free slot (the
	 * workers and the feeder behind), reading a block off the read-ahead
	 * (the disk behind, and the copy). */
	uint64_t read_slot_ns, read_block_ns;
	/* The read-ahead's window in chunks (set before the reader starts), and
	 * the most it held at once (the reader's). */
	unsigned ra_window;
	uint64_t ra_peak_bytes;
	/* The reader's read-ahead while it reads, for the feeder to widen when
	 * the kernel has taken its pages (under ra_mu). */
	pthread_mutex_t ra_mu;
	struct hib_readahead *ra;
	/* CPU time (ns) of the reader's thread and of the feeder's. */
	uint64_t read_cpu_ns, feed_cpu_ns;
};

/* unlock.c: the key of an encrypted image into rc->key (the passphrase or key
 * file, the TPM with its PIN or fallback passphrase), the header's MAC
 * checked with it, while the image is read ahead into rc->pre; each secret
 * wiped once tried (o->forget_secret). A failure is logged: the image cannot
 * be unlocked here. */
int resume_unlock_image(struct resume_ctx *rc, const struct hib_options *o);

/* load.c: the image's blocks read (rc->pre's first), checked, decoded and
 * fed to @snap in order, the stream's checksum checked, the kernel's "whole
 * image" asked for; the data key wiped either way. A failure is logged. */
int resume_load_stream(struct resume_ctx *rc, struct hib_snapshot *snap,
		       const struct hib_options *o);

#endif
