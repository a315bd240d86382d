// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the person sees: messages on stderr through the loglevel filter, the
 * same lines in the kernel log (so a cycle's messages survive it and reach
 * the journal), the progress bar, and the STATS and "resumed" lines.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <linux/kd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frontend/screen.h"
#include "frontend/stats.h"
#include "tool.h"
#include "util/error.h"
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
		.screen_fd = -1,
	};
}

/* ---- the console in front (lib/frontend/screen.h) ------------------------- */

/* @fd is the terminal stderr is. */
static bool is_stderr(int fd)
{
	struct stat a, b;

	return fstat(STDERR_FILENO, &a) == 0 && fstat(fd, &b) == 0 && S_ISCHR(a.st_mode) &&
	       a.st_rdev == b.st_rdev;
}

static void output_screen_close_fd(struct output *o)
{
	if (o->screen_fd < 0)
		return;
	/* switch-vt's console left empty: the next cycle's switch shows no
	 * lines of this one before its own. */
	if (o->screen_clear)
		(void)!write(o->screen_fd, "\033[H\033[2J", 7);
	else if (o->screen_bar)
		(void)!write(o->screen_fd, "\n", 1);
	close(o->screen_fd);
	o->screen_fd = -1;
	o->screen_bar = o->screen_clear = false;
}

static void screen_write(struct output *o, const char *s)
{
	size_t n = strlen(s);

	/* Non-blocking: a console stopped with Ctrl-S must not hold the cycle. */
	if (o->screen_fd >= 0 && write(o->screen_fd, s, n) < 0)
		output_screen_close_fd(o);
}

/* The console in front (hib_screen_front) opened with @flags, O_NOCTTY |
 * O_NONBLOCK | O_CLOEXEC added: its descriptor, its number in *@ret_vt, its
 * path in @dev and its KDGETMODE mode in *@ret_mode (-1 for none: not a
 * virtual console). -1 with @err saying why when no console is in front or
 * it does not open. */
static int front_console(int flags, unsigned *ret_vt, char *dev, size_t len, int *ret_mode,
			 struct hib_error *err)
{
	int fd;

	if (hib_screen_front(NULL, ret_vt, err) < 0)
		return -1;
	snprintf(dev, len, "/dev/tty%u", *ret_vt);
	fd = open(dev, flags | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		hib_error_set(err, -e, "%s: %s", dev, strerror(e));
		return -1;
	}
	if (ioctl(fd, KDGETMODE, ret_mode) < 0)
		*ret_mode = -1;
	return fd;
}

bool output_front_graphics(void)
{
	struct hib_error err;
	unsigned vt;
	char dev[32];
	int fd, mode;

	fd = front_console(O_RDONLY, &vt, dev, sizeof(dev), &mode, &err);
	if (fd < 0)
		return false;
	close(fd);
	return mode == KD_GRAPHICS;
}

void output_screen_open(struct control *ctl)
{
	struct hib_screen_facts f = { 0 };
	struct hib_error err;
	enum hib_screen_use use;
	char sv[32] = "", dev[32];
	int fd, mode;

	output_screen_close(ctl);
	fd = front_console(O_RDWR, &f.vt, dev, sizeof(dev), &mode, &err);
	if (fd < 0) {
		tlog(ctl, HIB_LOG_DEBUG, "no screen for the cycle: %s", err.msg);
		return;
	}
	(void)hib_config_get(&ctl->cfg, "switch-vt", sv, sizeof(sv));
	if (hib_screen_switch_vt(sv, &f.switch_vt) < 0)
		f.switch_vt = 0;
	/* Not a virtual console, or one a display server draws. */
	f.graphics = mode != KD_TEXT;
	f.is_terminal = is_stderr(fd);
	use = hib_screen_choose(&f);
	if (use == HIB_SCREEN_NONE) {
		close(fd);
		return;
	}
	ctl->out.screen_fd = fd;
	ctl->out.screen_bar = false;
	ctl->out.screen_clear = use == HIB_SCREEN_DRAW_CLEAR;
	/* switch-vt's console: the cycle alone on it, from the top. */
	screen_write(&ctl->out, use == HIB_SCREEN_DRAW_CLEAR ? "\033[H\033[2J" : "\r\n");
	tlog(ctl, HIB_LOG_INFO, "showing the cycle on %s", dev);
}

void output_screen_close(struct control *ctl)
{
	output_screen_close_fd(&ctl->out);
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
	o->bar_len = 0; /* the next bar starts a line */
	fprintf(stderr, "hibernate: %s%s\n", level == HIB_LOG_WARN ? "warning: " : "", msg);
	if (o->screen_fd >= 0 && level <= HIB_LOG_PROGRESS) {
		char line[1200];

		snprintf(line, sizeof(line), "%shibernate: %s%s\n", o->screen_bar ? "\n" : "",
			 level == HIB_LOG_WARN ? "warning: " : "", msg);
		o->screen_bar = false;
		screen_write(o, line);
	}
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
	ctl->out.bar_len = 0;
	ctl->out.progress_t0 = hib_now_ms();
}

/* 76 columns at most: fits an 80-column VT and a serial console. On stderr
 * when it is a terminal, and on the screen (the console in front). */
static void progress_bar(struct output *o, const char *what, bool writing, uint64_t done,
			 uint64_t total, uint64_t el)
{
	int pct = total ? (int)(done * 100 / total) : 100;
	double mbs = el ? (double)done / 1048576.0 / ((double)el / 1000.0) : 0;
	bool hint = writing && o->cancel_hint && done < total;
	char bar[21], left[48] = "", line[160];
	int fill = pct * 20 / 100, n;

	memset(bar, '#', (size_t)fill);
	memset(bar + fill, '.', (size_t)(20 - fill));
	bar[20] = 0;
	if (done * 20 >= total && done < total && el >= 500) { /* settled: 5% in */
		uint64_t t = (total - done) * el / done / 1000;
		unsigned s = (unsigned)(t < 5999 ? t : 5999);
		snprintf(left, sizeof(left), " %2u:%02u left", s / 60, s % 60);
	}
	n = snprintf(line, sizeof(line), "\r%s [%s] %3d%% %6.1f MiB/s%-10s%s%s", what, bar, pct,
		     mbs, left, hint ? "  " : "", hint ? o->cancel_hint : "");
	/* "\r" does not erase: blanks over what a longer bar before left on
	 * the line (the 100% line has no time left and no hint). */
	n = n < 0 ? 0 : MIN_INT(n, (int)sizeof(line) - 2);
	while (n < o->bar_len && n < (int)sizeof(line) - 2)
		line[n++] = ' ';
	line[n] = 0;
	o->bar_len = done >= total ? 0 : n;
	if (done >= total)
		line[n++] = '\n', line[n] = 0;
	if (o->progress_tty) {
		fputs(line, stderr);
		o->progress_last_pct = done >= total ? -1 : pct;
	}
	if (o->screen_fd >= 0) {
		o->screen_bar = done < total;
		screen_write(o, line);
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
	if (o->progress_tty || o->screen_fd >= 0)
		progress_bar(o, what, writing, done, total, el);
	if (o->progress_tty)
		return;
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
