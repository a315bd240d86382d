// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The batteries as suspend-then-hibernate reads them (lib/frontend/battery.c),
 * over power_supply layouts recorded as directory trees: energy_* and charge_*
 * batteries, two batteries, none, a UPS, a mouse's battery, AC on and off,
 * the firmware alarm present or not, bogus values; and the discharge rate:
 * measured, smoothed, kept in a bounded store written by rename.
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
#include "frontend/battery.h"

#define HOUR 3600000000ULL

static char root[256];

/* Attribute @attr of supply @name, holding @value and a newline as sysfs has it. */
static void attr(const char *name, const char *attr, const char *value)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/%s", root, name, attr);
	f = fopen(path, "w");
	if (!f)
		die(path);
	fprintf(f, "%s\n", value);
	fclose(f);
}

/* A laptop battery with energy_* (µWh), as ACPI batteries mostly are. */
static void energy_battery(const char *name, const char *now, const char *full, const char *status,
			   const char *alarm)
{
	attr(name, "type", "Battery");
	attr(name, "present", "1");
	attr(name, "scope", "System");
	attr(name, "status", status);
	attr(name, "energy_now", now);
	attr(name, "energy_full", full);
	attr(name, "capacity", "42"); /* rounded: the energy wins */
	attr(name, "manufacturer", "SANYO");
	attr(name, "model_name", name);
	attr(name, "serial_number", "1234");
	if (alarm)
		attr(name, "alarm", alarm);
}

static void mains(const char *online)
{
	attr("AC", "type", "Mains");
	attr("AC", "online", online);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/hib-test-battery-%d", (int)getpid());
	remove_tree(root);
	if (mkdir(root, 0755) < 0)
		die(root);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	remove_tree(root);
	return 0;
}

static void read_ok(struct hib_power *p)
{
	struct hib_error err;

	assert_int_equal(hib_power_read(root, p, &err), 0);
}

static void one_energy_battery_on_battery(void **state)
{
	struct hib_power p;

	(void)state;
	energy_battery("BAT0", "24000000", "48000000", "Discharging", "2400000");
	mains("0");
	read_ok(&p);
	assert_int_equal(p.n, 1);
	assert_string_equal(p.bat[0].name, "BAT0");
	assert_int_equal(p.bat[0].permille, 500);
	assert_true(p.bat[0].discharging);
	assert_false(p.bat[0].charging);
	assert_int_equal(p.bat[0].alarm_permille, 50);
	assert_false(p.on_ac);
	assert_true(hib_power_alarm_usable(&p));
}

static void one_charge_battery_on_ac(void **state)
{
	struct hib_power p;

	(void)state;
	attr("BAT1", "type", "Battery");
	attr("BAT1", "present", "1");
	attr("BAT1", "status", "Charging");
	attr("BAT1", "charge_now", "1500000");
	attr("BAT1", "charge_full", "4000000");
	attr("BAT1", "alarm", "0"); /* no _BTP */
	mains("1");
	read_ok(&p);
	assert_int_equal(p.n, 1);
	assert_int_equal(p.bat[0].permille, 375);
	assert_true(p.bat[0].charging);
	assert_false(p.bat[0].discharging);
	assert_int_equal(p.bat[0].alarm_permille, 0);
	assert_true(p.on_ac);
	assert_false(hib_power_alarm_usable(&p));
}

/* Both count, in name order; the alarm is usable only when both have one. */
static void two_batteries(void **state)
{
	struct hib_power p;

	(void)state;
	energy_battery("BAT1", "10000000", "20000000", "Discharging", NULL);
	energy_battery("BAT0", "5000000", "20000000", "Unknown", "1000000");
	read_ok(&p);
	assert_int_equal(p.n, 2);
	assert_string_equal(p.bat[0].name, "BAT0");
	assert_int_equal(p.bat[0].permille, 250);
	assert_string_equal(p.bat[1].name, "BAT1");
	assert_int_equal(p.bat[1].permille, 500);
	assert_true(p.bat[0].id != p.bat[1].id);
	assert_false(p.on_ac); /* no supply online, a battery discharging */
	assert_false(hib_power_alarm_usable(&p));
}

static void no_battery(void **state)
{
	struct hib_power p;
	struct hib_error err;
	char missing[300];

	(void)state;
	read_ok(&p);
	assert_int_equal(p.n, 0);
	assert_true(p.on_ac);
	snprintf(missing, sizeof(missing), "%s/nothing", root);
	assert_int_equal(hib_power_read(missing, &p, &err), 0);
	assert_int_equal(p.n, 0);
	assert_true(p.on_ac);
	assert_false(hib_power_alarm_usable(&p));
}

/* A UPS is no battery of the laptop's (its type is UPS); online, it is AC as
 * systemd's on_ac_power() counts it. A mouse's battery (scope Device)
 * discharging makes nobody run on battery. */
static void ups_and_mouse_ignored(void **state)
{
	struct hib_power p;

	(void)state;
	attr("ups", "type", "UPS");
	attr("ups", "online", "0");
	attr("ups", "capacity", "90");
	attr("ups", "status", "Discharging");
	attr("hidpp_battery_0", "type", "Battery");
	attr("hidpp_battery_0", "scope", "Device");
	attr("hidpp_battery_0", "present", "1");
	attr("hidpp_battery_0", "capacity", "10");
	attr("hidpp_battery_0", "status", "Discharging");
	read_ok(&p);
	assert_int_equal(p.n, 0);
	assert_int_equal(p.ignored, 1);
	assert_true(p.on_ac);
	/* The laptop's own battery beside them counts alone. */
	energy_battery("BAT0", "30000000", "40000000", "Discharging", NULL);
	read_ok(&p);
	assert_int_equal(p.n, 1);
	assert_string_equal(p.bat[0].name, "BAT0");
	assert_false(p.on_ac);
	attr("ups", "online", "1");
	read_ok(&p);
	assert_true(p.on_ac);
}

static void bogus_values(void **state)
{
	struct hib_power p;

	(void)state;
	/* No energy, no charge, a capacity out of range: not read, ignored. */
	attr("BAT0", "type", "Battery");
	attr("BAT0", "capacity", "150");
	/* energy_full 0: capacity is what is left. */
	attr("BAT1", "type", "Battery");
	attr("BAT1", "energy_now", "1000");
	attr("BAT1", "energy_full", "0");
	attr("BAT1", "capacity", "33");
	attr("BAT1", "alarm", "500");
	/* More than full, as gauges say: full. A word for a number: unreadable. */
	attr("BAT2", "type", "Battery");
	attr("BAT2", "charge_now", "5100000");
	attr("BAT2", "charge_full", "5000000");
	attr("BAT3", "type", "Battery");
	attr("BAT3", "capacity", "lots");
	/* Not present: ignored as systemd ignores it. */
	energy_battery("BAT4", "1", "2", "Discharging", NULL);
	attr("BAT4", "present", "0");
	read_ok(&p);
	assert_int_equal(p.n, 2);
	assert_string_equal(p.bat[0].name, "BAT1");
	assert_int_equal(p.bat[0].permille, 330);
	assert_int_equal(p.bat[0].alarm_permille, 0); /* no unit to read it in */
	assert_string_equal(p.bat[1].name, "BAT2");
	assert_int_equal(p.bat[1].permille, 1000);
	assert_true(p.bat[1].discharging); /* no status: systemd assumes so */
	assert_int_equal(p.ignored, 3);
}

/* The id is what the battery says it is, not its slot. */
static void battery_identity(void **state)
{
	struct hib_power p;
	uint64_t id;

	(void)state;
	energy_battery("BAT0", "1", "2", "Discharging", NULL);
	attr("BAT0", "model_name", "5B10W13930");
	read_ok(&p);
	id = p.bat[0].id;
	/* The same battery seen in another slot. */
	remove_tree(root);
	mkdir(root, 0755);
	energy_battery("BAT1", "1", "2", "Discharging", NULL);
	attr("BAT1", "model_name", "5B10W13930");
	read_ok(&p);
	assert_true(p.bat[0].id == id);
	attr("BAT1", "serial_number", "9999");
	read_ok(&p);
	assert_true(p.bat[0].id != id);
}

static void rate_measure(void **state)
{
	struct hib_battery a = { .permille = 600, .discharging = true };
	struct hib_battery b = { .permille = 570, .discharging = true };

	(void)state;
	assert_int_equal(hib_rate_measure(&a, &b, HOUR, 0), 30); /* 3 %/h */
	assert_int_equal(hib_rate_measure(&a, &b, HOUR / 2, 0), 60);
	assert_int_equal(hib_rate_measure(&a, &b, HOUR, 50), 40);                /* smoothed */
	assert_int_equal(hib_rate_measure(&a, &b, 5ULL * 60 * 1000000, 0), 360); /* 3 %: clear */
	assert_int_equal(hib_rate_measure(&b, &a, HOUR, 0), 0);                  /* it rose */
	b.charging = true;
	assert_int_equal(hib_rate_measure(&a, &b, HOUR, 0), 0);
	b.charging = false;
	b.permille = 0;
	a.permille = 1000;
	assert_int_equal(hib_rate_measure(&a, &b, HOUR / 6, 0), 0); /* 600 %/h: bogus */
	a.permille = 501;
	b.permille = 500;
	assert_int_equal(hib_rate_measure(&a, &b, 10 * HOUR, 0), 1); /* slow, not nothing */
}

/* Short intervals measure when the drop is clear, as SuspendEstimationSec=30s
 * would have it; a small one, or a wild rate, teaches nothing. */
static void rate_measure_short(void **state)
{
	struct hib_battery a = { .permille = 600, .discharging = true };
	struct hib_battery b = { .permille = 590, .discharging = true };
	uint64_t sec = 1000000;

	(void)state;
	assert_int_equal(hib_rate_measure(&a, &b, 30 * sec, 0), 1200); /* 1 % of energy in 30 s */
	assert_int_equal(hib_rate_measure(&a, &b, 60 * sec, 0), 600);
	b.permille = 595;
	assert_int_equal(hib_rate_measure(&a, &b, 30 * sec, 0), 0); /* 0.5 %: the gauge's noise */
	assert_int_equal(hib_rate_measure(&a, &b, 10 * 60 * sec, 0), 30); /* 10 min: any drop */
	/* capacity alone: three whole-percent steps, not two */
	a.coarse = b.coarse = true;
	b.permille = 580;
	assert_int_equal(hib_rate_measure(&a, &b, 60 * sec, 0), 0);
	b.permille = 570;
	assert_int_equal(hib_rate_measure(&a, &b, 60 * sec, 0), 1800);
	assert_int_equal(hib_rate_measure(&a, &b, 30 * sec, 0), 0); /* 360 %/h: bogus */
	assert_int_equal(hib_rate_measure(&a, &b, 0, 0), 0);
}

/* A sequence of 30 s wakes: nothing learned from a small drop, the rate from
 * the first clear one, then smoothed. */
static void rate_learn_wakes(void **state)
{
	static const int charge[] = { 130, 125, 115, 105, 104 };
	static const unsigned want[] = { 0, 0, 1125, 1163, 1163 };
	struct hib_rate_store rs = { 0 };
	struct hib_power before = { .n = 1 }, after = { .n = 1 };

	(void)state;
	before.bat[0] = (struct hib_battery){ .name = "BAT0", .id = 7, .discharging = true };
	after.bat[0] = before.bat[0];
	for (size_t i = 1; i < sizeof(charge) / sizeof(charge[0]); i++) {
		before.bat[0].permille = charge[i - 1];
		after.bat[0].permille = charge[i];
		assert_int_equal(hib_rate_learn(&rs, &before, &after, i == 2 ? 32000000 : 30000000),
				 want[i] != want[i - 1]);
		assert_int_equal(hib_rate_get(&rs, 7), want[i]);
	}
}

static void rate_store(void **state)
{
	struct hib_rate_store rs = { 0 }, back;
	struct hib_error err;
	char path[300], tmp[310];
	FILE *f;

	(void)state;
	for (uint64_t id = 1; id <= HIB_RATE_STORE_MAX + 3; id++)
		hib_rate_put(&rs, id, (unsigned)id * 10);
	assert_int_equal(rs.n, HIB_RATE_STORE_MAX);
	assert_int_equal(hib_rate_get(&rs, 1), 0); /* the oldest fell off */
	assert_int_equal(hib_rate_get(&rs, HIB_RATE_STORE_MAX + 3), (HIB_RATE_STORE_MAX + 3) * 10);
	hib_rate_put(&rs, 10, 77);
	assert_int_equal(rs.n, HIB_RATE_STORE_MAX);
	assert_int_equal(rs.e[0].id, 10);
	assert_int_equal(hib_rate_get(&rs, 10), 77);
	snprintf(path, sizeof(path), "%s/state/battery-rate", root);
	assert_int_equal(hib_rate_save(path, &rs, &err), 0);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	assert_int_equal(access(tmp, F_OK), -1);
	assert_int_equal(hib_rate_load(path, &back, &err), 0);
	assert_int_equal(back.n, rs.n);
	assert_memory_equal(back.e, rs.e, sizeof(rs.e[0]) * rs.n);
	/* Bad lines are skipped, the good ones kept. */
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "# x\nzz 5\n00000000000000ab 30\n00000000000000ac 0\n"
		   "00000000000000ad 9999\n00000000000000ae 12 extra\n00000000000000af 45\n");
	fclose(f);
	assert_int_equal(hib_rate_load(path, &back, &err), 0);
	assert_int_equal(back.n, 2);
	assert_int_equal(hib_rate_get(&back, 0xab), 30);
	assert_int_equal(hib_rate_get(&back, 0xaf), 45);
	snprintf(path, sizeof(path), "%s/none", root);
	assert_int_equal(hib_rate_load(path, &back, &err), 0);
	assert_int_equal(back.n, 0);
}

/* Two readings learn only for the batteries in both. */
static void rate_learn(void **state)
{
	struct hib_power before = { .n = 2 }, after = { .n = 1 };
	struct hib_rate_store rs = { 0 };

	(void)state;
	before.bat[0] = (struct hib_battery){ .name = "BAT0", .id = 7, .permille = 800 };
	before.bat[1] = (struct hib_battery){ .name = "BAT1", .id = 8, .permille = 800 };
	after.bat[0] = (struct hib_battery){ .name = "BAT1", .id = 8, .permille = 750 };
	assert_int_equal(hib_rate_learn(&rs, &before, &after, HOUR), 1);
	assert_int_equal(hib_rate_get(&rs, 8), 50);
	assert_int_equal(hib_rate_get(&rs, 7), 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(one_energy_battery_on_battery),
		T(one_charge_battery_on_ac),
		T(two_batteries),
		T(no_battery),
		T(ups_and_mouse_ignored),
		T(bogus_values),
		T(battery_identity),
		T(rate_measure),
		T(rate_measure_short),
		T(rate_learn_wakes),
		T(rate_store),
		T(rate_learn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
