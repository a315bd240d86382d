#!/bin/sh
# An image that no longer matches the disk must not be restored.
#   boot 1: ext4 on vda2 mounted, a file written, workload, `hibernate`
#   boot 2: booted without resuming: vda2 mounted, written, unmounted (no
#           swapon and no `hibernate resume`, so the image stays)
#   boot 3: `hibernate resume` must refuse (the filesystem changed), discard
#           the image; both files intact; then a new image, vda2 mounted
#   boot 4: `noresume` on the kernel command line: `hibernate resume` must
#           discard that image; then (control) vda2 mounted, a third image
#   boot 5: the third image resumes (the filesystem check passes a
#           filesystem left alone; the discarded one does not come back)
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
# shellcheck disable=SC2034 # read by workload.sh
WORKLOAD_MB=8
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh
# shellcheck source=../guest/faults-guest.sh
. /lib/hibtest/faults-guest.sh

mnt=/mnt/data
mkdir -p $mnt

case $1 in
1)
	mount -t ext4 /dev/vda2 $mnt || fatal "mount /dev/vda2 failed"
	echo "written in boot 1" >$mnt/boot1
	sync
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	workload_start
	workload_report
	fault_hibernate || exit 1
	;;
2)
	say signature_before "$(swap_signature /dev/vda1)"
	mount -t ext4 /dev/vda2 $mnt || fatal "mount /dev/vda2 failed"
	t2=$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')
	echo "$t2" >$mnt/boot2
	sync
	umount $mnt || fatal "umount failed"
	say boot2_token "$t2"
	say signature "$(swap_signature /dev/vda1)"
	;;
3)
	fault_resume
	fault_status
	mount -t ext4 /dev/vda2 $mnt || fatal "mount /dev/vda2 failed after the refused resume"
	say boot1_file "$(cat $mnt/boot1 2>&1)"
	say boot2_file "$(cat $mnt/boot2 2>&1)"
	fault_swapon
	workload_start
	workload_report
	fault_hibernate || exit 1
	;;
4)
	say signature_before "$(swap_signature /dev/vda1)"
	fault_resume
	fault_status
	fault_swapon
	mount -t ext4 /dev/vda2 $mnt || fatal "mount /dev/vda2 failed"
	echo "written in boot 4" >$mnt/boot4
	sync
	workload_start
	workload_report
	fault_hibernate || exit 1
	# The resumed world (boot 5): the filesystem is still mounted and usable.
	say boot4_file "$(cat $mnt/boot4 2>&1)"
	echo "written after the resume" >$mnt/after && sync && say fs_write ok
	;;
5)
	fault_resume
	;;
*) fatal "stale-image has no boot $1" ;;
esac
