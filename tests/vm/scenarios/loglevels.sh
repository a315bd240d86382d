#!/bin/sh
# Log levels, the kernel log and --verify.
#   boot 1: swapon, workload; `hibernate --test --loglevel 0` (a whole cycle,
#           restored at once: nothing may appear on the console); then
#           `hibernate --loglevel 5 --verify` (debug lines, the verify line)
#   boot 2: resume; the resumed world's dmesg holds the cycle's
#           "hibernate:" lines (those logged before the snapshot)
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
WORKLOAD_MB=${WORKLOAD_MB:-32}
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh

[ -x /bin/hibernate ] || fatal "/bin/hibernate missing from the initramfs"

kmsg_lines() {
	dmesg | grep -c 'hibernate: '
}

case $1 in
1)
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	workload_start
	workload_report
	say kmsg_before_quiet "$(kmsg_lines)"
	say mark quiet
	hibernate --test --loglevel 0
	rc=$?
	say quiet_rc "$rc"
	say kmsg_after_quiet "$(kmsg_lines)"
	workload_recheck

	dmesg_mark
	say mark debug
	hibernate --loglevel 5 --verify
	resumed_or_exit $?
	say mark resumed_world
	workload_after_resume
	dmesg | grep 'hibernate: ' | sed 's/^/  kmsg: /'
	say kmsg_pipeline "$(dmesg | grep -c 'hibernate: pipeline:')"
	say kmsg_phase "$(dmesg | grep -c 'hibernate: phase ')"
	;;
2)
	dmesg_mark
	say mark resume
	resume_step
	;;
*)
	fatal "loglevels has no boot $1"
	;;
esac
