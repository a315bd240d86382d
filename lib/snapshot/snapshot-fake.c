// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A fake /dev/snapshot for host tests. It behaves like kernel/power/user.c
 * where the engine can tell (ioctl order, EPERM/ENODATA/ENOSPC, one page per
 * read or write and readv/writev's loop over them, UNFREEZE ignored while an
 * image is held) and produces a
 * stream shaped like the kernel's: a header page, PFN metadata pages, then
 * data pages of mixed content, so codecs see what they would see in life.
 */
#include <stdio.h>
#include <string.h>

#include "format/format.h"
#include "snapshot/snapshot-fake.h"
#include "snapshot/snapshot.h"
#include "util/util.h"

struct snapshot_fake {
	struct hib_snapshot base;
	struct hib_fake_params p;
	uint64_t meta_pages;
	int64_t pref_bytes;     /* the last PREF_IMAGE_SIZE, -1 before one */
	int64_t pref_at_create; /* pref_bytes at the last CREATE_IMAGE, -1 before one */
	int frozen;
	int ready;
	int platform;
	uint64_t pos;       /* next page to read or expect */
	uint64_t next_swap; /* allocator cursor */
	uint64_t pages_ok;
	int mismatch;
	int restored;
	int complete;
	uint64_t calls;   /* read_pages and write_pages calls */
	uint32_t creates; /* CREATE_IMAGE calls that made an image */
	int oversize;     /* the image held is one of the first p.oversize_creates */
};

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static const char *const words[] = {
	"the",     "kernel", "page",   "memory", "image",  "swap",   "resume",
	"process", "user",   "data",   "file",   "system", "device", "block",
	"frozen",  "thread", "buffer", "cache",  "int",    "return", "struct",
	"static",  "void",   "if",     "else",   "for",    "while",  "char",
};

/* Page @i of the stream the fake pretends the kernel made. */
static void fake_page(const struct snapshot_fake *f, uint64_t i, uint8_t *page)
{
	uint64_t x = f->p.seed * 1000003u + i;
	size_t k;

	if (i == 0) {
		/* struct swsusp_info: utsname, page counts, checksum-ish words. */
		memset(page, 0, HIB_PAGE_SIZE);
		snprintf((char *)page + 64, 200, "Linux fake 6.1.0-fake #1 SMP x86_64 pages=%llu",
			 (unsigned long long)f->p.stream_pages);
		for (k = 0; k < 8; k++)
			((uint64_t *)page)[k] = splitmix(&x);
		return;
	}
	if (i <= f->meta_pages) {
		/* PFN lists: increasing 64-bit numbers with small gaps. */
		uint64_t pfn = 0x1000 + i * 512 * 3;
		for (k = 0; k < HIB_PAGE_SIZE / 8; k++) {
			pfn += 1 + (splitmix(&x) & 3);
			((uint64_t *)page)[k] = pfn;
		}
		return;
	}
	switch (splitmix(&x) % 10) {
	case 0:
	case 1:
	case 2: /* free-ish or zeroed memory */
		memset(page, 0, HIB_PAGE_SIZE);
		break;
	case 3:
	case 4: { /* text */
		size_t n = 0;
		while (n < HIB_PAGE_SIZE) {
			const char *w = words[splitmix(&x) % ARRAY_SIZE(words)];
			size_t l = strlen(w);
			for (size_t j = 0; j < l && n < HIB_PAGE_SIZE; j++)
				page[n++] = (uint8_t)w[j];
			if (n < HIB_PAGE_SIZE)
				page[n++] = (splitmix(&x) % 12) ? ' ' : '\n';
		}
		break;
	}
	case 5:
	case 6: /* random: keys, compressed files, encrypted data */
		for (k = 0; k < HIB_PAGE_SIZE / 8; k++)
			((uint64_t *)page)[k] = splitmix(&x);
		break;
	case 7: { /* a repeated pattern */
		uint64_t v = splitmix(&x);
		for (k = 0; k < HIB_PAGE_SIZE / 8; k++)
			((uint64_t *)page)[k] = v;
		break;
	}
	case 8: /* machine code / structs: small integers and pointers */
		for (k = 0; k < HIB_PAGE_SIZE / 8; k++) {
			uint64_t r = splitmix(&x);
			((uint64_t *)page)[k] = (r & 1) ? (0xffff888000000000ull | (r & 0xfffff8))
							: (r >> 58);
		}
		break;
	default: /* half zero, half random */
		memset(page, 0, HIB_PAGE_SIZE);
		for (k = 0; k < HIB_PAGE_SIZE / 16; k++)
			((uint64_t *)page)[k] = splitmix(&x);
		break;
	}
}

#define FAKE(s) ((struct snapshot_fake *)(s))

static int fake_set_swap_area(struct hib_snapshot *s, dev_t dev, uint64_t offset_pages)
{
	(void)dev;
	(void)offset_pages;
	if (s->mode != HIB_SNAP_HIBERNATE)
		return -EPERM;
	FAKE(s)->next_swap = 1;
	return 0;
}

static int fake_freeze(struct hib_snapshot *s)
{
	struct snapshot_fake *f = FAKE(s);

	if (!f->frozen && f->p.on_freeze)
		f->p.on_freeze(f->p.hook_userdata);
	f->frozen = 1;
	return 0;
}

static void fake_thaw(struct snapshot_fake *f)
{
	if (f->frozen && f->p.on_thaw)
		f->p.on_thaw(f->p.hook_userdata);
	f->frozen = 0;
}

static int fake_unfreeze(struct hib_snapshot *s)
{
	struct snapshot_fake *f = FAKE(s);

	/* Like the kernel: ignored while an image is held. */
	if (!f->ready)
		fake_thaw(f);
	return 0;
}

static int fake_platform_support(struct hib_snapshot *s, int on)
{
	FAKE(s)->platform = on;
	return 0;
}

static int fake_pref_image_size(struct hib_snapshot *s, uint64_t bytes)
{
	FAKE(s)->pref_bytes = (int64_t)bytes;
	return 0;
}

int64_t hib_snapshot_fake_pref(const struct hib_snapshot *s)
{
	return ((const struct snapshot_fake *)s)->pref_bytes;
}

uint32_t hib_snapshot_fake_creates(const struct hib_snapshot *s)
{
	return ((const struct snapshot_fake *)s)->creates;
}

int64_t hib_snapshot_fake_pref_at_create(const struct hib_snapshot *s)
{
	return ((const struct snapshot_fake *)s)->pref_at_create;
}

/* As /sys/power/image_size: the last wish, or the kernel's own before any. */
static int fake_image_size_pref_get(struct hib_snapshot *s, uint64_t *bytes)
{
	int64_t v = FAKE(s)->pref_bytes;

	*bytes = v >= 0 ? (uint64_t)v : HIB_FAKE_KERNEL_IMAGE_SIZE;
	return 0;
}

static int fake_create_image(struct hib_snapshot *s, int *in_suspend)
{
	struct snapshot_fake *f = FAKE(s);

	if (s->mode != HIB_SNAP_HIBERNATE || !f->frozen || f->ready)
		return -EPERM;
	f->ready = 1;
	f->pos = 0;
	f->pref_at_create = f->pref_bytes;
	f->oversize = ++f->creates <= f->p.oversize_creates;
	*in_suspend = !f->p.create_resumes;
	return 0;
}

static int fake_get_image_size(struct hib_snapshot *s, uint64_t *bytes)
{
	if (!FAKE(s)->ready)
		return -ENODATA;
	*bytes = (FAKE(s)->p.stream_pages + (FAKE(s)->oversize ? FAKE(s)->p.oversize_pages : 0)) *
		 HIB_PAGE_SIZE;
	return 0;
}

static uint64_t fake_usable(const struct snapshot_fake *f, uint64_t page)
{
	return f->p.frag_every == 0 || page % f->p.frag_every != 0;
}

static int fake_avail_swap(struct hib_snapshot *s, uint64_t *bytes)
{
	struct snapshot_fake *f = FAKE(s);
	uint64_t n = 0;

	for (uint64_t p = f->next_swap ? f->next_swap : 1; p < f->p.swap_pages; p++)
		n += fake_usable(f, p);
	*bytes = n * HIB_PAGE_SIZE;
	return 0;
}

static int fake_alloc_swap_page(struct hib_snapshot *s, uint64_t *byte_offset)
{
	struct snapshot_fake *f = FAKE(s);

	if (s->mode != HIB_SNAP_HIBERNATE || f->next_swap == 0)
		return -ENODEV;
	while (f->next_swap < f->p.swap_pages && !fake_usable(f, f->next_swap))
		f->next_swap++;
	if (f->next_swap >= f->p.swap_pages)
		return -ENOSPC;
	*byte_offset = f->next_swap++ * HIB_PAGE_SIZE;
	return 0;
}

static int fake_free_swap_pages(struct hib_snapshot *s)
{
	if (FAKE(s)->next_swap)
		FAKE(s)->next_swap = 1;
	return 0;
}

static int fake_free_image(struct hib_snapshot *s)
{
	FAKE(s)->ready = 0;
	FAKE(s)->oversize = 0;
	FAKE(s)->pos = 0;
	return 0;
}

static ssize_t fake_read_page(struct hib_snapshot *s, void *buf)
{
	struct snapshot_fake *f = FAKE(s);

	if (!f->ready || f->oversize) /* an image over the limit is freed unread */
		return -ENODATA;
	if (f->pos >= f->p.stream_pages)
		return 0;
	if (f->p.fail_read_at >= 0 && f->pos == (uint64_t)f->p.fail_read_at)
		return -(f->p.fail_errno ? f->p.fail_errno : EIO);
	fake_page(f, f->pos++, buf);
	return HIB_PAGE_SIZE;
}

static ssize_t fake_write_page(struct hib_snapshot *s, const void *buf)
{
	struct snapshot_fake *f = FAKE(s);
	uint8_t want[HIB_PAGE_SIZE];

	if (s->mode != HIB_SNAP_RESUME)
		return -EPERM;
	if (f->pos >= f->p.stream_pages)
		return 0;
	if (f->p.fail_write_at >= 0 && f->pos == (uint64_t)f->p.fail_write_at)
		return -(f->p.fail_errno ? f->p.fail_errno : EIO);
	fake_page(f, f->pos, want);
	if (memcmp(want, buf, HIB_PAGE_SIZE) != 0)
		f->mismatch = 1;
	else
		f->pages_ok++;
	f->pos++;
	return HIB_PAGE_SIZE;
}

/*
 * The kernel's loop over one-page segments (do_loop_readv_writev): page after
 * page until one moves less than a page (the end) or fails; its error is
 * dropped when pages moved before it, and the next call meets it again.
 */
static ssize_t fake_batch(struct hib_snapshot *s, uint8_t *buf, size_t pages, bool wr)
{
	struct snapshot_fake *f = FAKE(s);
	ssize_t done = 0;

	if (pages > HIB_SNAP_BATCH_PAGES)
		return -EINVAL; /* readv()/writev(): more than IOV_MAX segments */
	f->calls++;
	for (size_t i = 0; i < pages; i++) {
		ssize_t n = wr ? fake_write_page(s, buf + done) : fake_read_page(s, buf + done);
		if (n < 0)
			return done ? done : n;
		done += n;
		if (n != (ssize_t)HIB_PAGE_SIZE)
			break;
	}
	return done;
}

static ssize_t fake_read_pages(struct hib_snapshot *s, void *buf, size_t pages)
{
	return fake_batch(s, buf, pages, false);
}

static ssize_t fake_write_pages(struct hib_snapshot *s, const void *buf, size_t pages)
{
	/* fake_write_page only reads the page. */
	return fake_batch(s, (uint8_t *)buf, pages, true);
}

static int fake_atomic_restore(struct hib_snapshot *s)
{
	struct snapshot_fake *f = FAKE(s);

	if (s->mode != HIB_SNAP_RESUME || !f->frozen || f->pos != f->p.stream_pages)
		return -EPERM;
	if (f->p.on_atomic_restore)
		f->p.on_atomic_restore(f->p.hook_userdata);
	f->restored = 1;
	f->complete = !f->mismatch && f->pages_ok == f->p.stream_pages;
	return 0;
}

static int fake_power_off(struct hib_snapshot *s, enum hib_powerdown how)
{
	(void)s;
	(void)how;
	return 0;
}

static int fake_s2ram(struct hib_snapshot *s)
{
	return FAKE(s)->frozen ? 0 : -EPERM;
}

static void fake_close(struct hib_snapshot *s)
{
	/* The kernel's release thaws what is still frozen. */
	fake_thaw(FAKE(s));
	free(s);
}

static const struct hib_snapshot_ops fake_ops = {
	.set_swap_area = fake_set_swap_area,
	.freeze = fake_freeze,
	.unfreeze = fake_unfreeze,
	.platform_support = fake_platform_support,
	.pref_image_size = fake_pref_image_size,
	.image_size_pref_get = fake_image_size_pref_get,
	.create_image = fake_create_image,
	.get_image_size = fake_get_image_size,
	.avail_swap = fake_avail_swap,
	.alloc_swap_page = fake_alloc_swap_page,
	.free_swap_pages = fake_free_swap_pages,
	.free_image = fake_free_image,
	.read_pages = fake_read_pages,
	.write_pages = fake_write_pages,
	.atomic_restore = fake_atomic_restore,
	.power_off = fake_power_off,
	.s2ram = fake_s2ram,
	.close = fake_close,
};

int hib_snapshot_fake_new(const struct hib_fake_params *p, enum hib_snapshot_mode mode,
			  struct hib_snapshot **ret)
{
	struct snapshot_fake *f;

	if (!p || p->stream_pages < 2)
		return -EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->base.ops = &fake_ops;
	f->base.caps = HIB_SNAP_CAP_RETURNS;
	f->p = *p;
	f->meta_pages = MAX(1, p->stream_pages / 512);
	f->pref_bytes = -1;
	f->pref_at_create = -1;
	if (f->meta_pages >= p->stream_pages)
		f->meta_pages = p->stream_pages - 1;
	hib_snapshot_fake_reset(&f->base, mode);
	*ret = &f->base;
	return 0;
}

void hib_snapshot_fake_reset(struct hib_snapshot *s, enum hib_snapshot_mode mode)
{
	struct snapshot_fake *f = FAKE(s);

	s->mode = mode;
	f->frozen = f->ready = f->platform = 0;
	f->pos = f->next_swap = f->pages_ok = 0;
	f->mismatch = f->restored = f->complete = 0;
	f->calls = 0;
}

uint64_t hib_snapshot_fake_calls(const struct hib_snapshot *s)
{
	return ((const struct snapshot_fake *)s)->calls;
}

void hib_snapshot_fake_result(const struct hib_snapshot *s, uint64_t *ret_pages_ok,
			      bool *ret_complete, bool *ret_restored, bool *ret_frozen)
{
	const struct snapshot_fake *f = (const struct snapshot_fake *)s;

	if (ret_pages_ok)
		*ret_pages_ok = f->pages_ok;
	if (ret_complete)
		*ret_complete = f->complete;
	if (ret_restored)
		*ret_restored = f->restored;
	if (ret_frozen)
		*ret_frozen = f->frozen;
}
