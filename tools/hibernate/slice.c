// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * user.slice frozen around a sleep, as systemd-sleep 256+ does, and thawed
 * after it: for the cycle run by systemd's hibernate and for each suspend of
 * suspend-then-hibernate.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frontend/sleep.h"
#include "frontend/systemd.h"
#include "tool.h"

static const char *user_slice_unfreezable(void)
{
	struct hib_user_slice_facts f = { .env = getenv("SYSTEMD_SLEEP_FREEZE_USER_SESSIONS") };
	struct hib_error err;
	char out[512];

	if (hib_systemctl((const char *[]){ "--version", NULL }, out, sizeof(out), &err) == 0)
		f.version = out;
	f.freezer = access("/sys/fs/cgroup/user.slice/cgroup.freeze", F_OK) == 0;
	return hib_user_slice_unfreezable(&f);
}

/* The user sessions stand still around the sleep, so nothing of theirs runs
 * between the hooks and the snapshot, nor after a wake until the hooks have
 * undone. Only under a systemd sleep unit: a user running hibernate from a
 * session would freeze itself. */
void user_slice_freeze(struct user_slice *u)
{
	struct hib_error err;
	const char *why;
	int r;

	if (u->frozen)
		return;
	why = user_slice_unfreezable();
	if (why) {
		tlog(u->ctl, HIB_LOG_INFO, "user.slice not frozen: %s", why);
		return;
	}
	r = hib_systemctl((const char *[]){ "freeze", "user.slice", NULL }, NULL, 0, &err);
	if (r != 0) {
		/* systemd-sleep goes on too: a sleep matters more than the freeze. */
		tlog(u->ctl, HIB_LOG_WARN, "user.slice could not be frozen (systemctl freeze: %s)",
		     r < 0 ? strerror(-r) : "failed");
		return;
	}
	u->frozen = true;
	tlog(u->ctl, HIB_LOG_INFO, "user.slice frozen");
}

/* The one way back: after each sleep and at the end of the run (_cleanup_). */
void user_slice_thaw(struct user_slice *u)
{
	struct hib_error err;

	if (!u->frozen)
		return;
	u->frozen = false;
	if (hib_systemctl((const char *[]){ "thaw", "user.slice", NULL }, NULL, 0, &err) != 0)
		say(u->ctl, "user.slice could not be thawed: run systemctl thaw user.slice");
	else
		tlog(u->ctl, HIB_LOG_INFO, "user.slice thawed");
}
