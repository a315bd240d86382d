// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * doctor's checks of encryption: the target on dm-crypt and its key, the root
 * filesystem's key carried into an image in the clear, swap in the clear
 * beside an encrypted image, what resume takes (require-encryption), and the
 * key file.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/magic.h>

#include "frontend/doctor-priv.h"
#include "frontend/keyfile.h"
#include "storage/btrfs.h"
#include "storage/dmstack.h"
#include "util/util.h"

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
