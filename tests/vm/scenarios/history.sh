#!/bin/sh
# The history of every cycle (hibernate status, /var/lib/hibernate/history on
# vda2, an ext4 made by the host: the state directory outlives each boot here
# as /var does on a real system).
#   boot 1: Esc during the write: cancelled (the host types it); then a
#           cycle that powers off
#   boot 2: the host has damaged that image's header: `hibernate resume`
#           refuses it and leaves its record in /run/hibernate/resume-result
#           (the initramfs's handover: /run is what reaches the real root);
#           vda2 mounted, `hibernate status` moves it into the history; a
#           third cycle
#   boot 3: resumes it: the resumed process adds its record with the load
#           figures; status lists the three, newest first
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
WORKLOAD_MB=${WORKLOAD_MB:-8}
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh

STATE=/var/lib/hibernate

state_mount() {
	mkdir -p "$STATE"
	mount -t ext4 /dev/vda2 "$STATE" || fatal "mount /dev/vda2 on $STATE failed"
}

# Every line of status's history table, then of the file itself.
history_report() {
	hibernate status --device /dev/vda1 >/run/status.out 2>&1
	say status_rc "$?"
	sed -n '/^history/,$p' /run/status.out | while IFS= read -r l; do say status_line "$l"; done
	while IFS= read -r l; do say history_line "$l"; done <"$STATE/history"
}

case $1 in
1)
	state_mount
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	workload_start
	workload_report
	say mark cancel
	hibernate
	say cancel_rc "$?"
	say mark hibernate
	hibernate
	resumed_or_exit $?
	workload_after_resume
	;;
2)
	say mark resume
	hibernate resume
	say refused_rc "$?"
	say handover "$(cat /run/hibernate/resume-result 2>/dev/null)"
	state_mount
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	workload_start
	workload_report
	hibernate status --device /dev/vda1 >/dev/null 2>&1
	if [ -e /run/hibernate/resume-result ]; then say handover_after present; else say handover_after gone; fi
	say mark hibernate
	hibernate
	resumed_or_exit $?
	workload_after_resume
	history_report
	;;
3)
	say mark resume
	resume_step
	;;
*) fatal "history has no boot $1" ;;
esac
