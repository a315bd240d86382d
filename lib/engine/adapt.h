/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Adaptive compression: which blocks go through the codec and which are
 * stored raw, so that compression never makes a cycle slower than storing
 * everything raw.
 *
 * Who waits decides how many.  The writer tells, every ADAPT_WINDOW blocks
 * (or ADAPT_WINDOW_NS, for slow blocks), how long it waited in that window
 * for encoded blocks with no write in flight and the block at the codec
 * (the codec is the limit: the disk stood idle) and how long with its queue
 * full (the disk is the limit).  A wait while writes are still in flight,
 * or for the reader still copying the block out of /dev/snapshot, is
 * neither: counted as the codec's, it stepped fits on 6.1 at 150 MB/s down
 * to 3% compressed, and the larger image took the disk longer.  The
 * share f of the blocks compressed starts at 1 and steps down while the
 * codec holds the disk back, up while the disk holds the writer (a wait
 * under an eighth of the window is noise; a step is half the wait's share
 * of the way, at least 1/16), and up by 1/32 in a window where neither
 * waited (the codec under 1/64 of it): the codec kept up, so it may take more.  Without that, a share
 * stepped down early (the codec at 64 MB/s over the write's first 0.2 s)
 * stayed there while the codec ran at 144 and no one waited.  It
 * settles where the two meet, which no rate measured under a throttled or
 * shared disk finds as well: the disk's rate, measured as the time its
 * writes were in flight, is their latency when the codec feeds it one block
 * at a time (236 MB/s at a 500 MB/s throttle, where all-raw wrote 331).
 * Measured (make bench, TCG, 2 vCPUs): fits on 6.12 at 150 MB/s stored
 * 54-62% of the blocks raw and wrote in 3.6 s against 4.6-5.1 s with every
 * block compressed, near the disk's 3.3 s for its bytes; text on 6.1
 * unthrottled went to the floor and hibernated in 10.7 s against 12.6 s
 * (medians of 3).
 *
 * Storing raw must also pay for itself at resume, where every raw byte is
 * read again.  From rates measured while writing (W workers compress C bytes
 * a second each, saving the share k; the disk writes at least D a second):
 * a raw byte saves the write 1/(W·C) and costs the resume k/D, so f stays 1
 * unless 1/(W·C) > k/D.  D is a lower bound (the latency above), which only
 * makes the test stricter.  Compression that saves nothing (k < 1%) goes to
 * the floor at once.  The floor is 1/32, so that C and k stay measured.
 * Blocks are picked evenly by their sequence number.  Until the rates are
 * known, every block is compressed.
 *
 * An encrypted image seals every block, raw or not, at S bytes a second per
 * worker, over what is stored: a compressed block costs 1/C + (1-k)/S a
 * byte, a raw one 1/S.  Compressing then costs e = 1/C - k/S more per byte
 * (nothing, when e <= 0: the seal it spares pays for it, and f stays 1), and
 * the resume pays the seal on raw bytes too: with s = 1/(W·S), raw pays when
 * e/W > k·(1/D + s), which is the test above when S is infinite.  C is the
 * compressor's own time: the seal and the checksums, which a raw block pays
 * as well, are not part of it.
 */
#ifndef HIB_ADAPT_H
#define HIB_ADAPT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct hib_adapt {
	unsigned workers;
	atomic_uint_least64_t codec_runs, codec_ns, codec_in, codec_out;
	atomic_uint_least64_t seal_bytes, seal_ns;
	atomic_uint_least64_t disk_bytes, disk_ns;
	atomic_uint_least64_t raw_blocks; /* blocks stored raw by choice */
	atomic_uint level;                /* f, in 1/ADAPT_LEVELS */
	unsigned lowest;                  /* the lowest level (the writer's) */
};

#define ADAPT_LEVELS 32u
/* Blocks in a window of the writer's waits, at most; and its longest time. */
#define ADAPT_WINDOW 16u
#define ADAPT_WINDOW_NS (100u * 1000000u)

void adapt_init(struct hib_adapt *a, unsigned workers);
/* Should block @seq go through the codec? */
bool adapt_compress(struct hib_adapt *a, uint64_t seq);
/* A worker ran the compressor on @in bytes for @ns, storing @out bytes. */
void adapt_codec_done(struct hib_adapt *a, uint64_t in, uint64_t out, uint64_t ns);
/* A worker sealed @bytes in @ns (encrypted images; raw blocks too). */
void adapt_seal_done(struct hib_adapt *a, uint64_t bytes, uint64_t ns);
/* The disk was busy writing @bytes for @ns (the writer, between the first
 * write queued and the last completed). */
void adapt_disk_done(struct hib_adapt *a, uint64_t bytes, uint64_t ns);
/* The writer's window of ADAPT_WINDOW blocks took @wall_ns, of which it
 * waited @codec_ns for encoded blocks with the disk idle and @disk_ns with
 * its queue full. */
void adapt_window(struct hib_adapt *a, uint64_t wall_ns, uint64_t codec_ns, uint64_t disk_ns);
/* The fraction of blocks compressed now, 0..1. */
double adapt_fraction(struct hib_adapt *a);
/* What it measured, in MB/s (0: not yet, or nothing sealed): all workers'
 * compressor rate and seal rate, the disk's; and the share k of its input
 * the compressor saves. */
struct hib_adapt_rates {
	double codec, seal, disk, saved;
};
struct hib_adapt_rates adapt_rates(struct hib_adapt *a);
/* The lowest fraction the windows stepped down to, 0..1. */
double adapt_lowest(const struct hib_adapt *a);

#endif
