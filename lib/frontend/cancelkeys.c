// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The cancel keys: their names in hibernate.conf, which input devices carry
 * them, and which events of those devices are a request to cancel.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "frontend/cancelkeys.h"
#include "util/util.h"

static const struct {
	const char *name;
	enum hib_cancel_key key;
	unsigned code; /* the evdev key code; KEY_ESC only counts on a watched device */
} cancel_keys[] = {
	{ "esc", HIB_CANCEL_ESC, KEY_ESC },
	{ "power", HIB_CANCEL_POWER, KEY_POWER },
	{ "sleep", HIB_CANCEL_SLEEP, KEY_SLEEP },
};

static int key_by_name(const char *s, size_t n)
{
	for (size_t i = 0; i < ARRAY_SIZE(cancel_keys); i++)
		if (strlen(cancel_keys[i].name) == n && strncmp(s, cancel_keys[i].name, n) == 0)
			return (int)i;
	return -1;
}

int hib_cancel_keys_parse(const char *s, unsigned *ret_mask)
{
	unsigned mask = 0;
	bool none = false, any = false;

	while (*s) {
		size_t n;
		int i;

		s += strspn(s, " \t");
		n = strcspn(s, " \t");
		if (n == 0)
			break;
		i = key_by_name(s, n);
		if (n == 4 && strncmp(s, "none", 4) == 0)
			none = true;
		else if (i < 0 || (mask & cancel_keys[i].key))
			return -EINVAL;
		else
			mask |= cancel_keys[i].key;
		any = true;
		s += n;
	}
	/* "none" stands alone; an empty value is no list at all. */
	if (!any || (none && mask))
		return -EINVAL;
	*ret_mask = mask;
	return 0;
}

void hib_cancel_keys_format(unsigned mask, char *buf, size_t len)
{
	size_t off = 0;

	if (len == 0)
		return;
	buf[0] = 0;
	for (size_t i = 0; i < ARRAY_SIZE(cancel_keys); i++) {
		if (!(mask & cancel_keys[i].key))
			continue;
		int k = snprintf(buf + off, len - off, "%s%s", off ? " " : "", cancel_keys[i].name);
		if (k < 0 || (size_t)k >= len - off) {
			buf[off] = 0; /* whole names only */
			return;
		}
		off += (size_t)k;
	}
	if (off == 0)
		snprintf(buf, len, "none");
}

static bool bit_set(const unsigned long *bits, size_t nlongs, unsigned bit)
{
	size_t per = 8 * sizeof(unsigned long);

	return bit / per < nlongs && (bits[bit / per] >> (bit % per)) & 1;
}

bool hib_cancel_device_wanted(const unsigned long *bits, size_t nlongs, unsigned mask)
{
	for (size_t i = 0; i < ARRAY_SIZE(cancel_keys); i++)
		if ((mask & cancel_keys[i].key & HIB_CANCEL_INPUT_KEYS) &&
		    bit_set(bits, nlongs, cancel_keys[i].code))
			return true;
	return false;
}

bool hib_cancel_device_esc(const unsigned long *bits, size_t nlongs, unsigned mask)
{
	return (mask & HIB_CANCEL_ESC) && bit_set(bits, nlongs, KEY_ESC);
}

bool hib_cancel_events(const struct input_event *ev, size_t n, unsigned mask)
{
	for (size_t e = 0; e < n; e++) {
		if (ev[e].type != EV_KEY || ev[e].value != 1)
			continue;
		for (size_t i = 0; i < ARRAY_SIZE(cancel_keys); i++)
			if ((mask & cancel_keys[i].key) && ev[e].code == cancel_keys[i].code)
				return true;
	}
	return false;
}
