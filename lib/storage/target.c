// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Opening a target: resolve what the user or the kernel command line named
 * (a path, UUID=, LABEL=, PARTUUID=, PARTLABEL=, MAJ:MIN, hex) to a device, open
 * it, and do raw page I/O on it. O_DIRECT where the device allows it: the
 * image must reach the disk, not a page cache that a power cut or the
 * resumed kernel would throw away.
 */
#include <blkid.h>
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/fs.h>

#include "storage/filemap.h"
#include "storage/target.h"
#include "util/util.h"

/*
 * "MAJ:MIN", or the kernel's other resume= number: a bare hexadecimal dev_t
 * in its new encoding ("fe01" is 254:1) → /dev/… through blkid's device scan.
 */
static int resolve_devnum(const char *spec, char **ret)
{
	unsigned maj, min;
	char tail;
	char *name;

	if (sscanf(spec, "%u:%u%c", &maj, &min, &tail) != 2) {
		size_t n = strspn(spec, "0123456789abcdefABCDEF");
		unsigned long v;

		if (n == 0 || n > 8 || spec[n])
			return -EINVAL;
		v = strtoul(spec, NULL, 16);
		maj = (unsigned)((v & 0xfff00) >> 8);
		min = (unsigned)((v & 0xff) | ((v >> 12) & 0xfff00));
	}
	name = blkid_devno_to_devname(makedev(maj, min));
	if (!name)
		return -ENOENT;
	*ret = name;
	return 0;
}

/*
 * The kernel matches PARTUUID= without regard to case, and sfdisk, gdisk and
 * Windows print GUIDs in upper case where blkid reports them in lower case
 * (FAT's serial the other way round): a UUID not found as written is looked
 * for in lower case, then in upper case. Labels are names: taken as written.
 */
static char *evaluate_uuid_anycase(const char *tag, const char *val)
{
	static int (*const fold[])(int) = { tolower, toupper };
	char buf[128];
	char *path;
	size_t n = strlen(val);

	if (n >= sizeof(buf))
		return NULL;
	for (size_t f = 0; f < ARRAY_SIZE(fold); f++) {
		for (size_t i = 0; i <= n; i++)
			buf[i] = (char)fold[f]((unsigned char)val[i]);
		if (strcmp(buf, val) && (path = blkid_evaluate_tag(tag, buf, NULL)))
			return path;
	}
	return NULL;
}

static int resolve_spec(const char *spec, char **ret)
{
	static const struct {
		const char *prefix;
		bool uuid; /* found in any case, like the kernel's PARTUUID= */
	} tags[] = {
		{ "UUID=", true },
		{ "LABEL=", false },
		{ "PARTUUID=", true },
		{ "PARTLABEL=", false },
	};
	char *path;

	if (!spec || !*spec)
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(tags); i++) {
		size_t l = strlen(tags[i].prefix);
		if (strncmp(spec, tags[i].prefix, l) == 0) {
			char tag[16];
			const char *val = spec + l;

			if (!*val)
				return -EINVAL;
			snprintf(tag, sizeof(tag), "%.*s", (int)(l - 1), spec);
			path = blkid_evaluate_tag(tag, val, NULL);
			if (!path && tags[i].uuid)
				path = evaluate_uuid_anycase(tag, val);
			if (!path)
				return -ENOENT;
			*ret = path;
			return 0;
		}
	}
	if (spec[0] != '/' && spec[0] != '.')
		return resolve_devnum(spec, ret);
	path = strdup(spec);
	if (!path)
		return -ENOMEM;
	*ret = path;
	return 0;
}

int hib_target_open(const char *spec, uint64_t offset_pages, bool writable,
		    struct hib_target **ret)
{
	_cleanup_(hib_target_closep) struct hib_target *t = NULL;
	struct stat st;
	int flags, r;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->fd = -1;
	t->kind = HIB_TARGET_DEVICE;
	r = resolve_spec(spec, &t->path);
	if (r < 0)
		return r;
	if (stat(t->path, &st) < 0)
		return -errno;
	if (S_ISBLK(st.st_mode)) {
		t->is_blk = true;
		t->dev = st.st_rdev;
	} else if (S_ISREG(st.st_mode)) {
		t->file_dev = st.st_dev;
		t->file_ino = st.st_ino;
	} else {
		return -ENODEV;
	}

	flags = (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC;
	t->fd = open(t->path, flags | O_DIRECT);
	if (t->fd < 0 && errno == EINVAL) /* tmpfs and friends: no O_DIRECT */
		t->fd = open(t->path, flags);
	if (t->fd < 0)
		return -errno;
	t->writable = writable;

	if (t->is_blk) {
		uint64_t sz = 0;
		if (ioctl(t->fd, BLKGETSIZE64, &sz) < 0)
			return -errno;
		t->size = sz;
	} else {
		t->size = (uint64_t)st.st_size;
	}
	if (offset_pages > UINT64_MAX / HIB_PAGE_SIZE - 1 ||
	    (offset_pages + 1) * HIB_PAGE_SIZE > t->size)
		return -ERANGE;
	t->offset_pages = offset_pages;
	*ret = TAKE_PTR(t);
	return 0;
}

int hib_target_open_file(const char *path, bool writable, struct hib_target **ret, char *why,
			 size_t whylen)
{
	_cleanup_(hib_target_closep) struct hib_target *t = NULL;
	_cleanup_(freep) uint8_t *via_dev = hib_alloc_pages(HIB_PAGE_SIZE);
	_cleanup_(freep) uint8_t *via_fs = hib_alloc_pages(HIB_PAGE_SIZE);
	_cleanup_(closep) int fd = -1;
	struct hib_filemap m;
	const uint8_t *sig;
	int r;

	if (!via_dev || !via_fs)
		return -ENOMEM;
	r = hib_filemap_read(path, &m, why, whylen);
	if (r < 0)
		return r;
	r = hib_target_open(m.device, m.first_page, writable, &t);
	if (r < 0) {
		snprintf(why, whylen, "cannot open its device %s: %s", m.device, strerror(-r));
		hib_filemap_free(&m);
		return r;
	}
	t->file = strdup(path);
	t->file_map = m.map;
	m.map = (struct hib_extmap){ 0 };
	t->file_ino = 0;
	hib_filemap_free(&m);
	if (!t->file)
		return -ENOMEM;

	/* Trust the map only if the device shows the file's first page where it says. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, whylen, "cannot open: %s", strerror(errno));
		return -errno;
	}
	(void)posix_fadvise(fd, 0, HIB_PAGE_SIZE, POSIX_FADV_DONTNEED);
	r = hib_pread_full(fd, via_fs, HIB_PAGE_SIZE, 0);
	if (r == 0)
		r = hib_target_read(t, hib_target_sig_offset(t), via_dev, HIB_PAGE_SIZE);
	if (r < 0) {
		snprintf(why, whylen, "cannot read its first page: %s", strerror(-r));
		return r;
	}
	if (memcmp(via_fs, via_dev, HIB_PAGE_SIZE) != 0) {
		snprintf(why, whylen,
			 "its first page reads differently through %s at page %llu than "
			 "through the filesystem; run sync and try again",
			 t->path, (unsigned long long)t->offset_pages);
		return -EIO;
	}
	{
		struct stat st;
		if (fstat(fd, &st) == 0) {
			t->file_dev = st.st_dev;
			t->file_ino = st.st_ino;
		}
	}
	/* What the file is meant to be: its free-state signature, or the one our tail saved. */
	sig = via_dev + HIB_PAGE_SIZE - HIB_SIG_LEN;
	if (hib_tail_is_ours(via_dev))
		sig = via_dev + HIB_PAGE_SIZE - 2 * HIB_SIG_LEN; /* orig_sig */
	if (memcmp(sig, HIB_FILE_SIG, HIB_SIG_LEN) == 0)
		t->kind = HIB_TARGET_PLAINFILE;
	else if (memcmp(sig, HIB_SWAP_SIG, HIB_SIG_LEN) == 0)
		t->kind = HIB_TARGET_SWAPFILE;
	else {
		snprintf(why, whylen,
			 "it is neither a swap file (mkswap) nor an image file (hibernate "
			 "prepare-file)");
		return -EMEDIUMTYPE;
	}
	*ret = TAKE_PTR(t);
	return 0;
}

enum hib_target_kind hib_target_kind(const struct hib_target *t)
{
	return t->kind;
}

const char *hib_target_file(const struct hib_target *t)
{
	return t->file;
}

int hib_target_alloc_page(struct hib_target *t, struct hib_snapshot *snap, uint64_t *ret_off)
{
	uint64_t off, run;
	int r;

	if (hib_target_is_swap(t))
		return snap->ops->alloc_swap_page(snap, ret_off);
	/* A plain file: its own pages in order, after page 0 (the signature page). */
	if (t->file_next == 0)
		t->file_next = 1;
	if (t->file_next >= t->file_map.pages)
		return -ENOSPC;
	r = extmap_lookup(&t->file_map, t->file_next, &off, &run);
	if (r < 0)
		return r;
	t->file_next++;
	*ret_off = off;
	return 0;
}

int hib_target_avail_pages(struct hib_target *t, struct hib_snapshot *snap, uint64_t *ret_pages)
{
	uint64_t bytes, next = MAX(t->file_next, (uint64_t)1);
	int r;

	if (!hib_target_is_swap(t)) {
		*ret_pages = t->file_map.pages > next ? t->file_map.pages - next : 0;
		return 0;
	}
	r = snap->ops->avail_swap(snap, &bytes);
	if (r < 0)
		return r;
	*ret_pages = bytes / HIB_PAGE_SIZE;
	return 0;
}

void hib_target_alloc_reset(struct hib_target *t, struct hib_snapshot *snap)
{
	if (hib_target_is_swap(t))
		snap->ops->free_swap_pages(snap);
	t->file_next = 1;
}

void hib_target_close(struct hib_target *t)
{
	if (!t)
		return;
	if (t->fd >= 0)
		close(t->fd);
	free(t->path);
	free(t->file);
	extmap_free(&t->file_map);
	free(t);
}

void hib_target_closep(struct hib_target **t)
{
	hib_target_close(*t);
	*t = NULL;
}

const char *hib_target_path(const struct hib_target *t)
{
	return t->path;
}

dev_t hib_target_devnum(const struct hib_target *t)
{
	return t->dev;
}

uint64_t hib_target_offset_pages(const struct hib_target *t)
{
	return t->offset_pages;
}

uint64_t hib_target_size(const struct hib_target *t)
{
	return t->size;
}

int hib_target_check_range(const struct hib_target *t, uint64_t off, size_t len)
{
	if (off % HIB_PAGE_SIZE || len % HIB_PAGE_SIZE || off > t->size || len > t->size - off)
		return -ERANGE;
	return 0;
}

int hib_target_read(struct hib_target *t, uint64_t off, void *buf, size_t len)
{
	int r = hib_target_check_range(t, off, len);

	return r < 0 ? r : hib_pread_full(t->fd, buf, len, off);
}

int hib_target_write(struct hib_target *t, uint64_t off, const void *buf, size_t len)
{
	int r = hib_target_check_range(t, off, len);

	if (r < 0)
		return r;
	if (!t->writable)
		return -EBADF;
	return hib_pwrite_full(t->fd, buf, len, off);
}

int hib_target_sync(struct hib_target *t)
{
	return fdatasync(t->fd) < 0 ? -errno : 0;
}

/*
 * /proc/swaps names active areas by path, with spaces and such escaped as
 * \ooo. Compare by identity, not by name: /dev/vda1 and
 * /dev/disk/by-uuid/… are the same area.
 */
static void unescape_octal(char *s)
{
	char *w = s;

	for (char *p = s; *p; p++) {
		if (p[0] == '\\' && isdigit((unsigned char)p[1]) && isdigit((unsigned char)p[2]) &&
		    isdigit((unsigned char)p[3])) {
			*w++ = (char)(((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0'));
			p += 3;
		} else {
			*w++ = *p;
		}
	}
	*w = 0;
}

/* Calls fn(path, type) for each active swap area; stops when fn returns non-zero. */
static int for_each_swap(const char *proc_swaps, int (*fn)(const char *path, const char *type,
							     void *ud),
			 void *ud)
{
	_cleanup_(freep) char *line = NULL;
	size_t cap = 0;
	FILE *f;
	int r = 0;

	f = fopen(proc_swaps ? proc_swaps : "/proc/swaps", "re");
	if (!f)
		return -errno;
	if (getline(&line, &cap, f) < 0) { /* the column titles */
		fclose(f);
		return 0;
	}
	while (getline(&line, &cap, f) > 0) {
		char path[PATH_MAX], type[32];

		if (sscanf(line, "%4095s %31s", path, type) != 2)
			continue;
		unescape_octal(path);
		r = fn(path, type, ud);
		if (r)
			break;
	}
	fclose(f);
	return r;
}

static int match_target(const char *path, const char *type, void *ud)
{
	const struct hib_target *t = ud;
	struct stat st;

	(void)type;
	if (stat(path, &st) < 0)
		return 0;
	if (S_ISBLK(st.st_mode))
		return t->is_blk && st.st_rdev == t->dev && t->offset_pages == 0;
	if (!S_ISREG(st.st_mode))
		return 0;
	if (t->file_ino)
		return st.st_dev == t->file_dev && st.st_ino == t->file_ino;
	/* A swap file named by device and offset (resume= resume_offset=): map it. */
	if (t->is_blk && st.st_dev == t->dev && t->offset_pages > 0) {
		struct hib_filemap m;
		char why[256];
		int hit = 0;
		if (hib_filemap_read(path, &m, why, sizeof(why)) == 0) {
			hit = m.first_page == t->offset_pages;
			hib_filemap_free(&m);
		}
		return hit;
	}
	return 0;
}

int hib_target_swap_active(const struct hib_target *t, const char *proc_swaps)
{
	int r = for_each_swap(proc_swaps, match_target, (void *)t);

	return r < 0 ? r : r > 0;
}

struct guess {
	char *found;
	int count;
};

static int collect_partition(const char *path, const char *type, void *ud)
{
	struct guess *g = ud;

	if (strcmp(type, "partition") != 0)
		return 0;
	if (++g->count == 1)
		g->found = strdup(path);
	return 0;
}

int hib_target_guess(const char *cmdline, const char *proc_swaps, char **ret_spec,
		     uint64_t *ret_offset_pages)
{
	_cleanup_(freep) char *text = NULL;
	struct hib_cmdline c;
	struct guess g = { 0 };
	int r;

	if (!cmdline) {
		FILE *f = fopen("/proc/cmdline", "re");
		size_t cap = 0;
		if (f) {
			if (getline(&text, &cap, f) < 0) {
				free(text);
				text = NULL;
			}
			fclose(f);
		}
		cmdline = text ? text : "";
	}
	r = hib_cmdline_parse(cmdline, &c);
	if (r < 0)
		return r;
	if (c.resume) {
		*ret_spec = TAKE_PTR(c.resume);
		*ret_offset_pages = c.resume_offset;
		hib_cmdline_free(&c);
		return 0;
	}
	hib_cmdline_free(&c);

	r = for_each_swap(proc_swaps, collect_partition, &g);
	if (r < 0 && r != -ENOENT)
		return r;
	if (g.count == 0)
		return -ENOENT;
	if (g.count > 1) {
		free(g.found);
		return -ENOTUNIQ;
	}
	if (!g.found)
		return -ENOMEM;
	*ret_spec = g.found;
	*ret_offset_pages = 0;
	return 0;
}

static int logical_io(struct hib_target *t, const struct hib_extmap *m, uint64_t lp, uint8_t *buf,
		      uint64_t pages, bool write)
{
	while (pages > 0) {
		uint64_t off, run;
		int r = extmap_lookup(m, lp, &off, &run);

		if (r < 0)
			return r;
		run = MIN(run, pages);
		r = write ? hib_target_write(t, off, buf, run * HIB_PAGE_SIZE)
			  : hib_target_read(t, off, buf, run * HIB_PAGE_SIZE);
		if (r < 0)
			return r;
		buf += run * HIB_PAGE_SIZE;
		lp += run;
		pages -= run;
	}
	return 0;
}

int hib_target_read_logical(struct hib_target *t, const struct hib_extmap *m, uint64_t lp,
			    void *buf, uint64_t pages)
{
	return logical_io(t, m, lp, buf, pages, false);
}

int hib_target_write_logical(struct hib_target *t, const struct hib_extmap *m, uint64_t lp,
			     const void *buf, uint64_t pages)
{
	return logical_io(t, m, lp, (uint8_t *)buf, pages, true);
}
