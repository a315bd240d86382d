// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * doctor and logind-setup: the checks and logind's part are the library's
 * (lib/frontend/doctor*.c, logind.c); here they are printed, and logind is
 * restarted when what it reads at start changed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "frontend/doctor.h"
#include "frontend/logind.h"
#include "frontend/systemd.h"
#include "tool.h"
#include "util/util.h"

static void doctor_line(enum hib_doctor_verdict v, const char *check, const char *msg, void *ud)
{
	static const char *const word[] = { "PASS", "WARN", "FAIL" };

	(void)ud;
	printf("%s  %-16s %s\n", word[v], check, msg);
}

static void doctor_input(const struct control *ctl, struct hib_doctor_input *in)
{
	struct hib_target_request req = target_request(ctl);

	static char rates[4096];
	const char *state = hib_test_knob("HIBERNATE_TEST_STATE_DIR");

	hib_doctor_input_from(&ctl->cfg, &req, hib_test_knob("HIBERNATE_DOCTOR_ROOT"), in);
	in->power_supply = hib_test_knob("HIBERNATE_TEST_POWER_SUPPLY");
	if (state) {
		snprintf(rates, sizeof(rates), "%s/battery-rate", state);
		in->rate_file = rates;
	}
}

int do_doctor(struct control *ctl)
{
	static const char *const word[] = { "SKIP", "PASS", "WARN" };
	struct hib_doctor_input in;
	enum hib_logind_verdict v;
	char msg[1024];
	int worst;

	doctor_input(ctl, &in);
	worst = hib_doctor(&in, doctor_line, NULL);
	v = hib_logind_doctor(in.root, hib_test_knob("HIBERNATE_DOCTOR_LOGIND"),
			      worst == HIB_DOCTOR_FAIL, msg, sizeof(msg));
	printf("%s  %-16s %s\n", word[v], "logind", msg);
	fflush(stdout);
	return worst == HIB_DOCTOR_FAIL ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* logind reads the file when it starts; at boot it has not yet. */
static void logind_restart(struct control *ctl)
{
	static const char *const args[] = { "--no-block", "try-restart", "systemd-logind.service",
					    NULL };
	struct hib_error err;

	if (access("/run/systemd/system", F_OK) < 0)
		return;
	if (hib_systemctl(args, NULL, 0, &err) != 0)
		say(ctl, "logind: systemctl try-restart systemd-logind.service failed");
}

int do_logind_setup(struct control *ctl)
{
	struct hib_doctor_input in;
	struct hib_logind_setup ls;
	struct hib_error err;

	doctor_input(ctl, &in);
	if (hib_logind_setup(&in, &ls, &err) < 0) {
		say(ctl, "%s", err.msg);
		return EXIT_FAILURE;
	}
	if (ls.target)
		say(ctl,
		    "logind: doctor passes: /sys/power/resume names %s, and %s tells "
		    "systemd-logind %s",
		    hib_target_name(ls.target), HIB_LOGIND_ENV_PATH, HIB_LOGIND_ENV_LINE);
	else
		say(ctl, "logind: doctor fails (%s: %s): logind is left to its own checks",
		    ls.fail.check, ls.fail.msg);
	hib_target_close(ls.target);
	if (ls.changed && !in.root)
		logind_restart(ctl);
	return EXIT_SUCCESS;
}
