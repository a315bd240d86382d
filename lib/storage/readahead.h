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
 * One thread owns a readahead, as its queue (ioq.h); requests must not go
 * backwards (a page before the previous request's first page is gone).
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
bool hib_readahead_is_uring(const struct hib_readahead *ra);
/* Bytes of buffers it holds. */
uint64_t hib_readahead_buffer_bytes(const struct hib_readahead *ra);

/* Copy logical pages [@lp, @lp + @n) into @dst: -ERANGE outside the pass or
 * before the previous request, -errno when the read failed. */
int hib_readahead_copy(struct hib_readahead *ra, uint64_t lp, void *dst, uint64_t n);

#endif
