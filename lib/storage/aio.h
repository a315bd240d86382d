/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Asynchronous writes behind a small interface: io_uring with a bounded
 * queue, or plain pwrite where io_uring is unavailable (old kernel, disabled
 * by sysctl, seccomp). One thread owns an aio context; completions are
 * reported through a callback with the caller's tag, in any order. Short
 * transfers are resubmitted for the rest, as liburing's io_uring-cp does.
 */
#ifndef HIB_AIO_H
#define HIB_AIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hib_aio;

/* @res: 0 when all of the write is done, -errno otherwise. */
typedef void (*hib_aio_done_fn)(uint64_t tag, int res, void *userdata);

/* @depth writes in flight at most; @use_uring false forces the pwrite path. */
int aio_new(int fd, unsigned depth, bool use_uring, hib_aio_done_fn done, void *userdata,
	    struct hib_aio **ret);
void aio_free(struct hib_aio *a);
bool aio_is_uring(const struct hib_aio *a);

/* Queue a write of @len bytes of @buf at @off (page aligned for O_DIRECT).
 * Blocks for completions when the queue is full. */
int aio_write(struct hib_aio *a, const void *buf, size_t len, uint64_t off, uint64_t tag);
/* Reap what has completed; with @wait, block until at least one has. */
int aio_reap(struct hib_aio *a, bool wait);
/* Reap what has completed, waiting at most @usec for a first completion. */
int aio_reap_timeout(struct hib_aio *a, unsigned usec);
/* Wait for everything in flight. */
int aio_drain(struct hib_aio *a);
unsigned aio_inflight(const struct hib_aio *a);

#endif
