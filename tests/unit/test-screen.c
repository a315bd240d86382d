// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The screen of a cycle without a terminal (lib/frontend/screen.c): which
 * console is in front, as /sys/class/tty/tty0/active says it under a root
 * prefix, switch-vt's console, and whether the cycle draws on the one in
 * front. The desktop case of issue 27: `systemctl hibernate` from an X
 * session with switch-vt = yes puts tty12 in front; before this, nothing was
 * drawn there and Esc was read from /dev/null, so the person saw an empty
 * console and could not cancel.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "frontend/screen.h"
#include "helpers.h"

static char root[64];

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/hib-screen-XXXXXX");
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return remove_tree(root);
}

static int front(const char *active, unsigned *vt, struct hib_error *err)
{
	put_under(root, "/sys/class/tty/tty0/active", active);
	return hib_screen_front(root, vt, err);
}

static void front_console(void **state)
{
	struct hib_error err;
	unsigned vt = 0;

	(void)state;
	assert_int_equal(front("tty12\n", &vt, &err), 0);
	assert_int_equal(vt, 12);
	assert_int_equal(front("tty7\n", &vt, &err), 0);
	assert_int_equal(vt, 7);
	assert_int_equal(front("tty63", &vt, &err), 0);
	assert_int_equal(vt, 63);
	/* Not a virtual console: a serial line, nonsense, out of range. */
	assert_int_equal(front("ttyS0\n", &vt, &err), -ENOTTY);
	assert_non_null(strstr(err.msg, "'ttyS0' is no virtual console"));
	assert_int_equal(front("tty0\n", &vt, &err), -ENOTTY);
	assert_int_equal(front("tty64\n", &vt, &err), -ENOTTY);
	assert_int_equal(front("tty1x\n", &vt, &err), -ENOTTY);
	assert_int_equal(front("\n", &vt, &err), -ENOTTY);
	/* No file: a system without virtual consoles. */
	assert_int_equal(hib_screen_front("/nonexistent-root", &vt, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "/nonexistent-root/sys/class/tty/tty0/active"));
}

static void switch_vt_values(void **state)
{
	unsigned vt = 99;

	(void)state;
	assert_int_equal(hib_screen_switch_vt("no", &vt), 0);
	assert_int_equal(vt, 0);
	/* auto, the default (unset): the hook's console when it switches. */
	assert_int_equal(hib_screen_switch_vt("auto", &vt), 0);
	assert_int_equal(vt, 12);
	vt = 99;
	assert_int_equal(hib_screen_switch_vt("", &vt), 0);
	assert_int_equal(vt, 12);
	vt = 99;
	assert_int_equal(hib_screen_switch_vt(NULL, &vt), 0);
	assert_int_equal(vt, 12);
	assert_int_equal(hib_screen_switch_vt("yes", &vt), 0);
	assert_int_equal(vt, 12);
	assert_int_equal(hib_screen_switch_vt("8", &vt), 0);
	assert_int_equal(vt, 8);
	assert_int_equal(hib_screen_switch_vt("0", &vt), -EINVAL);
	assert_int_equal(hib_screen_switch_vt("-3", &vt), -EINVAL);
	assert_int_equal(hib_screen_switch_vt("tty8", &vt), -EINVAL);
	assert_int_equal(hib_screen_switch_vt("64", &vt), -EINVAL);
}

static void switch_resolve(void **state)
{
	(void)state;
	/* auto, the default: 12 only away from a display server's console. */
	assert_string_equal(hib_screen_switch_resolve("auto", true), "12");
	assert_string_equal(hib_screen_switch_resolve("auto", false), "no");
	assert_string_equal(hib_screen_switch_resolve("", true), "12");
	assert_string_equal(hib_screen_switch_resolve(NULL, false), "no");
	/* The person's choice stands. */
	assert_string_equal(hib_screen_switch_resolve("no", true), "no");
	assert_string_equal(hib_screen_switch_resolve("yes", false), "yes");
	assert_string_equal(hib_screen_switch_resolve("8", true), "8");
}

static void choose(void **state)
{
	struct hib_screen_facts f;

	(void)state;
	/* systemctl hibernate from X with switch-vt = yes: tty12 in front, ours. */
	f = (struct hib_screen_facts){ .vt = 12, .switch_vt = 12 };
	assert_int_equal(hib_screen_choose(&f), HIB_SCREEN_DRAW_CLEAR);
	/* The same without switch-vt: X's console in front, never drawn over. */
	f = (struct hib_screen_facts){ .vt = 7, .graphics = true };
	assert_int_equal(hib_screen_choose(&f), HIB_SCREEN_NONE);
	/* switch-vt = yes but the switch did not happen (X kept its console). */
	f = (struct hib_screen_facts){ .vt = 7, .graphics = true, .switch_vt = 12 };
	assert_int_equal(hib_screen_choose(&f), HIB_SCREEN_NONE);
	/* A person's text console in front (systemctl hibernate typed on tty2):
	 * drawn on, not cleared. */
	f = (struct hib_screen_facts){ .vt = 2 };
	assert_int_equal(hib_screen_choose(&f), HIB_SCREEN_DRAW);
	f = (struct hib_screen_facts){ .vt = 2, .switch_vt = 12 };
	assert_int_equal(hib_screen_choose(&f), HIB_SCREEN_DRAW);
	/* hibernate run on that console itself: its stderr has the bar already. */
	f = (struct hib_screen_facts){ .vt = 2, .is_terminal = true };
	assert_int_equal(hib_screen_choose(&f), HIB_SCREEN_NONE);
	f = (struct hib_screen_facts){ .vt = 12, .is_terminal = true, .switch_vt = 12 };
	assert_int_equal(hib_screen_choose(&f), HIB_SCREEN_NONE);
	/* No virtual console in front. */
	f = (struct hib_screen_facts){ .vt = 0, .switch_vt = 12 };
	assert_int_equal(hib_screen_choose(&f), HIB_SCREEN_NONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(front_console),
		cmocka_unit_test(switch_vt_values),
		cmocka_unit_test(switch_resolve),
		cmocka_unit_test(choose),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
