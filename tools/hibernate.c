// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hibernate — save the running system to disk and power off; bring it back.
 *
 *   hibernate [options]              hibernate now
 *   hibernate resume [options]       initramfs: load an image if there is one
 *   hibernate status [options]       what the target holds
 *   hibernate invalidate [options]   discard an image, restoring the swap area
 *   hibernate offset FILE            resume= and resume_offset= for a file
 *   hibernate prepare-file FILE SIZE make a plain image file (no swap needed)
 *
 * This file owns the terminal and the exit codes; libhibernate does the work.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "frontend/config.h"
#include "frontend/doctor.h"
#include "hibernate.h"
#include "frontend/hooks.h"

#define EXIT_USAGE 2
#define EXIT_CANCELLED 3 /* the user pressed Esc: nothing happened */
#define MIN_INT(a, b) ((a) < (b) ? (a) : (b))

enum command {
	CMD_HIBERNATE,
	CMD_RESUME,
	CMD_STATUS,
	CMD_INVALIDATE,
	CMD_OFFSET,
	CMD_PREPARE,
	CMD_DOCTOR,
};

struct control {
	enum command cmd;
	int loglevel;
	const char *config_path;
	const char *device;        /* --device */
	uint64_t offset;           /* --offset */
	bool offset_set;
	const char *snapshot_path; /* --snapshot-device (tests) */
	struct hib_config cfg;     /* file, then options on top */
	bool progress_tty;
	uint64_t progress_t0;
	int progress_last_pct;
	bool loglevel_set;         /* -v, -q or --loglevel given */
	bool test_cycle;           /* --test */
	bool no_cancel;            /* --no-cancel */
	bool cancel_armed;         /* Esc on the console cancels now */
	bool no_hooks;             /* --no-hooks */
	int kmsg_fd;               /* messages also go to the kernel log */
	const char *args[2];       /* FILE [SIZE] of offset / prepare-file */
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
static void __attribute__((format(printf, 2, 3))) tlog(enum hib_loglevel level, const char *fmt, ...)
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

static void __attribute__((noreturn)) usage(void)
{
	printf("Usage:\n"
	       " hibernate [options]              save the system to disk and power off\n"
	       " hibernate resume [options]       load and restore an image (initramfs)\n"
	       " hibernate status [options]       show the target and its image\n"
	       " hibernate invalidate [options]   discard an image, keep the swap area\n"
	       " hibernate doctor [options]       can this machine hibernate? what to fix\n"
	       " hibernate offset FILE            kernel parameters that locate FILE\n"
	       " hibernate prepare-file FILE MB   make FILE an image file of MB MiB (no swap)\n"
	       "\n"
	       "Options:\n"
	       " -d, --device DEV       target: /dev/…, UUID=…, LABEL=…, PARTUUID=…, MAJ:MIN\n"
	       " -o, --offset PAGES     page of the swap header inside DEV (resume_offset=)\n"
	       " -c, --compress CODEC   none, lz4 (default) or zstd[:LEVEL]\n"
	       " -t, --threads N        codec threads (default: one per CPU)\n"
	       "     --image-size MB    preferred image size in MiB, or 'min'\n"
	       "     --powerdown MODE   shutdown (default), platform, reboot or suspend\n"
	       "                        (suspend: sleep in RAM, resume from disk if power is lost)\n"
	       "     --test             write the image, then restore it at once: no power-off\n"
	       "     --verify           read the image back and check it before powering off\n"
	       "     --no-adaptive      compress every block, even while the disk waits\n"
	       "     --no-cancel        Esc does not cancel while the image is written\n"
	       "     --encrypt          encrypt the image: asks for a passphrase (Argon2id),\n"
	       "                        or uses --key-file; resume asks for it again\n"
	       "     --key-file FILE    the key file for --encrypt and for resume\n"
	       "     --force            a failing hook does not abort the cycle\n"
	       "     --no-hooks         run no hooks (see hibernate-hooks(7))\n"
	       "     --loglevel N       0 silent, 1 errors, 2 warnings, 3 progress (default),\n"
	       "                        4 info, 5 debug; messages also go to the kernel log\n"
	       "     --config FILE      configuration file (default " HIB_CONFIG_PATH ")\n"
	       " -v, --verbose          more messages (repeat for debug)\n"
	       " -q, --quiet            errors only\n"
	       " -h, --help             this text\n"
	       " -V, --version          the version\n"
	       "\n"
	       "Without --device the target is, in order: 'device' in the config file, the\n"
	       "kernel's resume= and resume_offset=, the only active swap partition.\n"
	       "DEV may be a swap file or an image file (prepare-file): hibernate writes to\n"
	       "the blocks under it, and resume finds it by resume= and resume_offset=.\n"
	       "Exit status: 0 done (or resumed), 1 failed, 2 bad usage, 3 cancelled.\n"
	       "See hibernate(8).\n");
	exit(EXIT_SUCCESS);
}

static void __attribute__((noreturn)) bad_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("hibernate: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'hibernate --help' for more information.\n", stderr);
	exit(EXIT_USAGE);
}

static void set_option(const char *key, const char *value)
{
	char err[256];

	if (hib_config_set(&ctl.cfg, key, value, err, sizeof(err)) < 0)
		bad_usage("--%s", err);
}

static void parse_args(int argc, char **argv)
{
	enum {
		OPT_IMAGE_SIZE = 256,
		OPT_POWERDOWN,
		OPT_CONFIG,
		OPT_SNAPSHOT,
		OPT_TEST,
		OPT_VERIFY,
		OPT_NO_CANCEL,
		OPT_LOGLEVEL,
		OPT_AUTO_SWAPON,
		OPT_ENCRYPT,
		OPT_KEY_FILE,
		OPT_FORCE,
		OPT_NO_HOOKS,
		OPT_NO_ADAPTIVE,
	};
	static const struct option longopts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "offset", required_argument, NULL, 'o' },
		{ "compress", required_argument, NULL, 'c' },
		{ "threads", required_argument, NULL, 't' },
		{ "image-size", required_argument, NULL, OPT_IMAGE_SIZE },
		{ "powerdown", required_argument, NULL, OPT_POWERDOWN },
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "snapshot-device", required_argument, NULL, OPT_SNAPSHOT },
		{ "test", no_argument, NULL, OPT_TEST },
		{ "verify", no_argument, NULL, OPT_VERIFY },
		{ "no-cancel", no_argument, NULL, OPT_NO_CANCEL },
		{ "loglevel", required_argument, NULL, OPT_LOGLEVEL },
		{ "auto-swapon", no_argument, NULL, OPT_AUTO_SWAPON },
		{ "encrypt", no_argument, NULL, OPT_ENCRYPT },
		{ "key-file", required_argument, NULL, OPT_KEY_FILE },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "no-hooks", no_argument, NULL, OPT_NO_HOOKS },
		{ "no-adaptive", no_argument, NULL, OPT_NO_ADAPTIVE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	/* Options are applied after the config file, so collect them first. */
	const char *compress = NULL, *threads = NULL, *image_size = NULL, *powerdown = NULL;
	const char *loglevel = NULL;
	bool verify = false, auto_swapon = false, encrypt = false, force = false, no_adaptive = false;
	const char *key_file = NULL;
	char err[256];
	unsigned line = 0;
	int c, r;

	while ((c = getopt_long(argc, argv, "d:o:c:t:vqhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			ctl.device = optarg;
			break;
		case 'o': {
			char *end;
			errno = 0;
			unsigned long long v = strtoull(optarg, &end, 0);
			if (errno || *end || !*optarg || *optarg == '-')
				bad_usage("--offset: '%s' is not a page number", optarg);
			ctl.offset = v;
			ctl.offset_set = true;
			break;
		}
		case 'c':
			compress = optarg;
			break;
		case 't':
			threads = optarg;
			break;
		case OPT_IMAGE_SIZE:
			image_size = optarg;
			break;
		case OPT_POWERDOWN:
			powerdown = optarg;
			break;
		case OPT_CONFIG:
			ctl.config_path = optarg;
			break;
		case OPT_SNAPSHOT:
			ctl.snapshot_path = optarg;
			break;
		case OPT_TEST:
			ctl.test_cycle = true;
			break;
		case OPT_VERIFY:
			verify = true;
			break;
		case OPT_NO_CANCEL:
			ctl.no_cancel = true;
			break;
		case OPT_AUTO_SWAPON:
			auto_swapon = true;
			break;
		case OPT_NO_ADAPTIVE:
			no_adaptive = true;
			break;
		case OPT_LOGLEVEL:
			loglevel = optarg;
			break;
		case OPT_ENCRYPT:
			encrypt = true;
			break;
		case OPT_KEY_FILE:
			key_file = optarg;
			break;
		case OPT_FORCE:
			force = true;
			break;
		case OPT_NO_HOOKS:
			ctl.no_hooks = true;
			break;
		case 'v':
			if (ctl.loglevel < HIB_LOG_DEBUG)
				ctl.loglevel++;
			ctl.loglevel_set = true;
			break;
		case 'q':
			ctl.loglevel = HIB_LOG_ERR;
			ctl.loglevel_set = true;
			break;
		case 'h':
			usage();
		case 'V':
			printf("hibernate %s\n", hib_version());
			exit(EXIT_SUCCESS);
		default:
			bad_usage("unknown or incomplete option");
		}
	}
	if (optind < argc) {
		const char *cmd = argv[optind++];
		if (strcmp(cmd, "resume") == 0)
			ctl.cmd = CMD_RESUME;
		else if (strcmp(cmd, "status") == 0)
			ctl.cmd = CMD_STATUS;
		else if (strcmp(cmd, "invalidate") == 0)
			ctl.cmd = CMD_INVALIDATE;
		else if (strcmp(cmd, "hibernate") == 0)
			ctl.cmd = CMD_HIBERNATE;
		else if (strcmp(cmd, "offset") == 0)
			ctl.cmd = CMD_OFFSET;
		else if (strcmp(cmd, "prepare-file") == 0)
			ctl.cmd = CMD_PREPARE;
		else if (strcmp(cmd, "doctor") == 0)
			ctl.cmd = CMD_DOCTOR;
		else
			bad_usage("unknown command '%s'", cmd);
	}
	if (ctl.cmd == CMD_OFFSET || ctl.cmd == CMD_PREPARE) {
		int want = ctl.cmd == CMD_OFFSET ? 1 : 2;
		if (argc - optind != want)
			bad_usage(ctl.cmd == CMD_OFFSET ? "offset: name one FILE"
							 : "prepare-file: name FILE and SIZE in MiB");
		ctl.args[0] = argv[optind];
		ctl.args[1] = want == 2 ? argv[optind + 1] : NULL;
		optind += want;
	}
	if (optind < argc)
		bad_usage("unexpected argument '%s'", argv[optind]);

	hib_config_init(&ctl.cfg);
	r = hib_config_load(&ctl.cfg, ctl.config_path ? ctl.config_path : HIB_CONFIG_PATH, &line,
			    err, sizeof(err));
	if (r == -ENOENT && !ctl.config_path)
		r = 0; /* no config file is fine, unless one was named */
	if (r < 0) {
		const char *p = ctl.config_path ? ctl.config_path : HIB_CONFIG_PATH;
		if (line)
			fprintf(stderr, "hibernate: %s:%u: %s\n", p, line, err);
		else
			fprintf(stderr, "hibernate: %s: %s\n", p, strerror(-r));
		exit(EXIT_FAILURE);
	}
	if (compress)
		set_option("compress", compress);
	if (threads)
		set_option("threads", threads);
	if (image_size)
		set_option("image-size", image_size);
	if (powerdown)
		set_option("powerdown", powerdown);
	if (verify)
		set_option("verify", "yes");
	if (auto_swapon)
		set_option("auto-swapon", "yes");
	if (no_adaptive)
		set_option("adaptive", "no");
	if (ctl.no_cancel)
		set_option("cancel", "no");
	if (encrypt)
		set_option("encrypt", "yes");
	if (force)
		set_option("force", "yes");
	if (key_file)
		set_option("key-file", key_file);
	if (loglevel) {
		set_option("loglevel", loglevel);
		ctl.loglevel = ctl.cfg.loglevel;
	} else if (!ctl.loglevel_set && ctl.cfg.loglevel >= 0) {
		ctl.loglevel = ctl.cfg.loglevel;
	}
}

/* --device, then the config file, then the kernel command line and /proc/swaps. */
static int pick_target(bool writable, struct hib_target **ret)
{
	const char *spec = ctl.device ? ctl.device : ctl.cfg.device;
	uint64_t offset = ctl.offset_set ? ctl.offset : ctl.cfg.offset;
	char *guessed = NULL;
	int r;

	if (!spec) {
		uint64_t off = 0;
		r = hib_target_guess(NULL, NULL, &guessed, &off);
		if (r == -ENOTUNIQ) {
			say("several swap areas are active and none is configured: name one with "
			    "--device, 'device =' in %s, or resume= on the kernel command line",
			    HIB_CONFIG_PATH);
			return r;
		}
		if (r < 0) {
			say("no target: no --device, no 'device =' in %s, no resume= on the kernel "
			    "command line, and no active swap partition",
			    HIB_CONFIG_PATH);
			return r;
		}
		spec = guessed;
		if (!ctl.offset_set && !ctl.cfg.offset_set)
			offset = off;
	}
	/* A swap file or image file: hibernate writes to the blocks under it. Reading
	 * (status) and invalidating go through the filesystem, which is right then. */
	if (ctl.cmd == CMD_HIBERNATE && !ctl.offset_set) {
		struct stat st;
		if (stat(spec, &st) == 0 && S_ISREG(st.st_mode)) {
			char why[512];
			r = hib_target_open_file(spec, writable, ret, why, sizeof(why));
			if (r < 0)
				say("%s: cannot be a hibernation target: %s", spec, why);
			free(guessed);
			return r;
		}
	}
	r = hib_target_open(spec, offset, writable, ret);
	if (r < 0) {
		switch (r) {
		case -ENOENT:
			say("%s: no such device", spec);
			break;
		case -ENODEV:
			say("%s: not a block device or regular file", spec);
			break;
		case -EINVAL:
			say("%s: not a device: use a /dev path, UUID=, LABEL=, PARTUUID=, MAJ:MIN "
			    "or the kernel's hex device number",
			    spec);
			break;
		case -ERANGE:
			say("%s: offset %" PRIu64 " pages lies beyond the end of the device", spec,
			    offset);
			break;
		default:
			say("%s: cannot open: %s", spec, strerror(-r));
		}
	}
	free(guessed);
	return r;
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

static int read_key_file(const char *path, struct secret_buf *b)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0) {
		say("%s: cannot open the key file: %s", path, strerror(errno));
		return -errno;
	}
	n = read(fd, b->data, sizeof(b->data));
	close(fd);
	if (n <= 0) {
		say("%s: the key file is empty or unreadable", path);
		return -EINVAL;
	}
	b->len = (size_t)n;
	return 0;
}

/* A line from the console with echo off; from stdin as it is when not a terminal. */
static int read_passphrase(const char *prompt, struct secret_buf *b)
{
	struct termios tio, old;
	bool tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &old) == 0;
	size_t n = 0;
	char c;

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

static struct secret_buf resume_secret, hibernate_secret;

static int ask_secret(int attempt, const char *what, struct hib_secret *ret, void *ud)
{
	char prompt[256];
	int r;

	(void)ud;
	if (ctl.cfg.key_file) {
		/* A key file does not get better by asking again. */
		if (attempt > 1)
			return -EACCES;
		r = read_key_file(ctl.cfg.key_file, &resume_secret);
		if (r < 0)
			return r;
		ret->kind = HIB_SECRET_KEYFILE;
	} else {
		snprintf(prompt, sizeof(prompt), "Passphrase for the hibernation image%s: ",
			 attempt > 1 ? " (again)" : "");
		r = read_passphrase(prompt, &resume_secret);
		if (r < 0)
			return r;
		ret->kind = HIB_SECRET_PASSPHRASE;
	}
	(void)what;
	ret->data = resume_secret.data;
	ret->len = resume_secret.len;
	return 0;
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
	hc->inl = ctl.cfg.inl;
	hc->n_inline = ctl.cfg.n_inline;
	hc->log = hook_log;
	/* Tests point the runner at their own directories. */
	if (getenv("HIBERNATE_HOOKS_DIRS")) {
		static char buf[4096];
		static const char *dirs[9];
		size_t n = 0;
		snprintf(buf, sizeof(buf), "%s", getenv("HIBERNATE_HOOKS_DIRS"));
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

/* ---- doctor ----------------------------------------------------------- */

static void doctor_line(enum hib_doctor_verdict v, const char *check, const char *msg, void *ud)
{
	static const char *const word[] = { "PASS", "WARN", "FAIL" };

	(void)ud;
	printf("%s  %-16s %s\n", word[v], check, msg);
}

static int do_doctor(void)
{
	struct hib_doctor_input in = {
		.root = getenv("HIBERNATE_DOCTOR_ROOT"),
		.device = ctl.device ? ctl.device : ctl.cfg.device,
		.offset = ctl.offset_set ? ctl.offset : ctl.cfg.offset,
		.offset_set = ctl.offset_set || ctl.cfg.offset_set,
		.image_size = ctl.cfg.opts.image_size,
	};
	int worst = hib_doctor(&in, doctor_line, NULL);

	fflush(stdout);
	return worst == HIB_DOCTOR_FAIL ? EXIT_FAILURE : EXIT_SUCCESS;
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
		r = hib_resume(t, snap, &ctl.cfg.opts, NULL);
		hib_snapshot_close(snap);
	}
	/* Still here: the restore did not happen. Everything else was stopped for it. */
	hib_test_abort();
	say("test cycle: the image could not be restored; the system keeps running");
	return r;
}

static int do_hibernate(void)
{
	struct hib_target *t = NULL;
	struct hib_snapshot *snap = NULL;
	struct hib_hooks *hooks = NULL;
	struct hib_hook_config hc;
	struct hib_stats st;
	const char *name;
	int r;

	r = pick_target(true, &t);
	if (r < 0)
		return EXIT_FAILURE;
	name = hib_target_file(t) ? hib_target_file(t) : hib_target_path(t);
	/* Ask before the hooks switch consoles or stop anything. */
	if (ctl.cfg.encrypt) {
		static struct secret_buf b2;
		static struct hib_secret sec;
		struct secret_buf *b1 = &hibernate_secret;

		if (ctl.cfg.key_file) {
			r = read_key_file(ctl.cfg.key_file, b1);
			sec.kind = HIB_SECRET_KEYFILE;
		} else {
			r = read_passphrase("Passphrase for the hibernation image: ", b1);
			if (r == 0 && isatty(STDIN_FILENO)) {
				r = read_passphrase("Passphrase again: ", &b2);
				if (r == 0 && (b1->len != b2.len || memcmp(b1->data, b2.data, b1->len))) {
					say("the passphrases differ; nothing was done");
					r = -EINVAL;
				}
				secret_wipe(&b2);
			}
			if (r == -ENODATA)
				say("an empty passphrase would not protect anything; nothing was done");
			sec.kind = HIB_SECRET_PASSPHRASE;
		}
		if (r < 0) {
			hib_target_close(t);
			return EXIT_FAILURE;
		}
		sec.data = b1->data;
		sec.len = b1->len;
		ctl.cfg.opts.secret = &sec;
	}
	{
		/* The target is known; only now prepare the system for the cycle. */
		const char *mode = ctl.test_cycle ? "test"
				   : ctl.cfg.opts.powerdown == HIB_POWERDOWN_SUSPEND ? "suspend"
										      : "hibernate";
		char msg[1024];

		hooks_setup(&hc, mode);
		if (!ctl.no_hooks) {
			r = hib_hooks_collect(&hc, &hooks);
			if (r < 0) {
				say("cannot read the hook directories: %s", strerror(-r));
				hib_target_close(t);
				return EXIT_FAILURE;
			}
			r = hib_hooks_pre(hooks, &hc, msg, sizeof(msg));
			if (r < 0) {
				if (msg[0])
					say("%s", msg);
				say("a hook stopped the cycle; what the hooks did is undone, the "
				    "system keeps running");
				hib_hooks_free(hooks);
				hib_target_close(t);
				return r == -ECANCELED ? EXIT_CANCELLED : EXIT_FAILURE;
			}
		}
	}
	r = snapshot_open(HIB_SNAP_HIBERNATE, &snap);
	if (r < 0) {
		hooks_post(hooks, &hc);
		hib_target_close(t);
		return EXIT_FAILURE;
	}
	tlog(HIB_LOG_PROGRESS, "hibernating to %s (%s%s)%s", name, hib_codec_name(ctl.cfg.opts.codec),
	     !ctl.cfg.encrypt   ? ""
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
	cancel_arm();
	r = hib_suspend(t, snap, &ctl.cfg.opts, &st);
	cancel_disarm();
	/* In either world (resumed or not), the passphrase has served its purpose. */
	secret_wipe(&hibernate_secret);
	hib_snapshot_close(snap);
	if (r == HIB_SUSPEND_TEST_WRITTEN)
		r = test_restore(t);
	hib_target_close(t);
	/* Resumed, failed or cancelled: undo what the hooks did, in reverse. */
	hooks_post(hooks, &hc);
	switch (r) {
	case HIB_SUSPEND_RESUMED:
		log_resumed(&st);
		return EXIT_SUCCESS;
	case HIB_SUSPEND_RAM:
		tlog(HIB_LOG_PROGRESS, "woke up from RAM; the image on disk was discarded");
		return EXIT_SUCCESS;
	case HIB_SUSPEND_WRITTEN:
		return EXIT_SUCCESS;
	case -ECANCELED:
		say("cancelled: nothing was saved, the system keeps running");
		return EXIT_CANCELLED;
	}
	say("hibernation failed, the system keeps running");
	return EXIT_FAILURE;
}

static void print_location(const char *path, const struct hib_file_location *l)
{
	printf("file: %s (%s, %" PRIu64 " pages in %" PRIu64 " extent%s)\n", path, l->fstype,
	       l->file_pages, l->extents, l->extents == 1 ? "" : "s");
	printf("device: %s\n", l->device);
	if (l->uuid)
		printf("resume=UUID=%s resume_offset=%" PRIu64 "\n", l->uuid, l->offset_pages);
	printf("resume=%s resume_offset=%" PRIu64 "\n", l->device, l->offset_pages);
}

static int do_offset(void)
{
	struct hib_file_location l;
	char why[512];
	int r = hib_file_locate(ctl.args[0], &l, why, sizeof(why));

	if (r < 0) {
		say("%s: cannot be located for resume: %s", ctl.args[0], why);
		return EXIT_FAILURE;
	}
	print_location(ctl.args[0], &l);
	hib_file_location_free(&l);
	return EXIT_SUCCESS;
}

static int do_prepare(void)
{
	char why[512], *end;
	unsigned long long mb;
	int r;

	errno = 0;
	mb = strtoull(ctl.args[1], &end, 10);
	if (errno || *end || mb == 0 || mb > (1ull << 30) || ctl.args[1][0] == '-')
		bad_usage("prepare-file: '%s' is not a size in MiB", ctl.args[1]);
	r = hib_prepare_file(ctl.args[0], mb << 20, why, sizeof(why));
	if (r < 0) {
		say("%s: %s", ctl.args[0], why);
		return EXIT_FAILURE;
	}
	tlog(HIB_LOG_PROGRESS, "%s: image file of %llu MiB ready; set device = %s in %s", ctl.args[0],
	     mb, ctl.args[0], HIB_CONFIG_PATH);
	return do_offset();
}

static int do_resume(void)
{
	struct hib_cmdline kc = { 0 };
	struct hib_target *t = NULL;
	struct hib_snapshot *snap = NULL;
	enum hib_sig_state st;
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
		tlog(HIB_LOG_WARN, "%s: no image: it is not a swap area or image file%s; "
		     "check resume= and resume_offset=", hib_target_path(t),
		     hib_target_offset_pages(t) ? " at that offset" : "");
		hib_target_close(t);
		return EXIT_SUCCESS;
	}
	if (st != HIB_SIG_IMAGE && st != HIB_SIG_BROKEN) {
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
	ctl.progress_t0 = now_ms();
	/* Without the snapshot device the image cannot be restored: discard it all the same. */
	r = hib_resume(t, r < 0 ? NULL : snap, &ctl.cfg.opts, NULL);
	secret_wipe(&resume_secret);
	hib_snapshot_close(snap);
	hib_target_close(t);
	if (r == HIB_RESUME_NO_IMAGE)
		return EXIT_SUCCESS;
	say("resume failed; booting normally");
	return EXIT_FAILURE;
}

static void print_config(const char *key, const char *value, enum hib_config_source src,
			 void *ud)
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
		printf("kernel: %s %s (%s)\n", info.kernel_release, info.kernel_version, info.machine);
		printf("stream-bytes: %" PRIu64 "\n", info.stream_bytes);
		printf("image-bytes: %" PRIu64 "\n", info.stored_bytes);
		printf("ratio: %.3f\n",
		       info.stream_bytes ? (double)info.stored_bytes / (double)info.stream_bytes : 0.0);
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

int main(int argc, char **argv)
{
	int r = EXIT_FAILURE;

	hib_set_log(log_to_stderr, NULL);
	ctl.progress_last_pct = -1;
	ctl.progress_tty = isatty(STDERR_FILENO);
	ctl.kmsg_fd = -1;
	parse_args(argc, argv);
	/* The old switch to plain pread/pwrite, until it is a declared option. */
	if (getenv("HIBERNATE_NO_URING"))
		ctl.cfg.opts.io_mode = HIB_IO_SYNC;
	/* The cycle's messages belong in the kernel log; queries need not go there. */
	if (ctl.cmd == CMD_HIBERNATE || ctl.cmd == CMD_RESUME)
		ctl.kmsg_fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC | O_NOCTTY);
	switch (ctl.cmd) {
	case CMD_HIBERNATE:
		r = do_hibernate();
		break;
	case CMD_RESUME:
		r = do_resume();
		break;
	case CMD_STATUS:
		r = do_status();
		break;
	case CMD_INVALIDATE:
		r = do_invalidate();
		break;
	case CMD_OFFSET:
		r = do_offset();
		break;
	case CMD_PREPARE:
		r = do_prepare();
		break;
	case CMD_DOCTOR:
		r = do_doctor();
		break;
	}
	if (ctl.kmsg_fd >= 0)
		close(ctl.kmsg_fd);
	hib_config_free(&ctl.cfg);
	return r;
}
