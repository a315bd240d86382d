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

/* Which service a process runs in, from /proc/PID/cgroup: the one the
 * working set's restore must leave for a scope of its own. */
static void cgroup_service_named(void **state)
{
	char buf[64];

	(void)state;
	assert_true(hib_cgroup_service("0::/system.slice/systemd-suspend-then-hibernate.service\n",
				       buf, sizeof(buf)));
	assert_string_equal(buf, "systemd-suspend-then-hibernate.service");
	assert_true(
		hib_cgroup_service("12:pids:/x\n1:name=systemd:/system.slice/hibernate.service\n"
				   "0::/\n",
				   buf, sizeof(buf)));
	assert_string_equal(buf, "hibernate.service");
	assert_false(hib_cgroup_service("0::/user.slice/user-0.slice/session-2.scope\n", buf,
					sizeof(buf)));
	assert_false(hib_cgroup_service("0::/\n", buf, sizeof(buf)));
	assert_false(hib_cgroup_service("", buf, sizeof(buf)));
	assert_false(hib_cgroup_service("0::/.service\n", buf, sizeof(buf)));
	assert_false(hib_cgroup_service("0::/system.slice/a-very-long-name.service\n", buf, 8));
}

/* ---- suspend-then-hibernate over sequences of wakes ------------------------ */

#define MIN_USEC (60ULL * 1000000)
#define HOUR_USEC (60 * MIN_USEC)

/* A laptop asleep: its battery at @permille losing @true_rate per mille an
 * hour while in RAM (0 on AC), read at every wake as the program reads it. */
struct laptop {
	struct hib_power power;
	struct hib_rate_store rates;
	unsigned true_rate;
};

static void laptop_init(struct laptop *l, int permille, unsigned true_rate, bool on_ac)
{
	*l = (struct laptop){ .true_rate = true_rate };
	l->power.n = 1;
	l->power.on_ac = on_ac;
	l->power.bat[0] = (struct hib_battery){ .name = "BAT0",
						.id = 42,
						.permille = permille,
						.discharging = !on_ac,
						.charging = on_ac };
}

/* Runs suspend-then-hibernate on @l under @sc, every suspend ended by its
 * alarm; the steps into @ret (up to @n, the last HIBERNATE or the nth). */
static size_t sth_walk(const struct hib_sleep_conf *sc, struct laptop *l,
		       struct hib_sleep_next *ret, size_t n)
{
	struct hib_sleep_state st = { .op = HIB_SLEEP_OP_SUSPEND_THEN_HIBERNATE,
				      .last = HIB_SLEEP_START,
				      .sp = { .power = &l->power, .rates = &l->rates } };
	size_t i;

	for (i = 0; i < n; i++) {
		struct hib_power before = l->power;
		uint64_t slept;

		hib_sleep_decide(&st, sc, &ret[i]);
		if (ret[i].action != HIB_SLEEP_SUSPEND)
			return i + 1;
		slept = ret[i].alarm_usec;
		l->power.bat[0].permille -= (int)(l->true_rate * slept / HOUR_USEC);
		hib_rate_learn(&l->rates, &before, &l->power, slept);
		st.sp.asleep_usec = ret[i].restart_delay ? 0 : st.sp.asleep_usec + slept;
		st.last = HIB_SLEEP_SUSPEND;
		st.result = HIB_SLEEP_ALARM;
	}
	return i;
}

/* Draining at 10 %/h from 30 %: a check at 1 h (the assumed 20 %/h allows
 * it), another at 20 % with the rate learned, then at 10 % the next check
 * would come after the low threshold: hibernate now, not at 5 % or after. */
static void sth_drain_hibernates_before_low(void **state)
{
	struct hib_sleep_conf sc;
	struct hib_sleep_next n[8];
	struct laptop l;

	(void)state;
	hib_sleep_conf_init(&sc);
	laptop_init(&l, 300, 100, false);
	assert_int_equal(sth_walk(&sc, &l, n, 8), 3);
	assert_int_equal(n[0].action, HIB_SLEEP_SUSPEND);
	assert_int_equal(n[0].alarm_usec, HOUR_USEC);
	assert_non_null(strstr(n[0].msg, "BAT0 30.0% at 20.0%/h (assumed"));
	assert_non_null(strstr(n[0].msg, "on battery"));
	assert_int_equal(n[1].action, HIB_SLEEP_SUSPEND);
	assert_int_equal(n[1].alarm_usec, HOUR_USEC);
	assert_non_null(strstr(n[1].msg, "BAT0 20.0% at 10.0%/h (learned)"));
	assert_non_null(strstr(n[1].msg, "1 h 30 min to 5%"));
	assert_non_null(strstr(n[1].msg, "next wake in 1 h 00 min"));
	assert_int_equal(n[2].action, HIB_SLEEP_HIBERNATE);
	assert_string_equal(n[2].step, "hibernate");
	assert_non_null(strstr(n[2].msg, "BAT0 10.0%"));
	assert_non_null(strstr(n[2].msg, "hibernating now: the batteries would be low"));
	assert_true(l.power.bat[0].permille > HIB_STH_LOW_PERMILLE);
}

/* Durations in the unit right for their length, never "0 min". */
static void sleep_duration_units(void **state)
{
	static const struct {
		uint64_t usec;
		const char *want;
	} t[] = {
		{ 0, "0 s" },
		{ 30 * 1000000ULL + 999999, "30 s" },
		{ 90 * 1000000ULL, "1 min 30 s" },
		{ 15 * MIN_USEC, "15 min" },
		{ HOUR_USEC, "1 h 00 min" },
		{ HOUR_USEC + 5 * MIN_USEC + 59 * 1000000ULL, "1 h 05 min" },
		{ 26 * HOUR_USEC, "26 h 00 min" },
	};
	char buf[32];

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		hib_sleep_duration(t[i].usec, buf, sizeof(buf));
		assert_string_equal(buf, t[i].want);
	}
}

/* SuspendEstimationSec=30s, 1 % lost a check (120 %/h): the line says 30 s,
 * and the rate learned from that one short suspend decides the hibernation. */
static void sth_short_interval_learns(void **state)
{
	struct hib_sleep_conf sc;
	struct hib_sleep_next n[6];
	struct laptop l;

	(void)state;
	hib_sleep_conf_init(&sc);
	sc.suspend_estimation_usec = 30 * 1000000ULL;
	laptop_init(&l, 130, 1200, false);
	assert_int_equal(sth_walk(&sc, &l, n, 6), 2);
	assert_int_equal(n[0].action, HIB_SLEEP_SUSPEND);
	assert_non_null(strstr(n[0].msg, "at 20.0%/h (assumed"));
	assert_non_null(strstr(n[0].msg, "next wake in 30 s: the next check"));
	assert_int_equal(n[1].action, HIB_SLEEP_HIBERNATE);
	assert_non_null(strstr(n[1].msg, "BAT0 12.0% at 120.0%/h (learned)"));
	assert_non_null(strstr(n[1].msg, "hibernating now: the batteries would be low"));
}

/* On AC with HibernateOnACPower=no: in RAM for as long as it lasts, checking
 * every SuspendEstimationSec=, HibernateDelaySec= counted from the unplug. */
static void sth_on_ac_stays_suspended(void **state)
{
	struct hib_sleep_conf sc;
	struct hib_sleep_next n[6];
	struct laptop l;

	(void)state;
	hib_sleep_conf_init(&sc);
	sc.hibernate_on_ac = false;
	sc.delay_set = true;
	sc.hibernate_delay_usec = 90 * MIN_USEC;
	sc.suspend_estimation_usec = 30 * MIN_USEC;
	laptop_init(&l, 400, 0, true);
	assert_int_equal(sth_walk(&sc, &l, n, 6), 6);
	for (size_t i = 0; i < 6; i++) {
		assert_int_equal(n[i].action, HIB_SLEEP_SUSPEND);
		assert_int_equal(n[i].alarm_usec, 30 * MIN_USEC);
		assert_true(n[i].restart_delay);
		assert_non_null(strstr(n[i].msg, "on AC"));
		assert_non_null(strstr(n[i].msg, "HibernateOnACPower=no"));
	}
	/* Unplugged, the same laptop hibernates as a battery one does. */
	sc.hibernate_on_ac = true;
	laptop_init(&l, 400, 0, true);
	l.rates.n = 1;
	l.rates.e[0] = (struct hib_rate_entry){ .id = 42, .rate = 30 };
	assert_int_equal(sth_walk(&sc, &l, n, 6), 4);
	assert_int_equal(n[2].alarm_usec, 30 * MIN_USEC);
	assert_int_equal(n[3].action, HIB_SLEEP_HIBERNATE);
	assert_non_null(strstr(n[3].msg, "HibernateDelaySec= is over"));
}

/* No battery: the fixed timer, HibernateDelaySec= or systemd's 2 h. */
static void sth_no_battery_timer(void **state)
{
	struct hib_sleep_conf sc;
	struct hib_sleep_next n[4];
	struct laptop l;

	(void)state;
	hib_sleep_conf_init(&sc);
	laptop_init(&l, 0, 0, true);
	l.power.n = 0;
	assert_int_equal(sth_walk(&sc, &l, n, 4), 2);
	assert_int_equal(n[0].alarm_usec, 2 * HOUR_USEC);
	assert_non_null(strstr(n[0].msg, "hibernating after 7200 s in RAM"));
	assert_int_equal(n[1].action, HIB_SLEEP_HIBERNATE);
}

/* No rate learned and little charge: a short first suspend that is safe even
 * at 20 %/h, or at once when not even that is. */
static void sth_no_estimate_is_conservative(void **state)
{
	struct hib_sleep_conf sc;
	struct hib_sleep_next n[4];
	struct laptop l;

	(void)state;
	hib_sleep_conf_init(&sc);
	laptop_init(&l, 200, 30, false);
	sth_walk(&sc, &l, n, 1);
	assert_int_equal(n[0].action, HIB_SLEEP_SUSPEND);
	assert_int_equal(n[0].alarm_usec, 30 * MIN_USEC); /* 0.75 h at 20 %/h, less 15 min */
	assert_non_null(strstr(n[0].msg, "a short suspend to learn the rate"));
	laptop_init(&l, 110, 30, false);
	assert_int_equal(sth_walk(&sc, &l, n, 4), 1);
	assert_int_equal(n[0].action, HIB_SLEEP_HIBERNATE);
	/* A learned slow rate keeps the same laptop in RAM. */
	laptop_init(&l, 110, 30, false);
	hib_rate_put(&l.rates, 42, 30);
	sth_walk(&sc, &l, n, 1);
	assert_int_equal(n[0].action, HIB_SLEEP_SUSPEND);
	assert_int_equal(n[0].alarm_usec, HOUR_USEC);
}

/* A wake the alarm did not make, at the firmware's battery alarm level: the
 * battery woke us, not the user. */
static void sth_battery_alarm_wake_hibernates(void **state)
{
	struct hib_sleep_conf sc;
	struct laptop l;
	struct hib_sleep_state st = { .op = HIB_SLEEP_OP_SUSPEND_THEN_HIBERNATE,
				      .last = HIB_SLEEP_SUSPEND,
				      .result = HIB_SLEEP_WOKEN };
	struct hib_sleep_next n;

	(void)state;
	hib_sleep_conf_init(&sc);
	laptop_init(&l, 72, 30, false);
	l.power.bat[0].alarm_permille = 70;
	st.sp.power = &l.power;
	hib_sleep_decide(&st, &sc, &n);
	assert_int_equal(n.action, HIB_SLEEP_HIBERNATE);
	assert_non_null(strstr(n.msg, "battery's low alarm"));
	l.power.bat[0].permille = 500; /* the user opened the lid */
	hib_sleep_decide(&st, &sc, &n);
	assert_int_equal(n.action, HIB_SLEEP_DONE);
	assert_non_null(strstr(n.msg, "staying up"));
	/* The alarm raises the low threshold it plans with. */
	st.last = HIB_SLEEP_START;
	l.power.bat[0].permille = 300;
	hib_sleep_decide(&st, &sc, &n);
	assert_non_null(strstr(n.msg, "to 7%"));
}

/* The end of HibernateDelaySec= a few seconds off (the RTC counts seconds,
 * hooks take time) is its end: no alarm of a second or two. */
static void sth_delay_end_within_seconds(void **state)
{
	struct hib_sleep_conf sc;
	struct laptop l;
	struct hib_sleep_power sp;
	struct hib_sth_plan pl;

	(void)state;
	hib_sleep_conf_init(&sc);
	sc.delay_set = true;
	sc.hibernate_delay_usec = 90 * MIN_USEC;
	laptop_init(&l, 800, 30, false);
	sp = (struct hib_sleep_power){ .power = &l.power, .asleep_usec = 90 * MIN_USEC - 3000000 };
	hib_sth_plan(&sc, &sp, &pl);
	assert_true(pl.hibernate);
	sp.asleep_usec = 80 * MIN_USEC;
	hib_sth_plan(&sc, &sp, &pl);
	assert_false(pl.hibernate);
	assert_int_equal(pl.next_usec, 10 * MIN_USEC);
	assert_non_null(strstr(pl.msg, "HibernateDelaySec= ends then"));
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
		cmocka_unit_test(cgroup_service_named),
		cmocka_unit_test(sth_drain_hibernates_before_low),
		cmocka_unit_test(sth_on_ac_stays_suspended),
		cmocka_unit_test(sth_no_battery_timer),
		cmocka_unit_test(sth_no_estimate_is_conservative),
		cmocka_unit_test(sth_battery_alarm_wake_hibernates),
		cmocka_unit_test(sth_delay_end_within_seconds),
		cmocka_unit_test(sleep_duration_units),
		cmocka_unit_test(sth_short_interval_learns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
