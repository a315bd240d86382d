// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hibernate setup: the plan of lib/frontend/setupplan.c carried out, step by
 * step, each recorded in the state (lib/frontend/setupstate.c) before the
 * next; a step that fails undoes every one before it. --undo reverses a
 * recorded setup. Children (mkswap, btrfs, update-initramfs or dracut,
 * systemctl) only through util/spawn.c by absolute path.
 *
 * Here: the table of the steps, the plan printed, the undo and the command;
 * the steps themselves and the children they run are in setup-steps.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/swap.h>
#include <unistd.h>

#include "frontend/setupplan.h"
#include "frontend/setupstate.h"
#include "setup-priv.h"
#include "tool.h"
#include "util/error.h"
#include "util/spawn.h"
#include "util/util.h"

/* ---- the plan ----------------------------------------------------------- */

struct step {
	const char *name;
	int (*run)(struct setup *s); /* 0 done, 1 nothing to do here, -errno and s->err */
	bool fatal;                  /* a failure undoes everything */
};

static const struct step steps[] = {
	{ "target", setup_step_make, true },         { "config", setup_step_config, true },
	{ "fstab", setup_step_fstab, true },         { "swapon", setup_step_swapon, true },
	{ "initramfs", setup_step_initramfs, true }, { "logind", setup_step_logind, false },
};

/* One line of the plan for steps[@i], or none when it does nothing here. */
static void plan_line(const struct setup *s, size_t i)
{
	const struct hib_setup_plan *p = &s->plan;
	const char *n = steps[i].name;
	char prio[64] = "";

	if (p->swap_prio >= 0)
		snprintf(prio, sizeof(prio), ", priority %d (below zram)", p->swap_prio);
	if (i == 0 && p->kind == HIB_SETUP_SWAP_AREA && !p->bytes)
		printf("setup: %s: use %s as --device names it (not an active swap area now): "
		       "nothing is made\n",
		       n, p->path);
	else if (i == 0 && p->kind == HIB_SETUP_SWAP_AREA)
		printf("setup: %s: use the active swap area %s (%" PRIu64 " MiB; an image needs "
		       "at most %" PRIu64 " MiB): nothing is made\n",
		       n, p->path, p->bytes / MIB, p->need_bytes / MIB);
	else if (i == 0)
		printf("setup: %s: make %s, a %s of %" PRIu64 " MiB (%s)\n", n, p->path,
		       p->kind == HIB_SETUP_IMAGE_FILE ? "plain image file (no swap)"
						       : "NOCOW swap file in its own subvolume",
		       p->bytes / MIB,
		       p->kind == HIB_SETUP_IMAGE_FILE ? "every byte written, preallocated"
						       : "btrfs, single profile");
	else if (i == 1)
		printf("setup: %s: %s: device = %s\n", n, HIB_CONFIG_PATH, p->device);
	else if (i == 2 && p->kind == HIB_SETUP_SWAP_FILE)
		printf("setup: %s: /etc/fstab: add %s as swap%s\n", n, p->path, prio);
	else if (i == 3 && p->kind == HIB_SETUP_SWAP_FILE)
		printf("setup: %s: swapon %s%s\n", n, p->path, prio);
	else if (i == 4)
		printf("setup: %s: %s %s %s %s, then check that this kernel's initramfs "
		       "carries the target\n",
		       n, s->initramfs[0], s->initramfs[1], s->initramfs[2],
		       s->initramfs[3] ? s->initramfs[3] : "");
	else if (i == 5)
		printf("setup: %s: systemctl try-restart hibernate-logind.service\n", n);
}

static void print_plan(const struct setup *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++)
		plan_line(s, i);
	printf("setup: bootloader: nothing: the initramfs carries the location, no resume= "
	       "is needed\n");
	printf("setup: doctor: hibernate doctor\n");
	if (s->ctl->test_cycle)
		printf("setup: test: hibernate --test\n");
	fflush(stdout);
}

/* ---- undo ------------------------------------------------------------------- */

static int undo_swapoff(const char *full, void *ud)
{
	(void)ud;
	return swapoff(full) < 0 && errno != EINVAL ? -errno : 0;
}

static int undo_subvolume(const char *full, void *ud)
{
	static const char *const btrfs[] = { "/usr/bin/btrfs", "/bin/btrfs", "/usr/sbin/btrfs",
					     "/sbin/btrfs", NULL };
	struct setup *s = ud;
	const char *bt = setup_find_prog(s, btrfs);

	if (!bt)
		return -ENOENT;
	return setup_run_child(s, (const char *const[]){ bt, "subvolume", "delete", full, NULL },
			       60);
}

static int undo_rerun(const char *name, void *ud)
{
	struct setup *s = ud;

	if (strcmp(name, "initramfs") != 0)
		return -EINVAL;
	tlog(s->ctl, HIB_LOG_PROGRESS, "setup: undo: rebuilding the initramfs (%s)",
	     s->initramfs[0] ? s->initramfs[0] : "none found");
	return setup_rebuild_initramfs(s);
}

static int undo_all(struct setup *s)
{
	const struct hib_setup_undo_ops ops = { undo_swapoff, undo_subvolume, undo_rerun, s };

	return hib_setup_undo(s->root, &s->st, &ops, &s->err);
}

/* ---- the command ------------------------------------------------------------ */

static int run_steps(struct setup *s)
{
	/* The state's own directory, recorded first when setup makes it. */
	if (setup_mkdir_recorded(s, HIB_SETUP_DIR) < 0) {
		say(s->ctl, "setup: %s", s->err.msg);
		return EXIT_FAILURE;
	}
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
		uint64_t t0 = hib_now_ms();
		int r = steps[i].run(s);
		struct hib_error failed = s->err;

		if (r < 0 && steps[i].fatal) {
			say(s->ctl, "setup: %s: failed: %s", steps[i].name, failed.msg);
			if (undo_all(s) < 0) {
				say(s->ctl,
				    "setup: undoing it failed too: %s; what is left is in %s",
				    s->err.msg, HIB_SETUP_STATE_FILE);
				return EXIT_FAILURE;
			}
			say(s->ctl, "setup: every change undone: the system is as it was");
			return EXIT_FAILURE;
		}
		if (r == 1)
			printf("setup: %s: nothing to do\n", steps[i].name);
		else
			printf("setup: %s: done (%" PRIu64 " ms)\n", steps[i].name,
			       hib_now_ms() - t0);
		fflush(stdout);
	}
	return EXIT_SUCCESS;
}

/* Run this program again with @arg (doctor, --test): its output shown. */
static int run_self(struct setup *s, const char *arg)
{
	/* The configuration setup edited: --config's, when given. */
	const char *cf = s->ctl->config_path;
	const char *argv[] = { "/proc/self/exe", cf ? "--config" : arg, cf ? cf : NULL, arg, NULL };
	char out[16384];
	struct hib_spawn sp = { .argv = argv,
				.timeout_ms = 600000,
				.stdin_fd = -1,
				.stderr_mode = HIB_SPAWN_STDERR_MERGE,
				.out = out,
				.out_size = sizeof(out) };
	struct hib_spawn_result res = { 0 };
	int r = hib_spawn_run(&sp, &res, &s->err);

	fputs(out, stdout);
	fflush(stdout);
	return r < 0 ? r : res.status;
}

static int setup_undo(struct setup *s)
{
	int r = hib_setup_state_load(s->root, &s->st, &s->err);

	if (r == -ENOENT) {
		printf("setup: nothing to undo: no %s\n", HIB_SETUP_STATE_FILE);
		return EXIT_SUCCESS;
	}
	if (r < 0) {
		say(s->ctl, "setup: --undo: %s", s->err.msg);
		return EXIT_FAILURE;
	}
	for (size_t i = s->st.n; i-- > 0;)
		if (s->st.a[i].act != HIB_ACT_TARGET)
			printf("setup: undo: %s%s\n",
			       s->st.a[i].act == HIB_ACT_RERUN ? "rerun " : "", s->st.a[i].arg);
	if (undo_all(s) < 0) {
		say(s->ctl, "setup: --undo: %s; what is left is in %s", s->err.msg,
		    HIB_SETUP_STATE_FILE);
		return EXIT_FAILURE;
	}
	/* logind's CanHibernate must stop saying yes for a target now gone. */
	setup_step_logind(s);
	printf("setup: undone: every file setup edited is as it was, what it made is gone\n");
	return EXIT_SUCCESS;
}

/* A setup recorded before: still true (the same target, its file there)? */
static int setup_again(struct setup *s)
{
	const char *t = hib_setup_state_target(&s->st);
	char full[PATH_MAX], value[PATH_MAX] = "";
	bool file_ok = true;

	if (t && t[0] == '/') {
		snprintf(full, sizeof(full), "%s%s", s->root, t);
		file_ok = access(full, F_OK) == 0;
	}
	if (t && file_ok && hib_config_get(&s->ctl->cfg, "device", value, sizeof(value)) == 0 &&
	    strcmp(value, t) == 0) {
		printf("setup: already set up (device = %s, %s): nothing changed\n", t,
		       HIB_SETUP_STATE_FILE);
		return EXIT_SUCCESS;
	}
	say(s->ctl,
	    "setup: %s records a setup that no longer holds (device = %s in %s%s): run "
	    "hibernate setup --undo, then hibernate setup",
	    HIB_SETUP_STATE_FILE, t ? t : "?", HIB_CONFIG_PATH, file_ok ? "" : ", its file gone");
	return EXIT_FAILURE;
}

static int setup_plan(struct setup *s)
{
	struct hib_setup_input in = { 0 };
	int r = hib_setup_gather(s->root, &in, &s->err);

	if (r == 0) {
		in.size_mib = s->ctl->setup_size_mib;
		in.device = s->ctl->device;
		r = hib_setup_decide(&in, &s->plan, &s->err);
	}
	setup_find_initramfs(s);
	if (r == 0 && !s->initramfs[0])
		r = hib_error_set(&s->err, -ENOENT,
				  "neither update-initramfs nor dracut is installed: the image is "
				  "resumed from the initramfs; install initramfs-tools or dracut");
	if (r < 0)
		say(s->ctl, "setup: refused: %s", s->err.msg);
	return r;
}

/* On a terminal without --yes: the plan is asked for. */
static bool confirm(void)
{
	char answer[16] = "";

	printf("Carry this out? [y/N] ");
	fflush(stdout);
	if (!fgets(answer, sizeof(answer), stdin) || (answer[0] != 'y' && answer[0] != 'Y')) {
		printf("setup: nothing changed\n");
		return false;
	}
	return true;
}

int do_setup(struct control *ctl)
{
	const char *root = hib_test_knob("HIBERNATE_SETUP_ROOT");
	static struct setup s;
	int r;

	s = (struct setup){ .ctl = ctl, .root = root ? root : "" };
	if (!ctl->setup_dry && geteuid() != 0 && !root) {
		say(ctl, "setup: must run as root (sudo hibernate setup); --dry-run shows the plan "
			 "without changing anything");
		return EXIT_FAILURE;
	}
	if (ctl->setup_undo) {
		setup_find_initramfs(&s);
		return setup_undo(&s);
	}
	r = hib_setup_state_load(s.root, &s.st, &s.err);
	if (r == 0)
		return setup_again(&s);
	if (r != -ENOENT) {
		say(ctl, "setup: %s", s.err.msg);
		return EXIT_FAILURE;
	}
	if (setup_plan(&s) < 0)
		return EXIT_FAILURE;
	print_plan(&s);
	if (ctl->setup_dry)
		return EXIT_SUCCESS;
	if (!ctl->setup_yes && isatty(STDIN_FILENO) && !confirm())
		return EXIT_FAILURE;
	if (run_steps(&s) != EXIT_SUCCESS)
		return EXIT_FAILURE;
	r = run_self(&s, "doctor");
	printf("setup: doctor: %s\n",
	       r == 0 ? "PASS: this machine can hibernate"
		      : "FAIL: see above; hibernate setup --undo reverses setup");
	if (r == 0 && ctl->test_cycle) {
		r = run_self(&s, "--test");
		printf("setup: test: %s\n", r == 0 ? "PASS" : "FAIL (see above)");
	}
	return r == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
