// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The device-mapper stack under a target, read from a fake /sys: dm-crypt
 * found through LVM either way round, an LVM thin volume told from a
 * regular LV, and a LUKS container refused as a target with the fix.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "storage/dmstack.h"
#include "helpers.h"

static char root[PATH_MAX];

/* @text into <root>@rel, its directories made first. */
static void sysfs_put(const char *rel, const char *text)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s%s", root, rel);
	for (char *s = strchr(p + strlen(root) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			die(p);
		*s = '/';
	}
	write_text_file(p, text);
}

/* Block device @kname (@dev) in the fake /sys: a dm device when @uuid is
 * given, mapping onto @slave when that is given. */
static void block_dev(const char *kname, dev_t dev, const char *uuid, const char *name,
		      const char *slave)
{
	char rel[256], text[256];
	unsigned ma = major(dev), mi = minor(dev);

	snprintf(rel, sizeof(rel), "/sys/class/block/%s/dev", kname);
	snprintf(text, sizeof(text), "%u:%u\n", ma, mi);
	sysfs_put(rel, text);
	if (uuid) {
		snprintf(rel, sizeof(rel), "/sys/dev/block/%u:%u/dm/uuid", ma, mi);
		snprintf(text, sizeof(text), "%s\n", uuid);
		sysfs_put(rel, text);
		snprintf(rel, sizeof(rel), "/sys/dev/block/%u:%u/dm/name", ma, mi);
		snprintf(text, sizeof(text), "%s\n", name);
		sysfs_put(rel, text);
	}
	if (slave) {
		snprintf(rel, sizeof(rel), "/sys/dev/block/%u:%u/slaves/%s/.keep", ma, mi, slave);
		sysfs_put(rel, "");
	}
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/hib-dmstack-XXXXXX");
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return remove_tree(root);
}

/* Debian's LVM on LUKS: vda3 → sda3_crypt (dm-0) → vg-swap (dm-1). */
static void lv_on_luks_is_crypt_through_lvm(void **state)
{
	struct hib_dm_crypt c;

	(void)state;
	block_dev("vda3", makedev(252, 3), NULL, NULL, NULL);
	block_dev("dm-0", makedev(253, 0), "CRYPT-LUKS2-0123-sda3_crypt", "sda3_crypt", "vda3");
	block_dev("dm-1", makedev(253, 1), "LVM-vguuidlvuuid", "vg-swap", "dm-0");
	assert_int_equal(hib_dm_crypt_below(root, makedev(253, 1), &c), 1);
	assert_true(c.dev == makedev(253, 0));
	assert_string_equal(c.name, "sda3_crypt");
	assert_true(c.lvm_above);
	assert_false(c.lvm_below);
	assert_string_equal(hib_dm_crypt_how(&c), "dm-crypt through LVM");
	/* The crypt device itself is dm-crypt, with no LVM above it. */
	assert_int_equal(hib_dm_crypt_below(root, makedev(253, 0), &c), 1);
	assert_string_equal(hib_dm_crypt_how(&c), "dm-crypt");
}

/* LUKS on an LV: the LV is the container, the mapping on it is the swap. */
static void luks_on_lv_is_crypt_on_lvm(void **state)
{
	struct hib_dm_crypt c;

	(void)state;
	block_dev("dm-0", makedev(253, 0), "LVM-vguuidlvuuid", "vg-swapcrypt", NULL);
	block_dev("dm-1", makedev(253, 1), "CRYPT-LUKS2-4567-swap", "swap", "dm-0");
	assert_int_equal(hib_dm_crypt_below(root, makedev(253, 1), &c), 1);
	assert_string_equal(c.name, "swap");
	assert_false(c.lvm_above);
	assert_true(c.lvm_below);
	assert_string_equal(hib_dm_crypt_how(&c), "dm-crypt on LVM");
}

static void plain_lv_and_partition_are_not_crypt(void **state)
{
	struct hib_dm_crypt c = { .name = "untouched" };

	(void)state;
	block_dev("vda2", makedev(252, 2), NULL, NULL, NULL);
	block_dev("dm-0", makedev(253, 0), "LVM-vguuidlvuuid", "vg-swap", "vda2");
	assert_int_equal(hib_dm_crypt_below(root, makedev(253, 0), &c), 0);
	assert_int_equal(hib_dm_crypt_below(root, makedev(252, 2), &c), 0);
	assert_int_equal(hib_dm_crypt_below(root, 0, &c), 0);
	assert_string_equal(c.name, "untouched");
}

/* lvcreate -T: the thin LV maps onto the pool's hidden -tpool layer, which
 * maps onto -tmeta and -tdata; the pool LV itself and a regular LV are not
 * thin volumes. */
static void thin_lv_is_told_from_a_regular_lv(void **state)
{
	char pool[64] = "";

	(void)state;
	block_dev("vda2", makedev(252, 2), NULL, NULL, NULL);
	block_dev("dm-0", makedev(253, 0), "LVM-vgpooltmeta-tmeta", "vg-pool_tmeta", "vda2");
	block_dev("dm-1", makedev(253, 1), "LVM-vgpooltdata-tdata", "vg-pool_tdata", "vda2");
	block_dev("dm-2", makedev(253, 2), "LVM-vgpool-tpool", "vg-pool-tpool", "dm-0");
	block_dev("dm-2", makedev(253, 2), "LVM-vgpool-tpool", "vg-pool-tpool", "dm-1");
	block_dev("dm-3", makedev(253, 3), "LVM-vgpool-pool", "vg-pool", "dm-2");
	block_dev("dm-4", makedev(253, 4), "LVM-vgthinlv", "vg-thin", "dm-2");
	block_dev("dm-5", makedev(253, 5), "LVM-vgswaplv", "vg-swap", "vda2");
	assert_int_equal(hib_dm_thin_pool_of(root, makedev(253, 4), pool, sizeof(pool)), 1);
	assert_string_equal(pool, "vg-pool");
	assert_int_equal(hib_dm_thin_pool_of(root, makedev(253, 5), pool, sizeof(pool)), 0);
	assert_int_equal(hib_dm_thin_pool_of(root, makedev(252, 2), pool, sizeof(pool)), 0);
	/* Not LVM's: a raw dmsetup device over a -tpool-named one is not judged. */
	block_dev("dm-6", makedev(253, 6), "mine", "mine", "dm-2");
	assert_int_equal(hib_dm_thin_pool_of(root, makedev(253, 6), pool, sizeof(pool)), 0);
}

/* A LUKS container named as the target: refused before anything is written,
 * with the reason and the fix; a swap area passes. */
static void luks_container_is_refused(void **state)
{
	static const uint8_t luks2[8] = { 'L', 'U', 'K', 'S', 0xba, 0xbe, 0, 2 };
	char path[PATH_MAX];
	struct hib_target *t = NULL;
	struct hib_error err;
	uint8_t before[TEST_PAGE], after[TEST_PAGE];

	(void)state;
	make_swap_path(path, "dmstack", 64);
	assert_int_equal(hib_target_open(path, 0, true, &t), 0);
	assert_int_equal(hib_target_check_stack(t, root, &err), 0);
	assert_string_equal(err.msg, "");
	hib_target_close(t);

	pwrite_at(path, 0, luks2, sizeof(luks2));
	read_page0(path, before);
	assert_int_equal(hib_target_open(path, 0, true, &t), 0);
	assert_int_equal(hib_target_check_stack(t, root, &err), -EMEDIUMTYPE);
	assert_int_equal(err.error, -EMEDIUMTYPE);
	assert_non_null(strstr(err.msg, path));
	assert_non_null(strstr(err.msg, "is a LUKS container"));
	assert_non_null(strstr(err.msg, "cryptsetup open"));
	assert_non_null(strstr(err.msg, "/dev/mapper/NAME"));
	hib_target_close(t);
	read_page0(path, after);
	assert_memory_equal(before, after, TEST_PAGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(lv_on_luks_is_crypt_through_lvm, setup, teardown),
		cmocka_unit_test_setup_teardown(luks_on_lv_is_crypt_on_lvm, setup, teardown),
		cmocka_unit_test_setup_teardown(plain_lv_and_partition_are_not_crypt, setup,
						teardown),
		cmocka_unit_test_setup_teardown(thin_lv_is_told_from_a_regular_lv, setup, teardown),
		cmocka_unit_test_setup_teardown(luks_container_is_refused, setup, teardown),
	};

	quiet_logs();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
