/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of `hibernate doctor` share, and only they include: the run's
 * context, the report of one line and paths under the root prefix
 * (doctor-report.c), and the checks hib_doctor (doctor.c) calls in their order
 * from doctor-kernel.c (the kernel, its command line and initramfs),
 * doctor-swap.c (the swap areas, zram), doctor-target.c (the target, its room,
 * location and setup size), doctor-crypt.c (encryption: the target's, the
 * root's, swap in the clear, the key file) and doctor-sleep.c (the sleep line).
 */
#ifndef HIB_FRONTEND_DOCTOR_PRIV_H
#define HIB_FRONTEND_DOCTOR_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "frontend/doctor.h"

struct doctor_ctx {
	const struct hib_doctor_input *in;
	hib_doctor_fn fn;
	void *ud;
	int worst;
	char cmdline[4096];
	struct hib_cmdline kc;
};

#define DOCTOR_MAX_SWAPS 32

struct swaps_seen {
	int total, zram;
	struct {
		char path[512];
		uint64_t free_kib;
	} v[DOCTOR_MAX_SWAPS];
	int n;
};

/* doctor-report.c: one finding, kept as the worst so far; @p under the root
 * prefix. */
void doctor_report(struct doctor_ctx *c, enum hib_doctor_verdict v, const char *check,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void doctor_path(const struct doctor_ctx *c, const char *p, char *out, size_t len);
int doctor_read_file(const struct doctor_ctx *c, const char *p, char *buf, size_t len);

/* doctor-kernel.c */
void doctor_check_snapshot_dev(struct doctor_ctx *c);
void doctor_check_lockdown(struct doctor_ctx *c);
void doctor_check_power_disk(struct doctor_ctx *c);
void doctor_check_cmdline(struct doctor_ctx *c);
void doctor_check_initramfs(struct doctor_ctx *c);
void doctor_check_kernel_resume(struct doctor_ctx *c);

/* doctor-swap.c */
void doctor_scan_swaps(struct doctor_ctx *c, struct swaps_seen *s);
void doctor_check_zram(struct doctor_ctx *c, const struct swaps_seen *s);
void doctor_check_zram_cycle(struct doctor_ctx *c, const struct hib_target *t);

/* doctor-target.c */
void doctor_check_target(struct doctor_ctx *c, const struct swaps_seen *sw);

/* doctor-crypt.c */
void doctor_check_crypt(struct doctor_ctx *c, const struct hib_target *t);
void doctor_check_root_crypt(struct doctor_ctx *c, const struct hib_target *t);
void doctor_check_clear_swap(struct doctor_ctx *c, const struct swaps_seen *sw);
void doctor_check_encryption(struct doctor_ctx *c);
void doctor_check_key_file(struct doctor_ctx *c);

/* doctor-sleep.c */
void doctor_check_sleep(struct doctor_ctx *c);

#endif
