/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Resume of an encrypted image: its block records read into memory while the
 * secret is awaited (a passphrase typed, a key file read, the TPM's answer or
 * its PIN), so that the load starts from memory instead of the disk.  Nothing
 * can be decrypted yet; what holds without the key is checked (each record's
 * framing, its seal flag, its checksum over header and ciphertext).
 *
 * Bounded: MemAvailable never goes below what the load still needs (the
 * kernel's pages for the whole stream, the pipeline's buffers), what the KDF
 * takes meanwhile (Argon2id's memory) plus a reserve;
 * what does not fit is read after, by the load's reader.  A refused image, a
 * wrong secret, a failed read: the records are freed and the cycle goes on as
 * without them (the load reads from the disk and meets what it meets).
 *
 * Threads: start and stop on the resume's thread; the reading on a thread of
 * its own in between, which logs nothing (a passphrase is being typed on the
 * console); drain on the load's reader thread, after stop.
 */
#ifndef HIB_ENGINE_PRELOAD_H
#define HIB_ENGINE_PRELOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"

struct engine_preload;

/* Where a reader of the image is: the next block, its logical page, and the
 * stream byte it starts at. */
struct engine_read_pos {
	uint32_t block;
	uint64_t lp;
	uint64_t stream_off;
};

/*
 * Start reading the blocks of @img (encrypted) on @t, in order from the first,
 * on a thread of its own. *@ret is NULL, with the reason logged, when nothing
 * is read: o->no_preload, no memory to spare, the read-ahead or the thread not
 * made. Never fails the cycle.
 */
void engine_preload_start(struct hib_target *t, const struct image *img,
			  const struct hib_options *o, struct engine_preload **ret);
/*
 * The secret was answered: the reading stops where it is and the log says
 * how far it got. @keep (the key opened the image): the records stay for the
 * load; otherwise, and after a failed read, they are freed and *@p is NULL.
 * The bytes read ahead and the time it took into *@ret_bytes, *@ret_ms.
 */
void engine_preload_stop(struct engine_preload **p, bool keep, uint64_t *ret_bytes,
			 uint64_t *ret_ms);
/*
 * The load's reader: every record in memory to @pipe in order, each job's
 * input pointed at it (not copied); *@pos where the disk takes over, and *@ra the
 * read-ahead already running there (NULL: the reader makes its own).
 * -ECANCELED when the pipeline was aborted. @p NULL: *@pos is the start.
 */
int engine_preload_drain(struct engine_preload *p, struct hib_pipeline *pipe,
			 struct engine_read_pos *pos, struct hib_readahead **ra);
/* The records' memory is given back here, in one munmap(), and not as they
 * are drained (the jobs read them where they are): the floor kept the stream's pages free beside them, and after
 * a restore this process and its memory are gone with the boot kernel, so a
 * resume that succeeds never pays for giving it back. NULL is fine. */
void engine_preload_free(struct engine_preload *p);

/* What must stay free while reading ahead for @h: the load's floor
 * (engine_load_floor) and Argon2id's memory for the secret awaited (the KDF
 * runs while the image is read), out of @mem_total bytes. */
uint64_t engine_preload_floor(const struct hib_options *o, const struct hib_header *h,
			      uint64_t mem_total);

#endif
