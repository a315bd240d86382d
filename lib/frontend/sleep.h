/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The decisions of systemd's sleep operations as we run them (sleep.c):
 * which step comes next in hibernate, hybrid-sleep and suspend-then-
 * hibernate, with what alarm and what message; the powerdown the cycle uses;
 * which hooks a suspend to RAM runs; and whether user.slice can be frozen.
 * The program carries the steps out (tools/hibernate/sleep.c); nothing here
 * touches the system, so unit tests drive every path.
 */
#ifndef HIB_SLEEP_H
#define HIB_SLEEP_H

#include <stdbool.h>
#include <stdint.h>

#include "frontend/battery.h"
#include "frontend/hooks.h"
#include "frontend/sleepconf.h"
#include "hibernate.h"

/* The operation of the systemd sleep unit that runs us (--systemd-sleep). */
enum hib_sleep_op {
	HIB_SLEEP_OP_HIBERNATE,
	HIB_SLEEP_OP_HYBRID,
	HIB_SLEEP_OP_SUSPEND_THEN_HIBERNATE,
};

/* -EINVAL for a name that is none of hibernate, hybrid-sleep, suspend-then-hibernate. */
int hib_sleep_op_parse(const char *name, enum hib_sleep_op *ret);
const char *hib_sleep_op_name(enum hib_sleep_op op);

/* A step of an operation, and what came of it. */
enum hib_sleep_action {
	HIB_SLEEP_START,            /* (as last: nothing done yet) */
	HIB_SLEEP_SUSPEND,          /* to RAM, woken by an alarm after alarm_usec (0: none) */
	HIB_SLEEP_HIBERNATE,        /* our cycle */
	HIB_SLEEP_SUSPEND_FALLBACK, /* the hibernation failed: to RAM instead, no alarm */
	HIB_SLEEP_DONE,             /* stop: with failed, the unit fails */
};

enum hib_sleep_result {
	HIB_SLEEP_OK,     /* a cycle that did not fail (resumed, cancelled, …) */
	HIB_SLEEP_FAILED, /* it did not happen */
	HIB_SLEEP_ALARM,  /* a suspend the alarm ended (or nearly: the RTC counts seconds) */
	HIB_SLEEP_WOKEN,  /* a suspend something else ended: the user is back */
};

/* suspend-then-hibernate's view of the batteries when it decides. */
struct hib_sleep_power {
	const struct hib_power *power;      /* just read; NULL: not read (no battery) */
	const struct hib_rate_store *rates; /* the learned rates; NULL: none */
	uint64_t asleep_usec;               /* in RAM so far, toward HibernateDelaySec= (from the
			       * unplug under HibernateOnACPower=no: restart_delay) */
};

struct hib_sleep_state {
	enum hib_sleep_op op;
	enum hib_sleep_action last; /* HIB_SLEEP_START at first */
	enum hib_sleep_result result;
	struct hib_sleep_power sp; /* suspend-then-hibernate */
};

struct hib_sleep_next {
	enum hib_sleep_action action;
	const char *step;    /* systemd-sleep's SYSTEMD_SLEEP_ACTION for it */
	uint64_t alarm_usec; /* HIB_SLEEP_SUSPEND: the RTC wakes it after this; 0: none */
	bool failed;         /* HIB_SLEEP_DONE: the unit fails */
	bool restart_delay;  /* HibernateDelaySec= counts from after this suspend */
	/* A line for the log before the step ("" for none): an error (a step
	 * failed, the fallback follows) or progress, with the figures behind
	 * a suspend-then-hibernate decision. */
	bool msg_error;
	char msg[512];
};

/* A charge at or below this (or the firmware alarm's level, if higher) is low:
 * systemd's 5 %. */
#define HIB_STH_LOW_PERMILLE 50
/* The rate assumed for a battery whose rate is not learned yet: 20 %/h, worse
 * than a laptop asleep ever is (s2idle ~3 %/h), so no estimate is never
 * optimistic. */
#define HIB_STH_ASSUMED_RATE 200
/* Kept between the estimated low and the hibernation. */
#define HIB_STH_MARGIN_USEC (15ULL * 60 * 1000000)
/* The shortest suspend worth waking from. */
#define HIB_STH_MIN_INTERVAL_USEC (15ULL * 60 * 1000000)

/* What suspend-then-hibernate does next with the batteries it has. */
struct hib_sth_plan {
	bool battery;       /* a battery counts: else the fixed timer */
	bool hibernate;     /* now; else suspend for next_usec */
	bool restart_delay; /* on AC under HibernateOnACPower=no */
	bool assumed;       /* a battery's rate is HIB_STH_ASSUMED_RATE */
	uint64_t next_usec; /* the RTC alarm of the next suspend */
	uint64_t left_usec; /* estimated until the batteries are low */
	int low_permille;   /* the low threshold used */
	char msg[512];      /* the figures and why */
};

/* The plan under @sc with @sp's batteries; used at every wake and by doctor. */
/* @usec as the decision line says it, in a unit right for its length: "30 s",
 * "1 min 30 s", "15 min", "1 h 00 min" (to the second, rounded down). */
void hib_sleep_duration(uint64_t usec, char *buf, size_t len);

void hib_sth_plan(const struct hib_sleep_conf *sc, const struct hib_sleep_power *sp,
		  struct hib_sth_plan *ret);

/* doctor's line: what suspend-then-hibernate would do if started now, with
 * @p's batteries and @rs's rates (either may be NULL): on AC or battery, the
 * charge and rate, the hours in RAM before it hibernates, whether the
 * firmware alarm is usable, and whether sleep.conf allows it. */
void hib_sth_summary(const struct hib_sleep_conf *sc, const struct hib_power *p,
		     const struct hib_rate_store *rs, char *buf, size_t len);

/* What to do after @s under @sc. */
void hib_sleep_decide(const struct hib_sleep_state *s, const struct hib_sleep_conf *sc,
		      struct hib_sleep_next *ret);

/* The cycle's powerdown under @op: hybrid-sleep sleeps in RAM after writing;
 * otherwise HibernateMode= unless the configuration chose one (@config_chose:
 * ours wins, it is the tool's own setting, and systemd's default "platform
 * shutdown" is not ours). false when the configured powerdown stands. */
bool hib_sleep_powerdown(enum hib_sleep_op op, const struct hib_sleep_conf *sc, bool config_chose,
			 enum hib_powerdown *ret);

/* The hooks a suspend to RAM runs: the system-sleep hooks alone ("pre|post
 * OPERATION"), as systemd-sleep runs them, and their failures ignored as it
 * ignores them: ours prepare a hibernation, not this. */
void hib_sleep_hooks_restrict(struct hib_hook_config *hc);

/* What decides whether user.slice is frozen around the sleep. */
struct hib_user_slice_facts {
	const char *env;     /* $SYSTEMD_SLEEP_FREEZE_USER_SESSIONS, NULL when unset */
	const char *version; /* `systemctl --version`'s output, NULL when it failed */
	bool freezer;        /* /sys/fs/cgroup/user.slice/cgroup.freeze exists */
};

/* Why systemd-sleep would not freeze user.slice here; NULL when it would. */
const char *hib_user_slice_unfreezable(const struct hib_user_slice_facts *f);

#endif
