// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * systemd's sleep operations, decided step by step (sleep.h). The rules are
 * systemd-sleep's (src/sleep/sleep.c) for a machine without a battery:
 * hybrid-sleep and suspend-then-hibernate fall back to a suspend to RAM when
 * the hibernation fails (a laptop in a bag had better sleep in RAM than stay
 * on; the unit still fails, so the journal says the hibernation did not
 * happen), and a suspend the user ends before the delay keeps the system up.
 */
#include <errno.h>
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

/* suspend-then-hibernate's suspend: the alarm means hibernate now. */
static void after_suspend(const struct hib_sleep_state *s, struct hib_sleep_next *n)
{
	if (s->result == HIB_SLEEP_ALARM) {
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
	snprintf(n->msg, sizeof(n->msg),
		 "suspend-then-hibernate: hibernating after %llu s in RAM%s",
		 (unsigned long long)(sc->hibernate_delay_usec / 1000000),
		 sc->delay_set ? "" : " (HibernateDelaySec= unset: systemd's default)");
	next_step(n, HIB_SLEEP_SUSPEND, "suspend");
	n->alarm_usec = sc->hibernate_delay_usec;
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
		after_suspend(s, ret);
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
