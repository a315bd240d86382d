#!/bin/sh
# Hibernate into a swap file and resume from it by the kernel command line
# alone.  Also the body of swapfile-xfs (which sets SWAPFILE_FS=xfs).
#   boot 1: mount vda2, dd + mkswap + swapon /mnt/swapfile, `hibernate offset`
#           (the host reads its resume= lines for boot 2's cmdline),
#           workload, `hibernate --device /mnt/swapfile`
#   boot 2: resume=UUID=... resume_offset=N on the cmdline, vda2 NOT mounted:
#           plain `hibernate resume` must find the image inside the file
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
# A small workload: the swap file (and vda2) need not hold 200 MB.
WORKLOAD_MB=${WORKLOAD_MB:-32}
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh
# shellcheck source=../guest/swapfile.sh
. /lib/hibtest/swapfile.sh

fs=${SWAPFILE_FS:-ext4}
boot=$1
[ -x /bin/hibernate ] || fatal "/bin/hibernate missing from the initramfs"

case $boot in
1)
	mount_vda2 "$fs"
	make_swapfile 160
	say file_sig "$(swap_signature "$SWAPFILE")"
	report_offset "$SWAPFILE"
	hibernate_into "$SWAPFILE"
	;;
2)
	resume_from_cmdline
	;;
*)
	fatal "swapfile-$fs has no boot $boot"
	;;
esac
