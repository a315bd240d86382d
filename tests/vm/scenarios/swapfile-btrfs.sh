#!/bin/sh
# A NOCOW swap file on a single-profile btrfs: hibernate into it and resume
# by the kernel command line alone; the files btrfs cannot have written
# through its device refused with the reason, nothing written.
#   boot 1: data written first (so the swap file's chunk has logical
#           addresses that are not its device bytes), a NOCOW swap file,
#           `hibernate offset` and `btrfs inspect-internal map-swapfile -r`,
#           a copy-on-write and a compressed swap file refused (offset,
#           --device, doctor), workload, `hibernate --device /mnt/swapfile`;
#           after the resume (on boot 2's console): the data intact, then
#           the data converted to DUP and a new swap file there refused
#   boot 2: resume=UUID=... resume_offset=N on the cmdline, vda2 NOT mounted
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
WORKLOAD_MB=${WORKLOAD_MB:-16}
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh
# shellcheck source=../guest/swapfile.sh
. /lib/hibtest/swapfile.sh

boot=$1
[ -x /bin/hibernate ] || fatal "/bin/hibernate missing from the initramfs"
btrfs version >/dev/null 2>&1 || fatal "the btrfs program does not run in the initramfs"

# nocow_file FILE MB [ATTR]: a swap file as btrfs's documentation makes one:
# an empty file, chattr ATTR (+C: NOCOW), every byte written, mkswap.
nocow_file() {
	rm -f "$1"
	touch "$1" || fatal "touch $1 failed"
	chattr "${3:-+C}" "$1" || fatal "chattr ${3:-+C} $1 failed"
	dd if=/dev/zero of="$1" bs=1M count="$2" 2>/dev/null || fatal "dd of $1 failed"
	chmod 600 "$1"
	mkswap "$1" >/dev/null || fatal "mkswap $1 failed"
	sync
}

# file_hash FILE: md5 of FILE as the disk holds it (the page cache dropped).
file_hash() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	md5sum "$1" | cut -d' ' -f1
}

# refused NAME COMMAND...: a step that must be refused: its exit status
# (NAME_rc), its output on one line (NAME_out), whether it froze (NAME_froze).
refused() {
	name=$1
	shift
	dmesg_mark
	"$@" >/run/refused.out 2>&1
	say "${name}_rc" "$?"
	say "${name}_out" "$(tr '\n' ' ' </run/refused.out)"
	say "${name}_froze" "$(froze_since_mark)"
}

# refuse_all NAME FILE: `hibernate offset`, `--device` and `doctor` on FILE
# refused; FILE's bytes the same before and after (NAME_same).
refuse_all() {
	h0=$(file_hash "$2")
	refused "$1_offset" hibernate offset "$2"
	refused "$1_hibernate" hibernate --device "$2"
	refused "$1_doctor" hibernate doctor --device "$2"
	if [ "$(file_hash "$2")" = "$h0" ]; then say "$1_same" 1; else say "$1_same" 0; fi
}

case $boot in
1)
	mount_vda2 btrfs
	# mkfs's own data chunk (logical = device byte) filled and passed: the
	# chunks after it lie behind the DUP metadata's two copies on the device,
	# one copy further on than in btrfs's logical space.
	dd if=/dev/urandom of=/mnt/before.dat bs=1M count=10 2>/dev/null ||
		fatal "dd of /mnt/before.dat failed"
	sync
	say before_hash "$(file_hash /mnt/before.dat)"
	nocow_file "$SWAPFILE" 112
	settle_metadata
	swapon "$SWAPFILE" || fatal "swapon $SWAPFILE failed"
	say file_sig "$(swap_signature "$SWAPFILE")"
	report_offset "$SWAPFILE"
	say mapswap "$(btrfs inspect-internal map-swapfile -r "$SWAPFILE" 2>&1)"
	# Named by device and offset, as resume= names it, the area is still the
	# active swap file, though the file's st_dev is its subvolume's, not vda2's.
	page=$(sed -n 's/^resume=\/dev\/vda2 resume_offset=//p' /run/offset.out)
	say active_by_offset "$(hibernate status --device /dev/vda2 --offset "$page" 2>&1 |
		sed -n 's/^active-swap: //p')"

	nocow_file /mnt/cowswap 4 -C
	refuse_all cow /mnt/cowswap
	nocow_file /mnt/zswap 4 +c
	refuse_all compressed /mnt/zswap

	hibernate_into "$SWAPFILE"
	say before_hash_after "$(file_hash /mnt/before.dat)"

	# The same filesystem with its data in DUP: a new swap file there refused.
	swapoff "$SWAPFILE" || fatal "swapoff $SWAPFILE failed"
	rm -f "$SWAPFILE"
	sync # its extents freed before the balance needs room for two copies
	dmesg_mark
	if ! btrfs balance start -dconvert=dup /mnt >/run/balance.out 2>&1; then
		dump_kernel_log
		fatal "btrfs balance start -dconvert=dup failed: $(tr '\n' ' ' </run/balance.out)"
	fi
	nocow_file /mnt/dupswap 8
	refuse_all dup /mnt/dupswap
	say mark finished
	;;
2)
	resume_from_cmdline
	;;
*)
	fatal "swapfile-btrfs has no boot $boot"
	;;
esac
