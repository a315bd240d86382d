#!/bin/sh
# `hibernate doctor`: all PASS on a good setup, then each check broken in
# turn.  Each round prints its lines as doc_ROUND=LINE and doc_ROUND_rc.
#   boot 1 (resume=/dev/vda1; vda2 is ext4):
#     good      vda1 active, no config                 -> PASS (initramfs WARN)
#     notswap   device = /dev/vda2 (ext4)              -> FAIL target
#     space     vda1 made a 64 MiB swap area           -> FAIL space
#     zram      only a zram swap active                -> FAIL swap-kind
#     fakegood  HIBERNATE_DOCTOR_ROOT: a copy of /proc's files, a
#               /dev/snapshot node, lockdown "[none]"   -> as good
#     lockdown  ... lockdown "[integrity]"             -> FAIL lockdown
#     nosnap    ... no /dev/snapshot                   -> FAIL snapshot-device
#   boot 2 (resume=/dev/vda2 resume_offset=1):
#     offset    device = a 64 MiB swap file on vda2, image-size = 32
#                                                      -> FAIL location (no
#                                                         initramfs record of a
#                                                         configured file),
#                                                         resume-offset
#   boot 3 (nohibernate):
#     nohib     vda1 active                            -> FAIL kernel-cmdline
#     notarget  no swap, no config                     -> FAIL target (too)
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh

[ -x /bin/hibernate ] || fatal "/bin/hibernate missing from the initramfs"

# doctor ROUND: run it, report its lines and exit status.
doctor() {
	say mark "doctor-$1"
	hibernate doctor >/run/doctor.out 2>&1
	rc=$?
	while IFS= read -r line; do
		say "doc_$1" "$line"
	done </run/doctor.out
	say "doc_$1_rc" "$rc"
}

# The kernel's lockdown state, as a real system shows it.
mkdir -p /sys/kernel/security
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
say lockdown_real "$(cat /sys/kernel/security/lockdown 2>/dev/null || echo none)"

case $1 in
1)
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	doctor good

	echo "device = /dev/vda2" >/etc/hibernate.conf
	doctor notswap
	rm /etc/hibernate.conf

	# A swap area of 64 MiB for 1 GiB of RAM (busybox mkswap DEV KBYTES).
	swapoff /dev/vda1
	mkswap /dev/vda1 65536 >/dev/null || fatal "mkswap /dev/vda1 65536 failed"
	swapon /dev/vda1 || fatal "swapon of the small /dev/vda1 failed"
	say small_swap_kib "$(awk '$1 == "/dev/vda1" { print $3 }' /proc/swaps)"
	doctor space
	swapoff /dev/vda1
	mkswap /dev/vda1 >/dev/null || fatal "mkswap /dev/vda1 failed"

	if [ ! -f /etc/hibtest/modules.zram ]; then
		say skip_zram "the kernel has no zram module"
	elif ! modprobe zram || ! echo 64M >/sys/block/zram0/disksize; then
		say skip_zram "zram could not be set up: modprobe zram or its disksize failed"
	else
		mkswap /dev/zram0 >/dev/null || fatal "mkswap /dev/zram0 failed"
		swapon /dev/zram0 || fatal "swapon /dev/zram0 failed"
		doctor zram
		swapoff /dev/zram0
	fi

	# A fake root: lockdown cannot be turned on in a running kernel without
	# Secure Boot, and /dev/snapshot cannot be taken away.
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	fake=/run/fake
	mkdir -p $fake/proc $fake/dev $fake/sys/kernel/security
	for f in cmdline swaps meminfo; do cat /proc/$f >$fake/proc/$f; done
	mknod $fake/dev/snapshot c 10 231 || fatal "mknod $fake/dev/snapshot failed"
	echo "[none] integrity confidentiality" >$fake/sys/kernel/security/lockdown
	# The shipped binary ignores HIBERNATE_DOCTOR_ROOT: the test build reads it.
	use_test_binary
	export HIBERNATE_DOCTOR_ROOT=$fake
	doctor fakegood
	echo "none [integrity] confidentiality" >$fake/sys/kernel/security/lockdown
	doctor lockdown
	echo "[none] integrity confidentiality" >$fake/sys/kernel/security/lockdown
	rm $fake/dev/snapshot
	doctor nosnap
	unset HIBERNATE_DOCTOR_ROOT
	;;
2)
	mount -t ext4 /dev/vda2 /mnt || fatal "mount -t ext4 /dev/vda2 /mnt failed"
	dd if=/dev/zero of=/mnt/swapfile bs=1M count=64 2>/dev/null || fatal "dd of /mnt/swapfile failed"
	chmod 600 /mnt/swapfile
	mkswap /mnt/swapfile >/dev/null || fatal "mkswap /mnt/swapfile failed"
	sync
	swapon /mnt/swapfile || fatal "swapon /mnt/swapfile failed"
	say file_offset "$(hibernate offset /mnt/swapfile | sed -n 's/^resume=\/dev.* resume_offset=//p')"
	# The 64 MiB file is room enough for an image of 32 MiB: only the
	# offset is wrong.
	printf 'device = /mnt/swapfile\nimage-size = 32\n' >/etc/hibernate.conf
	doctor offset
	;;
3)
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	doctor nohib
	swapoff /dev/vda1
	doctor notarget
	;;
*)
	fatal "doctor has no boot $1"
	;;
esac
