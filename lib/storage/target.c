// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Opening a target: the device a spec names (spec.c), or a file through the
 * device under it, and raw page I/O on it. O_DIRECT where the device allows
 * it: the image must reach the disk, not a page cache that a power cut or
 * the resumed kernel would throw away.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/fs.h>

#include "storage/filemap.h"
#include "storage/target-priv.h"
#include "util/error.h"
#include "util/util.h"

int hib_target_open(const char *spec, uint64_t offset_pages, bool writable, struct hib_target **ret)
{
	_cleanup_(hib_target_closep) struct hib_target *t = NULL;
	struct stat st;
	int flags, r;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->fd = -1;
	t->kind = HIB_TARGET_DEVICE;
	r = hib_target_spec_path(spec, &t->path);
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

/* Trust the map only if the device shows the file's first page where it says;
 * then that page says what the file is meant to be, and it must be what the
 * map's rules were chosen for (@kind). */
static int check_first_page(struct hib_target *t, const char *path, enum hib_file_kind kind,
			    struct hib_error *err)
{
	_cleanup_(freep) uint8_t *via_dev = hib_alloc_pages(HIB_PAGE_SIZE);
	_cleanup_(freep) uint8_t *via_fs = hib_alloc_pages(HIB_PAGE_SIZE);
	_cleanup_(closep) int fd = -1;
	enum hib_file_kind seen;
	struct stat st;
	int r;

	if (!via_dev || !via_fs)
		return hib_error_ensure(err, -ENOMEM);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		r = -errno;
		return hib_error_set(err, r, "cannot open: %s", strerror(-r));
	}
	(void)posix_fadvise(fd, 0, HIB_PAGE_SIZE, POSIX_FADV_DONTNEED);
	r = hib_pread_full(fd, via_fs, HIB_PAGE_SIZE, 0);
	if (r == 0)
		r = hib_target_read(t, hib_target_sig_offset(t), via_dev, HIB_PAGE_SIZE);
	if (r < 0)
		return hib_error_set(err, r, "cannot read its first page: %s", strerror(-r));
	if (memcmp(via_fs, via_dev, HIB_PAGE_SIZE) != 0)
		return hib_error_set(err, -EIO,
				     "its first page reads differently through %s at page %llu "
				     "than through the filesystem; run sync and try again",
				     t->path, (unsigned long long)t->offset_pages);
	t->file_dev = st.st_dev;
	t->file_ino = st.st_ino;
	seen = hib_filemap_kind_of_page(via_dev);
	if (seen == HIB_FILE_OTHER)
		return hib_error_set(err, -EMEDIUMTYPE,
				     "it is neither a swap file (mkswap) nor an image file "
				     "(hibernate prepare-file)");
	t->kind = seen == HIB_FILE_SWAP ? HIB_TARGET_SWAPFILE : HIB_TARGET_PLAINFILE;
	/* Made the other kind since it was mapped: the map's rules were not
	 * this kind's. */
	if (seen != kind)
		return hib_error_set(err, -EAGAIN, "it changed while it was opened; try again");
	return 0;
}

/* hib_target_open_file's work; @err gets the reason alone. */
static int open_file(const char *path, bool writable, struct hib_target **ret,
		     struct hib_error *err)
{
	_cleanup_(hib_target_closep) struct hib_target *t = NULL;
	enum hib_file_kind kind;
	struct hib_filemap m;
	int r;

	r = hib_filemap_read(path, &m, err);
	if (r < 0)
		return r;
	r = hib_target_open(m.device, m.first_page, writable, &t);
	if (r < 0) {
		hib_error_set(err, r, "cannot open its device %s: %s", m.device, strerror(-r));
		hib_filemap_free(&m);
		return r;
	}
	t->file = strdup(path);
	t->file_map = m.map;
	m.map = (struct hib_extmap){ 0 };
	t->file_ino = 0;
	t->file_unwritten = m.unwritten_pages;
	kind = m.kind;
	hib_filemap_free(&m);
	if (!t->file)
		return hib_error_ensure(err, -ENOMEM);
	r = check_first_page(t, path, kind, err);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(t);
	return 0;
}

int hib_target_open_file(const char *path, bool writable, struct hib_target **ret,
			 struct hib_error *err)
{
	int r;

	hib_error_clear(err);
	r = open_file(path, writable, ret, err);
	return r < 0 ? hib_error_prefix(err, r, "%s: cannot be a hibernation target: ", path) : 0;
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

const char *hib_target_name(const struct hib_target *t)
{
	return t->file ? t->file : t->path;
}

bool hib_target_writable(const struct hib_target *t)
{
	return t->writable;
}

uint64_t hib_target_file_size(const struct hib_target *t)
{
	return t->file ? t->file_map.pages * HIB_PAGE_SIZE : 0;
}

uint64_t hib_target_file_unwritten(const struct hib_target *t)
{
	return t->file_unwritten;
}

bool hib_target_is_swap(const struct hib_target *t)
{
	return t->kind != HIB_TARGET_PLAINFILE;
}

uint64_t hib_target_sig_offset(const struct hib_target *t)
{
	return t->offset_pages * HIB_PAGE_SIZE;
}

int hib_target_fd(const struct hib_target *t)
{
	return t->fd;
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
