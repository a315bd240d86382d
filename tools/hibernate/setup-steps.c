// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hibernate setup's steps, in the order of setup.c's table: the target made
 * (an image file, or a NOCOW swap file in its own btrfs subvolume), the
 * hibernate.conf and fstab edits, swapon, the initramfs rebuilt and its
 * record checked, hibernate-logind restarted; and the children they run
 * (mkswap, btrfs, update-initramfs or dracut) through util/spawn.c by
 * absolute path. Each action is in the state before the next.
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
