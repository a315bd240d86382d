// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hibernate doctor against a fake root: each check passes on a healthy
 * machine and fails, naming the problem, when that one thing is broken.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cmocka.h>

#include "frontend/battery.h"
#include "frontend/doctor.h"
#include "frontend/location.h"
#include "frontend/setupstate.h"
#include "helpers.h"
#include "initrd-build.h"

struct fx {
	char root[64];
	char swapfile[128];
	char seen[32][64];
	int verdict[32];
	char msg[32][1024];
	int n;
};

static void put(struct fx *f, const char *rel, const char *text)
{
	put_under(f->root, rel, text);
}

static void collect(enum hib_doctor_verdict v, const char *check, const char *msg, void *ud)
{
	struct fx *f = ud;

	if (f->n >= 32)
		return;
	snprintf(f->seen[f->n], sizeof(f->seen[0]), "%s", check);
	snprintf(f->msg[f->n], sizeof(f->msg[0]), "%s", msg);
	f->verdict[f->n] = (int)v;
	f->n++;
}

static int verdict_of(struct fx *f, const char *check, const char **msg)
{
	for (int i = 0; i < f->n; i++)
		if (strcmp(f->seen[i], check) == 0) {
			if (msg)
				*msg = f->msg[i];
			return f->verdict[i];
		}
	fail_msg("check %s did not report", check);
	return -1;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char p[256], swaps[1024];
	int fd;

	snprintf(f->root, sizeof(f->root), "/tmp/hib-doctor-XXXXXX");
	if (!mkdtemp(f->root))
		return -1;
	/* A healthy machine: 1 GiB RAM, a 1 GiB swap area (this file), no lockdown. */
	snprintf(f->swapfile, sizeof(f->swapfile), "%s/swaparea", f->root);
	fd = open(f->swapfile, O_RDWR | O_CREAT, 0600);
	make_swap_file(fd, 262144);
	close(fd);
	snprintf(p, sizeof(p), "%s/dev", f->root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/dev/snapshot", f->root);
	if (mknod(p, S_IFCHR | 0600, makedev(10, 231)) < 0)
		return -1;
	put(f, "/proc/meminfo", "MemTotal:        1048576 kB\nMemFree:  1000 kB\n");
	snprintf(swaps, sizeof(swaps),
		 "Filename\tType\tSize\tUsed\tPriority\n%s file 1048572 0 -2\n", f->swapfile);
	put(f, "/proc/swaps", swaps);
	put(f, "/sys/kernel/security/lockdown", "[none] integrity confidentiality\n");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

static int run_encrypted(struct fx *f, const char *cmdline, bool encrypt)
{
	struct hib_doctor_input in = {
		.root = f->root,
		.cmdline = cmdline,
		.target = { .spec = f->swapfile, .offset_set = true },
		.image_size = -1,
		.encrypt = encrypt,
	};

	f->n = 0;
	return hib_doctor(&in, collect, f);
}

static int run(struct fx *f, const char *cmdline)
{
	return run_encrypted(f, cmdline, false);
}

/* The encryption settings on top of the healthy machine's. */
static int run_encryption(struct fx *f, bool encrypt, enum hib_require require,
			  const char *key_file)
{
	struct hib_doctor_input in = {
		.root = f->root,
		.cmdline = "root=/dev/vda2 resume=/dev/vda1",
		.target = { .spec = f->swapfile, .offset_set = true },
		.image_size = -1,
		.encrypt = encrypt,
		.require = require,
		.key_file = key_file,
	};

	f->n = 0;
	return hib_doctor(&in, collect, f);
}

/* The policy is shown; encrypting without requiring it warns, requiring it
 * without encrypting fails; the key file is held to resume's rules. */
static void encryption_policy_and_key_file(void **state)
{
	struct fx *f = *state;
	char key[256];
	const char *msg = NULL;
	int fd;

	run_encryption(f, false, HIB_REQUIRE_NOTHING, NULL);
	assert_int_equal(verdict_of(f, "encryption", &msg), HIB_DOCTOR_PASS);
	assert_non_null(strstr(msg, "not encrypted"));
	for (int i = 0; i < f->n; i++)
		assert_string_not_equal(f->seen[i], "key-file");
	run_encryption(f, true, HIB_REQUIRE_PASSPHRASE, NULL);
	assert_int_equal(verdict_of(f, "encryption", &msg), HIB_DOCTOR_PASS);
	assert_non_null(strstr(msg, "only images sealed with a passphrase"));
	run_encryption(f, true, HIB_REQUIRE_NOTHING, NULL);
	assert_int_equal(verdict_of(f, "encryption", &msg), HIB_DOCTOR_WARN);
	assert_non_null(strstr(msg, "require-encryption = no"));
	run_encryption(f, false, HIB_REQUIRE_KEY_FILE, "/etc/hibernate.key");
	assert_int_equal(verdict_of(f, "encryption", &msg), HIB_DOCTOR_FAIL);
	assert_non_null(strstr(msg, "Set encrypt = yes"));

	if (geteuid() != 0)
		return; /* only root's key files pass */
	put(f, "/etc/hibernate.key", "0123456789abcdef0123456789abcdef\n");
	snprintf(key, sizeof(key), "%s/etc/hibernate.key", f->root);
	assert_int_equal(chmod(key, 0644), 0);
	assert_int_equal(run_encryption(f, true, HIB_REQUIRE_KEY_FILE, "/etc/hibernate.key"),
			 HIB_DOCTOR_FAIL);
	assert_int_equal(verdict_of(f, "key-file", &msg), HIB_DOCTOR_FAIL);
	assert_non_null(strstr(msg, "chmod 600"));
	fd = open(key, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fchmod(fd, 0600), 0);
	close(fd);
	run_encryption(f, true, HIB_REQUIRE_KEY_FILE, "/etc/hibernate.key");
	assert_int_equal(verdict_of(f, "key-file", NULL), HIB_DOCTOR_PASS);
	assert_int_equal(verdict_of(f, "encryption", NULL), HIB_DOCTOR_PASS);
}

/* Encryption required: where the kernel's own resume would act before
 * hibernate resume (which discards an image in the kernel's format). */
static void kernel_resume_before_ours_warns(void **state)
{
	static const char *const kernel_names[] = { "resume=/dev/nvme0n1p3",
						    "resume=PARTUUID=ab-01", "resume=259:3" };
	struct fx *f = *state;
	struct hib_doctor_input in = {
		.root = f->root,
		.target = { .spec = f->swapfile, .offset_set = true },
		.image_size = -1,
		.encrypt = true,
		.require = HIB_REQUIRE_KEY_FILE,
	};
	const char *msg = NULL;

	for (size_t i = 0; i < sizeof(kernel_names) / sizeof(kernel_names[0]); i++) {
		in.cmdline = kernel_names[i];
		f->n = 0;
		hib_doctor(&in, collect, f);
		assert_int_equal(verdict_of(f, "kernel-resume", &msg), HIB_DOCTOR_WARN);
		assert_non_null(strstr(msg, "resume=UUID="));
	}
	/* Names only an initramfs resolves; noresume. */
	in.cmdline = "resume=UUID=1234 resume_offset=0";
	f->n = 0;
	hib_doctor(&in, collect, f);
	assert_int_equal(verdict_of(f, "kernel-resume", NULL), HIB_DOCTOR_PASS);
	in.cmdline = "resume=/dev/mapper/vg-swap";
	f->n = 0;
	hib_doctor(&in, collect, f);
	assert_int_equal(verdict_of(f, "kernel-resume", NULL), HIB_DOCTOR_PASS);
	/* initramfs-tools' resume step without ours; then with it. */
	put(f, "/usr/share/initramfs-tools/scripts/local-premount/resume", "#!/bin/sh\n");
	f->n = 0;
	hib_doctor(&in, collect, f);
	assert_int_equal(verdict_of(f, "kernel-resume", &msg), HIB_DOCTOR_WARN);
	assert_non_null(strstr(msg, "initramfs-tools"));
	put(f, "/usr/share/initramfs-tools/scripts/local-premount/hibernate", "#!/bin/sh\n");
	f->n = 0;
	hib_doctor(&in, collect, f);
	assert_int_equal(verdict_of(f, "kernel-resume", NULL), HIB_DOCTOR_PASS);
	/* dracut's resume module without ours. */
	put(f, "/usr/lib/dracut/modules.d/95resume/module-setup.sh", "#!/bin/bash\n");
	f->n = 0;
	hib_doctor(&in, collect, f);
	assert_int_equal(verdict_of(f, "kernel-resume", &msg), HIB_DOCTOR_WARN);
	assert_non_null(strstr(msg, "dracut"));
	/* Without required encryption: no finding at all. */
	in.require = HIB_REQUIRE_NOTHING;
	in.cmdline = "resume=/dev/nvme0n1p3";
	f->n = 0;
	hib_doctor(&in, collect, f);
	for (int i = 0; i < f->n; i++)
		assert_string_not_equal(f->seen[i], "kernel-resume");
}

static void healthy_machine_passes(void **state)
{
	struct fx *f = *state;

	run(f, "root=/dev/vda2 resume=/dev/vda1");
	assert_int_equal(verdict_of(f, "snapshot-device", NULL), HIB_DOCTOR_PASS);
	assert_int_equal(verdict_of(f, "lockdown", NULL), HIB_DOCTOR_PASS);
	assert_int_equal(verdict_of(f, "kernel-cmdline", NULL), HIB_DOCTOR_PASS);
	assert_int_equal(verdict_of(f, "swap-kind", NULL), HIB_DOCTOR_PASS);
	assert_int_equal(verdict_of(f, "target", NULL), HIB_DOCTOR_PASS);
	assert_int_equal(verdict_of(f, "space", NULL), HIB_DOCTOR_PASS);
	assert_int_equal(verdict_of(f, "resume-offset", NULL), HIB_DOCTOR_PASS);
	/* No /boot here: a warning that says how to check, not a pass. */
	assert_int_equal(verdict_of(f, "initramfs", NULL), HIB_DOCTOR_WARN);
}

/* Did @check report at all? */
static bool reported(struct fx *f, const char *check)
{
	for (int i = 0; i < f->n; i++)
		if (strcmp(f->seen[i], check) == 0)
			return true;
	return false;
}

/* What the running kernel's initramfs carries (the hooks' record) against the
 * target; and setup's size against this machine's RAM. */
static void location_and_setup_size(void **state)
{
	struct fx *f = *state;
	char rel[512], rec[1024];
	const char *msg = "";
	struct utsname u;

	assert_int_equal(uname(&u), 0);
	snprintf(rel, sizeof(rel), "%s/%s", HIB_LOCATION_DIR, u.release);
	/* Set up by hand: no record, said; resume= as before. */
	run(f, "resume=/dev/vda1");
	assert_int_equal(verdict_of(f, "location", &msg), HIB_DOCTOR_PASS);
	assert_non_null(strstr(msg, "no record"));
	assert_true(reported(f, "resume-offset"));
	assert_false(reported(f, "setup-size"));
	/* A record of another place: no boot finds the image. */
	put(f, rel, "location UUID=other 7\nbuilt 1\n");
	run(f, "resume=/dev/vda1");
	assert_int_equal(verdict_of(f, "location", &msg), HIB_DOCTOR_FAIL);
	assert_non_null(strstr(msg, "update-initramfs -u"));
	/* The record of this target: resume= is not needed. */
	snprintf(rec, sizeof(rec), "location %s 0\n", f->swapfile);
	put(f, rel, rec);
	run(f, "root=/dev/vda2");
	assert_int_equal(verdict_of(f, "location", NULL), HIB_DOCTOR_PASS);
	assert_false(reported(f, "resume-offset"));
	/* setup ran: a record is required, and the size is checked. */
	put(f, HIB_SETUP_STATE_FILE, "target x\n");
	run(f, "root=/dev/vda2");
	assert_int_equal(verdict_of(f, "setup-size", NULL), HIB_DOCTOR_PASS);
	snprintf(rec, sizeof(rec), "%s%s", f->root, rel);
	unlink(rec);
	run(f, "root=/dev/vda2");
	assert_int_equal(verdict_of(f, "location", &msg), HIB_DOCTOR_FAIL);
	assert_non_null(strstr(msg, "no record"));
	/* RAM grew to 4 GiB: the 1 GiB target is short of setup's size. */
	put(f, "/proc/meminfo", "MemTotal:        4194304 kB\nMemFree:  1000 kB\n");
	run(f, "root=/dev/vda2");
	assert_int_equal(verdict_of(f, "setup-size", &msg), HIB_DOCTOR_WARN);
	assert_non_null(strstr(msg, "hibernate setup"));
}

static void missing_snapshot_device_fails(void **state)
{
	struct fx *f = *state;
	char p[256];
	const char *msg = "";

	snprintf(p, sizeof(p), "%s/dev/snapshot", f->root);
	unlink(p);
	assert_int_equal(run(f, "resume=/dev/vda1"), HIB_DOCTOR_FAIL);
	assert_int_equal(verdict_of(f, "snapshot-device", &msg), HIB_DOCTOR_FAIL);
	assert_non_null(strstr(msg, "CONFIG_HIBERNATION_SNAPSHOT_DEV"));
}

static void lockdown_fails(void **state)
{
	struct fx *f = *state;
	const char *msg = "";

	put(f, "/sys/kernel/security/lockdown", "none [integrity] confidentiality\n");
	assert_int_equal(run(f, "resume=/dev/vda1"), HIB_DOCTOR_FAIL);
	assert_int_equal(verdict_of(f, "lockdown", &msg), HIB_DOCTOR_FAIL);
	assert_non_null(strstr(msg, "Secure Boot"));
	/* The kernel ignores lockdown=none under Secure Boot: not advice to give. */
	assert_null(strstr(msg, "boot with lockdown=none"));
	assert_non_null(strstr(msg, "mokutil --disable-validation"));
}

static void power_disk_disabled_fails(void **state)
{
	struct fx *f = *state;
	const char *msg = "";

	put(f, "/sys/power/disk", "[platform] shutdown reboot suspend test_resume\n");
	run(f, "resume=/dev/vda1");
	assert_int_equal(verdict_of(f, "power-disk", NULL), HIB_DOCTOR_PASS);
	put(f, "/sys/power/disk", "[disabled]\n");
	assert_int_equal(run(f, "resume=/dev/vda1"), HIB_DOCTOR_FAIL);
	assert_int_equal(verdict_of(f, "power-disk", &msg), HIB_DOCTOR_FAIL);
	assert_non_null(strstr(msg, "[disabled]"));
	assert_non_null(strstr(msg, "memfd_secret"));
	/* nohibernate disables it too: then that is the reason given. */
	run(f, "quiet nohibernate");
	assert_int_equal(verdict_of(f, "power-disk", &msg), HIB_DOCTOR_FAIL);
	assert_non_null(strstr(msg, "command line"));
}

/* Swap on an LV on LUKS: the LV (dm-1) is not dm-crypt itself, its slave is. */
static void put_lv_on_luks(struct fx *f)
{
	char p[256];

	put(f, "/sys/class/block/dm-1/dev", "253:1\n");
	put(f, "/sys/dev/block/253:1/dm/uuid", "LVM-abcdef\n");
	put(f, "/sys/dev/block/253:1/slaves/dm-0/.keep", "");
	put(f, "/sys/class/block/dm-0/dev", "253:0\n");
	put(f, "/sys/dev/block/253:0/dm/uuid", "CRYPT-LUKS2-0123-sda3_crypt\n");
	snprintf(p, sizeof(p), "%s/dev/dm-1", f->root);
	assert_int_equal(mknod(p, S_IFBLK | 0600, makedev(253, 1)), 0);
	snprintf(p, sizeof(p), "%s/dev/mapper", f->root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/dev/mapper/vg-swap", f->root);
	assert_int_equal(symlink("../dm-1", p), 0);
}

static void clear_swap_warns_only_when_encrypting(void **state)
{
	struct fx *f = *state;
	char swaps[1024];
	const char *msg = "";

	put_lv_on_luks(f);
	snprintf(swaps, sizeof(swaps),
		 "Filename\tType\tSize\tUsed\tPriority\n%s file 1048572 0 -2\n"
		 "/dev/mapper/vg-swap partition 1048572 0 -3\n/dev/zram0 partition 1000 0 100\n",
		 f->swapfile);
	put(f, "/proc/swaps", swaps);

	run(f, "resume=/dev/vda1");
	assert_int_equal(verdict_of(f, "clear-swap", &msg), HIB_DOCTOR_PASS);
	assert_non_null(strstr(msg, "not encrypted"));

	/* Encrypting: the plain swap file is named, the LV on LUKS and zram are not. */
	run_encrypted(f, "resume=/dev/vda1", true);
	assert_int_equal(verdict_of(f, "clear-swap", &msg), HIB_DOCTOR_WARN);
	assert_non_null(strstr(msg, f->swapfile));
	assert_null(strstr(msg, "vg-swap"));
	assert_null(strstr(msg, "/dev/zram0"));
	assert_non_null(strstr(msg, "dm-crypt"));

	/* Only the LV on LUKS (and zram): nothing in the clear. */
	put(f, "/proc/swaps",
	    "Filename\tType\tSize\tUsed\tPriority\n/dev/mapper/vg-swap partition 1048572 0 -3\n"
	    "/dev/zram0 partition 1000 0 100\n");
	run_encrypted(f, "resume=/dev/vda1", true);
	assert_int_equal(verdict_of(f, "clear-swap", NULL), HIB_DOCTOR_PASS);
}

/* A dm device in the fake /sys: its number, dm/uuid and dm/name, and the
 * devices it maps onto (slaves, by kernel name). */
static void put_dm(struct fx *f, const char *kname, dev_t dev, const char *uuid, const char *name,
		   const char *slave)
{
	char rel[256], text[256];

	snprintf(rel, sizeof(rel), "/sys/class/block/%s/dev", kname);
	snprintf(text, sizeof(text), "%u:%u\n", major(dev), minor(dev));
	put(f, rel, text);
	snprintf(rel, sizeof(rel), "/sys/dev/block/%u:%u/dm/uuid", major(dev), minor(dev));
	snprintf(text, sizeof(text), "%s\n", uuid);
	put(f, rel, text);
	snprintf(rel, sizeof(rel), "/sys/dev/block/%u:%u/dm/name", major(dev), minor(dev));
	snprintf(text, sizeof(text), "%s\n", name);
	put(f, rel, text);
	if (slave) {
		snprintf(rel, sizeof(rel), "/sys/dev/block/%u:%u/slaves/%s/.keep", major(dev),
			 minor(dev), slave);
		put(f, rel, "");
	}
}

/* The root filesystem mounted from @dev (mountinfo's third field). */
static void put_root_on(struct fx *f, dev_t dev)
{
	char text[256];

	snprintf(text, sizeof(text),
		 "21 1 0:20 / /proc rw - proc proc rw\n"
		 "25 1 %u:%u / / rw,relatime - ext4 /dev/mapper/x rw\n",
		 major(dev), minor(dev));
	put(f, "/proc/self/mountinfo", text);
}

/* The test's swap area file as if its filesystem were on dm device @uuid
 * (@name) mapping onto @slave: its st_dev is what the doctor looks up. */
static void put_target_dm(struct fx *f, const char *uuid, const char *name, const char *slave)
{
	struct stat st;
	char kname[32];

	assert_int_equal(stat(f->swapfile, &st), 0);
	snprintf(kname, sizeof(kname), "fake%u", minor(st.st_dev));
	put_dm(f, kname, st.st_dev, uuid, name, slave);
}

/* encrypted-root passes, saying @text. */
static void encrypted_root_passes(struct fx *f, const char *text)
{
	const char *msg = "";

	run(f, "resume=/dev/vda1");
	assert_int_equal(verdict_of(f, "encrypted-root", &msg), HIB_DOCTOR_PASS);
	if (!strstr(msg, text))
		fail_msg("encrypted-root says '%s', not '%s'", msg, text);
}

/* Root on LUKS with the target plain: the image would carry the root's key in
 * the clear. A WARN naming both and the fixes; none when encrypting. */
static void plain_target_under_encrypted_root_warns(void **state)
{
	struct fx *f = *state;
	const char *msg = "";

	put_dm(f, "dm-5", makedev(253, 5), "CRYPT-LUKS2-abcd-root_crypt", "root_crypt", NULL);
	put_root_on(f, makedev(253, 5));
	run(f, "resume=/dev/vda1");
	assert_int_equal(verdict_of(f, "encrypted-root", &msg), HIB_DOCTOR_WARN);
	assert_non_null(strstr(msg, "root_crypt"));
	assert_non_null(strstr(msg, f->swapfile));
	assert_non_null(strstr(msg, "encrypt = yes"));
	assert_non_null(strstr(msg, "swap on the encrypted volume"));

	run_encrypted(f, "resume=/dev/vda1", true);
	assert_int_equal(verdict_of(f, "encrypted-root", &msg), HIB_DOCTOR_PASS);
	assert_non_null(strstr(msg, "image is encrypted"));
}

static void plain_target_under_plain_root_passes(void **state)
{
	struct fx *f = *state;

	put_dm(f, "dm-5", makedev(253, 5), "LVM-rootvgroot", "vg-root", NULL);
	put_root_on(f, makedev(253, 5));
	encrypted_root_passes(f, "not on dm-crypt");
}

/* Debian's LVM on LUKS: root and swap are LVs of a volume group on one LUKS
 * container. The target is found on dm-crypt through LVM, no WARN. */
static void lv_on_luks_target_is_encrypted(void **state)
{
	struct fx *f = *state;

	put_dm(f, "dm-0", makedev(253, 0), "CRYPT-LUKS2-0123-sda3_crypt", "sda3_crypt", NULL);
	put_dm(f, "dm-1", makedev(253, 1), "LVM-vgrootlv", "vg-root", "dm-0");
	put_target_dm(f, "LVM-vgswaplv", "vg-swap", "dm-0");
	put_root_on(f, makedev(253, 1));
	encrypted_root_passes(f, "on dm-crypt through LVM (sda3_crypt)");
	encrypted_root_passes(f, f->swapfile);
}

/* LUKS on an LV (the LV is the container, the mapping above it the swap):
 * the same verdict, told the other way round. */
static void luks_on_lv_target_is_encrypted(void **state)
{
	struct fx *f = *state;

	put_dm(f, "dm-5", makedev(253, 5), "CRYPT-LUKS2-abcd-root_crypt", "root_crypt", NULL);
	put_root_on(f, makedev(253, 5));
	put_dm(f, "dm-2", makedev(253, 2), "LVM-vgswaplv", "vg-swapcrypt", NULL);
	put_target_dm(f, "CRYPT-LUKS2-4567-swap_crypt", "swap_crypt", "dm-2");
	encrypted_root_passes(f, "on dm-crypt on LVM (swap_crypt)");
}

/* @len bytes at @off of the target, then the doctor's target check FAILs:
 * what it says. */
static const char *target_fails_with(struct fx *f, const void *bytes, size_t len, off_t off)
{
	const char *msg = "";
	int fd = open(f->swapfile, O_RDWR);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, bytes, len, off), (ssize_t)len);
	close(fd);
	assert_int_equal(run(f, "resume=/dev/vda1"), HIB_DOCTOR_FAIL);
	assert_int_equal(verdict_of(f, "target", &msg), HIB_DOCTOR_FAIL);
	return msg;
}

/* The LUKS container named instead of its opened mapping: refused, with the fix. */
static void luks_container_target_fails(void **state)
{
	struct fx *f = *state;
	const char *msg = target_fails_with(f, "LUKS\xba\xbe\0\2", 8, 0);

	assert_non_null(strstr(msg, "LUKS container"));
	assert_non_null(strstr(msg, "cryptsetup open"));
	assert_non_null(strstr(msg, "/dev/mapper/NAME"));
	for (int i = 0; i < f->n; i++)
		assert_string_not_equal(f->seen[i], "space");
}

static void nohibernate_fails(void **state)
{
	struct fx *f = *state;
	const char *msg = "";

	assert_int_equal(run(f, "quiet nohibernate"), HIB_DOCTOR_FAIL);
	assert_int_equal(verdict_of(f, "kernel-cmdline", &msg), HIB_DOCTOR_FAIL);
	assert_non_null(strstr(msg, "nohibernate"));
}

static void zram_only_fails(void **state)
{
	struct fx *f = *state;
	const char *msg = "";

	put(f, "/proc/swaps",
	    "Filename\tType\tSize\tUsed\tPriority\n/dev/zram0 partition 4000000 0 100\n");
	run(f, "resume=/dev/vda1");
	assert_int_equal(verdict_of(f, "swap-kind", &msg), HIB_DOCTOR_FAIL);
	assert_non_null(strstr(msg, "zram"));
}

/* zram beside the target: what the cycle will do with it, by zram = and by
 * whether its pages fit. */
static int run_zram(struct fx *f, enum hib_zram_mode mode)
{
	struct hib_doctor_input in = {
		.root = f->root,
		.cmdline = "resume=/dev/vda1",
		.target = { .spec = f->swapfile, .offset_set = true },
		.image_size = -1,
		.zram = mode,
	};

	f->n = 0;
	return hib_doctor(&in, collect, f);
}

static void zram_beside_says_what_the_cycle_does(void **state)
{
	struct fx *f = *state;
	const char *msg = "";
	char swaps[1024];

	run(f, "resume=/dev/vda1");
	assert_int_equal(verdict_of(f, "zram", &msg), HIB_DOCTOR_PASS);
	assert_non_null(strstr(msg, "no zram swap"));

	put(f, "/proc/meminfo", "MemTotal: 1048576 kB\nMemAvailable: 600000 kB\n");
	snprintf(swaps, sizeof(swaps),
		 "Filename\tType\tSize\tUsed\tPriority\n"
		 "/dev/zram0 partition 500000 262144 100\n%s file 1048572 0 -2\n",
		 f->swapfile);
	put(f, "/proc/swaps", swaps);
	run_zram(f, HIB_ZRAM_SWAPOFF);
	assert_int_equal(verdict_of(f, "zram", &msg), HIB_DOCTOR_PASS);
	assert_string_equal(msg, "/dev/zram0 is active swap at priority 100 above the target's -2: "
				 "hibernate swaps it off for the cycle (256 MiB back into memory) "
				 "and on again after");
	run_zram(f, HIB_ZRAM_KEEP);
	assert_int_equal(verdict_of(f, "zram", &msg), HIB_DOCTOR_WARN);
	assert_non_null(strstr(msg, "zram = keep leaves it on"));

	/* 256 MiB in zram, 100 MiB available, the target's room does not count. */
	put(f, "/proc/meminfo", "MemTotal: 1048576 kB\nMemAvailable: 102400 kB\n");
	run_zram(f, HIB_ZRAM_SWAPOFF);
	assert_int_equal(verdict_of(f, "zram", &msg), HIB_DOCTOR_WARN);
	assert_non_null(strstr(msg, "/dev/zram0 holds 256 MiB"));
	assert_non_null(strstr(msg, "(100 MiB, 64 MiB kept free)"));
}

static void not_swap_fails(void **state)
{
	struct fx *f = *state;

	assert_non_null(strstr(target_fails_with(f, "EXT4GARBAGE", 10, 4086), "not a swap area"));
}

static void missing_target_fails(void **state)
{
	struct fx *f = *state;
	struct hib_doctor_input in = { .root = f->root,
				       .cmdline = "",
				       .target = { .spec = "/nonexistent/x" },
				       .image_size = -1 };
	const char *msg = "";

	f->n = 0;
	assert_int_equal(hib_doctor(&in, collect, f), HIB_DOCTOR_FAIL);
	assert_int_equal(verdict_of(f, "target", &msg), HIB_DOCTOR_FAIL);
	assert_non_null(strstr(msg, "/nonexistent/x"));
}

/* /proc/swaps with the target at @used KiB of 1 GiB, and @other another area. */
static void swaps_with(struct fx *f, unsigned long used, const char *other)
{
	char swaps[1024];

	snprintf(swaps, sizeof(swaps),
		 "Filename\tType\tSize\tUsed\tPriority\n%s%s file 1048572 %lu -2\n", other,
		 f->swapfile, used);
	put(f, "/proc/swaps", swaps);
}

static void small_swap_fails_with_numbers(void **state)
{
	struct fx *f = *state;
	const char *msg = "";

	/* 1 GiB of RAM wants up to 409 MiB of image; 100 MiB free is not enough. */
	swaps_with(f, 946172, "");
	run(f, "resume=/dev/vda1");
	assert_int_equal(verdict_of(f, "space", &msg), HIB_DOCTOR_FAIL);
	assert_non_null(strstr(msg, "100 MiB free"));
	assert_non_null(strstr(msg, "409 MiB"));
	/* Half: enough only if it compresses: a warning. */
	swaps_with(f, 800000, "");
	run(f, "resume=/dev/vda1");
	assert_int_equal(verdict_of(f, "space", NULL), HIB_DOCTOR_WARN);
}

/* The image goes to the target only: free room in other swap areas does not
 * help, and a target that is not active counts whole. */
static void only_the_targets_room_counts(void **state)
{
	struct fx *f = *state;
	const char *msg = "";

	swaps_with(f, 946172, "/dev/vdb1 partition 8388604 0 -3\n");
	run(f, "resume=/dev/vda1");
	assert_int_equal(verdict_of(f, "space", &msg), HIB_DOCTOR_FAIL);
	assert_non_null(strstr(msg, "100 MiB free"));
	put(f, "/proc/swaps",
	    "Filename\tType\tSize\tUsed\tPriority\n/dev/vdb1 partition 1048572 1048572 -3\n");
	run(f, "resume=/dev/vda1");
	assert_int_equal(verdict_of(f, "space", &msg), HIB_DOCTOR_PASS);
	assert_non_null(strstr(msg, "1024 MiB free"));
}

/* A target hibernate refuses: its room is not checked (it would only add noise
 * to the one FAIL that matters). */
static void refused_target_has_no_space_line(void **state)
{
	struct fx *f = *state;
	char path[300];
	struct hib_doctor_input in = { .root = f->root,
				       .cmdline = "",
				       .target = { .spec = path, .offset_set = true },
				       .image_size = -1 };
	FILE *o;

	snprintf(path, sizeof(path), "%s/notswap", f->root);
	o = fopen(path, "w");
	assert_non_null(o);
	for (int i = 0; i < 256 * 4096; i++)
		fputc(0, o);
	fclose(o);
	f->n = 0;
	assert_int_equal(hib_doctor(&in, collect, f), HIB_DOCTOR_FAIL);
	assert_int_equal(verdict_of(f, "target", NULL), HIB_DOCTOR_FAIL);
	for (int i = 0; i < f->n; i++)
		if (strcmp(f->seen[i], "space") == 0)
			fail_msg("space checked on a refused target: %s", f->msg[i]);
}

static void no_resume_param_warns(void **state)
{
	struct fx *f = *state;

	run(f, "quiet");
	assert_int_equal(verdict_of(f, "resume-offset", NULL), HIB_DOCTOR_WARN);
}

static void random_key_crypt_swap_is_not_checked_on_files(void **state)
{
	struct fx *f = *state;

	/* A regular file is no dm-crypt device: the check has nothing to say. */
	run(f, "resume=/dev/vda1");
	for (int i = 0; i < f->n; i++)
		assert_string_not_equal(f->seen[i], "encrypted-swap");
}

/* The running kernel's /boot/initrd.img as Debian writes it: an early
 * uncompressed cpio, then the main one compressed; @magic instead of the
 * main archive when given. */
static void put_initrd(struct fx *f, const char *script, const char *magic, char *rel)
{
	struct tbuf b = { 0 }, m = { 0 };
	char path[512];
	FILE *p = popen("uname -r", "r");

	assert_non_null(p);
	assert_non_null(fgets(rel, 256, p));
	pclose(p);
	rel[strcspn(rel, "\n")] = 0;
	cpio_archive(&b, "kernel/x86/microcode/AuthenticAMD.bin", "ucode", 5);
	cpio_archive(&m, "scripts/local-premount/hibernate", script, strlen(script));
	if (magic)
		tb_put(&b, magic, strlen(magic));
	else
		zstd_append(&b, &m);
	snprintf(path, sizeof(path), "%s/boot", f->root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/boot/initrd.img-%s", f->root, rel);
	tb_write(&b, path);
	free(b.p);
	free(m.p);
}

static void initramfs_with_resume_step_passes(void **state)
{
	struct fx *f = *state;
	const char *msg = "";
	char rel[256];

	put_initrd(f, "/usr/sbin/hibernate resume \"$@\"\n", NULL, rel);
	run(f, "resume=/dev/vda1");
	assert_int_equal(verdict_of(f, "initramfs", &msg), HIB_DOCTOR_PASS);
	assert_non_null(strstr(msg, "zstd-compressed, found in the main archive"));
}

/* Looked into whole, and the step is not there: the fix, not "may be". */
static void initramfs_without_resume_step_warns(void **state)
{
	struct fx *f = *state;
	const char *msg = "";
	char rel[256], fix[300];

	/* The binary's own messages name the step without its path: not it. */
	put_initrd(f, "warn \"hibernate resume failed\"; /usr/sbin/hibernate config location\n",
		   NULL, rel);
	run(f, "resume=/dev/vda1");
	assert_int_equal(verdict_of(f, "initramfs", &msg), HIB_DOCTOR_WARN);
	assert_non_null(strstr(msg, "does not run hibernate resume"));
	snprintf(fix, sizeof(fix), "update-initramfs -u -k %s", rel);
	assert_non_null(strstr(msg, fix));
	assert_null(strstr(msg, "may be"));
}

/* gzip is not linked: the WARN names it and the command to check. */
static void initramfs_gzip_is_named(void **state)
{
	struct fx *f = *state;
	const char *msg = "";
	char rel[256];

	put_initrd(f, "", "\x1f\x8b\x08", rel);
	run(f, "resume=/dev/vda1");
	assert_int_equal(verdict_of(f, "initramfs", &msg), HIB_DOCTOR_WARN);
	assert_non_null(strstr(msg, "compressed with gzip"));
	assert_non_null(strstr(msg, "lsinitramfs"));
	assert_null(strstr(msg, "does not run"));
}

/* The sleep section: what suspend-then-hibernate would do now, from the
 * fake root's power_supply, learned rates and sleep.conf. */
static void sleep_section(void **state)
{
	struct fx *f = *state;
	const char *msg = NULL;

	/* A desktop: the timer. */
	run(f, "root=/dev/vda2 resume=/dev/vda1");
	assert_int_equal(verdict_of(f, "sleep", &msg), HIB_DOCTOR_PASS);
	assert_non_null(strstr(msg, "no battery: hibernates after 2.0 h in RAM"));
	/* A laptop on battery at 60 % with 3 %/h learned and an alarm. */
	put(f, "/sys/class/power_supply/BAT0/type", "Battery\n");
	put(f, "/sys/class/power_supply/BAT0/status", "Discharging\n");
	put(f, "/sys/class/power_supply/BAT0/energy_now", "30000000\n");
	put(f, "/sys/class/power_supply/BAT0/energy_full", "50000000\n");
	put(f, "/sys/class/power_supply/BAT0/alarm", "2500000\n");
	put(f, "/sys/class/power_supply/AC/type", "Mains\n");
	put(f, "/sys/class/power_supply/AC/online", "0\n");
	run(f, "root=/dev/vda2 resume=/dev/vda1");
	verdict_of(f, "sleep", &msg);
	assert_non_null(strstr(msg, "on battery, BAT0 60.0% at 20.0%/h (assumed"));
	assert_non_null(strstr(msg, "no rate learned yet: 20 %/h assumed"));
	assert_non_null(strstr(msg, "firmware battery alarm usable"));
	/* The rate learned: BAT0 has no identity but its name. */
	{
		struct hib_power p;
		struct hib_rate_store rs = { 0 };
		struct hib_error err;
		char dir[128], file[128];

		snprintf(dir, sizeof(dir), "%s/sys/class/power_supply", f->root);
		snprintf(file, sizeof(file), "%s/var/lib/hibernate/battery-rate", f->root);
		assert_int_equal(hib_power_read(dir, &p, &err), 0);
		hib_rate_put(&rs, p.bat[0].id, 30);
		put(f, "/var/lib/.keep", "");
		assert_int_equal(hib_rate_save(file, &rs, &err), 0);
	}
	run(f, "root=/dev/vda2 resume=/dev/vda1");
	verdict_of(f, "sleep", &msg);
	assert_non_null(strstr(msg, "BAT0 60.0% at 3.0%/h (learned)"));
	assert_non_null(strstr(msg, "about 18.1 h in RAM before hibernating"));
	/* On AC with HibernateOnACPower=no; then refused by sleep.conf. */
	put(f, "/sys/class/power_supply/AC/online", "1\n");
	put(f, "/etc/systemd/sleep.conf", "[Sleep]\nHibernateOnACPower=no\n");
	run(f, "root=/dev/vda2 resume=/dev/vda1");
	verdict_of(f, "sleep", &msg);
	assert_non_null(strstr(msg, "stays in RAM while on AC (HibernateOnACPower=no)"));
	put(f, "/etc/systemd/sleep.conf", "[Sleep]\nAllowSuspendThenHibernate=no\n");
	run(f, "root=/dev/vda2 resume=/dev/vda1");
	verdict_of(f, "sleep", &msg);
	assert_non_null(strstr(msg, "refused: sleep.conf says AllowSuspendThenHibernate=no"));
	put(f, "/etc/systemd/sleep.conf", "[Sleep]\nHibernateOnACPower=perhaps\n");
	run(f, "root=/dev/vda2 resume=/dev/vda1");
	assert_int_equal(verdict_of(f, "sleep", &msg), HIB_DOCTOR_WARN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(healthy_machine_passes, setup, teardown),
		cmocka_unit_test_setup_teardown(location_and_setup_size, setup, teardown),
		cmocka_unit_test_setup_teardown(missing_snapshot_device_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(lockdown_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(power_disk_disabled_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(clear_swap_warns_only_when_encrypting, setup,
						teardown),
		cmocka_unit_test_setup_teardown(plain_target_under_encrypted_root_warns, setup,
						teardown),
		cmocka_unit_test_setup_teardown(plain_target_under_plain_root_passes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(lv_on_luks_target_is_encrypted, setup, teardown),
		cmocka_unit_test_setup_teardown(luks_on_lv_target_is_encrypted, setup, teardown),
		cmocka_unit_test_setup_teardown(luks_container_target_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(nohibernate_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(zram_only_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(zram_beside_says_what_the_cycle_does, setup,
						teardown),
		cmocka_unit_test_setup_teardown(not_swap_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(missing_target_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(small_swap_fails_with_numbers, setup, teardown),
		cmocka_unit_test_setup_teardown(only_the_targets_room_counts, setup, teardown),
		cmocka_unit_test_setup_teardown(refused_target_has_no_space_line, setup, teardown),
		cmocka_unit_test_setup_teardown(no_resume_param_warns, setup, teardown),
		cmocka_unit_test_setup_teardown(random_key_crypt_swap_is_not_checked_on_files,
						setup, teardown),
		cmocka_unit_test_setup_teardown(initramfs_with_resume_step_passes, setup, teardown),
		cmocka_unit_test_setup_teardown(initramfs_without_resume_step_warns, setup,
						teardown),
		cmocka_unit_test_setup_teardown(initramfs_gzip_is_named, setup, teardown),
		cmocka_unit_test_setup_teardown(encryption_policy_and_key_file, setup, teardown),
		cmocka_unit_test_setup_teardown(kernel_resume_before_ours_warns, setup, teardown),
		cmocka_unit_test_setup_teardown(sleep_section, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
