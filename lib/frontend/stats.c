// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The STATS line (stats.h): which field of struct hib_stats each key of each
 * side prints. A key means one thing on every line it is on; where a side
 * keeps a number in another field (the resume side's load time is its io_ms),
 * the table says so, not the caller.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "frontend/stats.h"
#include "util/util.h"

#define HIB (1u << HIB_STATS_HIBERNATE)
#define RES (1u << HIB_STATS_RESUME)
#define RSD (1u << HIB_STATS_RESUMED)

struct stats_key {
	const char *key;
	size_t off, size; /* the field in struct hib_stats */
	unsigned sides;
};

#define KEY(k, field, s)                                                                           \
	{                                                                                          \
		k, offsetof(struct hib_stats, field), sizeof(((struct hib_stats *)0)->field), s    \
	}

static const struct stats_key keys[] = {
	KEY("stream_bytes", stream_bytes, HIB | RES | RSD),
	KEY("stored_bytes", stored_bytes, HIB | RES),
	/* The report keeps the data blocks only, not the header and map pages. */
	KEY("data_bytes", stored_bytes, RSD),
	KEY("extents", extents, HIB | RES),
	KEY("blocks", blocks, HIB | RES),
	KEY("threads", threads, HIB | RES | RSD),
	KEY("snapshot_ms", snapshot_ms, HIB | RSD),
	KEY("write_ms", io_ms, HIB | RSD),
	KEY("snapshot_read_ms", snapshot_io_ms, HIB),
	/* One meaning on both lines, each after its /dev/snapshot share. */
	KEY("codec_ms", codec_ms, HIB),
	KEY("cpu_busy_ms", cpu_busy_ms, HIB),
	KEY("cpus", cpus, HIB),
	KEY("adaptive", adaptive, HIB),
	KEY("raw_blocks", raw_blocks, HIB),
	KEY("load_ms", io_ms, RES),
	KEY("load_ms", load_ms, RSD),
	KEY("snapshot_write_ms", snapshot_io_ms, RES),
	KEY("codec_ms", codec_ms, RES),
	KEY("cpu_busy_ms", cpu_busy_ms, RES),
	KEY("cpus", cpus, RES),
	KEY("preload_bytes", preload_bytes, RES),
	KEY("preload_ms", preload_ms, RES),
	KEY("load_threads", load_threads, RSD),
	KEY("pipeline_bytes", pipeline_bytes, HIB | RES),
	KEY("written_unix", written_unix, RSD),
	KEY("loaded_unix", loaded_unix, RSD),
};

const char *hib_stats_side_name(enum hib_stats_side side)
{
	switch (side) {
	case HIB_STATS_HIBERNATE:
		return "hibernate";
	case HIB_STATS_RESUME:
		return "resume";
	case HIB_STATS_RESUMED:
		return "resumed";
	}
	return NULL;
}

const char *hib_stats_key(enum hib_stats_side side, size_t i)
{
	for (size_t k = 0; k < ARRAY_SIZE(keys); k++)
		if ((keys[k].sides & (1u << side)) && i-- == 0)
			return keys[k].key;
	return NULL;
}

static uint64_t field_value(const struct stats_key *k, const struct hib_stats *st)
{
	const unsigned char *p = (const unsigned char *)st + k->off;
	uint64_t v64;
	uint32_t v32;
	bool b;

	switch (k->size) {
	case sizeof(v64):
		memcpy(&v64, p, sizeof(v64));
		return v64;
	case sizeof(v32):
		memcpy(&v32, p, sizeof(v32));
		return v32;
	default:
		memcpy(&b, p, sizeof(b));
		return b;
	}
}

int hib_stats_format(enum hib_stats_side side, const struct hib_stats *st, char *buf, size_t len)
{
	const char *name = hib_stats_side_name(side);
	size_t n;

	if (!name)
		return -EINVAL;
	n = (size_t)snprintf(buf, len, "STATS side=%s", name);
	for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
		if (!(keys[k].sides & (1u << side)))
			continue;
		n += (size_t)snprintf(n < len ? buf + n : NULL, n < len ? len - n : 0,
				      " %s=%" PRIu64, keys[k].key, field_value(&keys[k], st));
	}
	return (int)n;
}
