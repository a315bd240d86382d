#!/bin/sh
# Hibernate to a swap partition with our binary and resume from it.
#   boot 1: swapon vda1, workload, `hibernate -v` (powers the VM off); in
#           the resumed world the script continues right after it
#   boot 2: `hibernate resume` first thing: must restore boot 1's world
#   boot 3: `hibernate resume` again: must find no image, the swap area must
#           be a usable SWAPSPACE2 area again
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh

boot=$1
# The demo (tests/vm/demo) asks for a few counter ticks and the image size.
ticks=0 status=0
# shellcheck disable=SC2013 # words, not lines
for word in $(cat /proc/cmdline); do
	case $word in
	hibtest.ticks=*) ticks=${word#*=} ;;
	hibtest.status=*) status=${word#*=} ;;
	esac
done

[ -x /bin/hibernate ] || fatal "/bin/hibernate missing from the initramfs"

case $boot in
1)
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	workload_start
	workload_report "$ticks"
	dmesg_mark
	say mark hibernate
	hibernate -v
	# Exit 0: we are in the resumed world (on boot 2's console).  Anything
	# else: hibernate failed and this boot goes on.
	resumed_or_exit $?
	workload_after_resume
	hibernate status --device /dev/vda1 2>&1 | sed 's/^/  status: /'
	;;
2)
	# Before anything touches the disk: no swapon, no mount.  (The demo's
	# `hibernate status` only reads, to show the image size.)
	if [ "$status" = 1 ]; then
		hibernate status --device /dev/vda1 >/run/status 2>&1
		sed 's/^/  status: /' /run/status
		say image_bytes "$(sed -n 's/^image-bytes: *//p' /run/status)"
		say stream_bytes "$(sed -n 's/^stream-bytes: *//p' /run/status)"
	fi
	dmesg_mark
	say mark resume
	resume_step --device /dev/vda1
	hibernate status --device /dev/vda1 2>&1 | sed 's/^/  status: /'
	;;
3)
	resume_step --device /dev/vda1
	say signature "$(swap_signature /dev/vda1)"
	if swapon /dev/vda1; then say swapon ok; else say swapon "failed (exit $?)"; fi
	;;
*)
	fatal "swap-partition has no boot $boot"
	;;
esac
