/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Adaptive compression: which blocks go through the codec and which are
 * stored raw, so that compression never makes a cycle slower than storing
 * everything raw.
 *
 * The model, from rates measured while writing: W workers compress C bytes a
 * second each, saving the fraction k of what they compress (k = 1 - 1/ratio);
 * the disk writes D bytes a second.  Compressing a fraction f of the blocks,
 * the stream moves at min(W·C / f, D / (1 - f·k)).  Below the f where the two
 * meet, more compression is free: the disk is the limit and every compressed
 * block saves disk time now and at resume.  Above it, each compressed block
 * costs codec time that the disk would not have needed, and it pays back at
 * resume (reading fewer bytes) only when W·C·k > D.  So:
 *
 *     f = 1                          when D <= W·C·k
 *     f = W·C / (D + W·C·k)          otherwise (where the two rates meet)
 *
 * with a floor of 1/32, so C and k stay measured, and f = 1 too unless the
 * disk is at least twice as fast as the codec (ADAPT_MARGIN: the rates are
 * noisy, and a wrong raw block costs twice, writing and reading).  Blocks are picked evenly
 * by their sequence number.  Until both rates are known, every block is
 * compressed.
 *
 * An encrypted image seals every block, raw or not, at S bytes a second per
 * worker, over what is stored: a compressed block costs 1/C + (1-k)/S a
 * byte, a raw one 1/S.  Compressing then costs e = 1/C - k/S more per byte
 * (nothing, when e <= 0: the seal it spares pays for it), and, with
 * s = 1/(W·S):
 *
 *     f = 1                          when e/W <= k·(1/D + s), or D <= 2·W/e
 *     f = (1 - D·s) / (k + D·e/W)    otherwise (1/32 when D·s >= 1: the seal
 *                                    alone is slower than the disk)
 *
 * which is the model above when S is infinite (a plain image).  C is the
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
};

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
/* The fraction of blocks compressed now, 0..1. */
double adapt_fraction(struct hib_adapt *a);
/* What it measured, in MB/s (0: not yet, or nothing sealed): all workers'
 * compressor rate and seal rate, the disk's; and the share k of its input
 * the compressor saves. */
struct hib_adapt_rates {
	double codec, seal, disk, saved;
};
struct hib_adapt_rates adapt_rates(struct hib_adapt *a);

#endif
