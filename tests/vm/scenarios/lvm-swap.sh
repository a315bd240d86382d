#!/bin/sh
# Hibernate to swap on an LVM logical volume and resume from it.
#   boot 1: a volume group on vda2 (pvcreate/vgcreate/lvcreate here, in the
#           guest), a swap LV; a thin LV (if the kernel has dm-thin) must be
#           refused before anything is frozen; the doctor finds dm-crypt
#           through LVM and under it; workload, `hibernate --device
#           /dev/hibvg/swap`
#   boot 2: resume=UUID=<the LV's swap UUID>; the LV activated first, as a
#           distribution's initramfs does (lvchange -aay --sysinit), then a
#           plain `hibernate resume`
# No udev here: lvm makes its own /dev nodes (lvm.conf below).
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
# A small workload: the LV holds 160 MB.
WORKLOAD_MB=${WORKLOAD_MB:-32}
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh
# shellcheck source=../guest/swapfile.sh
. /lib/hibtest/swapfile.sh

boot=$1
[ -x /bin/hibernate ] || fatal "/bin/hibernate missing from the initramfs"
[ -x /bin/lvm ] || fatal "/bin/lvm missing from the initramfs"

# lvm without udev: no waiting for udev, nodes made by lvm itself, only vda2
# scanned (and not for md or multipath components), no memory reserved
# (each start would touch it: slow under TCG); no thin_check (not in the
# initramfs), no backups.
lvm_setup() {
	mkdir -p /etc/lvm /run/lock/lvm
	cat >/etc/lvm/lvm.conf <<-EOF2
		devices {
			obtain_device_list_from_udev = 0
			external_device_info_source = "none"
			scan = [ "/dev" ]
			global_filter = [ "a|^/dev/vda2$|", "a|^/dev/mapper/hibcrypt$|", "r|.*|" ]
			md_component_detection = 0
			multipath_component_detection = 0
		}
		activation {
			udev_sync = 0
			udev_rules = 0
			monitoring = 0
			reserved_memory = 0
			reserved_stack = 0
		}
		global {
			thin_check_executable = ""
			event_activation = 0
		}
		backup {
			backup = 0
			archive = 0
		}
	EOF2
}

# lvm_batch COMMAND...: lvm commands run by one lvm process (its shell reads
# them from stdin: a start of the dynamically linked lvm costs seconds under
# TCG), output indented on the console.  Whether they worked is seen by the
# nodes they make.
lvm_batch() {
	printf '%s\n' "$@" | lvm >/run/lvm.out 2>&1
	sed 's/^/  lvm: /' /run/lvm.out
}

# A plain dm-crypt mapping NAME over DEV, SECTORS long (dmsetup: no
# cryptsetup here; no udev: the node made by mknodes), with the uuid
# cryptsetup gives one, so that it is dm-crypt to the doctor as a LUKS
# mapping is.
dm_crypt() {
	dmsetup create "$1" --noudevrules --noudevsync --uuid "CRYPT-PLAIN-$1" \
		--table "0 $3 crypt aes-cbc-plain 000102030405060708090a0b0c0d0e0f000102030405060708090a0b0c0d0e0f 0 $2 0" ||
		fatal "dmsetup create $1 (dm-crypt on $2) failed"
	dmsetup mknodes "$1" || fatal "dmsetup mknodes $1 failed"
}

# crypt_stacks: the doctor finds dm-crypt through LVM (an LV of a volume
# group on a dm-crypt mapping: Debian's LVM on LUKS) and under it (dm-crypt
# on an LV), each a swap area named with --device.
crypt_stacks() {
	[ -b /dev/cryptvg/swap ] || fatal "/dev/cryptvg/swap did not appear"
	dm_crypt hibcrypt2 /dev/hibvg/cbase 32768
	for dev in /dev/cryptvg/swap /dev/mapper/hibcrypt2; do
		mkswap "$dev" >/dev/null || fatal "mkswap $dev failed"
		hibernate doctor --device "$dev" >/run/doctor.out 2>&1
		say "doc_crypt_${dev##*/}" "$(grep -E '^[A-Z]+ +encrypted-swap ' /run/doctor.out)"
	done
}

# have_dmthin: load dm-thin-pool (its list starts with dm_mod, loaded at
# boot: SCENARIO_MODULES=dm); false when this kernel has none.
have_dmthin() {
	[ -f /etc/hibtest/modules.dmthin ] || return 1
	while read -r m; do
		[ -d "/sys/module/$m" ] || insmod "/lib/modules/$m.ko" || fatal "insmod $m failed"
	done </etc/hibtest/modules.dmthin
}

# thin_refused: a thin LV with a swap signature, active, is refused as a
# target before the freeze, its first page untouched.
thin_refused() {
	[ -b /dev/hibvg/thin ] || fatal "/dev/hibvg/thin did not appear"
	dmsetup info -c -o name,uuid | sed 's/^/  dm: /'
	mkswap /dev/hibvg/thin >/dev/null || fatal "mkswap /dev/hibvg/thin failed"
	# Active, so that only the thin check can refuse it.
	swapon /dev/hibvg/thin || fatal "swapon /dev/hibvg/thin failed"
	dmesg_mark
	say mark thin
	hibernate --device /dev/hibvg/thin
	say thin_rc "$?"
	say thin_froze "$(froze_since_mark)"
	swapoff /dev/hibvg/thin || fatal "swapoff /dev/hibvg/thin failed"
	say thin_sig "$(disk_signature /dev/hibvg/thin)"
	# The doctor refuses it the same way.
	hibernate doctor --device /dev/hibvg/thin >/run/doctor.out 2>&1
	say doc_thin "$(grep -E '^[A-Z]+ +target ' /run/doctor.out)"
}

case $boot in
1)
	lvm_setup
	# vda1 (the harness' swap partition, unused here) under dm-crypt.
	dm_crypt hibcrypt /dev/vda1 65536
	set -- "pvcreate -q -y /dev/vda2" "vgcreate -q hibvg /dev/vda2" \
		"lvcreate -q -y -L 160M -n swap hibvg" "lvcreate -q -y -L 16M -n cbase hibvg" \
		"pvcreate -q -y /dev/mapper/hibcrypt" "vgcreate -q cryptvg /dev/mapper/hibcrypt" \
		"lvcreate -q -y -L 16M -n swap cryptvg"
	thin=0
	if have_dmthin; then
		thin=1
		set -- "$@" "lvcreate -q -y -L 16M -T hibvg/pool" \
			"lvcreate -q -y -V 16M -T hibvg/pool -n thin"
	else
		say skip_thin "this kernel has no dm-thin-pool module"
	fi
	lvm_batch "$@"
	[ -b /dev/hibvg/swap ] || fatal "/dev/hibvg/swap did not appear"
	say lv_table "$(dmsetup table hibvg-swap)"
	mkswap /dev/hibvg/swap >/dev/null || fatal "mkswap /dev/hibvg/swap failed"
	swapon /dev/hibvg/swap || fatal "swapon /dev/hibvg/swap failed"
	say swaps_name "$(tail -n +2 /proc/swaps | cut -d' ' -f1)"
	say status_target "$(hibernate status 2>&1 | sed -n 's/^target: *//p')"
	hibernate doctor >/run/doctor.out 2>&1
	say doc_target "$(grep -E '^[A-Z]+ +target ' /run/doctor.out)"
	say doc_crypt "$(grep -E '^[A-Z]+ +encrypted-swap ' /run/doctor.out)"
	[ $thin = 0 ] || thin_refused
	crypt_stacks
	workload_start
	workload_report
	dmesg_mark
	say mark hibernate
	hibernate --device /dev/hibvg/swap
	resumed_or_exit $?
	workload_after_resume
	say status_after "$(status_line /dev/mapper/hibvg-swap signature)"
	;;
2)
	# As Debian's initramfs does before its resume step: the LV of the
	# resume device activated (lvm makes its node), then hibernate resume
	# finds resume=UUID=.
	lvm_setup
	say mark lvchange
	lvm lvchange -aay --sysinit hibvg/swap >/run/lvm.out 2>&1
	say lvchange_rc "$?"
	sed 's/^/  lvm: /' /run/lvm.out
	[ -b /dev/mapper/hibvg-swap ] || fatal "lvchange -aay made no /dev/mapper/hibvg-swap"
	resume_from_cmdline
	;;
*)
	fatal "lvm-swap has no boot $boot"
	;;
esac
