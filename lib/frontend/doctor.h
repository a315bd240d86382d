/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef HIB_DOCTOR_H
#define HIB_DOCTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "hibernate.h"

#define HIB_DOCTOR_CONF "/etc/hibernate.conf"

enum hib_doctor_verdict { HIB_DOCTOR_PASS = 0, HIB_DOCTOR_WARN = 1, HIB_DOCTOR_FAIL = 2 };

struct hib_doctor_input {
	const char *root;      /* prefix for /proc, /sys, /dev, /etc, /boot; NULL for "/" */
	const char *cmdline;   /* kernel command line; NULL reads <root>/proc/cmdline */
	const char *device;    /* the configured target, or NULL to find it as hibernate does */
	uint64_t offset;
	bool offset_set;
	int64_t image_size;    /* configured image-size in bytes, -1 default */
};

/* One finding: @check names it (snapshot-device, lockdown, target, space, …),
 * @msg says what was found and, unless it passed, what to do. */
typedef void (*hib_doctor_fn)(enum hib_doctor_verdict v, const char *check, const char *msg,
			      void *userdata);

/* Run every check; returns the worst verdict. */
int hib_doctor(const struct hib_doctor_input *in, hib_doctor_fn fn, void *userdata);

#endif
