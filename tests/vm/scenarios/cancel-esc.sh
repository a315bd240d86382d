#!/bin/sh
# Esc on the console while the image is written (the host types it when the
# progress line appears; the disk is throttled so that the write lasts).
#   boot 1: `hibernate`: Esc cancels (exit 3), the system keeps running with
#           no image; then `hibernate --no-cancel`: Esc is ignored, the cycle
#           completes and powers off
#   boot 2: resume of the second cycle's image
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
WORKLOAD_MB=${WORKLOAD_MB:-32}
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh

[ -x /bin/hibernate ] || fatal "/bin/hibernate missing from the initramfs"

case $1 in
1)
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	workload_start
	workload_report
	dmesg_mark
	say mark cancel
	hibernate
	say cancel_rc "$?"
	say mark cancel_checks
	workload_recheck
	say disk_signature "$(disk_signature /dev/vda1)"
	say image "$(hibernate status --device /dev/vda1 2>/dev/null | sed -n 's/^image: *//p')"

	dmesg_mark
	say mark nocancel
	hibernate --no-cancel
	resumed_or_exit $?
	say mark resumed_world
	workload_after_resume
	;;
2)
	dmesg_mark
	say mark resume
	resume_step
	;;
*)
	fatal "cancel-esc has no boot $1"
	;;
esac
