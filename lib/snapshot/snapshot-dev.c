// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * /dev/snapshot: the kernel's half of userspace hibernation
 * (kernel/power/user.c). The kernel makes the atomic copy and restores it;
 * we move the stream and decide where it lives.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/reboot.h>
#include <sys/uio.h>
#include <sys/sysmacros.h>
#include <linux/suspend_ioctls.h>

#include "format/format.h"
#include "snapshot/snapshot.h"
#include "util/util.h"

#define SNAPSHOT_DEFAULT_PATH "/dev/snapshot"

struct snapshot_dev {
	struct hib_snapshot base;
	int fd;
	int platform;
	struct iovec iov[HIB_SNAP_BATCH_PAGES]; /* dev_rw_pages' segments */
};

static int xioctl(struct hib_snapshot *s, unsigned long req, void *arg)
{
	struct snapshot_dev *d = (struct snapshot_dev *)s;

	if (ioctl(d->fd, req, arg) < 0)
		return -errno;
	return 0;
}

static int xioctl_val(struct hib_snapshot *s, unsigned long req, unsigned long val)
{
	struct snapshot_dev *d = (struct snapshot_dev *)s;

	if (ioctl(d->fd, req, val) < 0)
		return -errno;
	return 0;
}

static int dev_set_swap_area(struct hib_snapshot *s, dev_t dev, uint64_t offset_pages)
{
	struct resume_swap_area area;
	unsigned int maj = major(dev), min = minor(dev);

	memset(&area, 0, sizeof(area));
	area.offset = (__kernel_loff_t)offset_pages;
	/* The kernel decodes this with new_decode_dev(). */
	area.dev = (min & 0xff) | (maj << 8) | ((min & ~0xffu) << 12);
	return xioctl(s, SNAPSHOT_SET_SWAP_AREA, &area);
}

static int dev_freeze(struct hib_snapshot *s)
{
	return xioctl_val(s, SNAPSHOT_FREEZE, 0);
}

static int dev_unfreeze(struct hib_snapshot *s)
{
	return xioctl_val(s, SNAPSHOT_UNFREEZE, 0);
}

static int dev_platform_support(struct hib_snapshot *s, int on)
{
	struct snapshot_dev *d = (struct snapshot_dev *)s;
	int r = xioctl_val(s, SNAPSHOT_PLATFORM_SUPPORT, (unsigned long)!!on);

	if (r == 0)
		d->platform = !!on;
	return r;
}

static int dev_pref_image_size(struct hib_snapshot *s, uint64_t bytes)
{
	return xioctl_val(s, SNAPSHOT_PREF_IMAGE_SIZE, (unsigned long)bytes);
}

static int dev_image_size_pref_get(struct hib_snapshot *s, uint64_t *bytes)
{
	unsigned long long v;
	FILE *f = fopen("/sys/power/image_size", "re");
	int n;

	(void)s;
	if (!f)
		return -errno;
	n = fscanf(f, "%llu", &v);
	fclose(f);
	if (n != 1)
		return -EIO;
	*bytes = v;
	return 0;
}

static int dev_create_image(struct hib_snapshot *s, int *in_suspend)
{
	return xioctl(s, SNAPSHOT_CREATE_IMAGE, in_suspend);
}

static int dev_get_image_size(struct hib_snapshot *s, uint64_t *bytes)
{
	loff_t v = 0;
	int r = xioctl(s, SNAPSHOT_GET_IMAGE_SIZE, &v);

	if (r == 0)
		*bytes = (uint64_t)v;
	return r;
}

static int dev_avail_swap(struct hib_snapshot *s, uint64_t *bytes)
{
	loff_t v = 0;
	int r = xioctl(s, SNAPSHOT_AVAIL_SWAP_SIZE, &v);

	if (r == 0)
		*bytes = (uint64_t)v;
	return r;
}

static int dev_alloc_swap_page(struct hib_snapshot *s, uint64_t *byte_offset)
{
	loff_t v = 0;
	int r = xioctl(s, SNAPSHOT_ALLOC_SWAP_PAGE, &v);

	if (r == 0)
		*byte_offset = (uint64_t)v;
	return r;
}

static int dev_free_swap_pages(struct hib_snapshot *s)
{
	return xioctl_val(s, SNAPSHOT_FREE_SWAP_PAGES, 0);
}

static int dev_free_image(struct hib_snapshot *s)
{
	return xioctl_val(s, SNAPSHOT_FREE, 0);
}

/*
 * Up to @pages one-page segments in one readv() or writev(). The kernel's
 * device has no read_iter/write_iter, so the VFS calls snapshot_read() or
 * snapshot_write() once a segment (do_loop_readv_writev), each moving one
 * page as read() and write() would, and stops at the first segment that
 * moves less than a page: the end of the stream, or an error, which it drops
 * when pages moved before it. Then the next call, which starts at that page,
 * returns the 0 or the error again: the kernel's errors there come from the
 * image's state, not from the call (after one that freed the image, write
 * says 0, the image "complete", which the engine takes for a failure short
 * of the stream's end). A fault on our own buffer would leave the stream a
 * page short or long, which the engine's count of the stream catches. One
 * call instead of one a page: the syscall's entry and exit and the system
 * sleep lock are paid once a batch.
 */
static ssize_t dev_rw_pages(struct hib_snapshot *s, const void *buf, size_t pages, bool wr)
{
	struct snapshot_dev *d = (struct snapshot_dev *)s;
	ssize_t n;

	if (pages > HIB_SNAP_BATCH_PAGES)
		return -EINVAL; /* as readv()/writev() of more than IOV_MAX segments */
	for (size_t i = 0; i < pages; i++) {
		d->iov[i].iov_base = (uint8_t *)buf + i * HIB_PAGE_SIZE;
		d->iov[i].iov_len = HIB_PAGE_SIZE;
	}
	do
		n = wr ? writev(d->fd, d->iov, (int)pages) : readv(d->fd, d->iov, (int)pages);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	/* The kernel moves whole pages of whole-page segments. */
	if (n % HIB_PAGE_SIZE != 0)
		return -EIO;
	return n;
}

static ssize_t dev_read_pages(struct hib_snapshot *s, void *buf, size_t pages)
{
	return dev_rw_pages(s, buf, pages, false);
}

static ssize_t dev_write_pages(struct hib_snapshot *s, const void *buf, size_t pages)
{
	return dev_rw_pages(s, buf, pages, true);
}

static int dev_atomic_restore(struct hib_snapshot *s)
{
	return xioctl_val(s, SNAPSHOT_ATOMIC_RESTORE, 0);
}

static int dev_power_off(struct hib_snapshot *s, enum hib_powerdown how)
{
	struct snapshot_dev *d = (struct snapshot_dev *)s;

	switch (how) {
	case HIB_POWERDOWN_PLATFORM:
		if (d->platform) {
			int r = xioctl_val(s, SNAPSHOT_POWER_OFF, 0);
			/* Returns only on failure: fall through to a plain power-off. */
			log_warn("platform power-off failed (%s), powering off", strerror(-r));
		}
		/* fall through */
	case HIB_POWERDOWN_SHUTDOWN:
		reboot(RB_POWER_OFF);
		return -errno;
	case HIB_POWERDOWN_REBOOT:
		reboot(RB_AUTOBOOT);
		return -errno;
	case HIB_POWERDOWN_NONE:
	case HIB_POWERDOWN_SUSPEND:
	case HIB_POWERDOWN_TEST:
		return 0;
	}
	return -EINVAL;
}

static int dev_s2ram(struct hib_snapshot *s)
{
	return xioctl_val(s, SNAPSHOT_S2RAM, 0);
}

static void dev_close(struct hib_snapshot *s)
{
	struct snapshot_dev *d = (struct snapshot_dev *)s;

	if (d->fd >= 0)
		close(d->fd);
	free(d);
}

static const struct hib_snapshot_ops dev_ops = {
	.set_swap_area = dev_set_swap_area,
	.freeze = dev_freeze,
	.unfreeze = dev_unfreeze,
	.platform_support = dev_platform_support,
	.pref_image_size = dev_pref_image_size,
	.image_size_pref_get = dev_image_size_pref_get,
	.create_image = dev_create_image,
	.get_image_size = dev_get_image_size,
	.avail_swap = dev_avail_swap,
	.alloc_swap_page = dev_alloc_swap_page,
	.free_swap_pages = dev_free_swap_pages,
	.free_image = dev_free_image,
	.read_pages = dev_read_pages,
	.write_pages = dev_write_pages,
	.atomic_restore = dev_atomic_restore,
	.power_off = dev_power_off,
	.s2ram = dev_s2ram,
	.close = dev_close,
};

int hib_snapshot_open_dev(const char *path, enum hib_snapshot_mode mode, struct hib_snapshot **ret)
{
	struct snapshot_dev *d;
	int fd;

	fd = open(path ? path : SNAPSHOT_DEFAULT_PATH,
		  (mode == HIB_SNAP_HIBERNATE ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = calloc(1, sizeof(*d));
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	d->base.ops = &dev_ops;
	d->base.mode = mode;
	d->base.caps = HIB_SNAP_CAP_FREEZES_SYSTEM;
	d->fd = fd;
	*ret = &d->base;
	return 0;
}

void hib_snapshot_close(struct hib_snapshot *s)
{
	if (s)
		s->ops->close(s);
}

void hib_snapshot_closep(struct hib_snapshot **s)
{
	hib_snapshot_close(*s);
	*s = NULL;
}
