/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The program's own state and the contracts between its rooms. One struct
 * control, filled by option parsing (cli.c) and the config file (main.c), is
 * passed by pointer to every command (as util-linux's swapon passes its
 * swapon_ctl); nothing else of the program's is global but the one flag a
 * signal handler sets (run.c). Only the files of tools/hibernate/ include
 * this header.
 *
 *   main.c      the config file, the options on top of it, dispatch
 *   cli.c       the command and option tables: getopt, --help, --cli-tables
 *   output.c    messages (stderr and the kernel log), progress, STATS lines
 *   run.c       the run lock, stop signals, the target and /dev/snapshot
 *   cancel.c    Esc and the power button cancel while the image is written
 *   secrets.c   passphrases, password agents, key files, TPM PINs
 *   cycle.c     one hibernation: hooks, working set, the engine, its exits
 *   sleep.c     systemd's sleep operations (hybrid-sleep, suspend-then-hibernate)
 *   resume.c    the initramfs side: noresume, probe, load, restore
 *   doctor.c    doctor and logind-setup
 *   history.c   the history of every cycle: records, the handover, the journal
 *   commands.c  the small commands: status, invalidate, offset, prepare-file, config
 *   setup.c     hibernate setup: the planner's plan carried out, recorded, undone
 *   setup-steps.c  setup's steps and the children they run (setup-priv.h)
 */
#ifndef HIB_TOOL_H
#define HIB_TOOL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <termios.h>

#include "frontend/askpass.h"
#include "frontend/cancelkeys.h"
#include "frontend/config.h"
#include "frontend/history.h"
#include "pipeline/tpm.h"
#include "frontend/keyfile.h"
#include "frontend/plymouth.h"
#include "hibernate.h"

#define EXIT_USAGE 2
#define EXIT_CANCELLED 3 /* Esc or the power button: nothing happened */

/* Indexes of the command table (cli.c). */
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
	CMD_HISTORY,
	CMD_SETUP,
};

/* What the terminal shows and the kernel log keeps (output.c). */
struct output {
	int loglevel;
	bool loglevel_set; /* -v, -q or --loglevel given */
	int kmsg_fd;       /* messages also go to the kernel log; -1: not */
	bool progress_tty; /* stderr is a terminal: a bar, not lines */
	uint64_t progress_t0;
	int progress_last_pct; /* -1: no bar on the line */
	int bar_len;           /* the bar on the line: its length, blanked over by a shorter one */
	const char *cancel_hint; /* the bar's "Esc cancels" while writing; NULL: none */
	bool loading;            /* a "load" progress came: the resume got past its checks */
	char last_error[512];    /* the library's last error, shown or not: a record's reason,
				  * the splash's last line */
	/* Plymouth's splash, where resume found one: the progress and the
	 * messages go there, and the console gets lines, not a bar. */
	struct hib_plymouth splash;
	/* The text console in front while the image is written, when stderr is
	 * not it (systemctl hibernate: switch-vt's console): the bar, the lines
	 * and the cancel hint drawn there too, Esc read there. -1: none. */
	int screen_fd;
	bool screen_bar;   /* the bar is on the screen's last line */
	bool screen_clear; /* switch-vt's console: cleared when opened and closed */
};

struct control {
	enum command cmd;
	struct output out;
	const char *config_path; /* --config */
	const char *device;      /* --device */
	uint64_t offset;         /* --offset */
	bool offset_set;
	const char *snapshot_path; /* --snapshot-device (tests) */
	struct hib_config cfg;     /* the file, then the options on top; read-only after main.c */
	bool test_cycle;           /* --test */
	bool no_hooks;             /* --no-hooks */
	/* --systemd-sleep: the operation of the systemd sleep unit that runs us. */
	const char *sleep_op;
	int run_lock_fd;         /* held for the run; the restoring child lets it go */
	bool setup_dry;          /* setup --dry-run */
	bool setup_undo;         /* setup --undo */
	bool setup_yes;          /* setup --yes */
	uint64_t setup_size_mib; /* setup --size, 0: computed */
	const char *args[2];     /* FILE [SIZE] of offset / prepare-file, ACTION [KEY] of config */
};

/* ---- cli.c ---------------------------------------------------------------- */

/* Options taken at once are; the others wait in @given (indexed like the
 * option table, cli_option_count() long) for the config file. The command
 * word and its arguments into @ctl. Bad usage exits 2. */
void cli_parse(struct control *ctl, int argc, char **argv, const char **given);
size_t cli_option_count(void);
/* The config key options[@i] sets once the file is read, or NULL. */
const char *cli_option_key(size_t i);
int cli_run_command(struct control *ctl);
/* The command's messages belong in the kernel log too (a cycle). */
bool cli_command_logs_to_kmsg(enum command cmd);

/* ---- output.c ------------------------------------------------------------- */

void output_init(struct output *o);
/* hib_log_fn for the library: @ud is the struct control. */
void output_log(enum hib_loglevel level, const char *msg, void *ud);
/* An error of the program's own, shown from loglevel 1 up. */
void say(const struct control *ctl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The program's own messages, through the same filter as the library's. */
void tlog(struct control *ctl, enum hib_loglevel level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Into the kernel log only (a line whose terminal is gone). */
void output_kmsg(struct control *ctl, enum hib_loglevel level, const char *msg);
/* hib_progress_fn: @ud is the struct control. */
void output_progress(const char *phase, uint64_t done, uint64_t total, void *ud);
void output_progress_start(struct control *ctl);
/* Resume: find Plymouth's splash (lib/frontend/plymouth.h); with one, the
 * load's progress goes there and the console gets lines. */
void output_splash(struct control *ctl);
void output_before_restore(void *ud);
/* A line in the splash, if there is one; never while processes are frozen. */
void output_splash_message(struct control *ctl, const char *msg);
/* Before the write: the console in front as the cycle's screen, if
 * lib/frontend/screen.h says so (out.screen_fd); closed by output_screen_close. */
void output_screen_open(struct control *ctl);
/* Whether a display server draws the console in front (KD_GRAPHICS). */
bool output_front_graphics(void);
void output_screen_close(struct control *ctl);
/* hib_stats_fn: the STATS line at info; @ud is the struct control. */
void output_stats(enum hib_stats_side side, const struct hib_stats *st, void *ud);
/* A step's own copy of the configuration's engine options, with the progress
 * and STATS callbacks above on it; the step adds what is its own. */
struct hib_options output_options(struct control *ctl);
/* The restored system says how the cycle went. */
void output_resumed(struct control *ctl, const struct hib_stats *st);
void __attribute__((noreturn, format(printf, 1, 2))) bad_usage(const char *fmt, ...);

/* ---- run.c ---------------------------------------------------------------- */

/* The signal that asked this run to stop, 0 for none: the one file-scope
 * variable of the program (a signal handler sets it). */
extern volatile sig_atomic_t run_stop_signal;

/* From the first hook on, SIGINT, SIGTERM and SIGHUP only record that the run
 * is to stop (run_stop_signal). */
void run_catch_stop_signals(void);
/* Says what an interruption left, and the exit code for it. */
int run_interrupted_exit(const struct control *ctl);
/* One run at a time; 0, or -errno said. */
int run_lock(struct control *ctl);

/* --device and --offset over the config file's device = and offset =. */
struct hib_target_request target_request(const struct control *ctl);
/* --device, then the config file, then the kernel command line and /proc/swaps. */
int pick_target(struct control *ctl, bool writable, struct hib_target **ret);
int snapshot_open(const struct control *ctl, enum hib_snapshot_mode mode,
		  struct hib_snapshot **ret);
/* --auto-swapon's area off again, once /dev/snapshot is closed. */
void auto_swapoff(struct control *ctl, struct hib_target *t);

/* ---- cancel.c ------------------------------------------------------------ */

/* Esc on the console and the power button cancel while the image is written:
 * what is watched for one cycle, from cancel_arm to cancel_disarm. */
struct cancel_watch {
	unsigned keys; /* HIB_CANCEL_*: cancel-keys, 0 with cancel = no */
	bool tty;      /* the console is raw, read for Esc; saved is its mode */
	struct termios saved;
	int screen_fd; /* out.screen_fd: the console in front, when not stdin */
	bool screen;   /* it is raw and read for Esc; screen_saved is its mode */
	struct termios screen_saved;
	int input[16]; /* the input devices with a cancel key, grabbed; -1: gone */
	size_t n_input;
	bool input_esc; /* one of them is a keyboard whose Esc cancels */
};
/* Before the freeze: the console raw, the buttons' devices opened, grabbed
 * and drained (a press from before does not count). */
void cancel_arm(struct control *ctl, struct cancel_watch *c);
/* The console back, the devices let go (logind sees presses again). */
void cancel_disarm(struct control *ctl, struct cancel_watch *c);
/* hib_options.cancel: @ud is the struct cancel_watch. A key going down, or a
 * stop signal. */
bool cancel_requested(void *ud);
/* "Esc or the power button", what cancels this cycle; NULL: nothing. */
const char *cancel_what(const struct cancel_watch *c);

/* ---- secrets.c ------------------------------------------------------------ */

struct secret_buf;

/* Every secret of one run, wiped and freed by secrets_free (_cleanup_). */
struct secrets {
	struct control *ctl;
	struct hib_askpass_env askpass; /* where to ask, probed once */
	bool probed;
	/* Resume (and --test's restore): what the library's ask_secret got. */
	struct secret_buf *resume;
	struct hib_key_file resume_key;
	/* Hibernate: the image's secret, and the TPM's PIN and fallback. */
	struct secret_buf *image, *pin_buf;
	struct hib_key_file image_key;
	struct hib_secret sec, pin, fallback;
	struct hib_tpm_options tpm;
	/* The TPM machine key's enrollment: the image is bound to it (hibernate),
	 * an image must be (resume). Not secret: its key is sealed. */
	struct hib_tpm_machine machine;
};

void secrets_init(struct secrets *s, struct control *ctl);
void secrets_free(struct secrets *s);
/* --encrypt: the passphrase (asked twice on a terminal), the key file, or the
 * TPM's secrets, onto @opts. Asked before the hooks switch consoles. */
int secrets_ask_image(struct secrets *s, struct hib_options *opts);
/* The image's side has served: wipe it (@opts' pointers into it die with @opts). */
void secrets_forget_image(struct secrets *s);
/* Resume: how @opts asks for the image's secret, and forgets it. */
void secrets_attach_resume(struct secrets *s, struct hib_options *opts);
/* With require-encryption on, an image that is not encrypted is not worth writing. */
int check_sealing_required(const struct control *ctl);

/* ---- cycle.c -------------------------------------------------------------- */

/* What a caller of the cycle chose beyond the configuration. */
struct cycle_request {
	const char *sleep_step; /* systemd-sleep's SYSTEMD_SLEEP_ACTION; NULL: not under systemd */
	bool powerdown_set;     /* @powerdown instead of the configured one */
	enum hib_powerdown powerdown;
	struct user_slice *slice; /* frozen around the snapshot; NULL: left alone */
};

/* One cycle: the target, the hooks, the image, the powerdown, and after the
 * resume (or a failure, or a cancel) the hooks' undoing. An exit code. */
int hibernate_cycle(struct control *ctl, const struct cycle_request *req);

/* ---- hooks.c -------------------------------------------------------------- */

/* The hooks of one run, started by hooks_start and undone by
 * hooks_end (_cleanup_): every post that matches a pre that ran. */
struct hooks_run {
	struct control *ctl;
	struct hib_hook_config hc;
	struct hib_hooks *hooks;
	bool collected; /* hib_hooks_collect succeeded */
	char msg[1024]; /* why a pre stopped the run, "" when it did not say */
	char *env[64];
	char switch_vt_env[64]; /* HIBERNATE_SWITCH_VT= with auto resolved */
	char dirs_buf[4096];
	const char *dirs[9];
};
void hooks_setup(struct control *ctl, struct hooks_run *h, const char *mode, const char *step);
/* Collect and run the pres; 0, or -errno: a failed collect said with @what,
 * a pre's reason left in msg (the posts of what ran have run). */
int hooks_start(struct hooks_run *h, const char *what);
void hooks_end(struct hooks_run *h);

/* ---- slice.c -------------------------------------------------------------- */

/* user.slice, frozen around a sleep as systemd-sleep 256+ does. */
struct user_slice {
	struct control *ctl;
	bool frozen;
};
void user_slice_freeze(struct user_slice *u);
void user_slice_thaw(struct user_slice *u);

/* ---- sleep.c -------------------------------------------------------------- */

/* Run as systemd-sleep would for ctl->sleep_op, with our cycle for the
 * hibernation; never the kernel's. An exit code. */
int systemd_sleep(struct control *ctl);

/* ---- history.c ------------------------------------------------------------ */

/* The record of a cycle this process saw end (@st: its figures), added to the
 * history and sent to the journal; a failure is a warning. */
void history_cycle(struct control *ctl, enum hib_history_result result, uint64_t start_unix,
		   const struct hib_stats *st);
/* The initramfs side: a resume that did not happen (@info: the image, if its
 * header was read), into the handover under /run for the running system. */
void history_handover(struct control *ctl, enum hib_history_result result,
		      const struct hib_image_info *info, const char *reason);
/* The handover's records into the history, and each to the journal. */
void history_import(struct control *ctl);
/* The last @rows cycles, newest first (status: ten; history: all kept). */
void history_print(struct control *ctl, size_t rows);

/* ---- the commands --------------------------------------------------------- */

int do_hibernate(struct control *ctl);
int do_resume(struct control *ctl);
int do_status(struct control *ctl);
int do_invalidate(struct control *ctl);
int do_doctor(struct control *ctl);
int do_logind_setup(struct control *ctl);
/* setup.c: hibernate setup (hibernate-setup(8)) */
int do_setup(struct control *ctl);
int do_offset(struct control *ctl);
int do_prepare(struct control *ctl);
int do_config(struct control *ctl);
int do_history(struct control *ctl);
#define CONFIG_USAGE "config: get KEY, dump, check, location or initramfs"

#endif
