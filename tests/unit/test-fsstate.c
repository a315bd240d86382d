// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stale images (lib/engine/fsstate.c): which mounts are recorded, the state
 * each filesystem type offers (vfat and f2fs images made here by their mkfs,
 * skipped when it is missing), and the verdict at resume: a filesystem that
 * cannot be checked refuses the image unless unchecked-filesystems = allow,
 * a changed one refuses it either way.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "engine/engine.h"
#include "helpers.h"

#define SB_BYTES 69632 /* as engine_fs_buf_new makes it */
#define IMG_MIB 64

static char last_msg[1024];
static enum hib_loglevel last_level;

static void keep_log(enum hib_loglevel l, const char *m, void *u)
{
	(void)u;
	if (l <= HIB_LOG_WARN) {
		snprintf(last_msg, sizeof(last_msg), "%s", m);
		last_level = l;
	}
}

/* ---- the mount table ------------------------------------------------- */

static void parse(const char *text, dev_t *dev, const char **type, bool *writable, char *buf)
{
	strcpy(buf, text);
	assert_int_equal(engine_fs_parse_mount(buf, dev, type, writable), 0);
}

static void mounts_recorded_are_writable_block_ones(void **state)
{
	char buf[512];
	const char *type;
	bool writable;
	dev_t dev;

	(void)state;
	/* Not block-backed: no device. */
	parse("25 1 0:22 / /tmp rw,nosuid - tmpfs tmpfs rw,size=100k\n", &dev, &type, &writable,
	      buf);
	assert_int_equal(dev, 0);
	assert_string_equal(type, "tmpfs");
	/* The superblock's read-only decides, not the mount point's. */
	parse("30 1 0:22 / /a ro - tmpfs tmpfs rw\n", &dev, &type, &writable, buf);
	assert_true(writable);
	parse("30 1 0:22 / /a rw - tmpfs tmpfs ro,size=1k\n", &dev, &type, &writable, buf);
	assert_false(writable);
	parse("30 1 0:22 / /a rw - tmpfs tmpfs rootcontext=x\n", &dev, &type, &writable, buf);
	assert_true(writable);
	/* Optional fields before the separator; a source that is not a node. */
	parse("31 1 0:40 / /b rw shared:1 master:2 - vfat none rw,fmask=0022\n", &dev, &type,
	      &writable, buf);
	assert_string_equal(type, "vfat");
	assert_int_equal(dev, 0);
	strcpy(buf, "31 1 0:40 / /b rw shared:1 no-separator\n");
	assert_int_equal(engine_fs_parse_mount(buf, &dev, &type, &writable), -EINVAL);
}

/* btrfs's third field is an anonymous 0:N: the source's node names the device. */
static void btrfs_device_from_the_source(void **state)
{
	struct stat st;
	char buf[512], line[512];
	const char *type, *node = NULL;
	static const char *const nodes[] = { "/dev/loop0", "/dev/sda", "/dev/vda", "/dev/nvme0n1",
					     "/dev/ram0" };
	bool writable;
	dev_t dev;

	(void)state;
	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]) && !node; i++)
		if (stat(nodes[i], &st) == 0 && S_ISBLK(st.st_mode))
			node = nodes[i];
	if (!node) {
		print_message("# skipped: no block device node here\n");
		skip();
	}
	snprintf(line, sizeof(line), "40 1 0:33 /@home /home rw - btrfs %s rw,subvol=/@home\n",
		 node);
	parse(line, &dev, &type, &writable, buf);
	assert_int_equal(dev, st.st_rdev);
	assert_true(writable);
}

/* What engine_fs_record makes of this machine's table: the first nr_fs records
 * ext*, xfs or btrfs (an older reader checks those), the later types after. */
static void records_keep_the_old_types_first(void **state)
{
	struct hib_header *h = hib_alloc_pages(TEST_PAGE);
	struct engine_fs_buf b;

	(void)state;
	assert_non_null(h);
	memset(h, 0, TEST_PAGE);
	assert_int_equal(engine_fs_buf_new(&b), 0);
	assert_int_equal(engine_fs_record(h, &b), 0);
	assert_true(h->nr_fs + h->nr_fs_later <= HIB_MAX_FS);
	for (uint32_t i = 0; i < h->nr_fs + h->nr_fs_later; i++) {
		if (i < h->nr_fs)
			assert_true(h->fs[i].fs_type >= HIB_FS_EXT &&
				    h->fs[i].fs_type <= HIB_FS_BTRFS);
		else
			assert_true(h->fs[i].fs_type > HIB_FS_BTRFS);
		assert_int_not_equal(h->fs[i].devnum, 0);
	}
	print_message("# %u + %u filesystems recorded here\n", h->nr_fs, h->nr_fs_later);
	engine_fs_buf_free(&b);
	free(h);
}

/* ---- the state of one filesystem ------------------------------------- */

/* A @mib MiB image made by "mkfs.@type @opts" into @path; false (the case
 * skips) when that mkfs is not installed. */
static bool make_fs_image(char *path, const char *type, const char *opts)
{
	char cmd[PATH_MAX + 256], out[512];
	int fd = make_temp(path, type);

	if (ftruncate(fd, (off_t)IMG_MIB << 20) != 0)
		die("ftruncate");
	close(fd);
	snprintf(cmd, sizeof(cmd), "PATH=$PATH:/usr/sbin:/sbin; command -v mkfs.%s >/dev/null",
		 type);
	if (run_cmd(cmd, NULL, 0) != 0) {
		print_message("# skipped: mkfs.%s is not installed (scripts/install-deps)\n", type);
		return false;
	}
	snprintf(cmd, sizeof(cmd), "PATH=$PATH:/usr/sbin:/sbin; mkfs.%s %s '%s' 2>&1", type, opts,
		 path);
	if (run_cmd(cmd, out, sizeof(out)) != 0)
		fail_msg("mkfs.%s %s failed: %s", type, opts, out);
	return true;
}

static void state_of(const char *path, const char *type, struct hib_fs_state *st)
{
	uint8_t *sb = hib_alloc_pages(SB_BYTES);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_non_null(sb);
	assert_true(fd >= 0);
	engine_fs_state(fd, type, sb, st);
	close(fd);
	free(sb);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* vfat (FAT16 and FAT32): found, its serial kept, a cluster allocated in the
 * FAT or the dirty flag of another system's mount seen; the data area alone
 * is not looked at. */
static void vfat_change_is_seen(void **state)
{
	static const char *const opts[] = { "-F 16 -i 1234abcd", "-F 32 -i 1234abcd" };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct hib_fs_state a, b, c;
		char path[PATH_MAX];
		uint8_t boot[512];
		uint64_t fat;

		if (!make_fs_image(path, "vfat", opts[i]))
			skip();
		state_of(path, "vfat", &a);
		assert_int_equal(a.fs_type, HIB_FS_VFAT);
		assert_memory_equal(a.uuid, "\xcd\xab\x34\x12", 4);
		state_of(path, "vfat", &b);
		assert_true(a.sb_xxh3 == b.sb_xxh3);
		/* A write to a data cluster only: not in the digest. */
		xor_byte_at(path, (IMG_MIB << 20) - 4096, 0x5a);
		state_of(path, "vfat", &b);
		assert_true(a.sb_xxh3 == b.sb_xxh3);
		/* Cluster 7 allocated: the first FAT's entry. */
		pread_at(path, 0, boot, sizeof(boot));
		fat = (uint64_t)get16(boot + 14) * get16(boot + 11);
		xor_byte_at(path, fat + 7 * 4, 0xff);
		state_of(path, "vfat", &c);
		assert_int_equal(c.fs_type, HIB_FS_VFAT);
		assert_true(c.sb_xxh3 != a.sb_xxh3);
		xor_byte_at(path, fat + 7 * 4, 0xff);
		state_of(path, "vfat", &c);
		assert_true(c.sb_xxh3 == a.sb_xxh3);
		/* Linux's dirty flag in the boot sector (FAT16 0x25, FAT32 0x41). */
		xor_byte_at(path, i == 0 ? 0x25 : 0x41, 0x01);
		state_of(path, "vfat", &c);
		assert_true(c.sb_xxh3 != a.sb_xxh3);
		unlink(path);
	}
}

/* f2fs: its UUID, and a new checkpoint (checkpoint_ver of either pack) seen. */
static void f2fs_checkpoint_is_seen(void **state)
{
	struct hib_fs_state a, b;
	char path[PATH_MAX], cmd[PATH_MAX + 64], uuid[64];
	uint8_t sb[4096];
	uint64_t cp, seg;

	(void)state;
	if (!make_fs_image(path, "f2fs", "-q"))
		skip();
	state_of(path, "f2fs", &a);
	assert_int_equal(a.fs_type, HIB_FS_F2FS);
	snprintf(cmd, sizeof(cmd), "PATH=$PATH:/sbin; blkid -p -s UUID -o value '%s'", path);
	assert_int_equal(run_cmd(cmd, uuid, sizeof(uuid)), 0);
	assert_int_equal(strlen(uuid), 36);
	assert_true(a.uuid[0] == (uint8_t)strtoul((char[]){ uuid[0], uuid[1], 0 }, NULL, 16));
	pread_at(path, 1024, sb, 1024);
	cp = (uint64_t)(sb[76] | sb[77] << 8 | sb[78] << 16 | (uint32_t)sb[79] << 24);
	seg = 1ull << sb[20];
	for (int pack = 0; pack < 2; pack++) {
		xor_byte_at(path, (cp + (uint64_t)pack * seg) << 12, 0x01);
		state_of(path, "f2fs", &b);
		assert_int_equal(b.fs_type, HIB_FS_F2FS);
		assert_true(b.sb_xxh3 != a.sb_xxh3);
		xor_byte_at(path, (cp + (uint64_t)pack * seg) << 12, 0x01);
	}
	state_of(path, "f2fs", &b);
	assert_true(b.sb_xxh3 == a.sb_xxh3);
	unlink(path);
}

/* Any other type: recorded as one that cannot be compared, by its name. */
static void other_types_are_recorded_by_name(void **state)
{
	struct hib_fs_state st;
	char path[PATH_MAX];
	int fd = make_temp(path, "exfat");

	(void)state;
	assert_int_equal(ftruncate(fd, 1 << 20), 0);
	close(fd);
	state_of(path, "ntfs3-or-a-long-type", &st);
	assert_int_equal(st.fs_type, HIB_FS_OTHER);
	assert_memory_equal(st.uuid, "ntfs3-or-a-long-", 16);
	state_of(path, "exfat", &st);
	assert_memory_equal(st.uuid, "exfat\0\0\0\0\0\0\0\0\0\0\0", 16);
	unlink(path);
}

/* ---- the verdict at resume ------------------------------------------- */

struct verdict {
	char target[PATH_MAX];
	char loop[256]; /* detached at teardown, whichever way the case ended */
	struct hib_target *t;
	struct hib_header *h;
};

static int verdict_setup(void **state)
{
	struct verdict *v = calloc(1, sizeof(*v));

	if (!v)
		return -1;
	make_swap_path(v->target, "fstarget", 16);
	if (hib_target_open(v->target, 0, false, &v->t) < 0)
		return -1;
	v->h = hib_alloc_pages(TEST_PAGE);
	if (!v->h)
		return -1;
	memset(v->h, 0, TEST_PAGE);
	*state = v;
	return 0;
}

static int verdict_teardown(void **state)
{
	struct verdict *v = *state;

	if (v->loop[0] && loop_detach(v->loop) != 0)
		fprintf(stderr, "# warning: could not detach %s\n", v->loop);
	hib_target_close(v->t);
	unlink(v->target);
	free(v->h);
	free(v);
	return 0;
}

static int check(struct verdict *v, bool allow)
{
	last_msg[0] = 0;
	return engine_fs_check(v->t, v->h, allow);
}

/* A /home on a volume the initramfs did not open: its UUID and its old device
 * number name nothing here. */
static void unseen_filesystem_refused_unless_allowed(void **state)
{
	struct verdict *v = *state;
	struct hib_fs_state *f = &v->h->fs[0];

	for (int i = 0; i < 16; i++)
		f->uuid[i] = (uint8_t)(0xa0 + i * 7);
	f->fs_type = HIB_FS_EXT;
	f->devnum = makedev(4095, 1048575);
	v->h->nr_fs = 1;
	assert_int_equal(check(v, false), -ESTALE);
	assert_int_equal(last_level, HIB_LOG_ERR);
	assert_non_null(strstr(last_msg, "not visible here"));
	assert_non_null(strstr(last_msg, "UUID=a0a7aeb5-bcc3-cad1-d8df-e6edf4fb0209"));
	assert_non_null(strstr(last_msg, "unchecked-filesystems = allow"));
	assert_non_null(strstr(last_msg, v->target));
	assert_int_equal(check(v, true), 0);
	assert_int_equal(last_level, HIB_LOG_WARN);
	assert_non_null(strstr(last_msg, "not checked"));
	/* A later-type record of an older reader's image is judged the same way. */
	v->h->nr_fs = 0;
	v->h->nr_fs_later = 1;
	f->fs_type = HIB_FS_VFAT;
	assert_int_equal(check(v, false), -ESTALE);
	assert_non_null(strstr(last_msg, "vfat filesystem UUID=B5AE-A7A0"));
}

static void uncomparable_type_refused_unless_allowed(void **state)
{
	struct verdict *v = *state;
	struct hib_fs_state *f = &v->h->fs[0];

	memcpy(f->uuid, "ntfs3", 5);
	f->fs_type = HIB_FS_OTHER;
	f->devnum = makedev(8, 3);
	v->h->nr_fs_later = 1;
	assert_int_equal(check(v, false), -ESTALE);
	assert_non_null(strstr(last_msg, "ntfs3 filesystem (was 8:3)"));
	assert_non_null(strstr(last_msg, "changes cannot be seen"));
	assert_non_null(strstr(last_msg, "unchecked-filesystems = allow"));
	assert_int_equal(check(v, true), 0);
	assert_non_null(strstr(last_msg, "not checked"));
	/* A type of a later writer: not misjudged as stale, not checked either. */
	f->fs_type = HIB_FS_OTHER + 1;
	assert_int_equal(check(v, false), -ESTALE);
	assert_non_null(strstr(last_msg, "does not know"));
	assert_non_null(strstr(last_msg, "unchecked-filesystems = allow"));
	assert_int_equal(check(v, true), 0);
}

/* The whole way, on a loop device (root only): a vfat filesystem left alone
 * passes, found by its serial; one written since refuses, allow or not. */
static void vfat_written_since_is_refused(void **state)
{
	struct verdict *v = *state;
	struct hib_fs_state *f = &v->h->fs[0];
	char path[PATH_MAX], opts[64], serial[16], *dev = v->loop;
	uint32_t id = (uint32_t)getpid() * 2654435761u ^ (uint32_t)time(NULL);
	const char *why;
	uint8_t boot[512];
	struct stat st;
	int fd;

	/* A serial of this run only: blkid must find this device by it. */
	snprintf(opts, sizeof(opts), "-F 32 -i %08x", id);
	snprintf(serial, sizeof(serial), "%04X-%04X", id >> 16, id & 0xffff);
	if (!make_fs_image(path, "vfat", opts))
		skip();
	why = loop_attach(path, dev, sizeof(v->loop));
	if (why) {
		print_message("# skipped: %s\n", why);
		unlink(path);
		skip();
	}
	assert_int_equal(stat(dev, &st), 0);
	state_of(dev, "vfat", f);
	f->devnum = st.st_rdev;
	v->h->nr_fs_later = 1;
	assert_int_equal(check(v, false), 0);
	/* Another system allocates a cluster, through the device. */
	pread_at(dev, 0, boot, sizeof(boot));
	fd = open(dev, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "\xff\xff\xff\x0f", 4,
				(off_t)get16(boot + 14) * get16(boot + 11) + 9 * 4),
			 4);
	assert_int_equal(fsync(fd), 0);
	close(fd);
	assert_int_equal(check(v, false), -ESTALE);
	assert_non_null(strstr(last_msg, "stale"));
	assert_non_null(strstr(last_msg, "vfat filesystem"));
	assert_non_null(strstr(last_msg, serial));
	assert_int_equal(check(v, true), -ESTALE);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mounts_recorded_are_writable_block_ones),
		cmocka_unit_test(btrfs_device_from_the_source),
		cmocka_unit_test(records_keep_the_old_types_first),
		cmocka_unit_test(vfat_change_is_seen),
		cmocka_unit_test(f2fs_checkpoint_is_seen),
		cmocka_unit_test(other_types_are_recorded_by_name),
		cmocka_unit_test_setup_teardown(unseen_filesystem_refused_unless_allowed,
						verdict_setup, verdict_teardown),
		cmocka_unit_test_setup_teardown(uncomparable_type_refused_unless_allowed,
						verdict_setup, verdict_teardown),
		cmocka_unit_test_setup_teardown(vfat_written_since_is_refused, verdict_setup,
						verdict_teardown),
	};

	hib_set_log(keep_log, NULL);
	return cmocka_run_group_tests_name("fsstate", tests, NULL, NULL);
}
