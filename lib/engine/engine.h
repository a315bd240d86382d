/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What suspend.c and resume.c share. */
#ifndef HIB_ENGINE_H
#define HIB_ENGINE_H

#include "pipeline/codec.h"
#include "storage/extmap.h"
#include "format/format.h"
#include "image/image.h"
#include "pipeline/pipeline.h"
#include "storage/readahead.h"
#include "snapshot/snapshot.h"
#include "storage/target.h"
#include "util/util.h"

#define HIB_DEFAULT_BLOCK_BYTES (256u * 1024u)

/* A resume's job (hib_job.flags) whose record's checksum the read-ahead
 * already checked over the bytes in job->in: the worker does not again. */
#define ENGINE_JOB_SUM_CHECKED 1u

/* Worker contexts and the pipeline, all allocated before anything is frozen. */
struct engine_pipe {
	struct hib_pipeline *pipe;
	struct hib_codec_ctx **ctx;
	unsigned workers;
	uint32_t block_bytes;
};

/*
 * The most the pipeline's buffers take (slots of a record and a block each).
 * Resume takes the block size from the image, so without a bound the number
 * of CPUs times a large block would be what an image asks of the initramfs;
 * above it, fewer workers. 256 KiB blocks on 64 CPUs stay under it.
 */
#define HIB_PIPE_MEM_MAX (128u << 20)

/* Workers (0: inline) and their codec contexts for blocks of @block_bytes,
 * one per CPU or o->threads, fewer when the buffers (@in_bytes + @out_bytes
 * a slot) would pass HIB_PIPE_MEM_MAX.  Up to @spare_bytes more of slots
 * beyond those, which the producer is held out of until the caller lets it
 * in (pipeline_limit(pipe, 0)): their memory is taken only if it is. */
int engine_pipe_new(const struct hib_options *o, uint32_t block_bytes, uint64_t image_id,
		    hib_work_fn work, size_t in_bytes, size_t out_bytes, uint64_t spare_bytes,
		    struct engine_pipe *ret);
void engine_pipe_free(struct engine_pipe *ep);
/* The bytes of slot buffers engine_pipe_new would allocate for these sizes
 * (the codec contexts not counted). */
uint64_t engine_pipe_bytes(const struct hib_options *o, size_t in_bytes, size_t out_bytes);

/* Kept free beside the load's own needs: 6% of MemTotal, at least this. */
#define HIB_LOAD_RESERVE_MIN (64ull << 20)
/* What must stay free while the image of @h is read ahead into memory (the
 * preload, the load's read-ahead): the kernel's pages for the whole stream,
 * the pipeline's buffers under @o, and the reserve out of @mem_total bytes. */
uint64_t engine_load_floor(const struct hib_options *o, const struct hib_header *h,
			   uint64_t mem_total);

/* Block @i of the image from @ra at logical page *@lp into @rec (a record of
 * at most codec_record_bound(@block_bytes)): its header must be block @i,
 * starting at stream byte @stream_off, and lie inside the @map_pages data
 * pages.  *@lp moves past it.  -EBADMSG for a bad header, -errno when reading
 * failed. */
int engine_read_block(struct hib_readahead *ra, uint64_t map_pages, uint32_t block_bytes,
		      uint32_t i, uint64_t stream_off, uint64_t *lp, void *rec);

/* Stale images (fsstate.c): record every writable block filesystem's state
 * into the header after the snapshot, in buffers made before the freeze
 * (engine_fs_buf_new: the mount table, with room to grow, and a superblock
 * region), allocating nothing; check it before a restore (-ESTALE when
 * changed, or when one cannot be checked here and @allow_unchecked is false). */
struct engine_fs_buf {
	char *mounts;
	size_t mounts_cap;
	uint8_t *sb;
};
int engine_fs_buf_new(struct engine_fs_buf *ret);
void engine_fs_buf_free(struct engine_fs_buf *b);
int engine_fs_record(struct hib_header *h, struct engine_fs_buf *b);
int engine_fs_check(const struct hib_target *t, const struct hib_header *h, bool allow_unchecked);

/* The parts, for tests. A line of /proc/self/mountinfo (split in place):
 * *@dev the block device under it (0: none), *@fstype its type, *@writable
 * whether its superblock is mounted read-write; -EINVAL for a malformed line. */
int engine_fs_parse_mount(char *line, dev_t *dev, const char **fstype, bool *writable);
/* The state of the @fstype filesystem on @fd into @ret (devnum left 0), @sb
 * a buffer as engine_fs_buf_new makes; HIB_FS_OTHER when none can be taken. */
void engine_fs_state(int fd, const char *fstype, uint8_t *sb, struct hib_fs_state *ret);

/* hibernate --test (testcycle.c): once the image is written, stop every other
 * process of a system @snap freezes, before it thaws. */
void engine_test_cycle_stop_others(const struct hib_snapshot *snap);

/* imagesize.c: the default's image size wish, in bytes of memory, or 0 to
 * leave the kernel's preference (@kernel_pref) alone: the memory in use
 * (@used) and a margin of @ram / 8, where the memory in use is within
 * @ram / 16 under the kernel's and @ram / 8 over it, within what the swap
 * area holds (@room). */
uint64_t engine_image_wish(uint64_t kernel_pref, uint64_t used, uint64_t ram, uint64_t room);

/* map.c: the area pages an image takes whose stream of @stream_pages is
 * stored raw in blocks of @block_pages (every block's worst case), and its
 * inverse: the longest stream, in pages, whose raw image fits @area pages. */
uint64_t engine_raw_area_pages(uint64_t stream_pages, uint64_t block_pages);
uint64_t engine_raw_stream_room(uint64_t area, uint64_t block_pages);

#endif
