// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The process around a run: one run at a time, the signals that ask it to
 * stop, and opening what a run works on (its target and
 * /dev/snapshot) with a message that names the object and the fix.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"
#include "util/util.h"

#define RUN_LOCK "/run/hibernate.lock"

volatile sig_atomic_t run_stop_signal;

static void on_stop_signal(int sig)
{
	run_stop_signal = sig;
}

/*
 * Dying at a signal once the hooks have started would leave services stopped
 * and the console switched: the hook running is killed, the cycle cancelled,
 * the posts run, then hibernate exits. SA_RESTART keeps the engine's I/O
 * threads from seeing EINTR; the hooks' waits (poll, nanosleep) return at a
 * signal regardless.
 */
void run_catch_stop_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa = { .sa_handler = on_stop_signal, .sa_flags = SA_RESTART }, old;

	sigemptyset(&sa.sa_mask);
	/* One ignored already (nohup, a background job) stays ignored. */
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
}

int run_interrupted_exit(const struct control *ctl)
{
	const char *name = run_stop_signal == SIGINT    ? "SIGINT"
			   : run_stop_signal == SIGTERM ? "SIGTERM"
							: "SIGHUP";

	say(ctl,
	    "interrupted by %s: nothing was saved; what the hooks did is undone (services "
	    "restarted), the system keeps running",
	    name);
	return EXIT_FAILURE;
}

/* A second run would stop what the first stopped and overwrite the hooks'
 * record of it (/run/hibernate/services.stopped). */
int run_lock(struct control *ctl)
{
	struct hib_error err;

	if (ctl->run_lock_fd >= 0)
		return 0;
	ctl->run_lock_fd = hib_run_lock(RUN_LOCK, &err);
	if (ctl->run_lock_fd < 0) {
		say(ctl, "%s", err.msg);
		return ctl->run_lock_fd;
	}
	return 0;
}

/* ---- what a run works on -------------------------------------------------- */

struct hib_target_request target_request(const struct control *ctl)
{
	return (struct hib_target_request){
		.spec = ctl->device,
		.offset_pages = ctl->offset,
		.offset_set = ctl->offset_set,
		.config_spec = ctl->cfg.device,
		.config_offset_pages = ctl->cfg.offset,
		.config_offset_set = ctl->cfg.offset_set,
	};
}

int pick_target(struct control *ctl, bool writable, struct hib_target **ret)
{
	struct hib_target_request req = target_request(ctl);
	struct hib_error err;
	int r;

	req.writable = writable;
	/* A swap file or image file: hibernate writes to the blocks under it. Reading
	 * (status) and invalidating go through the filesystem, which is right then. */
	req.file_target = ctl->cmd == CMD_HIBERNATE;
	r = hib_target_resolve(&req, ret, &err);
	if (r < 0) {
		say(ctl, "%s", err.msg);
		return r;
	}
	tlog(ctl, HIB_LOG_INFO, "target %s, chosen %s", hib_target_name(*ret),
	     hib_target_source_name(hib_target_source(*ret)));
	return 0;
}

int snapshot_open(const struct control *ctl, enum hib_snapshot_mode mode, struct hib_snapshot **ret)
{
	int r = hib_snapshot_open_dev(ctl->snapshot_path, mode, ret);
	const char *p = ctl->snapshot_path ? ctl->snapshot_path : "/dev/snapshot";

	if (r == -ENOENT)
		say(ctl, "%s: missing: the kernel needs CONFIG_HIBERNATION_SNAPSHOT_DEV", p);
	else if (r == -EPERM)
		say(ctl,
		    "%s: hibernation is not available: the kernel refuses it (nohibernate, "
		    "hibernate=no, kernel lockdown / Secure Boot, or secretmem in use)",
		    p);
	else if (r == -EBUSY)
		say(ctl, "%s: busy: another hibernation program holds it", p);
	else if (r < 0)
		say(ctl, "%s: cannot open: %s", p, strerror(-r));
	return r;
}

/* Newer kernels (7.2) hold the area they were told of against swapoff until
 * /dev/snapshot is closed: only then can --auto-swapon's area go off again. */
void auto_swapoff(struct control *ctl, struct hib_target *t)
{
	int r = hib_target_auto_swapoff(t);

	if (r < 0)
		tlog(ctl, HIB_LOG_WARN, "swapoff %s failed: %s; it stays on (run: swapoff %s)",
		     hib_target_name(t), strerror(-r), hib_target_name(t));
}
