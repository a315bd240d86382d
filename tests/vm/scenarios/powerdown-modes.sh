#!/bin/sh
# --powerdown shutdown, reboot, platform (ACPI S4), suspend (to RAM and disk),
# one after the other in the same world; each resumed before the next.
#   boot 1: swapon, workload, `hibernate --powerdown shutdown`
#   boot 2: resume -> `hibernate --powerdown reboot`
#   boot 3: resume -> `hibernate --powerdown platform`
#   boot 4: resume -> `hibernate --powerdown suspend`: the host wakes the
#           sleeping VM (QEMU monitor: system_wakeup), the same boot goes on
# The host boots every time with ACPI S3 and S4 enabled (PIIX4_PM).  Boots
# 2-4 print their `hibernate status` before the resume.
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
	for mode in shutdown reboot platform suspend; do
		# The kernel's info lines on the console too: ACPI names the sleep
		# state it enters ("Preparing to enter system sleep state S4").
		dmesg -n 7
		dmesg_mark
		say mark "pd-$mode"
		hibernate --powerdown "$mode"
		rc=$?
		dmesg -n 4
		resumed_or_exit $rc
		say mark "back-$mode"
		workload_after_resume
		say disk_signature "$(disk_signature /dev/vda1)"
		say image "$(hibernate status --device /dev/vda1 2>/dev/null | sed -n 's/^image: *//p')"
	done
	;;
2 | 3 | 4)
	say image_before "$(hibernate status --device /dev/vda1 2>/dev/null | sed -n 's/^image: *//p')"
	dmesg_mark
	say mark resume
	resume_step
	;;
*)
	fatal "powerdown-modes has no boot $1"
	;;
esac
