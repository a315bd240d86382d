#!/bin/sh
# The downgrade past our format: the kernel's own image where encryption is
# required.
#   boot 1: nothing configured: swapon vda1, workload, the KERNEL's own
#           hibernation (echo disk > /sys/power/state): S1SUSPEND on vda1,
#           as an offline attacker with the same kernel build can write it
#   boot 2: encrypt = yes and a key file in /etc/hibernate.conf (so
#           require-encryption is on by default); what an initramfs does,
#           in the order ours must run: `hibernate resume` (resume= from the
#           command line), then the kernel's resume for the same device
#           (echo MAJ:MIN > /sys/power/resume, as Debian's local-premount/
#           resume and dracut's resume module do).  Nothing may be restored,
#           and vda1 must be a swap area again, with its uuid, that swapon
#           takes.
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
# shellcheck disable=SC2034 # read by workload.sh
WORKLOAD_MB=8
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh
# shellcheck source=../guest/faults-guest.sh
. /lib/hibtest/faults-guest.sh

# swap_header: vda1's swap header, its uuid, and a hash of page 0 but the
# last 256 bytes (where the kernel's image and ours keep their signatures).
swap_header() {
	say uuid "$(dd if=/dev/vda1 bs=1 skip=1036 count=16 2>/dev/null | od -An -tx1 | tr -d ' \n')"
	say header_hash "$(dd if=/dev/vda1 bs=3840 count=1 2>/dev/null | sha256sum | cut -d' ' -f1)"
}

case $1 in
1)
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	swap_header
	workload_start
	workload_report
	echo shutdown >/sys/power/disk
	dmesg_mark
	say mark hibernate
	echo disk >/sys/power/state
	# Here either a resume restored us (on boot 2's console: the downgrade
	# worked) or the kernel's hibernation failed.
	# shellcheck disable=SC2320 # the write's status is the point
	resumed_or_exit $?
	workload_after_resume
	;;
2)
	say signature_before "$(swap_signature /dev/vda1)"
	fault_make_keyfile
	printf 'encrypt = yes\nkey-file = %s\n' "$FAULT_KEYFILE" >/etc/hibernate.conf
	# The initramfs step: the device from resume= on the command line.
	t0=$(uptime_ms)
	hibernate resume >/run/fault.resume 2>&1
	rc=$?
	t1=$(uptime_ms)
	sed 's/^/  | /' /run/fault.resume
	say resume_rc "$rc"
	say resume_ms $((t1 - t0))
	say resume_msg "$(_fault_msg /run/fault.resume)"
	# The distribution's step, after ours.
	dmesg_mark
	devno=$(cat /sys/class/block/vda1/dev)
	echo "$devno" >/sys/power/resume
	# shellcheck disable=SC2320 # the write's status is the point
	say kernel_resume_rc "$?"
	# Still here: nothing was restored.
	say resumed 0
	dump_kernel_log
	if [ -e /run/counter ]; then say fresh no; else say fresh yes; fi
	say signature "$(swap_signature /dev/vda1)"
	swap_header
	fault_swapon
	;;
*) fatal "kernel-format-downgrade has no boot $1" ;;
esac
