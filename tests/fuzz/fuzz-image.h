/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Whole images for fuzz_image and the seed generator: made through the fake
 * snapshot device (never /dev/snapshot), deterministic, and taken apart
 * leniently so that checksums can be put right after a mutation.
 *
 * Include in ONE translation unit per program: it defines getrandom().
 */
#ifndef HIB_FUZZ_IMAGE_H
#define HIB_FUZZ_IMAGE_H

#include <signal.h>
#include <sodium.h>
#include <stdbool.h>
#include <sys/random.h>
#include <sys/syscall.h>

#include "pipeline/crypt.h"
#include "format/format.h"
#include "fuzz-common.h"
#include "helpers.h"

/* ---- deterministic randomness ------------------------------------------- */
/*
 * An image's id seeds every checksum and its encryption draws salt, nonce and
 * data key: with real randomness every run would make different base images,
 * and a seed or a crash file would mean something else each time. While
 * fuzz_det_random is set, getrandom() (hib_random_u64) and libsodium's
 * randombytes (crypt_setup) draw from a fixed sequence instead.
 */
static bool fuzz_det_random;
static uint64_t fuzz_det_state;

static uint64_t fuzz_splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void fuzz_det_fill(void *buf, size_t len)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = fuzz_splitmix(&fuzz_det_state);
		memcpy(p + i, &v, len - i < 8 ? len - i : 8);
	}
}

/* Overrides libc's for this program (the library calls it through hib_random_u64). */
ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
	if (fuzz_det_random) {
		fuzz_det_fill(buf, len);
		return (ssize_t)len;
	}
	return syscall(SYS_getrandom, buf, len, flags);
}

static const char *fuzz_rb_name(void)
{
	return "fuzz-deterministic";
}
static uint32_t fuzz_rb_random(void)
{
	uint32_t v;

	if (!fuzz_det_random)
		return randombytes_sysrandom_implementation.random();
	fuzz_det_fill(&v, sizeof(v));
	return v;
}
static void fuzz_rb_stir(void)
{
}
static void fuzz_rb_buf(void *buf, size_t len)
{
	if (!fuzz_det_random)
		randombytes_sysrandom_implementation.buf(buf, len);
	else
		fuzz_det_fill(buf, len);
}
static int fuzz_rb_close(void)
{
	return 0;
}
static randombytes_implementation fuzz_rb_impl = {
	.implementation_name = fuzz_rb_name,
	.random = fuzz_rb_random,
	.stir = fuzz_rb_stir,
	.uniform = NULL,
	.buf = fuzz_rb_buf,
	.close = fuzz_rb_close,
};

/* Before anything calls sodium_init(). */
static void fuzz_random_install(void)
{
	if (randombytes_set_implementation(&fuzz_rb_impl) != 0 || sodium_init() < 0)
		abort();
}

/* ---- the base images ---------------------------------------------------- */

struct fuzz_base {
	const char *name;
	uint64_t seed; /* fake stream */
	uint64_t stream_pages;
	uint64_t swap_pages; /* = the image file's pages */
	uint32_t frag_every;
	enum hib_codec_choice codec;
	uint32_t block_bytes;
	bool encrypt; /* with FUZZ_KEYFILE */
};

/*
 * [0] is the fake of fuzz_image's raw mode (the small seed images share its
 * stream); [1..3] are the images that overlay mode mutates: lz4 with a
 * fragmented area, encrypted zstd, raw blocks of one page in a map of two
 * pages (every other swap page taken: one extent per page).
 */
#define FUZZ_NBASE 4
static const struct fuzz_base fuzz_bases[FUZZ_NBASE] = {
	/* Streams that do not end on a block boundary: the last block is short. */
	{ "tiny-lz4", 11, 15, 48, 0, HIB_COMPRESS_LZ4, 16384, false },
	{ "lz4-frag", 12, 94, 192, 5, HIB_COMPRESS_LZ4, 16384, false },
	{ "zstd-encrypted", 13, 61, 160, 7, HIB_COMPRESS_ZSTD, 32768, true },
	{ "none-2map", 14, 180, 700, 2, HIB_COMPRESS_NONE, 4096, false },
};

static inline struct hib_fake_params fuzz_base_fake(const struct fuzz_base *b)
{
	return fake_params(b->seed, b->stream_pages, b->swap_pages, b->frag_every);
}

/* ---- taking an image apart ---------------------------------------------- */

#define FUZZ_MAX_MAP 64
#define FUZZ_MAX_LP 8192
#define FUZZ_MAX_BLOCKS 1024

/* Where things are, as far as the bytes say; every field bounded by the buffer. */
struct fuzz_layout {
	bool ours; /* page 0 ends in our signature and tail magic */
	uint64_t image_id;
	struct hib_header *hdr; /* inside the buffer, or NULL */
	uint64_t hdr_off;
	uint32_t nmap;
	uint64_t map_off[FUZZ_MAX_MAP];
	uint32_t nlp;                /* logical pages mapped (inside the buffer) */
	uint32_t lpage[FUZZ_MAX_LP]; /* device page of each logical page */
	uint32_t nblocks;
	uint32_t block_lp[FUZZ_MAX_BLOCKS];
};

static bool fuzz_page_ok(uint64_t off, size_t size)
{
	return off % HIB_PAGE_SIZE == 0 && size >= HIB_PAGE_SIZE && off <= size - HIB_PAGE_SIZE;
}

static void fuzz_gather(const uint8_t *img, const struct fuzz_layout *L, uint32_t lp,
			uint32_t pages, uint8_t *out)
{
	for (uint32_t i = 0; i < pages; i++)
		memcpy(out + (size_t)i * HIB_PAGE_SIZE,
		       img + (size_t)L->lpage[lp + i] * HIB_PAGE_SIZE, HIB_PAGE_SIZE);
}

/* Walk tail → header → map chain → blocks, tolerating anything. */
static void fuzz_layout_parse(const uint8_t *img, size_t size, struct fuzz_layout *L)
{
	const struct hib_sig_tail *tail;
	uint64_t next;

	memset(L, 0, offsetof(struct fuzz_layout, lpage));
	L->nblocks = 0;
	if (size < HIB_PAGE_SIZE || !hib_tail_is_ours(img))
		return;
	L->ours = true;
	tail = (const void *)(img + HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE);
	L->image_id = tail->image_id;
	if (tail->header_offset == 0 || !fuzz_page_ok(tail->header_offset, size))
		return;
	L->hdr_off = tail->header_offset;
	L->hdr = (struct hib_header *)(img + L->hdr_off);

	next = L->hdr->map_offset;
	for (uint32_t i = 0; i < L->hdr->map_pages && L->nmap < FUZZ_MAX_MAP; i++) {
		const struct hib_map_page *mp;

		if (next == 0 || !fuzz_page_ok(next, size))
			break;
		mp = (const void *)(img + next);
		L->map_off[L->nmap++] = next;
		if (mp->count > HIB_MAP_ENTRIES)
			break;
		for (uint32_t k = 0; k < mp->count; k++) {
			uint64_t off = mp->ext[k].offset, pages = mp->ext[k].pages;

			if (off % HIB_PAGE_SIZE || off >= size)
				continue;
			for (uint64_t p = 0;
			     p < pages && off + p * HIB_PAGE_SIZE < size && L->nlp < FUZZ_MAX_LP;
			     p++)
				L->lpage[L->nlp++] = (uint32_t)(off / HIB_PAGE_SIZE + p);
		}
		next = mp->next_offset;
	}

	/* Blocks: as reader_main walks them. */
	for (uint32_t lp = 0, i = 0;
	     i < L->hdr->nr_blocks && lp < L->nlp && L->nblocks < FUZZ_MAX_BLOCKS; i++) {
		const struct hib_block_hdr *b =
			(const void *)(img + (size_t)L->lpage[lp] * HIB_PAGE_SIZE);
		uint64_t pages = hib_block_pages(b->stored_bytes);

		L->block_lp[L->nblocks++] = lp;
		if (b->magic != HIB_BLOCK_MAGIC || pages > L->nlp - lp)
			break;
		lp += (uint32_t)pages;
	}
}

enum {
	FUZZ_FIX_TAIL = 1,   /* the tail's own checksum */
	FUZZ_FIX_HEADER = 2, /* header MAC (if the key opens), self-checksum, tail's copy */
	FUZZ_FIX_MAP = 4,    /* every map page of the chain */
	FUZZ_FIX_BLOCKS = 8, /* every block's stored_xxh3 (never raw_xxh3 or stream_xxh3) */
	FUZZ_FIX_ALL = 15,
	FUZZ_FIX_NO_MAC = 16, /* with FUZZ_FIX_HEADER: leave the header MAC as it is */
};

/*
 * Put the container checksums right after a mutation, so the fuzzer reaches
 * the checks behind them. What the image decodes to stays protected (raw_xxh3,
 * stream_xxh3, the AEAD tags): a fixed-up image restores only if its stream is
 * the original one.
 */
static void fuzz_fixup(uint8_t *img, size_t size, unsigned what)
{
	static struct fuzz_layout L; /* big: not on the stack */
	struct hib_sig_tail *tail =
		(struct hib_sig_tail *)(img + HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE);

	fuzz_layout_parse(img, size, &L);
	if (!L.ours)
		return;
	if (L.hdr && (what & FUZZ_FIX_BLOCKS)) {
		for (uint32_t i = 0; i < L.nblocks; i++) {
			uint32_t lp = L.block_lp[i];
			struct hib_block_hdr *b =
				(void *)(img + (size_t)L.lpage[lp] * HIB_PAGE_SIZE);
			uint64_t pages = hib_block_pages(b->stored_bytes);
			uint8_t *rec;

			if (b->magic != HIB_BLOCK_MAGIC || pages > L.nlp - lp)
				break;
			rec = malloc(pages * HIB_PAGE_SIZE);
			if (!rec)
				abort();
			fuzz_gather(img, &L, lp, (uint32_t)pages, rec);
			b->stored_xxh3 = hib_block_stored_xxh3((struct hib_block_hdr *)rec,
							       rec + sizeof(*b), L.image_id);
			free(rec);
		}
	}
	if (what & FUZZ_FIX_MAP)
		for (uint32_t i = 0; i < L.nmap; i++)
			hib_map_page_seal((struct hib_map_page *)(img + L.map_off[i]), L.image_id);
	if (L.hdr && (what & FUZZ_FIX_HEADER)) {
		if ((L.hdr->flags & HIB_HFLAG_ENCRYPTED) && !(what & FUZZ_FIX_NO_MAC)) {
			struct hib_secret s = fuzz_secret();
			uint8_t *key = NULL;

			if (crypt_open(&s, L.hdr, &key) == 0) {
				crypt_header_mac_set(key, L.hdr);
				crypt_key_free(key);
			}
		}
		hib_header_seal(L.hdr);
		tail->header_xxh3 = hib_header_xxh3(L.hdr);
	}
	if (what & FUZZ_FIX_TAIL)
		hib_tail_seal(tail);
}

/* ---- making one -------------------------------------------------------- */

/* How a resume is run: the knobs of fuzz_image's second mode byte. */
enum fuzz_secret_mode {
	FUZZ_SECRET_RIGHT = 0, /* the fixture key file */
	FUZZ_SECRET_WRONG = 1, /* another key file, every attempt */
	FUZZ_SECRET_NONE = 2,  /* no ask_secret callback at all */
	FUZZ_SECRET_FAIL = 3,  /* the callback gives up (-ECANCELED) */
};

struct fuzz_resume_knobs {
	unsigned threads; /* codec threads (options.threads) */
	int attempts;     /* secret_attempts */
	enum fuzz_secret_mode secret;
	bool read_only;   /* target opened read-only */
	bool no_snapshot; /* hib_resume(t, NULL, …) */
	int stream_delta; /* the fake expects this many pages more (or fewer) */
	bool progress;    /* with a progress callback, checked */
};

static const struct fuzz_resume_knobs fuzz_knobs_default = { .threads = 1, .attempts = 1 };

struct fuzz_ask {
	int calls;
	int attempts;
	enum fuzz_secret_mode mode;
};

static int fuzz_ask_secret(int attempt, const char *what, struct hib_secret *ret, void *ud)
{
	static const char wrong[] = "not the key file the image was written with\n";
	struct fuzz_ask *a = ud;

	a->calls++;
	FUZZ_CHECK(attempt == a->calls);
	FUZZ_CHECK(attempt >= 1 && attempt <= a->attempts);
	FUZZ_CHECK(what != NULL);
	if (a->mode == FUZZ_SECRET_FAIL)
		return -ECANCELED;
	*ret = fuzz_secret();
	if (a->mode == FUZZ_SECRET_WRONG) {
		ret->data = wrong;
		ret->len = sizeof(wrong) - 1;
	}
	return 0;
}

struct fuzz_progress {
	uint64_t last, total;
	unsigned calls;
};

static void fuzz_progress_cb(const char *phase, uint64_t done, uint64_t total, void *ud)
{
	struct fuzz_progress *p = ud;

	FUZZ_CHECK(phase != NULL && strcmp(phase, "load") == 0);
	FUZZ_CHECK(done <= total && done >= p->last);
	FUZZ_CHECK(p->calls == 0 || total == p->total);
	p->last = done;
	p->total = total;
	p->calls++;
}

/* What came of a resume, and what it said. */
struct fuzz_resume_out {
	struct resume_result res;
	struct hib_stats stats;
	int ask_calls;
	uint64_t fake_pages; /* the stream the fake expected */
};

/* Resume the target at @path into a fresh fake of @b, as @k says. */
static struct fuzz_resume_out fuzz_resume_path(const char *path, const struct fuzz_base *b,
					       const struct fuzz_resume_knobs *k)
{
	struct fuzz_resume_out out = { .res = { .r = -EINVAL } };
	struct hib_fake_params fp = fuzz_base_fake(b);
	struct fuzz_ask ask = { .attempts = k->attempts, .mode = k->secret };
	struct fuzz_progress prog = { 0 };
	struct hib_target *t = NULL;
	struct hib_snapshot *snap = NULL;
	struct hib_options o;
	enum hib_resume_outcome outcome = 0;

	fp.stream_pages = (uint64_t)((int64_t)fp.stream_pages + k->stream_delta);
	out.fake_pages = fp.stream_pages;
	hib_options_init(&o);
	o.threads = k->threads;
	o.powerdown = HIB_POWERDOWN_NONE;
	if (k->secret != FUZZ_SECRET_NONE) {
		o.ask_secret = fuzz_ask_secret;
		o.ask_secret_userdata = &ask;
	}
	o.secret_attempts = k->attempts;
	if (k->progress) {
		o.progress = fuzz_progress_cb;
		o.progress_userdata = &prog;
	}
	out.res.r = hib_target_open(path, 0, !k->read_only, &t);
	if (out.res.r < 0)
		return out;
	if (!k->no_snapshot) {
		out.res.r = hib_snapshot_fake_new(&fp, HIB_SNAP_RESUME, &snap);
		if (out.res.r < 0) {
			hib_target_close(t);
			return out;
		}
	}
	memset(&out.stats, 0xa5, sizeof(out.stats));
	out.res.r = hib_resume(t, snap, &o, &outcome, &out.stats);
	out.res.r = cycle_result(out.res.r, outcome);
	if (snap)
		hib_snapshot_fake_result(snap, &out.res.pages_ok, &out.res.complete,
					 &out.res.restored, &out.res.frozen);
	out.ask_calls = ask.calls;
	hib_snapshot_close(snap);
	hib_target_close(t);
	return out;
}

/* Resume @img (@size bytes) into a fake of @b: what came of it. */
static struct resume_result fuzz_resume_buffer(const struct fuzz_base *b, const uint8_t *img,
					       size_t size)
{
	struct memfile mf;
	struct resume_result res;

	memfile_open(&mf, "fuzz-check");
	memfile_set(&mf, img, size);
	res = fuzz_resume_path(mf.path, b, &fuzz_knobs_default).res;
	close(mf.fd);
	return res;
}

static void fuzz_make_watchdog(int sig)
{
	static const char msg[] = "fuzz: hib_suspend hung for 60 s while writing a base image "
				  "through the fake device: a deadlock in the write path\n";
	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0) {
	}
	abort();
}

/*
 * Hibernate the fake of @b into a fresh swap area in memory, then make the
 * result independent of the machine and the clock: fixed creation time,
 * kernel identity and timings, checksums resealed. Aborts if the image does
 * not resume afterwards (the harness, not the library, would be broken).
 */
static uint8_t *fuzz_make_image(const struct fuzz_base *b, size_t *ret_size)
{
	struct hib_fake_params fp = fuzz_base_fake(b);
	struct hib_secret secret = fuzz_secret();
	struct hib_target *t = NULL;
	struct hib_snapshot *snap = NULL;
	struct hib_options o;
	struct fuzz_layout *L = calloc(1, sizeof(*L));
	struct memfile mf;
	size_t size = b->swap_pages * HIB_PAGE_SIZE;
	uint8_t *img = malloc(size);
	struct hib_sig_tail *tail;
	struct resume_result res;
	enum hib_suspend_outcome outcome = 0;
	int r;

	if (!img || !L)
		abort();
	memfile_open(&mf, "fuzz-base");
	make_swap_file(mf.fd, b->swap_pages);

	hib_options_init(&o);
	o.codec = b->codec;
	o.threads = 1;
	o.powerdown = HIB_POWERDOWN_NONE;
	o.block_bytes = b->block_bytes;
	if (b->encrypt)
		o.secret = &secret;
	fuzz_det_random = true;
	fuzz_det_state = b->seed * 0x100000001b3ull;
	/* What is fuzzed is reading images; writing them is only the fixture. Plain
	 * pwrite (not io_uring) keeps the fixture simple, and a hang says so. */
	o.io_mode = HIB_IO_SYNC;
	signal(SIGALRM, fuzz_make_watchdog);
	alarm(60);
	r = hib_target_open(mf.path, 0, true, &t);
	if (r == 0)
		r = hib_snapshot_fake_new(&fp, HIB_SNAP_HIBERNATE, &snap);
	if (r == 0)
		r = hib_suspend(t, snap, &o, &outcome, NULL);
	r = cycle_result(r, outcome);
	alarm(0);
	signal(SIGALRM, SIG_DFL);
	fuzz_det_random = false;
	if (r != HIB_SUSPEND_WRITTEN) {
		fprintf(stderr, "fuzz: writing base image %s failed: %d\n", b->name, r);
		abort();
	}
	hib_snapshot_close(snap);
	hib_target_close(t);
	memfile_get(&mf, img, size, 0);
	close(mf.fd);

	fuzz_layout_parse(img, size, L);
	if (!L->hdr)
		abort();
	tail = (struct hib_sig_tail *)(img + HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE);
	tail->created_unix = L->hdr->created_unix = 1700000000;
	memset(L->hdr->kernel_release, 0, sizeof(L->hdr->kernel_release));
	memset(L->hdr->kernel_version, 0, sizeof(L->hdr->kernel_version));
	memset(L->hdr->machine, 0, sizeof(L->hdr->machine));
	strcpy(L->hdr->kernel_release, "6.1.0-fuzz-amd64");
	strcpy(L->hdr->kernel_version, "#1 SMP PREEMPT_DYNAMIC Debian 6.1.0-fuzz (2023-11-14)");
	strcpy(L->hdr->machine, "x86_64");
	L->hdr->stat_snapshot_ms = 0;
	L->hdr->stat_write_ms = 0;
	fuzz_fixup(img, size, FUZZ_FIX_ALL);
	free(L);

	res = fuzz_resume_buffer(b, img, size);
	if (res.r != HIB_RESUME_RESTORED || !res.complete) {
		fprintf(stderr, "fuzz: base image %s does not resume (%d)\n", b->name, res.r);
		abort();
	}
	*ret_size = size;
	return img;
}

#endif
