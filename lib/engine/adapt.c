// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/adapt.h"

/* Codec runs to see before trusting its rate: a couple per worker. */
#define ADAPT_MIN_RUNS(a) (2u * (a)->workers)
#define ADAPT_MIN_FRACTION (1.0 / 32)
/* Store raw only when the disk is clearly faster than the codec: the rates
 * are noisy (a throttled disk's burst, CPUs shared with the reader and the
 * writer, raw blocks still cost a copy and a checksum), and every raw block
 * is read again in full at resume.  Measured (make bench, TCG, 6.12): at
 * 150 and 500 MB/s the codec measured 120-225 MB/s against a disk of
 * 70-270 MB/s, and storing a third of the blocks raw made both the hibernate
 * and the resume slower than compressing them all, and the image 13% larger. */
#define ADAPT_MARGIN 2.0

void adapt_init(struct hib_adapt *a, unsigned workers)
{
	a->workers = workers ? workers : 1;
	atomic_init(&a->codec_runs, 0);
	atomic_init(&a->codec_ns, 0);
	atomic_init(&a->codec_in, 0);
	atomic_init(&a->codec_out, 0);
	atomic_init(&a->seal_bytes, 0);
	atomic_init(&a->seal_ns, 0);
	atomic_init(&a->disk_bytes, 0);
	atomic_init(&a->disk_ns, 0);
	atomic_init(&a->raw_blocks, 0);
}

/* The fraction from the rates (MB/s, all workers; seal 0 for a plain image). */
static double fraction(const struct hib_adapt_rates *r)
{
	double s = r->seal > 0 ? 1.0 / r->seal : 0; /* sealing, per byte */
	double e = 1.0 / r->codec - r->saved * s;   /* compressing's extra, per byte */
	double d = r->disk, k = r->saved, f;

	if (k < 0.01)
		return ADAPT_MIN_FRACTION; /* compression saves nothing here */
	if (e <= 0 || e <= k * (1.0 / d + s) || d * e <= ADAPT_MARGIN)
		return 1.0;
	if (d * s >= 1.0)
		return ADAPT_MIN_FRACTION; /* the seal alone is slower than the disk */
	f = (1.0 - d * s) / (k + d * e);
	return f < ADAPT_MIN_FRACTION ? ADAPT_MIN_FRACTION : f > 1.0 ? 1.0 : f;
}

double adapt_fraction(struct hib_adapt *a)
{
	struct hib_adapt_rates r = adapt_rates(a);

	if (atomic_load(&a->codec_runs) < ADAPT_MIN_RUNS(a) || r.codec <= 0 || r.disk <= 0)
		return 1.0;
	return fraction(&r);
}

bool adapt_compress(struct hib_adapt *a, uint64_t seq)
{
	double f = adapt_fraction(a);

	/* Evenly: block seq is compressed when floor((seq + 1)·f) steps. */
	if (f >= 1.0 || (uint64_t)((double)(seq + 1) * f) != (uint64_t)((double)seq * f))
		return true;
	atomic_fetch_add(&a->raw_blocks, 1);
	return false;
}

void adapt_codec_done(struct hib_adapt *a, uint64_t in, uint64_t out, uint64_t ns)
{
	atomic_fetch_add(&a->codec_runs, 1);
	atomic_fetch_add(&a->codec_ns, ns ? ns : 1);
	atomic_fetch_add(&a->codec_in, in);
	atomic_fetch_add(&a->codec_out, out);
}

void adapt_seal_done(struct hib_adapt *a, uint64_t bytes, uint64_t ns)
{
	atomic_fetch_add(&a->seal_bytes, bytes);
	atomic_fetch_add(&a->seal_ns, ns ? ns : 1);
}

void adapt_disk_done(struct hib_adapt *a, uint64_t bytes, uint64_t ns)
{
	atomic_fetch_add(&a->disk_bytes, bytes);
	atomic_fetch_add(&a->disk_ns, ns ? ns : 1);
}

struct hib_adapt_rates adapt_rates(struct hib_adapt *a)
{
	uint64_t cns = atomic_load(&a->codec_ns), in = atomic_load(&a->codec_in);
	uint64_t out = atomic_load(&a->codec_out);
	uint64_t sb = atomic_load(&a->seal_bytes), sns = atomic_load(&a->seal_ns);
	uint64_t db = atomic_load(&a->disk_bytes), dns = atomic_load(&a->disk_ns);
	struct hib_adapt_rates r = { 0 };

	if (cns)
		r.codec = (double)a->workers * (double)in / (double)cns * 1e3;
	if (sns)
		r.seal = (double)a->workers * (double)sb / (double)sns * 1e3;
	if (dns)
		r.disk = (double)db / (double)dns * 1e3;
	if (in && out < in)
		r.saved = 1.0 - (double)out / (double)in;
	return r;
}
