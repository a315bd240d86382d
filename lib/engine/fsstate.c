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

/* Everything we look at lies in the first 68 KiB. */
#define SB_REGION 69632

/* Read the superblock region of @fd into @buf (SB_REGION bytes, page
 * aligned); 0 and fills @ret if a known fs is there. */
static int probe_fd(int fd, uint8_t *buf, struct hib_fs_state *ret)
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
	return -ENOENT;
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

/* The filesystem a line of the mount table (NUL-terminated) names, into @h
 * if it is a block filesystem not recorded yet; *@full once @h has no room. */
static void record_line(struct hib_header *h, const char *line, uint8_t *sb, bool *full)
{
	unsigned maj, min;
	struct hib_fs_state st;
	dev_t dev;
	int fd;

	if (sscanf(line, "%*u %*u %u:%u", &maj, &min) != 2 || maj == 0)
		return;
	dev = makedev(maj, min);
	for (uint32_t i = 0; i < h->nr_fs; i++)
		if (h->fs[i].devnum == (uint64_t)dev)
			return;
	fd = open_dev(dev);
	if (fd < 0)
		return;
	if (probe_fd(fd, sb, &st) == 0) {
		if (h->nr_fs == HIB_MAX_FS) {
			log_warn("more than %d block filesystems mounted; only the first "
				 "are checked at resume",
				 HIB_MAX_FS);
			*full = true;
		} else {
			st.devnum = (uint64_t)dev;
			h->fs[h->nr_fs++] = st;
			log_debug("recorded the state of the filesystem on %u:%u", maj, min);
		}
	}
	close(fd);
}

int engine_fs_record(struct hib_header *h, struct engine_fs_buf *b)
{
	ssize_t len = read_mounts(b->mounts, b->mounts_cap);
	bool full = false;
	char *line, *end;

	h->nr_fs = 0;
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
	return t == HIB_FS_EXT     ? "ext4"
	       : t == HIB_FS_XFS   ? "xfs"
	       : t == HIB_FS_BTRFS ? "btrfs"
				   : "?";
}

int engine_fs_check(const struct hib_target *t, const struct hib_header *h)
{
	static const char hex[] = "0123456789abcdef";
	_cleanup_(freep) uint8_t *sb = hib_alloc_pages(SB_REGION);

	if (!sb)
		return -ENOMEM;
	for (uint32_t i = 0; i < h->nr_fs; i++) {
		const struct hib_fs_state *want = &h->fs[i];
		struct hib_fs_state now;
		char uuid[37], *name;
		size_t k = 0;
		int fd;

		/* The UUID as blkid prints it. */
		for (int b = 0; b < 16; b++) {
			if (b == 4 || b == 6 || b == 8 || b == 10)
				uuid[k++] = '-';
			uuid[k++] = hex[want->uuid[b] >> 4];
			uuid[k++] = hex[want->uuid[b] & 15];
		}
		uuid[k] = 0;
		name = blkid_evaluate_tag("UUID", uuid, NULL);
		fd = name ? open(name, O_RDONLY | O_CLOEXEC | O_DIRECT) : open_dev(want->devnum);
		if (fd < 0) {
			/* Nothing can have written it here either; the restored system will
			 * find it missing, as after any unplug. */
			log_warn("%s filesystem UUID=%s (was %u:%u) is not here; not checked",
				 type_name(want->fs_type), uuid, major(want->devnum),
				 minor(want->devnum));
			free(name);
			continue;
		}
		if (probe_fd(fd, sb, &now) < 0 || now.fs_type != want->fs_type ||
		    memcmp(now.uuid, want->uuid, 16) != 0 || now.sb_xxh3 != want->sb_xxh3) {
			log_err(-ESTALE,
				"%s: the image is stale: the %s filesystem on %s (UUID=%s) was "
				"mounted or changed after the image was written; restoring it "
				"would corrupt that filesystem",
				hib_target_path(t), type_name(want->fs_type), name ? name : "?",
				uuid);
			close(fd);
			free(name);
			return -ESTALE;
		}
		close(fd);
		free(name);
	}
	return 0;
}
