#!/bin/sh
# Swap files made the way cloud hibernation agents and many guides make them,
# `fallocate -l SIZE` + mkswap (unwritten extents), on ext4 and then on xfs:
#   boot 1 (ext4), boot 3 (xfs): mount vda2, fallocate + mkswap; an
#           fallocated file that is no swap file and a sparse (truncated) swap
#           file are refused by `hibernate offset` with their reasons;
#           swapon, `hibernate offset` (it counts the unwritten pages; the
#           host reads the resume= lines), /dev/vda2 at that offset seen as
#           the active swap file, doctor's target line, workload,
#           `hibernate --device /mnt/swapfile`
#   boot 2, boot 4: resume=UUID=... resume_offset=N on the cmdline, vda2 NOT
#           mounted: plain `hibernate resume`
# The host makes vda2 ext4 before boot 1 and xfs before boot 3.
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
WORKLOAD_MB=${WORKLOAD_MB:-32}
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh
# shellcheck source=../guest/swapfile.sh
. /lib/hibtest/swapfile.sh

boot=$1
[ -x /bin/hibernate ] || fatal "/bin/hibernate missing from the initramfs"

# refused KEY FILE: `hibernate offset FILE` must refuse it; its exit status
# and message (KEY_rc, KEY_msg) for the host.
refused() {
	hibernate offset "$2" >/run/refused.out 2>&1
	say "$1_rc" "$?"
	say "$1_msg" "$(paste -sd' ' /run/refused.out)"
}

# fallocated_cycle FS: boot 1's or boot 3's steps on vda2 made FS.
fallocated_cycle() {
	mount_vda2 "$1"
	fallocate -l 160M "$SWAPFILE" || fatal "fallocate of a 160 MB swap file failed"
	chmod 600 "$SWAPFILE"
	mkswap "$SWAPFILE" >/dev/null || fatal "mkswap $SWAPFILE failed"
	say file_sig "$(swap_signature "$SWAPFILE")"
	fallocate -l 8M /mnt/plain || fatal "fallocate of /mnt/plain failed"
	refused plain /mnt/plain
	truncate -s 8M /mnt/sparse || fatal "truncate of /mnt/sparse failed"
	mkswap /mnt/sparse >/dev/null || fatal "mkswap /mnt/sparse failed"
	refused sparse /mnt/sparse
	rm -f /mnt/plain /mnt/sparse
	settle_metadata
	swapon "$SWAPFILE" || fatal "swapon $SWAPFILE failed"
	report_offset "$SWAPFILE"
	say offset_unwritten "$(sed -n 's/^file: .*; \([0-9]*\) unwritten: .*/\1/p' /run/offset.out)"
	# Named by device and offset (resume= resume_offset=, as systemctl
	# hibernate finds it), the area is still known as this active swap file.
	off=$(sed -n 's|^resume=/dev/vda2 resume_offset=||p' /run/offset.out)
	say active_by_offset "$(hibernate status --device /dev/vda2 --offset "$off" 2>&1 |
		sed -n 's/^active-swap: *//p')"
	say doctor_target "$(hibernate doctor --device "$SWAPFILE" 2>&1 | grep '^[A-Z]*  *target ')"
	hibernate_into_swapfile
}

case $boot in
1) fallocated_cycle ext4 ;;
3) fallocated_cycle xfs ;;
2 | 4) resume_from_cmdline ;;
*) fatal "swapfile-fallocate has no boot $boot" ;;
esac
