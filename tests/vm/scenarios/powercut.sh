#!/bin/sh
# Power cuts while hibernating and while resuming (the host kills QEMU).
# Every boot does the same, as the host's text on vda2 says
# (tests/vm/faults.sh, powercut_run):
#   1. `hibernate resume` (with HIBERNATE_TEST_PAUSE=resume_pause if set):
#      this checks the previous boot's cut; it resumes the image if one is
#      complete, else finds none (or discards a damaged one)
#   2. swapon, the workload
#   3. while the text says hib=run: `hibernate` (HIBERNATE_TEST_PAUSE=
#      hib_pause if set); the host may cut the power during it.  Resumed
#      (on a later boot's console): the workload's state, then step 3 again
#      with that boot's text.
# shellcheck disable=SC2154 # token, hash, now: set by workload.sh
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
# shellcheck disable=SC2034 # read by workload.sh
WORKLOAD_MB=8
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh
# shellcheck source=../guest/faults-guest.sh
. /lib/hibtest/faults-guest.sh

# HIBERNATE_TEST_PAUSE: the test build reads it, the shipped one does not.
use_test_binary
say step "$(fault_get step)"
say signature_before "$(swap_signature /dev/vda1)"
HIBERNATE_TEST_PAUSE=$(fault_get resume_pause)
export HIBERNATE_TEST_PAUSE
say mark resume
fault_resume_console
unset HIBERNATE_TEST_PAUSE
fault_swapon
workload_start
while [ "$(fault_get hib)" = run ]; do
	HIBERNATE_TEST_PAUSE=$(fault_get hib_pause)
	export HIBERNATE_TEST_PAUSE
	say hib_token "$token"
	say hib_step "$(fault_get step)"
	fault_hibernate || break
	unset HIBERNATE_TEST_PAUSE
	# Resumed: on the console of a later boot, whose text says what next.
	if [ "$now" = "$hash" ]; then say hash_ok 1; else say hash_ok 0; fi
	say step "$(fault_get step)"
done
