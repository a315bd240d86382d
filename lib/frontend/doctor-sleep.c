// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * doctor's sleep line: what suspend-then-hibernate would do now, planned as
 * the sleep operations plan it (lib/frontend/sleep.c).
 */
#include <limits.h>

#include "frontend/battery.h"
#include "frontend/doctor-priv.h"
#include "frontend/sleep.h"

/* What suspend-then-hibernate would do now, with this machine's batteries. */
void doctor_check_sleep(struct doctor_ctx *c)
{
	char ps[PATH_MAX], rates[PATH_MAX], msg[900];
	struct hib_sleep_conf sc;
	struct hib_rate_store rs;
	struct hib_power p;
	struct hib_error err;

	if (hib_sleep_conf_load(c->in->root, &sc, &err) < 0) {
		doctor_report(c, HIB_DOCTOR_WARN, "sleep",
			      "%s: systemd and suspend-then-hibernate refuse "
			      "it (fix the file: systemd-sleep.conf(5))",
			      err.msg);
		return;
	}
	doctor_path(c, HIB_POWER_SUPPLY_DIR, ps, sizeof(ps));
	doctor_path(c, HIB_BATTERY_RATE_FILE, rates, sizeof(rates));
	if (hib_power_read(c->in->power_supply ? c->in->power_supply : ps, &p, &err) < 0)
		p = (struct hib_power){ .on_ac = true };
	if (hib_rate_load(c->in->rate_file ? c->in->rate_file : rates, &rs, &err) < 0)
		rs.n = 0;
	hib_sth_summary(&sc, &p, &rs, msg, sizeof(msg));
	doctor_report(c, HIB_DOCTOR_PASS, "sleep", "%s", msg);
}
