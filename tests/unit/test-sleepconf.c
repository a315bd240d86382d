// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sleep.conf as systemd reads it: HibernateDelaySec= and SuspendEstimationSec=
 * time spans, HibernateOnACPower= and the Allow*= booleans,
 * HibernateMode= mapped to a powerdown, the files' precedence, and the
 * version line that says whether systemd freezes user.slice.
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
#include "frontend/sleepconf.h"

#define SEC 1000000ULL

static void timespans(void **state)
{
	uint64_t us;

	(void)state;
	assert_int_equal(hib_parse_timespan("90", &us), 0);
	assert_int_equal(us, 90 * SEC);
	assert_int_equal(hib_parse_timespan("2h 30min", &us), 0);
	assert_int_equal(us, 9000 * SEC);
	assert_int_equal(hib_parse_timespan("1h30m", &us), 0);
	assert_int_equal(us, 5400 * SEC);
	assert_int_equal(hib_parse_timespan("45s", &us), 0);
	assert_int_equal(us, 45 * SEC);
	assert_int_equal(hib_parse_timespan("500ms", &us), 0);
	assert_int_equal(us, 500000);
	assert_int_equal(hib_parse_timespan("1d", &us), 0);
	assert_int_equal(us, 86400 * SEC);
	assert_int_equal(hib_parse_timespan(" 20 sec ", &us), 0);
	assert_int_equal(us, 20 * SEC);
	assert_int_equal(hib_parse_timespan("", &us), -EINVAL);
	assert_int_equal(hib_parse_timespan("infinity", &us), -EINVAL);
	assert_int_equal(hib_parse_timespan("10 parsecs", &us), -EINVAL);
	assert_int_equal(hib_parse_timespan("-5s", &us), -EINVAL);
	assert_int_equal(hib_parse_timespan("99999999999999999999w", &us), -EINVAL);
}

static void modes(void **state)
{
	enum hib_powerdown pd = HIB_POWERDOWN_NONE;

	(void)state;
	assert_int_equal(hib_sleep_mode_powerdown("platform shutdown", &pd), 0);
	assert_int_equal(pd, HIB_POWERDOWN_PLATFORM);
	assert_int_equal(hib_sleep_mode_powerdown("test_resume reboot", &pd), 0);
	assert_int_equal(pd, HIB_POWERDOWN_REBOOT);
	assert_int_equal(hib_sleep_mode_powerdown("  shutdown", &pd), 0);
	assert_int_equal(pd, HIB_POWERDOWN_SHUTDOWN);
	assert_int_equal(hib_sleep_mode_powerdown("suspend", &pd), 0);
	assert_int_equal(pd, HIB_POWERDOWN_SUSPEND);
	assert_int_equal(hib_sleep_mode_powerdown("test_resume", &pd), -ENOENT);
	assert_int_equal(hib_sleep_mode_powerdown("platforms", &pd), -ENOENT);
	assert_int_equal(hib_sleep_mode_powerdown("", &pd), -ENOENT);
}

static void versions(void **state)
{
	unsigned v = 0;

	(void)state;
	assert_int_equal(hib_systemd_version_parse("systemd 257 (257.9-1~deb13u1)\n", &v), 0);
	assert_int_equal(v, 257);
	assert_int_equal(hib_systemd_version_parse("systemd 252 (252.39-1~deb12u1)", &v), 0);
	assert_int_equal(v, 252);
	assert_int_equal(hib_systemd_version_parse("systemd 256\n", &v), 0);
	assert_int_equal(v, 256);
	assert_int_equal(hib_systemd_version_parse("elogind 255", &v), -EINVAL);
	assert_int_equal(hib_systemd_version_parse("systemd v257", &v), -EINVAL);
	assert_int_equal(hib_systemd_version_parse("systemd 257rc1", &v), -EINVAL);
	assert_int_equal(hib_systemd_version_parse("", &v), -EINVAL);
}

static void parse_text(void **state)
{
	struct hib_sleep_conf c;
	struct hib_error err;
	unsigned line = 0;

	(void)state;
	hib_sleep_conf_init(&c);
	assert_false(c.delay_set);
	assert_false(c.mode_set);
	assert_int_equal(c.hibernate_delay_usec, HIB_SLEEP_DEFAULT_DELAY_USEC);
	assert_string_equal(c.suspend_state, "mem standby freeze");
	assert_int_equal(
		hib_sleep_conf_parse(&c,
				     "# comment\n[Other]\nHibernateDelaySec=1s\n\n"
				     "[Sleep]\n ; also a comment\nHibernateDelaySec = 20s\n"
				     "HibernateMode=platform shutdown\nSuspendState=freeze\n"
				     "AllowHibernation=yes\n",
				     &line, &err),
		0);
	assert_true(c.delay_set);
	assert_int_equal(c.hibernate_delay_usec, 20 * SEC);
	assert_true(c.mode_set);
	assert_int_equal(c.powerdown, HIB_POWERDOWN_PLATFORM);
	assert_string_equal(c.suspend_state, "freeze");
	/* An empty value resets the key to systemd's default. */
	assert_int_equal(hib_sleep_conf_parse(&c, "[Sleep]\nHibernateDelaySec=\nHibernateMode=\n",
					      &line, &err),
			 0);
	assert_false(c.delay_set);
	assert_int_equal(c.hibernate_delay_usec, HIB_SLEEP_DEFAULT_DELAY_USEC);
	assert_false(c.mode_set);
	assert_int_equal(hib_sleep_conf_parse(&c, "[Sleep]\n\nHibernateDelaySec=soon\n", &line,
					      &err),
			 -EINVAL);
	assert_int_equal(line, 3);
	assert_non_null(strstr(err.msg, "HibernateDelaySec=soon"));
	assert_int_equal(hib_sleep_conf_parse(&c, "[Sleep]\nHibernateDelaySec=0\n", &line, &err),
			 -EINVAL);
	assert_int_equal(hib_sleep_conf_parse(&c, "[Sleep]\nHibernateMode=test_resume\n", &line,
					      &err),
			 -EINVAL);
	assert_non_null(strstr(err.msg, "HibernateMode=test_resume"));
}

/* The keys of a battery-aware suspend-then-hibernate, and what forbids it. */
static void sth_keys(void **state)
{
	struct hib_sleep_conf c;
	struct hib_error err;
	unsigned line = 0;

	(void)state;
	hib_sleep_conf_init(&c);
	assert_int_equal(c.suspend_estimation_usec, 3600 * SEC);
	assert_true(c.hibernate_on_ac);
	assert_null(hib_sleep_disallowed(&c, 2));
	assert_int_equal(
		hib_sleep_conf_parse(&c,
				     "[Sleep]\nSuspendEstimationSec=20min\n"
				     "HibernateOnACPower=no\nAllowSuspendThenHibernate=off\n",
				     &line, &err),
		0);
	assert_int_equal(c.suspend_estimation_usec, 1200 * SEC);
	assert_false(c.hibernate_on_ac);
	assert_string_equal(hib_sleep_disallowed(&c, 2), "AllowSuspendThenHibernate=no");
	assert_null(hib_sleep_disallowed(&c, 0)); /* plain hibernate is still allowed */
	/* Emptied, each is its default again. */
	assert_int_equal(
		hib_sleep_conf_parse(&c,
				     "[Sleep]\nSuspendEstimationSec=\nHibernateOnACPower=\n"
				     "AllowSuspendThenHibernate=\n",
				     &line, &err),
		0);
	assert_int_equal(c.suspend_estimation_usec, 3600 * SEC);
	assert_true(c.hibernate_on_ac);
	assert_null(hib_sleep_disallowed(&c, 2));
	/* s-t-h needs suspend and hibernation allowed too, as in systemd. */
	assert_int_equal(hib_sleep_conf_parse(&c, "[Sleep]\nAllowSuspend=0\n", &line, &err), 0);
	assert_string_equal(hib_sleep_disallowed(&c, 2), "AllowSuspend=no");
	assert_int_equal(hib_sleep_conf_parse(&c,
					      "[Sleep]\nAllowSuspend=y\nAllowHibernation=false\n",
					      &line, &err),
			 0);
	assert_string_equal(hib_sleep_disallowed(&c, 2), "AllowHibernation=no");
	assert_string_equal(hib_sleep_disallowed(&c, 0), "AllowHibernation=no");
	assert_int_equal(hib_sleep_conf_parse(&c, "[Sleep]\nHibernateOnACPower=maybe\n", &line,
					      &err),
			 -EINVAL);
	assert_non_null(strstr(err.msg, "HibernateOnACPower=maybe"));
	assert_int_equal(hib_sleep_conf_parse(&c, "[Sleep]\nSuspendEstimationSec=0\n", &line, &err),
			 -EINVAL);
	assert_int_equal(hib_sleep_conf_parse(&c, "[Sleep]\nSuspendEstimationSec=later\n", &line,
					      &err),
			 -EINVAL);
	assert_non_null(strstr(err.msg, "SuspendEstimationSec=later"));
}

static void put(const char *root, const char *rel, const char *text)
{
	char path[512], cmd[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	if (system(cmd) != 0)
		die("mkdir");
	f = fopen(path, "w");
	if (!f)
		die(path);
	fputs(text, f);
	fclose(f);
}

static void load_precedence(void **state)
{
	char root[] = "/tmp/hib-sleepconf-XXXXXX";
	struct hib_sleep_conf c;
	struct hib_error err;

	(void)state;
	if (!mkdtemp(root))
		die("mkdtemp");
	/* Nothing at all: systemd's defaults. */
	assert_int_equal(hib_sleep_conf_load(root, &c, &err), 0);
	assert_false(c.delay_set);
	assert_int_equal(c.hibernate_delay_usec, HIB_SLEEP_DEFAULT_DELAY_USEC);
	/* /etc's main file wins over /usr/lib's; drop-ins over both, in name order;
	 * a name in /etc hides the same name in /usr/lib. */
	put(root, "/usr/lib/systemd/sleep.conf", "[Sleep]\nHibernateDelaySec=1h\n");
	put(root, "/etc/systemd/sleep.conf",
	    "[Sleep]\nHibernateDelaySec=2h\nHibernateMode=reboot\n");
	assert_int_equal(hib_sleep_conf_load(root, &c, &err), 0);
	assert_int_equal(c.hibernate_delay_usec, 7200 * SEC);
	assert_int_equal(c.powerdown, HIB_POWERDOWN_REBOOT);
	put(root, "/usr/lib/systemd/sleep.conf.d/10-a.conf", "[Sleep]\nHibernateDelaySec=10s\n");
	put(root, "/usr/lib/systemd/sleep.conf.d/20-b.conf", "[Sleep]\nHibernateDelaySec=bad\n");
	put(root, "/etc/systemd/sleep.conf.d/20-b.conf", "[Sleep]\nHibernateMode=shutdown\n");
	put(root, "/run/systemd/sleep.conf.d/05-z.conf", "[Sleep]\nHibernateDelaySec=5s\n");
	put(root, "/etc/systemd/sleep.conf.d/ignored.txt", "[Sleep]\nHibernateDelaySec=bad\n");
	assert_int_equal(hib_sleep_conf_load(root, &c, &err), 0);
	assert_true(c.delay_set);
	assert_int_equal(c.hibernate_delay_usec, 10 * SEC);
	assert_true(c.mode_set);
	assert_int_equal(c.powerdown, HIB_POWERDOWN_SHUTDOWN);
	/* A bad file is named, with its line. */
	put(root, "/etc/systemd/sleep.conf.d/30-c.conf", "[Sleep]\nHibernateDelaySec=never\n");
	assert_int_equal(hib_sleep_conf_load(root, &c, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "sleep.conf.d/30-c.conf:2: HibernateDelaySec=never"));
	assert_int_equal(remove_tree(root), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(timespans),       cmocka_unit_test(modes),
		cmocka_unit_test(versions),        cmocka_unit_test(parse_text),
		cmocka_unit_test(load_precedence), cmocka_unit_test(sth_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
