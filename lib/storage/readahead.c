// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "storage/ioq.h"
#include "storage/readahead.h"
#include "util/util.h"

/* Reads in flight at most (a chunk split at extent boundaries takes several). */
#define RA_PIECES 64u
/* A slot's ready when it holds no chunk read. */
#define NO_CHUNK UINT64_MAX

struct chunk {
	uint8_t *buf;
	unsigned pending; /* its reads in flight */
	int err;          /* the first of them to fail */
	/* In the background: the reading thread's, except ready (under bg.mu). */
	bool issuing;   /* its reads are being queued */
	uint64_t k;     /* the chunk its reads are for */
	uint64_t ready; /* the chunk it holds, read (or failed); NO_CHUNK */
};

struct hib_readahead {
	struct hib_target *t;
	struct hib_ioq *q; /* a read's tag is its chunk's slot */
	unsigned chunk_pages, depth, nslots;
	struct chunk *chunks; /* chunk k lives in slot k % nslots */
	/* The background's buffers past the first depth, in one mapping. */
	uint8_t *area;
	size_t area_len;
	/* The pass (hib_readahead_start). */
	const struct hib_extmap *m;
	uint64_t first, pages, nchunks;
	uint64_t next_issue; /* the next chunk to start reading */
	uint64_t low;        /* chunks below this one are consumed */
	uint64_t last_lp;
	/* In the background (hib_readahead_background) the thread owns the
	 * queue, the buffers and the slots' reading state; mu guards low,
	 * next_issue, each slot's ready, peak and the thread's end. */
	struct {
		bool on, stop, ended;
		int err;        /* why it ended before the pass did */
		unsigned busy;  /* slots with reads in flight (the thread's) */
		unsigned ahead; /* chunks it reads ahead now, up to nslots */
		uint64_t peak;  /* most chunks read and not yet consumed */
		pthread_t thread;
		pthread_mutex_t mu;
		pthread_cond_t cv;
	} bg;
};

static uint64_t chunk_first(const struct hib_readahead *ra, uint64_t k)
{
	return ra->first + k * ra->chunk_pages;
}

static uint64_t chunk_len(const struct hib_readahead *ra, uint64_t k)
{
	return MIN((uint64_t)ra->chunk_pages, ra->first + ra->pages - chunk_first(ra, k));
}

static size_t chunk_bytes(const struct hib_readahead *ra)
{
	return (size_t)ra->chunk_pages * HIB_PAGE_SIZE;
}

/* Background: slot @c's chunk is read (or failed) and is the consumer's to
 * take; the most held at once counted. */
static void publish(struct hib_readahead *ra, struct chunk *c)
{
	uint64_t held = 0;

	pthread_mutex_lock(&ra->bg.mu);
	c->ready = c->k;
	for (unsigned i = 0; i < ra->nslots; i++)
		held += ra->chunks[i].ready != NO_CHUNK && ra->chunks[i].ready >= ra->low;
	ra->bg.peak = MAX(ra->bg.peak, held);
	pthread_cond_broadcast(&ra->bg.cv);
	pthread_mutex_unlock(&ra->bg.mu);
}

static void read_done(uint64_t tag, int res, void *userdata)
{
	struct hib_readahead *ra = userdata;
	struct chunk *c = &ra->chunks[tag];

	if (res < 0 && !c->err)
		c->err = res;
	c->pending--;
	if (ra->bg.on && !c->pending && !c->issuing) {
		ra->bg.busy--;
		publish(ra, c);
	}
}

/* Wait until chunk slot @c has no read in flight. */
static int wait_chunk(struct hib_readahead *ra, const struct chunk *c)
{
	while (c->pending) {
		int r = hib_ioq_reap(ra->q, true);

		if (r < 0)
			return r;
	}
	return 0;
}

/* Queue the reads of chunk @k into its slot, one per contiguous run. */
static int issue(struct hib_readahead *ra, uint64_t k)
{
	unsigned slot = (unsigned)(k % ra->nslots);
	struct chunk *c = &ra->chunks[slot];
	uint64_t lp = chunk_first(ra, k), left = chunk_len(ra, k);
	uint8_t *dst;
	int r;

	/* A slot skipped over may still be reading its old chunk. */
	r = wait_chunk(ra, c);
	if (r < 0)
		return r;
	c->k = k;
	c->err = 0;
	dst = c->buf;
	while (left > 0 && !c->err) {
		uint64_t off, run;

		r = extmap_lookup(ra->m, lp, &off, &run);
		if (r == 0) {
			run = MIN(run, left);
			r = hib_target_check_range(ra->t, off, run * HIB_PAGE_SIZE);
		}
		if (r < 0) {
			c->err = r;
			break;
		}
		c->pending++; /* first: with pread the read is over when the call returns */
		r = hib_ioq_read(ra->q, dst, run * HIB_PAGE_SIZE, off, slot);
		if (r < 0) {
			c->pending--;
			return r;
		}
		dst += run * HIB_PAGE_SIZE;
		lp += run;
		left -= run;
	}
	return 0;
}

/* Keep chunks in flight from the lowest still wanted: @depth of them with
 * io_uring; with pread only that one, read now. */
static int fill(struct hib_readahead *ra)
{
	uint64_t ahead = hib_ioq_is_uring(ra->q) ? ra->depth : 1;

	while (ra->next_issue < ra->nchunks && ra->next_issue < ra->low + ahead) {
		int r = issue(ra, ra->next_issue);

		if (r < 0)
			return r;
		ra->next_issue++;
	}
	return hib_ioq_submit(ra->q);
}

int hib_readahead_new(struct hib_target *t, unsigned chunk_pages, unsigned depth,
		      enum hib_io_mode mode, struct hib_readahead **ret)
{
	_cleanup_(hib_readahead_freep) struct hib_readahead *ra = NULL;
	int r;

	if (!chunk_pages || !depth)
		return -EINVAL;
	ra = calloc(1, sizeof(*ra));
	if (!ra)
		return -ENOMEM;
	ra->t = t;
	ra->chunk_pages = chunk_pages;
	ra->depth = ra->nslots = depth;
	ra->chunks = calloc(depth, sizeof(*ra->chunks));
	if (!ra->chunks)
		return -ENOMEM;
	for (unsigned i = 0; i < depth; i++) {
		ra->chunks[i].buf = hib_alloc_pages(chunk_bytes(ra));
		if (!ra->chunks[i].buf)
			return -ENOMEM;
	}
	r = hib_ioq_new(hib_target_fd(t), RA_PIECES, mode, read_done, ra, &ra->q);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(ra);
	return 0;
}

static bool in_area(const struct hib_readahead *ra, const uint8_t *buf)
{
	return ra->area && buf >= ra->area && buf < ra->area + ra->area_len;
}

/* The background thread's end: told to stop, and out of the queue. */
static void bg_stop(struct hib_readahead *ra)
{
	if (!ra->bg.on)
		return;
	pthread_mutex_lock(&ra->bg.mu);
	ra->bg.stop = true;
	pthread_cond_broadcast(&ra->bg.cv);
	pthread_mutex_unlock(&ra->bg.mu);
	pthread_join(ra->bg.thread, NULL);
	pthread_cond_destroy(&ra->bg.cv);
	pthread_mutex_destroy(&ra->bg.mu);
	ra->bg.on = false;
}

void hib_readahead_free(struct hib_readahead *ra)
{
	if (!ra)
		return;
	bg_stop(ra);
	hib_ioq_free(ra->q); /* first: the kernel may still be writing into the buffers */
	if (ra->chunks)
		for (unsigned i = 0; i < ra->nslots; i++)
			if (!in_area(ra, ra->chunks[i].buf))
				free(ra->chunks[i].buf);
	if (ra->area)
		munmap(ra->area, ra->area_len);
	free(ra->chunks);
	free(ra);
}

int hib_readahead_start(struct hib_readahead *ra, const struct hib_extmap *m, uint64_t first,
			uint64_t pages)
{
	int r;

	if (ra->bg.on)
		return -EBUSY;
	if (first > m->pages || pages > m->pages - first)
		return -EINVAL;
	r = hib_ioq_drain(ra->q);
	if (r < 0)
		return r;
	ra->m = m;
	ra->first = first;
	ra->pages = pages;
	ra->nchunks = DIV_ROUND_UP(pages, ra->chunk_pages);
	ra->next_issue = 0;
	ra->low = 0;
	ra->last_lp = 0;
	return 0;
}

/* Background: the next chunk may start reading (a free slot, fewer than
 * depth chunks in flight). Under bg.mu. */
static bool bg_may_issue(const struct hib_readahead *ra)
{
	return ra->next_issue < ra->nchunks && ra->next_issue < ra->low + ra->bg.ahead &&
	       ra->bg.busy < ra->depth;
}

/* Background: chunk @k's reads queued and sent; published at once when
 * they are over already (pread) or never started. */
static int bg_issue(struct hib_readahead *ra, uint64_t k)
{
	struct chunk *c = &ra->chunks[k % ra->nslots];
	int r;

	/* Its old chunk's reads first, which count in busy as they end. */
	r = wait_chunk(ra, c);
	if (r < 0)
		return r;
	c->issuing = true;
	r = issue(ra, k);
	c->issuing = false;
	if (c->pending)
		ra->bg.busy++;
	else if (r == 0)
		publish(ra, c);
	return r < 0 ? r : hib_ioq_submit(ra->q);
}

static void *bg_main(void *arg)
{
	struct hib_readahead *ra = arg;
	int r = 0;

	pthread_mutex_lock(&ra->bg.mu);
	while (!ra->bg.stop && r == 0) {
		bool may = bg_may_issue(ra);
		uint64_t k = ra->next_issue;

		if (!may && !ra->bg.busy) {
			pthread_cond_wait(&ra->bg.cv, &ra->bg.mu);
			continue;
		}
		if (may)
			ra->next_issue++;
		pthread_mutex_unlock(&ra->bg.mu);
		r = may ? bg_issue(ra, k) : hib_ioq_reap(ra->q, true);
		pthread_mutex_lock(&ra->bg.mu);
	}
	ra->bg.err = r;
	ra->bg.ended = true;
	pthread_cond_broadcast(&ra->bg.cv);
	pthread_mutex_unlock(&ra->bg.mu);
	return NULL;
}

/*
 * The slots grown to @n: the chunks read ahead each at its new slot, marked
 * ready, the other buffers in slots left over, and the slots left after them
 * in one anonymous mapping. Its pages are taken as reads first fill them and
 * never cleared (a chunk is copied out only when its reads filled it), and
 * it goes back in one munmap(): each call interrupts the other CPUs running
 * the process, the feeder's among them (architecture.md, the preload).
 */
static int grow_slots(struct hib_readahead *ra, unsigned n)
{
	struct chunk *s;
	size_t len = (size_t)(n - ra->nslots) * chunk_bytes(ra);
	uint8_t *area = NULL, *next;
	unsigned j = 0;

	if (len) {
		void *a = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (a == MAP_FAILED)
			return -errno;
		area = a;
	}
	s = calloc(n, sizeof(*s));
	if (!s) {
		if (area)
			munmap(area, len);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < n; i++)
		s[i].ready = NO_CHUNK;
	for (uint64_t k = ra->low; k < ra->next_issue; k++) {
		struct chunk *from = &ra->chunks[k % ra->nslots];

		s[k % n] = *from;
		s[k % n].k = s[k % n].ready = k;
		from->buf = NULL;
	}
	for (unsigned i = 0; i < ra->nslots; i++) {
		if (!ra->chunks[i].buf)
			continue;
		while (s[j].buf)
			j++;
		s[j].buf = ra->chunks[i].buf;
	}
	next = area;
	for (unsigned i = 0; i < n; i++)
		if (!s[i].buf) {
			s[i].buf = next;
			next += chunk_bytes(ra);
		}
	free(ra->chunks);
	ra->chunks = s;
	ra->nslots = n;
	ra->area = area;
	ra->area_len = len;
	return 0;
}

int hib_readahead_background(struct hib_readahead *ra, unsigned window, unsigned ahead)
{
	int r;

	if (ra->bg.on || !ra->m)
		return -EINVAL;
	r = hib_ioq_drain(ra->q);
	if (r == 0)
		r = grow_slots(ra, MAX(window, ra->depth));
	if (r < 0)
		return r;
	ra->bg.ahead = MIN(MAX(ahead, ra->depth), ra->nslots);
	pthread_mutex_init(&ra->bg.mu, NULL);
	pthread_cond_init(&ra->bg.cv, NULL);
	ra->bg.on = true;
	r = -pthread_create(&ra->bg.thread, NULL, bg_main, ra);
	if (r < 0) {
		pthread_cond_destroy(&ra->bg.cv);
		pthread_mutex_destroy(&ra->bg.mu);
		ra->bg.on = false;
	}
	return r;
}

void hib_readahead_widen(struct hib_readahead *ra)
{
	if (!ra->bg.on)
		return;
	pthread_mutex_lock(&ra->bg.mu);
	ra->bg.ahead = ra->nslots;
	pthread_cond_broadcast(&ra->bg.cv);
	pthread_mutex_unlock(&ra->bg.mu);
}

bool hib_readahead_is_uring(const struct hib_readahead *ra)
{
	return hib_ioq_is_uring(ra->q);
}

uint64_t hib_readahead_buffer_bytes(const struct hib_readahead *ra)
{
	return (uint64_t)ra->nslots * chunk_bytes(ra);
}

uint64_t hib_readahead_peak_bytes(struct hib_readahead *ra)
{
	uint64_t peak;

	if (!ra->bg.on)
		return 0;
	pthread_mutex_lock(&ra->bg.mu);
	peak = ra->bg.peak;
	pthread_mutex_unlock(&ra->bg.mu);
	return peak * chunk_bytes(ra);
}

/* Background: chunk @k (in slot @c) read, the thread told the consumer is
 * there; -errno when the thread ended first. */
static int bg_wait(struct hib_readahead *ra, uint64_t k, const struct chunk *c)
{
	int r = 0;

	pthread_mutex_lock(&ra->bg.mu);
	if (ra->low != k) {
		ra->low = k;
		if (ra->next_issue < k)
			ra->next_issue = k; /* skipped ahead: start from here */
		pthread_cond_broadcast(&ra->bg.cv);
	}
	while (c->ready != k && !ra->bg.ended)
		pthread_cond_wait(&ra->bg.cv, &ra->bg.mu);
	if (c->ready != k)
		r = ra->bg.err < 0 ? ra->bg.err : -EIO;
	pthread_mutex_unlock(&ra->bg.mu);
	return r;
}

/* Foreground: chunk @k read in slot @c, the reads after it kept going. */
static int fg_wait(struct hib_readahead *ra, uint64_t k, const struct chunk *c)
{
	int r;

	ra->low = k;
	if (ra->next_issue <= k)
		ra->next_issue = k; /* skipped ahead: start from here */
	r = fill(ra);
	return r < 0 ? r : wait_chunk(ra, c);
}

int hib_readahead_copy(struct hib_readahead *ra, uint64_t lp, void *dst, uint64_t n)
{
	uint8_t *out = dst;

	if (lp < ra->first || lp < ra->last_lp || n > ra->pages || lp - ra->first > ra->pages - n)
		return -ERANGE;
	ra->last_lp = lp;
	while (n > 0) {
		uint64_t k = (lp - ra->first) / ra->chunk_pages;
		struct chunk *c = &ra->chunks[k % ra->nslots];
		uint64_t in = lp - chunk_first(ra, k), take = MIN(n, chunk_len(ra, k) - in);
		int r = ra->bg.on ? bg_wait(ra, k, c) : fg_wait(ra, k, c);

		if (r < 0)
			return r;
		if (c->err) {
			/* Some read of the chunk failed, maybe outside what is asked
			 * for: read exactly this part, for its own error or its data. */
			r = hib_target_read_logical(ra->t, ra->m, lp, out, take);
			if (r < 0)
				return r;
		} else {
			memcpy(out, c->buf + in * HIB_PAGE_SIZE, take * HIB_PAGE_SIZE);
		}
		out += take * HIB_PAGE_SIZE;
		lp += take;
		n -= take;
	}
	return 0;
}
