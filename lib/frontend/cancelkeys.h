/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The keys that cancel a cycle while its image is written (cancel-keys in
 * hibernate.conf): Esc on the console, and the power (and sleep) button read
 * from the input devices by the hibernating process itself, since nothing
 * else runs then. Pure: the key list, whether a device's key bits make it
 * one to watch, and whether a stream of its events asks to cancel. The
 * program opens, grabs and reads the devices (tools/hibernate/cancel.c).
 */
#ifndef HIB_CANCELKEYS_H
#define HIB_CANCELKEYS_H

#include <stdbool.h>
#include <stddef.h>

#include <linux/input.h>

enum hib_cancel_key {
	HIB_CANCEL_ESC = 1u << 0,   /* Esc on the console (or on a watched keyboard) */
	HIB_CANCEL_POWER = 1u << 1, /* KEY_POWER on an input device */
	HIB_CANCEL_SLEEP = 1u << 2, /* KEY_SLEEP on an input device */
};

#define HIB_CANCEL_KEYS_DEFAULT (HIB_CANCEL_ESC | HIB_CANCEL_POWER)
/* The keys read from input devices (/dev/input/event*). */
#define HIB_CANCEL_INPUT_KEYS (HIB_CANCEL_POWER | HIB_CANCEL_SLEEP)

/* Longs of a key bitmap as EVIOCGBIT(EV_KEY, ...) fills it. */
#define HIB_KEY_BITS_LONGS                                                                         \
	((KEY_MAX + 1 + 8 * sizeof(unsigned long) - 1) / (8 * sizeof(unsigned long)))

/* Blank-separated names of esc, power, sleep, or "none"; each once at most.
 * 0, or -EINVAL (the caller names the key and the names it takes). */
int hib_cancel_keys_parse(const char *s, unsigned *ret_mask);
/* The names of @mask, blank-separated, as the parser takes them ("none" for 0). */
void hib_cancel_keys_format(unsigned mask, char *buf, size_t len);

/* Whether a device whose EV_KEY bits are @bits (@nlongs longs) carries a key
 * of @mask that is read from input devices: the power button, a keyboard with
 * a power key, the sleep button. Esc alone does not make a device watched. */
bool hib_cancel_device_wanted(const unsigned long *bits, size_t nlongs, unsigned mask);

/* Whether Esc on a device watched for the keys above (a keyboard with a
 * power key) cancels too: it has KEY_ESC and @mask has esc. Such a device is
 * grabbed for the write, so its Esc reaches no console: the hint must name
 * Esc from this, not from the console. */
bool hib_cancel_device_esc(const unsigned long *bits, size_t nlongs, unsigned mask);

/* Whether @n events of a watched device ask to cancel: a key of @mask going
 * down (value 1). Releases (0) and autorepeats (2) do not: a key held since
 * before the watch began is no request. */
bool hib_cancel_events(const struct input_event *ev, size_t n, unsigned mask);

#endif
