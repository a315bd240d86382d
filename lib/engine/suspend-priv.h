/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of hibernate's cycle share, and only they include: the
 * stream's context, and what suspend.c's phases call in writer.c (the stream
 * to disk), verify.c (--verify), map.c (the target's pages and the extent
 * map), admit.c (which targets are ours to write) and zram.c (zram out of
 * the way).
 */
#ifndef HIB_ENGINE_SUSPEND_PRIV_H
#define HIB_ENGINE_SUSPEND_PRIV_H

#include <pthread.h>
#include <xxhash.h>

#include "engine/adapt.h"
#include "engine/engine.h"
#include "storage/swaps.h"

/*
 * Pages of the target taken ahead of the writer, in the order the target
 * handed them out (map.c).  The reader takes them while it would otherwise
 * wait for a free slot, so that the writer, the write's busiest thread, need
 * not: ALLOC_SWAP_PAGE is an ioctl a page, ~11 us under TCG, 0.8-1.5 s of a
 * 3.5-5.8 s write.  A ring: the reader fills past its tail, the writer takes
 * from its head; n under mu.  Dry once the target said no.
 */
#define SUSPEND_POOL_PAGES 4096u
struct suspend_pool {
	pthread_mutex_t mu;
	uint64_t *off; /* SUSPEND_POOL_PAGES of them */
	unsigned head, n;
	bool dry;
	uint64_t taken; /* pages the reader took ahead (under snap_mu) */
};

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
	uint64_t *map_offs; /* suspend_write_map's: where each map page goes */
	struct hib_map_page *map_page;
	uint8_t *verify_rec; /* --verify's: a record read back, its block decoded, */
	uint8_t *verify_out;
	struct hib_readahead *verify_ra; /* and its reads, given the map's range later */
	struct engine_fs_buf fs;         /* engine_fs_record's, the kernel's device only */
	XXH3_state_t stream_st;          /* the blocks' raw_xxh3, in order (the writer) */
	uint64_t snap_ns;                /* the reader's time inside /dev/snapshot's readv() */
	uint64_t alloc_ns;               /* time the target took to hand out pages */
	uint64_t alloc_pages;            /* and the pages it handed out */
	struct suspend_pool pool;        /* pages taken ahead of the writer (map.c) */
	uint64_t area_pages;             /* the area's free pages before the freeze */
	uint64_t pref_before;            /* the kernel's image_size, to put back */
	bool pref_set;                   /* a PREF_IMAGE_SIZE of ours is in force */
	/* Who waited on whom (ns), each counted by the one thread it names:
	 * the reader for a free slot (the writer and disk behind), the writer
	 * for the next encoded block (wait_idle_ns: the part with no write in
	 * flight and the block at the codec) and for its writes (the queue
	 * full: the disk behind, then the last ones drained). */
	uint64_t wait_slot_ns, wait_codec_ns, wait_idle_ns, wait_disk_ns, drain_ns;
	uint64_t codec_polls; /* the writer's 200 us reaps while it waited for the codec */
	uint64_t read_cpu_ns, write_cpu_ns; /* CPU time of the reader's thread, the writer's */
};

/* writer.c: the codec workers' job (engine_pipe_new's); the writer thread's
 * state and its queue to the target, made before the freeze; the stream
 * written, its checksum chain into *@ret_xxh3 (-ECANCELED: cancelled). */
int suspend_encode_work(struct hib_job *job, void *worker_ctx);
int suspend_writer_new(struct suspend_ctx *sc);
int suspend_write_stream(struct suspend_ctx *sc, uint64_t *ret_xxh3);
/* What the write came to, in the log: sizes, times, waits, adaptive's rates. */
void suspend_write_log(struct suspend_ctx *sc, uint64_t write_ms);

/* verify.c: --verify's buffers and read-ahead, made before the freeze; every
 * block read back and checked against the stream's checksum chain. */
int suspend_verify_new(struct suspend_ctx *sc);
void suspend_verify_free(struct suspend_ctx *sc);
int suspend_verify_image(struct suspend_ctx *sc, uint64_t stream_xxh3);

/* map.c: the target's next page, from the pool when it holds one (else
 * retried while the reader holds the device; takes snap_mu); the pool made
 * before the freeze and freed; up to @pages more taken into it (snap_mu
 * held); the extent map's room, last before the freeze; the map's pages
 * written. */
int suspend_alloc_page(struct suspend_ctx *sc, uint64_t *off);
int suspend_pool_new(struct suspend_ctx *sc);
void suspend_pool_free(struct suspend_ctx *sc);
void suspend_pool_fill(struct suspend_ctx *sc, unsigned pages);
int suspend_reserve_map(struct suspend_ctx *sc, uint32_t block_bytes);
int suspend_write_map(struct suspend_ctx *sc, uint64_t *ret_first, uint32_t *ret_pages);

/* imagesize.c: the image size the kernel is asked for, after FREEZE (the
 * limit --image-size sets, or by default a little above the memory in use
 * when that spares the kernel its reclaim: engine_image_wish, engine.h); the
 * kernel's own preference put back by the unwind, in either world. */
int suspend_image_size_wish(struct suspend_ctx *sc);
void suspend_image_size_put_back(struct suspend_ctx *sc);
/* imagesize.c too: CREATE_IMAGE under --image-size's limit (one image over it
 * freed and made again under a smaller wish); the image's size into
 * sc->stream_bytes; *@held while an image is held, for the unwind. Returns
 * twice: *@in_suspend 1 to write it, 0 in the restored system. */
int suspend_create_image(struct suspend_ctx *sc, int *in_suspend, bool *held);

/* admit.c: refuse a target that is not a swap area (or image file) ours to
 * write; turn its swap on when --auto-swapon says so. @page: room to read page 0. */
int suspend_check_target(struct hib_target *t, struct hib_snapshot *snap, uint8_t *page,
			 bool auto_swapon);

/* zram.c: zram areas swapped off into @plan, before the freeze; and on
 * again as they were, whichever way the cycle ended (the plan freed). */
int suspend_zram_move_out(const struct suspend_ctx *sc, struct hib_zram_plan *plan);
void suspend_zram_put_back(struct hib_zram_plan *plan);

#endif
