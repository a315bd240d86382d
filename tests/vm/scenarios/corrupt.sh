#!/bin/sh
# Damage to a written image must be found before anything is restored.
#   boot 1: swapon vda1, a small workload, `hibernate` (powers off)
#   boot 2: the host planned N changes to the image (tests/vm/tools/hibimg:
#           bytes, sectors, lost and misdirected pages, in the signature
#           tail, the header, the map and the data blocks) and put them on
#           vda2; for each: apply it, `hibernate resume` (must refuse and put
#           SWAPSPACE2 back), undo it.  Then the image, untouched again, must
#           resume: boot 1's world continues on boot 2's console.
# corrupt-full runs the same with more trials.
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
# shellcheck disable=SC2034 # read by workload.sh
WORKLOAD_MB=8
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh
# shellcheck source=../guest/faults-guest.sh
. /lib/hibtest/faults-guest.sh

case $1 in
1)
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	workload_start
	workload_report
	say mark hibernate
	hibernate
	rc=$?
	if [ $rc -ne 0 ]; then
		say hibernate_rc "$rc"
		exit 1
	fi
	workload_after_resume
	;;
2)
	fault_trials
	# The pristine image: this must restore boot 1's world (and not return).
	say mark resume
	hibernate resume --device /dev/vda1
	say resume_rc "$?"
	say resumed 0
	;;
*) fatal "corrupt has no boot $1" ;;
esac
