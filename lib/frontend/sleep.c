// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * systemd's sleep operations, decided step by step (sleep.h). The rules are
 * systemd-sleep's (src/sleep/sleep.c): hybrid-sleep and suspend-then-hibernate
 * fall back to a suspend to RAM when the hibernation fails (a laptop in a bag
 * had better sleep in RAM than stay on; the unit still fails, so the journal
 * says the hibernation did not happen), and a suspend the user ends keeps the
 * system up. Without a battery suspend-then-hibernate is a fixed timer
 * (HibernateDelaySec=, 2 h); with one, each wake re-plans from the charge and
 * the learned rate (hib_sth_plan), more carefully than systemd: it hibernates
 * before a wake that would come too late, never trusts a missing estimate,
 * and takes a wake at the battery's firmware alarm as the alarm.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "frontend/sleep.h"
#include "util/util.h"

static const char *const op_names[] = {
	[HIB_SLEEP_OP_HIBERNATE] = "hibernate",
	[HIB_SLEEP_OP_HYBRID] = "hybrid-sleep",
	[HIB_SLEEP_OP_SUSPEND_THEN_HIBERNATE] = "suspend-then-hibernate",
};

int hib_sleep_op_parse(const char *name, enum hib_sleep_op *ret)
{
	for (size_t i = 0; i < ARRAY_SIZE(op_names); i++)
		if (strcmp(name, op_names[i]) == 0) {
			*ret = (enum hib_sleep_op)i;
			return 0;
		}
	return -EINVAL;
}

const char *hib_sleep_op_name(enum hib_sleep_op op)
{
	return (size_t)op < ARRAY_SIZE(op_names) ? op_names[op] : "?";
}

static void next_step(struct hib_sleep_next *n, enum hib_sleep_action a, const char *step)
{
	n->action = a;
	n->step = step;
}

static void done(struct hib_sleep_next *n, bool failed)
{
	n->action = HIB_SLEEP_DONE;
	n->failed = failed;
}

/* After our cycle: a failed hibernation falls back to RAM where systemd's does. */
static void after_hibernate(const struct hib_sleep_state *s, struct hib_sleep_next *n)
{
	if (s->result != HIB_SLEEP_FAILED || s->op == HIB_SLEEP_OP_HIBERNATE) {
		done(n, s->result == HIB_SLEEP_FAILED);
		return;
	}
	n->msg_error = true;
	if (s->op == HIB_SLEEP_OP_HYBRID) {
		snprintf(n->msg, sizeof(n->msg),
			 "hybrid sleep failed: suspending to RAM instead (no image on disk)");
		next_step(n, HIB_SLEEP_SUSPEND_FALLBACK, "suspend-after-failed-hybrid-sleep");
	} else {
		snprintf(n->msg, sizeof(n->msg),
			 "hibernation failed: suspending to RAM again instead");
		next_step(n, HIB_SLEEP_SUSPEND_FALLBACK, "suspend-after-failed-hibernate");
	}
}

/* ---- suspend-then-hibernate with batteries --------------------------------- */

#define USEC_PER_HOUR 3600000000ULL

static bool has_battery(const struct hib_sleep_power *sp)
{
	return sp->power && sp->power->n > 0;
}

/* The rate of @b, learned or assumed. */
static unsigned battery_rate(const struct hib_sleep_power *sp, const struct hib_battery *b,
			     bool *assumed)
{
	unsigned rate = sp->rates ? hib_rate_get(sp->rates, b->id) : 0;

	if (rate)
		return rate;
	*assumed = true;
	return HIB_STH_ASSUMED_RATE;
}

static int low_permille(const struct hib_power *p)
{
	int low = HIB_STH_LOW_PERMILLE;

	if (hib_power_alarm_usable(p))
		for (unsigned i = 0; i < p->n; i++)
			if (p->bat[i].alarm_permille > low)
				low = p->bat[i].alarm_permille;
	return low;
}

/* Each battery's charge and rate: "BAT0 42.0% at 3.1%/h (learned), ...". */
static size_t battery_list(const struct hib_sleep_power *sp, char *buf, size_t len)
{
	const struct hib_power *p = sp->power;
	size_t n = 0;

	buf[0] = 0;
	for (unsigned i = 0; i < p->n && n < len; i++) {
		const struct hib_battery *b = &p->bat[i];
		bool assumed = false;
		unsigned rate = battery_rate(sp, b, &assumed);

		n += (size_t)snprintf(buf + n, len - n, "%s%s %d.%d%% at %u.%u%%/h (%s)",
				      i ? ", " : "", b->name, b->permille / 10, b->permille % 10,
				      rate / 10, rate % 10,
				      assumed ? "assumed: none learned yet" : "learned");
	}
	return n < len ? n : len - 1;
}

/* The figures into @pl->msg: each battery's charge and rate, the time left. */
static size_t plan_figures(const struct hib_sleep_power *sp, struct hib_sth_plan *pl)
{
	char list[320], left[32], asleep[32];
	int n;

	battery_list(sp, list, sizeof(list));
	hib_sleep_duration(pl->left_usec, left, sizeof(left));
	hib_sleep_duration(sp->asleep_usec, asleep, sizeof(asleep));
	n = snprintf(pl->msg, sizeof(pl->msg),
		     "suspend-then-hibernate: on %s, %s; %s to %d%%, %s in RAM so far: ",
		     sp->power->on_ac ? "AC" : "battery", list, left, (pl->low_permille + 5) / 10,
		     asleep);
	return n < (int)sizeof(pl->msg) ? (size_t)n : sizeof(pl->msg) - 1;
}

/* Until every battery is low, each at its own rate (they drain in turn, as
 * systemd adds them up). */
static uint64_t time_left(const struct hib_sleep_power *sp, int low, bool *assumed)
{
	uint64_t left = 0;

	for (unsigned i = 0; i < sp->power->n; i++) {
		const struct hib_battery *b = &sp->power->bat[i];
		unsigned rate = battery_rate(sp, b, assumed);

		if (b->permille > low)
			left += (uint64_t)(b->permille - low) * USEC_PER_HOUR / rate;
	}
	return left;
}

/* The decision itself, the figures already measured into @pl. */
static const char *plan_decide(const struct hib_sleep_conf *sc, const struct hib_sleep_power *sp,
			       struct hib_sth_plan *pl)
{
	uint64_t next = sc->suspend_estimation_usec;

	if (sp->power->on_ac && !sc->hibernate_on_ac) {
		pl->restart_delay = true;
		pl->next_usec = next;
		return "HibernateOnACPower=no: staying in RAM, checking again then";
	}
	/* Within the RTC's few seconds of the end is the end. */
	if (sc->delay_set && sp->asleep_usec + 5000000 >= sc->hibernate_delay_usec) {
		pl->hibernate = true;
		return "HibernateDelaySec= is over";
	}
	if (sc->delay_set && sc->hibernate_delay_usec - sp->asleep_usec < next)
		next = sc->hibernate_delay_usec - sp->asleep_usec;
	if (pl->left_usec == 0) {
		pl->hibernate = true;
		return "the batteries are low";
	}
	if (pl->left_usec >= next + HIB_STH_MARGIN_USEC) {
		pl->next_usec = next;
		return next < sc->suspend_estimation_usec
			       ? "HibernateDelaySec= ends then"
			       : "the next check (SuspendEstimationSec=)";
	}
	if (pl->assumed && pl->left_usec >= HIB_STH_MARGIN_USEC + HIB_STH_MIN_INTERVAL_USEC) {
		pl->next_usec = pl->left_usec - HIB_STH_MARGIN_USEC;
		return "a short suspend to learn the rate, safe even at the assumed one";
	}
	pl->hibernate = true;
	return "the batteries would be low before the next check";
}

void hib_sleep_duration(uint64_t usec, char *buf, size_t len)
{
	uint64_t s = usec / 1000000;

	if (s < 60)
		snprintf(buf, len, "%" PRIu64 " s", s);
	else if (s < 3600 && s % 60)
		snprintf(buf, len, "%" PRIu64 " min %" PRIu64 " s", s / 60, s % 60);
	else if (s < 3600)
		snprintf(buf, len, "%" PRIu64 " min", s / 60);
	else
		snprintf(buf, len, "%" PRIu64 " h %02" PRIu64 " min", s / 3600, s / 60 % 60);
}

void hib_sth_plan(const struct hib_sleep_conf *sc, const struct hib_sleep_power *sp,
		  struct hib_sth_plan *ret)
{
	const char *why;
	char next[32];
	size_t len;

	*ret = (struct hib_sth_plan){ 0 };
	if (!has_battery(sp)) {
		ret->next_usec = sc->hibernate_delay_usec;
		snprintf(ret->msg, sizeof(ret->msg),
			 "suspend-then-hibernate: hibernating after %" PRIu64 " s in RAM%s",
			 sc->hibernate_delay_usec / 1000000,
			 sc->delay_set ? "" : " (HibernateDelaySec= unset: systemd's default)");
		return;
	}
	ret->battery = true;
	ret->low_permille = low_permille(sp->power);
	ret->left_usec = time_left(sp, ret->low_permille, &ret->assumed);
	why = plan_decide(sc, sp, ret);
	len = plan_figures(sp, ret);
	if (ret->hibernate)
		snprintf(ret->msg + len, sizeof(ret->msg) - len, "hibernating now: %s", why);
	else {
		hib_sleep_duration(ret->next_usec, next, sizeof(next));
		snprintf(ret->msg + len, sizeof(ret->msg) - len, "suspending, next wake in %s: %s",
			 next, why);
	}
}

/* The hours in RAM @pl allows from now: until the estimate's margin, or the
 * delay, whichever is first. */
static double hours_in_ram(const struct hib_sleep_conf *sc, const struct hib_sth_plan *pl)
{
	uint64_t left = pl->left_usec > HIB_STH_MARGIN_USEC ? pl->left_usec - HIB_STH_MARGIN_USEC
							    : 0;

	if (!pl->battery || (sc->delay_set && sc->hibernate_delay_usec < left))
		left = sc->hibernate_delay_usec;
	return (double)left / USEC_PER_HOUR;
}

static void summary_plan(const struct hib_sleep_conf *sc, const struct hib_sleep_power *sp,
			 const struct hib_sth_plan *pl, char *buf, size_t len)
{
	char list[320], every[32];

	if (!pl->battery) {
		snprintf(buf, len,
			 "no battery: hibernates after %.1f h in RAM (HibernateDelaySec=%s)",
			 hours_in_ram(sc, pl), sc->delay_set ? "" : " unset: 2 h");
		return;
	}
	hib_sleep_duration(sc->suspend_estimation_usec, every, sizeof(every));
	battery_list(sp, list, sizeof(list));
	if (pl->restart_delay) {
		snprintf(buf, len,
			 "on AC, %s: stays in RAM while on AC (HibernateOnACPower=no), checking "
			 "every %s",
			 list, every);
		return;
	}
	snprintf(buf, len,
		 "on %s, %s: about %.1f h in RAM before hibernating, checking every %s%s; "
		 "firmware battery alarm %s",
		 sp->power->on_ac ? "AC" : "battery", list, hours_in_ram(sc, pl), every,
		 pl->assumed ? " (no rate learned yet: 20 %/h assumed)" : "",
		 hib_power_alarm_usable(sp->power) ? "usable"
						   : "not usable (none, or not on every battery)");
}

void hib_sth_summary(const struct hib_sleep_conf *sc, const struct hib_power *p,
		     const struct hib_rate_store *rs, char *buf, size_t len)
{
	struct hib_sleep_power sp = { .power = p, .rates = rs };
	const char *why = hib_sleep_disallowed(sc, HIB_SLEEP_OP_SUSPEND_THEN_HIBERNATE);
	struct hib_sth_plan pl;
	char what[600];

	if (why) {
		snprintf(buf, len, "suspend-then-hibernate refused: sleep.conf says %s", why);
		return;
	}
	hib_sth_plan(sc, &sp, &pl);
	summary_plan(sc, &sp, &pl, what, sizeof(what));
	snprintf(buf, len, "suspend-then-hibernate now: %s (AllowSuspendThenHibernate=yes)", what);
}

/* A wake that was not ours, on battery at the firmware's alarm level: the
 * firmware woke us because the battery is low, not the user. */
static bool woken_by_battery_alarm(const struct hib_sleep_power *sp)
{
	const struct hib_power *p = sp->power;

	if (!has_battery(sp) || p->on_ac || !hib_power_alarm_usable(p))
		return false;
	for (unsigned i = 0; i < p->n; i++)
		if (p->bat[i].permille > p->bat[i].alarm_permille + 10)
			return false;
	return true;
}

/* suspend-then-hibernate, at the start or at the alarm: the plan decides. */
static void sth_step(const struct hib_sleep_state *s, const struct hib_sleep_conf *sc,
		     struct hib_sleep_next *n)
{
	struct hib_sth_plan pl;

	hib_sth_plan(sc, &s->sp, &pl);
	snprintf(n->msg, sizeof(n->msg), "%s", pl.msg);
	if (!pl.battery && s->last != HIB_SLEEP_START)
		pl.hibernate = true; /* the fixed timer ran out */
	if (pl.hibernate) {
		if (!pl.battery)
			n->msg[0] = 0;
		next_step(n, HIB_SLEEP_HIBERNATE, "hibernate");
		return;
	}
	next_step(n, HIB_SLEEP_SUSPEND, "suspend");
	n->alarm_usec = pl.next_usec;
	n->restart_delay = pl.restart_delay;
}

/* suspend-then-hibernate's suspend: the alarm means decide again. */
static void after_suspend(const struct hib_sleep_state *s, const struct hib_sleep_conf *sc,
			  struct hib_sleep_next *n)
{
	if (s->result == HIB_SLEEP_ALARM) {
		sth_step(s, sc, n);
		return;
	}
	if (s->result == HIB_SLEEP_WOKEN && woken_by_battery_alarm(&s->sp)) {
		snprintf(
			n->msg, sizeof(n->msg),
			"suspend-then-hibernate: woken at the battery's low alarm: hibernating now");
		next_step(n, HIB_SLEEP_HIBERNATE, "hibernate");
		return;
	}
	if (s->result == HIB_SLEEP_WOKEN)
		snprintf(n->msg, sizeof(n->msg), "woken before the hibernation delay: staying up");
	done(n, s->result == HIB_SLEEP_FAILED);
}

static void start(const struct hib_sleep_state *s, const struct hib_sleep_conf *sc,
		  struct hib_sleep_next *n)
{
	if (s->op != HIB_SLEEP_OP_SUSPEND_THEN_HIBERNATE) {
		next_step(n, HIB_SLEEP_HIBERNATE, hib_sleep_op_name(s->op));
		return;
	}
	sth_step(s, sc, n);
}

void hib_sleep_decide(const struct hib_sleep_state *s, const struct hib_sleep_conf *sc,
		      struct hib_sleep_next *ret)
{
	*ret = (struct hib_sleep_next){ .action = HIB_SLEEP_DONE };
	switch (s->last) {
	case HIB_SLEEP_START:
		start(s, sc, ret);
		break;
	case HIB_SLEEP_SUSPEND:
		after_suspend(s, sc, ret);
		break;
	case HIB_SLEEP_HIBERNATE:
		after_hibernate(s, ret);
		break;
	case HIB_SLEEP_SUSPEND_FALLBACK:
		done(ret, true); /* the hibernation it stands in for did not happen */
		break;
	case HIB_SLEEP_DONE:
		done(ret, s->result == HIB_SLEEP_FAILED);
		break;
	}
}

bool hib_sleep_powerdown(enum hib_sleep_op op, const struct hib_sleep_conf *sc, bool config_chose,
			 enum hib_powerdown *ret)
{
	if (op == HIB_SLEEP_OP_HYBRID) {
		*ret = HIB_POWERDOWN_SUSPEND;
		return true;
	}
	if (sc->mode_set && !config_chose) {
		*ret = sc->powerdown;
		return true;
	}
	return false;
}

void hib_sleep_hooks_restrict(struct hib_hook_config *hc)
{
	static const char *const none[] = { NULL };

	hc->dirs = none;
	hc->pmutils = false;
	hc->n_inline = 0;
	hc->force = true; /* systemd-sleep ignores their failures */
}

const char *hib_user_slice_unfreezable(const struct hib_user_slice_facts *f)
{
	const char *env = f->env;
	unsigned version;

	if (env && (strcmp(env, "0") == 0 || strcmp(env, "no") == 0 || strcmp(env, "false") == 0))
		return "$SYSTEMD_SLEEP_FREEZE_USER_SESSIONS says not to";
	if (!f->version || hib_systemd_version_parse(f->version, &version) < 0)
		return "systemd's version is unknown (systemctl --version)";
	if (version < HIB_SYSTEMD_FREEZES_USER_SLICE)
		return "systemd before 256 does not";
	if (!f->freezer)
		return "no cgroup v2 freezer for user.slice";
	return NULL;
}
