#!/bin/sh
# A swap file on btrfs: `hibernate offset` and `hibernate --device FILE` must
# refuse it with the reason (btrfs's FIEMAP gives logical addresses, and the
# physical mapping is not implemented), write nothing, and leave the system
# running.  vda2 is mounted read-only, so that nothing at all writes the
# disk in this boot: the host compares the whole disk image's hash.
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
WORKLOAD_MB=${WORKLOAD_MB:-8}
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh

[ -x /bin/hibernate ] || fatal "/bin/hibernate missing from the initramfs"
[ "$1" = 1 ] || fatal "swapfile-btrfs-refused has no boot $1"

mount -t btrfs -o ro /dev/vda2 /mnt || fatal "mount -t btrfs -o ro /dev/vda2 failed"
say file_sig "$(swap_signature /mnt/swapfile)"
workload_start
workload_report

say mark offset
hibernate offset /mnt/swapfile
say offset_rc "$?"
say mark hibernate
hibernate --device /mnt/swapfile
say hibernate_rc "$?"
say mark checks

# Still the same world: the counter ticks on, the data is intact.
workload_recheck
say file_sig_after "$(swap_signature /mnt/swapfile)"
