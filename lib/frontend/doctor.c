// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `hibernate doctor`: can this machine hibernate, and if not, exactly why and
 * what to do. Every check reads only; none opens /dev/snapshot or touches
 * /sys/power/state. Paths are taken under a root prefix, so tests can build
 * a fake /proc, /sys and /etc.
 */
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/magic.h>

#include "frontend/battery.h"
#include "frontend/config.h"
#include "frontend/doctor.h"
#include "frontend/doctor-priv.h"
#include "frontend/keyfile.h"
#include "frontend/location.h"
#include "frontend/setupplan.h"
#include "frontend/setupstate.h"
#include "frontend/sleep.h"
#include "storage/btrfs.h"
#include "storage/dmstack.h"
#include "storage/swaps.h"
#include "util/util.h"

void doctor_report(struct doctor_ctx *c, enum hib_doctor_verdict v, const char *check,
		   const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if ((int)v > c->worst)
		c->worst = (int)v;
	c->fn(v, check, msg, c->ud);
}

void doctor_path(const struct doctor_ctx *c, const char *p, char *out, size_t len)
{
	snprintf(out, len, "%s%s", c->in->root ? c->in->root : "", p);
}

int doctor_read_file(const struct doctor_ctx *c, const char *p, char *buf, size_t len)
{
	char full[PATH_MAX];

	doctor_path(c, p, full, sizeof(full));
	return hib_read_text(full, buf, len);
}

void doctor_check_snapshot_dev(struct doctor_ctx *c)
{
	char p[PATH_MAX];
	struct stat st;

	doctor_path(c, "/dev/snapshot", p, sizeof(p));
	if (stat(p, &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 10 &&
	    minor(st.st_rdev) == 231) {
		doctor_report(c, HIB_DOCTOR_PASS, "snapshot-device", "/dev/snapshot is there");
		return;
	}
	doctor_report(c, HIB_DOCTOR_FAIL, "snapshot-device",
		      "/dev/snapshot is missing: the kernel needs CONFIG_HIBERNATION=y and "
		      "CONFIG_HIBERNATION_SNAPSHOT_DEV=y (Debian's kernels have both)");
}

void doctor_check_lockdown(struct doctor_ctx *c)
{
	char buf[256];
	char *sel;

	if (doctor_read_file(c, "/sys/kernel/security/lockdown", buf, sizeof(buf)) < 0) {
		doctor_report(c, HIB_DOCTOR_PASS, "lockdown",
			      "no kernel lockdown (securityfs shows none)");
		return;
	}
	sel = strchr(buf, '[');
	if (!sel || strncmp(sel, "[none]", 6) == 0) {
		doctor_report(c, HIB_DOCTOR_PASS, "lockdown", "kernel lockdown is off");
		return;
	}
	doctor_report(
		c, HIB_DOCTOR_FAIL, "lockdown",
		"kernel lockdown is on (%.*s), usually because of Secure Boot: the kernel refuses "
		"hibernation, and a kernel booted with Secure Boot ignores lockdown=none. Turn "
		"Secure Boot off in the firmware, or stop shim enforcing it with mokutil "
		"--disable-validation (it asks for a password at the next boot)",
		(int)strcspn(sel + 1, "]\n"), sel + 1);
}

/* /sys/power/disk shows [disabled] when the kernel refuses hibernation for a
 * reason of its own: lockdown, secret memory in use (memfd_secret), or memory
 * it cannot save (CXL). No file: no CONFIG_HIBERNATION, which snapshot-device
 * already says. */
void doctor_check_power_disk(struct doctor_ctx *c)
{
	char buf[256];

	if (doctor_read_file(c, "/sys/power/disk", buf, sizeof(buf)) < 0)
		return;
	buf[strcspn(buf, "\n")] = 0;
	if (strstr(buf, "[disabled]") && c->kc.hibernate_no) {
		doctor_report(
			c, HIB_DOCTOR_FAIL, "power-disk",
			"/sys/power/disk says [disabled]: the kernel command line turns hibernation "
			"off (see kernel-cmdline)");
		return;
	}
	if (strstr(buf, "[disabled]")) {
		doctor_report(
			c, HIB_DOCTOR_FAIL, "power-disk",
			"/sys/power/disk says [disabled]: the kernel refuses hibernation, because of "
			"kernel lockdown (see lockdown), a program holding secret memory "
			"(memfd_secret, e.g. with secretmem.enable=1), or CXL memory it cannot save");
		return;
	}
	doctor_report(c, HIB_DOCTOR_PASS, "power-disk",
		      "the kernel allows hibernation (/sys/power/disk: %s)", buf);
}

void doctor_check_cmdline(struct doctor_ctx *c)
{
	if (c->kc.hibernate_no) {
		doctor_report(
			c, HIB_DOCTOR_FAIL, "kernel-cmdline",
			"the kernel command line says nohibernate or hibernate=no: remove it (in "
			"/etc/default/grub, then update-grub)");
		return;
	}
	if (c->kc.noresume) {
		doctor_report(
			c, HIB_DOCTOR_WARN, "kernel-cmdline",
			"noresume is on the kernel command line: this boot will discard any image");
		return;
	}
	doctor_report(c, HIB_DOCTOR_PASS, "kernel-cmdline",
		      "no nohibernate, hibernate=no or noresume");
}

void doctor_scan_swaps(struct doctor_ctx *c, struct swaps_seen *s)
{
	char buf[8192], *line, *save = NULL;

	memset(s, 0, sizeof(*s));
	if (doctor_read_file(c, "/proc/swaps", buf, sizeof(buf)) < 0)
		return;
	line = strtok_r(buf, "\n", &save); /* titles */
	while ((line = strtok_r(NULL, "\n", &save))) {
		char path[512], type[32];
		unsigned long long size, used;

		if (sscanf(line, "%511s %31s %llu %llu", path, type, &size, &used) != 4)
			continue;
		s->total++;
		if (strncmp(path, "/dev/zram", 9) == 0)
			s->zram++;
		if (s->n < DOCTOR_MAX_SWAPS) {
			memcpy(s->v[s->n].path, path, sizeof(path));
			s->v[s->n].free_kib = size - MIN(used, size);
			s->n++;
		}
	}
}

/* The room for an image on @t: what the kernel says is free in it when it is
 * active swap (other swap areas do not count: the image goes to this one),
 * else all of it. */
static uint64_t target_room(const struct swaps_seen *sw, const struct hib_target *t)
{
	if (hib_target_kind(t) == HIB_TARGET_PLAINFILE)
		return hib_target_file_size(t);
	for (int i = 0; i < sw->n; i++)
		if (hib_target_is_area(t, sw->v[i].path))
			return sw->v[i].free_kib * 1024;
	return hib_target_size(t);
}

void doctor_check_zram(struct doctor_ctx *c, const struct swaps_seen *s)
{
	if (s->total > 0 && s->zram == s->total)
		doctor_report(
			c, HIB_DOCTOR_FAIL, "swap-kind",
			"the only swap is zram, which lives in memory: an image there is gone at "
			"power-off. Add a swap partition or a swap file (see hibernate offset), or "
			"an image file (hibernate prepare-file)");
	else if (s->zram)
		doctor_report(c, HIB_DOCTOR_PASS, "swap-kind", "swap on disk besides zram");
	else
		doctor_report(c, HIB_DOCTOR_PASS, "swap-kind", "no zram-only swap");
}

static uint64_t mem_total_bytes(struct doctor_ctx *c)
{
	char buf[4096];
	unsigned long long kib = 0;
	char *p;

	if (doctor_read_file(c, "/proc/meminfo", buf, sizeof(buf)) < 0)
		return 0;
	p = strstr(buf, "MemTotal:");
	if (p)
		sscanf(p + 9, "%llu", &kib);
	return (uint64_t)kib * 1024;
}

/* The block device under @full (a file or directory) when it is on btrfs,
 * whose st_dev numbers a subvolume, not a device; 0 when not on btrfs or
 * unknown (several devices). */
static dev_t btrfs_dev(const char *full)
{
	struct statfs sfs;
	dev_t dev = 0;
	int fd;

	if (statfs(full, &sfs) < 0 || (unsigned long)sfs.f_type != BTRFS_SUPER_MAGIC)
		return 0;
	fd = open(full, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (hib_btrfs_device(fd, &dev, NULL) < 0)
		dev = 0;
	close(fd);
	return dev;
}

/* The block device holding swap area @path (a device node, or a swap file's
 * filesystem), under the root prefix; 0 when unknown. */
static dev_t swap_area_dev(struct doctor_ctx *c, const char *path)
{
	char full[PATH_MAX];
	struct stat st;
	dev_t dev;

	doctor_path(c, path, full, sizeof(full));
	if (stat(full, &st) < 0)
		return 0;
	if (S_ISREG(st.st_mode) && (dev = btrfs_dev(full)))
		return dev;
	return S_ISREG(st.st_mode) ? st.st_dev : S_ISBLK(st.st_mode) ? st.st_rdev : 0;
}

/* dm-crypt mapping @name's key in /etc/crypttab is a new random one at every
 * boot (then no image on it can be read back). */
static bool crypttab_random_key(struct doctor_ctx *c, const char *name, char *key, size_t keylen)
{
	char tab[8192], *line, *save = NULL;

	if (!name[0] || doctor_read_file(c, "/etc/crypttab", tab, sizeof(tab)) < 0)
		return false;
	for (line = strtok_r(tab, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char n[256], d[512], k[512];

		if (sscanf(line, "%255s %511s %511s", n, d, k) != 3 || strcmp(n, name))
			continue;
		if (strstr(k, "random") || strstr(k, "/dev/urandom")) {
			snprintf(key, keylen, "%s", k);
			return true;
		}
	}
	return false;
}

/* Is the target on dm-crypt, and how is it keyed? */
void doctor_check_crypt(struct doctor_ctx *c, const struct hib_target *t)
{
	dev_t dev = hib_target_devnum(t);
	struct hib_dm_crypt crypt;
	char key[512];

	if (!dev) /* a disk image file */
		return;
	if (!hib_dm_crypt_below(c->in->root, dev, &crypt)) {
		doctor_report(c, HIB_DOCTOR_PASS, "encrypted-swap",
			      "the target is not on dm-crypt");
		return;
	}
	if (crypttab_random_key(c, crypt.name, key, sizeof(key))) {
		doctor_report(c, HIB_DOCTOR_FAIL, "encrypted-swap",
			      "%s is dm-crypt swap with a new random key at every boot "
			      "(/etc/crypttab: %s): the image cannot be read back. Use a "
			      "persistent key (a LUKS passphrase unlocked in the "
			      "initramfs), or plain swap with hibernate --encrypt",
			      hib_target_path(t), key);
		return;
	}
	doctor_report(c, HIB_DOCTOR_WARN, "encrypted-swap",
		      "%s is on %s (%s): the initramfs must unlock it before hibernate resume runs "
		      "(cryptsetup-initramfs does for devices listed in /etc/crypttab)",
		      hib_target_path(t), hib_dm_crypt_how(&crypt),
		      crypt.name[0] ? crypt.name : "?");
}

/* Encryption seals the image, but not what the kernel swaps out to make room
 * for the snapshot: those pages go to the swap areas as they are and stay
 * there after power-off. Only swap on dm-crypt keeps them from a reader of
 * the disk (docs/threat-model.md). */
void doctor_check_clear_swap(struct doctor_ctx *c, const struct swaps_seen *sw)
{
	char clear[1024] = "";

	if (!c->in->encrypt) {
		doctor_report(
			c, HIB_DOCTOR_PASS, "clear-swap",
			"the image is not encrypted (encrypt is off): whoever can read the disk "
			"while the machine is off can read its memory");
		return;
	}
	for (int i = 0; i < sw->n; i++) {
		dev_t dev = swap_area_dev(c, sw->v[i].path);
		struct hib_dm_crypt crypt;

		if (strncmp(sw->v[i].path, "/dev/zram", 9) == 0 ||
		    hib_dm_crypt_below(c->in->root, dev, &crypt))
			continue;
		size_t len = strlen(clear);

		snprintf(clear + len, sizeof(clear) - len, "%s%s", len ? ", " : "", sw->v[i].path);
	}
	if (!clear[0]) {
		doctor_report(c, HIB_DOCTOR_PASS, "clear-swap",
			      "the image is encrypted and no swap area is in the clear");
		return;
	}
	doctor_report(
		c, HIB_DOCTOR_WARN, "clear-swap",
		"the image is encrypted, but swap in the clear (%s) keeps what the kernel swaps "
		"out to make room for the snapshot, readable after power-off. Put swap on "
		"dm-crypt (LUKS, unlocked in the initramfs), or write the image to a file "
		"(hibernate prepare-file) with swap only on zram or dm-crypt",
		clear);
}

/* A target hibernate setup made or chose for less RAM than there is now
 * (a VM or cloud instance resized): setup's size is the worst case. */
static void check_setup_size(struct doctor_ctx *c, const struct hib_target *t, uint64_t mem)
{
	char p[PATH_MAX];
	uint64_t need = hib_setup_need_bytes(mem >> 10);
	uint64_t size = hib_target_file(t) ? hib_target_file_size(t) : hib_target_size(t);

	doctor_path(c, HIB_SETUP_STATE_FILE, p, sizeof(p));
	if (mem == 0 || access(p, F_OK) < 0)
		return;
	if (size >= need)
		doctor_report(c, HIB_DOCTOR_PASS, "setup-size",
			      "%s: %" PRIu64 " MiB, setup's size for this machine's RAM is %" PRIu64
			      " MiB",
			      hib_target_name(t), size >> 20, need >> 20);
	else
		doctor_report(
			c, HIB_DOCTOR_WARN, "setup-size",
			"%s: %" PRIu64 " MiB, but this machine's RAM now calls for %" PRIu64
			" MiB (RAM grew?): run hibernate setup --undo, then hibernate setup, to "
			"re-size it",
			hib_target_name(t), size >> 20, need >> 20);
}

/* Room for the image: at most the kernel's image_size (2/5 of RAM by default). */
static void check_space(struct doctor_ctx *c, const struct swaps_seen *sw,
			const struct hib_target *t)
{
	const struct hib_doctor_input *in = c->in;
	uint64_t mem = mem_total_bytes(c);
	uint64_t need = in->image_size > 0 ? (uint64_t)in->image_size : mem / 5 * 2;
	uint64_t avail = target_room(sw, t);

	if (need == 0)
		doctor_report(c, HIB_DOCTOR_WARN, "space", "cannot tell the memory size");
	else if (avail >= need)
		doctor_report(c, HIB_DOCTOR_PASS, "space",
			      "%" PRIu64 " MiB free for an image of at most %" PRIu64 " MiB",
			      avail >> 20, need >> 20);
	else if (avail >= need / 2)
		doctor_report(
			c, HIB_DOCTOR_WARN, "space",
			"%" PRIu64 " MiB free for an image of up to %" PRIu64 " MiB: enough only "
			"if it compresses to half (lz4 usually does); more swap, or a smaller "
			"image-size, makes sure",
			avail >> 20, need >> 20);
	else
		doctor_report(c, HIB_DOCTOR_FAIL, "space",
			      "%" PRIu64 " MiB free for an image of up to %" PRIu64
			      " MiB: make the swap "
			      "area larger, or set image-size in %s",
			      avail >> 20, need >> 20, HIB_CONFIG_PATH);
	check_setup_size(c, t, mem);
}

/* The record of what the running kernel's initramfs carries (the hooks write
 * it, hibernate compares before the freeze): true when it names the target,
 * so resume finds the image whatever the kernel command line says. */
static bool check_location(struct doctor_ctx *c, const struct hib_target *t)
{
	static const enum hib_doctor_verdict verdicts[] = {
		[HIB_LOCATION_MATCH] = HIB_DOCTOR_PASS,
		[HIB_LOCATION_MISMATCH] = HIB_DOCTOR_FAIL,
		[HIB_LOCATION_UNRECORDED] = HIB_DOCTOR_FAIL,
		[HIB_LOCATION_UNKNOWN] = HIB_DOCTOR_PASS,
	};
	const struct hib_target_request *req = &c->in->target;
	const char *configured = req->spec ? NULL : req->config_spec;
	bool required = hib_location_required(c->in->root, configured, NULL, NULL);
	struct hib_location l;
	struct hib_error err;
	struct utsname u;
	enum hib_location_verdict v;
	char msg[1024];

	if (uname(&u) < 0)
		return false;
	if (hib_location_of_target(c->in->root, t, &l, &err) < 0) {
		if (required)
			doctor_report(c, HIB_DOCTOR_FAIL, "location", "%s", err.msg);
		return false;
	}
	required = hib_location_required(c->in->root, configured, c->cmdline, &l);
	v = hib_location_check(c->in->root, u.release, &l, required, msg, sizeof(msg));
	doctor_report(c, verdicts[v], "location", "%s", msg);
	return v == HIB_LOCATION_MATCH;
}

/* A file target: resume finds it by resume= and resume_offset=, unless the
 * initramfs was handed its location when it was built. */
static void check_resume_offset(struct doctor_ctx *c, const struct hib_target *t)
{
	const char *file = hib_target_file(t);
	uint64_t off = hib_target_offset_pages(t);

	if (check_location(c, t))
		return;
	if (file) {
		if (!c->kc.resume)
			doctor_report(c, HIB_DOCTOR_FAIL, "resume-offset",
				      "%s is a file: the kernel command line needs resume= and "
				      "resume_offset=%" PRIu64 " (hibernate offset %s prints both)",
				      file, off, file);
		else if (c->kc.resume_offset != off)
			doctor_report(c, HIB_DOCTOR_FAIL, "resume-offset",
				      "resume_offset=%" PRIu64
				      " on the kernel command line, but %s starts "
				      "at page %" PRIu64 ": set resume_offset=%" PRIu64,
				      c->kc.resume_offset, file, off, off);
		else
			doctor_report(c, HIB_DOCTOR_PASS, "resume-offset",
				      "resume_offset=%" PRIu64 " matches %s", off, file);
	} else if (!c->kc.resume) {
		doctor_report(
			c, HIB_DOCTOR_WARN, "resume-offset",
			"no resume= on the kernel command line: the initramfs finds the image only "
			"through /etc/hibernate.conf or the only swap partition; resume=%s is surer",
			hib_target_path(t));
	} else {
		doctor_report(c, HIB_DOCTOR_PASS, "resume-offset",
			      "resume=%s on the kernel command line", c->kc.resume);
	}
}

/* The target's page 0: hibernate writes only to a swap area or image file. */
static int report_signature(struct doctor_ctx *c, struct hib_target *t, const char *name,
			    enum hib_sig_state *st)
{
	int r = hib_target_probe(t, st);

	if (r < 0) {
		doctor_report(c, HIB_DOCTOR_FAIL, "target", "%s: cannot read its first page: %s",
			      name, strerror(-r));
	} else if (*st == HIB_SIG_SWAP || *st == HIB_SIG_FILE) {
		doctor_report(c, HIB_DOCTOR_PASS, "target", "%s: %s%s; chosen %s", name,
			      hib_sig_state_name(*st),
			      hib_target_file_unwritten(t) ? " (made with fallocate: fine for swap)"
							   : "",
			      hib_target_source_name(hib_target_source(t)));
	} else if (*st == HIB_SIG_IMAGE || *st == HIB_SIG_BROKEN) {
		doctor_report(
			c, HIB_DOCTOR_WARN, "target",
			"%s holds an image that was not resumed: resume it, or hibernate invalidate",
			name);
	} else {
		doctor_report(
			c, HIB_DOCTOR_FAIL, "target",
			"%s is %s: hibernate will not write to it. mkswap it if it is meant as swap, "
			"or name the right device",
			name, hib_sig_state_name(*st));
	}
	return r;
}

/* The root filesystem's device, from mountinfo (the last mount on "/" is
 * the one seen); on btrfs (an anonymous major 0 there) its filesystem's
 * device; 0 when unknown. */
static dev_t root_dev(struct doctor_ctx *c)
{
	char buf[32768], *line, *save = NULL, full[PATH_MAX];
	dev_t found = 0, dev;

	if (doctor_read_file(c, "/proc/self/mountinfo", buf, sizeof(buf)) < 0)
		return 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned int ma, mi;
		char mnt[512];

		/* ID PARENT MAJ:MIN ROOT MOUNT-POINT ... */
		if (sscanf(line, "%*u %*u %u:%u %*s %511s", &ma, &mi, mnt) == 3 &&
		    strcmp(mnt, "/") == 0)
			found = makedev(ma, mi);
	}
	doctor_path(c, "/", full, sizeof(full));
	if (found && major(found) == 0 && (dev = btrfs_dev(full)))
		return dev;
	return found;
}

/* The device the image's bytes land on: the target's, or for a disk image
 * file the one under its filesystem. */
static dev_t target_backing_dev(const struct hib_target *t)
{
	struct stat st;

	if (hib_target_devnum(t))
		return hib_target_devnum(t);
	return stat(hib_target_path(t), &st) == 0 ? st.st_dev : 0;
}

/* The kernel's memory holds the root's dm-crypt key: an image in the clear
 * carries it to a disk that anyone can read while the machine is off. */
void doctor_check_root_crypt(struct doctor_ctx *c, const struct hib_target *t)
{
	struct hib_dm_crypt root, target;

	if (!hib_dm_crypt_below(c->in->root, root_dev(c), &root)) {
		doctor_report(c, HIB_DOCTOR_PASS, "encrypted-root",
			      "the root filesystem is not on dm-crypt");
		return;
	}
	if (c->in->encrypt) {
		doctor_report(c, HIB_DOCTOR_PASS, "encrypted-root",
			      "the root filesystem is on %s (%s), and the image is encrypted",
			      hib_dm_crypt_how(&root), root.name);
		return;
	}
	if (hib_dm_crypt_below(c->in->root, target_backing_dev(t), &target)) {
		doctor_report(c, HIB_DOCTOR_PASS, "encrypted-root",
			      "the root filesystem is on %s (%s), the target %s on %s (%s)",
			      hib_dm_crypt_how(&root), root.name, hib_target_name(t),
			      hib_dm_crypt_how(&target), target.name);
		return;
	}
	doctor_report(
		c, HIB_DOCTOR_WARN, "encrypted-root",
		"the root filesystem is on dm-crypt (%s), but the target %s is not: the image "
		"carries the kernel's memory, the root's dm-crypt key with it, in the clear. Put "
		"swap on the encrypted volume (an LV in its volume group, or swap inside LUKS), "
		"or set encrypt = yes in %s",
		root.name, hib_target_name(t), HIB_CONFIG_PATH);
}

/* What a cycle will do with zram swap beside @t (NULL: no target known). */
void doctor_check_zram_cycle(struct doctor_ctx *c, const struct hib_target *t)
{
	char swaps[PATH_MAX], meminfo[PATH_MAX], where[64] = "";
	struct hib_swap_env env = { .proc_swaps = swaps, .meminfo = meminfo };
	struct hib_zram_plan p = { 0 };
	const struct hib_swap_area *a;

	doctor_path(c, "/proc/swaps", swaps, sizeof(swaps));
	doctor_path(c, "/proc/meminfo", meminfo, sizeof(meminfo));
	if (hib_zram_plan_make(&env, t, &p) < 0 || p.n == 0) {
		doctor_report(c, HIB_DOCTOR_PASS, "zram",
			      "no zram swap: nothing to move for the cycle");
		hib_zram_plan_free(&p);
		return;
	}
	a = &p.areas[0].a;
	if (p.target_listed)
		snprintf(where, sizeof(where), " %s the target's %d",
			 a->prio > p.target_prio ? "above" : "at or below", p.target_prio);
	if (c->in->zram == HIB_ZRAM_KEEP)
		doctor_report(
			c, HIB_DOCTOR_WARN, "zram",
			"%s is active swap at priority %d%s, and zram = keep leaves it on: the "
			"kernel's room for the snapshot then goes into RAM, and it may fail with "
			"\"Cannot allocate memory\" (zram = swapoff moves it out of the way)",
			a->path, a->prio, where);
	else if (!hib_zram_plan_fits(&p))
		doctor_report(
			c, HIB_DOCTOR_WARN, "zram",
			"%s holds %llu MiB, more than the memory available and the other swap "
			"can take now (%llu MiB, 64 MiB kept free): hibernate would refuse to swap "
			"it off; close programs, or add disk swap",
			a->path, (unsigned long long)(p.used_kib >> 10),
			(unsigned long long)(p.room_kib >> 10));
	else
		doctor_report(
			c, HIB_DOCTOR_PASS, "zram",
			"%s is active swap at priority %d%s: hibernate swaps it off for the cycle "
			"(%llu MiB back into memory) and on again after%s",
			a->path, a->prio, where, (unsigned long long)(p.used_kib >> 10),
			p.n > 1 ? ", and the other zram areas too" : "");
	hib_zram_plan_free(&p);
}

/* What hibernate would write to, found as hibernate finds it (but only read). */
void doctor_check_target(struct doctor_ctx *c, const struct swaps_seen *sw)
{
	_cleanup_(hib_target_closep) struct hib_target *t = NULL;
	struct hib_target_request req = c->in->target;
	char swaps[PATH_MAX];
	struct hib_error err;
	enum hib_sig_state st;
	const char *name;
	int r;

	doctor_path(c, "/proc/swaps", swaps, sizeof(swaps));
	req.cmdline = c->cmdline;
	req.proc_swaps = swaps;
	req.writable = false;
	req.file_target = true;
	r = hib_target_resolve(&req, &t, &err);
	if (r < 0) {
		doctor_report(c, HIB_DOCTOR_FAIL, "target", "%s", err.msg);
		doctor_check_zram_cycle(c, NULL);
		return;
	}
	name = hib_target_name(t);
	r = hib_target_check_stack(t, c->in->root, &err);
	if (r < 0)
		doctor_report(c, HIB_DOCTOR_FAIL, "target", "%s", err.msg);
	else
		r = report_signature(c, t, name, &st);
	/* Room, only on a target hibernate would write to: the room of a device
	 * it refuses says nothing. */
	if (r >= 0 && (st == HIB_SIG_SWAP || st == HIB_SIG_FILE || st == HIB_SIG_IMAGE ||
		       st == HIB_SIG_BROKEN))
		check_space(c, sw, t);

	check_resume_offset(c, t);
	doctor_check_crypt(c, t);
	doctor_check_root_crypt(c, t);
	doctor_check_zram_cycle(c, t);
}

/* Does the initramfs of the running kernel carry `hibernate resume`? */
void doctor_check_initramfs(struct doctor_ctx *c)
{
	struct utsname u;
	char p[PATH_MAX], buf[4096];
	FILE *f;
	bool found = false;
	size_t n, keep = 0;
	static const char needle[] = "hibernate resume";

	if (uname(&u) < 0)
		return;
	snprintf(buf, sizeof(buf), "/boot/initrd.img-%s", u.release);
	doctor_path(c, buf, p, sizeof(p));
	f = fopen(p, "re");
	if (!f) {
		doctor_report(
			c, HIB_DOCTOR_WARN, "initramfs",
			"no %s to look into: make sure your initramfs runs hibernate resume (the "
			"initramfs-tools and dracut integration do)",
			buf);
		return;
	}
	/* Our hook script is stored uncompressed only in an uncompressed cpio: look
	 * for the resume step's words; compressed images are checked via lsinitramfs
	 * by the integration, here we say what we could not see. */
	while ((n = fread(buf + keep, 1, sizeof(buf) - keep - 1, f)) > 0) {
		size_t total = keep + n, carry;

		if (memmem(buf, total, needle, sizeof(needle) - 1)) {
			found = true;
			break;
		}
		/* The words may straddle two reads. */
		carry = MIN(total, sizeof(needle) - 1);
		memmove(buf, buf + total - carry, carry);
		keep = carry;
	}
	fclose(f);
	if (found)
		doctor_report(c, HIB_DOCTOR_PASS, "initramfs", "%s runs hibernate resume", p);
	else
		doctor_report(
			c, HIB_DOCTOR_WARN, "initramfs",
			"could not find hibernate resume in %s (it may be compressed): check with "
			"lsinitramfs %s | grep hibernate",
			p, p);
}

/* resume= in a form the kernel resolves itself (early_lookup_bdev): a kernel
 * device name under /dev, PARTUUID=, PARTLABEL=, MAJ:MIN or a device number.
 * UUID=, LABEL= and the /dev/disk, /dev/mapper links only an initramfs knows. */
static bool kernel_resolves(const char *spec)
{
	if (strncmp(spec, "/dev/", 5) == 0)
		return spec[5] && !strchr(spec + 5, '/');
	if (strncmp(spec, "PARTUUID=", 9) == 0 || strncmp(spec, "PARTLABEL=", 10) == 0)
		return true;
	return spec[0] && strspn(spec, "0123456789abcdefABCDEF:") == strlen(spec);
}

static bool exists_under(const struct doctor_ctx *c, const char *p)
{
	char full[PATH_MAX];

	doctor_path(c, p, full, sizeof(full));
	return access(full, F_OK) == 0;
}

/*
 * Encryption required: the kernel's own resume must act only after hibernate
 * resume, which discards an image in the kernel's format (never encrypted).
 * It acts first where resume= names a device the kernel finds by itself (it
 * resumes while booting, before any initramfs, once the disk's driver is
 * built in), or where the initramfs builder runs it with no step of ours.
 */
void doctor_check_kernel_resume(struct doctor_ctx *c)
{
	static const struct {
		const char *theirs, *ours, *builder;
	} steps[] = {
		{ "/usr/share/initramfs-tools/scripts/local-premount/resume",
		  "/usr/share/initramfs-tools/scripts/local-premount/hibernate",
		  "initramfs-tools" },
		{ "/usr/lib/dracut/modules.d/95resume", "/usr/lib/dracut/modules.d/90hibernate",
		  "dracut" },
	};
	const char *r = c->kc.resume;

	if (c->in->require == HIB_REQUIRE_NOTHING || c->kc.noresume)
		return;
	if (r && kernel_resolves(r)) {
		doctor_report(
			c, HIB_DOCTOR_WARN, "kernel-resume",
			"resume=%s names the device as the kernel finds it itself: where its disk "
			"driver is built in, the kernel restores an image of its own format from it "
			"while booting, before hibernate resume can refuse it (require-encryption). "
			"Name it resume=UUID=<its UUID> (blkid), which only the initramfs resolves",
			r);
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++)
		if (exists_under(c, steps[i].theirs) && !exists_under(c, steps[i].ours)) {
			doctor_report(
				c, HIB_DOCTOR_WARN, "kernel-resume",
				"%s runs the kernel's resume (%s) and has no hibernate step to run "
				"before it: an image in the kernel's format, never encrypted, would "
				"be restored. Install hibernate's %s integration (%s)",
				steps[i].builder, steps[i].theirs, steps[i].builder, steps[i].ours);
			return;
		}
	doctor_report(c, HIB_DOCTOR_PASS, "kernel-resume",
		      "the kernel's resume does not act before hibernate resume%s%s",
		      r ? ": the initramfs resolves resume=" : "", r ? r : "");
}

/* What resume will take (require-encryption), and whether hibernate writes it. */
void doctor_check_encryption(struct doctor_ctx *c)
{
	const struct hib_doctor_input *in = c->in;

	if (in->require == HIB_REQUIRE_NOTHING && !in->encrypt)
		doctor_report(
			c, HIB_DOCTOR_PASS, "encryption",
			"images are not encrypted, and resume takes them (require-encryption is "
			"off)");
	else if (in->require == HIB_REQUIRE_NOTHING)
		doctor_report(
			c, HIB_DOCTOR_WARN, "encryption",
			"images are encrypted, but require-encryption = no: resume also restores "
			"an image that is not, which whoever can write the swap area can make. "
			"Remove require-encryption = no from " HIB_CONFIG_PATH);
	else if (!in->encrypt)
		doctor_report(
			c, HIB_DOCTOR_FAIL, "encryption",
			"require-encryption is on, but encrypt is not: hibernate will not write an "
			"image its resume would refuse. Set encrypt = yes in " HIB_CONFIG_PATH
			", or require-encryption = no");
	else
		doctor_report(c, HIB_DOCTOR_PASS, "encryption",
			      "resume takes only images sealed with %s (require-encryption)",
			      hib_require_name(in->require));
}

/* The key file hibernate and resume would read: taken, or why not. */
void doctor_check_key_file(struct doctor_ctx *c)
{
	struct hib_error err;
	char p[PATH_MAX];

	if (!c->in->key_file)
		return;
	doctor_path(c, c->in->key_file, p, sizeof(p));
	if (hib_key_file_check(p, &err) < 0)
		doctor_report(c, HIB_DOCTOR_FAIL, "key-file", "%s", err.msg);
	else
		doctor_report(c, HIB_DOCTOR_PASS, "key-file",
			      "%s: root's, no group or other access, %u to %u bytes", p,
			      HIB_KEY_FILE_MIN, HIB_KEY_FILE_MAX);
}

/* What suspend-then-hibernate would do now, with this machine's batteries. */
void doctor_check_sleep(struct doctor_ctx *c)
{
	char ps[PATH_MAX], rates[PATH_MAX], msg[900];
	struct hib_sleep_conf sc;
	struct hib_rate_store rs;
	struct hib_power p;
	struct hib_error err;

	if (hib_sleep_conf_load(c->in->root, &sc, &err) < 0) {
		doctor_report(c, HIB_DOCTOR_WARN, "sleep",
			      "%s: systemd and suspend-then-hibernate refuse "
			      "it (fix the file: systemd-sleep.conf(5))",
			      err.msg);
		return;
	}
	doctor_path(c, HIB_POWER_SUPPLY_DIR, ps, sizeof(ps));
	doctor_path(c, HIB_BATTERY_RATE_FILE, rates, sizeof(rates));
	if (hib_power_read(c->in->power_supply ? c->in->power_supply : ps, &p, &err) < 0)
		p = (struct hib_power){ .on_ac = true };
	if (hib_rate_load(c->in->rate_file ? c->in->rate_file : rates, &rs, &err) < 0)
		rs.n = 0;
	hib_sth_summary(&sc, &p, &rs, msg, sizeof(msg));
	doctor_report(c, HIB_DOCTOR_PASS, "sleep", "%s", msg);
}

int hib_doctor(const struct hib_doctor_input *in, hib_doctor_fn fn, void *userdata)
{
	struct doctor_ctx c = { .in = in, .fn = fn, .ud = userdata };
	struct swaps_seen sw;

	if (in->cmdline)
		snprintf(c.cmdline, sizeof(c.cmdline), "%s", in->cmdline);
	else if (doctor_read_file(&c, "/proc/cmdline", c.cmdline, sizeof(c.cmdline)) < 0)
		c.cmdline[0] = 0;
	hib_cmdline_parse(c.cmdline, &c.kc);

	doctor_check_snapshot_dev(&c);
	doctor_check_lockdown(&c);
	doctor_check_power_disk(&c);
	doctor_check_cmdline(&c);
	doctor_scan_swaps(&c, &sw);
	doctor_check_zram(&c, &sw);
	doctor_check_target(&c, &sw);
	doctor_check_clear_swap(&c, &sw);
	doctor_check_initramfs(&c);
	doctor_check_encryption(&c);
	doctor_check_kernel_resume(&c);
	doctor_check_key_file(&c);
	doctor_check_sleep(&c);
	hib_cmdline_free(&c.kc);
	return c.worst;
}

void hib_doctor_input_from(const struct hib_config *cfg, const struct hib_target_request *req,
			   const char *root, struct hib_doctor_input *ret)
{
	*ret = (struct hib_doctor_input){
		.root = root,
		.target = *req,
		.image_size = cfg->opts.image_size,
		.encrypt = cfg->encrypt,
		.require = cfg->opts.require_encryption,
		.zram = cfg->opts.zram,
		.key_file = cfg->key_file,
	};
}

void hib_doctor_first_fail(enum hib_doctor_verdict v, const char *check, const char *msg,
			   void *userdata)
{
	struct hib_doctor_first_fail *ff = userdata;

	if (v == HIB_DOCTOR_FAIL && !ff->check[0]) {
		snprintf(ff->check, sizeof(ff->check), "%s", check);
		snprintf(ff->msg, sizeof(ff->msg), "%s", msg);
	}
}
