// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The decisions of systemd's sleep operations (lib/frontend/sleep.c): every
 * path of hibernate, hybrid-sleep and suspend-then-hibernate, step by step,
 * as the program will carry them out; the powerdown; the hooks of a suspend;
 * user.slice; and busctl's reply.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "frontend/sleep.h"
#include "frontend/systemd.h"

/* Runs @op through hib_sleep_decide, feeding @results in turn; the actions
 * taken into @ret (up to @n), ending with HIB_SLEEP_DONE. Returns the count. */
static size_t walk(enum hib_sleep_op op, const enum hib_sleep_result *results, size_t nres,
		   struct hib_sleep_next *ret, size_t n)
{
	struct hib_sleep_conf sc;
	struct hib_sleep_state st = { .op = op, .last = HIB_SLEEP_START };
	size_t i = 0, k = 0;

	hib_sleep_conf_init(&sc);
	sc.hibernate_delay_usec = 90ULL * 1000000;
	sc.delay_set = true;
	while (i < n) {
		hib_sleep_decide(&st, &sc, &ret[i]);
		if (ret[i++].action == HIB_SLEEP_DONE)
			break;
		assert_true(k < nres);
		st.last = ret[i - 1].action;
		st.result = results[k++];
	}
	assert_int_equal(k, nres);
	return i;
}

static void hibernate_once(void **state)
{
	enum hib_sleep_result res[] = { HIB_SLEEP_FAILED };
	struct hib_sleep_next n[8];

	(void)state;
	assert_int_equal(walk(HIB_SLEEP_OP_HIBERNATE, res, 1, n, 8), 2);
	assert_int_equal(n[0].action, HIB_SLEEP_HIBERNATE);
	assert_string_equal(n[0].step, "hibernate");
	assert_int_equal(n[1].action, HIB_SLEEP_DONE);
	assert_true(n[1].failed); /* no fallback: the unit fails */
}

static void hybrid_falls_back_to_ram(void **state)
{
	enum hib_sleep_result res[] = { HIB_SLEEP_FAILED, HIB_SLEEP_OK };
	struct hib_sleep_next n[8];

	(void)state;
	assert_int_equal(walk(HIB_SLEEP_OP_HYBRID, res, 2, n, 8), 3);
	assert_string_equal(n[0].step, "hybrid-sleep");
	assert_int_equal(n[1].action, HIB_SLEEP_SUSPEND_FALLBACK);
	assert_string_equal(n[1].step, "suspend-after-failed-hybrid-sleep");
	assert_int_equal(n[1].alarm_usec, 0);
	assert_true(n[1].msg_error);
	assert_non_null(strstr(n[1].msg, "hybrid sleep failed"));
	assert_true(n[2].failed);
}

static void hybrid_cancelled_is_not_a_failure(void **state)
{
	enum hib_sleep_result res[] = { HIB_SLEEP_OK };
	struct hib_sleep_next n[8];

	(void)state;
	assert_int_equal(walk(HIB_SLEEP_OP_HYBRID, res, 1, n, 8), 2);
	assert_false(n[1].failed);
}

static void sth_alarm_then_hibernate(void **state)
{
	enum hib_sleep_result res[] = { HIB_SLEEP_ALARM, HIB_SLEEP_OK };
	struct hib_sleep_next n[8];

	(void)state;
	assert_int_equal(walk(HIB_SLEEP_OP_SUSPEND_THEN_HIBERNATE, res, 2, n, 8), 3);
	assert_int_equal(n[0].action, HIB_SLEEP_SUSPEND);
	assert_string_equal(n[0].step, "suspend");
	assert_int_equal(n[0].alarm_usec, 90ULL * 1000000);
	assert_non_null(strstr(n[0].msg, "hibernating after 90 s in RAM"));
	assert_null(strstr(n[0].msg, "unset"));
	assert_int_equal(n[1].action, HIB_SLEEP_HIBERNATE);
	assert_string_equal(n[1].step, "hibernate");
	assert_int_equal(n[2].action, HIB_SLEEP_DONE);
	assert_false(n[2].failed);
}

static void sth_woken_early_stays_up(void **state)
{
	enum hib_sleep_result res[] = { HIB_SLEEP_WOKEN };
	struct hib_sleep_next n[8];

	(void)state;
	assert_int_equal(walk(HIB_SLEEP_OP_SUSPEND_THEN_HIBERNATE, res, 1, n, 8), 2);
	assert_int_equal(n[1].action, HIB_SLEEP_DONE);
	assert_false(n[1].failed);
	assert_non_null(strstr(n[1].msg, "staying up"));
}

static void sth_failed_suspend_fails(void **state)
{
	enum hib_sleep_result res[] = { HIB_SLEEP_FAILED };
	struct hib_sleep_next n[8];

	(void)state;
	assert_int_equal(walk(HIB_SLEEP_OP_SUSPEND_THEN_HIBERNATE, res, 1, n, 8), 2);
	assert_true(n[1].failed);
}

static void sth_failed_hibernation_suspends_again(void **state)
{
	enum hib_sleep_result res[] = { HIB_SLEEP_ALARM, HIB_SLEEP_FAILED, HIB_SLEEP_OK };
	struct hib_sleep_next n[8];

	(void)state;
	assert_int_equal(walk(HIB_SLEEP_OP_SUSPEND_THEN_HIBERNATE, res, 3, n, 8), 4);
	assert_int_equal(n[2].action, HIB_SLEEP_SUSPEND_FALLBACK);
	assert_string_equal(n[2].step, "suspend-after-failed-hibernate");
	assert_true(n[3].failed);
}

static void sth_default_delay_said(void **state)
{
	struct hib_sleep_conf sc;
	struct hib_sleep_state st = { .op = HIB_SLEEP_OP_SUSPEND_THEN_HIBERNATE };
	struct hib_sleep_next n;

	(void)state;
	hib_sleep_conf_init(&sc);
	hib_sleep_decide(&st, &sc, &n);
	assert_int_equal(n.alarm_usec, HIB_SLEEP_DEFAULT_DELAY_USEC);
	assert_non_null(strstr(n.msg, "7200 s"));
	assert_non_null(strstr(n.msg, "unset"));
}

static void powerdown_choice(void **state)
{
	struct hib_sleep_conf sc;
	enum hib_powerdown p = HIB_POWERDOWN_SHUTDOWN;

	(void)state;
	hib_sleep_conf_init(&sc);
	assert_true(hib_sleep_powerdown(HIB_SLEEP_OP_HYBRID, &sc, true, &p));
	assert_int_equal(p, HIB_POWERDOWN_SUSPEND);
	p = HIB_POWERDOWN_SHUTDOWN;
	assert_false(hib_sleep_powerdown(HIB_SLEEP_OP_HIBERNATE, &sc, false, &p));
	sc.mode_set = true;
	sc.powerdown = HIB_POWERDOWN_PLATFORM;
	assert_false(hib_sleep_powerdown(HIB_SLEEP_OP_HIBERNATE, &sc, true, &p));
	assert_int_equal(p, HIB_POWERDOWN_SHUTDOWN); /* ours wins */
	assert_true(hib_sleep_powerdown(HIB_SLEEP_OP_SUSPEND_THEN_HIBERNATE, &sc, false, &p));
	assert_int_equal(p, HIB_POWERDOWN_PLATFORM);
}

static void suspend_hooks_are_systemds_alone(void **state)
{
	struct hib_inline_hook inl[1] = { { 10, "true", NULL } };
	struct hib_hook_config hc = { .pmutils = true, .inl = inl, .n_inline = 1 };

	(void)state;
	hib_sleep_hooks_restrict(&hc);
	assert_non_null(hc.dirs);
	assert_null(hc.dirs[0]);
	assert_false(hc.pmutils);
	assert_int_equal(hc.n_inline, 0);
	assert_true(hc.force);
}

static void user_slice_rules(void **state)
{
	struct hib_user_slice_facts f = { .version = "systemd 257 (257.9-1)\n+PAM",
					  .freezer = true };

	(void)state;
	assert_null(hib_user_slice_unfreezable(&f));
	f.env = "no";
	assert_non_null(strstr(hib_user_slice_unfreezable(&f), "SYSTEMD_SLEEP_FREEZE"));
	f.env = "1";
	assert_null(hib_user_slice_unfreezable(&f));
	f.version = "systemd 252 (252.33-1~deb12u1)";
	assert_non_null(strstr(hib_user_slice_unfreezable(&f), "before 256"));
	f.version = NULL;
	assert_non_null(strstr(hib_user_slice_unfreezable(&f), "unknown"));
	f.version = "systemd 256 (256.1)";
	f.freezer = false;
	assert_non_null(strstr(hib_user_slice_unfreezable(&f), "freezer"));
}

static void op_names_round_trip(void **state)
{
	enum hib_sleep_op op;

	(void)state;
	assert_int_equal(hib_sleep_op_parse("suspend-then-hibernate", &op), 0);
	assert_int_equal(op, HIB_SLEEP_OP_SUSPEND_THEN_HIBERNATE);
	assert_string_equal(hib_sleep_op_name(op), "suspend-then-hibernate");
	assert_int_equal(hib_sleep_op_parse("suspend", &op), -EINVAL);
}

static void busctl_reply(void **state)
{
	char buf[32];

	(void)state;
	assert_int_equal(hib_busctl_parse_string("s \"challenge\"\n", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "challenge");
	assert_int_equal(hib_busctl_parse_string("b true\n", buf, sizeof(buf)), -EBADMSG);
	assert_int_equal(hib_busctl_parse_string("", buf, sizeof(buf)), -EBADMSG);
	assert_int_equal(hib_busctl_parse_string("s \"yes\"", buf, 8), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hibernate_once),
		cmocka_unit_test(hybrid_falls_back_to_ram),
		cmocka_unit_test(hybrid_cancelled_is_not_a_failure),
		cmocka_unit_test(sth_alarm_then_hibernate),
		cmocka_unit_test(sth_woken_early_stays_up),
		cmocka_unit_test(sth_failed_suspend_fails),
		cmocka_unit_test(sth_failed_hibernation_suspends_again),
		cmocka_unit_test(sth_default_delay_said),
		cmocka_unit_test(powerdown_choice),
		cmocka_unit_test(suspend_hooks_are_systemds_alone),
		cmocka_unit_test(user_slice_rules),
		cmocka_unit_test(op_names_round_trip),
		cmocka_unit_test(busctl_reply),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
