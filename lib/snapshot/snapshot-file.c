// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A snapshot device backed by a file, for benchmarks and debugging: in
 * hibernate mode it serves a captured kernel stream (and hands
 * out swap pages 1..N like a fresh swap area); in resume mode it appends what
 * it is given to a file (or only counts it, with no file). Like the fake, it
 * never freezes anything and returns from a "restore".
 */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "format/format.h"
#include "snapshot/snapshot-fake.h"
#include "snapshot/snapshot.h"
#include "util/util.h"

struct snapshot_file {
	struct hib_snapshot base;
	int fd;
	uint64_t size, pos;
	uint64_t swap_pages, next_swap;
	int frozen, ready;
};

#define SF(s) ((struct snapshot_file *)(s))

static int sf_set_swap_area(struct hib_snapshot *s, dev_t d, uint64_t o)
{
	(void)d, (void)o;
	SF(s)->next_swap = 1;
	return 0;
}
static int sf_freeze(struct hib_snapshot *s)
{
	SF(s)->frozen = 1;
	return 0;
}
static int sf_unfreeze(struct hib_snapshot *s)
{
	if (!SF(s)->ready)
		SF(s)->frozen = 0;
	return 0;
}
static int sf_noop_int(struct hib_snapshot *s, int v)
{
	(void)s, (void)v;
	return 0;
}
static int sf_noop_u64(struct hib_snapshot *s, uint64_t v)
{
	(void)s, (void)v;
	return 0;
}
static int sf_create_image(struct hib_snapshot *s, int *in_suspend)
{
	if (s->mode != HIB_SNAP_HIBERNATE || !SF(s)->frozen)
		return -EPERM;
	SF(s)->ready = 1;
	SF(s)->pos = 0;
	*in_suspend = 1;
	return 0;
}
static int sf_get_image_size(struct hib_snapshot *s, uint64_t *b)
{
	*b = SF(s)->size;
	return 0;
}
static int sf_avail_swap(struct hib_snapshot *s, uint64_t *b)
{
	*b = (SF(s)->swap_pages - SF(s)->next_swap) * HIB_PAGE_SIZE;
	return 0;
}
static int sf_alloc_swap_page(struct hib_snapshot *s, uint64_t *off)
{
	struct snapshot_file *f = SF(s);

	if (f->next_swap == 0)
		return -ENODEV;
	if (f->next_swap >= f->swap_pages)
		return -ENOSPC;
	*off = f->next_swap++ * HIB_PAGE_SIZE;
	return 0;
}
static int sf_free_swap_pages(struct hib_snapshot *s)
{
	if (SF(s)->next_swap)
		SF(s)->next_swap = 1;
	return 0;
}
static int sf_free_image(struct hib_snapshot *s)
{
	SF(s)->ready = 0;
	return 0;
}
/* Pages of the file's stream left from f->pos, at most @pages. */
static size_t sf_left(const struct snapshot_file *f, size_t pages)
{
	uint64_t left = (f->size - f->pos + HIB_PAGE_SIZE - 1) / HIB_PAGE_SIZE;

	return (size_t)MIN((uint64_t)pages, left);
}
/* A batch is one pread or pwrite: the file has no pages that fail alone. */
static ssize_t sf_read_pages(struct hib_snapshot *s, void *buf, size_t pages)
{
	struct snapshot_file *f = SF(s);
	size_t n;
	int r;

	if (!f->ready)
		return -ENODATA;
	if (pages > HIB_SNAP_BATCH_PAGES)
		return -EINVAL;
	if (f->pos >= f->size)
		return 0;
	n = sf_left(f, pages);
	r = hib_pread_full(f->fd, buf, n * HIB_PAGE_SIZE, f->pos);
	if (r < 0)
		return r;
	f->pos += n * HIB_PAGE_SIZE;
	return (ssize_t)(n * HIB_PAGE_SIZE);
}
static ssize_t sf_write_pages(struct hib_snapshot *s, const void *buf, size_t pages)
{
	struct snapshot_file *f = SF(s);
	size_t n = pages;

	if (s->mode != HIB_SNAP_RESUME)
		return -EPERM;
	if (pages > HIB_SNAP_BATCH_PAGES)
		return -EINVAL;
	/* The end of the stream: the engine's final write must see 0. */
	if (f->size && f->pos >= f->size)
		return 0;
	if (f->size)
		n = sf_left(f, pages);
	if (f->fd >= 0) {
		int r = hib_pwrite_full(f->fd, buf, n * HIB_PAGE_SIZE, f->pos);
		if (r < 0)
			return r;
	}
	f->pos += n * HIB_PAGE_SIZE;
	return (ssize_t)(n * HIB_PAGE_SIZE);
}
static int sf_atomic_restore(struct hib_snapshot *s)
{
	return SF(s)->frozen ? 0 : -EPERM;
}
static int sf_power_off(struct hib_snapshot *s, enum hib_powerdown how)
{
	(void)s, (void)how;
	return 0;
}
static int sf_s2ram(struct hib_snapshot *s)
{
	(void)s;
	return -EOPNOTSUPP;
}
static void sf_close(struct hib_snapshot *s)
{
	if (SF(s)->fd >= 0)
		close(SF(s)->fd);
	free(s);
}

static const struct hib_snapshot_ops sf_ops = {
	.set_swap_area = sf_set_swap_area,
	.freeze = sf_freeze,
	.unfreeze = sf_unfreeze,
	.platform_support = sf_noop_int,
	.pref_image_size = sf_noop_u64,
	.create_image = sf_create_image,
	.get_image_size = sf_get_image_size,
	.avail_swap = sf_avail_swap,
	.alloc_swap_page = sf_alloc_swap_page,
	.free_swap_pages = sf_free_swap_pages,
	.free_image = sf_free_image,
	.read_pages = sf_read_pages,
	.write_pages = sf_write_pages,
	.atomic_restore = sf_atomic_restore,
	.power_off = sf_power_off,
	.s2ram = sf_s2ram,
	.close = sf_close,
};

int hib_snapshot_file_new(const char *path, enum hib_snapshot_mode mode, uint64_t swap_pages,
			  uint64_t expect_bytes, struct hib_snapshot **ret)
{
	struct snapshot_file *f = calloc(1, sizeof(*f));
	struct stat st;

	if (!f)
		return -ENOMEM;
	f->base.ops = &sf_ops;
	f->base.mode = mode;
	f->base.caps = HIB_SNAP_CAP_RETURNS;
	f->fd = -1;
	f->swap_pages = swap_pages;
	if (mode == HIB_SNAP_HIBERNATE) {
		f->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (f->fd < 0 || fstat(f->fd, &st) < 0 || st.st_size % HIB_PAGE_SIZE ||
		    st.st_size == 0) {
			int r = f->fd < 0 ? -errno : -EINVAL;
			sf_close(&f->base);
			return r;
		}
		f->size = (uint64_t)st.st_size;
	} else {
		f->size = expect_bytes;
		if (path) {
			f->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
			if (f->fd < 0) {
				int r = -errno;
				free(f);
				return r;
			}
		}
	}
	*ret = &f->base;
	return 0;
}
