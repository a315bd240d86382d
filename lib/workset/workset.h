/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The working set: what the running system had in memory before the
 * snapshot (its processes, the file ranges in the page cache), recorded
 * before FREEZE and brought back after resume, in the background.
 *
 * The record lives in the hibernating process's own memory, so it is in the
 * image (encrypted when the image is) and nowhere else. It is kept in its
 * serialized form (below): versioned, checksummed and bounded, and the
 * restoring child decodes it as it would any input.
 */
#ifndef HIB_WORKSET_H
#define HIB_WORKSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Bounds of a record: what record() keeps at most and decode() accepts. */
#define HIB_WS_MAX_PROCS 512
#define HIB_WS_MAX_FILES 4096
#define HIB_WS_MAX_RANGES 65536
#define HIB_WS_MAX_PATHS (1u << 20) /* bytes of paths, NULs included */
#define HIB_WS_MAX_BYTES                                                                           \
	(sizeof(struct hib_ws_header) + HIB_WS_MAX_PROCS * sizeof(struct hib_ws_proc) +            \
	 HIB_WS_MAX_FILES * sizeof(struct hib_ws_file) +                                           \
	 HIB_WS_MAX_RANGES * sizeof(struct hib_ws_range) + HIB_WS_MAX_PATHS)

#define HIB_WS_MAGIC "HIBWSET\0"
#define HIB_WS_VERSION 1

/* The serialized record: header, procs, files, ranges, paths; little-endian. */
struct hib_ws_header {
	char magic[8];
	uint32_t version;
	uint32_t n_procs;
	uint32_t n_files;
	uint32_t n_ranges;
	uint32_t paths_len;
	uint32_t reserved;
	uint64_t xxh3; /* of everything after the header */
};

struct hib_ws_proc {
	int32_t pid;
	uint32_t reserved;
	uint64_t start_time; /* /proc/PID/stat field 22: tells a reused pid apart */
};

struct hib_ws_file {
	uint32_t path_off; /* into the paths: a NUL-terminated absolute path */
	uint32_t first_range;
	uint32_t n_ranges;
	uint32_t reserved;
};

struct hib_ws_range {
	uint64_t off, len; /* bytes, page-aligned */
};

/* A decoded record: pointers into the buffer it was decoded from. */
struct hib_ws_view {
	const struct hib_ws_proc *procs;
	const struct hib_ws_file *files;
	const struct hib_ws_range *ranges;
	const char *paths;
	uint32_t n_procs, n_files, n_ranges, paths_len;
};

/* A record being built (record() fills it; tests build one by hand). */
struct hib_ws_builder {
	struct hib_ws_proc *procs;
	struct hib_ws_file *files;
	struct hib_ws_range *ranges;
	char *paths;
	uint32_t n_procs, n_files, n_ranges, paths_len;
};

void hib_ws_builder_free(struct hib_ws_builder *b);
/* Append a process / a file (with no ranges yet) / a range of the last file.
 * -E2BIG past a bound (nothing appended), -ENOMEM, -EINVAL for a relative
 * path or a range with no file. */
int hib_ws_add_proc(struct hib_ws_builder *b, pid_t pid, uint64_t start_time);
int hib_ws_add_file(struct hib_ws_builder *b, const char *path);
int hib_ws_add_range(struct hib_ws_builder *b, uint64_t off, uint64_t len);

/* The serialized record of @b, malloc'd, in *ret_buf / *ret_len. */
int hib_ws_encode(const struct hib_ws_builder *b, void **ret_buf, size_t *ret_len);
/* Checks @buf whole (magic, version, counts within the bounds, length exact,
 * checksum, every path and range inside its table): -EBADMSG (-EPROTO for
 * another version, -E2BIG past a bound) and nothing written, else *ret. */
int hib_ws_decode(const void *buf, size_t len, struct hib_ws_view *ret);

/* ---- /proc parsing (pure: text in, values out) ---------------------------- */

/* The VMAs of an smaps text with a non-zero "Swap:", as [start, end) pairs
 * in @ret (at most @max), their Swap: sum in KiB in *ret_swap_kb. Returns the
 * count (more than @max: @ret holds the first @max). -EBADMSG on a malformed
 * VMA line. */
struct hib_ws_vma {
	uint64_t start, end;
	uint64_t swap_kb;
};
int hib_ws_parse_smaps(const char *text, struct hib_ws_vma *ret, size_t max, uint64_t *ret_swap_kb);
/* The next mapped regular file of a maps text from *@pos on: its path in @buf
 * (without " (deleted)": those are skipped, as are [anon], [heap], memfd:
 * and pseudo-files); 1 found, 0 at the end, -EBADMSG on a malformed line.
 * *@pos advances past the line. */
int hib_ws_parse_maps_next(const char *text, size_t *pos, char *buf, size_t len);
/* Field 22 (starttime) of a /proc/PID/stat text. -EBADMSG if absent. */
int hib_ws_parse_start_time(const char *stat, uint64_t *ret);
/* The value (kB) of "Key:" in a status/meminfo text; -ENOENT when absent. */
int hib_ws_parse_kb(const char *text, const char *key, uint64_t *ret);

/* ---- when to stop --------------------------------------------------------- */

enum hib_ws_stop {
	HIB_WS_DONE = 0, /* everything recorded was brought back */
	HIB_WS_TIME,     /* restore-limit ran out */
	HIB_WS_MEMORY,   /* MemAvailable fell below the floor */
	HIB_WS_DISABLED, /* nothing was restored (no record) */
};
const char *hib_ws_stop_name(enum hib_ws_stop s);

struct hib_ws_limits {
	uint64_t start_ms, limit_ms; /* limit_ms 0: no time limit */
	uint64_t floor_kb;           /* MemAvailable below it: stop */
};
/* The floor: 1/16 of MemTotal, at least 64 MiB (what the restore leaves free). */
uint64_t hib_ws_floor_kb(uint64_t mem_total_kb);
/* HIB_WS_DONE to go on, else why to stop; @mem_available_kb UINT64_MAX: unknown. */
enum hib_ws_stop hib_ws_should_stop(const struct hib_ws_limits *l, uint64_t now_ms,
				    uint64_t mem_available_kb);

/* ---- the record and the restore ------------------------------------------- */

struct hib_ws_record_stats {
	uint32_t procs, files, ranges;
	uint64_t resident_bytes; /* of the files' ranges */
	uint64_t ms;
	bool truncated; /* a bound or the time limit cut it short */
};

/*
 * Records the working set of the running system (every process with anon
 * memory, or with a good deal of files mapped, but ours, largest anon memory
 * first; the regular files they map or hold open,
 * with their ranges in the page cache now), skipping the active swap files
 * and @exclude (the image target's file, may be NULL). Bounded by the limits
 * above and by @max_ms. The serialized record in *ret_buf / *ret_len.
 */
int hib_ws_record(const char *exclude, uint64_t max_ms, void **ret_buf, size_t *ret_len,
		  struct hib_ws_record_stats *ret_stats);

struct hib_ws_restore_stats {
	uint32_t procs;      /* processes whose swapped memory was asked back */
	uint64_t swapin_kb;  /* their swap usage that went away */
	uint32_t files;      /* files read back */
	uint64_t file_bytes; /* bytes asked for */
	uint64_t ms;
	enum hib_ws_stop stop;
	int madvise_errno; /* the first process_madvise error (EPERM, ENOSYS ...), 0 none */
};

/*
 * Brings back what @rec (a serialized record) names, in a child process of
 * this one (forked, no exec; in this process when fork fails): swaps
 * in each recorded process still alive (same start time), largest swap first
 * (process_madvise(MADV_WILLNEED) to read every one's swapped VMAs ahead, then
 * a read of them through /proc/PID/mem that maps them), and beside that, in a
 * thread of its own, reads the files' ranges into the page cache in the
 * recorded order; each stops as hib_ws_should_stop
 * says, with @limit_ms the time limit. Those checks come between reads; a
 * read that never returns (/proc/PID/mem over a userfaultfd or FUSE mapping,
 * which only SIGKILL ends) is ended by the watchdog: the child is killed
 * WATCHDOG_GRACE_MS after the limit, and what it did by then is in *@ret with
 * stop HIB_WS_TIME. Recorded paths are opened without following a symlink in
 * any component. The caller sets the priority (a child at idle I/O priority,
 * which the restoring child inherits) and should be single-threaded (fork).
 * -errno only for a record that does not decode, or no memory to share.
 */
int hib_ws_restore(const void *rec, size_t len, uint64_t limit_ms,
		   struct hib_ws_restore_stats *ret);

/*
 * The restore's watchdog, on its own for the tests: @fn(@arg) in a forked
 * child (it reports through shared memory), waited for @limit_ms at most (0:
 * no limit), then ended with SIGKILL, which ends even a read that blocks
 * forever. 1 when @fn returned, 0 when it was ended at the limit (reaped if it
 * went within a second; a process stuck beyond SIGKILL is left, not waited
 * on), -errno when no child could be made.
 */
int hib_ws_run_bounded(void (*fn)(void *arg), void *arg, uint64_t limit_ms);

#endif
