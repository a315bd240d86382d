/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef HIB_DOCTOR_H
#define HIB_DOCTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "hibernate.h"

enum hib_doctor_verdict { HIB_DOCTOR_PASS = 0, HIB_DOCTOR_WARN = 1, HIB_DOCTOR_FAIL = 2 };

struct hib_doctor_input {
	const char *root;    /* prefix for /proc, /sys, /dev, /etc, /boot; NULL for "/" */
	const char *cmdline; /* kernel command line; NULL reads <root>/proc/cmdline */
	/* The target as hibernate is told of it (--device, device =, their offsets);
	 * the doctor sets the rest: the command line and swaps above, read-only. */
	struct hib_target_request target;
	int64_t image_size;       /* configured image-size in bytes, -1 default */
	bool encrypt;             /* hibernate encrypts the image (encrypt =) */
	enum hib_require require; /* what resume accepts (require-encryption) */
	const char *key_file;     /* key-file =, or NULL; looked for under @root */
	enum hib_zram_mode zram;  /* zram = */
	/* suspend-then-hibernate's batteries and learned rates: NULL for
	 * <root>/sys/class/power_supply and <root>/var/lib/hibernate/battery-rate. */
	const char *power_supply;
	const char *rate_file;
};

/* One finding: @check names it (snapshot-device, lockdown, target, space, …),
 * @msg says what was found and, unless it passed, what to do. */
typedef void (*hib_doctor_fn)(enum hib_doctor_verdict v, const char *check, const char *msg,
			      void *userdata);

/* Run every check; returns the worst verdict. */
int hib_doctor(const struct hib_doctor_input *in, hib_doctor_fn fn, void *userdata);

/* doctor's input as the configuration and the target request give it;
 * @root: a test root, NULL for "/". */
struct hib_config;
void hib_doctor_input_from(const struct hib_config *cfg, const struct hib_target_request *req,
			   const char *root, struct hib_doctor_input *ret);

/* The first FAIL of a doctor run (hib_doctor_fn; @userdata is this), "" when none. */
struct hib_doctor_first_fail {
	char check[32];
	char msg[1024];
};
void hib_doctor_first_fail(enum hib_doctor_verdict v, const char *check, const char *msg,
			   void *userdata);

#endif
