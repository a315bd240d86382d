// SPDX-License-Identifier: GPL-2.0-or-later
/* An encrypted image read ahead while its secret is awaited (preload.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "engine/preload.h"
#include "storage/swaps.h"

/* The same read-ahead as the load's (resume.c), which takes it over. */
#define PRELOAD_RA_CHUNK_PAGES 256u
#define PRELOAD_RA_DEPTH 8u
/* The one line a resume says about it, shown at the default loglevel like
 * the cycle's other lines ("hibernating to ..."). */
#define log_progress(...) hib_log(HIB_LOG_PROGRESS, __VA_ARGS__)

/* MemAvailable read again after this much more is held. */
#define PRELOAD_RECHECK (16ull << 20)

/* One block's record, in the area after the one before it. */
struct preload_rec {
	uint8_t *buf;
	size_t len; /* its pages on disk */
};

struct engine_preload {
	struct hib_target *t;
	const struct image *img;
	const char *meminfo; /* NULL: /proc/meminfo (hib_swap_env's) */
	const char *waiting_for;
	pthread_t thread;
	bool running; /* the thread is made and not joined */
	atomic_bool stop;
	/* The thread's until it is joined, then the reader's. */
	struct hib_readahead *ra;
	struct engine_read_pos pos; /* the next block to read */
	struct preload_rec *recs;   /* blocks below pos.block */
	/* One anonymous mapping for all the records, filled in order: its pages
	 * are taken as they are read and kept until the preload is freed. */
	uint8_t *area;
	size_t area_len, used;
	uint32_t drained; /* blocks below it are the load's */
	uint64_t held;    /* bytes of records held */
	uint64_t floor, avail, held_at_read;
	bool full; /* stopped for want of memory */
	int err;   /* stopped by a failed read or check */
	uint64_t t0, ms;
};

/* Argon2id's memory for the secret being awaited, which it takes meanwhile
 * (the header's figures; bounded by crypt.c when it opens the image). */
static uint64_t kdf_bytes(const struct hib_header *h)
{
	if (h->crypt.kdf == HIB_KDF_ARGON2ID)
		return h->crypt.memlimit;
	if (h->crypt.kdf == HIB_KDF_TPM2 && (h->tpm.flags & HIB_TPM_FALLBACK))
		return h->tpm.fb_memlimit;
	return 0;
}

uint64_t engine_preload_floor(const struct hib_options *o, const struct hib_header *h,
			      uint64_t mem_total)
{
	return engine_load_floor(o, h, mem_total) + MIN(kdf_bytes(h), mem_total);
}

/* What the prompt is waiting for, as the log line says it. */
static const char *waiting_for(const struct hib_header *h)
{
	if (h->crypt.kdf == HIB_KDF_KEYFILE)
		return "key file";
	if (h->crypt.kdf == HIB_KDF_TPM2)
		return (h->tpm.flags & HIB_TPM_PIN) ? "TPM PIN" : "TPM";
	return "passphrase";
}

/* Room for @bytes more with the floor left free: MemAvailable read again
 * every PRELOAD_RECHECK bytes, what was taken since counted in between. */
static bool room_for(struct engine_preload *p, uint64_t bytes)
{
	uint64_t taken;

	if (p->held - p->held_at_read >= PRELOAD_RECHECK) {
		p->avail = hib_meminfo_kib(p->meminfo, "MemAvailable") << 10;
		p->held_at_read = p->held;
	}
	taken = p->held - p->held_at_read + bytes;
	return p->avail > p->floor && p->avail - p->floor >= taken;
}

/* What a record says about itself that holds without the key: it is sealed
 * (an encrypted image has no plain block) and its checksum over the header
 * and the ciphertext matches. */
static int check_record(const uint8_t *rec, uint64_t image_id)
{
	const struct hib_block_hdr *b = (const struct hib_block_hdr *)rec;

	if (!(b->flags & HIB_BFLAG_SEALED))
		return -EBADMSG;
	if (b->stored_xxh3 != hib_block_stored_xxh3(b, rec + sizeof(*b), image_id))
		return -EBADMSG;
	return 0;
}

/* The next block into the area after the last: 0, 1 when it does not fit, -errno. */
static int preload_block(struct engine_preload *p)
{
	const struct hib_header *h = p->img->hdr;
	size_t bound = codec_record_bound(h->block_raw_bytes), len;
	struct engine_read_pos *pos = &p->pos;
	uint64_t at = pos->lp;
	uint8_t *rec;
	int r;

	if (!room_for(p, bound) || p->area_len - p->used < bound)
		return 1;
	rec = p->area + p->used;
	r = engine_read_block(p->ra, p->img->map.pages, h->block_raw_bytes, pos->block,
			      pos->stream_off, &pos->lp, rec);
	if (r == 0)
		r = check_record(rec, h->image_id);
	if (r < 0) {
		pos->lp = at;
		return r;
	}
	len = (size_t)(pos->lp - at) * HIB_PAGE_SIZE;
	p->recs[pos->block] = (struct preload_rec){ .buf = rec, .len = len };
	p->used += len;
	p->held += len;
	pos->stream_off += ((const struct hib_block_hdr *)rec)->raw_bytes;
	pos->block++;
	return 0;
}

static void *preload_main(void *arg)
{
	struct engine_preload *p = arg;
	uint32_t n = p->img->hdr->nr_blocks;
	int r = 0;

	while (r == 0 && p->pos.block < n && !atomic_load(&p->stop))
		r = preload_block(p);
	p->full = r == 1;
	p->err = r < 0 ? r : 0;
	p->ms = hib_now_ms() - p->t0;
	if (p->pos.block == n) {
		hib_readahead_free(p->ra); /* the whole image is here: no reads left */
		p->ra = NULL;
	}
	return NULL;
}

/* The figures: MemAvailable against the floor; false, logged, when not one
 * block fits. */
static bool enough_memory(struct engine_preload *p, const struct hib_options *o)
{
	const struct hib_header *h = p->img->hdr;
	uint64_t total = hib_meminfo_kib(p->meminfo, "MemTotal") << 10;

	p->avail = hib_meminfo_kib(p->meminfo, "MemAvailable") << 10;
	p->floor = engine_preload_floor(o, h, total);
	if (total && room_for(p, codec_record_bound(h->block_raw_bytes)))
		return true;
	log_progress("not reading the image ahead while waiting for the %s: no memory to spare "
		     "(%llu MiB available, %llu MiB kept for the image's pages, the load's buffers "
		     "and a reserve)",
		     p->waiting_for, (unsigned long long)(p->avail >> 20),
		     (unsigned long long)(p->floor >> 20));
	return false;
}

/* The records' area: the image's pages and one record's bound, reserved,
 * not taken (pages are taken as the reads fill them); less address space
 * where that much is not there (32 bits), down to a few records. */
static bool area_new(struct engine_preload *p)
{
	size_t bound = codec_record_bound(p->img->hdr->block_raw_bytes);
	uint64_t want = p->img->map.pages * HIB_PAGE_SIZE + bound;
	size_t len = want > SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)want;
	size_t least = MIN(len, 4 * bound);

	for (; len >= least; len = len / 2 / HIB_PAGE_SIZE * HIB_PAGE_SIZE) {
		void *a = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (a != MAP_FAILED) {
			p->area = a;
			p->area_len = len;
			return true;
		}
	}
	return false;
}

static void preload_freep(struct engine_preload **p)
{
	engine_preload_free(*p);
}

/* The preload, its records' table and its read-ahead: 0 with *@ret NULL when
 * the memory is not there (logged), -errno. */
static int preload_new(struct hib_target *t, const struct image *img, const struct hib_options *o,
		       struct engine_preload **ret)
{
	_cleanup_(preload_freep) struct engine_preload *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return -ENOMEM;
	p->t = t;
	p->img = img;
	p->meminfo = hib_swap_env_get()->meminfo;
	p->waiting_for = waiting_for(img->hdr);
	if (!enough_memory(p, o))
		return 0;
	p->recs = calloc(img->hdr->nr_blocks ? img->hdr->nr_blocks : 1, sizeof(*p->recs));
	if (!p->recs || !area_new(p))
		return -ENOMEM;
	r = hib_readahead_new(t, PRELOAD_RA_CHUNK_PAGES, PRELOAD_RA_DEPTH, o->io_mode, &p->ra);
	if (r == 0)
		r = hib_readahead_start(p->ra, &img->map, 0, img->map.pages);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(p);
	return 0;
}

void engine_preload_start(struct hib_target *t, const struct image *img,
			  const struct hib_options *o, struct engine_preload **ret)
{
	struct engine_preload *p = NULL;
	int r;

	*ret = NULL;
	if (o->no_preload) {
		log_progress("not reading the image ahead while waiting for the %s: disabled "
			     "(resume-preload = no)",
			     waiting_for(img->hdr));
		return;
	}
	r = preload_new(t, img, o, &p);
	if (r < 0)
		log_progress("not reading the image ahead while waiting for the %s: %s",
			     waiting_for(img->hdr), strerror(-r));
	if (!p)
		return;
	p->t0 = hib_now_ms();
	r = -pthread_create(&p->thread, NULL, preload_main, p);
	if (r < 0) {
		log_progress("not reading the image ahead while waiting for the %s: no thread: %s",
			     p->waiting_for, strerror(-r));
		engine_preload_free(p);
		return;
	}
	p->running = true;
	*ret = p;
}

void engine_preload_stop(struct engine_preload **pp, bool keep, uint64_t *ret_bytes,
			 uint64_t *ret_ms)
{
	struct engine_preload *p = *pp;
	uint64_t total = p ? p->img->map.pages * HIB_PAGE_SIZE : 0;

	*ret_bytes = *ret_ms = 0;
	if (!p)
		return;
	atomic_store(&p->stop, true);
	pthread_join(p->thread, NULL);
	p->running = false;
	if (p->err)
		log_progress("stopped reading the image ahead at block %u: %s; the load reads it "
			     "from the disk",
			     p->pos.block, strerror(-p->err));
	else
		log_progress("read %.1f MiB of %.1f ahead while waiting for the %s (%llu ms)%s%s",
			     (double)p->held / (1 << 20), (double)total / (1 << 20), p->waiting_for,
			     (unsigned long long)p->ms,
			     p->full ? "; no memory to spare for more" : "",
			     keep ? "" : "; dropped: the image is not resumed");
	if (p->err || !keep) {
		engine_preload_free(p);
		*pp = NULL;
		return;
	}
	*ret_bytes = p->held;
	*ret_ms = p->ms;
}

int engine_preload_drain(struct engine_preload *p, struct hib_pipeline *pipe,
			 struct engine_read_pos *pos, struct hib_readahead **ra)
{
	*pos = (struct engine_read_pos){ 0 };
	*ra = NULL;
	if (!p)
		return 0;
	for (; p->drained < p->pos.block; p->drained++) {
		struct preload_rec *rec = &p->recs[p->drained];
		struct hib_job *job = pipeline_next_free(pipe);

		if (!job)
			return -ECANCELED;
		job->in = rec->buf; /* not copied: the area outlives the load */
		job->in_len = rec->len;
		job->user = ((const struct hib_block_hdr *)rec->buf)->stream_offset;
		job->flags = ENGINE_JOB_SUM_CHECKED; /* check_record did */
		p->held -= rec->len;
		*rec = (struct preload_rec){ 0 };
		pipeline_submit(pipe, job);
	}
	*pos = p->pos;
	*ra = TAKE_PTR(p->ra);
	return 0;
}

void engine_preload_free(struct engine_preload *p)
{
	if (!p)
		return;
	if (p->running) {
		atomic_store(&p->stop, true);
		pthread_join(p->thread, NULL);
	}
	if (p->area)
		munmap(p->area, p->area_len);
	free(p->recs);
	hib_readahead_free(p->ra);
	free(p);
}
