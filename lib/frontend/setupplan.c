// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hibernate setup's decisions: the target, its size and recipe, and the text
 * edits of hibernate.conf and fstab. Pure but for hib_setup_gather, which
 * reads the system under a root prefix (hibernate-setup(8) says why each
 * choice is what it is).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "frontend/setupplan.h"
#include "util/error.h"
#include "util/util.h"

#define MIB ((uint64_t)1024 * 1024)
#define GIB (1024ull * MIB)

uint64_t hib_setup_need_bytes(uint64_t mem_total_kib)
{
	uint64_t half = mem_total_kib * 1024 / 2;
	uint64_t b = half + half / 100 + 16 * MIB;

	return (b + MIB - 1) / MIB * MIB;
}

uint64_t hib_setup_reserve_bytes(uint64_t fs_total_bytes)
{
	uint64_t r = fs_total_bytes / 20;

	return r < GIB ? GIB : r;
}

const char *hib_setup_kind_name(enum hib_setup_kind k)
{
	switch (k) {
	case HIB_SETUP_SWAP_AREA:
		return "swap-area";
	case HIB_SETUP_IMAGE_FILE:
		return "image-file";
	case HIB_SETUP_SWAP_FILE:
		return "swap-file";
	}
	return "?";
}

#define CHOICES                                                                                    \
	"the choices left: an active swap partition, LV or LUKS mapping of at least %" PRIu64      \
	" MiB (setup then uses it), or --device DEV naming one"

/* Why setup makes no file on @fs, or NULL when it can. */
static const char *fs_refusal(const struct hib_setup_fs *fs)
{
	static const struct {
		const char *type, *why;
	} refused[] = {
		{ "zfs", "ZFS maps no file to fixed disk blocks (no FIEMAP), and swap on a zvol "
			 "can deadlock" },
		{ "tmpfs", "it is in RAM, lost when the power goes" },
		{ "ramfs", "it is in RAM, lost when the power goes" },
		{ "bcachefs",
		  "bcachefs may move a file's extents at any time and has no swap files" },
		{ "nfs", "a network filesystem is not there when the initramfs resumes" },
		{ "nfs4", "a network filesystem is not there when the initramfs resumes" },
		{ "cifs", "a network filesystem is not there when the initramfs resumes" },
		{ "overlay", "an overlay has no block device of its own" },
	};

	if (strcmp(fs->type, "ext4") == 0 || strcmp(fs->type, "xfs") == 0)
		return NULL;
	if (strcmp(fs->type, "btrfs") == 0) {
		if (fs->devices > 1)
			return "a btrfs over several devices: resume reads one device, and the "
			       "file's blocks may be on any";
		if (fs->data_profile[0] && strcmp(fs->data_profile, "single") != 0)
			return "btrfs data profile is not single (dup/raid): a swap file needs "
			       "one copy on one device";
		return NULL;
	}
	for (size_t i = 0; i < ARRAY_SIZE(refused); i++)
		if (strcmp(fs->type, refused[i].type) == 0)
			return refused[i].why;
	return "setup knows the recipe of ext4, xfs and btrfs only";
}

/* The largest active non-zram swap area of at least @need bytes, or NULL. */
static const struct hib_setup_swap *pick_area(const struct hib_setup_input *in, uint64_t need)
{
	const struct hib_setup_swap *best = NULL;

	for (size_t i = 0; i < in->n_swaps; i++) {
		const struct hib_setup_swap *s = &in->swaps[i];

		if (!s->partition || s->zram || s->size_kib * 1024 < need)
			continue;
		if (!best || s->size_kib > best->size_kib)
			best = s;
	}
	return best;
}

/* A swap file's priority: under any zram area (fstab's pri= is 0 at least). */
static int file_prio(const struct hib_setup_input *in)
{
	bool zram = false;
	int min = 32767;

	for (size_t i = 0; i < in->n_swaps; i++)
		if (in->swaps[i].zram) {
			zram = true;
			if (in->swaps[i].prio < min)
				min = in->swaps[i].prio;
		}
	return zram && min > 0 ? 0 : -1;
}

/* Swap areas, and all of them zram. */
static bool zram_only(const struct hib_setup_input *in)
{
	for (size_t i = 0; i < in->n_swaps; i++)
		if (!in->swaps[i].zram)
			return false;
	return in->n_swaps > 0;
}

static int decide_file(const struct hib_setup_input *in, struct hib_setup_plan *p,
		       struct hib_error *err)
{
	const struct hib_setup_fs *fs = &in->fs;
	const char *why = fs_refusal(fs);
	uint64_t reserve = hib_setup_reserve_bytes(fs->total_bytes);
	uint64_t need_mib = p->need_bytes / MIB;

	if (why)
		return hib_error_set(err, -EOPNOTSUPP, "%s: no file is made on %s: %s%s; " CHOICES,
				     HIB_SETUP_DIR, fs->type[0] ? fs->type : "this filesystem", why,
				     zram_only(in) ? "; the only swap is zram, in RAM" : "",
				     need_mib);
	if (fs->avail_bytes < p->need_bytes || fs->avail_bytes - p->need_bytes < reserve)
		return hib_error_set(err, -ENOSPC,
				     "%s: %" PRIu64 " MiB free; a file of %" PRIu64
				     " MiB would leave less than the reserve of %" PRIu64
				     " MiB (5%% of the filesystem, at least 1 GiB): free space, "
				     "or give a smaller --size, or " CHOICES,
				     HIB_SETUP_DIR, fs->avail_bytes / MIB, need_mib, reserve / MIB,
				     need_mib);
	p->bytes = p->need_bytes;
	if (strcmp(fs->type, "btrfs") == 0) {
		p->kind = HIB_SETUP_SWAP_FILE;
		snprintf(p->path, sizeof(p->path), "%s", HIB_SETUP_SWAP_PATH);
		p->swap_prio = file_prio(in);
	} else {
		p->kind = HIB_SETUP_IMAGE_FILE;
		snprintf(p->path, sizeof(p->path), "%s", HIB_SETUP_IMAGE_PATH);
	}
	snprintf(p->device, sizeof(p->device), "%s", p->path);
	return 0;
}

/* --device: the user's swap area, as named; refused on zram (RAM) or, when it
 * is an active area, too small. */
static int decide_device(const struct hib_setup_input *in, struct hib_setup_plan *p,
			 struct hib_error *err)
{
	p->kind = HIB_SETUP_SWAP_AREA;
	snprintf(p->path, sizeof(p->path), "%s", in->device);
	snprintf(p->device, sizeof(p->device), "%s", in->device);
	if (strncmp(in->device, "/dev/zram", 9) == 0)
		return hib_error_set(
			err, -EINVAL,
			"%s: zram keeps its pages in RAM, lost when the power goes: name "
			"a swap partition, LV or LUKS mapping on disk",
			in->device);
	for (size_t i = 0; i < in->n_swaps; i++)
		if (strcmp(in->swaps[i].path, in->device) == 0) {
			p->bytes = in->swaps[i].size_kib * 1024;
			if (p->bytes < p->need_bytes)
				return hib_error_set(err, -ENOSPC,
						     "%s: %" PRIu64
						     " MiB, an image of this machine "
						     "needs up to %" PRIu64
						     " MiB: name a larger one, "
						     "or give --size",
						     in->device, p->bytes / MIB,
						     p->need_bytes / MIB);
		}
	return 0;
}

int hib_setup_decide(const struct hib_setup_input *in, struct hib_setup_plan *ret,
		     struct hib_error *err)
{
	const struct hib_setup_swap *a;

	hib_error_clear(err);
	*ret = (struct hib_setup_plan){ .swap_prio = -1 };
	if (in->lockdown[0] && strcmp(in->lockdown, "none") != 0)
		return hib_error_set(err, -EPERM,
				     "kernel lockdown is on (%s), usually because of Secure Boot: "
				     "the kernel refuses hibernation. Turn Secure Boot off in the "
				     "firmware, or mokutil --disable-validation, then run setup",
				     in->lockdown);
	if (in->mem_total_kib == 0)
		return hib_error_set(err, -EINVAL, "/proc/meminfo: no MemTotal");
	ret->need_bytes = in->size_mib ? in->size_mib * MIB
				       : hib_setup_need_bytes(in->mem_total_kib);
	if (in->device)
		return decide_device(in, ret, err);
	a = pick_area(in, ret->need_bytes);
	if (a) {
		ret->kind = HIB_SETUP_SWAP_AREA;
		ret->bytes = a->size_kib * 1024;
		snprintf(ret->path, sizeof(ret->path), "%s", a->path);
		if (a->uuid[0])
			snprintf(ret->device, sizeof(ret->device), "UUID=%s", a->uuid);
		else
			snprintf(ret->device, sizeof(ret->device), "%s", a->path);
		return 0;
	}
	return decide_file(in, ret, err);
}

/* ---- text edits ------------------------------------------------------------ */

/* The line at @s is "KEY =..." (blanks allowed before and around). */
static bool line_is_key(const char *s, const char *key)
{
	size_t n = strlen(key);

	while (*s == ' ' || *s == '\t')
		s++;
	if (strncmp(s, key, n) != 0)
		return false;
	s += n;
	while (*s == ' ' || *s == '\t')
		s++;
	return *s == '=';
}

/* The line at @s is "#KEY =" or "# KEY =": the shipped file's commented example. */
static bool line_is_example(const char *s, const char *key)
{
	if (*s != '#')
		return false;
	s++;
	while (*s == ' ')
		s++;
	return line_is_key(s, key);
}

struct buf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *p = realloc(b->p, cap);

		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static char *buf_done(struct buf *b)
{
	put(b, "", 0);
	if (b->oom) {
		free(b->p);
		return NULL;
	}
	return b->p;
}

/* "device = VALUE" in @line's own spacing: its prefix up to the blanks after '='. */
static void put_key_line(struct buf *b, const char *line, const char *value)
{
	const char *v = strchr(line, '=') + 1;

	while (*v == ' ' || *v == '\t')
		v++;
	put(b, line, (size_t)(v - line));
	put(b, value, strlen(value));
	put(b, "\n", 1);
}

#define FOR_EACH_LINE(l, n, text)                                                                  \
	for (const char *l = (text), *nl_; *l && ((nl_ = strchr(l, '\n')), 1) &&                   \
					   ((n = nl_ ? (size_t)(nl_ - l + 1) : strlen(l)), 1);     \
	     l += n)

char *hib_setup_conf_edit(const char *text, const char *device, const char *offset)
{
	struct buf b = { 0 };
	const char *s = text ? text : "", *insert_at = NULL;
	bool has_device = false, done = false;
	char line[2 * PATH_MAX];
	size_t n;

	snprintf(line, sizeof(line), "device = %s\n%s%s%s", device, offset ? "offset = " : "",
		 offset ? offset : "", offset ? "\n" : "");
	FOR_EACH_LINE(l, n, s)
	{
		has_device |= line_is_key(l, "device");
		if (line_is_example(l, "device") || line_is_example(l, "offset"))
			insert_at = l + n;
	}
	FOR_EACH_LINE(l, n, s)
	{
		if (line_is_key(l, "device") && !done) {
			put_key_line(&b, l, device);
			if (offset)
				put(&b, line + strlen(device) + 10,
				    strlen(line + strlen(device) + 10));
			done = true;
		} else if (!line_is_key(l, "device") && !line_is_key(l, "offset")) {
			put(&b, l, n);
			if (l[n - 1] != '\n')
				put(&b, "\n", 1);
		}
		if (!has_device && l + n == insert_at) {
			put(&b, line, strlen(line));
			done = true;
		}
	}
	if (!done)
		put(&b, line, strlen(line));
	return buf_done(&b);
}

/* Does fstab line @l (up to @n bytes) name @file as its first field? */
static bool fstab_names(const char *l, size_t n, const char *file)
{
	size_t k = strlen(file);

	while (n && (*l == ' ' || *l == '\t'))
		l++, n--;
	return n > k && strncmp(l, file, k) == 0 && (l[k] == ' ' || l[k] == '\t');
}

char *hib_setup_fstab_edit(const char *text, const char *file, int prio)
{
	struct buf b = { 0 };
	const char *s = text ? text : "";
	char line[PATH_MAX + 128];

	for (const char *l = s; *l;) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l + 1) : strlen(l);

		if (fstab_names(l, n, file))
			return strdup(s);
		l += n;
	}
	put(&b, s, strlen(s));
	if (b.len && b.p[b.len - 1] != '\n')
		put(&b, "\n", 1);
	if (prio >= 0)
		snprintf(line, sizeof(line),
			 "# hibernate setup: the hibernation swap file (under zram)\n"
			 "%s none swap defaults,pri=%d 0 0\n",
			 file, prio);
	else
		snprintf(
			line, sizeof(line),
			"# hibernate setup: the hibernation swap file\n%s none swap defaults 0 0\n",
			file);
	put(&b, line, strlen(line));
	return buf_done(&b);
}

/* ---- reading the system ------------------------------------------------------ */

int hib_setup_parse_meminfo(const char *text, uint64_t *ret_kib)
{
	const char *p = strstr(text, "MemTotal:");
	unsigned long long v;

	if (!p || sscanf(p, "MemTotal: %llu", &v) != 1)
		return -EINVAL;
	*ret_kib = v;
	return 0;
}

/* /proc/swaps escapes blanks as \040 in a path; put them back. */
static void unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && isdigit((unsigned char)s[2]) &&
		    isdigit((unsigned char)s[3])) {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = 0;
}

int hib_setup_parse_swaps(const char *text, struct hib_setup_input *in)
{
	const char *l = strchr(text, '\n'); /* the heading */

	in->n_swaps = 0;
	while (l && *++l && in->n_swaps < HIB_SETUP_MAX_SWAPS) {
		struct hib_setup_swap *s = &in->swaps[in->n_swaps];
		char path[PATH_MAX], type[32];
		unsigned long long size, used;
		int prio;

		if (sscanf(l, "%4095s %31s %llu %llu %d", path, type, &size, &used, &prio) == 5) {
			*s = (struct hib_setup_swap){ .size_kib = size, .prio = prio };
			unescape(path);
			snprintf(s->path, sizeof(s->path), "%s", path);
			s->partition = strcmp(type, "partition") == 0;
			s->zram = strncmp(path, "/dev/zram", 9) == 0;
			in->n_swaps++;
		}
		l = strchr(l, '\n');
	}
	return 0;
}

static int read_text(const char *root, const char *path, char *buf, size_t len)
{
	char full[PATH_MAX];

	snprintf(full, sizeof(full), "%s%s", root, path);
	return hib_read_text(full, buf, len);
}

/* The UUID whose /dev/disk/by-uuid link resolves to @dev. */
static void area_uuid(const char *root, struct hib_setup_swap *s)
{
	char dir[PATH_MAX], link[PATH_MAX * 2], target[PATH_MAX], want[PATH_MAX];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/dev/disk/by-uuid", root);
	snprintf(link, sizeof(link), "%s%s", root, s->path);
	if (!realpath(link, want))
		return;
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
		if (realpath(link, target) && strcmp(target, want) == 0 &&
		    strlen(de->d_name) < sizeof(s->uuid)) {
			memcpy(s->uuid, de->d_name, strlen(de->d_name) + 1);
			break;
		}
	}
	closedir(d);
}

/* The mount that holds @path (the longest mount point that prefixes it). */
static void find_mount(const char *mounts, const char *path, struct hib_setup_fs *fs)
{
	size_t best = 0;

	for (const char *l = mounts; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		char src[512], mnt[PATH_MAX], type[32], opts[512];
		size_t n;

		if (sscanf(l, "%511s %4095s %31s %511s", src, mnt, type, opts) != 4)
			continue;
		unescape(mnt);
		n = strlen(mnt);
		if (strncmp(path, mnt, n) != 0 || (path[n] != '/' && path[n] && n != 1))
			continue;
		if (n >= best) {
			best = n;
			snprintf(fs->type, sizeof(fs->type), "%s", type);
			snprintf(fs->options, sizeof(fs->options), "%s", opts);
		}
	}
}

/* btrfs's devices and data profile, from /sys/fs/btrfs/UUID (the one with
 * the filesystem's fsid: statfs's f_fsid is not it, so the single btrfs when
 * there is one, and unknown otherwise). */
static void btrfs_facts(const char *root, struct hib_setup_fs *fs)
{
	char dir[PATH_MAX], sub[PATH_MAX * 2], only[256] = "";
	struct dirent *de;
	unsigned n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/sys/fs/btrfs", root);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d)))
		if (strlen(de->d_name) == 36 && n++ == 0)
			snprintf(only, sizeof(only), "%s", de->d_name);
	closedir(d);
	if (n != 1)
		return;
	snprintf(sub, sizeof(sub), "%s/%s/devices", dir, only);
	d = opendir(sub);
	if (d) {
		fs->devices = 0;
		while ((de = readdir(d)))
			fs->devices += de->d_name[0] != '.';
		closedir(d);
	}
	snprintf(sub, sizeof(sub), "%s/%s/allocation/data", dir, only);
	d = opendir(sub);
	if (!d)
		return;
	while ((de = readdir(d))) {
		static const char *const profiles[] = { "single", "dup",     "raid0",
							"raid1",  "raid10",  "raid5",
							"raid6",  "raid1c3", "raid1c4" };
		for (size_t i = 0; i < ARRAY_SIZE(profiles); i++)
			if (strcmp(de->d_name, profiles[i]) == 0 &&
			    (!fs->data_profile[0] || strcmp(fs->data_profile, "single") == 0))
				snprintf(fs->data_profile, sizeof(fs->data_profile), "%s",
					 profiles[i]);
	}
	closedir(d);
}

static void gather_fs(const char *root, struct hib_setup_fs *fs)
{
	static char mounts[1 << 16];
	char path[PATH_MAX];
	struct statfs sfs;

	fs->devices = 1;
	if (read_text(root, "/proc/self/mounts", mounts, sizeof(mounts)) > 0)
		find_mount(mounts, HIB_SETUP_DIR, fs);
	snprintf(path, sizeof(path), "%s%s", root, HIB_SETUP_DIR);
	while (statfs(path, &sfs) < 0 && strrchr(path, '/') && strrchr(path, '/') != path)
		*strrchr(path, '/') = 0;
	if (statfs(path, &sfs) == 0) {
		fs->total_bytes = (uint64_t)sfs.f_blocks * (uint64_t)sfs.f_bsize;
		fs->avail_bytes = (uint64_t)sfs.f_bavail * (uint64_t)sfs.f_bsize;
	}
	if (strcmp(fs->type, "btrfs") == 0)
		btrfs_facts(root, fs);
}

int hib_setup_gather(const char *root, struct hib_setup_input *in, struct hib_error *err)
{
	char buf[8192];
	int r;

	hib_error_clear(err);
	root = root ? root : "";
	r = read_text(root, "/proc/meminfo", buf, sizeof(buf));
	if (r < 0 || hib_setup_parse_meminfo(buf, &in->mem_total_kib) < 0)
		return hib_error_set(err, r < 0 ? r : -EINVAL, "%s/proc/meminfo: no MemTotal",
				     root);
	r = read_text(root, "/proc/swaps", buf, sizeof(buf));
	if (r < 0)
		return hib_error_set(err, r, "%s/proc/swaps: cannot read: %s", root, strerror(-r));
	hib_setup_parse_swaps(buf, in);
	for (size_t i = 0; i < in->n_swaps; i++)
		if (in->swaps[i].partition)
			area_uuid(root, &in->swaps[i]);
	in->lockdown[0] = 0;
	if (read_text(root, "/sys/kernel/security/lockdown", buf, 256) > 0 && strchr(buf, '['))
		sscanf(strchr(buf, '[') + 1, "%31[^]]", in->lockdown);
	gather_fs(root, &in->fs);
	return 0;
}
