/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * systemd's sleep.conf, as far as the cycles systemd's sleep units hand to us
 * need it (sleepconf.c): HibernateDelaySec=, SuspendEstimationSec= and
 * HibernateOnACPower= for suspend-then-hibernate, the Allow*= keys that permit
 * it, HibernateMode= mapped to our powerdown, SuspendState= for the suspend to
 * RAM; and systemd's version, which says whether it freezes user.slice.
 */
#ifndef HIB_SLEEPCONF_H
#define HIB_SLEEPCONF_H

#include <stdbool.h>
#include <stdint.h>

#include "hibernate.h"

/* systemd's suspend-then-hibernate delay when HibernateDelaySec= is unset and
 * the machine has no battery (with one, the battery decides). */
#define HIB_SLEEP_DEFAULT_DELAY_USEC (2ULL * 3600 * 1000000)
/* SuspendEstimationSec='s default: how often a suspend on battery wakes to
 * measure the battery (systemd 253+). */
#define HIB_SLEEP_DEFAULT_ESTIMATION_USEC (3600ULL * 1000000)
/* The first systemd whose systemd-sleep freezes user.slice around a sleep. */
#define HIB_SYSTEMD_FREEZES_USER_SLICE 256

struct hib_sleep_conf {
	uint64_t hibernate_delay_usec; /* HIB_SLEEP_DEFAULT_DELAY_USEC when unset */
	bool delay_set;
	bool mode_set;                    /* HibernateMode= named a mode we know */
	enum hib_powerdown powerdown;     /* its first such mode; valid when mode_set */
	char suspend_state[64];           /* SuspendState=, "mem standby freeze" when unset */
	uint64_t suspend_estimation_usec; /* SuspendEstimationSec=, 1 h when unset */
	bool hibernate_on_ac;             /* HibernateOnACPower=, yes when unset */
	bool allow_suspend;               /* AllowSuspend=, yes when unset */
	bool allow_hibernation;           /* AllowHibernation=, yes when unset */
	bool allow_sth;                   /* AllowSuspendThenHibernate=, yes when unset */
	bool allow_hybrid;                /* AllowHybridSleep=, yes when unset */
};

void hib_sleep_conf_init(struct hib_sleep_conf *c);

/*
 * One sleep.conf (or drop-in) text on top of @c: its [Sleep] section, later
 * lines winning, an empty value resetting the key. Unknown keys and sections
 * are systemd's business and ignored. A bad value fails with -EINVAL, the
 * line in *ret_line (the caller names the file) and the reason in @err.
 */
int hib_sleep_conf_parse(struct hib_sleep_conf *c, const char *text, unsigned *ret_line,
			 struct hib_error *err);

/*
 * sleep.conf as systemd reads it, under @root ("" or NULL for /): the first of
 * /etc, /run, /usr/local/lib, /usr/lib's systemd/sleep.conf, then the *.conf
 * of their sleep.conf.d in name order (a name in an earlier directory hides
 * the same name in a later one). Missing files are fine; a bad one fails,
 * naming the file and line in @err.
 */
int hib_sleep_conf_load(const char *root, struct hib_sleep_conf *ret, struct hib_error *err);

/* A systemd time span ("90", "2h 30min", "45s", "500ms") in µs; -EINVAL on
 * anything else, "infinity" included (a delay must end). */
int hib_parse_timespan(const char *s, uint64_t *ret_usec);

/* A systemd boolean (1 yes y true t on, 0 no n false f off); -EINVAL on others. */
int hib_parse_boolean(const char *s, bool *ret);

/* Why systemd would refuse @op (0 hibernate, 1 hybrid-sleep, 2 suspend-then-
 * hibernate: enum hib_sleep_op) under @c's Allow*= keys; NULL when it may run.
 * suspend-then-hibernate needs AllowSuspend= and AllowHibernation= too. */
const char *hib_sleep_disallowed(const struct hib_sleep_conf *c, int op);

/* HibernateMode='s list: the first mode that is one of our powerdowns
 * (platform, shutdown, reboot, suspend); -ENOENT when none is. */
int hib_sleep_mode_powerdown(const char *modes, enum hib_powerdown *ret);

/* The version in `systemctl --version`'s first line ("systemd 257 (257.9-1)");
 * -EINVAL when the line is not that. */
int hib_systemd_version_parse(const char *line, unsigned *ret_version);

#endif
