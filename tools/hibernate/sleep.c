// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * systemd's sleep operations carried out (--systemd-sleep): the steps that
 * lib/frontend/sleep.c decides, run here — a suspend to RAM with its
 * system-sleep hooks and RTC alarm, our cycle for the hibernation, and
 * user.slice frozen around each as systemd-sleep 256+ does; for
 * suspend-then-hibernate the batteries read before and after each suspend,
 * and the rate learned from them kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "frontend/sleep.h"
#include "tool.h"
#include "util/util.h"

#define ALARM_SLACK_USEC (5ULL * 1000000)

/* ---- a suspend to RAM ----------------------------------------------------- */

/* One of SuspendState='s words into /sys/power/state: the first the kernel takes. */
static int write_sleep_state(const struct hib_sleep_conf *sc)
{
	char states[sizeof(sc->suspend_state)], *save = NULL;
	_cleanup_(closep) int fd = open("/sys/power/state", O_WRONLY | O_CLOEXEC);
	int r = -EINVAL;

	if (fd < 0)
		return -errno;
	snprintf(states, sizeof(states), "%s", sc->suspend_state);
	for (char *w = strtok_r(states, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (write(fd, w, strlen(w)) >= 0)
			return 0;
		r = -errno;
	}
	return r;
}

static uint64_t boottime_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* The RTC alarm that ends the suspend after @delay_usec: a timerfd on
 * CLOCK_BOOTTIME_ALARM, or -errno said. */
static int arm_alarm(struct control *ctl, uint64_t delay_usec)
{
	struct itimerspec its = { .it_value = { .tv_sec = (time_t)(delay_usec / 1000000),
						.tv_nsec = (long)(delay_usec % 1000000) * 1000 } };
	int tfd = timerfd_create(CLOCK_BOOTTIME_ALARM, TFD_NONBLOCK | TFD_CLOEXEC), r;

	if (tfd >= 0 && timerfd_settime(tfd, 0, &its, NULL) == 0)
		return tfd;
	r = -errno;
	if (tfd >= 0)
		close(tfd);
	say(ctl, "no RTC wake alarm (timerfd CLOCK_BOOTTIME_ALARM: %s); not suspending",
	    strerror(-r));
	return r;
}

/* To RAM as systemd-sleep's step @step, the system-sleep hooks around it. */
static int suspend_to_ram(struct control *ctl, struct user_slice *slice,
			  const struct hib_sleep_conf *sc, const char *step)
{
	_cleanup_(hooks_end) struct hooks_run hooks = { .ctl = ctl };
	int r;

	hooks_setup(ctl, &hooks, "suspend", step);
	hib_sleep_hooks_restrict(&hooks.hc);
	r = hooks_start(&hooks, "not suspending");
	if (r < 0) {
		if (hooks.msg[0])
			say(ctl, "%s", hooks.msg);
		return r;
	}
	user_slice_freeze(slice);
	tlog(ctl, HIB_LOG_PROGRESS, "suspending to RAM (%s)", step);
	r = run_stop_signal ? -EINTR : write_sleep_state(sc);
	if (r < 0)
		say(ctl, "suspend to RAM failed: /sys/power/state: %s", strerror(-r));
	else
		tlog(ctl, HIB_LOG_PROGRESS, "woke up from RAM");
	user_slice_thaw(slice);
	return r;
}

/* A suspend step: woken by the alarm after @delay_usec (0: none), by
 * something else, or it failed. */
static enum hib_sleep_result suspend_step(struct control *ctl, struct user_slice *slice,
					  const struct hib_sleep_conf *sc, const char *step,
					  uint64_t delay_usec)
{
	_cleanup_(closep) int tfd = -1;
	uint64_t deadline = boottime_usec() + delay_usec;

	if (delay_usec && (tfd = arm_alarm(ctl, delay_usec)) < 0)
		return HIB_SLEEP_FAILED;
	if (suspend_to_ram(ctl, slice, sc, step) < 0)
		return HIB_SLEEP_FAILED;
	if (!delay_usec)
		return HIB_SLEEP_OK;
	return boottime_usec() + ALARM_SLACK_USEC >= deadline ? HIB_SLEEP_ALARM : HIB_SLEEP_WOKEN;
}

/* ---- the operations ------------------------------------------------------- */

/* A config key the file or an option set, rather than its default. */
static bool config_key_set(const struct control *ctl, const char *key)
{
	const char *k;

	for (size_t i = 0; (k = hib_config_key(i, NULL)); i++)
		if (strcmp(k, key) == 0)
			return ctl->cfg.source[i] != HIB_SRC_DEFAULT;
	return false;
}

/* What would stop the hibernation stops the suspend: refused before either. */
static int can_hibernate(struct control *ctl)
{
	struct hib_target *t = NULL;

	if (check_sealing_required(ctl) < 0 || pick_target(ctl, true, &t) < 0) {
		say(ctl, "suspend-then-hibernate: this system cannot hibernate with hibernate(8), "
			 "so it does not suspend either");
		return -EPERM;
	}
	hib_target_close(t);
	return 0;
}

/* ---- the batteries of suspend-then-hibernate ------------------------------ */

struct sth_power {
	bool on;              /* suspend-then-hibernate */
	const char *dir;      /* the power_supply class directory */
	char rate_path[4096]; /* the learned rates */
	struct hib_power now; /* the last reading */
	struct hib_rate_store rates;
	uint64_t since; /* boottime of the reading before this suspend */
};

/* Where the batteries are read and the rates kept: the system's, or a
 * test build's stand-ins (QEMU has no battery). */
static void sth_power_init(struct control *ctl, struct sth_power *p)
{
	const char *state = hib_test_knob("HIBERNATE_TEST_STATE_DIR");
	struct hib_error err;

	p->on = true;
	p->dir = hib_test_knob("HIBERNATE_TEST_POWER_SUPPLY");
	if (!p->dir)
		p->dir = HIB_POWER_SUPPLY_DIR;
	if (state)
		snprintf(p->rate_path, sizeof(p->rate_path), "%s/battery-rate", state);
	else
		snprintf(p->rate_path, sizeof(p->rate_path), "%s", HIB_BATTERY_RATE_FILE);
	if (hib_rate_load(p->rate_path, &p->rates, &err) < 0)
		tlog(ctl, HIB_LOG_WARN, "%s; no learned battery rate", err.msg);
	if (hib_power_read(p->dir, &p->now, &err) < 0)
		tlog(ctl, HIB_LOG_WARN, "%s; taken as no battery", err.msg);
	p->since = boottime_usec();
}

/* After a suspend: read again, learn the rate from the two readings, keep it. */
static void sth_power_wake(struct control *ctl, struct sth_power *p, struct hib_sleep_power *sp,
			   bool restart_delay)
{
	struct hib_power before = p->now;
	uint64_t now = boottime_usec(), slept = now - p->since;
	struct hib_error err;

	if (hib_power_read(p->dir, &p->now, &err) < 0)
		tlog(ctl, HIB_LOG_WARN, "%s; taken as no battery", err.msg);
	if (hib_rate_learn(&p->rates, &before, &p->now, slept) > 0 &&
	    hib_rate_save(p->rate_path, &p->rates, &err) < 0)
		tlog(ctl, HIB_LOG_WARN, "%s", err.msg);
	sp->asleep_usec = restart_delay ? 0 : sp->asleep_usec + slept;
	p->since = now;
}

/* One step as decided; the hibernation's exit code into *@rc. */
static enum hib_sleep_result run_step(struct control *ctl, struct cycle_request *req,
				      const struct hib_sleep_conf *sc,
				      const struct hib_sleep_next *n, int *rc)
{
	if (n->action != HIB_SLEEP_HIBERNATE)
		return suspend_step(ctl, req->slice, sc, n->step, n->alarm_usec);
	req->sleep_step = n->step;
	*rc = hibernate_cycle(ctl, req);
	return *rc == EXIT_FAILURE ? HIB_SLEEP_FAILED : HIB_SLEEP_OK;
}

static int run_steps(struct control *ctl, struct cycle_request *req, struct hib_sleep_state *st,
		     const struct hib_sleep_conf *sc)
{
	struct sth_power pw = { 0 };
	struct hib_sleep_next n;
	int rc = EXIT_SUCCESS;

	if (st->op == HIB_SLEEP_OP_SUSPEND_THEN_HIBERNATE) {
		sth_power_init(ctl, &pw);
		st->sp = (struct hib_sleep_power){ .power = &pw.now, .rates = &pw.rates };
	}
	for (;;) {
		hib_sleep_decide(st, sc, &n);
		if (n.msg[0] && n.msg_error)
			say(ctl, "%s", n.msg);
		else if (n.msg[0])
			tlog(ctl, HIB_LOG_PROGRESS, "%s", n.msg);
		if (n.action == HIB_SLEEP_DONE)
			return n.failed ? EXIT_FAILURE : rc;
		pw.since = boottime_usec();
		st->result = run_step(ctl, req, sc, &n, &rc);
		st->last = n.action;
		if (pw.on && n.action == HIB_SLEEP_SUSPEND)
			sth_power_wake(ctl, &pw, &st->sp, n.restart_delay);
		/* A stop asked: after a suspend, nothing was saved; after our cycle, its word. */
		if (run_stop_signal)
			return n.action == HIB_SLEEP_HIBERNATE ? rc : run_interrupted_exit(ctl);
	}
}

int systemd_sleep(struct control *ctl)
{
	_cleanup_(user_slice_thaw) struct user_slice slice = { .ctl = ctl };
	struct cycle_request req = { .slice = &slice };
	struct hib_sleep_state st = { .last = HIB_SLEEP_START };
	struct hib_sleep_conf sc;
	struct hib_error err;
	const char *why;

	run_catch_stop_signals();
	if (hib_sleep_op_parse(ctl->sleep_op, &st.op) < 0)
		return EXIT_FAILURE;
	if (hib_sleep_conf_load(hib_test_knob("HIBERNATE_SLEEP_CONF_ROOT"), &sc, &err) < 0) {
		say(ctl, "%s; nothing was done (fix the file: systemd-sleep.conf(5))", err.msg);
		return EXIT_FAILURE;
	}
	why = hib_sleep_disallowed(&sc, (int)st.op);
	if (why) {
		say(ctl, "%s: sleep.conf says %s, as systemd-sleep refuses it; nothing was done",
		    hib_sleep_op_name(st.op), why);
		return EXIT_FAILURE;
	}
	req.powerdown_set =
		hib_sleep_powerdown(st.op, &sc, config_key_set(ctl, "powerdown"), &req.powerdown);
	if (st.op == HIB_SLEEP_OP_SUSPEND_THEN_HIBERNATE && can_hibernate(ctl) < 0)
		return EXIT_FAILURE;
	return run_steps(ctl, &req, &st, &sc);
}
