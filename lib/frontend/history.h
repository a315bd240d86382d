/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The history of every cycle: one record a cycle, one line a record,
 *
 *   v=1 start=1765000000 result=resumed image_id=... stream_bytes=... ... reason=...
 *
 * in /var/lib/hibernate/history, the last HIB_HISTORY_KEEP records, rewritten
 * whole by rename with fsync on every addition. Whoever learns how a cycle
 * ended adds its record: the hibernating process (cancelled, failed, test),
 * the resumed one (resumed, with the report's load figures), and for a resume
 * that did not happen the initramfs side, into HIB_HISTORY_HANDOVER under
 * /run (carried over to the real root by initramfs-tools, dracut and the
 * systemd initrd), which the next run of the program moves into the history.
 * Each record is also one journal entry (MESSAGE_ID HIB_HISTORY_MESSAGE_ID,
 * HIBERNATE_* fields), sent as systemd's native protocol datagram.
 *
 * This module owns the file's format: the parser and serializer are pure;
 * unknown keys are skipped, so an older reader keeps a newer file.
 */
#ifndef HIB_HISTORY_H
#define HIB_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "hibernate.h"

#define HIB_HISTORY_PATH "/var/lib/hibernate/history"
#define HIB_HISTORY_HANDOVER "/run/hibernate/resume-result"
#define HIB_HISTORY_KEEP 64
/* 128 bits, fixed forever: `journalctl MESSAGE_ID=...` lists every cycle. */
#define HIB_HISTORY_MESSAGE_ID "fdbd4e690fe44ad4a2ba9caf4eca45fc"
#define HIB_JOURNAL_SOCKET "/run/systemd/journal/socket"
#define HIB_HISTORY_LINE_MAX 1024

enum hib_history_result {
	HIB_HISTORY_RESUMED = 1,   /* restored: both halves' figures */
	HIB_HISTORY_CANCELLED,     /* Esc, or a hook that cancelled: nothing saved */
	HIB_HISTORY_FAILED,        /* the hibernation failed: the system kept running */
	HIB_HISTORY_REFUSED,       /* the resume side refused the image before loading it */
	HIB_HISTORY_RESUME_FAILED, /* the load or the restore failed: the image discarded */
	HIB_HISTORY_TEST,          /* --test: written and restored at once */
	HIB_HISTORY_RAM,           /* suspend-to-both woke from RAM: the image discarded */
};

struct hib_history_entry {
	uint64_t start_unix; /* the cycle began (the resume side: the image was written) */
	enum hib_history_result result;
	uint64_t image_id;
	uint64_t stream_bytes; /* the kernel's image */
	uint64_t stored_bytes; /* on disk */
	uint64_t snapshot_ms, write_ms, load_ms;
	uint64_t loaded_unix; /* the resume side restored it (or gave up) */
	uint32_t threads, load_threads;
	char codec[16];      /* "" unknown */
	char encryption[16]; /* none, passphrase, keyfile, tpm; "" unknown */
	char reason[512];    /* why it was refused or failed; "" for none */
};

/* "resumed", "cancelled", ...; NULL for anything else. */
const char *hib_history_result_name(enum hib_history_result r);
/* The name of an image's encryption (struct hib_image_info's). */
const char *hib_history_encryption_name(uint32_t kind);
/* @e's line, without a newline, into @buf (always NUL-terminated): the length
 * of the whole line as snprintf returns it. Text fields lose what would break
 * the line (control characters; spaces outside the reason). */
int hib_history_format(const struct hib_history_entry *e, char *buf, size_t len);
/* One line (a newline at the end allowed) into @e: 0, or -EINVAL when it is
 * not a record this reader knows (another version, no result, no start). */
int hib_history_parse(const char *line, struct hib_history_entry *e);
/* One sentence for a person ("resumed: 70 MiB image ... loaded in 2.1 s"). */
void hib_history_summary(const struct hib_history_entry *e, char *buf, size_t len);

/* The last @max records of @path into @out (oldest first), *@n of them; a
 * missing file is no record. Lines that do not parse are skipped. 0 or -errno
 * (@err names the file). */
int hib_history_load(const char *path, struct hib_history_entry *out, size_t max, size_t *n,
		     struct hib_error *err);
/* Add @e to @path, keeping the last @keep records: the file rewritten whole
 * (path.new, fsync, rename, fsync of the directory, made 0755 if missing). */
int hib_history_add(const char *path, const struct hib_history_entry *e, size_t keep,
		    struct hib_error *err);
/* Move the records of @handover into @path (keeping @keep), then remove
 * @handover; the moved ones into @out (at most @max, *@n). No handover: 0. */
int hib_history_import(const char *handover, const char *path, size_t keep,
		       struct hib_history_entry *out, size_t max, size_t *n, struct hib_error *err);

/* @e as a native journal datagram (KEY=value lines) into @buf; its length,
 * or -ENOBUFS when it does not fit. */
int hib_history_journal_format(const struct hib_history_entry *e, char *buf, size_t len);
/* Send it to the journal at @socket_path: 0, or -errno (-ENOENT or
 * -ECONNREFUSED: no journal here, as in an initramfs without systemd). */
int hib_history_journal_send(const struct hib_history_entry *e, const char *socket_path);

#endif
