#!/bin/sh
# Guest part of setup-btrfs-zram: runs inside the Debian 13 system the host
# built (tests/vm/scenarios/setup-btrfs-zram.host), booted through its own
# GRUB after boot 0; installed as /usr/local/lib/hibtest/debian-system.sh.
#   step      hibtest.service, once the system is up: the step of boot N
#   resumed   hibtest-resumed.service, after hibernate.target
# Boots:
#   0  (-kernel) grub-install /dev/vda (a btrfs root), update-grub; power off
#   1  (GRUB) zram swap on (systemd-zram-generator, priority 100), no disk
#      swap; `hibernate setup --yes`; its target: NOCOW (lsattr C), the
#      btrfs subvolumes, the swap priorities (zram above the file); the
#      workload; systemctl hibernate
#   2  (GRUB) resumed: report, the swap priorities again; power off
# Results: "HIBTEST key=value" lines on the console (ttyS0).
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
STATE=/run/hibtest
DATA=/dev/shm/workload.bin
DATA_MB=64
# shellcheck source=../guest/debian/common.sh
. /usr/local/lib/hibtest/common.sh
# shellcheck source=../guest/debian/setup.sh
. /usr/local/lib/hibtest/setup.sh

# prio NAME-PATTERN: the priority of the first swap area in use whose name
# matches.
prio() {
	swapon --show=NAME,PRIO --noheadings | awk -v p="$1" '$1 ~ p { print $2; exit }'
}

swaps() {
	v=$(swapon --show=NAME,TYPE,SIZE,PRIO --noheadings | tr -s ' ' | paste -sd';' -)
	say "swaps_$1" "${v:-none}"
	say "zram_prio_$1" "$(prio zram)"
}

step() {
	boot=$(cmdline_boot)
	mkdir -p $STATE
	say boot_start "$boot"
	say kernel "$(uname -r)"
	say cmdline "$(cat /proc/cmdline)"
	case $boot in
	0) boot0 ;;
	1)
		say rootfs "$(findmnt -n -o FSTYPE /)"
		swaps before
		run_timed setup_dry hibernate setup --dry-run
		run_timed setup hibernate setup --yes || fatal "hibernate setup failed: $(tail -n 3 $STATE/setup.out | tr '\n' ' ')"
		setup_report
		target=$(setup_target)
		say target "$target"
		say target_attr "$(lsattr -d "$target" 2>&1 | cut -d' ' -f1)"
		say target_fs "$(stat -f -c %T "$target" 2>&1)"
		say subvolumes "$(btrfs subvolume list / 2>&1 | awk '{ print $NF }' | paste -sd' ')"
		say target_subvol "$(btrfs subvolume show "$(dirname "$target")" 2>/dev/null | head -n 1)"
		swaps after
		say target_prio "$(prio "$target")"
		hibernate_now 1
		;;
	*) not_resumed ;;
	esac
}

resumed() {
	resumed_report || return 0
	swaps resumed
	systemd-run --quiet --on-active=2 systemctl poweroff
}

dispatch "$1"
