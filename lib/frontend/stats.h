/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The STATS line: one side's numbers (struct hib_stats) for scripts,
 *
 *   STATS side=hibernate stream_bytes=593494016 stored_bytes=391118848 ...
 *
 * raw integers (bytes, milliseconds, counts, Unix seconds) under keys that keep
 * their meaning, so that a reworded message never changes what a script reads.
 * hibernate(8) documents every key; tests/check-man holds it to this table.
 */
#ifndef HIB_STATS_H
#define HIB_STATS_H

#include <stddef.h>

#include "hibernate.h"

/* "hibernate", "resume" or "resumed"; NULL for anything else. */
const char *hib_stats_side_name(enum hib_stats_side side);
/* The @i-th key (from 0) of @side's line, in the line's order; NULL past the last. */
const char *hib_stats_key(enum hib_stats_side side, size_t i);
/* @side's line, without a newline, into @buf (@len bytes, always NUL-terminated).
 * Returns the length of the whole line, as snprintf does, or -EINVAL for an
 * unknown side. */
int hib_stats_format(enum hib_stats_side side, const struct hib_stats *st, char *buf, size_t len);

#endif
