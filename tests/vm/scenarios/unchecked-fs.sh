#!/bin/sh
# Filesystems resume cannot check, and a dual boot's vfat.
#   /home: ext4 in a dm-linear mapping over vda3 (at 1 MiB: what an LV is
#   to the kernel; dmsetup, as lvm would make it: lvm costs seconds a start
#   under TCG); the ESP: vfat on vda2 (the host cut vda2 in two). Both mounted at hibernate.
#   boot 1: both mounted, a file on each, workload, `hibernate`
#   boot 2: the other system: the ESP mounted, written, unmounted; no resume
#   boot 3: unchecked-filesystems = allow, /home's mapping not made: resume
#           refuses (the vfat changed), /home logged as not checked; then
#           both mounted, a new image
#   boot 4: the default, /home's mapping not made: resume refuses, naming
#           /home's filesystem and the fix; then both mounted, a new image
#   boot 5: allow, /home's mapping not made: resumed (the ESP left alone
#           passes its check); /home and the ESP usable
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
# shellcheck disable=SC2034 # read by workload.sh
WORKLOAD_MB=8
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh
# shellcheck source=../guest/faults-guest.sh
. /lib/hibtest/faults-guest.sh

home=/mnt/home
esp=/mnt/esp
mkdir -p $home $esp

open_home() {
	dmsetup create hibhome --noudevrules --noudevsync \
		--table "0 131072 linear /dev/vda3 2048" || fatal "dmsetup create hibhome failed"
	dmsetup mknodes hibhome || fatal "dmsetup mknodes hibhome failed"
}

mount_all() {
	open_home
	mount -t ext4 /dev/mapper/hibhome $home || fatal "mount /home failed"
	mount -t vfat /dev/vda2 $esp || fatal "mount the ESP failed"
}

allow() {
	echo 'unchecked-filesystems = allow' >/etc/hibernate.conf
}

hibernate_again() {
	rm -f /etc/hibernate.conf
	mount_all
	fault_swapon
	workload_start
	workload_report
}

case $1 in
1)
	mount_all
	echo "written in boot 1" >$home/boot1
	echo boot1 >$esp/boot1
	sync
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	workload_start
	workload_report
	fault_hibernate || exit 1
	;;
2)
	mount -t vfat /dev/vda2 $esp || fatal "mount the ESP failed"
	echo boot2 >$esp/boot2
	sync
	umount $esp || fatal "umount the ESP failed"
	say signature "$(swap_signature /dev/vda1)"
	;;
3)
	allow
	fault_resume
	hibernate_again
	say esp_files "$(cat $esp/boot1 $esp/boot2 2>&1 | tr '\n' ' ' | sed 's/ $//')"
	fault_hibernate || exit 1
	;;
4)
	fault_resume
	hibernate_again
	say home_file "$(cat $home/boot1 2>&1)"
	fault_hibernate || exit 1
	# The resumed world (boot 5): both still mounted and usable.
	say home_after "$(cat $home/boot1 2>&1)"
	echo after >$home/after && sync && say home_write ok
	echo after >$esp/after && sync && say esp_write ok
	;;
5)
	allow
	say mark resume
	fault_resume_console
	;;
*) fatal "unchecked-fs has no boot $1" ;;
esac
