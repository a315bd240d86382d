// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The on-disk structs of format.h: what a writer seals, a reader accepts, and
 * every single-bit change to it, a reader refuses. A resume trusts nothing it
 * did not check, so each field a reader relies on has a bounds case here,
 * with the checksums made right so that the bound itself is what is tested.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <cmocka.h>
#include <xxhash.h>

#include "format/format.h"
#include "format/xxh.h"
#include "helpers.h"

#define IMAGE_ID 0x6a09e667f3bcc908ull

/* ---- signature tail ---------------------------------------------------- */

static void make_tail(struct hib_sig_tail *t)
{
	memset(t, 0, sizeof(*t));
	memcpy(t->magic, HIB_TAIL_MAGIC, 16);
	t->version = HIB_FORMAT_VERSION;
	t->page_size = HIB_PAGE_SIZE;
	t->header_offset = 123ull * HIB_PAGE_SIZE;
	t->image_id = IMAGE_ID;
	t->header_xxh3 = 0xbb67ae8584caa73bull;
	t->created_unix = 1700000000;
	memcpy(t->orig_sig, HIB_SWAP_SIG, HIB_SIG_LEN);
	memcpy(t->sig, HIB_IMAGE_SIG, HIB_SIG_LEN);
	hib_tail_seal(t);
}

static void tail_round_trip(void **state)
{
	struct hib_sig_tail t, u;
	uint8_t page[HIB_PAGE_SIZE];

	(void)state;
	make_tail(&t);
	assert_int_equal(hib_tail_check(&t), 0);

	/* In place at the end of a swap header page it is recognised as ours. */
	memset(page, 0x11, sizeof(page));
	memcpy(page + HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE, &t, sizeof(t));
	assert_true(hib_tail_is_ours(page));
	memcpy(page + HIB_PAGE_SIZE - HIB_SIG_LEN, HIB_SWAP_SIG, HIB_SIG_LEN);
	assert_false(hib_tail_is_ours(page));

	/* Sealing is deterministic and covers the content. */
	u = t;
	hib_tail_seal(&u);
	assert_memory_equal(&u, &t, sizeof(t));
	u.created_unix++;
	hib_tail_seal(&u);
	assert_int_not_equal(u.tail_xxh3, t.tail_xxh3);
	assert_int_equal(hib_tail_check(&u), 0);
}

static void tail_every_bit_flip_rejected(void **state)
{
	struct hib_sig_tail good, bad;
	size_t magic_end = offsetof(struct hib_sig_tail, magic) + 16;
	size_t sig_start = offsetof(struct hib_sig_tail, sig);

	(void)state;
	make_tail(&good);
	for (size_t i = 0; i < sizeof(good); i++) {
		for (int bit = 0; bit < 8; bit++) {
			int r;

			bad = good;
			((uint8_t *)&bad)[i] ^= (uint8_t)(1u << bit);
			r = hib_tail_check(&bad);
			/* Not our magic or signature: not ours at all; anything else: damaged. */
			if (i < magic_end || i >= sig_start) {
				if (r != -ENOENT)
					fail_msg("tail byte %zu bit %d: %d, want -ENOENT", i, bit,
						 r);
			} else if (r != -EBADMSG) {
				fail_msg("tail byte %zu bit %d: %d, want -EBADMSG", i, bit, r);
			}
		}
	}
}

static void tail_version_mismatch_is_eproto(void **state)
{
	static const uint32_t versions[] = { 0, HIB_FORMAT_VERSION + 1, 0xffffffffu };
	struct hib_sig_tail t;

	(void)state;
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		make_tail(&t);
		t.version = versions[i];
		hib_tail_seal(&t);
		assert_int_equal(hib_tail_check(&t), -EPROTO);
	}
}

static void tail_bounds_checked(void **state)
{
	struct hib_sig_tail t;

	(void)state;
	make_tail(&t);
	t.page_size = 8192;
	hib_tail_seal(&t);
	assert_int_equal(hib_tail_check(&t), -EBADMSG);

	make_tail(&t);
	t.header_offset += 512; /* not on a page: the header is one page read with O_DIRECT */
	hib_tail_seal(&t);
	assert_int_equal(hib_tail_check(&t), -EBADMSG);
}

/* ---- header page ------------------------------------------------------- */

#define H_STREAM_PAGES 1000u
#define H_BLOCK (256u * 1024u)

static void make_header(struct hib_header *h)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, HIB_HEADER_MAGIC, 16);
	h->version = HIB_FORMAT_VERSION;
	h->image_id = IMAGE_ID;
	h->created_unix = 1700000000;
	snprintf(h->kernel_release, sizeof(h->kernel_release), "6.1.0-test");
	snprintf(h->kernel_version, sizeof(h->kernel_version), "#1 SMP PREEMPT_DYNAMIC");
	snprintf(h->machine, sizeof(h->machine), "x86_64");
	h->stream_bytes = (uint64_t)H_STREAM_PAGES * HIB_PAGE_SIZE;
	h->stream_xxh3 = 0x3c6ef372fe94f82bull;
	h->codec = HIB_CODEC_LZ4;
	h->block_raw_bytes = H_BLOCK;
	h->nr_blocks = (uint32_t)((h->stream_bytes + H_BLOCK - 1) / H_BLOCK);
	h->data_pages = 700;
	h->map_offset = 50ull * HIB_PAGE_SIZE;
	h->map_pages = 1;
	h->map_extents = 3;
	h->stat_snapshot_ms = 120;
	h->stat_write_ms = 900;
	h->stat_stored_bytes = 700ull * HIB_PAGE_SIZE;
	h->stat_threads = 4;
	memcpy(h->orig_tail + HIB_SIG_TAIL_SIZE - HIB_SIG_LEN, HIB_SWAP_SIG, HIB_SIG_LEN);
	hib_header_seal(h);
}

static void header_round_trip(void **state)
{
	struct hib_header h;
	uint64_t sum;

	(void)state;
	make_header(&h);
	sum = hib_header_xxh3(&h);
	assert_int_equal(hib_header_check(&h, IMAGE_ID, sum), 0);
	/* Another image's id, or the checksum another tail carries: refused. */
	assert_int_equal(hib_header_check(&h, IMAGE_ID + 1, sum), -EBADMSG);
	assert_int_equal(hib_header_check(&h, IMAGE_ID, sum ^ 1), -EBADMSG);
	/* The page checksum is seeded with the image id. */
	{
		struct hib_header o = h;
		o.image_id = IMAGE_ID + 1;
		hib_header_seal(&o);
		o.image_id = IMAGE_ID;
		assert_int_not_equal(o.header_xxh3_self, h.header_xxh3_self);
	}
}

/* A reader checks the header against the id and page checksum of a good tail. */
static void header_every_bit_flip_rejected(void **state)
{
	struct hib_header good, bad;
	uint64_t sum;

	(void)state;
	make_header(&good);
	sum = hib_header_xxh3(&good);
	for (size_t i = 0; i < sizeof(good); i++) {
		for (int bit = 0; bit < 8; bit++) {
			int r;

			bad = good;
			((uint8_t *)&bad)[i] ^= (uint8_t)(1u << bit);
			r = hib_header_check(&bad, IMAGE_ID, sum);
			if (r != -EBADMSG)
				fail_msg("header byte %zu bit %d: %d, want -EBADMSG", i, bit, r);
		}
	}
}

/* The tail and the header both sealed over the damage: only the header's own
 * checksum is left to catch it. */
static void header_self_checksum_catches_damage(void **state)
{
	struct hib_header good, bad;

	(void)state;
	make_header(&good);
	for (size_t i = 0; i < offsetof(struct hib_header, header_xxh3_self); i += 97) {
		bad = good;
		((uint8_t *)&bad)[i] ^= 0x40;
		/* The tail would carry the checksum of the damaged page... */
		if (hib_header_check(&bad, bad.image_id, hib_header_xxh3(&bad)) != -EBADMSG)
			fail_msg("header byte %zu: damage under a matching tail accepted", i);
	}
}

static void header_version_mismatch_is_eproto(void **state)
{
	static const uint32_t versions[] = { 0, HIB_FORMAT_VERSION + 1, 0xffffffffu };
	struct hib_header h;

	(void)state;
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		make_header(&h);
		h.version = versions[i];
		hib_header_seal(&h);
		assert_int_equal(hib_header_check(&h, IMAGE_ID, hib_header_xxh3(&h)), -EPROTO);
	}
}

/* Bounds: one field made wrong, the checksums made right. */
struct header_case {
	const char *name;
	void (*mutate)(struct hib_header *h);
	int want;
};

static void hm_nr_blocks_plus_one(struct hib_header *h)
{
	h->nr_blocks++;
}
static void hm_nr_blocks_minus_one(struct hib_header *h)
{
	h->nr_blocks--;
}
static void hm_nr_blocks_zero(struct hib_header *h)
{
	h->nr_blocks = 0;
}
static void hm_stream_zero(struct hib_header *h)
{
	h->stream_bytes = 0;
}
static void hm_stream_not_page(struct hib_header *h)
{
	h->stream_bytes -= 100;
}
static void hm_block_zero(struct hib_header *h)
{
	h->block_raw_bytes = 0;
}
static void hm_block_not_page(struct hib_header *h)
{
	h->block_raw_bytes = H_BLOCK + 512;
	h->nr_blocks = (uint32_t)((h->stream_bytes + h->block_raw_bytes - 1) / h->block_raw_bytes);
}
static void hm_block_huge(struct hib_header *h)
{
	h->block_raw_bytes = HIB_BLOCK_MAX_BYTES + HIB_PAGE_SIZE;
	h->nr_blocks = 1;
}
/* Page multiples, but no size hibernate writes. */
static void hm_block_not_power_of_two(struct hib_header *h)
{
	h->block_raw_bytes = 3 * HIB_PAGE_SIZE;
	h->nr_blocks = (uint32_t)((h->stream_bytes + h->block_raw_bytes - 1) / h->block_raw_bytes);
}
static void hm_block_8_mib(struct hib_header *h)
{
	h->block_raw_bytes = 8u << 20; /* readers once took up to 16 MiB */
	h->nr_blocks = 1;
}
static void hm_codec_unknown(struct hib_header *h)
{
	h->codec = HIB_CODEC_MAX;
}
static void hm_map_offset_not_page(struct hib_header *h)
{
	h->map_offset += 8;
}
static void hm_map_pages_zero(struct hib_header *h)
{
	h->map_pages = 0;
}
static void hm_map_extents_too_many(struct hib_header *h)
{
	h->map_extents = (uint32_t)(h->map_pages * HIB_MAP_ENTRIES + 1);
}
static void hm_data_pages_short(struct hib_header *h)
{
	h->data_pages = h->nr_blocks - 1;
}
static void hm_release_unterminated(struct hib_header *h)
{
	memset(h->kernel_release, 'a', sizeof(h->kernel_release));
}
static void hm_version_unterminated(struct hib_header *h)
{
	memset(h->kernel_version, 'b', sizeof(h->kernel_version));
}
static void hm_machine_unterminated(struct hib_header *h)
{
	memset(h->machine, 'c', sizeof(h->machine));
}
/*
 * A stream so large that rounding it up to blocks wraps around 2^64: the
 * block count must still be checked, not come out as 0 blocks for 16 EiB.
 */
static void hm_stream_wraps_block_count(struct hib_header *h)
{
	h->block_raw_bytes = 8192;
	h->stream_bytes = UINT64_MAX - (HIB_PAGE_SIZE - 1); /* page aligned */
	h->nr_blocks = (uint32_t)((h->stream_bytes + h->block_raw_bytes - 1) /
				  h->block_raw_bytes); /* what a wrapped sum gives */
	h->data_pages = h->nr_blocks;
}
/* Limits that are fine, to show the cases above fail for their one field. */
static void hm_map_extents_full(struct hib_header *h)
{
	h->map_extents = (uint32_t)(h->map_pages * HIB_MAP_ENTRIES);
}
static void hm_stream_one_partial_block(struct hib_header *h)
{
	h->stream_bytes = (uint64_t)H_BLOCK * 3 + HIB_PAGE_SIZE;
	h->nr_blocks = 4;
}
static void hm_block_max(struct hib_header *h)
{
	h->block_raw_bytes = HIB_BLOCK_MAX_BYTES;
	h->nr_blocks = 1;
}
/* The later filesystem records (nr_fs_later) follow the first in one array. */
static void hm_fs_later_overflow(struct hib_header *h)
{
	h->nr_fs = 2;
	h->nr_fs_later = HIB_MAX_FS - 1;
}
static void hm_fs_later_wraps(struct hib_header *h)
{
	h->nr_fs = 1;
	h->nr_fs_later = 0xffffffffu;
}
static void hm_fs_full(struct hib_header *h)
{
	h->nr_fs = 3;
	h->nr_fs_later = HIB_MAX_FS - 3;
}

static const struct header_case header_cases[] = {
	{ "header_rejects_nr_blocks_above_stream", hm_nr_blocks_plus_one, -EBADMSG },
	{ "header_rejects_nr_blocks_below_stream", hm_nr_blocks_minus_one, -EBADMSG },
	{ "header_rejects_zero_blocks", hm_nr_blocks_zero, -EBADMSG },
	{ "header_rejects_empty_stream", hm_stream_zero, -EBADMSG },
	{ "header_rejects_stream_not_page_multiple", hm_stream_not_page, -EBADMSG },
	{ "header_rejects_zero_block_size", hm_block_zero, -EBADMSG },
	{ "header_rejects_block_size_not_page_multiple", hm_block_not_page, -EBADMSG },
	{ "header_rejects_block_size_above_the_maximum", hm_block_huge, -EBADMSG },
	{ "header_rejects_block_size_not_a_power_of_two", hm_block_not_power_of_two, -EBADMSG },
	{ "header_rejects_blocks_of_8_mib", hm_block_8_mib, -EBADMSG },
	{ "header_rejects_unknown_codec", hm_codec_unknown, -EBADMSG },
	{ "header_rejects_misaligned_map_offset", hm_map_offset_not_page, -EBADMSG },
	{ "header_rejects_zero_map_pages", hm_map_pages_zero, -EBADMSG },
	{ "header_rejects_more_extents_than_map_pages_hold", hm_map_extents_too_many, -EBADMSG },
	{ "header_rejects_fewer_data_pages_than_blocks", hm_data_pages_short, -EBADMSG },
	{ "header_rejects_unterminated_kernel_release", hm_release_unterminated, -EBADMSG },
	{ "header_rejects_unterminated_kernel_version", hm_version_unterminated, -EBADMSG },
	{ "header_rejects_unterminated_machine", hm_machine_unterminated, -EBADMSG },
	{ "header_rejects_stream_bytes_wrapping_block_count", hm_stream_wraps_block_count,
	  -EBADMSG },
	{ "header_rejects_more_fs_records_than_fit", hm_fs_later_overflow, -EBADMSG },
	{ "header_rejects_fs_record_count_wrapping", hm_fs_later_wraps, -EBADMSG },
	{ "header_accepts_every_fs_record_slot", hm_fs_full, 0 },
	{ "header_accepts_full_map_pages", hm_map_extents_full, 0 },
	{ "header_accepts_partial_last_block", hm_stream_one_partial_block, 0 },
	{ "header_accepts_the_largest_blocks", hm_block_max, 0 },
};

static void header_bounds(void **state)
{
	const struct header_case *c = *state;
	struct hib_header h;

	make_header(&h);
	c->mutate(&h);
	hib_header_seal(&h);
	assert_int_equal(hib_header_check(&h, h.image_id, hib_header_xxh3(&h)), c->want);
}

/* ---- map pages --------------------------------------------------------- */

static void make_map_page(struct hib_map_page *m, uint32_t index)
{
	memset(m, 0, sizeof(*m));
	memcpy(m->magic, HIB_MAP_MAGIC, 4);
	m->index = index;
	m->count = 3;
	m->next_offset = 77ull * HIB_PAGE_SIZE;
	m->ext[0] = (struct hib_extent){ .offset = 1ull * HIB_PAGE_SIZE, .pages = 10 };
	m->ext[1] = (struct hib_extent){ .offset = 20ull * HIB_PAGE_SIZE, .pages = 5 };
	m->ext[2] = (struct hib_extent){ .offset = 40ull * HIB_PAGE_SIZE, .pages = 1 };
	hib_map_page_seal(m, IMAGE_ID);
}

static void map_page_round_trip(void **state)
{
	struct hib_map_page m, n;

	(void)state;
	make_map_page(&m, 2);
	assert_int_equal(hib_map_page_check(&m, IMAGE_ID, 2), 0);
	/* Out of chain order, or another image's page: refused. */
	assert_int_equal(hib_map_page_check(&m, IMAGE_ID, 1), -EBADMSG);
	assert_int_equal(hib_map_page_check(&m, IMAGE_ID, 3), -EBADMSG);
	assert_int_equal(hib_map_page_check(&m, IMAGE_ID + 1, 2), -EBADMSG);
	/* Sealing twice gives the same page (the checksum field is not summed). */
	n = m;
	hib_map_page_seal(&n, IMAGE_ID);
	assert_memory_equal(&n, &m, sizeof(m));
	/* The last page of a chain, full. */
	m.next_offset = 0;
	m.count = HIB_MAP_ENTRIES;
	for (uint32_t i = 0; i < HIB_MAP_ENTRIES; i++)
		m.ext[i] =
			(struct hib_extent){ .offset = (2ull * i + 1) * HIB_PAGE_SIZE, .pages = 1 };
	hib_map_page_seal(&m, IMAGE_ID);
	assert_int_equal(hib_map_page_check(&m, IMAGE_ID, 2), 0);
}

static void map_page_every_bit_flip_rejected(void **state)
{
	struct hib_map_page good, bad;

	(void)state;
	make_map_page(&good, 0);
	for (size_t i = 0; i < sizeof(good); i++) {
		for (int bit = 0; bit < 8; bit++) {
			int r;

			bad = good;
			((uint8_t *)&bad)[i] ^= (uint8_t)(1u << bit);
			r = hib_map_page_check(&bad, IMAGE_ID, 0);
			if (r != -EBADMSG)
				fail_msg("map page byte %zu bit %d: %d, want -EBADMSG", i, bit, r);
		}
	}
}

struct map_case {
	const char *name;
	void (*mutate)(struct hib_map_page *m);
	int want;
};

static void mm_count_zero(struct hib_map_page *m)
{
	m->count = 0;
}
static void mm_count_too_big(struct hib_map_page *m)
{
	m->count = HIB_MAP_ENTRIES + 1;
}
static void mm_next_misaligned(struct hib_map_page *m)
{
	m->next_offset += 1;
}
static void mm_extent_misaligned(struct hib_map_page *m)
{
	m->ext[1].offset += 512;
}
static void mm_extent_empty(struct hib_map_page *m)
{
	m->ext[2].pages = 0;
}
static void mm_extent_pages_overflow(struct hib_map_page *m)
{
	m->ext[1].pages = UINT64_MAX / HIB_PAGE_SIZE + 1;
}
static void mm_extent_end_wraps(struct hib_map_page *m)
{
	m->ext[0].offset = UINT64_MAX - (HIB_PAGE_SIZE - 1); /* page aligned */
	m->ext[0].pages = 2;
}
static void mm_unused_entry_garbage(struct hib_map_page *m)
{
	/* Past count: not an extent, so no bound applies (the checksum still does). */
	m->ext[m->count].offset = 12345;
	m->ext[m->count].pages = 0;
}

static const struct map_case map_cases[] = {
	{ "map_page_rejects_zero_count", mm_count_zero, -EBADMSG },
	{ "map_page_rejects_count_above_capacity", mm_count_too_big, -EBADMSG },
	{ "map_page_rejects_misaligned_next", mm_next_misaligned, -EBADMSG },
	{ "map_page_rejects_misaligned_extent", mm_extent_misaligned, -EBADMSG },
	{ "map_page_rejects_empty_extent", mm_extent_empty, -EBADMSG },
	{ "map_page_rejects_extent_pages_overflowing_bytes", mm_extent_pages_overflow, -EBADMSG },
	{ "map_page_rejects_extent_wrapping_2_64", mm_extent_end_wraps, -EBADMSG },
	{ "map_page_ignores_entries_past_count", mm_unused_entry_garbage, 0 },
};

static void map_page_bounds(void **state)
{
	const struct map_case *c = *state;
	struct hib_map_page m;

	make_map_page(&m, 0);
	c->mutate(&m);
	hib_map_page_seal(&m, IMAGE_ID);
	assert_int_equal(hib_map_page_check(&m, IMAGE_ID, 0), c->want);
}

/* ---- block headers ----------------------------------------------------- */

#define B_MAX (64u * 1024u)
#define B_PAYLOAD 300u

/* A header and payload, as laid out on disk: header, then payload. */
struct record {
	struct hib_block_hdr h;
	uint8_t payload[B_MAX + B_MAX / 64 + 1024 + HIB_PAGE_SIZE];
};

static void make_record(struct record *rec, uint16_t codec)
{
	memset(rec, 0, sizeof(*rec));
	rec->h.magic = HIB_BLOCK_MAGIC;
	rec->h.index = 7;
	rec->h.raw_bytes = B_MAX;
	rec->h.codec = codec;
	switch (codec) {
	case HIB_BLOCK_RAW:
		rec->h.stored_bytes = B_MAX;
		break;
	case HIB_BLOCK_ZERO:
		rec->h.stored_bytes = 0;
		break;
	default:
		rec->h.stored_bytes = B_PAYLOAD;
	}
	rec->h.raw_xxh3 = 0x510e527fade682d1ull;
	rec->h.stream_offset = 7ull * B_MAX;
	for (uint32_t i = 0; i < rec->h.stored_bytes; i++)
		rec->payload[i] = (uint8_t)(i * 131u + 7u);
	rec->h.stored_xxh3 = hib_block_stored_xxh3(&rec->h, rec->payload, IMAGE_ID);
}

/* What a reader does: bounds first, then the record checksum. */
static int record_check(const struct record *rec)
{
	int r = hib_block_hdr_check(&rec->h, 7, B_MAX);

	if (r < 0)
		return r;
	if (hib_block_stored_xxh3(&rec->h, rec->payload, IMAGE_ID) != rec->h.stored_xxh3)
		return -EBADMSG;
	return 0;
}

static void block_header_round_trip(void **state)
{
	static const uint16_t codecs[] = { HIB_BLOCK_RAW, HIB_BLOCK_LZ4, HIB_BLOCK_ZSTD,
					   HIB_BLOCK_ZERO };
	struct record *rec = malloc(sizeof(*rec));

	(void)state;
	assert_non_null(rec);
	for (size_t i = 0; i < sizeof(codecs) / sizeof(codecs[0]); i++) {
		make_record(rec, codecs[i]);
		assert_int_equal(hib_block_hdr_check(&rec->h, 7, B_MAX), 0);
		assert_int_equal(record_check(rec), 0);
		/* The record checksum is seeded with the image id. */
		assert_int_not_equal(hib_block_stored_xxh3(&rec->h, rec->payload, IMAGE_ID + 1),
				     rec->h.stored_xxh3);
	}
	free(rec);
}

static void block_every_bit_flip_rejected(void **state)
{
	static const uint16_t codecs[] = { HIB_BLOCK_LZ4, HIB_BLOCK_ZERO };
	struct record *good = malloc(sizeof(*good)), *bad = malloc(sizeof(*bad));

	(void)state;
	assert_non_null(good);
	assert_non_null(bad);
	for (size_t c = 0; c < sizeof(codecs) / sizeof(codecs[0]); c++) {
		size_t len;

		make_record(good, codecs[c]);
		len = sizeof(good->h) + good->h.stored_bytes;
		for (size_t i = 0; i < len; i++) {
			for (int bit = 0; bit < 8; bit++) {
				int r;

				memcpy(bad, good, sizeof(*bad));
				((uint8_t *)bad)[i] ^= (uint8_t)(1u << bit);
				r = record_check(bad);
				if (r != -EBADMSG)
					fail_msg(
						"codec %u record byte %zu bit %d: %d, want -EBADMSG",
						codecs[c], i, bit, r);
			}
		}
	}
	free(good);
	free(bad);
}

struct block_case {
	const char *name;
	uint16_t codec;
	void (*mutate)(struct hib_block_hdr *h);
	int want;
};

static void bm_magic(struct hib_block_hdr *h)
{
	h->magic ^= 0x100;
}
static void bm_index(struct hib_block_hdr *h)
{
	h->index++;
}
static void bm_raw_zero(struct hib_block_hdr *h)
{
	h->raw_bytes = 0;
}
static void bm_raw_not_page(struct hib_block_hdr *h)
{
	h->raw_bytes -= 8;
}
static void bm_raw_above_block(struct hib_block_hdr *h)
{
	h->raw_bytes = B_MAX + HIB_PAGE_SIZE;
}
static void bm_raw_stored_mismatch(struct hib_block_hdr *h)
{
	h->stored_bytes -= HIB_PAGE_SIZE;
}
static void bm_zero_with_payload(struct hib_block_hdr *h)
{
	h->stored_bytes = 16;
}
static void bm_compressed_empty(struct hib_block_hdr *h)
{
	h->stored_bytes = 0;
}
static void bm_compressed_huge(struct hib_block_hdr *h)
{
	h->stored_bytes = 2 * B_MAX;
}
static void bm_codec_unknown(struct hib_block_hdr *h)
{
	h->codec = HIB_BLOCK_ZERO + 1;
}
static void bm_short_last_block(struct hib_block_hdr *h)
{
	h->raw_bytes = 3 * HIB_PAGE_SIZE;
	h->stored_bytes = h->codec == HIB_BLOCK_RAW ? h->raw_bytes : h->stored_bytes;
}

static const struct block_case block_cases[] = {
	{ "block_header_rejects_bad_magic", HIB_BLOCK_LZ4, bm_magic, -EBADMSG },
	{ "block_header_rejects_wrong_index", HIB_BLOCK_LZ4, bm_index, -EBADMSG },
	{ "block_header_rejects_zero_raw_bytes", HIB_BLOCK_LZ4, bm_raw_zero, -EBADMSG },
	{ "block_header_rejects_raw_bytes_not_page", HIB_BLOCK_ZSTD, bm_raw_not_page, -EBADMSG },
	{ "block_header_rejects_raw_bytes_above_block", HIB_BLOCK_ZERO, bm_raw_above_block,
	  -EBADMSG },
	{ "block_header_rejects_raw_block_stored_mismatch", HIB_BLOCK_RAW, bm_raw_stored_mismatch,
	  -EBADMSG },
	{ "block_header_rejects_zero_block_with_payload", HIB_BLOCK_ZERO, bm_zero_with_payload,
	  -EBADMSG },
	{ "block_header_rejects_empty_compressed_payload", HIB_BLOCK_LZ4, bm_compressed_empty,
	  -EBADMSG },
	{ "block_header_rejects_compressed_payload_twice_block", HIB_BLOCK_ZSTD, bm_compressed_huge,
	  -EBADMSG },
	{ "block_header_rejects_unknown_codec", HIB_BLOCK_LZ4, bm_codec_unknown, -EBADMSG },
	{ "block_header_accepts_short_last_raw_block", HIB_BLOCK_RAW, bm_short_last_block, 0 },
	{ "block_header_accepts_short_last_lz4_block", HIB_BLOCK_LZ4, bm_short_last_block, 0 },
};

static void block_header_bounds(void **state)
{
	const struct block_case *c = *state;
	struct record *rec = malloc(sizeof(*rec));

	assert_non_null(rec);
	make_record(rec, c->codec);
	c->mutate(&rec->h);
	assert_int_equal(hib_block_hdr_check(&rec->h, 7, B_MAX), c->want);
	free(rec);
}

/* The page count a record occupies: header included, rounded up. */
static void block_pages_rounding(void **state)
{
	(void)state;
	for (uint32_t stored = 0; stored < 5 * HIB_PAGE_SIZE; stored += 1 + stored / 3) {
		uint64_t pages = hib_block_pages(stored);
		uint64_t bytes = sizeof(struct hib_block_hdr) + stored;

		assert_true(pages * HIB_PAGE_SIZE >= bytes);
		assert_true((pages - 1) * HIB_PAGE_SIZE < bytes);
	}
	assert_int_equal(hib_block_pages(0), 1);
}

/* ---- builders: the bytes a writer lays down ------------------------------ */

/*
 * The builders over fixed inputs give exactly the bytes the writer gave
 * before they existed (XXH3-64 of each page, taken from that code with the
 * same inputs): an image written before resumes after, and after before.
 */
#define PIN_ID 0x0123456789abcdefull
#define PIN_HDR_OFF 4096ull
#define PIN_EXTENTS 300u

static const uint64_t pinned_map_offs[2] = { 77ull * HIB_PAGE_SIZE, 78ull * HIB_PAGE_SIZE };

static void pin_kernel(struct utsname *u)
{
	memset(u, 0, sizeof(*u));
	strcpy(u->release, "6.12.0-test");
	strcpy(u->version, "#1 SMP PREEMPT_DYNAMIC Debian 6.12.1-1 (2024-11-22)");
	strcpy(u->machine, "x86_64");
}

static void pin_orig_page(uint8_t *page)
{
	for (unsigned i = 0; i < HIB_PAGE_SIZE; i++)
		page[i] = (uint8_t)(i * 13 + 5);
	memcpy(page + HIB_PAGE_SIZE - HIB_SIG_LEN, HIB_SWAP_SIG, HIB_SIG_LEN);
}

/* The header as the writer leaves it: initialised, filled in after the write, sealed. */
static void pin_header(struct hib_header *h, const uint8_t *orig_page, bool sealed)
{
	struct utsname u;

	pin_kernel(&u);
	hib_header_init(h, PIN_ID, 1700000000, HIB_CODEC_ZSTD, 3, 256 * 1024, &u, orig_page);
	if (!sealed)
		return;
	h->flags |= HIB_HFLAG_PLATFORM;
	h->stat_snapshot_ms = 1234;
	h->stream_bytes = 1000ull * HIB_PAGE_SIZE;
	h->stream_xxh3 = 0x1122334455667788ull;
	h->nr_blocks = 16;
	h->data_pages = 600;
	h->map_extents = PIN_EXTENTS;
	h->stat_stored_bytes = 600ull * HIB_PAGE_SIZE;
	h->stat_threads = 4;
	h->map_offset = pinned_map_offs[0];
	h->map_pages = 2;
	h->stat_write_ms = 5678;
	hib_header_seal(h);
}

static void header_init_gives_the_same_bytes(void **state)
{
	uint8_t orig[HIB_PAGE_SIZE];
	struct hib_header h;

	(void)state;
	pin_orig_page(orig);
	pin_header(&h, orig, false);
	assert_int_equal(XXH3_64bits(&h, sizeof(h)), 0x4e10e2d881258fa0ull);
	assert_memory_equal(h.orig_tail, orig + HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE,
			    HIB_SIG_TAIL_SIZE);
	pin_header(&h, orig, true);
	assert_int_equal(XXH3_64bits(&h, sizeof(h)), 0xb873a6b86cb785a1ull);
	assert_int_equal(hib_header_check(&h, PIN_ID, hib_header_xxh3(&h)), 0);
}

static void tail_build_gives_the_same_bytes(void **state)
{
	uint8_t orig[HIB_PAGE_SIZE];
	struct hib_header h;
	struct hib_sig_tail t;

	(void)state;
	pin_orig_page(orig);
	pin_header(&h, orig, true);
	hib_tail_build(&t, &h, PIN_HDR_OFF, orig);
	assert_int_equal(XXH3_64bits(&t, sizeof(t)), 0xc8fba86441604063ull);
	assert_int_equal(hib_tail_check(&t), 0);
	assert_int_equal(t.header_xxh3, hib_header_xxh3(&h));
}

static void map_page_build_gives_the_same_bytes(void **state)
{
	static const uint64_t want[2] = { 0x381ac4495c11e1e5ull, 0xc364469808376b43ull };
	struct hib_extent ext[PIN_EXTENTS];
	struct hib_map_page m;

	(void)state;
	for (unsigned i = 0; i < PIN_EXTENTS; i++)
		ext[i] = (struct hib_extent){ .offset = (100ull + 3 * i) * HIB_PAGE_SIZE,
					      .pages = 2 };
	for (uint32_t i = 0; i < 2; i++) {
		uint64_t next = i + 1 < 2 ? pinned_map_offs[i + 1] : 0;

		hib_map_page_build(&m, PIN_ID, ext, PIN_EXTENTS, i, next);
		assert_int_equal(XXH3_64bits(&m, sizeof(m)), want[i]);
		assert_int_equal(hib_map_page_check(&m, PIN_ID, i), 0);
	}
	assert_int_equal(m.count, PIN_EXTENTS - HIB_MAP_ENTRIES);
}

static void report_build_gives_the_same_bytes(void **state)
{
	uint8_t orig[HIB_PAGE_SIZE];
	struct hib_header h;
	struct hib_report r;

	(void)state;
	pin_orig_page(orig);
	pin_header(&h, orig, true);
	hib_report_build(&r, &h, 1700000100, 4321, 2);
	assert_int_equal(XXH3_64bits(&r, sizeof(r)), 0x6d6ee321ade99a61ull);
	assert_int_equal(hib_report_check(&r, PIN_ID), 0);
	assert_int_equal(hib_report_check(&r, PIN_ID ^ 1), -ENOENT);
	r.load_ms++;
	assert_int_equal(hib_report_check(&r, PIN_ID), -ENOENT);
	memset(&r, 0, sizeof(r));
	assert_int_equal(hib_report_check(&r, 0), -ENOENT);
}

/* Only the kernel that wrote the image, byte for byte, may restore it. */
static void header_kernel_check(void **state)
{
	uint8_t orig[HIB_PAGE_SIZE];
	struct hib_header h;
	struct utsname u;

	(void)state;
	pin_orig_page(orig);
	pin_header(&h, orig, true);
	pin_kernel(&u);
	assert_int_equal(hib_header_kernel_check(&h, &u), 0);
	u.version[1] = '2';
	assert_int_equal(hib_header_kernel_check(&h, &u), -EXDEV);
	pin_kernel(&u);
	strcpy(u.release, "6.12.0-tes");
	assert_int_equal(hib_header_kernel_check(&h, &u), -EXDEV);
	pin_kernel(&u);
	strcpy(u.machine, "aarch64");
	assert_int_equal(hib_header_kernel_check(&h, &u), -EXDEV);
}

/* A streaming state that held anything before hashes as a fresh one. */
static void xxh3_reset_ignores_old_state(void **state)
{
	static const char data[] = "the blocks' raw_xxh3, in order";
	XXH3_state_t st;

	(void)state;
	memset(&st, 0xa5, sizeof(st));
	hib_xxh3_reset(&st, PIN_ID);
	XXH3_64bits_update(&st, data, sizeof(data));
	assert_int_equal(XXH3_64bits_digest(&st), XXH3_64bits_withSeed(data, sizeof(data), PIN_ID));
	hib_xxh3_reset(&st, PIN_ID + 1);
	XXH3_64bits_update(&st, data, sizeof(data));
	assert_int_equal(XXH3_64bits_digest(&st),
			 XXH3_64bits_withSeed(data, sizeof(data), PIN_ID + 1));
}

#define NAMED(fn)                                                                                  \
	{                                                                                          \
		.name = #fn, .test_func = fn                                                       \
	}

/*
 * The two builds of XXH3 (format/xxh.h) give the same hash at every length
 * (xxHash switches code paths at 16, 128 and 240 bytes, and per 1 KiB
 * stripe), for any seed, one-shot or in two pieces; the chosen one is one
 * of them.  A block's stored checksum is the same whichever build wrote it.
 */
static void xxh3_builds_agree(void **state)
{
	static const size_t lens[] = { 0,   1,   3,    8,    16,   17,   128,   129,
				       240, 241, 1023, 1024, 1025, 4096, 65543, 262144 };
	static const uint64_t seeds[] = { 0, 1, 0x9b05688c2b3e6c1full };
	uint8_t *buf = malloc(262144);
	uint64_t x = 42;

	(void)state;
	assert_non_null(buf);
	for (size_t i = 0; i < 262144; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		buf[i] = (uint8_t)(x >> 56);
	}
	for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
		for (size_t s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++) {
			size_t n = lens[l], cut = n / 3;
			uint64_t want = XXH3_64bits_withSeed(buf, n, seeds[s]);

			assert_true(hib_xxh3_lib(buf, n, seeds[s]) == want);
			assert_true(hib_xxh3_scalar(buf, n, seeds[s]) == want);
			assert_true(hib_xxh3(buf, n, seeds[s]) == want);
			assert_true(hib_xxh3_two_lib(buf, cut, buf + cut, n - cut, seeds[s]) ==
				    want);
			assert_true(hib_xxh3_two_scalar(buf, cut, buf + cut, n - cut, seeds[s]) ==
				    want);
			assert_true(hib_xxh3_two(buf, cut, buf + cut, n - cut, seeds[s]) == want);
		}
	assert_true(strcmp(hib_xxh3_impl(), "library") == 0 ||
		    strcmp(hib_xxh3_impl(), "scalar") == 0);
	free(buf);
}

int main(void)
{
	enum {
		N_FIXED = 20,
		N_HDR = sizeof(header_cases) / sizeof(header_cases[0]),
		N_MAP = sizeof(map_cases) / sizeof(map_cases[0]),
		N_BLK = sizeof(block_cases) / sizeof(block_cases[0]),
	};
	struct CMUnitTest tests[N_FIXED + N_HDR + N_MAP + N_BLK];
	static const struct CMUnitTest fixed[N_FIXED] = {
		NAMED(tail_round_trip),
		NAMED(tail_every_bit_flip_rejected),
		NAMED(tail_version_mismatch_is_eproto),
		NAMED(tail_bounds_checked),
		NAMED(header_round_trip),
		NAMED(header_every_bit_flip_rejected),
		NAMED(header_self_checksum_catches_damage),
		NAMED(header_version_mismatch_is_eproto),
		NAMED(map_page_round_trip),
		NAMED(map_page_every_bit_flip_rejected),
		NAMED(block_header_round_trip),
		NAMED(block_every_bit_flip_rejected),
		NAMED(block_pages_rounding),
		NAMED(header_init_gives_the_same_bytes),
		NAMED(tail_build_gives_the_same_bytes),
		NAMED(map_page_build_gives_the_same_bytes),
		NAMED(report_build_gives_the_same_bytes),
		NAMED(header_kernel_check),
		NAMED(xxh3_reset_ignores_old_state),
		NAMED(xxh3_builds_agree),
	};
	size_t n = 0;

	for (size_t i = 0; i < N_FIXED; i++)
		tests[n++] = fixed[i];
	for (size_t i = 0; i < N_HDR; i++)
		tests[n++] = (struct CMUnitTest){ .name = header_cases[i].name,
						  .test_func = header_bounds,
						  .initial_state = (void *)&header_cases[i] };
	for (size_t i = 0; i < N_MAP; i++)
		tests[n++] = (struct CMUnitTest){ .name = map_cases[i].name,
						  .test_func = map_page_bounds,
						  .initial_state = (void *)&map_cases[i] };
	for (size_t i = 0; i < N_BLK; i++)
		tests[n++] = (struct CMUnitTest){ .name = block_cases[i].name,
						  .test_func = block_header_bounds,
						  .initial_state = (void *)&block_cases[i] };
	quiet_logs();
	return _cmocka_run_group_tests("format", tests, n, NULL, NULL);
}
