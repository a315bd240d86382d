#!/bin/sh
# /etc/hibernate.conf names the swap partition, which is NOT active.
#   boot 1: without auto-swapon, `hibernate` refuses (telling to swapon or to
#           set auto-swapon) and writes nothing; with `auto-swapon = yes`,
#           `hibernate --test` turns vda1 on for its cycle and off after it,
#           then `hibernate` turns it on and hibernates
#   boot 2: resume; in the resumed world vda1 is off again (/proc/swaps)
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
WORKLOAD_MB=${WORKLOAD_MB:-32}
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh

[ -x /bin/hibernate ] || fatal "/bin/hibernate missing from the initramfs"

# vda1 in /proc/swaps? (1 or 0)
vda1_active() {
	if grep -q '^/dev/vda1 ' /proc/swaps; then echo 1; else echo 0; fi
}

case $1 in
1)
	workload_start
	workload_report
	say active_before "$(vda1_active)"
	printf 'device = /dev/vda1\n' >/etc/hibernate.conf
	say head_before "$(dev_head_sha /dev/vda1)"
	dmesg_mark
	say mark refused
	hibernate
	say refused_rc "$?"
	say refused_froze "$(froze_since_mark)"
	say head_after "$(dev_head_sha /dev/vda1)"
	say active_after_refusal "$(vda1_active)"

	printf 'device = /dev/vda1\nauto-swapon = yes\n' >/etc/hibernate.conf
	dmesg_mark
	say mark test_cycle
	hibernate --test
	say test_rc "$?"
	say active_after_test "$(vda1_active)"

	dmesg_mark
	say mark hibernate
	hibernate
	resumed_or_exit $?
	workload_after_resume
	say active_after_resume "$(vda1_active)"
	say disk_signature "$(disk_signature /dev/vda1)"
	;;
2)
	dmesg_mark
	say mark resume
	resume_step
	;;
*)
	fatal "auto-swapon has no boot $1"
	;;
esac
