// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Files on their block device (lib/storage/filemap.c): which extents each
 * kind of file may have (a pure rule), what a first page makes a file, and
 * real files made with fallocate, truncate and hole punching on the host's
 * /var/tmp (ext4 or xfs there, or the cases say SKIP and why).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/statfs.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/magic.h>

#include <cmocka.h>

#include "format/format.h"
#include "helpers.h"
#include "storage/filemap.h"

#define FILE_PAGES 256
/* Where real files are made: /tmp may be tmpfs, which has no extents. */
#define REAL_DIR "/var/tmp"

static const enum hib_file_kind kinds[] = { HIB_FILE_OTHER, HIB_FILE_SWAP, HIB_FILE_IMAGE };

/* ---- the rule ----------------------------------------------------------- */

static void plain_extents_fit_every_kind(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		assert_null(hib_filemap_extent_refusal(0, kinds[i]));
		assert_null(hib_filemap_extent_refusal(FIEMAP_EXTENT_LAST | FIEMAP_EXTENT_MERGED,
						       kinds[i]));
	}
}

static void unwritten_only_in_swap_files(void **state)
{
	const char *why;

	(void)state;
	assert_null(hib_filemap_extent_refusal(FIEMAP_EXTENT_UNWRITTEN, HIB_FILE_SWAP));
	assert_null(hib_filemap_extent_refusal(FIEMAP_EXTENT_UNWRITTEN | FIEMAP_EXTENT_LAST,
					       HIB_FILE_SWAP));
	why = hib_filemap_extent_refusal(FIEMAP_EXTENT_UNWRITTEN, HIB_FILE_IMAGE);
	assert_non_null(why);
	assert_non_null(strstr(why, "unwritten"));
	assert_non_null(strstr(why, "hibernate prepare-file"));
	why = hib_filemap_extent_refusal(FIEMAP_EXTENT_UNWRITTEN, HIB_FILE_OTHER);
	assert_non_null(why);
	assert_non_null(strstr(why, "unwritten"));
	assert_non_null(strstr(why, "mkswap"));
}

/* Unwritten does not excuse anything else, in a swap file either. */
static void other_flags_refused_for_every_kind(void **state)
{
	static const struct {
		uint32_t flag;
		const char *says;
	} bad[] = {
		{ FIEMAP_EXTENT_UNKNOWN, "unknown" },
		{ FIEMAP_EXTENT_DELALLOC, "delayed allocation" },
		{ FIEMAP_EXTENT_ENCODED, "compressed" },
		{ FIEMAP_EXTENT_DATA_ENCRYPTED, "encrypted" },
		{ FIEMAP_EXTENT_NOT_ALIGNED, "not aligned" },
		{ FIEMAP_EXTENT_DATA_INLINE, "inline" },
		{ FIEMAP_EXTENT_DATA_TAIL, "inline" },
		{ FIEMAP_EXTENT_SHARED, "shared" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
			for (int u = 0; u < 2; u++) {
				uint32_t f = bad[i].flag | (u ? FIEMAP_EXTENT_UNWRITTEN : 0);
				const char *why = hib_filemap_extent_refusal(f, kinds[k]);

				if (!why || !strstr(why, bad[i].says))
					fail_msg("flags 0x%x, kind %d: '%s', not about '%s'", f,
						 kinds[k], why ? why : "(accepted)", bad[i].says);
			}
}

static void first_page_gives_the_kind(void **state)
{
	uint8_t page[HIB_PAGE_SIZE];
	struct hib_sig_tail *tail = (void *)(page + HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE);

	(void)state;
	memset(page, 0, sizeof(page));
	assert_int_equal(hib_filemap_kind_of_page(page), HIB_FILE_OTHER);
	memcpy(page + HIB_PAGE_SIZE - HIB_SIG_LEN, HIB_SWAP_SIG, HIB_SIG_LEN);
	assert_int_equal(hib_filemap_kind_of_page(page), HIB_FILE_SWAP);
	memcpy(page + HIB_PAGE_SIZE - HIB_SIG_LEN, HIB_FILE_SIG, HIB_SIG_LEN);
	assert_int_equal(hib_filemap_kind_of_page(page), HIB_FILE_IMAGE);
	/* An image in it: the signature our tail saved says what it is. */
	memset(tail, 0, sizeof(*tail));
	memcpy(tail->magic, HIB_TAIL_MAGIC, sizeof(tail->magic));
	memcpy(tail->sig, HIB_IMAGE_SIG, HIB_SIG_LEN);
	memcpy(tail->orig_sig, HIB_SWAP_SIG, HIB_SIG_LEN);
	assert_int_equal(hib_filemap_kind_of_page(page), HIB_FILE_SWAP);
	memcpy(tail->orig_sig, HIB_FILE_SIG, HIB_SIG_LEN);
	assert_int_equal(hib_filemap_kind_of_page(page), HIB_FILE_IMAGE);
	/* Another program's image: not ours to call swap. */
	memcpy(tail->sig, "S1SUSPEND", HIB_SIG_LEN);
	assert_int_equal(hib_filemap_kind_of_page(page), HIB_FILE_OTHER);
}

/* ---- real files ------------------------------------------------------- */

/*
 * A file of FILE_PAGES pages under REAL_DIR, its path in @path: made with
 * fallocate (unwritten extents), or with @sparse only sized (no blocks).
 * -1 when the host cannot make one here, with why in @why (the case skips).
 */
static int make_real(char *path, const char *tag, bool sparse, const char **why)
{
	struct statfs sfs;
	int fd;

	if (statfs(REAL_DIR, &sfs) < 0 || ((unsigned long)sfs.f_type != EXT4_SUPER_MAGIC &&
					   (unsigned long)sfs.f_type != XFS_SUPER_MAGIC)) {
		*why = REAL_DIR " is not ext4 or xfs, where fallocate leaves unwritten extents";
		return -1;
	}
	snprintf(path, PATH_MAX, REAL_DIR "/hib-%s-XXXXXX", tag);
	fd = mkstemp(path);
	if (fd < 0) {
		*why = "cannot create a file in " REAL_DIR;
		return -1;
	}
	temp_track(path);
	if (sparse) {
		if (ftruncate(fd, FILE_PAGES * (off_t)HIB_PAGE_SIZE) < 0)
			die("ftruncate");
		return fd;
	}
	if (fallocate(fd, 0, 0, FILE_PAGES * (off_t)HIB_PAGE_SIZE) < 0) {
		*why = "fallocate is refused in " REAL_DIR;
		close(fd);
		return -1;
	}
	return fd;
}

#define REAL_OR_SKIP(fd, path, tag, sparse)                                                        \
	do {                                                                                       \
		const char *why_ = NULL;                                                           \
		(fd) = make_real((path), (tag), (sparse), &why_);                                  \
		if ((fd) < 0) {                                                                    \
			print_message("# skipped: %s\n", why_);                                    \
			skip();                                                                    \
		}                                                                                  \
	} while (0)

/* What mkswap writes: a swap header in page 0, which makes that page written. */
static void mkswap_fd(int fd)
{
	uint8_t page[HIB_PAGE_SIZE];

	memset(page, 0, sizeof(page));
	page[1024] = 1; /* version */
	memcpy(page + HIB_PAGE_SIZE - HIB_SIG_LEN, HIB_SWAP_SIG, HIB_SIG_LEN);
	if (pwrite(fd, page, sizeof(page), 0) != (ssize_t)sizeof(page) || fsync(fd) < 0)
		die("mkswap");
}

/* Has the file an unwritten extent after its first page? (The host's own
 * FIEMAP, so that a case cannot pass on a file that is fully written.) */
static bool has_unwritten(int fd)
{
	struct {
		struct fiemap fm;
		struct fiemap_extent ext[32];
	} q;

	memset(&q, 0, sizeof(q));
	q.fm.fm_length = FIEMAP_MAX_OFFSET;
	q.fm.fm_flags = FIEMAP_FLAG_SYNC;
	q.fm.fm_extent_count = 32;
	if (ioctl(fd, FS_IOC_FIEMAP, &q.fm) < 0)
		die("FIEMAP");
	for (uint32_t i = 0; i < q.fm.fm_mapped_extents; i++)
		if (q.ext[i].fe_flags & FIEMAP_EXTENT_UNWRITTEN)
			return true;
	return false;
}

static void fallocated_swap_file_is_located(void **state)
{
	char path[PATH_MAX];
	struct hib_file_location l;
	struct hib_error err;
	int fd;

	(void)state;
	REAL_OR_SKIP(fd, path, "falloc-swap", false);
	mkswap_fd(fd);
	assert_true(has_unwritten(fd));
	close(fd);
	if (hib_file_locate(path, &l, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(l.file_pages, FILE_PAGES);
	assert_true(l.unwritten_pages > 0 && l.unwritten_pages < FILE_PAGES);
	assert_true(l.offset_pages > 0);
	hib_file_location_free(&l);
	unlink(path);
}

/* Opened as a target too (read-only: the host's disk is only read), where the
 * device shows its first page. */
static void fallocated_swap_file_is_a_target(void **state)
{
	char path[PATH_MAX];
	struct hib_target *t = NULL;
	struct hib_error err;
	int fd, r;

	(void)state;
	REAL_OR_SKIP(fd, path, "falloc-target", false);
	mkswap_fd(fd);
	close(fd);
	r = hib_target_open_file(path, false, &t, &err);
	if (r == -EACCES || r == -EPERM) {
		print_message("# skipped: cannot read the device under %s: %s\n", REAL_DIR,
			      err.msg);
		skip();
	}
	if (r < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(hib_target_kind(t), HIB_TARGET_SWAPFILE);
	assert_true(hib_target_file_unwritten(t) > 0);
	hib_target_close(t);
	unlink(path);
}

static void fallocated_non_swap_file_is_refused(void **state)
{
	char path[PATH_MAX];
	struct hib_file_location l;
	struct hib_error err;
	int fd;

	(void)state;
	REAL_OR_SKIP(fd, path, "falloc-plain", false);
	close(fd);
	assert_int_equal(hib_file_locate(path, &l, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "unwritten"));
	assert_non_null(strstr(err.msg, "run mkswap on it first"));
	assert_null(strstr(err.msg, "hole"));
	unlink(path);
}

/* An image file marked HIBIMGFILE over fallocated space: not what prepare-file
 * makes, and refused as a target. */
static void fallocated_image_file_is_refused(void **state)
{
	char path[PATH_MAX];
	uint8_t page[HIB_PAGE_SIZE];
	struct hib_target *t = (struct hib_target *)0x1;
	struct hib_error err;
	int fd;

	(void)state;
	REAL_OR_SKIP(fd, path, "falloc-image", false);
	memset(page, 0, sizeof(page));
	memcpy(page + HIB_PAGE_SIZE - HIB_SIG_LEN, HIB_FILE_SIG, HIB_SIG_LEN);
	if (pwrite(fd, page, sizeof(page), 0) != (ssize_t)sizeof(page) || fsync(fd) < 0)
		die("pwrite");
	assert_true(has_unwritten(fd));
	close(fd);
	assert_int_equal(hib_target_open_file(path, false, &t, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "cannot be a hibernation target: at byte"));
	assert_non_null(strstr(err.msg, "unwritten"));
	assert_non_null(strstr(err.msg, "hibernate prepare-file"));
	assert_ptr_equal(t, (struct hib_target *)0x1);
	unlink(path);
}

/* A hole in a swap file is sparseness, whatever else the file has; the
 * message says so, not "unwritten". */
static void punched_swap_file_is_sparse(void **state)
{
	char path[PATH_MAX], want[64];
	struct hib_file_location l;
	struct hib_error err;
	const off_t hole = 100 * (off_t)HIB_PAGE_SIZE;
	int fd;

	(void)state;
	REAL_OR_SKIP(fd, path, "falloc-punched", false);
	mkswap_fd(fd);
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, hole, 8 * HIB_PAGE_SIZE) <
	    0) {
		close(fd);
		print_message("# skipped: cannot punch a hole in %s\n", REAL_DIR);
		skip();
	}
	close(fd);
	assert_int_equal(hib_file_locate(path, &l, &err), -EINVAL);
	snprintf(want, sizeof(want), "it has a hole at byte %lld", (long long)hole);
	assert_non_null(strstr(err.msg, want));
	assert_non_null(strstr(err.msg, "sparse"));
	assert_non_null(strstr(err.msg, "fallocate -l SIZE"));
	assert_null(strstr(err.msg, "unwritten"));
	unlink(path);
}

/* A truncated swap file (no block but page 0): sparse, the fix named. */
static void truncated_swap_file_is_sparse(void **state)
{
	char path[PATH_MAX];
	struct hib_file_location l;
	struct hib_error err;

	int fd;

	(void)state;
	REAL_OR_SKIP(fd, path, "truncated", true);
	mkswap_fd(fd);
	close(fd);
	assert_int_equal(hib_file_locate(path, &l, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "it has a hole at byte 4096: it is sparse"));
	assert_non_null(strstr(err.msg, "dd if=/dev/zero"));
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plain_extents_fit_every_kind),
		cmocka_unit_test(unwritten_only_in_swap_files),
		cmocka_unit_test(other_flags_refused_for_every_kind),
		cmocka_unit_test(first_page_gives_the_kind),
		cmocka_unit_test(fallocated_swap_file_is_located),
		cmocka_unit_test(fallocated_swap_file_is_a_target),
		cmocka_unit_test(fallocated_non_swap_file_is_refused),
		cmocka_unit_test(fallocated_image_file_is_refused),
		cmocka_unit_test(punched_swap_file_is_sparse),
		cmocka_unit_test(truncated_swap_file_is_sparse),
	};

	quiet_logs();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
