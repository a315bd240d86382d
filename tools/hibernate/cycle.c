// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One hibernation, as the program runs it around the engine (hib_suspend):
 * the target, the image's secret, the pre hooks, user.slice, the working
 * set, the cycle, --test's restore, and whatever happened, the hooks'
 * undoing and the exit code. Each pair (hooks pre/post, freeze/thaw, open/
 * close, secrets asked/wiped) is held by a _cleanup_ variable, so every exit
 * undoes exactly what was done, in reverse.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "frontend/hooks.h"
#include "frontend/location.h"
#include "frontend/systemd.h"
#include "tool.h"
#include "util/util.h"
#include "workset/workset.h"

#define WS_RECORD_MS 2000 /* the working set record's share of the time before FREEZE */

/* The target is known; only now prepare the system: the pre hooks. 0, or the
 * exit code when they stopped it (undone already). */
static int hooks_before(struct control *ctl, struct hooks_run *h, const struct cycle_request *req,
			enum hib_powerdown powerdown)
{
	const char *mode = ctl->test_cycle                      ? "test"
			   : powerdown == HIB_POWERDOWN_SUSPEND ? "suspend"
								: "hibernate";
	int r;

	hooks_setup(ctl, h, mode, req->sleep_step);
	r = hooks_start(h, "nothing was done");
	if (r == 0)
		return 0;
	if (!h->collected)
		return EXIT_FAILURE;
	/* The history's reason (history.c): the hook's own words where it said any. */
	snprintf(ctl->out.last_error, sizeof(ctl->out.last_error), "%.*s",
		 (int)sizeof(ctl->out.last_error) - 1,
		 h->msg[0] ? h->msg : "a hook stopped the cycle");
	if (r == -EINTR) {
		if (h->msg[0])
			tlog(ctl, HIB_LOG_WARN, "%s", h->msg);
		return run_interrupted_exit(ctl);
	}
	if (h->msg[0])
		say(ctl, "%s", h->msg);
	say(ctl, "a hook stopped the cycle; what the hooks did is undone, the "
		 "system keeps running");
	return r == -ECANCELED ? EXIT_CANCELLED : EXIT_FAILURE;
}

/* ---- the working set ------------------------------------------------------ */

struct workset {
	void *rec; /* recorded before the snapshot: it travels in the image */
	size_t len;
};

static void workset_free(struct workset *ws)
{
	free(ws->rec);
	ws->rec = NULL;
}

/* After the pre hooks, before FREEZE: what to bring back after resume. */
static void workset_record(struct control *ctl, struct workset *ws, const char *target_name)
{
	struct hib_ws_record_stats st;
	int r;

	if (!ctl->cfg.restore_working_set)
		return;
	r = hib_ws_record(target_name, WS_RECORD_MS, &ws->rec, &ws->len, &st);
	if (r < 0) {
		tlog(ctl, HIB_LOG_WARN,
		     "working set not recorded (%s): nothing will be restored after resume",
		     strerror(-r));
		return;
	}
	tlog(ctl, HIB_LOG_INFO,
	     "working set recorded: %u processes, %u files (%" PRIu64 " MiB in %u ranges)%s "
	     "in %" PRIu64 " ms",
	     st.procs, st.files, st.resident_bytes >> 20, st.ranges,
	     st.truncated ? ", cut at a bound" : "", st.ms);
}

/* The restoring child's only line, into the kernel log: its stderr is gone.
 * Shown as the cycle's own summary would be (a failure as a warning): never
 * at --loglevel 0, which promises silence. */
static void workset_report(struct control *ctl, int r, const struct hib_ws_restore_stats *st)
{
	enum hib_loglevel level = r < 0 ? HIB_LOG_WARN : HIB_LOG_PROGRESS;
	char line[256];

	if ((int)level > ctl->out.loglevel)
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
	/* output_kmsg leaves progress lines to the terminal: this one has none. */
	output_kmsg(ctl, r < 0 ? HIB_LOG_WARN : HIB_LOG_INFO, line);
}

/* In the child: the background's manners. Nothing of the parent's it keeps
 * but the kernel log (the run lock above all: a next run must not wait). */
static void workset_detach(struct control *ctl)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	setsid();
	signal(SIGINT, SIG_DFL), signal(SIGTERM, SIG_DFL), signal(SIGHUP, SIG_DFL);
	for (int fd = 0; fd <= 2 && null >= 0; fd++)
		dup2(null, fd);
	if (ctl->run_lock_fd >= 0)
		close(ctl->run_lock_fd);
	/* Idle I/O class (3 << 13), nice 19: the resumed system comes first. */
	(void)syscall(SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, 0, 3 << 13);
	(void)setpriority(PRIO_PROCESS, 0, 19);
}

/*
 * Run by a service (systemd's sleep units, hibernate.service), the restore
 * would outlive it in its cgroup: systemd says "Unit process N (hibernate)
 * remains running after unit stopped" for it and its watchdog's child, and
 * may kill them. It gets a scope of its own, hibernate-workset-PID.scope,
 * before it forks anything (@go: the child waits for a byte on it).
 */
static void workset_adopt(struct control *ctl, pid_t pid, int go[2])
{
	char scope[64];
	struct hib_error err;

	snprintf(scope, sizeof(scope), "hibernate-workset-%d.scope", (int)pid);
	if (hib_systemd_scope_adopt(pid, scope, "hibernate: the working set read back", &err) < 0)
		tlog(ctl, HIB_LOG_WARN, "the working set's restore stays in this unit: %s",
		     err.msg);
	close(go[0]);
	(void)!write(go[1], "", 1);
	close(go[1]);
}

/* The unit this process runs in, if a service; false otherwise. */
static bool in_service(char *unit, size_t len)
{
	char cg[1024];

	return hib_read_text("/proc/self/cgroup", cg, sizeof(cg)) > 0 &&
	       hib_cgroup_service(cg, unit, len);
}

/* Resumed: the restore runs in a child, and this process goes on at once. */
static void workset_restore_start(struct control *ctl, struct workset *ws)
{
	struct hib_ws_restore_stats st;
	char unit[256];
	int go[2] = { -1, -1 }, r;
	bool adopt;
	pid_t pid;

	if (!ws->rec)
		return;
	adopt = in_service(unit, sizeof(unit)) && pipe2(go, O_CLOEXEC) == 0;
	pid = fork();
	if (pid < 0) {
		tlog(ctl, HIB_LOG_WARN, "working set not restored: fork: %m");
		if (adopt)
			close(go[0]), close(go[1]);
		return;
	}
	if (pid > 0) {
		if (adopt)
			workset_adopt(ctl, pid, go);
		return;
	}
	if (adopt) {
		struct pollfd p = { .fd = go[0], .events = POLLIN };

		close(go[1]);
		(void)poll(&p, 1, 15000); /* the byte, or the parent gone */
		close(go[0]);
	}
	workset_detach(ctl);
	r = hib_ws_restore(ws->rec, ws->len, (uint64_t)ctl->cfg.restore_limit * 1000, &st);
	workset_report(ctl, r, &st);
	_exit(r < 0 ? EXIT_FAILURE : EXIT_SUCCESS);
}

/* ---- the cycle ------------------------------------------------------------ */

/* How far a cycle got, for its exit. */
struct cycle_result {
	int r;
	enum hib_suspend_outcome outcome;
	struct hib_stats st;
};

/* --test: restore the image just written, as the initramfs would. */
static int test_restore(struct control *ctl, struct hib_target *t, struct secrets *s)
{
	_cleanup_(hib_snapshot_closep) struct hib_snapshot *snap = NULL;
	struct hib_options opts = output_options(ctl);
	int r;

	tlog(ctl, HIB_LOG_PROGRESS, "test cycle: image written, restoring it now");
	secrets_attach_resume(s, &opts);
	r = snapshot_open(ctl, HIB_SNAP_RESUME, &snap);
	if (r == 0) {
		output_progress_start(ctl);
		r = hib_resume(t, snap, &opts, NULL, NULL);
	}
	/* Still here: the restore did not happen. Everything else was stopped for it. */
	hib_test_cycle_abort();
	say(ctl, "test cycle: the image could not be restored; the system keeps running");
	return r < 0 ? r : -EIO;
}

/* @cancels: what cancels the write (cancel_what), NULL for nothing. */
static void log_start(struct control *ctl, const char *name, const char *cancels)
{
	const struct hib_config *cfg = &ctl->cfg;

	tlog(ctl, HIB_LOG_PROGRESS, "hibernating to %s (%s%s)%s%s%s", name,
	     hib_codec_name(cfg->opts.codec),
	     !cfg->encrypt   ? ""
	     : cfg->tpm      ? ", encrypted with a key sealed to the TPM"
	     : cfg->key_file ? ", encrypted with the key file"
			     : ", encrypted with a passphrase",
	     cancels ? "; " : "", cancels ? cancels : "",
	     cancels ? " cancels while the image is written" : "");
}

/* The engine's part, with the snapshot device open: the image, and --test's restore. */
static int cycle_suspend(struct control *ctl, struct hib_target *t, struct hib_snapshot **snap,
			 struct hib_options *opts, struct secrets *s, struct cycle_result *res)
{
	struct cancel_watch cancel;
	int r;

	opts->cancel = cancel_requested;
	opts->cancel_userdata = &cancel;
	output_screen_open(ctl);
	cancel_arm(ctl, &cancel);
	log_start(ctl, hib_target_name(t), cancel_what(&cancel));
	output_progress_start(ctl);
	r = hib_suspend(t, *snap, opts, &res->outcome, &res->st);
	cancel_disarm(ctl, &cancel);
	output_screen_close(ctl);
	/* In either world (resumed or not), the passphrase has served its purpose. */
	secrets_forget_image(s);
	hib_snapshot_closep(snap);
	if (r == 0 && res->outcome == HIB_SUSPEND_TEST_WRITTEN)
		r = test_restore(ctl, t, s);
	return r;
}

/* This cycle's options: the configuration's, with this run's callbacks,
 * secrets and powerdown on a copy that dies with the cycle. */
static struct hib_options cycle_options(struct control *ctl, const struct cycle_request *req)
{
	struct hib_options opts = output_options(ctl);

	if (req->powerdown_set)
		opts.powerdown = req->powerdown;
	if (ctl->test_cycle)
		opts.powerdown = HIB_POWERDOWN_TEST;
	return opts;
}

static void user_slice_thawp(struct user_slice **u)
{
	if (*u)
		user_slice_thaw(*u);
}

/* The kernel command line (resume=, resume_offset=), "" when unreadable. */
static void read_cmdline(const char *root, char *buf, size_t len)
{
	char p[PATH_MAX];
	FILE *f;
	size_t n = 0;

	snprintf(p, sizeof(p), "%s/proc/cmdline", root ? root : "");
	f = fopen(p, "re");
	if (f) {
		n = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	buf[n] = 0;
}

/* Before anything freezes: would the running kernel's initramfs (the only
 * kernel that can resume this image) look for it where it goes? Where it has
 * a record, it must match; where none, that is refused only when one must
 * exist (hib_location_required: setup ran, or device = names a file that
 * resume= on the command line does not find). */
static int check_location(struct control *ctl, const struct hib_target *t)
{
	const char *root = hib_test_knob("HIBERNATE_SETUP_ROOT");
	char dev[PATH_MAX] = "", msg[1024], cmdline[4096] = "";
	struct hib_location l;
	struct hib_error err;
	struct utsname u;
	enum hib_location_verdict v;
	bool required;

	if (ctl->snapshot_path || uname(&u) < 0)
		return 0; /* a test's snapshot device: no boot resumes it */
	(void)hib_config_get(&ctl->cfg, "device", dev, sizeof(dev));
	read_cmdline(root, cmdline, sizeof(cmdline));
	if (hib_location_of_target(root, t, &l, &err) < 0) {
		if (!hib_location_required(root, ctl->device ? NULL : dev, NULL, NULL))
			return 0;
		say(ctl, "refused: %s (nothing was frozen)", err.msg);
		return -EINVAL;
	}
	required = hib_location_required(root, ctl->device ? NULL : dev, cmdline, &l);
	v = hib_location_check(root, u.release, &l, required, msg, sizeof(msg));
	if (v == HIB_LOCATION_MATCH || v == HIB_LOCATION_UNKNOWN) {
		tlog(ctl, HIB_LOG_INFO, "%s", msg);
		return 0;
	}
	say(ctl, "refused: %s (nothing was frozen)", msg);
	return -ESTALE;
}

/* From the target to the hooks' undoing; the working set is @ws's. 0 when
 * the engine ran (@res says how it went), else the exit code. */
static int cycle_run(struct control *ctl, const struct cycle_request *req, struct workset *ws,
		     struct cycle_result *res)
{
	/* Undone in reverse: the snapshot device closed, the secrets wiped, the
	 * target closed, user.slice thawed, the hooks' posts. */
	_cleanup_(hooks_end) struct hooks_run hooks = { .ctl = ctl };
	_cleanup_(user_slice_thawp) struct user_slice *slice = NULL;
	_cleanup_(hib_target_closep) struct hib_target *t = NULL;
	_cleanup_(secrets_free) struct secrets s;
	_cleanup_(hib_snapshot_closep) struct hib_snapshot *snap = NULL;
	struct hib_options opts = cycle_options(ctl, req);
	int r;

	secrets_init(&s, ctl);
	if (pick_target(ctl, true, &t) < 0 || check_location(ctl, t) < 0)
		return EXIT_FAILURE;
	if (ctl->cfg.encrypt && secrets_ask_image(&s, &opts) < 0)
		return EXIT_FAILURE;
	run_catch_stop_signals();
	r = hooks_before(ctl, &hooks, req, opts.powerdown);
	if (r != 0)
		return r;
	if (req->slice)
		user_slice_freeze(slice = req->slice);
	r = run_stop_signal ? -EINTR : snapshot_open(ctl, HIB_SNAP_HIBERNATE, &snap);
	if (r < 0)
		return run_stop_signal ? run_interrupted_exit(ctl) : EXIT_FAILURE;
	workset_record(ctl, ws, hib_target_name(t));
	secrets_attach_resume(&s, &opts); /* for --test's restore */
	res->r = cycle_suspend(ctl, t, &snap, &opts, &s, res);
	auto_swapoff(ctl, t);
	return 0;
}

/* How a cycle that ran ended, as the exit code and its last words. */
static int hibernate_exit(struct control *ctl, const struct cycle_result *res)
{
	if (res->r == 0) {
		switch (res->outcome) {
		case HIB_SUSPEND_RESUMED:
			output_resumed(ctl, &res->st);
			return EXIT_SUCCESS;
		case HIB_SUSPEND_RAM:
			tlog(ctl, HIB_LOG_PROGRESS,
			     "woke up from RAM; the image on disk was discarded");
			return EXIT_SUCCESS;
		case HIB_SUSPEND_WRITTEN:
			return EXIT_SUCCESS;
		case HIB_SUSPEND_CANCELLED:
			say(ctl, "cancelled: nothing was saved, the system keeps running");
			return EXIT_CANCELLED;
		case HIB_SUSPEND_TEST_WRITTEN:
			break; /* not with r == 0: test_restore() ran */
		}
	}
	say(ctl, "hibernation failed, the system keeps running");
	return EXIT_FAILURE;
}

/* The history's record of a cycle the engine ran (said before its last words,
 * which are not its reason). An image left on disk (powerdown none) gets
 * its record when it is resumed or refused. */
static void cycle_history(struct control *ctl, const struct cycle_result *res, uint64_t start)
{
	enum hib_history_result h = HIB_HISTORY_FAILED;

	if (res->r == 0) {
		switch (res->outcome) {
		case HIB_SUSPEND_RESUMED:
			h = ctl->test_cycle ? HIB_HISTORY_TEST : HIB_HISTORY_RESUMED;
			break;
		case HIB_SUSPEND_RAM:
			h = HIB_HISTORY_RAM;
			break;
		case HIB_SUSPEND_CANCELLED:
			h = HIB_HISTORY_CANCELLED;
			break;
		case HIB_SUSPEND_WRITTEN:
			return;
		case HIB_SUSPEND_TEST_WRITTEN:
			break;
		}
	}
	history_cycle(ctl, h, start, &res->st);
}

int hibernate_cycle(struct control *ctl, const struct cycle_request *req)
{
	_cleanup_(workset_free) struct workset ws = { 0 };
	struct cycle_result res = { .r = -EINTR };
	uint64_t start = (uint64_t)time(NULL);
	bool woke;
	int rc;

	if (check_sealing_required(ctl) < 0 || run_lock(ctl) < 0)
		return EXIT_FAILURE;
	history_import(ctl); /* a refused resume of this boot, before this cycle's record */
	ctl->out.last_error[0] = 0;
	rc = cycle_run(ctl, req, &ws, &res);
	if (rc != 0) { /* stopped before the engine ran: nothing was frozen */
		if (!ctl->out.last_error[0])
			snprintf(ctl->out.last_error, sizeof(ctl->out.last_error),
				 "stopped before the snapshot (exit %d): see the messages above",
				 rc);
		history_cycle(ctl,
			      rc == EXIT_CANCELLED ? HIB_HISTORY_CANCELLED : HIB_HISTORY_FAILED,
			      start, &res.st);
		return rc;
	}
	cycle_history(ctl, &res, start);
	woke = res.outcome == HIB_SUSPEND_RESUMED || res.outcome == HIB_SUSPEND_RAM;
	/* Woken from RAM after suspend-to-both: the snapshot pushed as much out. */
	if (res.r == 0 && woke)
		workset_restore_start(ctl, &ws);
	if (run_stop_signal && !woke)
		return run_interrupted_exit(ctl);
	return hibernate_exit(ctl, &res);
}
