// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The cancel keys (lib/frontend/cancelkeys.c): the names cancel-keys takes,
 * which input devices are watched by their EV_KEY bits, and which event
 * streams cancel. The streams are as the drivers send them: the ACPI power
 * button (drivers/acpi/button.c: down, SYN, up, SYN in one go), an AT
 * keyboard (a MSC_SCAN before each key), a key held since before the watch
 * (autorepeats, then its release).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "frontend/cancelkeys.h"
#include "frontend/config.h"

#define EV(t, c, v)                                                                                \
	{                                                                                          \
		.time = { .tv_sec = 100, .tv_usec = 0 }, .type = (t), .code = (c), .value = (v)    \
	}
#define SYN EV(EV_SYN, SYN_REPORT, 0)

/* QEMU's system_powerdown through the ACPI button driver ("Power Button"). */
static const struct input_event acpi_power_press[] = {
	EV(EV_KEY, KEY_POWER, 1),
	SYN,
	EV(EV_KEY, KEY_POWER, 0),
	SYN,
};
/* Esc on an AT keyboard (scancode 0x01). */
static const struct input_event atkbd_esc[] = {
	EV(EV_MSC, MSC_SCAN, 0x01), EV(EV_KEY, KEY_ESC, 1), SYN,
	EV(EV_MSC, MSC_SCAN, 0x81), EV(EV_KEY, KEY_ESC, 0), SYN,
};
/* The power key held down since before the watch: repeats and the release. */
static const struct input_event held_power[] = {
	EV(EV_KEY, KEY_POWER, 2), SYN, EV(EV_KEY, KEY_POWER, 2), SYN, EV(EV_KEY, KEY_POWER, 0), SYN,
};
/* Typing on a keyboard: 'a', Enter, and the LED it lit. */
static const struct input_event typing[] = {
	EV(EV_MSC, MSC_SCAN, 0x1e), EV(EV_KEY, KEY_A, 1),     SYN, EV(EV_KEY, KEY_A, 0),    SYN,
	EV(EV_KEY, KEY_ENTER, 1),   EV(EV_KEY, KEY_ENTER, 0), SYN, EV(EV_LED, LED_NUML, 1),
};
/* The sleep button (ACPI "Sleep Button"). */
static const struct input_event acpi_sleep_press[] = {
	EV(EV_KEY, KEY_SLEEP, 1),
	SYN,
	EV(EV_KEY, KEY_SLEEP, 0),
	SYN,
};
/* A lid switch: EV_SW, never a key. */
static const struct input_event lid_close[] = { EV(EV_SW, SW_LID, 1), SYN };

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define BOTH (HIB_CANCEL_ESC | HIB_CANCEL_POWER)

static void streams(void **state)
{
	(void)state;
	assert_true(hib_cancel_events(acpi_power_press, N(acpi_power_press), BOTH));
	assert_true(hib_cancel_events(acpi_power_press, 1, HIB_CANCEL_POWER));
	/* The release half alone is what is left of a press from before the watch. */
	assert_false(hib_cancel_events(acpi_power_press + 2, 2, BOTH));
	assert_false(hib_cancel_events(acpi_power_press, N(acpi_power_press), HIB_CANCEL_ESC));
	assert_false(hib_cancel_events(held_power, N(held_power), BOTH));
	/* Esc on a keyboard watched for its power key counts when esc is a cancel key. */
	assert_true(hib_cancel_events(atkbd_esc, N(atkbd_esc), BOTH));
	assert_false(hib_cancel_events(atkbd_esc, N(atkbd_esc), HIB_CANCEL_POWER));
	assert_false(hib_cancel_events(typing, N(typing), BOTH | HIB_CANCEL_SLEEP));
	assert_false(hib_cancel_events(acpi_sleep_press, N(acpi_sleep_press), BOTH));
	assert_true(hib_cancel_events(acpi_sleep_press, N(acpi_sleep_press), HIB_CANCEL_SLEEP));
	assert_false(hib_cancel_events(lid_close, N(lid_close), BOTH | HIB_CANCEL_SLEEP));
	assert_false(hib_cancel_events(acpi_power_press, 0, BOTH));
	assert_false(hib_cancel_events(acpi_power_press, N(acpi_power_press), 0));
}

static void set_bit_in(unsigned long *bits, unsigned b)
{
	bits[b / (8 * sizeof(long))] |= 1UL << (b % (8 * sizeof(long)));
}

static void devices(void **state)
{
	unsigned long power[HIB_KEY_BITS_LONGS] = { 0 }, sleepb[HIB_KEY_BITS_LONGS] = { 0 };
	unsigned long kbd[HIB_KEY_BITS_LONGS] = { 0 }, kbd_power[HIB_KEY_BITS_LONGS] = { 0 };
	unsigned long mouse[HIB_KEY_BITS_LONGS] = { 0 }, none[HIB_KEY_BITS_LONGS] = { 0 };
	size_t n = HIB_KEY_BITS_LONGS;

	(void)state;
	set_bit_in(power, KEY_POWER);
	set_bit_in(sleepb, KEY_SLEEP);
	for (unsigned k = KEY_ESC; k <= KEY_KPDOT; k++)
		set_bit_in(kbd, k);
	memcpy(kbd_power, kbd, sizeof(kbd));
	set_bit_in(kbd_power, KEY_POWER);
	set_bit_in(mouse, BTN_LEFT);
	set_bit_in(mouse, BTN_RIGHT);

	assert_true(hib_cancel_device_wanted(power, n, BOTH));
	assert_true(hib_cancel_device_wanted(kbd_power, n, BOTH));
	/* Esc alone is read from the console: a keyboard is not watched for it. */
	assert_false(hib_cancel_device_wanted(kbd, n, BOTH | HIB_CANCEL_SLEEP));
	assert_false(hib_cancel_device_wanted(power, n, HIB_CANCEL_ESC));
	assert_false(hib_cancel_device_wanted(sleepb, n, BOTH));
	assert_true(hib_cancel_device_wanted(sleepb, n, HIB_CANCEL_SLEEP));
	assert_false(hib_cancel_device_wanted(mouse, n, BOTH | HIB_CANCEL_SLEEP));
	assert_false(hib_cancel_device_wanted(none, n, BOTH | HIB_CANCEL_SLEEP));
	/* A short bitmap (an old kernel's EVIOCGBIT) ends before KEY_POWER: not wanted. */
	assert_false(hib_cancel_device_wanted(power, KEY_POWER / (8 * sizeof(long)), BOTH));
	/* A watched keyboard's Esc cancels too (QEMU's PS/2 keyboard has a power
	 * key: under systemctl hibernate the cycle said only "the power button
	 * cancels" while Esc on it cancelled); the power button has no Esc. */
	assert_true(hib_cancel_device_esc(kbd_power, n, BOTH));
	assert_false(hib_cancel_device_esc(kbd_power, n, HIB_CANCEL_POWER));
	assert_false(hib_cancel_device_esc(power, n, BOTH));
}

static void names(void **state)
{
	unsigned m = 99;
	char buf[32];

	(void)state;
	assert_int_equal(hib_cancel_keys_parse("esc power", &m), 0);
	assert_int_equal(m, HIB_CANCEL_KEYS_DEFAULT);
	assert_int_equal(hib_cancel_keys_parse(" power\tsleep ", &m), 0);
	assert_int_equal(m, HIB_CANCEL_POWER | HIB_CANCEL_SLEEP);
	assert_int_equal(hib_cancel_keys_parse("none", &m), 0);
	assert_int_equal(m, 0);
	m = 7;
	assert_int_equal(hib_cancel_keys_parse("", &m), -EINVAL);
	assert_int_equal(hib_cancel_keys_parse("  ", &m), -EINVAL);
	assert_int_equal(hib_cancel_keys_parse("esc,power", &m), -EINVAL);
	assert_int_equal(hib_cancel_keys_parse("power power", &m), -EINVAL);
	assert_int_equal(hib_cancel_keys_parse("none esc", &m), -EINVAL);
	assert_int_equal(hib_cancel_keys_parse("Esc", &m), -EINVAL);
	assert_int_equal(hib_cancel_keys_parse("escape", &m), -EINVAL);
	assert_int_equal(m, 7); /* untouched on error */
	hib_cancel_keys_format(HIB_CANCEL_KEYS_DEFAULT, buf, sizeof(buf));
	assert_string_equal(buf, "esc power");
	hib_cancel_keys_format(HIB_CANCEL_SLEEP | HIB_CANCEL_ESC, buf, sizeof(buf));
	assert_string_equal(buf, "esc sleep");
	hib_cancel_keys_format(0, buf, sizeof(buf));
	assert_string_equal(buf, "none");
	hib_cancel_keys_format(HIB_CANCEL_KEYS_DEFAULT, buf, 5); /* cut, terminated */
	assert_int_equal(strlen(buf), 3);
}

/* The config key: default both, a bad value named, cancel = no left alone. */
static void config_key(void **state)
{
	struct hib_config c;
	char err[160], buf[32];

	(void)state;
	hib_config_init(&c);
	assert_int_equal(c.cancel_keys, HIB_CANCEL_KEYS_DEFAULT);
	assert_true(c.cancel);
	assert_int_equal(hib_config_get(&c, "cancel-keys", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "esc power");
	assert_int_equal(hib_config_set(&c, "cancel-keys", "power", err, sizeof(err)), 0);
	assert_int_equal(c.cancel_keys, HIB_CANCEL_POWER);
	assert_true(c.cancel);
	assert_int_equal(hib_config_set(&c, "cancel-keys", "esc power reset", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "cancel-keys: 'esc power reset' is not a list of esc, power"));
	assert_int_equal(c.cancel_keys, HIB_CANCEL_POWER);
	assert_int_equal(hib_config_set(&c, "cancel", "no", err, sizeof(err)), 0);
	assert_int_equal(c.cancel_keys, HIB_CANCEL_POWER); /* cancel = no wins at run time */
	hib_config_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(streams),
		cmocka_unit_test(devices),
		cmocka_unit_test(names),
		cmocka_unit_test(config_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
