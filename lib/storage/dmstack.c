// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The device-mapper stack under a target, from sysfs: each dm device has
 * dm/name, dm/uuid (LVM's start "LVM-", dm-crypt's "CRYPT-") and slaves/,
 * the devices it maps onto. No ioctl and no libdevmapper: the same reads
 * work in an initramfs, for the doctor, and against a fake /sys in tests.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "storage/dmstack.h"
#include "storage/target-priv.h"
#include "util/error.h"
#include "util/util.h"

#define DM_DEPTH 8

/* /sys/dev/block/MAJ:MIN/@attr's first line into @buf; -errno when absent. */
static int read_attr(const char *root, dev_t dev, const char *attr, char *buf, size_t len)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s/sys/dev/block/%u:%u/%s", root ? root : "", major(dev),
		 minor(dev), attr);
	f = fopen(p, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static bool uuid_starts(const char *root, dev_t dev, const char *prefix)
{
	char uuid[256];

	return read_attr(root, dev, "dm/uuid", uuid, sizeof(uuid)) == 0 &&
	       strncmp(uuid, prefix, strlen(prefix)) == 0;
}

/* The devices @dev maps onto, at most @max into @ret; how many there were. */
static int slaves_of(const char *root, dev_t dev, dev_t *ret, int max)
{
	char p[PATH_MAX];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(p, sizeof(p), "%s/sys/dev/block/%u:%u/slaves", root ? root : "", major(dev),
		 minor(dev));
	d = opendir(p);
	if (!d)
		return 0;
	while (n < max && (e = readdir(d))) {
		char num[32], q[PATH_MAX];
		unsigned int ma, mi;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(q, sizeof(q), "%s/sys/class/block/%s/dev", root ? root : "", e->d_name);
		f = fopen(q, "re");
		if (!f)
			continue;
		if (fgets(num, sizeof(num), f) && sscanf(num, "%u:%u", &ma, &mi) == 2)
			ret[n++] = makedev(ma, mi);
		fclose(f);
	}
	closedir(d);
	return n;
}

static int crypt_below(const char *root, dev_t dev, int depth, bool lvm_above,
		       struct hib_dm_crypt *ret)
{
	dev_t s[8];
	int n;

	if (uuid_starts(root, dev, "CRYPT-")) {
		*ret = (struct hib_dm_crypt){ .dev = dev, .lvm_above = lvm_above };
		if (read_attr(root, dev, "dm/name", ret->name, sizeof(ret->name)) < 0)
			ret->name[0] = 0;
		n = slaves_of(root, dev, s, (int)ARRAY_SIZE(s));
		for (int i = 0; i < n; i++)
			ret->lvm_below |= uuid_starts(root, s[i], "LVM-");
		return 1;
	}
	if (depth >= DM_DEPTH)
		return 0;
	lvm_above |= uuid_starts(root, dev, "LVM-");
	n = slaves_of(root, dev, s, (int)ARRAY_SIZE(s));
	for (int i = 0; i < n; i++)
		if (crypt_below(root, s[i], depth + 1, lvm_above, ret) == 1)
			return 1;
	return 0;
}

int hib_dm_crypt_below(const char *root, dev_t dev, struct hib_dm_crypt *ret)
{
	struct hib_dm_crypt c;

	if (!dev || crypt_below(root, dev, 0, false, &c) != 1)
		return 0;
	*ret = c;
	return 1;
}

const char *hib_dm_crypt_how(const struct hib_dm_crypt *c)
{
	return c->lvm_above   ? "dm-crypt through LVM"
	       : c->lvm_below ? "dm-crypt on LVM"
			      : "dm-crypt";
}

int hib_dm_thin_pool_of(const char *root, dev_t dev, char *ret_pool, size_t len)
{
	static const char tpool[] = "-tpool";
	char uuid[256];
	dev_t s[8];
	int n;

	if (!dev || !uuid_starts(root, dev, "LVM-"))
		return 0;
	/* LVM maps a thin volume onto the pool's hidden "-tpool" layer; a
	 * regular LV maps onto its PVs. */
	n = slaves_of(root, dev, s, (int)ARRAY_SIZE(s));
	for (int i = 0; i < n; i++) {
		size_t l;

		if (read_attr(root, s[i], "dm/uuid", uuid, sizeof(uuid)) < 0 ||
		    strncmp(uuid, "LVM-", 4) != 0)
			continue;
		l = strlen(uuid);
		if (l < sizeof(tpool) || strcmp(uuid + l - (sizeof(tpool) - 1), tpool) != 0)
			continue;
		/* The pool as users name it: vg-pool, not its vg-pool-tpool layer. */
		if (read_attr(root, s[i], "dm/name", ret_pool, len) < 0)
			snprintf(ret_pool, len, "dm-%u", minor(s[i]));
		else if ((l = strlen(ret_pool)) >= sizeof(tpool) &&
			 strcmp(ret_pool + l - (sizeof(tpool) - 1), tpool) == 0)
			ret_pool[l - (sizeof(tpool) - 1)] = 0;
		return 1;
	}
	return 0;
}

/* LUKS1 and LUKS2 both begin with this magic (LUKS2's second header copy
 * says "SKUL" further on). */
static const char luks_magic[6] = { 'L', 'U', 'K', 'S', (char)0xba, (char)0xbe };

int hib_target_check_stack(struct hib_target *t, const char *root, struct hib_error *err)
{
	_cleanup_(freep) uint8_t *page = NULL;
	char pool[128];
	int r;

	hib_error_clear(err);
	/* A swap file's blocks on a thin LV are no safer: a snapshot of the LV
	 * shares them, and the next write to one needs a new chunk. */
	if (t->is_blk && hib_dm_thin_pool_of(root, t->dev, pool, sizeof(pool)) == 1) {
		char what[PATH_MAX + 64];

		if (t->file)
			snprintf(what, sizeof(what), "%s lies on %s, an LVM thin volume", t->file,
				 t->path);
		else
			snprintf(what, sizeof(what), "%s is an LVM thin volume", t->path);
		return hib_error_set(err, -EMEDIUMTYPE,
				     "%s (pool %s): thin LVs can fail to allocate while the image "
				     "is written; use a regular LV (lvcreate -L SIZE -n NAME VG) "
				     "for swap",
				     what, pool);
	}
	page = hib_alloc_pages(HIB_PAGE_SIZE);
	if (!page)
		return hib_error_ensure(err, -ENOMEM);
	r = hib_target_read(t, hib_target_sig_offset(t), page, HIB_PAGE_SIZE);
	if (r < 0)
		return hib_error_set(err, r, "%s: cannot read its first page: %s", t->path,
				     strerror(-r));
	if (memcmp(page, luks_magic, sizeof(luks_magic)) == 0)
		return hib_error_set(err, -EMEDIUMTYPE,
				     "%s is a LUKS container, not the swap inside it: open it "
				     "(cryptsetup open %s NAME) and name /dev/mapper/NAME",
				     hib_target_name(t), t->path);
	return 0;
}
