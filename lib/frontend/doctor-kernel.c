// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * doctor's checks of the kernel and what boots it: /dev/snapshot, lockdown,
 * /sys/power/disk, the command line, the initramfs carrying hibernate resume,
 * and whether the kernel's own resume acts before ours.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "frontend/doctor-priv.h"
#include "frontend/initrd.h"
#include "util/util.h"

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

/* Does the initramfs of the running kernel run `hibernate resume`? Looked
 * for in its archives as the kernel unpacks them (frontend/initrd.c), by the
 * step's command with its path, as the initramfs-tools and dracut scripts
 * write it: the binary, also in the initramfs, says "hibernate resume" in its
 * messages but never after a slash. Nor in this check: the command is put
 * together at run time (through a volatile, which the compiler cannot fold
 * into one literal), so that no "/hibernate resume" is in the binary
 * (test-cli looks). */
void doctor_check_initramfs(struct doctor_ctx *c)
{
	struct hib_initrd_scan sc;
	struct hib_error err;
	struct utsname u;
	char rel[PATH_MAX], p[PATH_MAX], step[32];
	const char *volatile words = "hibernate resume";

	if (uname(&u) < 0)
		return;
	snprintf(step, sizeof(step), "/%s", words);
	snprintf(rel, sizeof(rel), "/boot/initrd.img-%s", u.release);
	doctor_path(c, rel, p, sizeof(p));
	if (access(p, F_OK) < 0) {
		doctor_report(
			c, HIB_DOCTOR_WARN, "initramfs",
			"no %s to look into: make sure your initramfs runs hibernate resume (the "
			"initramfs-tools and dracut integration do)",
			rel);
		return;
	}
	if (hib_initrd_scan(p, step, &sc, &err) < 0)
		doctor_report(c, HIB_DOCTOR_WARN, "initramfs",
			      "could not look into it: %s; check with lsinitramfs %s | grep "
			      "hibernate",
			      err.msg, p);
	else if (sc.result == HIB_INITRD_FOUND && strcmp(sc.codec, "none") == 0)
		doctor_report(c, HIB_DOCTOR_PASS, "initramfs",
			      "%s runs hibernate resume (uncompressed, found in archive %d)", p,
			      sc.archive + 1);
	else if (sc.result == HIB_INITRD_FOUND)
		doctor_report(c, HIB_DOCTOR_PASS, "initramfs",
			      "%s runs hibernate resume (%s-compressed, found in the main archive)",
			      p, sc.codec);
	else if (sc.result == HIB_INITRD_ABSENT)
		doctor_report(c, HIB_DOCTOR_WARN, "initramfs",
			      "the initramfs of %s (%s) does not run hibernate resume (all %d "
			      "of its archives looked into): run update-initramfs -u -k %s (or "
			      "dracut -f)",
			      u.release, p, sc.archives, u.release);
	else
		doctor_report(c, HIB_DOCTOR_WARN, "initramfs",
			      "%s: archive %d (at byte %llu) is compressed with %s, which "
			      "hibernate does not look into, and hibernate resume was not in "
			      "what came before it: check with lsinitramfs %s | grep hibernate",
			      p, sc.archive + 1, (unsigned long long)sc.offset, sc.codec, p);
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
