// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hibernate — save the running system to disk and power off; bring it back.
 *
 * The commands and options are the two tables at the end of this file, next
 * to main(): getopt's arguments, --help and the options' config keys come from
 * them. This file owns the terminal and the exit codes; libhibernate does the
 * work.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <sodium.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "frontend/askpass.h"
#include "frontend/config.h"
#include "frontend/doctor.h"
#include "frontend/logind.h"
#include "frontend/stats.h"
#include "hibernate.h"
#include "frontend/hooks.h"
#include "frontend/keyfile.h"
#include "frontend/sleepconf.h"
#include "pipeline/tpm.h"
#include "util/util.h"
#include "workset/workset.h"

#define EXIT_USAGE 2
#define EXIT_CANCELLED 3 /* the user pressed Esc: nothing happened */
#define MIN_INT(a, b) ((a) < (b) ? (a) : (b))

/* Indexes of the command table (commands[], at the end). */
enum command {
	CMD_HIBERNATE, /* the default: no command word */
	CMD_RESUME,
	CMD_STATUS,
	CMD_INVALIDATE,
	CMD_DOCTOR,
	CMD_LOGIND,
	CMD_OFFSET,
	CMD_PREPARE,
	CMD_CONFIG,
};

struct control {
	enum command cmd;
	int loglevel;
	const char *config_path;
	const char *device; /* --device */
	uint64_t offset;    /* --offset */
	bool offset_set;
	const char *snapshot_path; /* --snapshot-device (tests) */
	struct hib_config cfg;     /* file, then options on top */
	bool progress_tty;
	uint64_t progress_t0;
	int progress_last_pct;
	bool loglevel_set; /* -v, -q or --loglevel given */
	bool test_cycle;   /* --test */
	bool cancel_armed; /* Esc on the console cancels now */
	bool no_hooks;     /* --no-hooks */
	/* --systemd-sleep: the operation of the systemd sleep unit that runs us, and
	 * the step of it under way (the system-sleep hooks' SYSTEMD_SLEEP_ACTION). */
	const char *sleep_op;
	const char *sleep_step;
	int kmsg_fd;     /* messages also go to the kernel log */
	int run_lock_fd; /* held for the run; the restoring child lets it go */
	void *ws_rec;    /* the working set recorded before the snapshot */
	size_t ws_len;
	const char *args[2]; /* FILE [SIZE] of offset / prepare-file, ACTION [KEY] of config */
};

static struct control ctl = { .loglevel = HIB_LOG_PROGRESS };

/* Into dmesg too, so the messages of a cycle survive it (the journal picks them up). */
static void log_to_kmsg(enum hib_loglevel level, const char *msg)
{
	static const int prio[] = { 7, 3, 4, 6, 6, 7 };
	char line[1100];
	int n;

	if (ctl.kmsg_fd < 0 || level == HIB_LOG_PROGRESS)
		return;
	n = snprintf(line, sizeof(line), "<%d>hibernate: %s\n", prio[level], msg);
	if (n > 0 && write(ctl.kmsg_fd, line, (size_t)MIN_INT(n, (int)sizeof(line) - 1)) < 0)
		ctl.kmsg_fd = -1;
}

static void log_to_stderr(enum hib_loglevel level, const char *msg, void *ud)
{
	(void)ud;
	if ((int)level > ctl.loglevel)
		return;
	log_to_kmsg(level, msg);
	if (ctl.progress_tty && ctl.progress_last_pct >= 0)
		fputc('\n', stderr), ctl.progress_last_pct = -1;
	fprintf(stderr, "hibernate: %s%s\n", level == HIB_LOG_WARN ? "warning: " : "", msg);
}

static void __attribute__((format(printf, 1, 2))) say(const char *fmt, ...)
{
	va_list ap;

	if (ctl.loglevel < HIB_LOG_ERR)
		return;
	fputs("hibernate: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The tool's own messages, through the same filter as the library's. */
static void __attribute__((format(printf, 2, 3)))
tlog(enum hib_loglevel level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_to_stderr(level, msg, NULL);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A bar on a terminal; on a serial log or pipe, a line every 10%. */
static void progress(const char *phase, uint64_t done, uint64_t total, void *ud)
{
	uint64_t el = now_ms() - ctl.progress_t0;
	int pct = total ? (int)(done * 100 / total) : 100;
	double mbs = el ? (double)done / 1048576.0 / ((double)el / 1000.0) : 0;
	const char *what = strcmp(phase, "write") == 0 ? "Writing image" : "Loading image";

	(void)ud;
	if (ctl.loglevel < HIB_LOG_PROGRESS)
		return;
	if (ctl.progress_tty) {
		/* 76 columns at most: fits an 80-column VT and a serial console. */
		char bar[21], left[48] = "";
		int fill = pct * 20 / 100;
		bool writing = strcmp(phase, "write") == 0;

		memset(bar, '#', (size_t)fill);
		memset(bar + fill, '.', (size_t)(20 - fill));
		bar[20] = 0;
		if (done * 20 >= total && done < total && el >= 500) { /* settled: 5% in */
			uint64_t t = (total - done) * el / done / 1000;
			unsigned s = (unsigned)(t < 5999 ? t : 5999);
			snprintf(left, sizeof(left), " %2u:%02u left", s / 60, s % 60);
		}
		fprintf(stderr, "\r%s [%s] %3d%% %6.1f MiB/s%-10s%s", what, bar, pct, mbs, left,
			writing && ctl.cancel_armed && done < total ? "  Esc cancels" : "");
		ctl.progress_last_pct = pct;
		if (done >= total) {
			fputc('\n', stderr);
			ctl.progress_last_pct = -1;
		}
		return;
	}
	if (ctl.progress_last_pct < 0 || pct / 10 > ctl.progress_last_pct / 10 || done >= total) {
		if (pct == ctl.progress_last_pct)
			return;
		fprintf(stderr, "hibernate: %s: %3d%% (%" PRIu64 "/%" PRIu64 " MiB, %.1f MiB/s)\n",
			what, pct, done >> 20, total >> 20, mbs);
		ctl.progress_last_pct = pct;
	}
}

static void __attribute__((noreturn, format(printf, 1, 2))) bad_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("hibernate: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'hibernate --help' for more information.\n", stderr);
	exit(EXIT_USAGE);
}

/* --device and --offset over the config file's device = and offset =. */
static struct hib_target_request target_request(void)
{
	return (struct hib_target_request){
		.spec = ctl.device,
		.offset_pages = ctl.offset,
		.offset_set = ctl.offset_set,
		.config_spec = ctl.cfg.device,
		.config_offset_pages = ctl.cfg.offset,
		.config_offset_set = ctl.cfg.offset_set,
	};
}

/* --device, then the config file, then the kernel command line and /proc/swaps. */
static int pick_target(bool writable, struct hib_target **ret)
{
	struct hib_target_request req = target_request();
	struct hib_error err;
	int r;

	req.writable = writable;
	/* A swap file or image file: hibernate writes to the blocks under it. Reading
	 * (status) and invalidating go through the filesystem, which is right then. */
	req.file_target = ctl.cmd == CMD_HIBERNATE;
	r = hib_target_resolve(&req, ret, &err);
	if (r < 0) {
		say("%s", err.msg);
		return r;
	}
	tlog(HIB_LOG_INFO, "target %s, chosen %s", hib_target_name(*ret),
	     hib_target_source_name(hib_target_source(*ret)));
	return 0;
}

static int snapshot_open(enum hib_snapshot_mode mode, struct hib_snapshot **ret)
{
	int r = hib_snapshot_open_dev(ctl.snapshot_path, mode, ret);
	const char *p = ctl.snapshot_path ? ctl.snapshot_path : "/dev/snapshot";

	if (r == -ENOENT)
		say("%s: missing: the kernel needs CONFIG_HIBERNATION_SNAPSHOT_DEV", p);
	else if (r == -EPERM)
		say("%s: hibernation is not available: the kernel refuses it (nohibernate, "
		    "hibernate=no, kernel lockdown / Secure Boot, or secretmem in use)",
		    p);
	else if (r == -EBUSY)
		say("%s: busy: another hibernation program holds it", p);
	else if (r < 0)
		say("%s: cannot open: %s", p, strerror(-r));
	return r;
}

/* ---- secrets -------------------------------------------------------------- */

struct secret_buf {
	char data[4096];
	size_t len;
};

static void secret_wipe(struct secret_buf *b)
{
	explicit_bzero(b, sizeof(*b));
}

/* A buffer for a secret, taken before a byte of it is read: sodium_malloc'ed
 * memory is locked (never written to swap, which is where the image goes),
 * left out of core dumps and fenced by guard pages; freeing wipes it. */
static struct secret_buf *secret_buf_new(void)
{
	struct secret_buf *b;

	if (sodium_init() < 0)
		return NULL;
	b = sodium_malloc(sizeof(*b));
	if (b)
		secret_wipe(b);
	else
		say("no memory for the passphrase (locked memory: see ulimit -l)");
	return b;
}

static void secret_buf_free(struct secret_buf **b)
{
	if (*b)
		sodium_free(*b);
	*b = NULL;
}

/* The key file, checked and read whole into locked memory (lib/frontend/keyfile.c). */
static int read_key_file(const char *path, struct hib_key_file *k)
{
	struct hib_error err;
	int r;

	hib_key_file_free(k);
	r = hib_key_file_read(path, k, &err);
	if (r < 0)
		say("%s", err.msg);
	return r;
}

/* How long hibernating waits for the agents' answer: a lid closed on a
 * question must not keep the machine awake. A resume waits for the user. */
#define HIBERNATE_ASK_TIMEOUT_S 90

/* Where passphrases are asked (lib/frontend/askpass.h), decided once a run. */
static enum hib_askpass_via ask_via(const char **ret_agent)
{
	static struct hib_askpass_env env;
	static bool probed;

	if (!probed) {
		hib_askpass_probe(&env);
		probed = true;
	}
	*ret_agent = env.agent;
	return hib_askpass_choose(&env);
}

/* Asked where a typo would go unnoticed: confirm it. */
static bool ask_interactive(void)
{
	const char *agent;
	enum hib_askpass_via via = ask_via(&agent);

	return via == HIB_ASKPASS_TTY || via == HIB_ASKPASS_AGENT;
}

/* @prompt without its trailing blank, for the agents (they lay out their own)
 * and for messages. */
static const char *prompt_text(const char *prompt, char *buf, size_t size)
{
	size_t len = strlen(prompt);

	while (len && prompt[len - 1] == ' ')
		len--;
	snprintf(buf, size, "%.*s", (int)len, prompt);
	return buf;
}

/* systemd-ask-password's answer, within @timeout_s (0: no limit). */
static int read_passphrase_agent(const char *agent, const char *prompt, unsigned timeout_s,
				 struct secret_buf *b)
{
	struct hib_error err;
	char msg[256];
	int r;

	r = hib_askpass_agent(agent, "image", prompt_text(prompt, msg, sizeof(msg)), timeout_s,
			      b->data, sizeof(b->data), &b->len, &err);
	if (r < 0 && r != -ENODATA)
		say("%s", err.msg);
	return r;
}

/* A line from stdin (echo off on a terminal), or the agents' answer within
 * @agent_timeout_s (0: no limit). */
static int read_passphrase(const char *prompt, unsigned agent_timeout_s, struct secret_buf *b)
{
	struct termios tio, old;
	const char *agent;
	enum hib_askpass_via via = ask_via(&agent);
	bool tty = via == HIB_ASKPASS_TTY && tcgetattr(STDIN_FILENO, &old) == 0;
	size_t n = 0;
	char c;

	if (via == HIB_ASKPASS_NONE) {
		char msg[256];

		say("nowhere to ask \"%s\": standard input is not a terminal and no systemd "
		    "password agent runs (systemd-ask-password); run hibernate from a terminal, "
		    "or give a key file (key-file = in /etc/hibernate.conf)",
		    prompt_text(prompt, msg, sizeof(msg)));
		return -ENOTTY;
	}
	if (via == HIB_ASKPASS_AGENT)
		return read_passphrase_agent(agent, prompt, agent_timeout_s, b);
	fprintf(stderr, "%s", prompt);
	fflush(stderr);
	if (tty) {
		tio = old;
		tio.c_lflag &= ~(tcflag_t)ECHO;
		tio.c_lflag |= ICANON;
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &tio);
	}
	while (read(STDIN_FILENO, &c, 1) == 1 && c != '\n' && c != '\r')
		if (n < sizeof(b->data) - 1)
			b->data[n++] = c;
	if (tty) {
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
		fputc('\n', stderr);
	}
	b->len = n;
	return n ? 0 : -ENODATA;
}

static struct secret_buf *resume_secret, *hibernate_secret;
static struct hib_key_file resume_key, hibernate_key;

static int ask_secret(int attempt, const char *what, struct hib_secret *ret, void *ud)
{
	char prompt[256];
	bool pin = strcmp(what, "TPM PIN") == 0;
	int r;

	(void)ud;
	/* A TPM-sealed image asks for its PIN or its fallback passphrase, never a key file. */
	if (ctl.cfg.key_file && strncmp(what, "TPM ", 4) != 0) {
		/* A key file does not get better by asking again. */
		if (attempt > 1)
			return -EACCES;
		r = read_key_file(ctl.cfg.key_file, &resume_key);
		if (r < 0)
			return r;
		ret->kind = HIB_SECRET_KEYFILE;
		ret->data = resume_key.data;
		ret->len = resume_key.len;
		return 0;
	}
	if (!resume_secret && !(resume_secret = secret_buf_new()))
		return -ENOMEM;
	snprintf(prompt, sizeof(prompt),
		 "%s for the hibernation image%s: ", pin ? "TPM PIN" : "Passphrase",
		 attempt > 1 ? " (again)" : "");
	r = read_passphrase(prompt, 0, resume_secret);
	if (r < 0)
		return r;
	ret->kind = HIB_SECRET_PASSPHRASE;
	ret->data = resume_secret->data;
	ret->len = resume_secret->len;
	return 0;
}

/* hib_options.forget_secret: the library has tried it; a restore does not return here. */
static void forget_secret(void *ud)
{
	(void)ud;
	if (resume_secret)
		secret_wipe(resume_secret);
	hib_key_file_free(&resume_key);
}

/* A side's numbers for scripts (lib/frontend/stats.h), at info after its messages.
 * Runs with the system frozen (hib_stats_fn): the line is built on the stack. */
static void log_stats(enum hib_stats_side side, const struct hib_stats *st, void *ud)
{
	char line[1024];

	(void)ud;
	if (hib_stats_format(side, st, line, sizeof(line)) >= 0)
		tlog(HIB_LOG_INFO, "%s", line);
}

/* The restored system says how the cycle went: the numbers both halves left
 * (struct hib_report), so they reach this system's log and journal. */
static void log_resumed(const struct hib_stats *st)
{
	uint64_t off_s;

	if (!st->resumed_report) {
		tlog(HIB_LOG_PROGRESS, "resumed");
		return;
	}
	off_s = st->loaded_unix > st->written_unix ? st->loaded_unix - st->written_unix : 0;
	tlog(HIB_LOG_PROGRESS,
	     "resumed: %" PRIu64 " MiB image (%" PRIu64 " MiB on disk) written in %.1f s "
	     "(%u threads), loaded in %.1f s (%u threads); off for %" PRIu64 "h%02" PRIu64
	     "m%02" PRIu64 "s",
	     st->stream_bytes >> 20, st->stored_bytes >> 20, (double)st->io_ms / 1000, st->threads,
	     (double)st->load_ms / 1000, st->load_threads, off_s / 3600, off_s / 60 % 60,
	     off_s % 60);
	log_stats(HIB_STATS_RESUMED, st, NULL);
}

/* ---- one run at a time; signals ----------------------------------------- */

#define RUN_LOCK "/run/hibernate.lock"

/* The signal that asked this run to stop, 0 for none. */
static volatile sig_atomic_t interrupted;

static void on_stop_signal(int sig)
{
	interrupted = sig;
}

/*
 * From the first hook on, SIGINT, SIGTERM and SIGHUP only record that the run
 * is to stop: dying then would leave services stopped and the console
 * switched. The hook running is killed, the cycle cancelled, the posts run,
 * then hibernate exits. SA_RESTART keeps the engine's I/O threads from seeing
 * EINTR; the hooks' waits (poll, nanosleep) return at a signal regardless.
 */
static void catch_stop_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa = { .sa_handler = on_stop_signal, .sa_flags = SA_RESTART }, old;

	sigemptyset(&sa.sa_mask);
	/* One ignored already (nohup, a background job) stays ignored. */
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
}

static int interrupted_exit(void)
{
	const char *name = interrupted == SIGINT    ? "SIGINT"
			   : interrupted == SIGTERM ? "SIGTERM"
						    : "SIGHUP";

	say("interrupted by %s: nothing was saved; what the hooks did is undone (services "
	    "restarted), the system keeps running",
	    name);
	return EXIT_FAILURE;
}

/* ---- Esc cancels ------------------------------------------------------- */

static struct termios saved_tio;
static bool tio_saved;

/* Raw, non-blocking keys from the console for the length of the write. */
static void cancel_arm(void)
{
	struct termios tio;

	if (!ctl.cfg.cancel || !isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_tio) < 0)
		return;
	tio = saved_tio;
	tio.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	tio.c_cc[VMIN] = 0;
	tio.c_cc[VTIME] = 0;
	/* An Esc typed before the cycle started is not a request to cancel it. */
	tcflush(STDIN_FILENO, TCIFLUSH);
	if (tcsetattr(STDIN_FILENO, TCSANOW, &tio) == 0)
		tio_saved = ctl.cancel_armed = true;
}

static void cancel_disarm(void)
{
	if (tio_saved)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
	tio_saved = ctl.cancel_armed = false;
}

static bool cancel_requested(void *ud)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	char buf[64];

	(void)ud;
	if (interrupted)
		return true;
	if (!tio_saved)
		return false;
	while (poll(&p, 1, 0) > 0 && (p.revents & POLLIN)) {
		ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
		if (n <= 0)
			return false;
		if (memchr(buf, 0x1b, (size_t)n))
			return true;
	}
	return false;
}

/* ---- hooks ------------------------------------------------------------ */

static void hook_log(enum hib_loglevel level, const char *who, const char *msg, void *ud)
{
	const char *base = strrchr(who, '/');

	(void)ud;
	tlog(level, "hook %s: %s", base ? base + 1 : who, msg);
}

static char *hook_env[64];

static void hooks_setup(struct hib_hook_config *hc, const char *mode)
{
	memset(hc, 0, sizeof(*hc));
	hib_config_hook_env(&ctl.cfg, hook_env, sizeof(hook_env) / sizeof(hook_env[0]));
	hc->env = hook_env;
	hc->systemd = ctl.cfg.hooks_systemd;
	hc->pmutils = ctl.cfg.hooks_pmutils;
	hc->timeout_s = ctl.cfg.hook_timeout;
	hc->force = ctl.cfg.force;
	hc->mode = mode;
	hc->systemd_verb = ctl.sleep_op;
	hc->systemd_action = ctl.sleep_step;
	hc->inl = ctl.cfg.inl;
	hc->n_inline = ctl.cfg.n_inline;
	hc->log = hook_log;
	hc->interrupted = &interrupted;
	/* Tests point the runner at their own directories (test builds only). */
	if (hib_test_knob("HIBERNATE_HOOKS_DIRS")) {
		static char buf[4096];
		static const char *dirs[9];
		size_t n = 0;
		snprintf(buf, sizeof(buf), "%s", hib_test_knob("HIBERNATE_HOOKS_DIRS"));
		for (char *save = NULL, *d = strtok_r(buf, ":", &save); d && n < 8;
		     d = strtok_r(NULL, ":", &save))
			dirs[n++] = d;
		dirs[n] = NULL;
		hc->dirs = dirs;
	}
}

static void hooks_post(struct hib_hooks *hooks, const struct hib_hook_config *hc)
{
	if (!hooks)
		return;
	hib_hooks_post(hooks, hc);
	hib_hooks_free(hooks);
}

/* ---- the working set --------------------------------------------------- */

#define WS_RECORD_MS 2000 /* the record's share of the time before FREEZE */

/* After the pre hooks, before FREEZE: what to bring back after resume. It
 * stays in this process's memory, and so in the image. */
static void workset_record(const char *target_name)
{
	struct hib_ws_record_stats st;
	int r;

	if (!ctl.cfg.restore_working_set)
		return;
	r = hib_ws_record(target_name, WS_RECORD_MS, &ctl.ws_rec, &ctl.ws_len, &st);
	if (r < 0) {
		tlog(HIB_LOG_WARN,
		     "working set not recorded (%s): nothing will be restored "
		     "after resume",
		     strerror(-r));
		return;
	}
	tlog(HIB_LOG_INFO,
	     "working set recorded: %u processes, %u files (%" PRIu64 " MiB in %u ranges)%s "
	     "in %" PRIu64 " ms",
	     st.procs, st.files, st.resident_bytes >> 20, st.ranges,
	     st.truncated ? ", cut at a bound" : "", st.ms);
}

/* The restoring child's only line, into the kernel log: its stderr is gone.
 * Shown as the cycle's own summary would be (a failure as a warning): never
 * at --loglevel 0, which promises silence. */
static void workset_report(int r, const struct hib_ws_restore_stats *st)
{
	enum hib_loglevel level = r < 0 ? HIB_LOG_WARN : HIB_LOG_PROGRESS;
	char line[256];

	if ((int)level > ctl.loglevel)
		return;
	if (r < 0)
		snprintf(line, sizeof(line), "working set not restored: %s", strerror(-r));
	else
		snprintf(line, sizeof(line),
			 "working set restored: %u processes, %" PRIu64 " MiB swapped in, %u "
			 "files, %" PRIu64 " MiB read, %" PRIu64 ".%01" PRIu64
			 " s, stopped: %s%s%s",
			 st->procs, st->swapin_kb >> 10, st->files, st->file_bytes >> 20,
			 st->ms / 1000, st->ms % 1000 / 100, hib_ws_stop_name(st->stop),
			 st->madvise_errno ? "; process_madvise: " : "",
			 st->madvise_errno ? strerror(st->madvise_errno) : "");
	/* log_to_kmsg leaves progress lines to the terminal: this one has none. */
	log_to_kmsg(r < 0 ? HIB_LOG_WARN : HIB_LOG_INFO, line);
}

/* In the child: the background's manners. Nothing of the parent's it keeps
 * but the kernel log (the run lock above all: a next run must not wait). */
static void workset_detach(void)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	setsid();
	signal(SIGINT, SIG_DFL), signal(SIGTERM, SIG_DFL), signal(SIGHUP, SIG_DFL);
	for (int fd = 0; fd <= 2 && null >= 0; fd++)
		dup2(null, fd);
	if (ctl.run_lock_fd >= 0)
		close(ctl.run_lock_fd);
	/* Idle I/O class (3 << 13), nice 19: the resumed system comes first. */
	(void)syscall(SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, 0, 3 << 13);
	(void)setpriority(PRIO_PROCESS, 0, 19);
}

/* Resumed: the restore runs in a child, and this process goes on at once. */
static void workset_restore_start(void)
{
	_cleanup_(freep) void *rec = TAKE_PTR(ctl.ws_rec);
	struct hib_ws_restore_stats st;
	pid_t pid;
	int r;

	if (!rec)
		return;
	pid = fork();
	if (pid < 0) {
		tlog(HIB_LOG_WARN, "working set not restored: fork: %m");
		return;
	}
	if (pid > 0)
		return;
	workset_detach();
	r = hib_ws_restore(rec, ctl.ws_len, (uint64_t)ctl.cfg.restore_limit * 1000, &st);
	workset_report(r, &st);
	_exit(r < 0 ? EXIT_FAILURE : EXIT_SUCCESS);
}

/* ---- doctor ----------------------------------------------------------- */

static void doctor_line(enum hib_doctor_verdict v, const char *check, const char *msg, void *ud)
{
	static const char *const word[] = { "PASS", "WARN", "FAIL" };

	(void)ud;
	printf("%s  %-16s %s\n", word[v], check, msg);
}

static struct hib_doctor_input doctor_input(void)
{
	return (struct hib_doctor_input){
		.root = hib_test_knob("HIBERNATE_DOCTOR_ROOT"),
		.target = target_request(),
		.image_size = ctl.cfg.opts.image_size,
		.encrypt = ctl.cfg.encrypt,
		.require = ctl.cfg.opts.require_encryption,
		.zram = ctl.cfg.opts.zram,
		.key_file = ctl.cfg.key_file,
	};
}

/* logind's CanHibernate over D-Bus through busctl (5 s at most) into @buf;
 * NULL with *@ret_why when it could not be asked. */
static const char *logind_ask(char *buf, size_t len, const char **ret_why)
{
	static const char *const busctl[] = { "/usr/bin/busctl", "/bin/busctl" };
	const char *exe = NULL, *knob = hib_test_knob("HIBERNATE_DOCTOR_LOGIND");
	char cmd[256], out[128] = "";
	FILE *f;

	if (hib_test_knob("HIBERNATE_DOCTOR_ROOT")) {
		*ret_why = "a test root (HIBERNATE_DOCTOR_ROOT)";
		return knob ? snprintf(buf, len, "%s", knob), buf : NULL;
	}
	for (size_t i = 0; i < ARRAY_SIZE(busctl) && !exe; i++)
		if (access(busctl[i], X_OK) == 0)
			exe = busctl[i];
	*ret_why = "no busctl (systemd) here to ask it";
	if (!exe)
		return NULL;
	snprintf(cmd, sizeof(cmd),
		 "%s --timeout=5 call org.freedesktop.login1 /org/freedesktop/login1 "
		 "org.freedesktop.login1.Manager CanHibernate 2>/dev/null",
		 exe);
	f = popen(cmd, "re");
	*ret_why = "systemd-logind did not answer on the system bus (not running?)";
	if (!f)
		return NULL;
	if (!fgets(out, sizeof(out), f))
		out[0] = 0;
	if (pclose(f) != 0 || sscanf(out, "s \"%31[a-z]\"", buf) != 1 || len < 32)
		return NULL;
	return buf;
}

/* The logind line: its answer, against the verdict of the other checks. */
static void doctor_logind(const char *root, int worst)
{
	static const char *const word[] = { "SKIP", "PASS", "WARN" };
	struct hib_logind_facts f;
	char answer[32], msg[1024];
	const char *why = NULL;
	enum hib_logind_verdict v;

	hib_logind_facts_read(root, &f);
	f.answer = logind_ask(answer, sizeof(answer), &why);
	f.unasked = why;
	f.doctor_failed = worst == HIB_DOCTOR_FAIL;
	v = hib_logind_explain(&f, msg, sizeof(msg));
	printf("%s  %-16s %s\n", word[v], "logind", msg);
}

static int do_doctor(void)
{
	struct hib_doctor_input in = doctor_input();
	int worst = hib_doctor(&in, doctor_line, NULL);

	doctor_logind(in.root, worst);
	fflush(stdout);
	return worst == HIB_DOCTOR_FAIL ? EXIT_FAILURE : EXIT_SUCCESS;
}

struct first_fail {
	char check[32];
	char msg[1024];
};

static void doctor_first_fail(enum hib_doctor_verdict v, const char *check, const char *msg,
			      void *ud)
{
	struct first_fail *ff = ud;

	if (v == HIB_DOCTOR_FAIL && !ff->check[0]) {
		snprintf(ff->check, sizeof(ff->check), "%s", check);
		snprintf(ff->msg, sizeof(ff->msg), "%s", msg);
	}
}

/* Only where doctor passes is logind told that hibernate can hibernate. */
static int do_logind_setup(void)
{
	_cleanup_(hib_target_closep) struct hib_target *t = NULL;
	struct hib_doctor_input in = doctor_input();
	struct hib_target_request req = target_request();
	struct first_fail ff = { 0 };
	struct hib_error err;
	int r;

	if (hib_doctor(&in, doctor_first_fail, &ff) != HIB_DOCTOR_FAIL) {
		req.file_target = true;
		if (hib_target_resolve(&req, &t, &err) < 0) {
			say("%s", err.msg);
			return EXIT_FAILURE;
		}
	}
	r = hib_logind_configure(in.root, t, &err);
	if (r < 0) {
		say("%s", err.msg);
		return EXIT_FAILURE;
	}
	if (t)
		say("logind: doctor passes: /sys/power/resume names %s, and %s tells "
		    "systemd-logind %s",
		    hib_target_name(t), HIB_LOGIND_ENV_PATH, HIB_LOGIND_ENV_LINE);
	else
		say("logind: doctor fails (%s: %s): logind is left to its own checks", ff.check,
		    ff.msg);
	/* logind reads the file when it starts; at boot it has not yet. */
	if (r > 0 && access("/run/systemd/system", F_OK) == 0 && !in.root &&
	    system("systemctl --no-block try-restart systemd-logind.service") != 0)
		say("logind: systemctl try-restart systemd-logind.service failed");
	return EXIT_SUCCESS;
}

/* --auto-swapon's area off again, once /dev/snapshot is closed: newer
 * kernels (7.2) hold the area they were told of against swapoff until then. */
static void auto_swapoff(struct hib_target *t)
{
	int r = hib_target_auto_swapoff(t);

	if (r < 0)
		tlog(HIB_LOG_WARN, "swapoff %s failed: %s; it stays on (run: swapoff %s)",
		     hib_target_name(t), strerror(-r), hib_target_name(t));
}

/* --test: restore the image just written, as the initramfs would. */
static int test_restore(struct hib_target *t)
{
	struct hib_snapshot *snap = NULL;
	int r;

	tlog(HIB_LOG_PROGRESS, "test cycle: image written, restoring it now");
	r = snapshot_open(HIB_SNAP_RESUME, &snap);
	if (r == 0) {
		ctl.progress_last_pct = -1;
		ctl.progress_t0 = now_ms();
		r = hib_resume(t, snap, &ctl.cfg.opts, NULL, NULL);
		hib_snapshot_close(snap);
	}
	/* Still here: the restore did not happen. Everything else was stopped for it. */
	hib_test_cycle_abort();
	say("test cycle: the image could not be restored; the system keeps running");
	return r < 0 ? r : -EIO;
}

/* A passphrase or PIN (@what), asked twice on a terminal, into locked memory
 * (*@ret_buf, freed by the caller on success; freed here on failure) and @sec. */
static int ask_new_passphrase(const char *what, struct secret_buf **ret_buf, struct hib_secret *sec)
{
	struct secret_buf *b1, *b2;
	char prompt[128];
	int r;

	b1 = *ret_buf = secret_buf_new();
	if (!b1)
		return -ENOMEM;
	snprintf(prompt, sizeof(prompt), "%s for the hibernation image: ", what);
	r = read_passphrase(prompt, HIBERNATE_ASK_TIMEOUT_S, b1);
	if (r == 0 && ask_interactive()) {
		snprintf(prompt, sizeof(prompt), "%s again: ", what);
		b2 = secret_buf_new();
		r = b2 ? read_passphrase(prompt, HIBERNATE_ASK_TIMEOUT_S, b2) : -ENOMEM;
		if (r == 0 && (b1->len != b2->len || memcmp(b1->data, b2->data, b1->len))) {
			say("the %ss differ; nothing was done", what);
			r = -EINVAL;
		}
		secret_buf_free(&b2);
	}
	if (r == -ENODATA)
		say("an empty %s would not protect anything; nothing was done", what);
	if (r < 0) {
		secret_buf_free(ret_buf); /* wipes what was typed */
		return r;
	}
	*sec = (struct hib_secret){ .kind = HIB_SECRET_PASSPHRASE,
				    .data = b1->data,
				    .len = b1->len };
	return r;
}

static struct secret_buf *tpm_pin_secret;

/* encrypt = tpm: the PIN and the fallback passphrase when configured, into ctl.cfg.opts.tpm. */
static int ask_tpm_secrets(void)
{
	static struct hib_secret pin, fallback;
	static struct hib_tpm_options t;
	int r = 0;

	if (!tpm_supported()) {
		say("encrypt = tpm: this hibernate was built without TPM support (the static "
		    "build); use the package's dynamically linked binary, or encrypt = yes");
		return -EOPNOTSUPP;
	}
	t = (struct hib_tpm_options){ .pcrs = ctl.cfg.tpm_pcrs };
	if (ctl.cfg.tpm_pin) {
		r = ask_new_passphrase("TPM PIN", &tpm_pin_secret, &pin);
		t.pin = &pin;
	}
	if (r == 0 && ctl.cfg.tpm_fallback) {
		r = ask_new_passphrase("Passphrase", &hibernate_secret, &fallback);
		t.fallback = &fallback;
	}
	ctl.cfg.opts.tpm = &t;
	return r;
}

/* --encrypt: the passphrase (asked twice on a terminal), the key file, or the
 * TPM's secrets, into ctl.cfg.opts. Asked before the hooks switch consoles or
 * stop anything. */
static int ask_image_secret(void)
{
	static struct hib_secret sec;
	int r;

	if (ctl.cfg.tpm)
		return ask_tpm_secrets();
	if (ctl.cfg.key_file) {
		r = read_key_file(ctl.cfg.key_file, &hibernate_key);
		if (r < 0)
			return r;
		sec = (struct hib_secret){ HIB_SECRET_KEYFILE, hibernate_key.data,
					   hibernate_key.len };
	} else {
		r = ask_new_passphrase("Passphrase", &hibernate_secret, &sec);
		if (r < 0)
			return r;
	}
	ctl.cfg.opts.secret = &sec;
	return 0;
}

/* An image resume would refuse is not worth writing: with require-encryption
 * on, it must be encrypted. */
static int check_sealing_required(void)
{
	enum hib_require want = ctl.cfg.opts.require_encryption;

	if (want == HIB_REQUIRE_NOTHING || ctl.cfg.encrypt)
		return 0;
	say("require-encryption is on (%s), so resume would refuse an image that is not "
	    "encrypted; nothing was done. Set encrypt = yes in %s (or --encrypt), or "
	    "require-encryption = no",
	    ctl.cfg.require_encryption > 0 ? "require-encryption = yes" : "key-file is set",
	    ctl.config_path ? ctl.config_path : HIB_CONFIG_PATH);
	return -EPERM;
}

/* The target is known; only now prepare the system for the cycle: the pre
 * hooks. Returns 0, or the exit code when they stopped it (undone already). */
static int hooks_before(struct hib_hook_config *hc, struct hib_hooks **hooks)
{
	const char *mode = ctl.test_cycle                                    ? "test"
			   : ctl.cfg.opts.powerdown == HIB_POWERDOWN_SUSPEND ? "suspend"
									     : "hibernate";
	struct hib_error err;
	char msg[1024];
	int r;

	hooks_setup(hc, mode);
	if (ctl.no_hooks)
		return 0;
	r = hib_hooks_collect(hc, hooks, &err);
	if (r < 0) {
		say("%s; nothing was done", err.msg);
		return EXIT_FAILURE;
	}
	r = hib_hooks_pre(*hooks, hc, msg, sizeof(msg));
	if (r == -EINTR) {
		if (msg[0])
			tlog(HIB_LOG_WARN, "%s", msg);
		hib_hooks_free(*hooks);
		*hooks = NULL;
		return interrupted_exit();
	}
	if (r < 0) {
		if (msg[0])
			say("%s", msg);
		say("a hook stopped the cycle; what the hooks did is undone, the "
		    "system keeps running");
		hib_hooks_free(*hooks);
		*hooks = NULL;
		return r == -ECANCELED ? EXIT_CANCELLED : EXIT_FAILURE;
	}
	return 0;
}

/* How a cycle that ran ended, as the exit code and its last words. */
static int hibernate_exit(int r, enum hib_suspend_outcome outcome, const struct hib_stats *st)
{
	if (r == 0) {
		switch (outcome) {
		case HIB_SUSPEND_RESUMED:
			log_resumed(st);
			return EXIT_SUCCESS;
		case HIB_SUSPEND_RAM:
			tlog(HIB_LOG_PROGRESS, "woke up from RAM; the image on disk was discarded");
			return EXIT_SUCCESS;
		case HIB_SUSPEND_WRITTEN:
			return EXIT_SUCCESS;
		case HIB_SUSPEND_CANCELLED:
			say("cancelled: nothing was saved, the system keeps running");
			return EXIT_CANCELLED;
		case HIB_SUSPEND_TEST_WRITTEN:
			break; /* not with r == 0: test_restore() ran */
		}
	}
	say("hibernation failed, the system keeps running");
	return EXIT_FAILURE;
}

/* ---- systemd's sleep units: user.slice ------------------------------------ */

static const char *const systemctl_paths[] = { "/usr/bin/systemctl", "/bin/systemctl" };

/* systemctl ARG... with its stdout into @out (may be NULL); its exit status, or -errno. */
static int systemctl(const char *const *args, char *out, size_t outlen)
{
	const char *path = NULL;
	char sink[256];
	int pfd[2], status;
	size_t used = 0;
	ssize_t n;
	pid_t pid;

	for (size_t i = 0; i < ARRAY_SIZE(systemctl_paths) && !path; i++)
		if (access(systemctl_paths[i], X_OK) == 0)
			path = systemctl_paths[i];
	if (!path)
		return -ENOENT;
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid == 0) {
		const char *argv[8] = { path };
		for (size_t i = 0; args[i] && i < 6; i++)
			argv[i + 1] = args[i];
		dup2(pfd[1], STDOUT_FILENO);
		execv(path, (char *const *)argv);
		_exit(127);
	}
	close(pfd[1]);
	/* What does not fit is read and dropped: systemctl must not block on it. */
	for (bool room = out && outlen > 1; pid > 0; room = room && used < outlen - 1) {
		n = room ? read(pfd[0], out + used, outlen - 1 - used)
			 : read(pfd[0], sink, sizeof(sink));
		if (n <= 0)
			break;
		used += room ? (size_t)n : 0;
	}
	close(pfd[0]);
	if (out && outlen)
		out[used] = 0;
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static bool user_slice_frozen;

/* Why systemd-sleep would not freeze user.slice here; NULL when it would. */
static const char *user_slice_unfreezable(void)
{
	const char *env = getenv("SYSTEMD_SLEEP_FREEZE_USER_SESSIONS");
	unsigned version;
	char out[512];

	if (env && (strcmp(env, "0") == 0 || strcmp(env, "no") == 0 || strcmp(env, "false") == 0))
		return "$SYSTEMD_SLEEP_FREEZE_USER_SESSIONS says not to";
	if (systemctl((const char *[]){ "--version", NULL }, out, sizeof(out)) != 0 ||
	    hib_systemd_version_parse(out, &version) < 0)
		return "systemd's version is unknown (systemctl --version)";
	if (version < HIB_SYSTEMD_FREEZES_USER_SLICE)
		return "systemd before 256 does not";
	if (access("/sys/fs/cgroup/user.slice/cgroup.freeze", F_OK) < 0)
		return "no cgroup v2 freezer for user.slice";
	return NULL;
}

/* As systemd-sleep 256+ does: the user sessions stand still around the sleep,
 * so nothing of theirs runs between the hooks and the snapshot, nor after a
 * wake until the hooks have undone. Only under a systemd sleep unit: a user
 * running hibernate from a session would freeze itself. */
static void user_slice_freeze(void)
{
	const char *why;
	int r;

	if (!ctl.sleep_op || user_slice_frozen)
		return;
	why = user_slice_unfreezable();
	if (why) {
		tlog(HIB_LOG_INFO, "user.slice not frozen: %s", why);
		return;
	}
	r = systemctl((const char *[]){ "freeze", "user.slice", NULL }, NULL, 0);
	if (r != 0) {
		/* systemd-sleep goes on too: a sleep matters more than the freeze. */
		tlog(HIB_LOG_WARN, "user.slice could not be frozen (systemctl freeze: %s)",
		     r < 0 ? strerror(-r) : "failed");
		return;
	}
	user_slice_frozen = true;
	tlog(HIB_LOG_INFO, "user.slice frozen");
}

/* The one way back: after the sleep, a failure, a cancel, and at exit. */
static void user_slice_thaw(void)
{
	int r;

	if (!user_slice_frozen)
		return;
	user_slice_frozen = false;
	r = systemctl((const char *[]){ "thaw", "user.slice", NULL }, NULL, 0);
	if (r != 0)
		say("user.slice could not be thawed: run systemctl thaw user.slice");
	else
		tlog(HIB_LOG_INFO, "user.slice thawed");
}

/* One cycle: the target, the hooks, the image, the powerdown, and after the
 * resume (or a failure, or a cancel) the hooks' undoing. An exit code. */
static int hibernate_cycle(void)
{
	struct hib_target *t = NULL;
	struct hib_snapshot *snap = NULL;
	struct hib_hooks *hooks = NULL;
	struct hib_hook_config hc;
	struct hib_stats st;
	enum hib_suspend_outcome outcome = 0;
	struct hib_error err;
	const char *name;
	int r;

	if (check_sealing_required() < 0)
		return EXIT_FAILURE;
	/* One at a time: a second run would stop what the first stopped and
	 * overwrite the hooks' record of it (/run/hibernate/services.stopped). */
	ctl.run_lock_fd = hib_run_lock(RUN_LOCK, &err);
	if (ctl.run_lock_fd < 0) {
		say("%s", err.msg);
		return EXIT_FAILURE;
	}
	r = pick_target(true, &t);
	if (r < 0)
		return EXIT_FAILURE;
	name = hib_target_name(t);
	r = ctl.cfg.encrypt ? ask_image_secret() : 0;
	if (r == 0) {
		catch_stop_signals();
		r = hooks_before(&hc, &hooks);
	}
	if (r != 0) {
		hib_target_close(t);
		return r < 0 ? EXIT_FAILURE : r;
	}
	user_slice_freeze();
	r = interrupted ? -EINTR : snapshot_open(HIB_SNAP_HIBERNATE, &snap);
	if (r < 0) {
		user_slice_thaw();
		hooks_post(hooks, &hc);
		hib_target_close(t);
		return interrupted ? interrupted_exit() : EXIT_FAILURE;
	}
	workset_record(name);
	tlog(HIB_LOG_PROGRESS, "hibernating to %s (%s%s)%s", name,
	     hib_codec_name(ctl.cfg.opts.codec),
	     !ctl.cfg.encrypt   ? ""
	     : ctl.cfg.tpm      ? ", encrypted with a key sealed to the TPM"
	     : ctl.cfg.key_file ? ", encrypted with the key file"
				: ", encrypted with a passphrase",
	     ctl.cfg.cancel && isatty(STDIN_FILENO) ? "; Esc cancels while the image is written"
						    : "");
	if (ctl.test_cycle)
		ctl.cfg.opts.powerdown = HIB_POWERDOWN_TEST;
	ctl.cfg.opts.progress = progress;
	ctl.cfg.opts.cancel = cancel_requested;
	ctl.progress_t0 = now_ms();
	ctl.cfg.opts.ask_secret = ask_secret; /* for --test's restore */
	ctl.cfg.opts.forget_secret = forget_secret;
	cancel_arm();
	r = hib_suspend(t, snap, &ctl.cfg.opts, &outcome, &st);
	cancel_disarm();
	/* In either world (resumed or not), the passphrase has served its purpose. */
	secret_buf_free(&hibernate_secret);
	secret_buf_free(&tpm_pin_secret);
	hib_key_file_free(&hibernate_key);
	ctl.cfg.opts.secret = NULL; /* it pointed into those buffers */
	ctl.cfg.opts.tpm = NULL;
	hib_snapshot_close(snap);
	if (r == 0 && outcome == HIB_SUSPEND_TEST_WRITTEN)
		r = test_restore(t);
	secret_buf_free(&resume_secret);
	auto_swapoff(t);
	hib_target_close(t);
	user_slice_thaw();
	/* Resumed, failed or cancelled: undo what the hooks did, in reverse. */
	hooks_post(hooks, &hc);
	/* Woken from RAM after suspend-to-both: the snapshot pushed as much out. */
	if (r == 0 && (outcome == HIB_SUSPEND_RESUMED || outcome == HIB_SUSPEND_RAM))
		workset_restore_start();
	free(TAKE_PTR(ctl.ws_rec));
	if (interrupted && outcome != HIB_SUSPEND_RESUMED && outcome != HIB_SUSPEND_RAM)
		return interrupted_exit();
	return hibernate_exit(r, outcome, &st);
}

/* ---- systemd's sleep units: --systemd-sleep ------------------------------- */

static struct hib_sleep_conf sleep_conf;

/* A config key the file or an option set, rather than its default. */
static bool config_key_set(const char *key)
{
	const char *k;

	for (size_t i = 0; (k = hib_config_key(i, NULL)); i++)
		if (strcmp(k, key) == 0)
			return ctl.cfg.source[i] != HIB_SRC_DEFAULT;
	return false;
}

/* sleep.conf, and what it means for the cycle: HibernateMode= is our powerdown
 * unless hibernate.conf or an option chose one (ours wins: it is the tool's
 * own setting, and systemd's default "platform shutdown" is not ours). */
static int sleep_conf_apply(void)
{
	struct hib_error err;
	int r = hib_sleep_conf_load(hib_test_knob("HIBERNATE_SLEEP_CONF_ROOT"), &sleep_conf, &err);

	if (r < 0) {
		say("%s; nothing was done (fix the file: systemd-sleep.conf(5))", err.msg);
		return r;
	}
	if (strcmp(ctl.sleep_op, "hybrid-sleep") == 0)
		ctl.cfg.opts.powerdown = HIB_POWERDOWN_SUSPEND;
	else if (sleep_conf.mode_set && !config_key_set("powerdown"))
		ctl.cfg.opts.powerdown = sleep_conf.powerdown;
	return 0;
}

/* The system-sleep hooks alone ("pre|post OPERATION", @step), as systemd-sleep
 * runs them around a suspend to RAM: ours prepare a hibernation, not this. */
static int sleep_hooks_pre(struct hib_hook_config *hc, struct hib_hooks **hooks, const char *step)
{
	static const char *const none[] = { NULL };
	struct hib_error err;
	char msg[1024];
	int r;

	ctl.sleep_step = step;
	hooks_setup(hc, "suspend");
	hc->dirs = none;
	hc->pmutils = false;
	hc->n_inline = 0;
	hc->force = true; /* systemd-sleep ignores their failures */
	*hooks = NULL;
	if (ctl.no_hooks)
		return 0;
	r = hib_hooks_collect(hc, hooks, &err);
	if (r < 0) {
		say("%s; not suspending", err.msg);
		return r;
	}
	r = hib_hooks_pre(*hooks, hc, msg, sizeof(msg));
	if (r < 0) {
		if (msg[0])
			say("%s", msg);
		hib_hooks_free(*hooks);
		*hooks = NULL;
	}
	return r;
}

/* One of SuspendState='s words into /sys/power/state: the first the kernel takes. */
static int write_sleep_state(void)
{
	char states[sizeof(sleep_conf.suspend_state)], *save = NULL;
	_cleanup_(closep) int fd = open("/sys/power/state", O_WRONLY | O_CLOEXEC);
	int r = -EINVAL;

	if (fd < 0)
		return -errno;
	snprintf(states, sizeof(states), "%s", sleep_conf.suspend_state);
	for (char *w = strtok_r(states, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (write(fd, w, strlen(w)) >= 0)
			return 0;
		r = -errno;
	}
	return r;
}

#define ALARM_SLACK_USEC (5ULL * 1000000)

static uint64_t boottime_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/*
 * Suspend to RAM as systemd-sleep's step @step, woken by the RTC after
 * @delay_usec (0: no alarm). 1 when the alarm woke it (or nearly: the RTC
 * counts whole seconds), 0 when something else did, <0 when it did not sleep.
 */
static int suspend_step(const char *step, uint64_t delay_usec)
{
	struct itimerspec its = { .it_value = { .tv_sec = (time_t)(delay_usec / 1000000),
						.tv_nsec = (long)(delay_usec % 1000000) * 1000 } };
	_cleanup_(closep) int tfd = -1;
	struct hib_hooks *hooks = NULL;
	struct hib_hook_config hc;
	uint64_t deadline = boottime_usec() + delay_usec;
	int r;

	if (delay_usec) {
		tfd = timerfd_create(CLOCK_BOOTTIME_ALARM, TFD_NONBLOCK | TFD_CLOEXEC);
		if (tfd < 0 || timerfd_settime(tfd, 0, &its, NULL) < 0) {
			r = -errno;
			say("no RTC wake alarm (timerfd CLOCK_BOOTTIME_ALARM: %s); not suspending",
			    strerror(-r));
			return r;
		}
	}
	r = sleep_hooks_pre(&hc, &hooks, step);
	if (r < 0)
		return r;
	user_slice_freeze();
	tlog(HIB_LOG_PROGRESS, "suspending to RAM (%s)", step);
	r = interrupted ? -EINTR : write_sleep_state();
	if (r < 0)
		say("suspend to RAM failed: /sys/power/state: %s", strerror(-r));
	else
		tlog(HIB_LOG_PROGRESS, "woke up from RAM");
	user_slice_thaw();
	hooks_post(hooks, &hc);
	if (r < 0 || !delay_usec)
		return r;
	return boottime_usec() + ALARM_SLACK_USEC >= deadline;
}

/* systemd's suspend-then-hibernate: in RAM for HibernateDelaySec=, then our
 * cycle; woken before that by the user, the system stays up. */
static int suspend_then_hibernate(void)
{
	struct hib_target *t = NULL;
	int r, rc;

	/* What would stop the hibernation stops the suspend: refused before either. */
	if (check_sealing_required() < 0 || pick_target(true, &t) < 0) {
		say("suspend-then-hibernate: this system cannot hibernate with hibernate(8), so "
		    "it does not suspend either");
		return EXIT_FAILURE;
	}
	hib_target_close(t);
	tlog(HIB_LOG_PROGRESS, "suspend-then-hibernate: hibernating after %" PRIu64 " s in RAM%s",
	     sleep_conf.hibernate_delay_usec / 1000000,
	     sleep_conf.delay_set ? "" : " (HibernateDelaySec= unset: systemd's default)");
	r = suspend_step("suspend", sleep_conf.hibernate_delay_usec);
	if (r == 0)
		tlog(HIB_LOG_PROGRESS, "woken before the hibernation delay: staying up");
	if (r <= 0 || interrupted)
		return interrupted ? interrupted_exit() : r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
	ctl.sleep_step = "hibernate";
	rc = hibernate_cycle();
	if (rc != EXIT_FAILURE || interrupted)
		return rc;
	/* As systemd-sleep does: a laptop in a bag had better sleep in RAM than stay
	 * on. The unit still fails: the journal says the hibernation did not happen. */
	say("hibernation failed: suspending to RAM again instead");
	suspend_step("suspend-after-failed-hibernate", 0);
	return EXIT_FAILURE;
}

/* Run as systemd-sleep would for the unit's operation, with our cycle for the
 * hibernation; never the kernel's. */
static int systemd_sleep(void)
{
	int rc;

	atexit(user_slice_thaw);
	catch_stop_signals();
	if (sleep_conf_apply() < 0)
		return EXIT_FAILURE;
	if (strcmp(ctl.sleep_op, "suspend-then-hibernate") == 0)
		return suspend_then_hibernate();
	ctl.sleep_step = ctl.sleep_op;
	rc = hibernate_cycle();
	if (rc != EXIT_FAILURE || interrupted || strcmp(ctl.sleep_op, "hybrid-sleep") != 0)
		return rc;
	say("hybrid sleep failed: suspending to RAM instead (no image on disk)");
	suspend_step("suspend-after-failed-hybrid-sleep", 0);
	return EXIT_FAILURE;
}

static int do_hibernate(void)
{
	return ctl.sleep_op ? systemd_sleep() : hibernate_cycle();
}

static void print_location(const char *path, const struct hib_file_location *l)
{
	printf("file: %s (%s, %" PRIu64 " pages in %" PRIu64 " extent%s", path, l->fstype,
	       l->file_pages, l->extents, l->extents == 1 ? "" : "s");
	/* Said, so that nobody "fixes" an fallocated swap file that is fine. */
	if (l->unwritten_pages)
		printf("; %" PRIu64 " unwritten: made with fallocate, which a swap file may be",
		       l->unwritten_pages);
	printf(")\n");
	printf("device: %s\n", l->device);
	if (l->uuid)
		printf("resume=UUID=%s resume_offset=%" PRIu64 "\n", l->uuid, l->offset_pages);
	printf("resume=%s resume_offset=%" PRIu64 "\n", l->device, l->offset_pages);
}

static int do_offset(void)
{
	struct hib_file_location l;
	struct hib_error err;
	int r = hib_file_locate(ctl.args[0], &l, &err);

	if (r < 0) {
		say("%s", err.msg);
		return EXIT_FAILURE;
	}
	print_location(ctl.args[0], &l);
	hib_file_location_free(&l);
	return EXIT_SUCCESS;
}

static int do_prepare(void)
{
	struct hib_error err;
	unsigned long long mb;
	char *end;
	int r;

	errno = 0;
	mb = strtoull(ctl.args[1], &end, 10);
	if (errno || *end || mb == 0 || mb > (1ull << 30) || ctl.args[1][0] == '-')
		bad_usage("prepare-file: '%s' is not a size in MiB", ctl.args[1]);
	r = hib_prepare_file(ctl.args[0], mb << 20, &err);
	if (r < 0) {
		say("%s", err.msg);
		return EXIT_FAILURE;
	}
	tlog(HIB_LOG_PROGRESS, "%s: image file of %llu MiB ready; set device = %s in %s",
	     ctl.args[0], mb, ctl.args[0], HIB_CONFIG_PATH);
	return do_offset();
}

static int do_resume(void)
{
	struct hib_cmdline kc = { 0 };
	struct hib_target *t = NULL;
	struct hib_snapshot *snap = NULL;
	enum hib_sig_state st;
	enum hib_resume_outcome outcome = 0;
	FILE *f;
	int r;

	/* noresume: the user wants a fresh boot; leave the image for swapon to discard. */
	f = fopen("/proc/cmdline", "re");
	if (f) {
		char buf[4096];
		if (fgets(buf, sizeof(buf), f))
			hib_cmdline_parse(buf, &kc);
		fclose(f);
	}
	if (kc.noresume || kc.hibernate_no) {
		/* This boot goes on without the image and will change the filesystems
		 * it remembers: discard it now, so no later boot can resume it. */
		hib_cmdline_free(&kc);
		if (pick_target(true, &t) < 0)
			return EXIT_SUCCESS;
		r = hib_image_invalidate(t);
		if (r > 0)
			tlog(HIB_LOG_WARN, "noresume: the image on %s was discarded",
			     hib_target_path(t));
		else
			tlog(HIB_LOG_INFO, "noresume on the kernel command line: not resuming");
		hib_target_close(t);
		return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
	}
	hib_cmdline_free(&kc);

	r = pick_target(false, &t);
	if (r < 0)
		return r == -ENOENT && !ctl.device && !ctl.cfg.device ? EXIT_SUCCESS : EXIT_FAILURE;
	r = hib_target_probe(t, &st);
	if (r < 0) {
		say("%s: cannot read the swap header: %s", hib_target_path(t), strerror(-r));
		hib_target_close(t);
		return EXIT_FAILURE;
	}
	if (st == HIB_SIG_FOREIGN) {
		/* No image, and the boot goes on: but resume= (or --device) names
		 * something that never could hold one, which the user should hear. */
		tlog(HIB_LOG_WARN,
		     "%s: no image: it is not a swap area or image file%s; "
		     "check resume= and resume_offset=",
		     hib_target_path(t), hib_target_offset_pages(t) ? " at that offset" : "");
		hib_target_close(t);
		return EXIT_SUCCESS;
	}
	if (st != HIB_SIG_IMAGE && st != HIB_SIG_BROKEN &&
	    (st != HIB_SIG_KERNEL || !ctl.cfg.opts.require_encryption)) {
		tlog(HIB_LOG_INFO, "%s: no image (%s)", hib_target_path(t), hib_sig_state_name(st));
		hib_target_close(t);
		return EXIT_SUCCESS;
	}
	/* An image: from here on we may write (to invalidate it). */
	{
		char *path = strdup(hib_target_path(t));
		uint64_t off = hib_target_offset_pages(t);
		hib_target_close(t);
		r = path ? hib_target_open(path, off, true, &t) : -ENOMEM;
		if (r < 0) {
			say("%s: cannot open for writing: %s", path ? path : "?", strerror(-r));
			free(path);
			return EXIT_FAILURE;
		}
		free(path);
	}
	r = snapshot_open(HIB_SNAP_RESUME, &snap);
	ctl.cfg.opts.progress = progress;
	ctl.cfg.opts.ask_secret = ask_secret;
	ctl.cfg.opts.forget_secret = forget_secret;
	ctl.progress_t0 = now_ms();
	/* Without the snapshot device the image cannot be restored: discard it all the same. */
	r = hib_resume(t, r < 0 ? NULL : snap, &ctl.cfg.opts, &outcome, NULL);
	secret_buf_free(&resume_secret);
	hib_key_file_free(&resume_key);
	hib_snapshot_close(snap);
	hib_target_close(t);
	/* An image kept for another kernel is not resumed either. */
	if (r == 0 && outcome == HIB_RESUME_NO_IMAGE)
		return EXIT_SUCCESS;
	say("resume failed; booting normally");
	return EXIT_FAILURE;
}

static void print_config(const char *key, const char *value, enum hib_config_source src, void *ud)
{
	(void)ud;
	printf("  %-15s %-40s (%s)\n", key, value, hib_config_source_name(src));
}

static int do_status(void)
{
	struct hib_target *t = NULL;
	struct hib_image_info info;
	int r;

	r = pick_target(false, &t);
	if (r < 0)
		return EXIT_FAILURE;
	r = hib_image_info(t, &info);
	if (r < 0) {
		say("%s: cannot read: %s", hib_target_path(t), strerror(-r));
		hib_target_close(t);
		return EXIT_FAILURE;
	}
	printf("target: %s\n", hib_target_path(t));
	printf("offset-pages: %" PRIu64 "\n", hib_target_offset_pages(t));
	printf("size-bytes: %" PRIu64 "\n", hib_target_size(t));
	printf("active-swap: %s\n", hib_target_swap_active(t, NULL) == 1 ? "yes" : "no");
	printf("signature: %s\n", hib_sig_state_name(info.state));
	if (info.state == HIB_SIG_IMAGE && info.header_valid) {
		char when[64] = "?";
		time_t c = (time_t)info.created_unix;
		struct tm tm;
		if (gmtime_r(&c, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
		printf("image: present\n");
		printf("image-id: %016" PRIx64 "\n", info.image_id);
		printf("created: %s\n", when);
		printf("kernel: %s %s (%s)\n", info.kernel_release, info.kernel_version,
		       info.machine);
		printf("stream-bytes: %" PRIu64 "\n", info.stream_bytes);
		printf("image-bytes: %" PRIu64 "\n", info.stored_bytes);
		printf("ratio: %.3f\n",
		       info.stream_bytes ? (double)info.stored_bytes / (double)info.stream_bytes
					 : 0.0);
		printf("codec: %s\n", hib_codec_name(info.codec));
		printf("blocks: %u\n", info.nr_blocks);
		printf("extents: %u\n", info.map_extents);
		printf("threads: %u\n", info.threads);
		printf("snapshot-ms: %" PRIu64 "\n", info.snapshot_ms);
		printf("write-ms: %" PRIu64 "\n", info.write_ms);
	} else if (info.state == HIB_SIG_IMAGE || info.state == HIB_SIG_BROKEN) {
		printf("image: damaged\n");
	} else {
		printf("image: none\n");
	}
	printf("config:\n");
	hib_config_dump(&ctl.cfg, print_config, NULL);
	hib_target_close(t);
	return EXIT_SUCCESS;
}

static int do_invalidate(void)
{
	struct hib_target *t = NULL;
	int r;

	r = pick_target(true, &t);
	if (r < 0)
		return EXIT_FAILURE;
	r = hib_image_invalidate(t);
	if (r < 0)
		say("%s: unable to write the signature page: %s", hib_target_path(t), strerror(-r));
	else if (r == 0)
		tlog(HIB_LOG_PROGRESS, "%s: no image to invalidate", hib_target_path(t));
	else
		tlog(HIB_LOG_PROGRESS, "%s: image discarded, swap signature restored",
		     hib_target_path(t));
	hib_target_close(t);
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

#define CONFIG_USAGE "config: get KEY, dump or check"

/* The one reading of the config file: the shell integration asks here instead of
 * parsing it, so a quoted value or a stray '#' means to it what it means to us.
 * load_config() has refused a file with an error already, naming its line. */
static int do_config(void)
{
	const char *action = ctl.args[0], *key = ctl.args[1], *name;
	const char *path = ctl.config_path ? ctl.config_path : HIB_CONFIG_PATH;
	char value[8192];
	int r = 0;

	if (strcmp(action, "check") == 0 && !key) {
		printf("%s: %s\n", path,
		       access(path, F_OK) == 0 ? "valid" : "absent: every key has its default");
	} else if (strcmp(action, "get") == 0 && key) {
		r = hib_config_get(&ctl.cfg, key, value, sizeof(value));
		if (r == -ENOKEY)
			bad_usage("config get: unknown key '%s' (hibernate.conf(5) lists them)",
				  key);
		if (r == 0)
			printf("%s\n", value);
	} else if (strcmp(action, "dump") == 0 && !key) {
		for (size_t i = 0; r == 0 && (name = hib_config_key(i, NULL)); i++) {
			key = name;
			r = hib_config_get(&ctl.cfg, key, value, sizeof(value));
			if (r == 0)
				printf("%s = %s\n", key, value);
		}
		for (size_t i = 0; r == 0 && i < ctl.cfg.n_inline; i++) {
			const struct hib_inline_hook *h = &ctl.cfg.inl[i];

			printf("%s %02d %s\n", h->pre_cmd ? "OnSuspend" : "OnResume", h->order,
			       h->pre_cmd ? h->pre_cmd : h->post_cmd);
		}
	} else {
		bad_usage(CONFIG_USAGE);
	}
	if (r < 0) {
		say("%s: %s: the value is longer than %zu bytes; shorten it", path, key,
		    sizeof(value) - 1);
		return EXIT_FAILURE;
	}
	return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* ---- the command line: one table of commands, one of options ------------ */

struct cli_command {
	const char *name;
	const char *args;      /* what follows the name in usage */
	unsigned nargs;        /* it takes this many arguments */
	unsigned nargs_min;    /* or as few as this many */
	const char *nargs_msg; /* said when it gets another number */
	int (*run)(void);
	bool kmsg; /* a cycle: its messages belong in the kernel log too */
	const char *help;
};

static const struct cli_command commands[] = {
	[CMD_HIBERNATE] = { "hibernate", "[options]", 0, 0, NULL, do_hibernate, true,
			    "save the system to disk and power off" },
	[CMD_RESUME] = { "resume", "[options]", 0, 0, NULL, do_resume, true,
			 "load and restore an image (initramfs)" },
	[CMD_STATUS] = { "status", "[options]", 0, 0, NULL, do_status, false,
			 "show the target and its image" },
	[CMD_INVALIDATE] = { "invalidate", "[options]", 0, 0, NULL, do_invalidate, false,
			     "discard an image, keep the swap area" },
	[CMD_DOCTOR] = { "doctor", "[options]", 0, 0, NULL, do_doctor, false,
			 "can this machine hibernate? what to fix" },
	[CMD_LOGIND] = { "logind-setup", "[options]", 0, 0, NULL, do_logind_setup, false,
			 "tell logind whether doctor passes (boot unit)" },
	[CMD_OFFSET] = { "offset", "FILE", 1, 1, "offset: name one FILE", do_offset, false,
			 "kernel parameters that locate FILE" },
	[CMD_PREPARE] = { "prepare-file", "FILE MB", 2, 2,
			  "prepare-file: name FILE and SIZE in MiB", do_prepare, false,
			  "make FILE an image file of MB MiB (no swap)" },
	[CMD_CONFIG] = { "config", "ACTION [KEY]", 2, 1, CONFIG_USAGE, do_config, false,
			 "get KEY: one key's effective value, for scripts;\n"
			 "dump: every key's; check: is the file valid?" },
};

/*
 * An option stands for a config key (hib_config_set, after the file is read:
 * the argument, or @value for a flag), unless one of @str, @set and @handle
 * takes it at once: --device and --offset stay apart from the file's keys and
 * win over them where the target is picked. An option with no key says why
 * the file has no such setting; test-cli holds both tables to config.c's keys.
 */
struct cli_option {
	const char *name; /* --name */
	char flag;        /* -f, or 0 */
	const char *arg;  /* its argument, as usage names it; NULL: none */
	const char *key;
	const char *value;
	const char **str;                /* at once: the argument goes here */
	bool *set;                       /* at once: this becomes true */
	void (*handle)(const char *arg); /* at once: this runs */
	const char *help;                /* usage, '\n' between lines; NULL: not shown */
	const char *why;                 /* no key: why not */
};

static void opt_offset(const char *arg)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (errno || *end || !*arg || *arg == '-')
		bad_usage("--offset: '%s' is not a page number", arg);
	ctl.offset = v;
	ctl.offset_set = true;
}

static void opt_verbose(const char *arg)
{
	(void)arg;
	if (ctl.loglevel < HIB_LOG_DEBUG)
		ctl.loglevel++;
	ctl.loglevel_set = true;
}

static void opt_quiet(const char *arg)
{
	(void)arg;
	ctl.loglevel = HIB_LOG_ERR;
	ctl.loglevel_set = true;
}

static void opt_systemd_sleep(const char *arg)
{
	static const char *const ops[] = { "hibernate", "hybrid-sleep", "suspend-then-hibernate" };

	for (size_t i = 0; i < ARRAY_SIZE(ops); i++)
		if (strcmp(arg, ops[i]) == 0) {
			ctl.sleep_op = ops[i];
			return;
		}
	bad_usage("--systemd-sleep: '%s' is none of hibernate, hybrid-sleep, "
		  "suspend-then-hibernate",
		  arg);
}

static void opt_help(const char *arg);
static void opt_version(const char *arg);
static void opt_tables(const char *arg);

#define PRINTS_AND_EXITS "prints and exits"
#define ONE_RUN "one run's choice, never a standing setting"

static const struct cli_option options[] = {
	{ "device", 'd', "DEV", "device", .str = &ctl.device,
	  .help = "target: /dev/…, UUID=…, LABEL=…, PARTUUID=…, MAJ:MIN" },
	{ "offset", 'o', "PAGES", "offset", .handle = opt_offset,
	  .help = "page of the swap header inside DEV (resume_offset=)" },
	{ "compress", 'c', "CODEC", "compress", .help = "none, lz4 (default) or zstd[:LEVEL]" },
	{ "threads", 't', "N", "threads", .help = "codec threads (default: one per CPU)" },
	{ "image-size", 0, "MB", "image-size", .help = "preferred image size in MiB, or 'min'" },
	{ "powerdown", 0, "MODE", "powerdown",
	  .help = "shutdown (default), platform, reboot or suspend\n"
		  "(suspend: sleep in RAM, resume from disk if power is lost)" },
	{ "test", 0, NULL, NULL, .set = &ctl.test_cycle,
	  .help = "write the image, then restore it at once: no power-off",
	  .why = "a dry run: " ONE_RUN },
	{ "verify", 0, NULL, "verify", "yes",
	  .help = "read the image back and check it before powering off" },
	{ "no-adaptive", 0, NULL, "adaptive", "no",
	  .help = "compress every block, even while the disk waits" },
	{ "io", 0, "MODE", "io",
	  .help = "auto (io_uring where the kernel has it) or sync (pread/pwrite)" },
	{ "no-cancel", 0, NULL, "cancel", "no",
	  .help = "Esc does not cancel while the image is written" },
	{ "auto-swapon", 0, NULL, "auto-swapon", "yes",
	  .help = "turn the swap area on for the cycle if it is off,\n"
		  "and off again after" },
	{ "encrypt", 0, NULL, "encrypt", "yes",
	  .help = "encrypt the image: asks for a passphrase (Argon2id),\n"
		  "or uses --key-file; resume asks for it again" },
	{ "key-file", 0, "FILE", "key-file", .help = "the key file for --encrypt and for resume" },
	{ "require-encryption", 0, NULL, "require-encryption", "yes",
	  .help = "resume only images sealed with the configured kind of key\n"
		  "(the default when encrypt or key-file is set)" },
	{ "no-require-encryption", 0, NULL, "require-encryption", "no",
	  .help = "resume images that are not encrypted too" },
	{ "tpm", 0, NULL, "encrypt", "tpm",
	  .help = "encrypt the image with a key sealed to the TPM 2.0:\n"
		  "resume unseals it with no question while the PCRs hold" },
	{ "tpm-pcrs", 0, "LIST", "tpm-pcrs",
	  .help = "PCRs the key is sealed to: auto (those of 0-7 the\n"
		  "SHA-256 bank has) or a list like 0,2,4-7" },
	{ "tpm-pin", 0, NULL, "tpm-pin", "yes",
	  .help = "--tpm also asks for a PIN, and resume too" },
	{ "tpm-fallback", 0, "MODE", "tpm-fallback",
	  .help = "none, or passphrase: the image also opens with one\n"
		  "(asked at resume when the PCRs changed)" },
	{ "force", 0, NULL, "force", "yes", .help = "a failing hook does not abort the cycle" },
	{ "no-hooks", 0, NULL, NULL, .set = &ctl.no_hooks,
	  .help = "run no hooks (see hibernate-hooks(7))",
	  .why = "no hooks at all: " ONE_RUN " (the file sets each hook's own key)" },
	{ "systemd-sleep", 0, "OPERATION", NULL, .handle = opt_systemd_sleep,
	  .help = "do what systemd-sleep does for OPERATION, with this\n"
		  "cycle: hibernate, hybrid-sleep (--powerdown suspend) or\n"
		  "suspend-then-hibernate (RAM, then disk after\n"
		  "sleep.conf's HibernateDelaySec=); the units' drop-ins",
	  .why = "which systemd sleep unit runs us: " ONE_RUN },
	{ "loglevel", 0, "N", "loglevel",
	  .help = "0 silent, 1 errors, 2 warnings, 3 progress (default),\n"
		  "4 info, 5 debug; messages also go to the kernel log" },
	{ "config", 0, "FILE", NULL, .str = &ctl.config_path,
	  .help = "configuration file (default " HIB_CONFIG_PATH ")",
	  .why = "names the file the keys are read from" },
	{ "snapshot-device", 0, "FILE", NULL, .str = &ctl.snapshot_path,
	  .why = "tests only: a snapshot device that is not the kernel's" },
	{ "verbose", 'v', NULL, NULL, .handle = opt_verbose,
	  .help = "more messages (repeat for debug)", .why = "loglevel one step up: " ONE_RUN },
	{ "quiet", 'q', NULL, NULL, .handle = opt_quiet, .help = "errors only",
	  .why = "loglevel 1: " ONE_RUN },
	{ "help", 'h', NULL, NULL, .handle = opt_help, .help = "this text",
	  .why = PRINTS_AND_EXITS },
	{ "version", 'V', NULL, NULL, .handle = opt_version, .help = "the version",
	  .why = PRINTS_AND_EXITS },
	{ "cli-tables", 0, NULL, NULL, .handle = opt_tables,
	  .why = "for tests/check-man and test-cli: " PRINTS_AND_EXITS },
};

/* The file's keys that no option sets, and why; a shipped hook's setting needs none. */
static const struct {
	const char *key, *why;
} keys_without_option[] = {
	{ "kernel-mismatch", "what resume does with another kernel's image: resume reads it "
			     "from the file the initramfs carries" },
	{ "zram", "what a cycle does with zram swap beside the target: the system's setup, "
		  "not one run's" },
	{ "restore-working-set", "what happens after resume, in the background: the system's "
				 "setup, not one run's" },
	{ "restore-limit", "how long the restore after resume may take: the system's setup, "
			   "not one run's" },
	{ "systemd-hooks", "which hooks join the cycle: the system's setup, not one run's" },
	{ "pm-utils-hooks", "which hooks join the cycle: the system's setup, not one run's" },
	{ "hook-timeout", "how long a hook may take: the system's setup, not one run's" },
	{ "kdf-passes", "the passphrase's Argon2id cost: the system's setup, not one run's" },
	{ "kdf-memory", "the passphrase's Argon2id memory: the system's setup, sized for the "
			"initramfs that resumes" },
};

#define HOOK_SETTING_WHY "a shipped hook's setting: the hooks get it in their environment"

static const struct cli_option *option_for_key(const char *key)
{
	for (size_t i = 0; i < ARRAY_SIZE(options); i++)
		if (options[i].key && strcmp(options[i].key, key) == 0)
			return &options[i];
	return NULL;
}

static const char *key_why(const char *key, const char *hook_env)
{
	if (hook_env)
		return HOOK_SETTING_WHY;
	for (size_t i = 0; i < ARRAY_SIZE(keys_without_option); i++)
		if (strcmp(keys_without_option[i].key, key) == 0)
			return keys_without_option[i].why;
	return "";
}

/* " LEFT  help", the help's further lines under its first. */
static void usage_line(int width, const char *left, const char *help)
{
	const char *nl;

	printf(" %-*s ", width, left);
	for (; (nl = strchr(help, '\n')); help = nl + 1)
		printf("%.*s\n%*s", (int)(nl - help), help, width + 2, "");
	printf("%s\n", help);
}

static void __attribute__((noreturn)) usage(void)
{
	char left[64];

	printf("Usage:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		const struct cli_command *c = &commands[i];

		if (i == CMD_HIBERNATE)
			snprintf(left, sizeof(left), "hibernate %s", c->args);
		else
			snprintf(left, sizeof(left), "hibernate %s %s", c->name, c->args);
		usage_line(32, left, c->help);
	}
	printf("\nOptions:\n");
	for (size_t i = 0; i < ARRAY_SIZE(options); i++) {
		const struct cli_option *o = &options[i];

		if (!o->help)
			continue;
		snprintf(left, sizeof(left), "%c%c%c --%s%s%s", o->flag ? '-' : ' ',
			 o->flag ? o->flag : ' ', o->flag ? ',' : ' ', o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
		usage_line(22, left, o->help);
	}
	printf("\n"
	       "Without --device the target is, in order: 'device' in the config file, the\n"
	       "kernel's resume= and resume_offset=, the only active swap partition.\n"
	       "DEV may be a swap file or an image file (prepare-file): hibernate writes to\n"
	       "the blocks under it, and resume finds it by resume= and resume_offset=.\n"
	       "Exit status: 0 done (or resumed), 1 failed, 2 bad usage, 3 cancelled.\n"
	       "See hibernate(8).\n");
	exit(EXIT_SUCCESS);
}

static void opt_help(const char *arg)
{
	(void)arg;
	usage();
}

static void opt_version(const char *arg)
{
	(void)arg;
	printf("hibernate %s\n", hib_version());
	exit(EXIT_SUCCESS);
}

/* Tab-separated, '-' for none:
 *   command NAME ARGS
 *   option --NAME -F|- ARG KEY shown|hidden now|file WHY   (file: set after the file is read)
 *   key NAME --OPTION|- WHY
 *   stats SIDE KEY */
static void opt_tables(const char *arg)
{
	const char *key, *env;

	(void)arg;
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		printf("command\t%s\t%s\n", commands[i].name, commands[i].args);
	for (size_t i = 0; i < ARRAY_SIZE(options); i++) {
		const struct cli_option *o = &options[i];

		printf("option\t--%s\t%s%c\t%s\t%s\t%s\t%s\t%s\n", o->name, o->flag ? "-" : "",
		       o->flag ? o->flag : '-', o->arg ? o->arg : "-", o->key ? o->key : "-",
		       o->help ? "shown" : "hidden", o->str || o->set || o->handle ? "now" : "file",
		       o->why ? o->why : "");
	}
	for (size_t i = 0; (key = hib_config_key(i, &env)); i++) {
		const struct cli_option *o = option_for_key(key);

		printf("key\t%s\t%s%s\t%s\n", key, o ? "--" : "-", o ? o->name : "",
		       o ? "" : key_why(key, env));
	}
	for (int side = HIB_STATS_HIBERNATE; side <= HIB_STATS_RESUMED; side++)
		for (size_t i = 0; (key = hib_stats_key(side, i)); i++)
			printf("stats\t%s\t%s\n", hib_stats_side_name(side), key);
	exit(EXIT_SUCCESS);
}

/* getopt_long's code for options[i]: its flag, or this plus i. */
#define OPT_LONG_ONLY 256

static const struct cli_option *option_of(int c)
{
	if (c >= OPT_LONG_ONLY && (size_t)(c - OPT_LONG_ONLY) < ARRAY_SIZE(options))
		return &options[c - OPT_LONG_ONLY];
	for (size_t i = 0; i < ARRAY_SIZE(options); i++)
		if (options[i].flag && options[i].flag == c)
			return &options[i];
	return NULL;
}

/* Options taken at once are; the others wait in @given for the config file. */
static void parse_options(int argc, char **argv, const char **given)
{
	struct option longopts[ARRAY_SIZE(options) + 1] = { 0 };
	char shorts[2 * ARRAY_SIZE(options) + 1], *sp = shorts;
	int c;

	for (size_t i = 0; i < ARRAY_SIZE(options); i++) {
		const struct cli_option *o = &options[i];

		longopts[i] = (struct option){ o->name, o->arg ? required_argument : no_argument,
					       NULL, o->flag ? o->flag : OPT_LONG_ONLY + (int)i };
		if (o->flag) {
			*sp++ = o->flag;
			if (o->arg)
				*sp++ = ':';
		}
	}
	*sp = 0;
	while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
		const struct cli_option *o = option_of(c);

		if (!o)
			bad_usage("unknown or incomplete option");
		if (o->str)
			*o->str = optarg;
		else if (o->set)
			*o->set = true;
		else if (o->handle)
			o->handle(optarg);
		else
			given[o - options] = o->arg ? optarg : o->value;
	}
}

static void parse_command(int argc, char **argv)
{
	const struct cli_command *cmd;

	if (optind < argc) {
		const char *word = argv[optind++];
		size_t i = 0;

		while (i < ARRAY_SIZE(commands) && strcmp(word, commands[i].name) != 0)
			i++;
		if (i == ARRAY_SIZE(commands))
			bad_usage("unknown command '%s'", word);
		ctl.cmd = (enum command)i;
	}
	cmd = &commands[ctl.cmd];
	if (cmd->nargs) {
		unsigned n = (unsigned)(argc - optind);

		if (n < cmd->nargs_min || n > cmd->nargs)
			bad_usage("%s", cmd->nargs_msg);
		for (unsigned k = 0; k < n; k++)
			ctl.args[k] = argv[optind++];
	}
	if (optind < argc)
		bad_usage("unexpected argument '%s'", argv[optind]);
}

static void load_config(void)
{
	const char *path = ctl.config_path ? ctl.config_path : HIB_CONFIG_PATH;
	struct hib_error trust;
	char err[256];
	unsigned line = 0;
	int r;

	hib_config_init(&ctl.cfg);
	/* Root obeys the file (OnSuspend lines run as root): only root may write it. */
	r = hib_path_trusted(path, &trust);
	if (r < 0 && r != -ENOENT) {
		fprintf(stderr, "hibernate: %s\n", trust.msg);
		exit(EXIT_FAILURE);
	}
	r = hib_config_load(&ctl.cfg, path, &line, err, sizeof(err));
	if (r == -ENOENT && !ctl.config_path)
		r = 0; /* no config file is fine, unless one was named */
	if (r < 0) {
		if (line)
			fprintf(stderr, "hibernate: %s:%u: %s\n", path, line, err);
		else
			fprintf(stderr, "hibernate: %s: %s\n", path, strerror(-r));
		exit(EXIT_FAILURE);
	}
}

/* The options that wait for the file, on top of it. */
static void apply_options(const char *const *given)
{
	bool loglevel = false;
	char err[256];

	for (size_t i = 0; i < ARRAY_SIZE(options); i++) {
		if (!given[i])
			continue;
		if (hib_config_set(&ctl.cfg, options[i].key, given[i], err, sizeof(err)) < 0)
			bad_usage("--%s", err);
		loglevel |= strcmp(options[i].key, "loglevel") == 0;
	}
	/* --loglevel wins over -v and -q, the file's loglevel only when none is given. */
	if (ctl.cfg.loglevel >= 0 && (loglevel || !ctl.loglevel_set))
		ctl.loglevel = ctl.cfg.loglevel;
}

static void parse_args(int argc, char **argv)
{
	const char *given[ARRAY_SIZE(options)] = { 0 };

	parse_options(argc, argv, given);
	parse_command(argc, argv);
	load_config();
	apply_options(given);
	ctl.cfg.opts.stats = log_stats;
	ctl.cfg.opts.require_encryption = hib_config_require(&ctl.cfg);
}

int main(int argc, char **argv)
{
	int r;

	hib_set_log(log_to_stderr, NULL);
	ctl.progress_last_pct = -1;
	ctl.progress_tty = isatty(STDERR_FILENO);
	ctl.kmsg_fd = -1;
	ctl.run_lock_fd = -1;
	parse_args(argc, argv);
	/* The cycle's messages belong in the kernel log; queries need not go there. */
	if (commands[ctl.cmd].kmsg)
		ctl.kmsg_fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC | O_NOCTTY);
	r = commands[ctl.cmd].run();
	if (ctl.kmsg_fd >= 0)
		close(ctl.kmsg_fd);
	hib_config_free(&ctl.cfg);
	return r;
}
