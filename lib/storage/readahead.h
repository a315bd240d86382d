/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sequential read-ahead over an image's logical pages.  Resume reads the
 * image front to back, block by block; a block's size is known only once its
 * header page is read, so reading block by block costs two synchronous
 * round trips per block and leaves the device idle while they are in
 * flight.  Instead this reads fixed chunks of logical pages ahead of the
 * consumer (@depth chunks in flight with io_uring, each split at extent
 * boundaries) and copies out what the consumer asks for.  Without io_uring
 * the chunks are read with pread when first needed.
 *
 * One thread owns a readahead; requests must not go backwards (a page before
 * the previous request's first page is gone).
 */
#ifndef HIB_READAHEAD_H
#define HIB_READAHEAD_H

#include <stdbool.h>
#include <stdint.h>

#include "storage/extmap.h"
#include "storage/target.h"

struct hib_readahead;

/* Read logical pages [@first, @first + @pages) of @m from @t, in chunks of
 * @chunk_pages, at most @depth chunks ahead. With @pages 0, every buffer for
 * @depth chunks is made for a range readahead_reset gives later. */
int readahead_new(struct hib_target *t, const struct hib_extmap *m, uint64_t first,
		  uint64_t pages, unsigned chunk_pages, unsigned depth, bool use_uring,
		  struct hib_readahead **ret);
/* Start over at logical pages [@first, @first + @pages) of the map, which may
 * have grown since readahead_new: a read-ahead made before its map is filled
 * (--verify, set up before the freeze). Allocates nothing; -EBUSY while
 * reads are in flight. */
int readahead_reset(struct hib_readahead *ra, uint64_t first, uint64_t pages);
void readahead_free(struct hib_readahead *ra);
static inline void readahead_freep(struct hib_readahead **ra)
{
	readahead_free(*ra);
}
bool readahead_is_uring(const struct hib_readahead *ra);
/* Bytes of buffers it holds. */
uint64_t readahead_buffer_bytes(const struct hib_readahead *ra);

/* Copy logical pages [@lp, @lp + @n) into @dst: -ERANGE outside the range
 * given to readahead_new or before the previous request, -errno when the read
 * failed. */
int readahead_copy(struct hib_readahead *ra, uint64_t lp, void *dst, uint64_t n);

#endif
