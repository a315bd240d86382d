// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hibernate setup: the plan of lib/frontend/setupplan.c carried out, step by
 * step, each recorded in the state (lib/frontend/setupstate.c) before the
 * next; a step that fails undoes every one before it. --undo reverses a
 * recorded setup. Children (mkswap, btrfs, update-initramfs or dracut,
 * systemctl) only through util/spawn.c by absolute path.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "frontend/location.h"
#include "frontend/setupplan.h"
#include "frontend/setupstate.h"
#include "frontend/systemd.h"
#include "setup-priv.h"
#include "tool.h"
#include "util/error.h"
#include "util/spawn.h"
#include "util/util.h"

/* ---- children ---------------------------------------------------------- */

/* The first of @names (absolute paths) that is executable under the root. */
const char *setup_find_prog(const struct setup *s, const char *const *names)
{
	char full[PATH_MAX];

	for (; *names; names++) {
		snprintf(full, sizeof(full), "%s%s", s->root, *names);
		if (access(full, X_OK) == 0)
			return *names;
	}
	return NULL;
}

/* Run @argv (argv[0] absolute); its output shown at info; -errno and s->err. */
int setup_run_child(struct setup *s, const char *const *argv, unsigned timeout_s)
{
	char out[4096];
	struct hib_spawn sp = { .argv = argv,
				.timeout_ms = timeout_s * 1000,
				.stdin_fd = -1,
				.stderr_mode = HIB_SPAWN_STDERR_MERGE,
				.out = out,
				.out_size = sizeof(out) };
	struct hib_spawn_result res;
	int r = hib_spawn_check(&sp, &res, &s->err);

	if (res.out_len)
		tlog(s->ctl, r < 0 ? HIB_LOG_ERR : HIB_LOG_INFO, "%s", out);
	return r;
}

void setup_find_initramfs(struct setup *s)
{
	static const char *const uinit[] = { "/usr/sbin/update-initramfs", "/sbin/update-initramfs",
					     NULL };
	static const char *const dracut[] = { "/usr/bin/dracut", "/usr/sbin/dracut", NULL };
	const char *p;

	memset(s->initramfs, 0, sizeof(s->initramfs));
	if ((p = setup_find_prog(s, uinit))) {
		s->initramfs[0] = p, s->initramfs[1] = "-u", s->initramfs[2] = "-k";
		s->initramfs[3] = "all";
	} else if ((p = setup_find_prog(s, dracut))) {
		s->initramfs[0] = p, s->initramfs[1] = "--regenerate-all";
		s->initramfs[2] = "--force";
	}
}

int setup_rebuild_initramfs(struct setup *s)
{
	const char *argv[ARRAY_SIZE(s->initramfs)];
	char full[PATH_MAX];

	if (!s->initramfs[0])
		return 0;
	/* Under a test build's root, that root's stand-in. */
	memcpy(argv, s->initramfs, sizeof(argv));
	snprintf(full, sizeof(full), "%s%s", s->root, s->initramfs[0]);
	argv[0] = full;
	return setup_run_child(s, argv, 1800);
}

/* ---- the steps ----------------------------------------------------------- */

/* mkdir -p @dir under the root, each directory made recorded (outermost
 * first) once all exist: the state file lives in the last one. */
int setup_mkdir_recorded(struct setup *s, const char *dir)
{
	char full[PATH_MAX], *made[8];
	size_t n = 0, rootlen = strlen(s->root);
	int r = 0;

	snprintf(full, sizeof(full), "%s%s/", s->root, dir);
	for (char *p = full + rootlen + 1; r == 0 && (p = strchr(p, '/')); p++) {
		*p = 0;
		if (mkdir(full, 0755) == 0 && n < ARRAY_SIZE(made))
			made[n++] = strdup(full + rootlen);
		else if (errno != EEXIST)
			r = hib_error_set(&s->err, -errno, "%s: mkdir: %m", full);
		*p = '/';
	}
	for (size_t i = 0; i < n; i++) {
		if (r == 0 && made[i])
			r = hib_setup_state_add(s->root, &s->st, HIB_ACT_CREATED_DIR, made[i],
						&s->err);
		free(made[i]);
	}
	return r;
}

static int make_image_file(struct setup *s)
{
	char full[PATH_MAX];
	int r = hib_setup_state_add(s->root, &s->st, HIB_ACT_CREATED_FILE, s->plan.path, &s->err);

	if (r < 0)
		return r;
	snprintf(full, sizeof(full), "%s%s", s->root, s->plan.path);
	return hib_prepare_file(full, s->plan.bytes, &s->err);
}

/* An empty file made NOCOW before it has data (chattr +C), then its room. */
static int nocow_file(struct setup *s, const char *full)
{
	_cleanup_(closep) int fd = open(full, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	int flags = 0;

	if (fd < 0)
		return hib_error_set(&s->err, -errno, "%s: cannot create: %m", full);
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0 ||
	    (flags |= FS_NOCOW_FL, ioctl(fd, FS_IOC_SETFLAGS, &flags) < 0))
		return hib_error_set(&s->err, -errno, "%s: cannot make it NOCOW (chattr +C): %m",
				     full);
	if (fallocate(fd, 0, 0, (off_t)s->plan.bytes) < 0)
		return hib_error_set(&s->err, -errno, "%s: cannot allocate %" PRIu64 " MiB: %m",
				     full, s->plan.bytes / MIB);
	if (fsync(fd) < 0)
		return hib_error_set(&s->err, -errno, "%s: fsync: %m", full);
	return 0;
}

static int make_swap_file(struct setup *s)
{
	static const char *const btrfs[] = { "/usr/bin/btrfs", "/bin/btrfs", "/usr/sbin/btrfs",
					     "/sbin/btrfs", NULL };
	static const char *const mkswap[] = { "/usr/sbin/mkswap", "/sbin/mkswap", NULL };
	const char *bt = setup_find_prog(s, btrfs), *mk = setup_find_prog(s, mkswap);
	char dir[PATH_MAX], full[PATH_MAX];
	int r;

	if (!bt || !mk)
		return hib_error_set(&s->err, -ENOENT, "%s not found: install %s",
				     bt ? "mkswap" : "btrfs", bt ? "util-linux" : "btrfs-progs");
	snprintf(dir, sizeof(dir), "%s%s", s->root, HIB_SETUP_SWAP_DIR);
	r = setup_run_child(s, (const char *const[]){ bt, "subvolume", "create", dir, NULL }, 60);
	if (r == 0)
		r = hib_setup_state_add(s->root, &s->st, HIB_ACT_SUBVOLUME, HIB_SETUP_SWAP_DIR,
					&s->err);
	if (r == 0)
		r = hib_setup_state_add(s->root, &s->st, HIB_ACT_CREATED_FILE, s->plan.path,
					&s->err);
	if (r < 0)
		return r;
	snprintf(full, sizeof(full), "%s%s", s->root, s->plan.path);
	r = nocow_file(s, full);
	if (r == 0)
		r = setup_run_child(s, (const char *const[]){ mk, "-L", "hibernate", full, NULL },
				    120);
	return r;
}

int setup_step_make(struct setup *s)
{
	switch (s->plan.kind) {
	case HIB_SETUP_SWAP_AREA:
		return 1;
	case HIB_SETUP_IMAGE_FILE:
		return make_image_file(s);
	case HIB_SETUP_SWAP_FILE:
		return make_swap_file(s);
	}
	return 0;
}

/* @path's text under the root, or NULL when it does not exist (@ret_r 0). */
static char *read_under_root(struct setup *s, const char *path, int *ret_r)
{
	char full[PATH_MAX];
	FILE *f;
	char *text = NULL;
	size_t len = 0;

	snprintf(full, sizeof(full), "%s%s", s->root, path);
	*ret_r = 0;
	f = fopen(full, "re");
	if (!f) {
		if (errno != ENOENT)
			*ret_r = hib_error_set(&s->err, -errno, "%s: cannot read: %m", full);
		return NULL;
	}
	if (getdelim(&text, &len, 0, f) < 0 && !feof(f))
		*ret_r = hib_error_set(&s->err, -EIO, "%s: cannot read", full);
	fclose(f);
	return text ? text : strdup("");
}

/* The edited configuration, read by the config reader before it is written. */
static int conf_checks(struct setup *s, const char *text)
{
	_cleanup_(closep) int fd = memfd_create("hibernate.conf", MFD_CLOEXEC);
	struct hib_config c;
	char msg[256] = "";
	unsigned line = 0;
	int r;

	if (fd < 0 || hib_pwrite_full(fd, text, strlen(text), 0) < 0)
		return hib_error_set(&s->err, -EIO, "cannot check the new %s", HIB_CONFIG_PATH);
	hib_config_init(&c);
	r = hib_config_load_fd(&c, fd, &line, msg, sizeof(msg));
	hib_config_free(&c);
	if (r < 0)
		return hib_error_set(&s->err, r, "the edited %s would not parse (line %u: %s)",
				     HIB_CONFIG_PATH, line, msg);
	return 0;
}

int setup_step_config(struct setup *s)
{
	int r;
	_cleanup_(freep) char *old = read_under_root(s, HIB_CONFIG_PATH, &r);
	_cleanup_(freep) char *text = NULL;

	if (r < 0)
		return r;
	text = hib_setup_conf_edit(old, s->plan.device, NULL);
	if (!text)
		return hib_error_set(&s->err, -ENOMEM, "out of memory");
	r = conf_checks(s, text);
	if (r == 0)
		r = hib_setup_edit_file(s->root, &s->st, HIB_CONFIG_PATH, text, &s->err);
	if (r >= 0)
		r = hib_setup_state_add(s->root, &s->st, HIB_ACT_TARGET, s->plan.device, &s->err);
	return r < 0 ? r : 0;
}

int setup_step_fstab(struct setup *s)
{
	int r;
	_cleanup_(freep) char *old = read_under_root(s, "/etc/fstab", &r);
	_cleanup_(freep) char *text = NULL;

	if (r < 0 || s->plan.kind != HIB_SETUP_SWAP_FILE)
		return r < 0 ? r : 1;
	text = hib_setup_fstab_edit(old, s->plan.path, s->plan.swap_prio);
	if (!text)
		return hib_error_set(&s->err, -ENOMEM, "out of memory");
	r = hib_setup_edit_file(s->root, &s->st, "/etc/fstab", text, &s->err);
	return r < 0 ? r : 0;
}

int setup_step_swapon(struct setup *s)
{
	char full[PATH_MAX];
	int flags = 0;

	if (s->plan.kind != HIB_SETUP_SWAP_FILE)
		return 1;
	snprintf(full, sizeof(full), "%s%s", s->root, s->plan.path);
	if (s->plan.swap_prio >= 0)
		flags = SWAP_FLAG_PREFER | (s->plan.swap_prio & SWAP_FLAG_PRIO_MASK);
	if (swapon(full, flags) < 0)
		return hib_error_set(&s->err, -errno, "%s: swapon: %m", full);
	return hib_setup_state_add(s->root, &s->st, HIB_ACT_SWAPON, s->plan.path, &s->err);
}

/* The running kernel's initramfs now carries the target (the hook's record). */
static int check_record(struct setup *s)
{
	_cleanup_(hib_target_closep) struct hib_target *t = NULL;
	char full[PATH_MAX], msg[1024];
	struct hib_location l;
	struct utsname u;
	int r;

	snprintf(full, sizeof(full), "%s%s", s->root, s->plan.path);
	if (s->plan.kind != HIB_SETUP_SWAP_AREA)
		r = hib_location_of_file(full, &l, &s->err);
	else if ((r = hib_target_open(s->plan.device, 0, false, &t)) < 0)
		return hib_error_set(&s->err, r, "%s: cannot open: %s", s->plan.device,
				     strerror(-r));
	else
		r = hib_location_of_target(s->root, t, &l, &s->err);
	if (r < 0 || uname(&u) < 0)
		return r < 0 ? r : hib_error_set(&s->err, -errno, "uname: %m");
	if (hib_location_check(s->root, u.release, &l, true, msg, sizeof(msg)) !=
	    HIB_LOCATION_MATCH)
		return hib_error_set(&s->err, -ESTALE,
				     "%s (is the package's initramfs hook installed?)", msg);
	tlog(s->ctl, HIB_LOG_INFO, "setup: %s", msg);
	return 0;
}

int setup_step_initramfs(struct setup *s)
{
	int r = hib_setup_state_add(s->root, &s->st, HIB_ACT_RERUN, "initramfs", &s->err);

	if (r == 0)
		r = setup_rebuild_initramfs(s);
	if (r < 0)
		return hib_error_prefix(&s->err, r,
					"%s failed: the initramfs would not find the image; fix "
					"what it says, then run hibernate setup again: ",
					s->initramfs[0]);
	return check_record(s);
}

/* logind's CanHibernate follows doctor: hibernate-logind re-reads it. */
int setup_step_logind(struct setup *s)
{
	static const char *const args[] = { "try-restart", "hibernate-logind.service", NULL };
	char full[PATH_MAX];
	struct hib_error e;

	snprintf(full, sizeof(full), "%s/run/systemd/system", s->root);
	if (access(full, F_OK) < 0)
		return 1;
	if (hib_systemctl(args, NULL, 0, &e) != 0)
		tlog(s->ctl, HIB_LOG_WARN,
		     "setup: logind: systemctl try-restart hibernate-logind.service failed: "
		     "logind may say hibernation is unavailable until the next boot");
	return 0;
}

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
		uint64_t t0 = now_ms();
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
			printf("setup: %s: done (%" PRIu64 " ms)\n", steps[i].name, now_ms() - t0);
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
