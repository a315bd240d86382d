// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btrfs's logical addresses to device bytes (storage/btrfs.c), from chunk
 * items as the chunk tree holds them: the chunk holding an address is found
 * at its first and last byte and not past them, its stripe's offset is
 * added, and DUP, RAID and several stripes are refused with the reason.
 */
#include <endian.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/btrfs_tree.h>

#include <cmocka.h>

#include "storage/btrfs.h"
#include "util/error.h"

#define MiB (1024ull * 1024)
#define GiB (1024 * MiB)

/* A chunk item's bytes as the tree stores them: little endian, @stripes
 * stripes, the first at @physical on device 1. */
static size_t make_item(uint8_t *buf, uint64_t length, uint64_t type, uint16_t stripes,
			uint64_t physical)
{
	struct btrfs_chunk c = { 0 };
	struct btrfs_stripe s = { 0 };
	size_t len = sizeof(c) + (size_t)(stripes - 1) * sizeof(s);

	c.length = htole64(length);
	c.type = htole64(type);
	c.num_stripes = htole16(stripes);
	c.stripe.devid = htole64(1);
	c.stripe.offset = htole64(physical);
	memset(buf, 0xee, len);
	memcpy(buf, &c, sizeof(c));
	for (uint16_t i = 1; i < stripes; i++) { /* the other copies, elsewhere */
		s.devid = htole64(1);
		s.offset = htole64(physical + i * length);
		memcpy(buf + sizeof(c) + (i - 1) * sizeof(s), &s, sizeof(s));
	}
	return len;
}

static void add(struct hib_btrfs_chunks *cs, uint64_t logical, uint64_t length, uint64_t type,
		uint16_t stripes, uint64_t physical)
{
	uint8_t buf[sizeof(struct btrfs_chunk) + 4 * sizeof(struct btrfs_stripe)];
	struct hib_btrfs_chunk c;
	size_t len = make_item(buf, length, type, stripes, physical);

	assert_int_equal(hib_btrfs_chunk_parse(logical, buf, len, &c), 0);
	assert_int_equal(hib_btrfs_chunks_add(cs, &c), 0);
}

/* A small filesystem as mkfs.btrfs lays it out: system and metadata chunks,
 * then two single data chunks whose logical addresses are far from their
 * device bytes, with a gap between them. */
static void layout(struct hib_btrfs_chunks *cs)
{
	add(cs, 22020096, 8 * MiB, BTRFS_BLOCK_GROUP_SYSTEM | BTRFS_BLOCK_GROUP_DUP, 2, 1 * MiB);
	add(cs, 30408704, 256 * MiB, BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_DUP, 2,
	    17 * MiB);
	add(cs, 1 * GiB, 512 * MiB, BTRFS_BLOCK_GROUP_DATA, 1, 529 * MiB);
	add(cs, 2 * GiB, 1 * GiB, BTRFS_BLOCK_GROUP_DATA, 1, 1041 * MiB);
}

static void parse_reads_the_item(void **state)
{
	uint8_t buf[sizeof(struct btrfs_chunk) + sizeof(struct btrfs_stripe)];
	struct hib_btrfs_chunk c;
	size_t len = make_item(buf, 1 * GiB, BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_DUP, 2,
			       300 * MiB);

	(void)state;
	assert_int_equal(hib_btrfs_chunk_parse(5 * GiB, buf, len, &c), 0);
	assert_int_equal(c.logical, 5 * GiB);
	assert_int_equal(c.length, 1 * GiB);
	assert_int_equal(c.type, BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_DUP);
	assert_int_equal(c.num_stripes, 2);
	assert_int_equal(c.devid, 1);
	assert_int_equal(c.physical, 300 * MiB);
	/* Shorter than its stripes claim, or than one chunk: refused. */
	assert_int_equal(hib_btrfs_chunk_parse(0, buf, len - 1, &c), -EBADMSG);
	assert_int_equal(hib_btrfs_chunk_parse(0, buf, sizeof(struct btrfs_chunk) - 1, &c),
			 -EBADMSG);
	/* No stripes at all: nothing to map to. */
	((struct btrfs_chunk *)buf)->num_stripes = 0;
	assert_int_equal(hib_btrfs_chunk_parse(0, buf, len, &c), -EBADMSG);
}

static void logical_is_not_physical(void **state)
{
	struct hib_btrfs_chunks cs = { 0 };
	uint64_t phys = 0, run = 0;

	(void)state;
	layout(&cs);
	assert_int_equal(hib_btrfs_map(&cs, 1 * GiB + 40 * MiB, &phys, &run, NULL), 0);
	assert_int_equal(phys, 529 * MiB + 40 * MiB);
	assert_int_equal(run, 512 * MiB - 40 * MiB);
	assert_int_equal(hib_btrfs_map(&cs, 2 * GiB + 4096, &phys, &run, NULL), 0);
	assert_int_equal(phys, 1041 * MiB + 4096);
	assert_int_equal(run, 1 * GiB - 4096);
	hib_btrfs_chunks_free(&cs);
	assert_null(cs.v);
}

static void chunk_boundaries(void **state)
{
	struct hib_btrfs_chunks cs = { 0 };
	struct hib_error err;
	uint64_t phys = 7, run = 7;

	(void)state;
	layout(&cs);
	/* The first and the last byte of a chunk are in it... */
	assert_int_equal(hib_btrfs_map(&cs, 1 * GiB, &phys, &run, NULL), 0);
	assert_int_equal(phys, 529 * MiB);
	assert_int_equal(run, 512 * MiB);
	assert_int_equal(hib_btrfs_map(&cs, 1 * GiB + 512 * MiB - 1, &phys, &run, NULL), 0);
	assert_int_equal(phys, 529 * MiB + 512 * MiB - 1);
	assert_int_equal(run, 1);
	assert_int_equal(hib_btrfs_map(&cs, 3 * GiB - 1, &phys, &run, NULL), 0);
	assert_int_equal(phys, 1041 * MiB + 1 * GiB - 1);
	assert_int_equal(run, 1);
	/* ...the byte after its end is not, nor the one before its start. */
	phys = run = 7;
	assert_int_equal(hib_btrfs_map(&cs, 1 * GiB + 512 * MiB, &phys, &run, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "no chunk"));
	assert_int_equal(hib_btrfs_map(&cs, 3 * GiB, &phys, &run, NULL), -ENOENT);
	assert_int_equal(hib_btrfs_map(&cs, 1 * GiB - 1, &phys, &run, NULL), -ENOENT);
	assert_int_equal(hib_btrfs_map(&cs, 30408704 + 256 * MiB, &phys, &run, NULL), -ENOENT);
	assert_int_equal(phys, 7); /* nothing written on failure */
	assert_int_equal(run, 7);
	hib_btrfs_chunks_free(&cs);
}

static void missing_chunk(void **state)
{
	struct hib_btrfs_chunks cs = { 0 };
	struct hib_error err;
	uint64_t phys, run;

	(void)state;
	/* No chunks at all, an address below every chunk, one in a gap. */
	assert_int_equal(hib_btrfs_map(&cs, 1 * GiB, &phys, &run, &err), -ENOENT);
	layout(&cs);
	assert_int_equal(hib_btrfs_map(&cs, 0, &phys, &run, NULL), -ENOENT);
	assert_int_equal(hib_btrfs_map(&cs, 22020096 - 4096, &phys, &run, NULL), -ENOENT);
	assert_int_equal(hib_btrfs_map(&cs, 1 * GiB + 600 * MiB, &phys, &run, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "logical byte 1702887424"));
	hib_btrfs_chunks_free(&cs);
}

static void dup_and_raid_refused(void **state)
{
	struct hib_btrfs_chunks cs = { 0 };
	struct hib_error err;
	uint64_t phys = 7, run = 7;

	(void)state;
	add(&cs, 1 * GiB, 256 * MiB, BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_DUP, 2, 100 * MiB);
	add(&cs, 2 * GiB, 256 * MiB, BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_RAID1, 2,
	    100 * MiB);
	add(&cs, 3 * GiB, 256 * MiB, BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_RAID0, 1,
	    100 * MiB);
	/* No profile bit, but two stripes: not one place on one device either. */
	add(&cs, 4 * GiB, 256 * MiB, BTRFS_BLOCK_GROUP_DATA, 2, 100 * MiB);
	add(&cs, 5 * GiB, 256 * MiB, BTRFS_BLOCK_GROUP_DATA, 1, 700 * MiB);

	assert_int_equal(hib_btrfs_map(&cs, 1 * GiB + 4096, &phys, &run, &err), -EOPNOTSUPP);
	assert_non_null(strstr(err.msg, "DUP profile"));
	assert_non_null(strstr(err.msg, "-dconvert=single"));
	assert_int_equal(hib_btrfs_map(&cs, 2 * GiB, &phys, &run, &err), -EOPNOTSUPP);
	assert_non_null(strstr(err.msg, "RAID1 profile"));
	assert_int_equal(hib_btrfs_map(&cs, 3 * GiB, &phys, &run, &err), -EOPNOTSUPP);
	assert_non_null(strstr(err.msg, "RAID0 profile"));
	assert_int_equal(hib_btrfs_map(&cs, 4 * GiB, &phys, &run, &err), -EOPNOTSUPP);
	assert_non_null(strstr(err.msg, "2 copies or stripes"));
	assert_int_equal(phys, 7);
	assert_int_equal(run, 7);
	/* The single chunk after them still maps. */
	assert_int_equal(hib_btrfs_map(&cs, 5 * GiB + 8192, &phys, &run, NULL), 0);
	assert_int_equal(phys, 700 * MiB + 8192);
	hib_btrfs_chunks_free(&cs);
}

static void many_chunks_found(void **state)
{
	struct hib_btrfs_chunks cs = { 0 };
	uint64_t phys, run;

	(void)state;
	/* 1000 chunks of 1 GiB, each on the device in reverse order. */
	for (uint64_t i = 0; i < 1000; i++)
		add(&cs, (i + 1) * GiB, 1 * GiB, BTRFS_BLOCK_GROUP_DATA, 1, (1000 - i) * GiB);
	for (uint64_t i = 0; i < 1000; i += 37) {
		assert_int_equal(hib_btrfs_map(&cs, (i + 1) * GiB + 12288, &phys, &run, NULL), 0);
		assert_int_equal(phys, (1000 - i) * GiB + 12288);
	}
	assert_int_equal(hib_btrfs_map(&cs, 1001 * GiB, &phys, &run, NULL), -ENOENT);
	hib_btrfs_chunks_free(&cs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_reads_the_item), cmocka_unit_test(logical_is_not_physical),
		cmocka_unit_test(chunk_boundaries),     cmocka_unit_test(missing_chunk),
		cmocka_unit_test(dup_and_raid_refused), cmocka_unit_test(many_chunks_found),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
