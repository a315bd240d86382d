#!/bin/sh
# Which target hibernate takes when no --device is given, in the initramfs
# (no udev: no /dev/disk/by-*, tags are found by probing).  vda1 is a swap
# partition labelled "hibswap" in a GPT partition named "swap".
#   boot 1 (resume=PARTUUID=<vda1's>): `hibernate status` names vda1 (the
#          command line); with /etc/hibernate.conf "device = /dev/vda2" it
#          names vda2 (the file beats the command line); --device beats the
#          file; the file's device as PARTLABEL=, as MAJ:MIN and as the
#          kernel's hex device number
#   boot 2 (no resume=): swapon vda1: status names it (the one active swap
#          partition); a second active swap area: refused, naming the ways
#          to choose; back to one: the workload, then plain `hibernate -v`
#   boot 3 (resume=LABEL=hibswap): plain `hibernate resume` restores boot 2
#          (the label is still found while the image is on the partition);
#          the resumed world hibernates again
#   boot 4 (resume=LABEL=hibswap): plain `hibernate invalidate` drops that
#          image: status says none, the swap area is SWAPSPACE2 and swaps,
#          `hibernate resume` finds nothing
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
WORKLOAD_MB=${WORKLOAD_MB:-32}
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh

[ -x /bin/hibernate ] || fatal "/bin/hibernate missing from the initramfs"
[ -e /etc/hibernate.conf ] && fatal "/etc/hibernate.conf exists before the scenario wrote one"

# pick NAME [ARGS...]: `hibernate status ARGS`; NAME_rc its exit status,
# NAME_target the target it named ("target:" line), its console output
# between "mark=NAME" and "NAME_rc=".
pick() {
	name=$1
	shift
	say mark "$name"
	hibernate status "$@" >/run/pick.out 2>&1
	rc=$?
	sed 's/^/  /' /run/pick.out
	say "${name}_rc" "$rc"
	say "${name}_target" "$(sed -n 's/^target: *//p' /run/pick.out)"
}

conf() {
	printf 'device = %s\n' "$1" >/etc/hibernate.conf
}

case $1 in
1)
	say cmdline "$(cat /proc/cmdline)"
	pick cmdline
	conf /dev/vda2
	pick conf_dev
	pick option --device LABEL=hibswap
	conf PARTLABEL=swap
	pick conf_partlabel
	devnum=$(cat /sys/class/block/vda1/dev)
	conf "$devnum"
	pick conf_devnum
	# The kernel's hex dev_t, as resume= may give it: 254:1 is fe01.
	maj=${devnum%:*} min=${devnum#*:}
	conf "$(printf '%x' $(((min & 255) | (maj << 8) | ((min & ~255) << 12))))"
	pick conf_hexdev
	rm -f /etc/hibernate.conf
	;;
2)
	say cmdline "$(cat /proc/cmdline)"
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	pick one_swap
	mkswap /dev/vda2 >/dev/null 2>&1 || fatal "mkswap /dev/vda2 failed"
	swapon /dev/vda2 || fatal "swapon /dev/vda2 failed"
	pick two_swaps
	swapoff /dev/vda2 || fatal "swapoff /dev/vda2 failed"
	workload_start
	workload_report
	dmesg_mark
	say mark hibernate
	hibernate -v
	resumed_or_exit $?
	workload_after_resume
	# A second image, for boot 4 to throw away.
	say mark hibernate2
	hibernate -v
	say hibernate2_rc $?
	;;
3)
	say cmdline "$(cat /proc/cmdline)"
	dmesg_mark
	say mark resume
	resume_step
	;;
4)
	image() { hibernate status 2>/dev/null | sed -n 's/^image: *//p'; }
	say image_before "$(image)"
	say mark invalidate
	hibernate invalidate
	say invalidate_rc $?
	say image_after "$(image)"
	say signature "$(swap_signature /dev/vda1)"
	resume_step
	if swapon /dev/vda1; then say swapon ok; else say swapon "failed (exit $?)"; fi
	;;
*)
	fatal "target-choice has no boot $1"
	;;
esac
