// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hibernate setup's planner and state (lib/frontend/setupplan.c,
 * setupstate.c): the target over recorded layouts, the size and the reserve,
 * the edits of hibernate.conf and fstab keeping comments and spacing, the
 * state file's round trip, and the undo (also of a setup that failed part-way)
 * leaving every file byte-identical. All under a temporary root.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "frontend/location.h"
#include "frontend/setupplan.h"
#include "frontend/setupstate.h"

#define MIB (1024ull * 1024ull)
#define GIB (1024ull * MIB)

/* 8 GiB of RAM, a 100 GiB filesystem of @type with 50 GiB free, no swap. */
static struct hib_setup_input machine(const char *type)
{
	struct hib_setup_input in = { .mem_total_kib = 8ull * 1024 * 1024 };

	snprintf(in.fs.type, sizeof(in.fs.type), "%s", type);
	in.fs.total_bytes = 100 * GIB;
	in.fs.avail_bytes = 50 * GIB;
	in.fs.devices = 1;
	return in;
}

static void add_swap(struct hib_setup_input *in, const char *path, bool part, uint64_t kib,
		     int prio, const char *uuid)
{
	struct hib_setup_swap *s = &in->swaps[in->n_swaps++];

	snprintf(s->path, sizeof(s->path), "%s", path);
	s->partition = part;
	s->zram = strncmp(path, "/dev/zram", 9) == 0;
	s->size_kib = kib;
	s->prio = prio;
	snprintf(s->uuid, sizeof(s->uuid), "%s", uuid);
}

static void sizing(void **state)
{
	(void)state;
	/* 8 GiB: 4096 MiB + 1% (40.96) + 16, rounded up to a MiB. */
	assert_int_equal(hib_setup_need_bytes(8ull * 1024 * 1024), 4153 * MIB);
	assert_int_equal(hib_setup_need_bytes(1024 * 1024) % MIB, 0);
	assert_int_equal(hib_setup_reserve_bytes(10 * GIB), GIB);
	assert_int_equal(hib_setup_reserve_bytes(100 * GIB), 5 * GIB);
}

static void existing_swap_partition(void **state)
{
	struct hib_setup_input in = machine("ext4");
	struct hib_setup_plan p;
	struct hib_error err;

	(void)state;
	add_swap(&in, "/dev/zram0", true, 4ull << 20, 100, "");
	add_swap(&in, "/dev/vda3", true, 6ull << 20, -2, "1111-2222");
	assert_int_equal(hib_setup_decide(&in, &p, &err), 0);
	assert_int_equal(p.kind, HIB_SETUP_SWAP_AREA);
	assert_string_equal(p.path, "/dev/vda3");
	assert_string_equal(p.device, "UUID=1111-2222");
	/* A LUKS mapping (a dm device in /proc/swaps) is a partition too. */
	in.n_swaps = 0;
	add_swap(&in, "/dev/dm-1", true, 9ull << 20, -2, "aaaa-bbbb");
	assert_int_equal(hib_setup_decide(&in, &p, &err), 0);
	assert_string_equal(p.device, "UUID=aaaa-bbbb");
}

static void small_swap_partition_means_a_file(void **state)
{
	struct hib_setup_input in = machine("ext4");
	struct hib_setup_plan p;
	struct hib_error err;

	(void)state;
	add_swap(&in, "/dev/vda3", true, 1ull << 20, -2, "1111-2222");
	add_swap(&in, "/swapfile", false, 16ull << 20, -3, "");
	assert_int_equal(hib_setup_decide(&in, &p, &err), 0);
	assert_int_equal(p.kind, HIB_SETUP_IMAGE_FILE);
	assert_string_equal(p.path, HIB_SETUP_IMAGE_PATH);
	assert_string_equal(p.device, HIB_SETUP_IMAGE_PATH);
	assert_int_equal(p.bytes, 4153 * MIB);
	assert_int_equal(p.swap_prio, -1);
	in.fs = machine("xfs").fs;
	assert_int_equal(hib_setup_decide(&in, &p, &err), 0);
	assert_int_equal(p.kind, HIB_SETUP_IMAGE_FILE);
}

static void btrfs_recipes(void **state)
{
	struct hib_setup_input in = machine("btrfs");
	struct hib_setup_plan p;
	struct hib_error err;

	(void)state;
	snprintf(in.fs.data_profile, sizeof(in.fs.data_profile), "single");
	snprintf(in.fs.options, sizeof(in.fs.options), "rw,compress=zstd:1");
	assert_int_equal(hib_setup_decide(&in, &p, &err), 0);
	assert_int_equal(p.kind, HIB_SETUP_SWAP_FILE);
	assert_string_equal(p.path, HIB_SETUP_SWAP_PATH);
	assert_int_equal(p.swap_prio, -1);
	/* zram-only: the file goes under zram's priority. */
	add_swap(&in, "/dev/zram0", true, 4ull << 20, 100, "");
	assert_int_equal(hib_setup_decide(&in, &p, &err), 0);
	assert_int_equal(p.kind, HIB_SETUP_SWAP_FILE);
	assert_int_equal(p.swap_prio, 0);
	in.fs.devices = 2;
	assert_int_equal(hib_setup_decide(&in, &p, &err), -EOPNOTSUPP);
	assert_non_null(strstr(err.msg, "several devices"));
	assert_non_null(strstr(err.msg, "--device"));
	in.fs.devices = 1;
	snprintf(in.fs.data_profile, sizeof(in.fs.data_profile), "raid1");
	assert_int_equal(hib_setup_decide(&in, &p, &err), -EOPNOTSUPP);
	assert_non_null(strstr(err.msg, "profile"));
}

static void unusable_filesystems(void **state)
{
	static const char *const types[] = { "zfs", "tmpfs", "bcachefs", "nfs4", "vfat" };
	struct hib_setup_plan p;
	struct hib_error err;

	(void)state;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		struct hib_setup_input in = machine(types[i]);

		assert_int_equal(hib_setup_decide(&in, &p, &err), -EOPNOTSUPP);
		assert_non_null(strstr(err.msg, types[i]));
		assert_non_null(strstr(err.msg, "choices"));
	}
}

static void reserve_and_size(void **state)
{
	struct hib_setup_input in = machine("ext4");
	struct hib_setup_plan p;
	struct hib_error err;

	(void)state;
	in.fs.avail_bytes = 9 * GIB; /* 4153 MiB leaves 4.9 GiB: under 5 GiB */
	assert_int_equal(hib_setup_decide(&in, &p, &err), -ENOSPC);
	assert_non_null(strstr(err.msg, "reserve"));
	in.size_mib = 2048;
	assert_int_equal(hib_setup_decide(&in, &p, &err), 0);
	assert_int_equal(p.bytes, 2048 * MIB);
	in.size_mib = 6000; /* --size still keeps the reserve */
	assert_int_equal(hib_setup_decide(&in, &p, &err), -ENOSPC);
	in.size_mib = 0;
	in.fs.avail_bytes = 2 * GIB; /* less free than the image */
	assert_int_equal(hib_setup_decide(&in, &p, &err), -ENOSPC);
}

static void lockdown_refused(void **state)
{
	struct hib_setup_input in = machine("ext4");
	struct hib_setup_plan p;
	struct hib_error err;

	(void)state;
	snprintf(in.lockdown, sizeof(in.lockdown), "none");
	assert_int_equal(hib_setup_decide(&in, &p, &err), 0);
	snprintf(in.lockdown, sizeof(in.lockdown), "integrity");
	assert_int_equal(hib_setup_decide(&in, &p, &err), -EPERM);
	assert_non_null(strstr(err.msg, "Secure Boot"));
}

static const char shipped_conf[] = "# comment\n"
				   "# The target\n"
				   "#device = /dev/disk/by-uuid/...\n"
				   "#offset = 0\n"
				   "\n"
				   "#compress = lz4\n"
				   "loglevel   =  4\n";

static void conf_edits(void **state)
{
	char *a, *b, *c;

	(void)state;
	/* The shipped file: the key goes under its commented example. */
	a = hib_setup_conf_edit(shipped_conf, "/var/lib/hibernate/image", NULL);
	assert_string_equal(a, "# comment\n"
			       "# The target\n"
			       "#device = /dev/disk/by-uuid/...\n"
			       "#offset = 0\n"
			       "device = /var/lib/hibernate/image\n"
			       "\n"
			       "#compress = lz4\n"
			       "loglevel   =  4\n");
	/* Idempotent, and another value replaces the line in place. */
	b = hib_setup_conf_edit(a, "/var/lib/hibernate/image", NULL);
	assert_string_equal(a, b);
	free(b);
	b = hib_setup_conf_edit("  device\t=  /dev/sda2\noffset = 12\nverify = yes", "UUID=ab",
				NULL);
	assert_string_equal(b, "  device\t=  UUID=ab\nverify = yes\n");
	c = hib_setup_conf_edit(NULL, "UUID=ab", NULL);
	assert_string_equal(c, "device = UUID=ab\n");
	free(b), free(c);
	/* The initramfs's copy: the resolved location, offset under device. */
	b = hib_setup_conf_edit(a, "UUID=fs", "1234");
	assert_non_null(strstr(b, "#offset = 0\ndevice = UUID=fs\noffset = 1234\n\n"));
	c = hib_setup_conf_edit("offset = 9\n device = /x\n", "UUID=fs", "77");
	assert_string_equal(c, " device = UUID=fs\noffset = 77\n");
	free(a), free(b), free(c);
}

static void fstab_edits(void **state)
{
	const char *fstab = "# /etc/fstab\nUUID=x / btrfs defaults 0 1\n";
	char *a, *b, *c;

	(void)state;
	a = hib_setup_fstab_edit(fstab, HIB_SETUP_SWAP_PATH, 0);
	assert_true(strncmp(a, fstab, strlen(fstab)) == 0);
	assert_non_null(strstr(a, HIB_SETUP_SWAP_PATH " none swap defaults,pri=0 0 0\n"));
	b = hib_setup_fstab_edit(a, HIB_SETUP_SWAP_PATH, 0);
	assert_string_equal(a, b);
	c = hib_setup_fstab_edit("UUID=x / ext4 defaults 0 1", "/f", -1);
	assert_string_equal(c, "UUID=x / ext4 defaults 0 1\n"
			       "# hibernate setup: the hibernation swap file\n"
			       "/f none swap defaults 0 0\n");
	free(a), free(b), free(c);
}

static void parsers(void **state)
{
	struct hib_setup_input in = { 0 };
	uint64_t kib = 0;

	(void)state;
	assert_int_equal(hib_setup_parse_meminfo("MemFree: 1 kB\nMemTotal:  2048 kB\n", &kib), 0);
	assert_int_equal(kib, 2048);
	assert_int_equal(hib_setup_parse_meminfo("MemFree: 1 kB\n", &kib), -EINVAL);
	hib_setup_parse_swaps("Filename\tType\tSize\tUsed\tPriority\n"
			      "/dev/zram0 partition 4194300 0 100\n"
			      "/swap\\040file file 1048572 0 -2\n",
			      &in);
	assert_int_equal(in.n_swaps, 2);
	assert_true(in.swaps[0].zram);
	assert_true(in.swaps[0].partition);
	assert_string_equal(in.swaps[1].path, "/swap file");
	assert_false(in.swaps[1].partition);
	assert_int_equal(in.swaps[1].prio, -2);
}

/* ---- state and undo ---------------------------------------------------------- */

struct fx {
	char root[64];
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	snprintf(f->root, sizeof(f->root), "/tmp/hib-setup-XXXXXX");
	if (!mkdtemp(f->root))
		die("mkdtemp");
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	remove_tree(f->root);
	free(f);
	return 0;
}

static char *slurp_under(const char *root, const char *rel)
{
	char p[PATH_MAX], *text = NULL;
	size_t len = 0;
	FILE *fp;

	snprintf(p, sizeof(p), "%s%s", root, rel);
	fp = fopen(p, "re");
	if (!fp)
		return NULL;
	if (getdelim(&text, &len, 0, fp) < 0) {
		free(text);
		text = strdup("");
	}
	fclose(fp);
	return text;
}

static bool exists_under(const char *root, const char *rel)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s%s", root, rel);
	return access(p, F_OK) == 0;
}

static void state_round_trip(void **state)
{
	struct fx *f = *state;
	struct hib_setup_state st = { 0 }, back;
	struct hib_error err;
	char text[4096];

	assert_int_equal(hib_setup_state_load(f->root, &back, &err), -ENOENT);
	assert_int_equal(hib_setup_state_add(f->root, &st, HIB_ACT_CREATED_FILE, "/var/x", &err),
			 0);
	assert_int_equal(hib_setup_state_add(f->root, &st, HIB_ACT_RERUN, "initramfs", &err), 0);
	assert_int_equal(hib_setup_state_add(f->root, &st, HIB_ACT_TARGET, "UUID=ab", &err), 0);
	assert_int_equal(hib_setup_state_load(f->root, &back, &err), 0);
	assert_int_equal(back.n, 3);
	assert_int_equal(back.a[1].act, HIB_ACT_RERUN);
	assert_string_equal(back.a[0].arg, "/var/x");
	assert_string_equal(hib_setup_state_target(&back), "UUID=ab");
	assert_int_equal(hib_setup_state_format(&back, text, sizeof(text)), 0);
	assert_non_null(strstr(text, "created /var/x\nrerun initramfs\ntarget UUID=ab\n"));
	assert_int_equal(hib_setup_state_parse("bogus /x\n", &back, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "line 1"));
}

struct fake_ops {
	unsigned swapoffs, reruns;
	int rerun_result;
};

static int fake_swapoff(const char *p, void *ud)
{
	(void)p;
	((struct fake_ops *)ud)->swapoffs++;
	return 0;
}

static int fake_subvol(const char *p, void *ud)
{
	(void)ud;
	return rmdir(p) < 0 ? -errno : 0;
}

static int fake_rerun(const char *name, void *ud)
{
	struct fake_ops *o = ud;

	assert_string_equal(name, "initramfs");
	o->reruns++;
	return o->rerun_result;
}

/* A setup's edits and files, then its undo: every file as it was, byte for byte. */
static void undo_is_byte_identical(void **state)
{
	struct fx *f = *state;
	const char *conf = "# mine\n  device = /dev/old   \n\n\tloglevel=4"; /* no final newline */
	struct hib_setup_state st = { 0 };
	struct fake_ops fo = { 0 };
	struct hib_setup_undo_ops ops = { fake_swapoff, fake_subvol, fake_rerun, &fo };
	struct hib_error err;
	char *edited, *back;
	char p[PATH_MAX];

	put_under(f->root, "/etc/hibernate.conf", conf);
	put_under(f->root, "/etc/fstab", "UUID=x / ext4 defaults 0 1\n");
	/* setup made its own directory; the hooks' record directory came in it. */
	put_under(f->root, "/var/lib/other", "");
	snprintf(p, sizeof(p), "%s" HIB_SETUP_DIR, f->root);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(hib_setup_state_add(f->root, &st, HIB_ACT_CREATED_DIR, HIB_SETUP_DIR,
					     &err),
			 0);
	snprintf(p, sizeof(p), "%s" HIB_LOCATION_DIR, f->root);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/etc/hibernate.conf", f->root);
	chmod(p, 0640);
	edited = hib_setup_conf_edit(conf, "/var/lib/hibernate/image", NULL);
	assert_int_equal(hib_setup_edit_file(f->root, &st, "/etc/hibernate.conf", edited, &err), 1);
	/* The same text again changes and records nothing. */
	assert_int_equal(hib_setup_edit_file(f->root, &st, "/etc/hibernate.conf", edited, &err), 0);
	assert_int_equal(st.n, 2);
	assert_int_equal(hib_setup_edit_file(f->root, &st, "/etc/crypttab", "new\n", &err), 1);
	free(edited);
	put_under(f->root, "/var/lib/hibernate/swap/swapfile", "x");
	assert_int_equal(hib_setup_state_add(f->root, &st, HIB_ACT_SUBVOLUME,
					     "/var/lib/hibernate/swap", &err),
			 0);
	assert_int_equal(hib_setup_state_add(f->root, &st, HIB_ACT_CREATED_FILE,
					     "/var/lib/hibernate/swap/swapfile", &err),
			 0);
	assert_int_equal(hib_setup_state_add(f->root, &st, HIB_ACT_SWAPON,
					     "/var/lib/hibernate/swap/swapfile", &err),
			 0);
	assert_int_equal(hib_setup_state_add(f->root, &st, HIB_ACT_RERUN, "initramfs", &err), 0);
	back = slurp_under(f->root, "/etc/hibernate.conf");
	assert_string_not_equal(back, conf);
	free(back);

	assert_int_equal(hib_setup_undo(f->root, &st, &ops, &err), 0);
	back = slurp_under(f->root, "/etc/hibernate.conf");
	assert_string_equal(back, conf);
	free(back);
	{
		struct stat sb;

		assert_int_equal(stat(p, &sb), 0);
		assert_int_equal(sb.st_mode & 07777, 0640);
	}
	assert_false(exists_under(f->root, "/etc/crypttab"));
	assert_false(exists_under(f->root, "/var/lib/hibernate/swap"));
	assert_false(exists_under(f->root, HIB_SETUP_STATE_FILE));
	assert_false(exists_under(f->root, HIB_SETUP_ORIG_DIR));
	assert_false(exists_under(f->root, HIB_SETUP_DIR));
	assert_true(exists_under(f->root, "/var/lib"));
	assert_int_equal(fo.swapoffs, 1);
	assert_int_equal(fo.reruns, 1);
}

/* A setup that failed after its first edits (the initramfs rebuild failed):
 * undone from what the state recorded, as a new process would read it. */
static void failure_part_way_undone(void **state)
{
	struct fx *f = *state;
	const char *conf = "#device = x\nverify = yes\n";
	struct hib_setup_state st = { 0 }, loaded;
	struct fake_ops fo = { 0 };
	struct hib_setup_undo_ops ops = { fake_swapoff, fake_subvol, fake_rerun, &fo };
	struct hib_error err;
	char *edited, *back;

	put_under(f->root, "/etc/hibernate.conf", conf);
	put_under(f->root, HIB_SETUP_IMAGE_PATH, "image");
	assert_int_equal(hib_setup_state_add(f->root, &st, HIB_ACT_CREATED_FILE,
					     HIB_SETUP_IMAGE_PATH, &err),
			 0);
	edited = hib_setup_conf_edit(conf, HIB_SETUP_IMAGE_PATH, NULL);
	assert_int_equal(hib_setup_edit_file(f->root, &st, "/etc/hibernate.conf", edited, &err), 1);
	free(edited);
	assert_int_equal(hib_setup_state_add(f->root, &st, HIB_ACT_RERUN, "initramfs", &err), 0);
	/* The rebuild failed: setup undoes; a rerun that fails keeps the state. */
	assert_int_equal(hib_setup_state_load(f->root, &loaded, &err), 0);
	fo.rerun_result = -EPROTO;
	assert_int_equal(hib_setup_undo(f->root, &loaded, &ops, &err), -EPROTO);
	assert_non_null(strstr(err.msg, "initramfs"));
	back = slurp_under(f->root, "/etc/hibernate.conf");
	assert_string_equal(back, conf);
	free(back);
	assert_false(exists_under(f->root, HIB_SETUP_IMAGE_PATH));
	assert_int_equal(hib_setup_state_load(f->root, &loaded, &err), 0);
	assert_int_equal(loaded.n, 1);
	assert_int_equal(loaded.a[0].act, HIB_ACT_RERUN);
	/* Run again once the rebuild works: nothing left. */
	fo.rerun_result = 0;
	assert_int_equal(hib_setup_undo(f->root, &loaded, &ops, &err), 0);
	assert_false(exists_under(f->root, HIB_SETUP_STATE_FILE));
}

/* Before the freeze: the target against the record of the running kernel's
 * initramfs. */
static void location_check(void **state)
{
	struct fx *f = *state;
	struct hib_location target, l;
	char msg[1024], text[128];

	assert_int_equal(hib_location_parse("UUID=ab-cd 1234\n", &target), 0);
	assert_string_equal(target.spec, "UUID=ab-cd");
	assert_int_equal(target.offset, 1234);
	hib_location_format(&target, text, sizeof(text));
	assert_string_equal(text, "UUID=ab-cd 1234");
	assert_int_equal(hib_location_parse("UUID=ab-cd x", &l), -EINVAL);
	assert_int_equal(hib_location_parse("", &l), -EINVAL);

	/* No record: refused only where one is required. */
	assert_false(hib_location_required(f->root, NULL));
	assert_int_equal(hib_location_check(f->root, "6.12.0", &target, false, msg, sizeof(msg)),
			 HIB_LOCATION_UNKNOWN);
	assert_int_equal(hib_location_check(f->root, "6.12.0", &target, true, msg, sizeof(msg)),
			 HIB_LOCATION_UNRECORDED);
	assert_non_null(strstr(msg, "update-initramfs -u -k 6.12.0"));
	put_under(f->root, HIB_SETUP_STATE_FILE, "target /var/lib/hibernate/image\n");
	assert_true(hib_location_required(f->root, NULL));

	/* The record of this release: the same target passes... */
	put_under(f->root, HIB_LOCATION_DIR "/6.12.0", "location UUID=ab-cd 1234\nbuilt 1\n");
	assert_int_equal(hib_location_check(f->root, "6.12.0", &target, true, msg, sizeof(msg)),
			 HIB_LOCATION_MATCH);
	/* ...the file re-created elsewhere on the disk does not. */
	target.offset = 99;
	assert_int_equal(hib_location_check(f->root, "6.12.0", &target, true, msg, sizeof(msg)),
			 HIB_LOCATION_MISMATCH);
	assert_non_null(strstr(msg, "page 1234"));
	assert_non_null(strstr(msg, "update-initramfs"));
	/* Another kernel's record is not this one's. */
	assert_int_equal(hib_location_check(f->root, "6.1.0", &target, true, msg, sizeof(msg)),
			 HIB_LOCATION_UNRECORDED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sizing),
		cmocka_unit_test(existing_swap_partition),
		cmocka_unit_test(small_swap_partition_means_a_file),
		cmocka_unit_test(btrfs_recipes),
		cmocka_unit_test(unusable_filesystems),
		cmocka_unit_test(reserve_and_size),
		cmocka_unit_test(lockdown_refused),
		cmocka_unit_test(conf_edits),
		cmocka_unit_test(fstab_edits),
		cmocka_unit_test(parsers),
		cmocka_unit_test_setup_teardown(state_round_trip, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(undo_is_byte_identical, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(failure_part_way_undone, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(location_check, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
