// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * logind's CanHibernate against hibernate doctor: the facts read from a fake
 * root, the explanation of each answer, and the environment file that tells
 * logind to skip its swap checks only while doctor passes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "frontend/logind.h"
#include "helpers.h"

/* Doctor passes; logind's own checks would pass too (swap on the resume= device). */
static const struct hib_logind_facts healthy = {
	.answer = "yes",
	.disk_state = true,
	.resume_dev = 0xfd01,
	.swaps = 1,
	.resume_swap = true,
	.swap_free_kib = 1048576,
	.active_anon_kib = 102400,
};

static enum hib_logind_verdict explain(const struct hib_logind_facts *f, char *msg)
{
	return hib_logind_explain(f, msg, 1024);
}

static void yes_where_doctor_passes(void **state)
{
	struct hib_logind_facts f = healthy;
	char msg[1024];

	(void)state;
	assert_int_equal(explain(&f, msg), HIB_LOGIND_PASS);
	assert_non_null(strstr(msg, "by its own checks"));
	f.bypass = true;
	assert_int_equal(explain(&f, msg), HIB_LOGIND_PASS);
	assert_non_null(strstr(msg, "told by hibernate-logind.service"));
}

/* An image file, or swap turned on only for the cycle: no active swap. */
static void na_without_swap_names_the_unit(void **state)
{
	struct hib_logind_facts f = healthy;
	char msg[1024];

	(void)state;
	f.answer = "na";
	f.swaps = 0;
	f.resume_swap = false;
	assert_int_equal(explain(&f, msg), HIB_LOGIND_WARN);
	assert_non_null(strstr(msg, "no swap area is active"));
	assert_non_null(strstr(msg, "systemctl restart hibernate-logind.service"));
}

static void na_reasons_in_loginds_order(void **state)
{
	struct hib_logind_facts f = healthy;
	char msg[1024];

	(void)state;
	f.answer = "na";
	f.noresume = true;
	f.resume_dev = 0;
	assert_int_equal(explain(&f, msg), HIB_LOGIND_WARN);
	assert_non_null(strstr(msg, "noresume"));
	/* Not on EFI, resume= not set: the bypass does not help there. */
	f.noresume = false;
	f.bypass = true;
	assert_int_equal(explain(&f, msg), HIB_LOGIND_WARN);
	assert_non_null(strstr(msg, "/sys/power/resume is not set"));
	f.efi = true;
	f.bypass = false;
	f.resume_dev = makedev(8, 3);
	f.resume_swap = false;
	assert_int_equal(explain(&f, msg), HIB_LOGIND_WARN);
	assert_non_null(strstr(msg, "names 8:3, which no active swap area is on"));
	f.resume_swap = true;
	f.active_anon_kib = 2u << 20;
	assert_int_equal(explain(&f, msg), HIB_LOGIND_WARN);
	assert_non_null(
		strstr(msg, "Active(anon) 2048 MiB is more than 98% of the free swap, 1024 MiB"));
	f.active_anon_kib = 1;
	assert_int_equal(explain(&f, msg), HIB_LOGIND_WARN);
	assert_non_null(strstr(msg, "a reason not seen here"));
	f.disk_state = false;
	explain(&f, msg);
	assert_non_null(strstr(msg, "/sys/power/state does not offer disk"));
}

static void no_and_challenge_are_policy(void **state)
{
	struct hib_logind_facts f = healthy;
	char msg[1024];

	(void)state;
	f.answer = "challenge";
	assert_int_equal(explain(&f, msg), HIB_LOGIND_WARN);
	assert_non_null(strstr(msg, "org.freedesktop.login1.hibernate"));
	f.answer = "no";
	assert_int_equal(explain(&f, msg), HIB_LOGIND_WARN);
	assert_non_null(strstr(msg, "inhibitor"));
	f.answer = "maybe";
	assert_int_equal(explain(&f, msg), HIB_LOGIND_WARN);
	assert_non_null(strstr(msg, "'maybe'"));
}

/* Where doctor fails, "na" is the right answer and "yes" is not. */
static void doctor_failing(void **state)
{
	struct hib_logind_facts f = healthy;
	char msg[1024];

	(void)state;
	f.doctor_failed = true;
	f.answer = "na";
	assert_int_equal(explain(&f, msg), HIB_LOGIND_PASS);
	assert_non_null(strstr(msg, "agrees"));
	f.answer = "yes";
	assert_int_equal(explain(&f, msg), HIB_LOGIND_WARN);
	assert_non_null(strstr(msg, "refuses before freezing anything"));
	f.bypass = true;
	assert_int_equal(explain(&f, msg), HIB_LOGIND_WARN);
	assert_non_null(strstr(msg, "take the yes back"));
}

static void unasked_is_a_skip(void **state)
{
	struct hib_logind_facts f = healthy;
	char msg[1024];

	(void)state;
	f.answer = NULL;
	f.unasked = "no busctl (systemd) here to ask it";
	assert_int_equal(explain(&f, msg), HIB_LOGIND_SKIP);
	assert_non_null(strstr(msg, "no busctl"));
}

static void facts_from_a_fake_root(void **state)
{
	char root[] = "/tmp/hib-logind-XXXXXX", swaps[1024], buf[64], p[PATH_MAX];
	struct hib_logind_facts f;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(root));
	put_under(root, "/swapfile", "");
	snprintf(p, sizeof(p), "%s/swapfile", root);
	assert_int_equal(stat(p, &st), 0);
	/* The file's filesystem is the resume device; zram does not count. */
	snprintf(swaps, sizeof(swaps),
		 "Filename Type Size Used Priority\n/dev/zram0 partition 4096 0 100\n"
		 "/swapfile file 1048572 1024 -2\n");
	put_under(root, "/proc/swaps", swaps);
	snprintf(buf, sizeof(buf), "%u:%u\n", major(st.st_dev), minor(st.st_dev));
	put_under(root, "/sys/power/resume", buf);
	put_under(root, "/sys/power/state", "freeze mem disk\n");
	put_under(root, "/proc/cmdline", "root=/dev/vda1 ro noresume quiet\n");
	put_under(root, "/proc/meminfo", "MemTotal: 1000 kB\nActive(anon):     5678 kB\n");
	put_under(root, HIB_LOGIND_ENV_PATH, HIB_LOGIND_ENV_LINE "\n");
	hib_logind_facts_read(root, &f);
	assert_int_equal(f.swaps, 1);
	assert_true(f.resume_swap);
	assert_true(f.resume_dev == st.st_dev);
	assert_int_equal(f.swap_free_kib, 1047548);
	assert_int_equal(f.active_anon_kib, 5678);
	assert_true(f.noresume && f.disk_state && f.bypass);
	assert_false(f.efi);
	put_under(root, HIB_LOGIND_ENV_PATH, "SYSTEMD_BYPASS_HIBERNATION_MEMORY_CHECK=0\n");
	put_under(root, "/sys/power/resume", "0:0\n");
	put_under(root, "/sys/firmware/efi/x", "");
	hib_logind_facts_read(root, &f);
	assert_false(f.bypass || f.resume_swap);
	assert_true(f.efi);
	assert_int_equal(remove_tree(root), 0);
}

/* Doctor failing (no target): the file goes, and says it went. */
static void configure_without_target_removes_the_bypass(void **state)
{
	char root[] = "/tmp/hib-logind-XXXXXX", p[PATH_MAX];
	struct hib_error err;

	(void)state;
	assert_non_null(mkdtemp(root));
	put_under(root, HIB_LOGIND_ENV_PATH, HIB_LOGIND_ENV_LINE "\n");
	assert_int_equal(hib_logind_configure(root, NULL, &err), 1);
	snprintf(p, sizeof(p), "%s%s", root, HIB_LOGIND_ENV_PATH);
	assert_int_equal(access(p, F_OK), -1);
	assert_int_equal(hib_logind_configure(root, NULL, &err), 0);
	assert_int_equal(remove_tree(root), 0);
}

/* logind-setup's decision: doctor fails on an empty root (no snapshot
 * device, no target), so no target is resolved and the bypass goes. */
static void setup_where_doctor_fails(void **state)
{
	char root[] = "/tmp/hib-logind-XXXXXX", p[PATH_MAX];
	struct hib_doctor_input in = { .image_size = -1 };
	struct hib_logind_setup ls;
	struct hib_error err;

	(void)state;
	assert_non_null(mkdtemp(root));
	in.root = root;
	put_under(root, HIB_LOGIND_ENV_PATH, HIB_LOGIND_ENV_LINE "\n");
	put_under(root, "/proc/cmdline", "root=/dev/vda1 ro\n");
	assert_int_equal(hib_logind_setup(&in, &ls, &err), 0);
	assert_null(ls.target);
	assert_true(ls.changed);
	assert_true(ls.fail.check[0] != 0);
	assert_true(ls.fail.msg[0] != 0);
	snprintf(p, sizeof(p), "%s%s", root, HIB_LOGIND_ENV_PATH);
	assert_int_equal(access(p, F_OK), -1);
	assert_int_equal(hib_logind_setup(&in, &ls, &err), 0);
	assert_false(ls.changed); /* nothing to remove twice: logind is not restarted */
	assert_int_equal(remove_tree(root), 0);
}

/* doctor's logind line under a test root: the answer given stands for
 * logind's, none is a skip that says why. */
static void doctor_line_under_a_test_root(void **state)
{
	char root[] = "/tmp/hib-logind-XXXXXX", msg[1024];

	(void)state;
	assert_non_null(mkdtemp(root));
	assert_int_equal(hib_logind_doctor(root, NULL, false, msg, sizeof(msg)), HIB_LOGIND_SKIP);
	assert_non_null(strstr(msg, "test root"));
	assert_int_equal(hib_logind_doctor(root, "yes", true, msg, sizeof(msg)), HIB_LOGIND_WARN);
	assert_int_equal(remove_tree(root), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(yes_where_doctor_passes),
		cmocka_unit_test(na_without_swap_names_the_unit),
		cmocka_unit_test(na_reasons_in_loginds_order),
		cmocka_unit_test(no_and_challenge_are_policy),
		cmocka_unit_test(doctor_failing),
		cmocka_unit_test(unasked_is_a_skip),
		cmocka_unit_test(facts_from_a_fake_root),
		cmocka_unit_test(configure_without_target_removes_the_bypass),
		cmocka_unit_test(setup_where_doctor_fails),
		cmocka_unit_test(doctor_line_under_a_test_root),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
