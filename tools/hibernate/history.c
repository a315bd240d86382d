// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The history of every cycle, as the program keeps it (lib/frontend/history.h
 * owns the format): the record of a cycle this process saw end, the
 * initramfs's handover of a resume that did not happen, its move into the
 * history on the running system, the journal entry of each, and the table
 * `hibernate status` prints. Nothing here can fail a cycle: a record that is
 * not written is a warning.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frontend/history.h"
#include "tool.h"
#include "util/util.h"

/* A cycle on a test's snapshot device (--snapshot-device) is not this machine's. */
static bool history_kept(const struct control *ctl)
{
	return !ctl->snapshot_path;
}

static void journal(struct control *ctl, const struct hib_history_entry *e)
{
	int r = hib_history_journal_send(e, HIB_JOURNAL_SOCKET);

	if (r < 0 && r != -ENOENT && r != -ECONNREFUSED)
		tlog(ctl, HIB_LOG_DEBUG, "the cycle's journal entry was not sent: %s",
		     strerror(-r));
}

static void add(struct control *ctl, const char *path, const struct hib_history_entry *e)
{
	struct hib_error err;

	if (hib_history_add(path, e, HIB_HISTORY_KEEP, &err) < 0)
		tlog(ctl, HIB_LOG_WARN, "%s", err.msg);
}

static const char *config_encryption(const struct control *ctl)
{
	const struct hib_config *cfg = &ctl->cfg;

	return !cfg->encrypt ? "none" : cfg->tpm ? "tpm" : cfg->key_file ? "keyfile" : "passphrase";
}

void history_cycle(struct control *ctl, enum hib_history_result result, uint64_t start_unix,
		   const struct hib_stats *st)
{
	struct hib_history_entry e = {
		.start_unix = start_unix,
		.result = result,
		.stream_bytes = st->stream_bytes,
		.stored_bytes = st->stored_bytes,
		.snapshot_ms = st->snapshot_ms,
		.write_ms = st->io_ms,
		.threads = st->threads,
	};

	if (!history_kept(ctl))
		return;
	if (st->resumed_report) {
		e.load_ms = st->load_ms;
		e.load_threads = st->load_threads;
		e.loaded_unix = st->loaded_unix;
	}
	snprintf(e.codec, sizeof(e.codec), "%s", hib_codec_name(ctl->cfg.opts.codec));
	snprintf(e.encryption, sizeof(e.encryption), "%s", config_encryption(ctl));
	if (result == HIB_HISTORY_FAILED || result == HIB_HISTORY_CANCELLED)
		snprintf(e.reason, sizeof(e.reason), "%s", ctl->out.last_error);
	add(ctl, HIB_HISTORY_PATH, &e);
	journal(ctl, &e);
}

void history_handover(struct control *ctl, enum hib_history_result result,
		      const struct hib_image_info *info, const char *reason)
{
	struct hib_history_entry e = {
		.start_unix = info && info->header_valid ? info->created_unix : 0,
		.result = result,
		.loaded_unix = (uint64_t)time(NULL),
	};

	if (!history_kept(ctl))
		return;
	if (info && info->header_valid) {
		e.image_id = info->image_id;
		e.stream_bytes = info->stream_bytes;
		e.stored_bytes = info->stored_bytes;
		e.snapshot_ms = info->snapshot_ms;
		e.write_ms = info->write_ms;
		e.threads = info->threads;
		snprintf(e.codec, sizeof(e.codec), "%s", hib_codec_name(info->codec));
		snprintf(e.encryption, sizeof(e.encryption), "%s",
			 hib_history_encryption_name(info->encryption));
	}
	if (!e.start_unix) /* the image's time unknown: when the resume gave up */
		e.start_unix = e.loaded_unix;
	snprintf(e.reason, sizeof(e.reason), "%s", reason && *reason ? reason : "not said");
	add(ctl, HIB_HISTORY_HANDOVER, &e);
}

void history_import(struct control *ctl)
{
	struct hib_history_entry got[8];
	struct hib_error err;
	size_t n;

	if (!history_kept(ctl))
		return;
	if (hib_history_import(HIB_HISTORY_HANDOVER, HIB_HISTORY_PATH, HIB_HISTORY_KEEP, got,
			       ARRAY_SIZE(got), &n, &err) < 0) {
		tlog(ctl, HIB_LOG_WARN, "%s", err.msg);
		return;
	}
	for (size_t i = 0; i < n; i++)
		journal(ctl, &got[i]);
}

static void print_row(const struct hib_history_entry *e)
{
	const char *res = hib_history_result_name(e->result);
	time_t t = (time_t)e->start_unix;
	char when[32] = "?";
	struct tm tm;

	if (gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
	printf("  %-16s  %-13s %8.1f %9.1f %8.1f  %s\n", when, res ? res : "?",
	       (double)e->stored_bytes / 1048576.0, (double)e->write_ms / 1000.0,
	       (double)e->load_ms / 1000.0, e->reason[0] ? e->reason : "-");
}

void history_print(struct control *ctl, size_t max)
{
	struct hib_history_entry rows[HIB_HISTORY_KEEP];
	struct hib_error err;
	size_t n;

	(void)ctl;
	if (hib_history_load(HIB_HISTORY_PATH, rows, MIN(max, ARRAY_SIZE(rows)), &n, &err) < 0) {
		printf("history: unreadable: %s\n", err.msg);
		return;
	}
	if (n == 0) {
		printf("history: none (%s)\n", HIB_HISTORY_PATH);
		return;
	}
	printf("history: the last %zu cycle%s (%s, times UTC)\n", n, n == 1 ? "" : "s",
	       HIB_HISTORY_PATH);
	printf("  %-16s  %-13s %8s %9s %8s  %s\n", "when", "result", "image MB", "written s",
	       "loaded s", "reason");
	for (size_t i = n; i-- > 0;)
		print_row(&rows[i]);
}

/* Run at boot by hibernate-history.service too: a resume that did not
 * happen reaches the history and the journal without waiting for a cycle. */
int do_history(struct control *ctl)
{
	history_import(ctl);
	history_print(ctl, HIB_HISTORY_KEEP);
	return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
