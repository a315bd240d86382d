#!/bin/sh
# Hibernate into a plain image file (`hibernate prepare-file`) with no swap
# anywhere, and resume from it by the kernel command line alone.
#   boot 1: mount vda2 (ext4), prepare-file /mnt/hibimage (prints the resume=
#           lines the host reads), workload, `hibernate --device /mnt/hibimage`
#   boot 2: resume=UUID=... resume_offset=N on the cmdline, vda2 NOT mounted,
#           plain `hibernate resume`
# /proc/swaps must be empty at every step: swaps=0 lines.
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
WORKLOAD_MB=${WORKLOAD_MB:-32}
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh
# shellcheck source=../guest/swapfile.sh
. /lib/hibtest/swapfile.sh

IMAGE=/mnt/hibimage
boot=$1
[ -x /bin/hibernate ] || fatal "/bin/hibernate missing from the initramfs"

case $boot in
1)
	say swaps "$(swaps_count)"
	mount_vda2 ext4
	hibernate prepare-file "$IMAGE" 160 >/run/prepare.out 2>&1
	report_offset_output "$?" /run/prepare.out
	say file_sig "$(swap_signature "$IMAGE")"
	say file_mode "$(stat -c %a "$IMAGE")"
	settle_metadata
	workload_start
	workload_report
	say swaps "$(swaps_count)"
	dmesg_mark
	say mark hibernate
	hibernate --device "$IMAGE"
	resumed_or_exit $?
	workload_after_resume
	say swaps "$(swaps_count)"
	say status_after "$(status_line "$IMAGE" signature)"
	;;
2)
	say swaps "$(swaps_count)"
	resume_from_cmdline
	;;
*)
	fatal "plain-file has no boot $boot"
	;;
esac
