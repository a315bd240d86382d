// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the person sees: messages on stderr through the loglevel filter, the
 * same lines in the kernel log (so a cycle's messages survive it and reach
 * the journal), the progress bar, and the STATS and "resumed" lines.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frontend/stats.h"
#include "tool.h"
#include "util/util.h"

#define MIN_INT(a, b) ((a) < (b) ? (a) : (b))

void output_init(struct output *o)
{
	*o = (struct output){
		.loglevel = HIB_LOG_PROGRESS,
		.kmsg_fd = -1,
		.progress_tty = isatty(STDERR_FILENO),
		.progress_last_pct = -1,
		.splash = { .last_pct = -1 },
	};
}

/* Resume under a splash: the load's progress goes to it, the console gets
 * lines only (under the splash no one sees them, and no bar is drawn over
 * it). The splash is spoken to only where nothing is frozen — the question,
 * the load, the end of a resume that failed — never from the library's log
 * callback, which also runs between FREEZE and the restore, when plymouthd
 * and any child we start would be frozen too. */
void output_splash(struct control *ctl)
{
	if (hib_plymouth_probe(&ctl->out.splash))
		ctl->out.progress_tty = false;
}

/* The restore is next (hib_options.before_restore): the splash lets the
 * console go while it still can, its last picture left on the screen. */
void output_before_restore(void *ud)
{
	struct control *ctl = ud;
	struct hib_error err;

	if (hib_plymouth_active(&ctl->out.splash) && hib_plymouth_quit(&ctl->out.splash, &err) < 0)
		tlog(ctl, HIB_LOG_WARN, "%s", err.msg);
}

/* A message line in the splash; its failure is the splash's, not the run's. */
void output_splash_message(struct control *ctl, const char *msg)
{
	struct hib_error err;

	if (hib_plymouth_active(&ctl->out.splash))
		hib_plymouth_message(&ctl->out.splash, msg, &err);
}

void output_kmsg(struct control *ctl, enum hib_loglevel level, const char *msg)
{
	static const int prio[] = { 7, 3, 4, 6, 6, 7 };
	char line[1100];
	int n;

	if (ctl->out.kmsg_fd < 0 || level == HIB_LOG_PROGRESS)
		return;
	n = snprintf(line, sizeof(line), "<%d>hibernate: %s\n", prio[level], msg);
	if (n > 0 && write(ctl->out.kmsg_fd, line, (size_t)MIN_INT(n, (int)sizeof(line) - 1)) < 0)
		ctl->out.kmsg_fd = -1;
}

void output_log(enum hib_loglevel level, const char *msg, void *ud)
{
	struct control *ctl = ud;
	struct output *o = &ctl->out;

	if (level == HIB_LOG_ERR)
		snprintf(o->last_error, sizeof(o->last_error), "%.*s",
			 (int)sizeof(o->last_error) - 1, msg);
	if ((int)level > o->loglevel)
		return;
	output_kmsg(ctl, level, msg);
	if (o->progress_tty && o->progress_last_pct >= 0)
		fputc('\n', stderr), o->progress_last_pct = -1;
	fprintf(stderr, "hibernate: %s%s\n", level == HIB_LOG_WARN ? "warning: " : "", msg);
}

void say(const struct control *ctl, const char *fmt, ...)
{
	va_list ap;

	if (ctl->out.loglevel < HIB_LOG_ERR)
		return;
	fputs("hibernate: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void tlog(struct control *ctl, enum hib_loglevel level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	output_log(level, msg, ctl);
}

void bad_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("hibernate: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'hibernate --help' for more information.\n", stderr);
	exit(EXIT_USAGE);
}

void output_progress_start(struct control *ctl)
{
	ctl->out.progress_last_pct = -1;
	ctl->out.progress_t0 = hib_now_ms();
}

/* 76 columns at most: fits an 80-column VT and a serial console. */
static void progress_bar(struct output *o, const char *what, bool writing, uint64_t done,
			 uint64_t total, uint64_t el)
{
	int pct = total ? (int)(done * 100 / total) : 100;
	double mbs = el ? (double)done / 1048576.0 / ((double)el / 1000.0) : 0;
	char bar[21], left[48] = "";
	int fill = pct * 20 / 100;

	memset(bar, '#', (size_t)fill);
	memset(bar + fill, '.', (size_t)(20 - fill));
	bar[20] = 0;
	if (done * 20 >= total && done < total && el >= 500) { /* settled: 5% in */
		uint64_t t = (total - done) * el / done / 1000;
		unsigned s = (unsigned)(t < 5999 ? t : 5999);
		snprintf(left, sizeof(left), " %2u:%02u left", s / 60, s % 60);
	}
	fprintf(stderr, "\r%s [%s] %3d%% %6.1f MiB/s%-10s%s%s", what, bar, pct, mbs, left,
		writing && o->cancel_hint && done < total ? "  " : "",
		writing && o->cancel_hint && done < total ? o->cancel_hint : "");
	o->progress_last_pct = pct;
	if (done >= total) {
		fputc('\n', stderr);
		o->progress_last_pct = -1;
	}
}

/* A bar on a terminal; on a serial log or pipe, a line every 10%. */
void output_progress(const char *phase, uint64_t done, uint64_t total, void *ud)
{
	struct control *ctl = ud;
	struct output *o = &ctl->out;
	uint64_t el = hib_now_ms() - o->progress_t0;
	int pct = total ? (int)(done * 100 / total) : 100;
	double mbs = el ? (double)done / 1048576.0 / ((double)el / 1000.0) : 0;
	bool writing = strcmp(phase, "write") == 0;
	const char *what = writing ? "Writing image" : "Loading image";

	o->loading |= !writing;
	if (hib_plymouth_active(&o->splash)) {
		struct hib_error err;

		hib_plymouth_progress(&o->splash, writing ? "Hibernating" : "Resuming", pct, 5,
				      &err);
	}
	if (o->loglevel < HIB_LOG_PROGRESS)
		return;
	if (o->progress_tty) {
		progress_bar(o, what, writing, done, total, el);
		return;
	}
	if (o->progress_last_pct < 0 || pct / 10 > o->progress_last_pct / 10 || done >= total) {
		if (pct == o->progress_last_pct)
			return;
		fprintf(stderr, "hibernate: %s: %3d%% (%" PRIu64 "/%" PRIu64 " MiB, %.1f MiB/s)\n",
			what, pct, done >> 20, total >> 20, mbs);
		o->progress_last_pct = pct;
	}
}

struct hib_options output_options(struct control *ctl)
{
	struct hib_options opts = ctl->cfg.opts;

	opts.progress = output_progress;
	opts.progress_userdata = ctl;
	opts.stats = output_stats;
	opts.stats_userdata = ctl;
	opts.before_restore = output_before_restore;
	opts.before_restore_userdata = ctl;
	return opts;
}

/* Runs with the system frozen (hib_stats_fn): the line is built on the stack. */
void output_stats(enum hib_stats_side side, const struct hib_stats *st, void *ud)
{
	char line[1024];

	if (hib_stats_format(side, st, line, sizeof(line)) >= 0)
		tlog(ud, HIB_LOG_INFO, "%s", line);
}

/* The numbers both halves left (struct hib_report), so they reach this
 * system's log and journal. */
void output_resumed(struct control *ctl, const struct hib_stats *st)
{
	uint64_t off_s;

	if (!st->resumed_report) {
		tlog(ctl, HIB_LOG_PROGRESS, "resumed");
		return;
	}
	off_s = st->loaded_unix > st->written_unix ? st->loaded_unix - st->written_unix : 0;
	tlog(ctl, HIB_LOG_PROGRESS,
	     "resumed: %" PRIu64 " MiB image (%" PRIu64 " MiB on disk) written in %.1f s "
	     "(%u threads), loaded in %.1f s (%u threads); off for %" PRIu64 "h%02" PRIu64
	     "m%02" PRIu64 "s",
	     st->stream_bytes >> 20, st->stored_bytes >> 20, (double)st->io_ms / 1000, st->threads,
	     (double)st->load_ms / 1000, st->load_threads, off_s / 3600, off_s / 60 % 60,
	     off_s % 60);
	output_stats(HIB_STATS_RESUMED, st, ctl);
}
