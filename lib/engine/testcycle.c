// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hibernate --test: the image is written (hib_suspend says
 * HIB_SUSPEND_TEST_WRITTEN) and the same program restores it at once
 * (hib_resume). In between every other process is stopped: what they did
 * would be on disk but not in the restored memory. Both ends of that stop
 * are here.
 */
#include <signal.h>

#include "engine/engine.h"

void engine_test_cycle_stop_others(const struct hib_snapshot *snap)
{
	/* Sent while they are frozen: each stops as it thaws. A device that freezes
	 * nothing real has no others to stop. */
	if (hib_snapshot_can(snap, HIB_SNAP_CAP_FREEZES_SYSTEM))
		kill(-1, SIGSTOP);
}

void hib_test_cycle_abort(void)
{
	kill(-1, SIGCONT);
}
