/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef HIB_LOGIND_H
#define HIB_LOGIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "frontend/doctor.h"
#include "hibernate.h"

/* The file systemd-logind.service reads (EnvironmentFile=) when it starts: it
 * holds HIB_LOGIND_ENV_LINE while doctor passes. */
#define HIB_LOGIND_ENV_PATH "/run/hibernate/logind.env"
#define HIB_LOGIND_ENV_LINE "SYSTEMD_BYPASS_HIBERNATION_MEMORY_CHECK=1"

/* What logind's CanHibernate looks at (systemd 255+: noresume, /proc/swaps,
 * /sys/power/resume, an EFI boot, Active(anon) against free swap), and its
 * answer. */
struct hib_logind_facts {
	const char *answer;       /* "yes", "no", "na", "challenge"; NULL: not asked */
	const char *unasked;      /* when answer is NULL: why (no busctl, no logind) */
	bool doctor_failed;       /* doctor's other checks found a FAIL */
	bool noresume;            /* on the kernel command line */
	bool efi;                 /* booted through EFI */
	bool bypass;              /* HIB_LOGIND_ENV_PATH tells logind to skip its swap checks */
	bool disk_state;          /* /sys/power/state offers "disk" */
	dev_t resume_dev;         /* /sys/power/resume; 0: not set */
	unsigned swaps;           /* active swap areas logind counts (zram is not) */
	bool resume_swap;         /* one of them is on the device /sys/power/resume names */
	uint64_t swap_free_kib;   /* free in the roomiest of them */
	uint64_t active_anon_kib; /* /proc/meminfo Active(anon) */
};

enum hib_logind_verdict { HIB_LOGIND_SKIP = 0, HIB_LOGIND_PASS = 1, HIB_LOGIND_WARN = 2 };

/* Read the facts under @root (NULL for "/"); answer, unasked and
 * doctor_failed are the caller's. A file that is missing leaves its fact at
 * its zero value. */
void hib_logind_facts_read(const char *root, struct hib_logind_facts *ret);

/* logind's answer against doctor's, and why logind says what it says: a
 * sentence with the fix into @buf. */
enum hib_logind_verdict hib_logind_explain(const struct hib_logind_facts *f, char *buf, size_t len);

/* Tell logind what doctor found. With @t (doctor passed): /sys/power/resume
 * and resume_offset name @t's device and first page, and HIB_LOGIND_ENV_PATH
 * holds HIB_LOGIND_ENV_LINE. With @t NULL: the file is removed (logind goes
 * by its own checks). 1 when the file changed (logind must be restarted to
 * read it), 0 when not, negative errno with @err on failure. */
int hib_logind_configure(const char *root, const struct hib_target *t, struct hib_error *err);

/*
 * doctor's logind line: the facts under @root, logind's answer (asked over
 * D-Bus; under a test root, @test_answer stands for it, NULL: not asked), and
 * @doctor_failed, explained into @buf.
 */
enum hib_logind_verdict hib_logind_doctor(const char *root, const char *test_answer,
					  bool doctor_failed, char *buf, size_t len);

/* What logind-setup did (hib_logind_setup). */
struct hib_logind_setup {
	struct hib_target *target;         /* doctor passed: the target logind is told of */
	bool changed;                      /* the env file changed: restart logind */
	struct hib_doctor_first_fail fail; /* doctor failed: its first FAIL */
};

/*
 * Only where doctor passes is logind told that hibernate can hibernate: run
 * doctor over @in; where it passes, resolve the target (a file target for its
 * blocks) and hib_logind_configure it; where it fails, remove the env file.
 * @return 0 with @ret filled (ret->target the caller's to close), or -errno
 * with @err.
 */
struct hib_doctor_input;
int hib_logind_setup(const struct hib_doctor_input *in, struct hib_logind_setup *ret,
		     struct hib_error *err);

#endif
