/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One bounded queue of reads and writes at byte offsets of one file
 * descriptor: io_uring, or plain pread/pwrite where io_uring is unavailable
 * or HIB_IO_SYNC asks for them. Shaped like liburing's io_uring-cp: at most
 * @depth requests in flight, a short transfer is sent again for the rest,
 * and nothing is freed while the kernel may still use a buffer.
 *
 * Threads: the queue has none. It belongs to one thread at a time (the
 * writer thread while hibernating, the reader thread while resuming); it may
 * be made on one thread and handed to another, never used by two at once.
 * The done callback runs on the owning thread, inside hib_ioq_read and
 * hib_ioq_write (always with pread/pwrite; with io_uring when they wait for
 * room), hib_ioq_reap, hib_ioq_reap_timeout and hib_ioq_drain, never inside
 * hib_ioq_free; it must not call the queue.
 *
 * Buffers, lengths and offsets follow the descriptor's rules: page aligned
 * for O_DIRECT (buffers from hib_alloc_pages(), lengths in pages). The queue
 * checks none of it: a misaligned request fails through done with its tag.
 * A buffer belongs to the kernel from queueing until its done call.
 *
 * Memory: hib_ioq_new allocates everything; nothing after it allocates.
 */
#ifndef HIB_IOQ_H
#define HIB_IOQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hibernate.h"

struct hib_ioq;

/* A request is over: @res 0 when all of it is transferred, else -errno; a
 * transfer that stops short is -EIO for a read (the end of the file), -ENOSPC
 * for a write, unless the system call said why. */
typedef void (*hib_ioq_done_fn)(uint64_t tag, int res, void *userdata);

/* At most @depth requests in flight (0 counts as 1), on @fd, which the
 * caller keeps open until hib_ioq_free. */
int hib_ioq_new(int fd, unsigned depth, enum hib_io_mode mode, hib_ioq_done_fn done, void *userdata,
		struct hib_ioq **ret);
/* Waits for the requests the kernel has (their buffers are the caller's to
 * free afterwards) and drops those not sent yet, without calling done. NULL
 * is fine. */
void hib_ioq_free(struct hib_ioq *q);
static inline void hib_ioq_freep(struct hib_ioq **q)
{
	hib_ioq_free(*q);
}
/* With io_uring at first and still (a stalled queue goes on by pread/pwrite:
 * see ioq.c's IOQ_STALL_USEC). */
bool hib_ioq_is_uring(const struct hib_ioq *q);
/* Tests only: the stall after @stall_usec, and (@hold_fd >= 0) the next
 * request held behind a read of @hold_fd, as one a frozen worker never runs. */
void hib_ioq_test_stall(struct hib_ioq *q, unsigned stall_usec, int hold_fd);
/* Requests queued whose done has not been called yet. */
unsigned hib_ioq_inflight(const struct hib_ioq *q);

/*
 * Queue a read of @len bytes at @off into @buf, or a write of them from it.
 * With io_uring it is sent by the next hib_ioq_submit, reap or drain (or
 * while waiting for room), so a batch goes in one system call; with
 * pread/pwrite it is done, and reported, before this returns. Waits for
 * completions while @depth requests are in flight. -errno only when the
 * queue itself fails: the request is then not queued and done not called.
 */
int hib_ioq_read(struct hib_ioq *q, void *buf, size_t len, uint64_t off, uint64_t tag);
int hib_ioq_write(struct hib_ioq *q, const void *buf, size_t len, uint64_t off, uint64_t tag);
/* Send what is queued. */
int hib_ioq_submit(struct hib_ioq *q);
/* Send what is queued and report what has completed; with @wait, first
 * block until the kernel completes something, if anything is in flight, or
 * the queue stalls (then it falls back to pread/pwrite, or fails with
 * -ETIMEDOUT if requests neither complete nor cancel). */
int hib_ioq_reap(struct hib_ioq *q, bool wait);
/* The same, waiting at most @usec for that first completion. */
int hib_ioq_reap_timeout(struct hib_ioq *q, unsigned usec);
/* Report everything: returns when nothing is in flight, or on the queue's
 * own failure. */
int hib_ioq_drain(struct hib_ioq *q);

#endif
