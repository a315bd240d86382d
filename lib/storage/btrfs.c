// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A btrfs file's bytes on its device. The kernel's swap code accepts a btrfs
 * swap file only when every extent is in a single-profile chunk on the one
 * device, NOCOW and not compressed, and then pins those extents (balance and
 * relocation skip them) while it is active. We refuse the same files, so
 * that a device offset we compute stays where the file is; the
 * translation logical -> physical is stripe 0's offset plus the distance
 * from the chunk's start, which holds only for that profile.
 */
#include <endian.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/btrfs.h>
#include <linux/btrfs_tree.h>
#include <linux/fs.h>

#include "storage/btrfs.h"
#include "util/error.h"
#include "util/util.h"

int hib_btrfs_chunk_parse(uint64_t logical, const void *item, size_t len,
			  struct hib_btrfs_chunk *ret)
{
	struct btrfs_chunk c;
	uint16_t stripes;

	if (len < sizeof(c))
		return -EBADMSG;
	memcpy(&c, item, sizeof(c));
	stripes = le16toh(c.num_stripes);
	if (stripes == 0 || len < sizeof(c) + (size_t)(stripes - 1) * sizeof(struct btrfs_stripe))
		return -EBADMSG;
	*ret = (struct hib_btrfs_chunk){
		.logical = logical,
		.length = le64toh(c.length),
		.type = le64toh(c.type),
		.num_stripes = stripes,
		.devid = le64toh(c.stripe.devid),
		.physical = le64toh(c.stripe.offset),
	};
	return 0;
}

int hib_btrfs_chunks_add(struct hib_btrfs_chunks *cs, const struct hib_btrfs_chunk *c)
{
	if (cs->n == cs->cap) {
		size_t cap = cs->cap ? cs->cap * 2 : 64;
		struct hib_btrfs_chunk *v = reallocarray(cs->v, cap, sizeof(*v));
		if (!v)
			return -ENOMEM;
		cs->v = v;
		cs->cap = cap;
	}
	cs->v[cs->n++] = *c;
	return 0;
}

void hib_btrfs_chunks_free(struct hib_btrfs_chunks *cs)
{
	free(cs->v);
	memset(cs, 0, sizeof(*cs));
}

static const struct {
	uint64_t bit;
	const char *name;
} profiles[] = {
	{ BTRFS_BLOCK_GROUP_DUP, "DUP" },         { BTRFS_BLOCK_GROUP_RAID0, "RAID0" },
	{ BTRFS_BLOCK_GROUP_RAID10, "RAID10" },   { BTRFS_BLOCK_GROUP_RAID1C3, "RAID1C3" },
	{ BTRFS_BLOCK_GROUP_RAID1C4, "RAID1C4" }, { BTRFS_BLOCK_GROUP_RAID1, "RAID1" },
	{ BTRFS_BLOCK_GROUP_RAID5, "RAID5" },     { BTRFS_BLOCK_GROUP_RAID6, "RAID6" },
};

/* The chunk's redundancy profile, NULL for single. */
static const char *profile_name(uint64_t type)
{
	for (size_t i = 0; i < ARRAY_SIZE(profiles); i++)
		if (type & profiles[i].bit)
			return profiles[i].name;
	return NULL;
}

/* The chunk holding @logical (cs sorted by logical), or NULL. */
static const struct hib_btrfs_chunk *find_chunk(const struct hib_btrfs_chunks *cs, uint64_t logical)
{
	size_t lo = 0, hi = cs->n;

	while (lo < hi) { /* the first chunk starting after @logical */
		size_t mid = lo + (hi - lo) / 2;
		if (cs->v[mid].logical <= logical)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct hib_btrfs_chunk *c = &cs->v[lo - 1];
	return logical - c->logical < c->length ? c : NULL;
}

int hib_btrfs_map(const struct hib_btrfs_chunks *cs, uint64_t logical, uint64_t *ret_physical,
		  uint64_t *ret_run, struct hib_error *err)
{
	const struct hib_btrfs_chunk *c = find_chunk(cs, logical);
	const char *profile;

	if (!c)
		return hib_error_set(err, -ENOENT,
				     "no chunk of its btrfs filesystem holds logical byte %llu",
				     (unsigned long long)logical);
	profile = profile_name(c->type);
	if (profile || c->num_stripes != 1)
		return hib_error_set(err, -EOPNOTSUPP,
				     "its data is in a btrfs chunk of the %s profile (%u copies or "
				     "stripes), and a write through the device would reach only "
				     "one: convert the data to the single profile (btrfs balance "
				     "start -dconvert=single MOUNTPOINT) or use a swap partition",
				     profile ? profile : "unknown", (unsigned)c->num_stripes);
	*ret_physical = c->physical + (logical - c->logical);
	*ret_run = c->length - (logical - c->logical);
	return 0;
}

/* A compressed or copy-on-write file: the kernel refuses it for swap, and a
 * write through the device would not be what the filesystem reads back. */
static int check_flags(int fd, struct hib_error *err)
{
	int flags = 0;

	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0)
		return hib_error_set(err, -errno, "cannot read its attributes: %s",
				     strerror(errno));
	if (flags & FS_COMPR_FL)
		return hib_error_set(err, -EOPNOTSUPP,
				     "it is compressed (btrfs stores it encoded): make a new swap "
				     "file with `btrfs filesystem mkswapfile` or chattr +C on an "
				     "empty file");
	if (!(flags & FS_NOCOW_FL))
		return hib_error_set(err, -EOPNOTSUPP,
				     "it is a copy-on-write file on btrfs (its blocks move on "
				     "every write): create it with `btrfs filesystem mkswapfile` "
				     "or chattr +C on an empty file");
	return 0;
}

/* The filesystem's one device, from its device list (st_dev is the subvolume's). */
static int find_device(int fd, dev_t *ret_dev, struct hib_error *err)
{
	struct btrfs_ioctl_fs_info_args fi = { 0 };
	struct btrfs_ioctl_dev_info_args di;
	struct stat st;

	if (ioctl(fd, BTRFS_IOC_FS_INFO, &fi) < 0)
		return hib_error_set(err, -errno, "BTRFS_IOC_FS_INFO failed: %s", strerror(errno));
	if (fi.num_devices != 1)
		return hib_error_set(err, -EOPNOTSUPP,
				     "its btrfs filesystem spans %llu devices, and the image must "
				     "be on one: use a swap partition, or a filesystem on one "
				     "device",
				     (unsigned long long)fi.num_devices);
	for (uint64_t id = 1; id <= fi.max_id; id++) {
		memset(&di, 0, sizeof(di));
		di.devid = id;
		if (ioctl(fd, BTRFS_IOC_DEV_INFO, &di) < 0) {
			if (errno == ENODEV)
				continue;
			return hib_error_set(err, -errno, "BTRFS_IOC_DEV_INFO failed: %s",
					     strerror(errno));
		}
		di.path[sizeof(di.path) - 1] = 0;
		if (stat((const char *)di.path, &st) < 0 || !S_ISBLK(st.st_mode))
			return hib_error_set(err, -ENODEV,
					     "its btrfs device %s is not a block device here",
					     (const char *)di.path);
		*ret_dev = st.st_rdev;
		return 0;
	}
	return hib_error_set(err, -ENODEV, "its btrfs filesystem names no device");
}

/* The items of one search result buffer into @cs; the last key offset seen. */
static int take_items(const struct btrfs_ioctl_search_args *a, struct hib_btrfs_chunks *cs,
		      uint64_t *ret_last)
{
	size_t off = 0;

	for (uint32_t i = 0; i < a->key.nr_items; i++) {
		struct btrfs_ioctl_search_header h;
		struct hib_btrfs_chunk c;
		int r;

		if (off + sizeof(h) > sizeof(a->buf))
			return -EBADMSG;
		memcpy(&h, a->buf + off, sizeof(h));
		off += sizeof(h);
		if (off + h.len > sizeof(a->buf))
			return -EBADMSG;
		if (h.type == BTRFS_CHUNK_ITEM_KEY) {
			r = hib_btrfs_chunk_parse(h.offset, a->buf + off, h.len, &c);
			if (r == 0)
				r = hib_btrfs_chunks_add(cs, &c);
			if (r < 0)
				return r;
		}
		off += h.len;
		*ret_last = h.offset;
	}
	return 0;
}

/* Every chunk item, in key (= logical) order. */
static int read_chunks(int fd, struct hib_btrfs_chunks *cs, struct hib_error *err)
{
	struct btrfs_ioctl_search_args a = { 0 };
	uint64_t last = 0;
	int r;

	a.key.tree_id = BTRFS_CHUNK_TREE_OBJECTID;
	a.key.min_objectid = a.key.max_objectid = BTRFS_FIRST_CHUNK_TREE_OBJECTID;
	a.key.min_type = a.key.max_type = BTRFS_CHUNK_ITEM_KEY;
	a.key.max_offset = UINT64_MAX;
	a.key.max_transid = UINT64_MAX;
	for (;;) {
		a.key.nr_items = 4096;
		if (ioctl(fd, BTRFS_IOC_TREE_SEARCH, &a) < 0) {
			r = -errno;
			return hib_error_set(err, r, "reading its btrfs chunk tree failed: %s%s",
					     strerror(-r), r == -EPERM ? " (it needs root)" : "");
		}
		if (a.key.nr_items == 0)
			return 0;
		r = take_items(&a, cs, &last);
		if (r < 0)
			return hib_error_set(err, r, "its btrfs chunk tree reads wrong: %s",
					     strerror(-r));
		if (last == UINT64_MAX)
			return 0;
		a.key.min_offset = last + 1;
	}
}

int hib_btrfs_read(int fd, struct hib_btrfs_fs *ret, struct hib_error *err)
{
	struct hib_btrfs_fs fs = { 0 };
	int r;

	r = check_flags(fd, err);
	if (r == 0)
		r = find_device(fd, &fs.dev, err);
	if (r == 0)
		r = read_chunks(fd, &fs.chunks, err);
	if (r < 0) {
		hib_btrfs_free(&fs);
		return r;
	}
	*ret = fs;
	return 0;
}

void hib_btrfs_free(struct hib_btrfs_fs *fs)
{
	hib_btrfs_chunks_free(&fs->chunks);
}
