// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/adapt.h"
#include "util/util.h"

/* Codec runs to see before trusting its rate: a couple per worker. */
#define ADAPT_MIN_RUNS(a) (2u * (a)->workers)
/* A window's wait that counts: an eighth of it. */
#define ADAPT_WAIT_SHARE 8u
/* A window's least step, in 1/ADAPT_LEVELS.  A longer wait steps further:
 * half the wait's share of the way, so that a codec far slower than the disk
 * (zstd -19) is at the floor in 5 windows, and one near the disk's rate
 * settles where they meet. */
#define ADAPT_STEP 2u
/* A window in which the disk waited for the codec less than this share of
 * it, and the writer for the disk less than ADAPT_WAIT_SHARE's, steps up by
 * ADAPT_DRIFT: the codec kept up, so it may take more (a smaller image, and
 * less to read at resume).  A wait up to ADAPT_WAIT_SHARE's would let it
 * climb past where codec and disk meet, into a write the codec holds back by
 * up to an eighth. */
#define ADAPT_QUIET_SHARE 64u
#define ADAPT_DRIFT 1u

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
	atomic_init(&a->level, ADAPT_LEVELS);
	a->lowest = ADAPT_LEVELS;
}

/* Does a raw byte save the write more than it costs the resume (adapt.h)?
 * Rates in MB/s over all workers; seal 0 for a plain image. */
static bool raw_pays(const struct hib_adapt_rates *r)
{
	double s = r->seal > 0 ? 1.0 / r->seal : 0; /* sealing, per byte */
	double e = 1.0 / r->codec - r->saved * s;   /* compressing's extra, per byte */

	return e > 0 && e > r->saved * (1.0 / r->disk + s);
}

static bool measured(struct hib_adapt *a, const struct hib_adapt_rates *r)
{
	return atomic_load(&a->codec_runs) >= ADAPT_MIN_RUNS(a) && r->codec > 0 && r->disk > 0;
}

/* The step for a wait of @wait_ns in @wall_ns: half the wait's share of
 * @from levels, at least ADAPT_STEP, at most @room. */
static unsigned step(unsigned from, unsigned room, uint64_t wait_ns, uint64_t wall_ns)
{
	unsigned far = (unsigned)((double)from * (double)wait_ns / (2.0 * (double)wall_ns));

	return MIN(MAX(far, ADAPT_STEP), room);
}

void adapt_window(struct hib_adapt *a, uint64_t wall_ns, uint64_t codec_ns, uint64_t disk_ns)
{
	struct hib_adapt_rates r = adapt_rates(a);
	unsigned level = atomic_load(&a->level);

	if (!wall_ns || !measured(a, &r))
		return;
	if (disk_ns * ADAPT_WAIT_SHARE >= wall_ns)
		level += step(ADAPT_LEVELS - level, ADAPT_LEVELS - level, disk_ns, wall_ns);
	else if (codec_ns * ADAPT_WAIT_SHARE >= wall_ns && raw_pays(&r))
		level -= step(level, level - 1, codec_ns, wall_ns);
	else if (codec_ns * ADAPT_QUIET_SHARE < wall_ns)
		level = MIN(level + ADAPT_DRIFT, ADAPT_LEVELS);
	atomic_store(&a->level, level);
	a->lowest = MIN(a->lowest, level);
}

double adapt_fraction(struct hib_adapt *a)
{
	struct hib_adapt_rates r = adapt_rates(a);

	if (!measured(a, &r))
		return 1.0;
	if (r.saved < 0.01)
		return 1.0 / ADAPT_LEVELS; /* compression saves nothing here */
	if (!raw_pays(&r))
		return 1.0;
	return (double)atomic_load(&a->level) / ADAPT_LEVELS;
}

double adapt_lowest(const struct hib_adapt *a)
{
	return (double)a->lowest / ADAPT_LEVELS;
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
