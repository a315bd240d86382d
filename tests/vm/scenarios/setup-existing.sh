#!/bin/sh
# Guest part of setup-existing: runs inside the Debian 12 system the host
# built (tests/vm/scenarios/setup-existing.host), booted through its own
# GRUB after boot 0; installed as /usr/local/lib/hibtest/debian-system.sh.
#   step      hibtest.service, once the system is up: the step of boot N
#   resumed   hibtest-resumed.service, after hibernate.target
# Boots:
#   0  (-kernel) grub-install /dev/vda, update-grub; then the machine's
#      swap as an installer would make it: LVM on vda3 (VG hibvg), a swap
#      LV hibvg/swap, in /etc/fstab, update-initramfs -u; power off
#   1  (GRUB) the LVs, the swap areas and the big files of / listed;
#      `hibernate setup --yes`; listed again (nothing created); the
#      workload; systemctl hibernate
#   2  (GRUB) resumed: report; power off
# Results: "HIBTEST key=value" lines on the console (ttyS0).
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
STATE=/run/hibtest
DATA=/dev/shm/workload.bin
DATA_MB=64
SWAP_LV_MIB=1280
# shellcheck source=../guest/debian/common.sh
. /usr/local/lib/hibtest/common.sh
# shellcheck source=../guest/debian/setup.sh
. /usr/local/lib/hibtest/setup.sh

# lvm_swap: the swap LV, in fstab (as the Debian installer writes it).
lvm_swap() {
	if ! { pvcreate -q /dev/vda3 && vgcreate -q hibvg /dev/vda3 &&
		lvcreate -q -y -L ${SWAP_LV_MIB}M -n swap hibvg && mkswap /dev/hibvg/swap >/dev/null; }; then
		say lvm "LVM or mkswap failed"
		return 1
	fi
	echo '/dev/mapper/hibvg-swap none swap sw 0 0' >>/etc/fstab
	swapon -a || { say lvm "swapon -a failed"; return 1; }
	update-initramfs -u >$STATE/update-initramfs 2>&1 || { say lvm "update-initramfs -u failed"; return 1; }
	say lvm ok
}

# inventory NAME: the LVs, the swap areas in use, the files of 10 MiB or
# more on the root filesystem (what setup would have made).
inventory() {
	v=$(lvs --noheadings -o lv_name,lv_size 2>/dev/null | tr -s ' ' | paste -sd';' -)
	say "lvs_$1" "${v:-none}"
	v=$(swapon --show=NAME,TYPE,SIZE --noheadings | tr -s ' ' | paste -sd';' -)
	say "swaps_$1" "${v:-none}"
	v=$(find / -xdev -type f -size +10M 2>/dev/null | sort | paste -sd' ' -)
	say "bigfiles_$1" "${v:-none}"
}

step() {
	boot=$(cmdline_boot)
	mkdir -p $STATE
	say boot_start "$boot"
	say kernel "$(uname -r)"
	say cmdline "$(cat /proc/cmdline)"
	case $boot in
	0)
		grub_install_step && fast_initramfs && lvm_swap
		sync
		systemctl poweroff
		;;
	1)
		inventory before
		run_timed setup_dry hibernate setup --dry-run
		run_timed setup hibernate setup --yes || fatal "hibernate setup failed: $(tail -n 3 $STATE/setup.out | tr '\n' ' ')"
		setup_report
		say target "$(setup_target)"
		say target_dev "$(readlink -f "$(setup_target)")"
		inventory after
		hibernate_now 1
		;;
	*) not_resumed ;;
	esac
}

resumed() {
	resumed_report || return 0
	systemd-run --quiet --on-active=2 systemctl poweroff
}

dispatch "$1"
