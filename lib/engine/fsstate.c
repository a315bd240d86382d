// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stale images: the state of every mounted block filesystem, recorded when
 * the image is made and compared before it is restored.
 *
 * The state is a checksum of the filesystem's superblock region, read raw
 * from its device: ext2/3/4 bump the mount count and times and recompute the
 * superblock checksum on every mount; xfs writes its superblock on mount and
 * unmount; btrfs bumps the generation on every commit. After the snapshot
 * nothing may write them (processes and the filesystems' kernel threads are
 * frozen, FREEZE synced everything), so any difference at resume means the
 * filesystem moved on without this image.
 */
#include <blkid.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <xxhash.h>

#include "engine/engine.h"

struct sb_probe {
	enum hib_fs_type type;
	uint64_t sb_off, sb_len; /* region hashed */
	uint64_t magic_off;
	const char *magic;
	size_t magic_len;
	uint64_t uuid_off; /* raw 16-byte UUID inside the superblock region */
};

static const struct sb_probe probes[] = {
	{ HIB_FS_EXT, 1024, 1024, 1024 + 0x38, "\x53\xef", 2, 1024 + 0x68 },
	{ HIB_FS_XFS, 0, 512, 0, "XFSB", 4, 32 },
	{ HIB_FS_BTRFS, 65536, 4096, 65536 + 0x40, "_BHRfS_M", 8, 65536 + 0x20 },
};

/* Everything we look at lies in the first 68 KiB; longer regions (vfat's
 * FATs) are read in pieces of this size. */
#define SB_REGION 69632

/*
 * vfat: nothing in its boot sector moves on a write, but every allocation
 * changes the FATs (and FAT12/16's root directory, which follows them), and
 * Linux sets and clears a dirty flag in the boot sector on each mount. The
 * digest covers the device from byte 0 to the start of the data area, at
 * most VFAT_BOUND bytes: the whole region of a FAT32 filesystem up to some
 * 2 GiB with 4 KiB clusters (a 512 MiB ESP's is about 1 MiB); of a larger
 * one, the allocations in its first part only.
 */
#define VFAT_BOUND (4u << 20)

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)le16(p) | (uint32_t)le16(p + 2) << 16;
}

/* The vfat filesystem whose boot sector is at @buf (SB_REGION bytes of @fd
 * from 0), or -ENOENT. */
static int vfat_state(int fd, uint8_t *buf, struct hib_fs_state *ret)
{
	uint32_t bps = le16(buf + 11), rsv = le16(buf + 14), nfats = buf[16];
	uint32_t fatsz = le16(buf + 22) ? le16(buf + 22) : le32(buf + 36);
	uint64_t len, h = 0;

	if (bps < 512 || bps > 4096 || (bps & (bps - 1)) || !rsv || !nfats || !fatsz ||
	    buf[510] != 0x55 || buf[511] != 0xaa)
		return -ENOENT;
	len = ((uint64_t)rsv + (uint64_t)nfats * fatsz) * bps + (uint64_t)le16(buf + 17) * 32;
	len = MIN((len + 4095) & ~(uint64_t)4095, (uint64_t)VFAT_BOUND);
	memset(ret, 0, sizeof(*ret));
	ret->fs_type = HIB_FS_VFAT;
	memcpy(ret->uuid, buf + (le16(buf + 22) ? 0x27 : 0x43), 4);
	for (uint64_t off = 0; off < len; off += SB_REGION) {
		size_t n = (size_t)MIN((uint64_t)SB_REGION, len - off);

		if (off && hib_pread_full(fd, buf, n, off) < 0)
			return -EIO;
		h = XXH3_64bits_withSeed(buf, n, h);
	}
	ret->sb_xxh3 = h;
	return 0;
}

/* f2fs: its superblock at 1 KiB, then the first block of each of its two
 * checkpoint packs, whose checkpoint_ver moves on every checkpoint (every
 * sync and unmount after a write; a mount that recovers writes one too). */
#define F2FS_MAGIC 0xf2f52010u

static int f2fs_state(int fd, uint8_t *buf, struct hib_fs_state *ret)
{
	const uint8_t *sb = buf + 1024;
	uint64_t cp = le32(sb + 76), seg = 1ull << (le32(sb + 20) & 31), h;

	if (le32(sb) != F2FS_MAGIC || le32(sb + 16) != 12)
		return -ENOENT;
	memset(ret, 0, sizeof(*ret));
	ret->fs_type = HIB_FS_F2FS;
	memcpy(ret->uuid, sb + 108, 16);
	h = XXH3_64bits(buf + 1024, 3072);
	for (int i = 0; i < 2; i++) {
		if (hib_pread_full(fd, buf, 4096, (cp + (uint64_t)i * seg) << 12) < 0)
			return -EIO;
		h = XXH3_64bits_withSeed(buf, 4096, h);
	}
	ret->sb_xxh3 = h;
	return 0;
}

/* Read the superblock region of @fd into @buf (SB_REGION bytes, page
 * aligned); 0 and fills @ret if a known fs is there. */
static int probe_fd(int fd, const char *fstype, uint8_t *buf, struct hib_fs_state *ret)
{
	if (hib_pread_full(fd, buf, SB_REGION, 0) < 0)
		return -EIO;
	for (size_t i = 0; i < ARRAY_SIZE(probes); i++) {
		const struct sb_probe *p = &probes[i];
		if (memcmp(buf + p->magic_off, p->magic, p->magic_len) != 0)
			continue;
		memset(ret, 0, sizeof(*ret));
		ret->fs_type = p->type;
		memcpy(ret->uuid, buf + p->uuid_off, 16);
		ret->sb_xxh3 = XXH3_64bits(buf + p->sb_off, p->sb_len);
		return 0;
	}
	if (le32(buf + 1024) == F2FS_MAGIC)
		return f2fs_state(fd, buf, ret);
	if (strcmp(fstype, "vfat") == 0 || strcmp(fstype, "msdos") == 0)
		return vfat_state(fd, buf, ret);
	return -ENOENT;
}

void engine_fs_state(int fd, const char *fstype, uint8_t *sb, struct hib_fs_state *ret)
{
	if (probe_fd(fd, fstype, sb, ret) == 0)
		return;
	memset(ret, 0, sizeof(*ret));
	ret->fs_type = HIB_FS_OTHER;
	memcpy(ret->uuid, fstype, strnlen(fstype, sizeof(ret->uuid)));
}

/*
 * The device node of @dev: udev's /dev/block/M:m, else the kernel's name for
 * it under /dev, found as libblkid looks first (/sys/dev/block/M:m links to
 * the device's directory, named as its node, '!' for '/'). No allocation:
 * engine_fs_record runs while processes are frozen.
 */
static int open_dev(dev_t dev)
{
	char link[PATH_MAX], path[PATH_MAX + 8];
	const char *name;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/dev/block/%u:%u", major(dev), minor(dev));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_DIRECT);
	if (fd >= 0)
		return fd;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major(dev), minor(dev));
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return -ENOENT;
	link[n] = 0;
	name = strrchr(link, '/');
	snprintf(path, sizeof(path), "/dev/%s", name ? name + 1 : link);
	for (char *c = path + 5; *c; c++)
		if (*c == '!')
			*c = '/';
	fd = open(path, O_RDONLY | O_CLOEXEC | O_DIRECT);
	return fd < 0 ? -errno : fd;
}

/* Read /proc/self/mountinfo into @buf, at most @cap bytes, or with @buf NULL
 * only count its bytes: how many, or -errno. */
static ssize_t read_mounts(char *buf, size_t cap)
{
	char chunk[4096];
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n;
	int e;

	if (fd < 0)
		return -errno;
	do {
		n = buf ? read(fd, buf + len, cap - len) : read(fd, chunk, sizeof(chunk));
		if (n > 0)
			len += (size_t)n;
	} while ((n > 0 && (!buf || len < cap)) || (n < 0 && errno == EINTR));
	e = n < 0 ? -errno : 0;
	close(fd);
	return e < 0 ? e : (ssize_t)len;
}

int engine_fs_buf_new(struct engine_fs_buf *ret)
{
	struct engine_fs_buf b = { 0 };
	ssize_t n = read_mounts(NULL, 0);

	/* Twice the table's size now, and more: what gets mounted before the freeze. */
	b.mounts_cap = 2 * (size_t)MAX(n, 0) + 65536;
	b.mounts = malloc(b.mounts_cap);
	b.sb = hib_alloc_pages(SB_REGION);
	if (!b.mounts || !b.sb) {
		engine_fs_buf_free(&b);
		return -ENOMEM;
	}
	*ret = b;
	return 0;
}

void engine_fs_buf_free(struct engine_fs_buf *b)
{
	free(b->mounts);
	free(b->sb);
	memset(b, 0, sizeof(*b));
}

/*
 * Fields of a mountinfo line: "36 35 98:0 /root /mnt rw,noatime master:1 -
 * ext4 /dev/vda2 rw,errors=continue". The block device is the source's
 * node where it is one (btrfs reports an anonymous 0:N as the third field),
 * else the third field when the kernel has a block device of that number
 * (/dev/root). Read-only is the superblock's, the options after the source:
 * a read-only bind of a read-write filesystem still has it written.
 */
int engine_fs_parse_mount(char *line, dev_t *dev, const char **fstype, bool *writable)
{
	char *sep = strstr(line, " - "), *src, *opts, path[64];
	unsigned maj, min;
	struct stat st;

	if (sscanf(line, "%*u %*u %u:%u", &maj, &min) != 2 || !sep)
		return -EINVAL;
	*fstype = sep + 3;
	src = strchr(*fstype, ' ');
	opts = src ? strchr(src + 1, ' ') : NULL;
	if (!opts)
		return -EINVAL;
	*src++ = 0;
	*opts++ = 0;
	*writable = !(strncmp(opts, "ro", 2) == 0 && (opts[2] == ',' || opts[2] == 0));
	*dev = 0;
	if (src[0] == '/' && stat(src, &st) == 0 && S_ISBLK(st.st_mode))
		*dev = st.st_rdev;
	else if (maj != 0) {
		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", maj, min);
		if (access(path, F_OK) == 0)
			*dev = makedev(maj, min);
	}
	return 0;
}

/* @st for the filesystem on @dev into @h: ext*, xfs and btrfs among the first
 * nr_fs records (older readers check those), the later types after them. */
static void add_record(struct hib_header *h, dev_t dev, const struct hib_fs_state *st)
{
	uint32_t n = h->nr_fs + h->nr_fs_later;

	h->fs[n] = *st;
	h->fs[n].devnum = (uint64_t)dev;
	if (st->fs_type <= HIB_FS_BTRFS) {
		struct hib_fs_state first_later = h->fs[h->nr_fs];

		h->fs[h->nr_fs] = h->fs[n];
		h->fs[n] = first_later;
		h->nr_fs++;
	} else {
		h->nr_fs_later++;
	}
}

/* The filesystem a line of the mount table (NUL-terminated) names, into @h
 * if it is a writable block filesystem not recorded yet; *@full once @h has
 * no room. A loop device's filesystem is left out: it lives in a file of
 * another, which is recorded itself. */
static void record_line(struct hib_header *h, char *line, uint8_t *sb, bool *full)
{
	struct hib_fs_state st;
	const char *fstype;
	bool writable;
	dev_t dev;
	int fd;

	if (engine_fs_parse_mount(line, &dev, &fstype, &writable) < 0 || !dev || !writable ||
	    major(dev) == 7 /* LOOP_MAJOR */)
		return;
	for (uint32_t i = 0; i < h->nr_fs + h->nr_fs_later; i++)
		if (h->fs[i].devnum == (uint64_t)dev)
			return;
	if (h->nr_fs + h->nr_fs_later == HIB_MAX_FS) {
		log_warn("more than %d block filesystems mounted; only the first are checked "
			 "at resume",
			 HIB_MAX_FS);
		*full = true;
		return;
	}
	fd = open_dev(dev);
	if (fd >= 0) {
		engine_fs_state(fd, fstype, sb, &st);
		close(fd);
	} else {
		/* Unreadable now: at resume, one that cannot be compared. */
		memset(&st, 0, sizeof(st));
		st.fs_type = HIB_FS_OTHER;
		memcpy(st.uuid, fstype, strnlen(fstype, sizeof(st.uuid)));
	}
	add_record(h, dev, &st);
	log_debug("recorded the %s filesystem on %u:%u", fstype, major(dev), minor(dev));
}

int engine_fs_record(struct hib_header *h, struct engine_fs_buf *b)
{
	ssize_t len = read_mounts(b->mounts, b->mounts_cap);
	bool full = false;
	char *line, *end;

	h->nr_fs = 0;
	h->nr_fs_later = 0;
	if (len < 0)
		return (int)len;
	if ((size_t)len == b->mounts_cap)
		log_warn("the mount table grew past %zu KiB since the cycle began; only the "
			 "filesystems in its first part are checked at resume",
			 b->mounts_cap >> 10);
	/* Whole lines only: one cut off at the buffer's end is left out. */
	for (line = b->mounts; !full; line = end + 1) {
		end = memchr(line, '\n', (size_t)(b->mounts + len - line));
		if (!end)
			break;
		*end = 0;
		record_line(h, line, b->sb, &full);
	}
	return 0;
}

static const char *type_name(uint32_t t)
{
	static const char *const names[] = { "?", "ext4", "xfs", "btrfs", "vfat", "f2fs" };

	return t < ARRAY_SIZE(names) ? names[t] : "?";
}

/* The name blkid gives the UUID of @f: vfat's serial as XXXX-XXXX. */
static void uuid_string(const struct hib_fs_state *f, char out[37])
{
	static const char hex[] = "0123456789abcdef";
	size_t k = 0;

	if (f->fs_type == HIB_FS_VFAT) {
		snprintf(out, 37, "%02X%02X-%02X%02X", f->uuid[3], f->uuid[2], f->uuid[1],
			 f->uuid[0]);
		return;
	}
	for (int b = 0; b < 16; b++) {
		if (b == 4 || b == 6 || b == 8 || b == 10)
			out[k++] = '-';
		out[k++] = hex[f->uuid[b] >> 4];
		out[k++] = hex[f->uuid[b] & 15];
	}
	out[k] = 0;
}

#define UNCHECKED_FIX                                                                              \
	"restoring over a filesystem that changed since corrupts it; make the initramfs open "     \
	"it (its LUKS volume, LV or driver), or set unchecked-filesystems = allow in "             \
	"/etc/hibernate.conf (and rebuild the initramfs) to accept that risk"

/* A record that cannot be checked here (@why): refused, or with @allow logged. */
static int unchecked(const struct hib_target *t, const struct hib_fs_state *want, const char *what,
		     const char *why, bool allow)
{
	unsigned maj = major(want->devnum), min = minor(want->devnum);

	if (allow) {
		log_warn("%s (was %u:%u) %s; not checked (unchecked-filesystems = allow)", what,
			 maj, min, why);
		return 0;
	}
	return log_err(-ESTALE,
		       "%s: refusing the image: %s (was %u:%u) %s, so whether it was "
		       "written since the image was made cannot be checked; " UNCHECKED_FIX,
		       hib_target_path(t), what, maj, min, why);
}

/* Record @want against what is on disk now. */
static int check_one(const struct hib_target *t, const struct hib_fs_state *want, uint8_t *sb,
		     bool allow)
{
	struct hib_fs_state now;
	char uuid[37], what[96], *name;
	int fd;

	if (want->fs_type == HIB_FS_OTHER) {
		snprintf(what, sizeof(what), "the %.16s filesystem", (const char *)want->uuid);
		return unchecked(t, want, what, "is of a type whose changes cannot be seen", allow);
	}
	if (want->fs_type < HIB_FS_EXT || want->fs_type > HIB_FS_OTHER) {
		/* Of a later writer that knows more types than this reader. */
		snprintf(what, sizeof(what), "a filesystem of type %u", want->fs_type);
		return unchecked(t, want, what, "is of a type this hibernate does not know", allow);
	}
	uuid_string(want, uuid);
	snprintf(what, sizeof(what), "the %s filesystem UUID=%s", type_name(want->fs_type), uuid);
	name = blkid_evaluate_tag("UUID", uuid, NULL);
	fd = name ? open(name, O_RDONLY | O_CLOEXEC | O_DIRECT) : open_dev(want->devnum);
	if (fd < 0) {
		free(name);
		return unchecked(t, want, what, "is not visible here", allow);
	}
	engine_fs_state(fd, type_name(want->fs_type), sb, &now);
	close(fd);
	if (now.fs_type != want->fs_type || memcmp(now.uuid, want->uuid, 16) != 0 ||
	    now.sb_xxh3 != want->sb_xxh3) {
		log_err(-ESTALE,
			"%s: the image is stale: the %s filesystem on %s (UUID=%s) was mounted or "
			"changed after the image was written; restoring it would corrupt that "
			"filesystem",
			hib_target_path(t), type_name(want->fs_type), name ? name : "?", uuid);
		free(name);
		return -ESTALE;
	}
	free(name);
	return 0;
}

int engine_fs_check(const struct hib_target *t, const struct hib_header *h, bool allow_unchecked)
{
	_cleanup_(freep) uint8_t *sb = hib_alloc_pages(SB_REGION);
	int r;

	if (!sb)
		return -ENOMEM;
	for (uint32_t i = 0; i < h->nr_fs + h->nr_fs_later; i++) {
		r = check_one(t, &h->fs[i], sb, allow_unchecked);
		if (r < 0)
			return r;
	}
	return 0;
}
