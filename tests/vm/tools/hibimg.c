// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hibimg — the host side of the fault-injection scenarios (tests/vm/faults.sh):
 * reads a hibernation image straight out of a VM's disk image file, checks it,
 * and plans damage to it.
 *
 *   hibimg DISK PART-OFFSET PART-SIZE probe
 *       what the next boot will find on the partition: "state=none|image|
 *       broken|other complete=0|1 why=..."; complete=1 only when the tail, the
 *       header, every map page and every block record check out (what resume
 *       checks before it feeds the kernel, except the codec and the AEAD).
 *   hibimg DISK PART-OFFSET PART-SIZE info
 *       key=value lines: header_offset, image_id, blocks, map_pages, ...
 *   hibimg DISK PART-OFFSET PART-SIZE corrupt SEED COUNT PLAN STAGE
 *       COUNT random (seeded, reproducible) changes: single bytes, 8-byte
 *       runs, 512-byte sectors, zeroed pages and pages copied from elsewhere
 *       in the image, spread over the signature tail, the header page, the
 *       map pages and the data blocks; every one changes bytes that resume
 *       reads (never padding).
 *   hibimg DISK PART-OFFSET PART-SIZE grep TEXT...
 *       how often each TEXT occurs in the partition (one count per line),
 *       reading only what the sparse disk image file holds.
 *   hibimg DISK PART-OFFSET PART-SIZE tamper SEED PLAN STAGE
 *       changes to an encrypted image whose xxh3 checksums are recomputed so
 *       that only the header MAC, the key wrap or the blocks' AEAD can notice.
 *
 * A plan is text for the guest (tests/vm/guest/faults-guest.sh):
 *   T <n> <region> <kind> <what>        a trial
 *   P <dev-offset> <length> <stage-offset>   one patch of it: write <length>
 *                                       bytes from the staging area to the
 *                                       partition at <dev-offset>
 *   END
 * The staging file holds the replacement bytes, each patch at a 4 KiB boundary.
 *
 * Built by faults.sh on the host against lib/format (format.c, libxxhash).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"

#define PAGE HIB_PAGE_SIZE

static int disk_fd = -1;
static uint64_t part_off, part_size;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("hibimg: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void rd(uint64_t off, void *buf, size_t len)
{
	if (off + len > part_size)
		die("read beyond the partition: %" PRIu64 "+%zu", off, len);
	if (pread(disk_fd, buf, len, (off_t)(part_off + off)) != (ssize_t)len)
		die("short read at %" PRIu64, off);
}

/* ---- the image, as resume sees it ---------------------------------------- */

struct page_ref {
	uint64_t dev;  /* byte offset in the partition */
	uint32_t used; /* bytes of it that resume reads and checks */
};

struct block {
	struct hib_block_hdr h;
	uint32_t first_page; /* index into pages[] */
	uint32_t npages;
};

struct image {
	struct hib_sig_tail tail;
	struct hib_header hdr;
	uint64_t map_off[4096];
	uint32_t map_pages;
	struct hib_extent *ext;
	uint32_t next;
	uint64_t lpages;        /* logical pages in the map */
	struct page_ref *pages; /* every page of every block record, in order */
	uint32_t npages;
	struct block *blocks;
	uint32_t nblocks;
	char why[256];
	int state; /* 0 none, 1 image, 2 broken, 3 other */
	bool complete;
};

static uint64_t lookup(const struct image *im, uint64_t lp)
{
	for (uint32_t i = 0; i < im->next; i++) {
		if (lp < im->ext[i].pages)
			return im->ext[i].offset + lp * PAGE;
		lp -= im->ext[i].pages;
	}
	return UINT64_MAX;
}

#define BAD(...)                                                                                   \
	do {                                                                                       \
		snprintf(im->why, sizeof(im->why), __VA_ARGS__);                                   \
		return -1;                                                                         \
	} while (0)

/* Fill *im; 0 when the image is complete and sound. */
static int load(struct image *im)
{
	uint8_t page[PAGE];
	const uint8_t *sig = page + PAGE - HIB_SIG_LEN;
	uint64_t lp = 0, stream = 0;

	memset(im, 0, sizeof(*im));
	rd(0, page, PAGE);
	memcpy(&im->tail, page + PAGE - HIB_SIG_TAIL_SIZE, sizeof(im->tail));
	if (memcmp(sig, HIB_SWAP_SIG, HIB_SIG_LEN) == 0) {
		im->state = 0;
		BAD("SWAPSPACE2");
	}
	if (memcmp(sig, HIB_IMAGE_SIG, HIB_SIG_LEN) != 0 &&
	    memcmp(im->tail.magic, HIB_TAIL_MAGIC, 16) != 0) {
		im->state = 3;
		BAD("signature %.10s", (const char *)sig);
	}
	im->state = 2;
	if (hib_tail_check(&im->tail) != 0)
		BAD("tail check failed");
	im->state = 1;
	if (im->tail.header_offset + PAGE > part_size)
		BAD("header offset beyond the partition");
	rd(im->tail.header_offset, &im->hdr, PAGE);
	if (hib_header_check(&im->hdr, im->tail.image_id, im->tail.header_xxh3) != 0)
		BAD("header check failed");

	uint64_t next = im->hdr.map_offset;
	im->ext = calloc((size_t)im->hdr.map_pages * HIB_MAP_ENTRIES + 1, sizeof(*im->ext));
	if (!im->ext)
		die("out of memory");
	for (uint32_t i = 0; i < im->hdr.map_pages; i++) {
		struct hib_map_page mp;

		if (next == 0 || next + PAGE > part_size || i >= 4096)
			BAD("map chain broken at page %u", i);
		rd(next, &mp, PAGE);
		if (hib_map_page_check(&mp, im->tail.image_id, i) != 0)
			BAD("map page %u check failed", i);
		im->map_off[im->map_pages++] = next;
		for (uint32_t k = 0; k < mp.count; k++) {
			im->ext[im->next++] = mp.ext[k];
			im->lpages += mp.ext[k].pages;
		}
		next = mp.next_offset;
	}
	if (im->lpages != im->hdr.data_pages)
		BAD("map holds %" PRIu64 " pages, header says %" PRIu64, im->lpages,
		    im->hdr.data_pages);

	im->pages = calloc(im->lpages + 1, sizeof(*im->pages));
	im->blocks = calloc(im->hdr.nr_blocks + 1, sizeof(*im->blocks));
	if (!im->pages || !im->blocks)
		die("out of memory");
	uint8_t *rec = malloc((size_t)70 << 20);
	if (!rec)
		die("out of memory");
	for (uint32_t i = 0; i < im->hdr.nr_blocks; i++) {
		struct block *b = &im->blocks[i];
		uint64_t dev = lookup(im, lp);

		if (dev == UINT64_MAX || dev + PAGE > part_size)
			BAD("block %u: logical page %" PRIu64 " not mapped", i, lp);
		rd(dev, rec, PAGE);
		memcpy(&b->h, rec, sizeof(b->h));
		if (hib_block_hdr_check(&b->h, i, im->hdr.block_raw_bytes) != 0)
			BAD("block %u: header check failed", i);
		if (b->h.stream_offset != stream)
			BAD("block %u: stream offset", i);
		b->npages = (uint32_t)hib_block_pages(b->h.stored_bytes);
		b->first_page = im->npages;
		if (lp + b->npages > im->lpages)
			BAD("block %u runs past the map", i);
		uint64_t used = sizeof(struct hib_block_hdr) + b->h.stored_bytes;
		for (uint32_t k = 0; k < b->npages; k++) {
			struct page_ref *pr = &im->pages[im->npages++];
			pr->dev = lookup(im, lp + k);
			pr->used = (uint32_t)(used - (uint64_t)k * PAGE > PAGE
						      ? PAGE
						      : used - (uint64_t)k * PAGE);
			if (k)
				rd(pr->dev, rec + (size_t)k * PAGE, PAGE);
		}
		if (hib_block_stored_xxh3(&b->h, rec + sizeof(b->h), im->tail.image_id) !=
		    b->h.stored_xxh3)
			BAD("block %u: stored checksum", i);
		im->nblocks++;
		lp += b->npages;
		stream += b->h.raw_bytes;
	}
	free(rec);
	if (stream != im->hdr.stream_bytes)
		BAD("blocks hold %" PRIu64 " bytes, header says %" PRIu64, stream,
		    im->hdr.stream_bytes);
	im->complete = true;
	snprintf(im->why, sizeof(im->why), "ok");
	return 0;
}

/* ---- seeded random numbers (splitmix64: the same plan on every host) ------- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static void rnd_bytes(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

/* ---- plans ------------------------------------------------------------------ */

static FILE *plan_f, *stage_f;
static uint64_t stage_off;
static unsigned trial_no;

static void trial(const char *region, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void trial(const char *region, const char *kind, const char *fmt, ...)
{
	va_list ap;

	fprintf(plan_f, "T %u %s %s ", ++trial_no, region, kind);
	va_start(ap, fmt);
	vfprintf(plan_f, fmt, ap);
	va_end(ap);
	fputc('\n', plan_f);
}

/* One patch: @len bytes at partition offset @dev become @bytes. */
static void patch(uint64_t dev, const void *bytes, size_t len)
{
	static const uint8_t zero[PAGE];
	size_t pad = (PAGE - len % PAGE) % PAGE;

	fprintf(plan_f, "P %" PRIu64 " %zu %" PRIu64 "\n", dev, len, stage_off);
	if (fwrite(bytes, 1, len, stage_f) != len || fwrite(zero, 1, pad, stage_f) != pad)
		die("writing the staging file failed");
	stage_off += len + pad;
}

/* Replace @len bytes at @dev (inside a page whose first @used bytes count) with
 * new content from @make, retried until the counted bytes really differ. */
enum fill { FILL_FLIP, FILL_RANDOM, FILL_ZERO, FILL_COPY };

static bool fill(uint8_t *buf, const uint8_t *orig, size_t len, enum fill how,
		 const uint8_t *copy_from)
{
	switch (how) {
	case FILL_FLIP:
		buf[0] = orig[0] ^ (uint8_t)(1 + below(255));
		return true;
	case FILL_RANDOM:
		rnd_bytes(buf, len);
		break;
	case FILL_ZERO:
		memset(buf, 0, len);
		break;
	case FILL_COPY:
		memcpy(buf, copy_from, len);
		break;
	}
	return memcmp(buf, orig, len) != 0;
}

/* A change of the page at @dev, @used bytes of which resume reads. */
static bool change_in_page(const struct image *im, const char *region, uint64_t dev, uint32_t used,
			   const char *where)
{
	uint8_t orig[PAGE], buf[PAGE], other[PAGE];
	unsigned pick = (unsigned)below(100);

	rd(dev, orig, PAGE);
	if (pick < 45) { /* one byte */
		uint32_t at = (uint32_t)below(used);
		fill(buf, orig + at, 1, FILL_FLIP, NULL);
		trial(region, "byte", "%s,byte=%u,xor=0x%02x", where, at, buf[0] ^ orig[at]);
		patch(dev + at, buf, 1);
		return true;
	}
	if (pick < 70) { /* a 512-byte sector of garbage, touching the used bytes */
		uint32_t s = (uint32_t)below(used) / 512 * 512;
		if (!fill(buf, orig + s, 512, FILL_RANDOM, NULL))
			return false;
		trial(region, "sector", "%s,sector=%u", where, s / 512);
		patch(dev + s, buf, 512);
		return true;
	}
	if (pick < 85 || !im || im->npages < 2) { /* the page lost: zeros */
		if (!fill(buf, orig, used, FILL_ZERO, NULL))
			return false;
		memset(buf + used, 0, PAGE - used);
		trial(region, "zero-page", "%s", where);
		patch(dev, buf, PAGE);
		return true;
	}
	/* A misdirected write: another page of the image lands here. */
	uint32_t o = (uint32_t)below(im->npages);
	if (im->pages[o].dev == dev)
		return false;
	rd(im->pages[o].dev, other, PAGE);
	if (!fill(buf, orig, used, FILL_COPY, other))
		return false;
	memcpy(buf, other, PAGE);
	trial(region, "stale-page", "%s,from=%" PRIu64, where, im->pages[o].dev / PAGE);
	patch(dev, buf, PAGE);
	return true;
}

static void corrupt_tail(void)
{
	const uint64_t base = PAGE - HIB_SIG_TAIL_SIZE;
	uint8_t orig[HIB_SIG_TAIL_SIZE], buf[8];

	rd(base, orig, sizeof(orig));
	if (below(100) < 70) {
		/* A quarter in the magic, a quarter in the signature: what says "ours". */
		unsigned where = (unsigned)below(4);
		uint32_t at = where == 0   ? (uint32_t)below(16)
			      : where == 1 ? HIB_SIG_TAIL_SIZE - HIB_SIG_LEN +
						     (uint32_t)below(HIB_SIG_LEN)
					   : (uint32_t)below(HIB_SIG_TAIL_SIZE);
		fill(buf, orig + at, 1, FILL_FLIP, NULL);
		trial("tail", "byte", "tail_byte=%u,xor=0x%02x", at, buf[0] ^ orig[at]);
		patch(base + at, buf, 1);
	} else {
		uint32_t at;
		do {
			at = (uint32_t)below(HIB_SIG_TAIL_SIZE / 8) * 8;
		} while (!fill(buf, orig + at, 8, FILL_RANDOM, NULL));
		trial("tail", "run8", "tail_bytes=%u-%u", at, at + 7);
		patch(base + at, buf, 8);
	}
}

static void cmd_corrupt(struct image *im, unsigned count)
{
	unsigned n[4] = { 0 };

	/* Fixed shares, interleaved, so that every region gets its part whatever the
	 * seed and the count: tail, header and map 20% each, data blocks 40%. */
	static const unsigned cycle[10] = { 0, 1, 2, 3, 3, 0, 1, 2, 3, 3 };
	for (unsigned i = 0; i < count; i++) {
		unsigned region = cycle[i % 10];
		char where[64];

		n[region]++;
		switch (region) {
		case 0:
			corrupt_tail();
			break;
		case 1:
			snprintf(where, sizeof(where), "header@%" PRIu64,
				 im->tail.header_offset / PAGE);
			while (!change_in_page(NULL, "header", im->tail.header_offset, PAGE, where))
				;
			break;
		case 2: {
			uint32_t m = (uint32_t)below(im->map_pages);
			snprintf(where, sizeof(where), "map=%u@%" PRIu64, m, im->map_off[m] / PAGE);
			while (!change_in_page(NULL, "map", im->map_off[m], PAGE, where))
				;
			break;
		}
		default:
			for (;;) {
				uint32_t b = (uint32_t)below(im->nblocks);
				uint32_t k = (uint32_t)below(im->blocks[b].npages);
				const struct page_ref *pr =
					&im->pages[im->blocks[b].first_page + k];

				snprintf(where, sizeof(where), "block=%u/%u,page=%u@%" PRIu64, b,
					 im->nblocks, k, pr->dev / PAGE);
				if (change_in_page(im, "data", pr->dev, pr->used, where))
					break;
			}
		}
	}
	fprintf(plan_f, "END\n");
	fprintf(stderr, "hibimg: %u trials: tail %u, header %u, map %u, data %u\n", count, n[0],
		n[1], n[2], n[3]);
}

/* ---- tampering with an encrypted image ------------------------------------- */

/* The header changed by @edit, resealed: header page + tail. */
static void reseal_header(struct image *im, struct hib_header *h)
{
	struct hib_sig_tail t = im->tail;

	hib_header_seal(h);
	t.header_xxh3 = hib_header_xxh3(h);
	hib_tail_seal(&t);
	patch(im->tail.header_offset, h, PAGE);
	patch(PAGE - HIB_SIG_TAIL_SIZE, &t, sizeof(t));
}

/* Read block @b's whole record. */
static uint8_t *read_record(const struct image *im, uint32_t b)
{
	const struct block *bl = &im->blocks[b];
	uint8_t *rec = malloc((size_t)bl->npages * PAGE);

	if (!rec)
		die("out of memory");
	for (uint32_t k = 0; k < bl->npages; k++)
		rd(im->pages[bl->first_page + k].dev, rec + (size_t)k * PAGE, PAGE);
	return rec;
}

static void write_record(const struct image *im, uint32_t b, const uint8_t *rec)
{
	const struct block *bl = &im->blocks[b];

	for (uint32_t k = 0; k < bl->npages; k++)
		patch(im->pages[bl->first_page + k].dev, rec + (size_t)k * PAGE, PAGE);
}

static void reseal_block(const struct image *im, uint8_t *rec)
{
	struct hib_block_hdr *h = (struct hib_block_hdr *)rec;

	h->stored_xxh3 = hib_block_stored_xxh3(h, rec + sizeof(*h), im->tail.image_id);
}

/* A block with a payload (sealed blocks always have one), away from block 0. */
static uint32_t pick_block(const struct image *im)
{
	for (;;) {
		uint32_t b = (uint32_t)below(im->nblocks);
		if (im->blocks[b].h.stored_bytes > HIB_SEAL_TAG)
			return b;
	}
}

static void cmd_tamper(struct image *im)
{
	struct hib_header h;

	if (!(im->hdr.flags & HIB_HFLAG_ENCRYPTED))
		die("the image is not encrypted");

#define HEADER_TRIAL(kind, what, stmt)                                                             \
	do {                                                                                       \
		h = im->hdr;                                                                       \
		stmt;                                                                              \
		trial("header", kind, what);                                                       \
		reseal_header(im, &h);                                                             \
	} while (0)

	HEADER_TRIAL("created", "created_unix+1", h.created_unix += 1);
	HEADER_TRIAL("stats", "stat_write_ms^0x55", h.stat_write_ms ^= 0x55);
	HEADER_TRIAL("platform-flag", "flags^PLATFORM", h.flags ^= HIB_HFLAG_PLATFORM);
	HEADER_TRIAL("codec-level", "codec_level+3", h.codec_level += 3);
	HEADER_TRIAL("fs-entry", "nr_fs+1,a-filesystem-that-is-not-there", ({
			     struct hib_fs_state *f = &h.fs[h.nr_fs < HIB_MAX_FS ? h.nr_fs : 0];
			     rnd_bytes(f->uuid, 16);
			     f->fs_type = HIB_FS_EXT;
			     f->devnum = 0x0810;
			     if (h.nr_fs < HIB_MAX_FS)
				     h.nr_fs++;
		     }));
	HEADER_TRIAL("unencrypted", "flags&~ENCRYPTED(downgrade)", h.flags &= ~HIB_HFLAG_ENCRYPTED);
	HEADER_TRIAL("salt", "crypt.salt[0]^1", h.crypt.salt[0] ^= 1);
	HEADER_TRIAL("wrapped-key", "crypt.wrapped_key[7]^0x80", h.crypt.wrapped_key[7] ^= 0x80);
	HEADER_TRIAL("mac", "crypt.header_mac[0]^1", h.crypt.header_mac[0] ^= 1);

	/* Blocks: the xxh3 fixed up, so only the AEAD can object. */
	{
		uint32_t b = pick_block(im);
		uint8_t *rec = read_record(im, b);
		struct hib_block_hdr *bh = (struct hib_block_hdr *)rec;
		uint32_t at = (uint32_t)below(bh->stored_bytes);

		rec[sizeof(*bh) + at] ^= 0x01;
		reseal_block(im, rec);
		trial("data", "payload", "block=%u,payload_byte=%u^0x01", b, at);
		write_record(im, b, rec);
		free(rec);
	}
	{
		uint32_t b = pick_block(im);
		uint8_t *rec = read_record(im, b);
		struct hib_block_hdr *bh = (struct hib_block_hdr *)rec;

		bh->reserved[3] ^= 0x40;
		reseal_block(im, rec);
		trial("data", "block-header", "block=%u,reserved[3]^0x40", b);
		write_record(im, b, rec);
		free(rec);
	}
	{
		uint32_t b = pick_block(im);
		uint8_t *rec = read_record(im, b);
		struct hib_block_hdr *bh = (struct hib_block_hdr *)rec;

		bh->flags &= (uint16_t)~HIB_BFLAG_SEALED;
		reseal_block(im, rec);
		trial("data", "unsealed-flag", "block=%u,flags&~SEALED", b);
		write_record(im, b, rec);
		free(rec);
	}
	{
		/* Two records of the same size trade places, indices and stream offsets
		 * fixed up: each decrypts only under its own index. */
		uint32_t a = 0, c = 0;
		bool found = false;
		for (unsigned tries = 0; tries < 10000 && !found; tries++) {
			a = pick_block(im);
			c = pick_block(im);
			found = a != c && im->blocks[a].npages == im->blocks[c].npages &&
				im->blocks[a].h.raw_bytes == im->blocks[c].h.raw_bytes;
		}
		if (found) {
			uint8_t *ra = read_record(im, a), *rc = read_record(im, c);
			struct hib_block_hdr *ha = (struct hib_block_hdr *)ra;
			struct hib_block_hdr *hc = (struct hib_block_hdr *)rc;
			uint32_t ia = ha->index;
			uint64_t sa = ha->stream_offset;

			ha->index = hc->index;
			ha->stream_offset = hc->stream_offset;
			hc->index = ia;
			hc->stream_offset = sa;
			reseal_block(im, ra);
			reseal_block(im, rc);
			trial("data", "swapped-blocks", "blocks=%u<->%u", a, c);
			write_record(im, c, ra);
			write_record(im, a, rc);
			free(ra);
			free(rc);
		}
	}
	fprintf(plan_f, "END\n");
	fprintf(stderr, "hibimg: %u tamper trials\n", trial_no);
}

/* ---- plaintext search --------------------------------------------------------- */

/* How often each of @pats occurs in the partition, reading only the parts of the
 * disk image file that hold data (the rest is a hole: zeros). */
static void cmd_grep(int npats, char **pats)
{
	const size_t chunk = 4u << 20, overlap = 4096;
	uint8_t *buf = malloc(chunk + overlap);
	unsigned long long count[16] = { 0 };
	uint64_t off = 0;

	if (!buf || npats > 16)
		die("grep: out of memory or too many patterns");
	for (int i = 0; i < npats; i++)
		if (strlen(pats[i]) == 0 || strlen(pats[i]) >= overlap)
			die("grep: pattern length");
	while (off < part_size) {
		off_t data = lseek(disk_fd, (off_t)(part_off + off), SEEK_DATA);
		if (data < 0 || (uint64_t)data >= part_off + part_size)
			break;
		off_t hole = lseek(disk_fd, data, SEEK_HOLE);
		uint64_t end = hole < 0 ? part_off + part_size : (uint64_t)hole;
		if (end > part_off + part_size)
			end = part_off + part_size;
		/* Whole region, in chunks that overlap by less than a pattern. */
		for (uint64_t p = (uint64_t)data; p < end;) {
			size_t len =
				(size_t)(end - p < chunk + overlap ? end - p : chunk + overlap);
			if (pread(disk_fd, buf, len, (off_t)p) != (ssize_t)len)
				die("grep: short read");
			for (int i = 0; i < npats; i++) {
				size_t pl = strlen(pats[i]);
				const uint8_t *q = buf;
				/* Count matches that start in this chunk's first part only. */
				size_t limit = len == chunk + overlap ? chunk : len;
				while ((q = memmem(q, (size_t)(buf + len - q), pats[i], pl)) !=
					       NULL &&
				       (size_t)(q - buf) < limit) {
					count[i]++;
					q++;
				}
			}
			if (len < chunk + overlap)
				break;
			p += chunk;
		}
		off = end - part_off;
	}
	for (int i = 0; i < npats; i++)
		printf("%llu\n", count[i]);
	free(buf);
}

/* ---- main ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
	struct image *im = calloc(1, sizeof(*im));

	if (argc < 5 || !im)
		die("usage: hibimg DISK PART-OFFSET PART-SIZE probe|info|corrupt|tamper ...");
	disk_fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (disk_fd < 0)
		die("%s: %s", argv[1], strerror(errno));
	part_off = strtoull(argv[2], NULL, 0);
	part_size = strtoull(argv[3], NULL, 0);
	const char *cmd = argv[4];

	if (strcmp(cmd, "grep") == 0) {
		cmd_grep(argc - 5, argv + 5);
		return 0;
	}
	int r = load(im);

	if (strcmp(cmd, "probe") == 0) {
		static const char *const names[] = { "none", "image", "broken", "other" };
		printf("state=%s complete=%d why=%s\n", names[im->state], im->complete, im->why);
		return 0;
	}
	if (r < 0)
		die("no complete image: %s", im->why);
	if (strcmp(cmd, "info") == 0) {
		printf("header_offset=%" PRIu64 "\n", im->tail.header_offset);
		printf("image_id=%016" PRIx64 "\n", im->tail.image_id);
		printf("kernel=%s\n", im->hdr.kernel_release);
		printf("encrypted=%d\n", !!(im->hdr.flags & HIB_HFLAG_ENCRYPTED));
		printf("stream_bytes=%" PRIu64 "\n", im->hdr.stream_bytes);
		printf("stored_bytes=%" PRIu64 "\n", im->hdr.stat_stored_bytes);
		printf("blocks=%u\n", im->nblocks);
		printf("map_pages=%u\n", im->map_pages);
		printf("extents=%u\n", im->next);
		if (im->next) {
			printf("extent_first=%" PRIu64 ",%" PRIu64 "\n",
			       (uint64_t)im->ext[0].offset, (uint64_t)im->ext[0].pages);
			printf("extent_last=%" PRIu64 ",%" PRIu64 "\n",
			       (uint64_t)im->ext[im->next - 1].offset,
			       (uint64_t)im->ext[im->next - 1].pages);
		}
		uint64_t end = im->tail.header_offset + PAGE;
		for (uint32_t i = 0; i < im->next; i++)
			if (im->ext[i].offset + im->ext[i].pages * PAGE > end)
				end = im->ext[i].offset + im->ext[i].pages * PAGE;
		for (uint32_t i = 0; i < im->map_pages; i++)
			if (im->map_off[i] + PAGE > end)
				end = im->map_off[i] + PAGE;
		printf("end=%" PRIu64 "\n", end);
		return 0;
	}
	if (strcmp(cmd, "corrupt") == 0 && argc == 9) {
		rng_state = strtoull(argv[5], NULL, 0);
		plan_f = fopen(argv[7], "w");
		stage_f = fopen(argv[8], "w");
		if (!plan_f || !stage_f)
			die("cannot write the plan or the staging file");
		cmd_corrupt(im, (unsigned)strtoul(argv[6], NULL, 0));
	} else if (strcmp(cmd, "tamper") == 0 && argc == 8) {
		rng_state = strtoull(argv[5], NULL, 0);
		plan_f = fopen(argv[6], "w");
		stage_f = fopen(argv[7], "w");
		if (!plan_f || !stage_f)
			die("cannot write the plan or the staging file");
		cmd_tamper(im);
	} else {
		die("unknown command or wrong arguments: %s", cmd);
	}
	if (fclose(plan_f) || fclose(stage_f))
		die("writing the plan failed");
	return 0;
}
