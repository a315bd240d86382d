// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Where a file's bytes sit on its block device: what `hibernate offset`
 * prints (resume= and resume_offset=, like Software Suspend's
 * header_locations) and what the swapfile and plain-file targets write to.
 *
 * Only files whose every page is allocated on disk, in place, qualify: no
 * holes, nothing delayed, encoded, encrypted, inline or shared (a write
 * through the device would land in another file's copy too). We write to the
 * device underneath the filesystem, so anything less loses data. Unwritten
 * (fallocated) extents are allowed in swap files alone, as the kernel allows
 * them: the file is classified by its first page before it is mapped.
 */
#include <blkid.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/magic.h>

#include "storage/btrfs.h"
#include "storage/filemap.h"
#include "util/error.h"
#include "util/util.h"

#define FIEMAP_BATCH 256

static const char *fs_name(long type)
{
	switch ((unsigned long)type) {
	case EXT4_SUPER_MAGIC:
		return "ext4";
	case XFS_SUPER_MAGIC:
		return "xfs";
	case BTRFS_SUPER_MAGIC:
		return "btrfs";
	case TMPFS_MAGIC:
		return "tmpfs";
	}
	return "unknown";
}

enum hib_file_kind hib_filemap_kind_of_page(const uint8_t page[HIB_PAGE_SIZE])
{
	const uint8_t *sig = page + HIB_PAGE_SIZE - HIB_SIG_LEN;

	if (hib_tail_is_ours(page))
		sig -= HIB_SIG_LEN; /* orig_sig: what it was before the image */
	if (memcmp(sig, HIB_SWAP_SIG, HIB_SIG_LEN) == 0)
		return HIB_FILE_SWAP;
	if (memcmp(sig, HIB_FILE_SIG, HIB_SIG_LEN) == 0)
		return HIB_FILE_IMAGE;
	return HIB_FILE_OTHER;
}

/*
 * Unwritten extents (fallocate) are allocated on disk but read as zeros
 * through the filesystem. The kernel swaps to them through the block device
 * (iomap_swapfile_activate) and pins an active swap file's blocks, so a swap
 * file may have them: nothing reads its pages through the filesystem but page
 * 0, which mkswap wrote. A plain image file is pinned by nothing, and what
 * reads it through its filesystem gets zeros there.
 */
static const char *unwritten_refusal(enum hib_file_kind kind)
{
	switch (kind) {
	case HIB_FILE_SWAP:
		return NULL;
	case HIB_FILE_IMAGE:
		return "an unwritten (preallocated, never written) extent, which only a swap "
		       "file may have: make the image file again with hibernate prepare-file, "
		       "which writes every byte";
	case HIB_FILE_OTHER:
		break;
	}
	return "an unwritten (preallocated, never written) extent, which only a swap file may "
	       "have, and this is none (no SWAPSPACE2 in its first page): run mkswap on it "
	       "first";
}

const char *hib_filemap_extent_refusal(uint32_t flags, enum hib_file_kind kind)
{
	if (flags & FIEMAP_EXTENT_UNKNOWN)
		return "an extent whose location is unknown";
	if (flags & FIEMAP_EXTENT_DELALLOC)
		return "data not yet allocated on disk (delayed allocation; run sync)";
	if (flags & FIEMAP_EXTENT_ENCODED)
		return "an encoded (compressed) extent: make the file again with compression "
		       "off";
	if (flags & FIEMAP_EXTENT_DATA_ENCRYPTED)
		return "an encrypted extent";
	if (flags & FIEMAP_EXTENT_NOT_ALIGNED)
		return "an extent not aligned to blocks";
	if (flags & (FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_DATA_TAIL))
		return "data stored inline with metadata";
	if (flags & FIEMAP_EXTENT_SHARED)
		return "an extent shared with another file (reflink or snapshot): a write "
		       "through the device would change the other one too; make a new file "
		       "with fallocate or dd";
	if (flags & FIEMAP_EXTENT_UNWRITTEN)
		return unwritten_refusal(kind);
	return NULL;
}

/* A hole is a sparse file (truncate, or a copy that skipped zeros), never
 * fallocate's doing; the fix depends on what the file is for. */
static int hole_at(uint64_t byte, enum hib_file_kind kind, struct hib_error *err)
{
	return hib_error_set(err, -EINVAL,
			     "it has a hole at byte %llu: it is sparse (made with truncate, or "
			     "copied without its zeros); %s",
			     (unsigned long long)byte,
			     kind == HIB_FILE_IMAGE
				     ? "make the image file again with hibernate prepare-file"
				     : "every block must be allocated: make it again with "
				       "fallocate -l SIZE or dd if=/dev/zero, then mkswap");
}

/* What the file's first page says it is, read through the filesystem. */
static int read_kind(int fd, enum hib_file_kind *ret, struct hib_error *err)
{
	uint8_t page[HIB_PAGE_SIZE];
	int r = hib_pread_full(fd, page, sizeof(page), 0);

	if (r < 0)
		return hib_error_set(err, r, "cannot read its first page: %s", strerror(-r));
	*ret = hib_filemap_kind_of_page(page);
	return 0;
}

#define BTRFS_NO_IMAGE_FILE                                                                        \
	"an image file on btrfs is refused: nothing stops btrfs from moving its "                  \
	"extents (balance, relocation) the way swapon pins a swap file's; use a NOCOW "            \
	"swap file (btrfs filesystem mkswapfile) instead"

/* @pages pages at address @addr into @m: device bytes, or on btrfs (@b)
 * logical addresses translated chunk by chunk. */
static int add_pages(struct hib_filemap *m, const struct hib_btrfs_fs *b, uint64_t addr,
		     uint64_t pages, struct hib_error *err)
{
	while (pages > 0) {
		uint64_t phys = addr, run = pages * HIB_PAGE_SIZE, in_chunk;
		int r;

		if (b) {
			r = hib_btrfs_map(&b->chunks, addr, &phys, &in_chunk, err);
			if (r < 0)
				return r;
			run = MIN(run, in_chunk - in_chunk % HIB_PAGE_SIZE);
			if (phys % HIB_PAGE_SIZE || run == 0)
				return hib_error_set(err, -EINVAL,
						     "its btrfs chunk at device byte %llu is not "
						     "page aligned",
						     (unsigned long long)phys);
		}
		r = extmap_add(&m->map, phys, run / HIB_PAGE_SIZE);
		if (r < 0)
			return r;
		addr += run;
		pages -= run / HIB_PAGE_SIZE;
	}
	return 0;
}

/* FIEMAP extent @e, from logical byte *@next on, into @m (by @m->kind's rules);
 * *@next moves past it. */
static int add_extent(struct hib_filemap *m, const struct hib_btrfs_fs *b,
		      const struct fiemap_extent *e, uint64_t size, uint64_t *next,
		      struct hib_error *err)
{
	const char *bad = hib_filemap_extent_refusal(e->fe_flags, m->kind);
	uint64_t lo = e->fe_logical, len = e->fe_length, end;
	int r;

	if (bad)
		return hib_error_set(err, -EINVAL, "at byte %llu it has %s", (unsigned long long)lo,
				     bad);
	if (lo > *next)
		return hole_at(*next, m->kind, err);
	if (lo % HIB_PAGE_SIZE || e->fe_physical % HIB_PAGE_SIZE || len % HIB_PAGE_SIZE)
		return hib_error_set(err, -EINVAL, "an extent at byte %llu is not page aligned",
				     (unsigned long long)lo);
	/* Extents may overlap what we already have only at a batch edge. */
	if (lo + len <= *next)
		return 0;
	end = MIN(lo + len, size);
	r = add_pages(m, b, e->fe_physical + (*next - lo), (end - *next) / HIB_PAGE_SIZE, err);
	if (r < 0)
		return r;
	if (e->fe_flags & FIEMAP_EXTENT_UNWRITTEN)
		m->unwritten_pages += (end - *next) / HIB_PAGE_SIZE;
	*next = end;
	return 0;
}

/* Every extent of the file's @size bytes into @m, with FIEMAP. */
static int map_extents(int fd, uint64_t size, struct hib_filemap *m, const struct hib_btrfs_fs *b,
		       struct hib_error *err)
{
	_cleanup_(freep) struct fiemap *fm = NULL;
	uint64_t next = 0; /* logical byte where the next extent must start */
	bool last = false;
	int r;

	fm = calloc(1, sizeof(*fm) + FIEMAP_BATCH * sizeof(struct fiemap_extent));
	if (!fm)
		return -ENOMEM;
	while (!last && next < size) {
		memset(fm, 0, sizeof(*fm));
		fm->fm_start = next;
		fm->fm_length = size - next;
		fm->fm_flags = FIEMAP_FLAG_SYNC;
		fm->fm_extent_count = FIEMAP_BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0) {
			r = -errno;
			return hib_error_set(err, r, "FIEMAP failed: %s", strerror(-r));
		}
		if (fm->fm_mapped_extents == 0)
			break;
		for (uint32_t i = 0; i < fm->fm_mapped_extents; i++) {
			r = add_extent(m, b, &fm->fm_extents[i], size, &next, err);
			if (r < 0)
				return r;
			if (fm->fm_extents[i].fe_flags & FIEMAP_EXTENT_LAST)
				last = true;
		}
	}
	if (next < size)
		return hole_at(next, m->kind, err);
	return extmap_index(&m->map);
}

/* The file's kind and extents, then the device they are on. */
static int map_file(int fd, const struct stat *st, struct hib_filemap *m,
		    const struct hib_btrfs_fs *b, struct hib_error *err)
{
	int r;

	/* On btrfs st_dev is the subvolume's number, not a device. */
	m->dev = b ? b->dev : st->st_dev;
	m->file_pages = (uint64_t)st->st_size / HIB_PAGE_SIZE;
	r = read_kind(fd, &m->kind, err);
	if (r < 0)
		return r;
	/* Only an active swap file's extents are pinned where we map them. */
	if (b && m->kind == HIB_FILE_IMAGE)
		return hib_error_set(err, -EOPNOTSUPP, BTRFS_NO_IMAGE_FILE);
	r = map_extents(fd, (uint64_t)st->st_size, m, b, err);
	if (r < 0)
		return r;
	m->first_page = m->map.ext[0].offset / HIB_PAGE_SIZE;
	m->device = blkid_devno_to_devname(m->dev);
	if (!m->device)
		return hib_error_set(
			err, -ENODEV,
			"its filesystem is not on a block device this system can name");
	m->uuid = blkid_get_tag_value(NULL, "UUID", m->device);
	return 0;
}

int hib_filemap_read(const char *path, struct hib_filemap *ret, struct hib_error *err)
{
	_cleanup_(closep) int fd = -1;
	_cleanup_(hib_btrfs_free) struct hib_btrfs_fs bfs = { 0 };
	struct hib_filemap m = { 0 };
	bool is_btrfs;
	struct stat st;
	struct statfs sfs;
	int r;

	hib_error_clear(err);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return hib_error_set(err, -errno, "cannot open: %s", strerror(errno));
	if (fstat(fd, &st) < 0 || fstatfs(fd, &sfs) < 0)
		return hib_error_set(err, -errno, "cannot stat: %s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return hib_error_set(err, -EINVAL, "not a regular file");
	if (st.st_size < (off_t)(2 * HIB_PAGE_SIZE) || st.st_size % HIB_PAGE_SIZE)
		return hib_error_set(err, -EINVAL,
				     "its size (%lld bytes) is not a whole number of pages "
				     "(at least 2)",
				     (long long)st.st_size);
	snprintf(m.fstype, sizeof(m.fstype), "%s", fs_name(sfs.f_type));
	is_btrfs = (unsigned long)sfs.f_type == BTRFS_SUPER_MAGIC;
	if ((unsigned long)sfs.f_type == TMPFS_MAGIC)
		return hib_error_set(err, -EINVAL, "on tmpfs, which lives in memory");
	if (is_btrfs) {
		r = hib_btrfs_read(fd, &bfs, err);
		if (r < 0)
			return r;
	}
	r = map_file(fd, &st, &m, is_btrfs ? &bfs : NULL, err);
	if (r < 0) {
		hib_filemap_free(&m);
		return hib_error_ensure(err, r);
	}
	*ret = m;
	return 0;
}

void hib_filemap_free(struct hib_filemap *m)
{
	extmap_free(&m->map);
	free(m->device);
	free(m->uuid);
	memset(m, 0, sizeof(*m));
}

int hib_file_locate(const char *path, struct hib_file_location *ret, struct hib_error *err)
{
	struct hib_filemap m;
	int r = hib_filemap_read(path, &m, err);

	if (r < 0)
		return hib_error_prefix(err, r, "%s: cannot be located for resume: ", path);
	memset(ret, 0, sizeof(*ret));
	ret->device = TAKE_PTR(m.device);
	ret->uuid = TAKE_PTR(m.uuid);
	ret->offset_pages = m.first_page;
	ret->file_pages = m.file_pages;
	ret->extents = m.map.n;
	ret->unwritten_pages = m.unwritten_pages;
	snprintf(ret->fstype, sizeof(ret->fstype), "%s", m.fstype);
	hib_filemap_free(&m);
	return 0;
}

void hib_file_location_free(struct hib_file_location *l)
{
	free(l->device);
	free(l->uuid);
	memset(l, 0, sizeof(*l));
}

/* Is @path's directory on btrfs? 1, 0, or -errno. Asked before the file is
 * created: a refusal writes nothing. */
static int on_btrfs(const char *path)
{
	_cleanup_(freep) char *copy = strdup(path);
	struct statfs sfs;

	if (!copy)
		return -ENOMEM;
	if (statfs(dirname(copy), &sfs) < 0)
		return -errno;
	return (unsigned long)sfs.f_type == BTRFS_SUPER_MAGIC;
}

/* hib_prepare_file's work; @err gets the reason alone. */
static int prepare_file(const char *path, uint64_t bytes, struct hib_error *err)
{
	_cleanup_(closep) int fd = -1;
	_cleanup_(freep) uint8_t *buf = NULL;
	const size_t chunk = 1u << 20;
	struct stat st;
	uint64_t done = 0;
	int r;

	if (bytes < 16 * HIB_PAGE_SIZE || bytes % HIB_PAGE_SIZE)
		return hib_error_set(err, -EINVAL,
				     "the size must be a whole number of pages, at least 64 KiB");
	r = on_btrfs(path);
	if (r != 0)
		return r < 0 ? hib_error_set(err, r, "cannot stat its directory: %s", strerror(-r))
			     : hib_error_set(err, -EOPNOTSUPP, BTRFS_NO_IMAGE_FILE);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return hib_error_set(err, -errno, "cannot create: %s", strerror(errno));
	if (fstat(fd, &st) < 0)
		return hib_error_set(err, -errno, "cannot stat: %s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return hib_error_set(err, -EINVAL, "not a regular file");
	if (st.st_size > 0) {
		/* Only ever overwrite our own image file, never someone's data. */
		uint8_t page[HIB_PAGE_SIZE];
		if (st.st_size < (off_t)HIB_PAGE_SIZE ||
		    pread(fd, page, sizeof(page), 0) != (ssize_t)sizeof(page) ||
		    (memcmp(page + HIB_PAGE_SIZE - HIB_SIG_LEN, HIB_FILE_SIG, HIB_SIG_LEN) != 0 &&
		     memcmp(page + HIB_PAGE_SIZE - 2 * HIB_SIG_LEN, HIB_FILE_SIG, HIB_SIG_LEN) !=
			     0))
			return hib_error_set(err, -EEXIST,
					     "exists and is not an image file; remove it first if "
					     "it holds nothing you need");
	}
	/* Private to root: the image will hold all of memory, secrets included. */
	if (fchmod(fd, 0600) < 0)
		return hib_error_set(err, -errno, "cannot chmod 0600: %s", strerror(errno));
	if (ftruncate(fd, 0) < 0)
		return hib_error_set(err, -errno, "cannot truncate: %s", strerror(errno));
	buf = calloc(1, chunk);
	if (!buf)
		return hib_error_ensure(err, -ENOMEM);
	/* Write every byte: fallocate would leave unwritten extents, which FIEMAP
	 * shows as such and a raw write underneath would not make readable. */
	while (done < bytes) {
		size_t n = (size_t)MIN((uint64_t)chunk, bytes - done);
		r = hib_pwrite_full(fd, buf, n, done);
		if (r < 0)
			return hib_error_set(err, r, "writing at byte %llu failed: %s",
					     (unsigned long long)done, strerror(-r));
		done += n;
	}
	memcpy(buf + HIB_PAGE_SIZE - HIB_SIG_LEN, HIB_FILE_SIG, HIB_SIG_LEN);
	r = hib_pwrite_full(fd, buf, HIB_PAGE_SIZE, 0);
	if (r < 0)
		return hib_error_set(err, r, "writing the first page failed: %s", strerror(-r));
	if (fsync(fd) < 0)
		return hib_error_set(err, -errno, "fsync failed: %s", strerror(errno));
	return 0;
}

int hib_prepare_file(const char *path, uint64_t bytes, struct hib_error *err)
{
	int r;

	hib_error_clear(err);
	r = prepare_file(path, bytes, err);
	return r < 0 ? hib_error_prefix(err, r, "%s: ", path) : 0;
}
