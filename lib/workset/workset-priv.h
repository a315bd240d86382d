/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of the working set that do I/O share, and only they include:
 * the small readers of readers.c (a /proc text whole, one of its values, a
 * regular file opened so that nothing happens but reads), which the record
 * (workset.c) and the restore (restore.c) both use.
 */
#ifndef HIB_WORKSET_PRIV_H
#define HIB_WORKSET_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TEXT_MAX (64u << 20) /* an smaps or maps text larger than this is skipped */
#define PAGE 4096u

/* All of @path, NUL-terminated, at most @max bytes; malloc'd in *ret. */
int ws_read_text(const char *path, size_t max, char **ret);
/* "@key:"'s value (kB) in /proc/@pid/@file, /proc/@file for @pid 0. */
int ws_proc_kb(pid_t pid, const char *file, const char *key, uint64_t *ret);
/* @pid's start time (/proc/PID/stat field 22): tells a reused pid apart. */
int ws_proc_start_time(pid_t pid, uint64_t *ret);
/* MemAvailable in kB, UINT64_MAX when unknown. */
uint64_t ws_mem_available_kb(void);
/* @path for reading if it is a regular file, opened so that nothing happens but
 * reads; @no_links: no symlink followed in any component (readers.c says more).
 * -1 when not. */
int ws_open_regular(const char *path, bool no_links);

#endif
