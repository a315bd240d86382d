// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `hibernate doctor`: can this machine hibernate, and if not, exactly why and
 * what to do. Every check reads only; none opens /dev/snapshot or touches
 * /sys/power/state. Paths are taken under a root prefix, so tests can build
 * a fake /proc, /sys and /etc.
 *
 * Here: hib_doctor, the order of the checks, which is the order of doctor's
 * output; the checks are in the doctor-*.c files by subject, each line
 * reported through doctor-report.c (doctor-priv.h).
 */
#include <stdio.h>

#include "frontend/config.h"
#include "frontend/doctor.h"
#include "frontend/doctor-priv.h"
#include "util/util.h"

int hib_doctor(const struct hib_doctor_input *in, hib_doctor_fn fn, void *userdata)
{
	struct doctor_ctx c = { .in = in, .fn = fn, .ud = userdata };
	struct swaps_seen sw;

	if (in->cmdline)
		snprintf(c.cmdline, sizeof(c.cmdline), "%s", in->cmdline);
	else if (doctor_read_file(&c, "/proc/cmdline", c.cmdline, sizeof(c.cmdline)) < 0)
		c.cmdline[0] = 0;
	hib_cmdline_parse(c.cmdline, &c.kc);

	doctor_check_snapshot_dev(&c);
	doctor_check_lockdown(&c);
	doctor_check_power_disk(&c);
	doctor_check_cmdline(&c);
	doctor_scan_swaps(&c, &sw);
	doctor_check_zram(&c, &sw);
	doctor_check_target(&c, &sw);
	doctor_check_clear_swap(&c, &sw);
	doctor_check_initramfs(&c);
	doctor_check_encryption(&c);
	doctor_check_kernel_resume(&c);
	doctor_check_key_file(&c);
	doctor_check_sleep(&c);
	hib_cmdline_free(&c.kc);
	return c.worst;
}

void hib_doctor_input_from(const struct hib_config *cfg, const struct hib_target_request *req,
			   const char *root, struct hib_doctor_input *ret)
{
	*ret = (struct hib_doctor_input){
		.root = root,
		.target = *req,
		.image_size = cfg->opts.image_size,
		.encrypt = cfg->encrypt,
		.require = cfg->opts.require_encryption,
		.zram = cfg->opts.zram,
		.key_file = cfg->key_file,
	};
}

void hib_doctor_first_fail(enum hib_doctor_verdict v, const char *check, const char *msg,
			   void *userdata)
{
	struct hib_doctor_first_fail *ff = userdata;

	if (v == HIB_DOCTOR_FAIL && !ff->check[0]) {
		snprintf(ff->check, sizeof(ff->check), "%s", check);
		snprintf(ff->msg, sizeof(ff->msg), "%s", msg);
	}
}
