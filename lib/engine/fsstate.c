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
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <xxhash.h>

#include "engine/engine.h"

struct sb_probe {
	enum hib_fs_type type;
	uint64_t sb_off, sb_len;     /* region hashed */
	uint64_t magic_off;
	const char *magic;
	size_t magic_len;
	uint64_t uuid_off;           /* raw 16-byte UUID inside the superblock region */
};

static const struct sb_probe probes[] = {
	{ HIB_FS_EXT, 1024, 1024, 1024 + 0x38, "\x53\xef", 2, 1024 + 0x68 },
	{ HIB_FS_XFS, 0, 512, 0, "XFSB", 4, 32 },
	{ HIB_FS_BTRFS, 65536, 4096, 65536 + 0x40, "_BHRfS_M", 8, 65536 + 0x20 },
};

/* Read the superblock region of @fd; 0 and fills @ret if a known fs is there. */
static int probe_fd(int fd, struct hib_fs_state *ret)
{
	_cleanup_(freep) uint8_t *buf = hib_alloc_pages(69632);

	if (!buf)
		return -ENOMEM;
	/* Everything we look at lies in the first 68 KiB. */
	if (hib_pread_full(fd, buf, 69632, 0) < 0)
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

static int open_dev(dev_t dev)
{
	char path[64];

	snprintf(path, sizeof(path), "/dev/block/%u:%u", major(dev), minor(dev));
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_DIRECT);
	if (fd < 0) {
		char *name = blkid_devno_to_devname(dev);
		if (!name)
			return -ENOENT;
		fd = open(name, O_RDONLY | O_CLOEXEC | O_DIRECT);
		free(name);
	}
	return fd < 0 ? -errno : fd;
}

int engine_fs_record(struct hib_header *h)
{
	_cleanup_(freep) char *line = NULL;
	size_t cap = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	h->nr_fs = 0;
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		unsigned maj, min;
		struct hib_fs_state st;
		dev_t dev;
		bool seen = false;
		int fd;

		if (sscanf(line, "%*u %*u %u:%u", &maj, &min) != 2 || maj == 0)
			continue;
		dev = makedev(maj, min);
		for (uint32_t i = 0; i < h->nr_fs; i++)
			seen |= h->fs[i].devnum == (uint64_t)dev;
		if (seen)
			continue;
		fd = open_dev(dev);
		if (fd < 0)
			continue;
		if (probe_fd(fd, &st) == 0) {
			if (h->nr_fs == HIB_MAX_FS) {
				log_warn("more than %d block filesystems mounted; only the first "
					 "are checked at resume", HIB_MAX_FS);
				close(fd);
				break;
			}
			st.devnum = (uint64_t)dev;
			h->fs[h->nr_fs++] = st;
			log_debug("recorded the state of the filesystem on %u:%u", maj, min);
		}
		close(fd);
	}
	fclose(f);
	return 0;
}

static const char *type_name(uint32_t t)
{
	return t == HIB_FS_EXT ? "ext4" : t == HIB_FS_XFS ? "xfs" : t == HIB_FS_BTRFS ? "btrfs" : "?";
}

int engine_fs_check(const struct hib_target *t, const struct hib_header *h)
{
	static const char hex[] = "0123456789abcdef";

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
		if (probe_fd(fd, &now) < 0 || now.fs_type != want->fs_type ||
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
