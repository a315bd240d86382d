/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sequential read-ahead over an image's logical pages.  Resume reads the
 * image front to back, block by block; a block's size is known only once its
 * header page is read, so reading block by block costs two synchronous
 * round trips per block and leaves the device idle while they are in
 * flight.  Instead this reads fixed chunks of logical pages ahead of the
 * consumer (@depth chunks in flight with io_uring, each split at extent
 * boundaries, all through one hib_ioq) and copies out what the consumer asks
 * for.  With pread (HIB_IO_SYNC, or no io_uring) a chunk is read when first
 * needed.
 *
 * Read ahead only as the consumer asks, the reads stop whenever it does:
 * while it waits on something else (the kernel taking the image's first pages
 * at resume takes seconds), the device is idle.  In the background
 * (hib_readahead_background) a thread of its own keeps reading, @depth chunks
 * in flight, into a window of chunks whose buffers are taken as they are
 * first read into; the consumer finds them read.
 *
 * One thread owns a readahead, as its queue (ioq.h): the consumer, or in the
 * background the reading thread, which owns the queue while the consumer
 * copies out.  Requests must not go backwards (a page before the previous
 * request's first page is gone).
 */
#ifndef HIB_READAHEAD_H
#define HIB_READAHEAD_H

#include <stdbool.h>
#include <stdint.h>

#include "hibernate.h"
#include "storage/extmap.h"
#include "storage/target.h"

struct hib_readahead;

/* Buffers for @depth chunks of @chunk_pages pages, and the queue on @t: all
 * the memory its passes need. */
int hib_readahead_new(struct hib_target *t, unsigned chunk_pages, unsigned depth,
		      enum hib_io_mode mode, struct hib_readahead **ret);
/* Waits for its reads in flight first. NULL is fine. */
void hib_readahead_free(struct hib_readahead *ra);
static inline void hib_readahead_freep(struct hib_readahead **ra)
{
	hib_readahead_free(*ra);
}
/* A pass over logical pages [@first, @first + @pages) of @m, which must stay
 * as it is until the next pass or the free. -EINVAL outside the map.
 * Allocates nothing; what an earlier pass still reads is waited for. */
int hib_readahead_start(struct hib_readahead *ra, const struct hib_extmap *m, uint64_t first,
			uint64_t pages);
/*
 * The pass started goes on in the background, on a thread of its own, up to
 * @ahead chunks ahead of the consumer (at least @depth, at most @window) until
 * hib_readahead_widen, then @window; what was read ahead so far is kept.  One
 * pass only: hib_readahead_start is -EBUSY after.  The thread's buffers are
 * taken as it reads, so the caller bounds @window by the memory it may take,
 * and @ahead by the memory it may take now.  -errno (the thread not made): it
 * goes on as before.
 */
int hib_readahead_background(struct hib_readahead *ra, unsigned window, unsigned ahead);
/* In the background: read on up to the whole window from now.  Any thread,
 * while @ra is not freed; nothing otherwise. */
void hib_readahead_widen(struct hib_readahead *ra);
bool hib_readahead_is_uring(const struct hib_readahead *ra);
/* Bytes of buffers it holds, or may take in the background. */
uint64_t hib_readahead_buffer_bytes(const struct hib_readahead *ra);
/* In the background: the most bytes read and not yet copied out at once;
 * 0 otherwise. */
uint64_t hib_readahead_peak_bytes(struct hib_readahead *ra);

/* Copy logical pages [@lp, @lp + @n) into @dst: -ERANGE outside the pass or
 * before the previous request, -errno when the read failed. */
int hib_readahead_copy(struct hib_readahead *ra, uint64_t lp, void *dst, uint64_t n);

#endif
