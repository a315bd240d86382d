#!/bin/sh
# zram swap at priority 100 beside the disk swap target (vda1, the kernel's
# default priority below it), as Ubuntu and Fedora set it up.
#   boot 1: zram0 (256 MiB) and vda1 on; the workload (16 MiB) and a
#           ballast (48 MiB) are written in a cgroup, which memory.reclaim
#           then swaps out, to zram; `hibernate -v` swaps zram off for the cycle and hibernates
#           to vda1.  In the resumed world: the data checks, zram0 on again
#           at priority 100; then a cycle that fails (a 32 MiB swap area on
#           vda2 cannot hold the image) after zram was swapped off: zram0
#           must be on again at priority 100, the system running; both
#           times hibernate's swapon discards freed clusters only, never
#           the whole area (the kernel's "Adding ... swap" line says which)
#   boot 2: resume
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
WORKLOAD_MB=${WORKLOAD_MB:-16}
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh

CGROOT=/sys/fs/cgroup

# zram0's line of /proc/swaps as "PRIORITY USED-KIB", or "off".
zram_swap() {
	awk '$1 == "/dev/zram0" { print $5, $4; found = 1 } END { if (!found) print "off" }' \
		/proc/swaps
}

# The flags of the kernel's last "Adding ... swap on /dev/zram0" line since
# dmesg_mark (hibernate's swapon), or "none": SS solid state, D discard, then
# s when swapon(2) discarded the whole area and c when it discards freed
# clusters (FS: frontswap, before 6.5).
zram_swapon_flags() {
	dmesg | tail -n +$((${dmesg_lines:-0} + 1)) | grep 'swap on /dev/zram0\.' | tail -n 1 |
		sed 's/.* across:[0-9]*k *//' | grep . || echo none
}

# ballast FILE MB: MB MiB of random data in the tmpfs FILE, its sha256 in
# "$FILE.sha" (read now, while it is in RAM: reading it later brings it back).
ballast() {
	dd if=/dev/urandom of="$1" bs=1M count="$2" 2>/dev/null || fatal "could not write $2 MiB to $1"
	sha256sum "$1" | cut -d' ' -f1 >"$1.sha"
}

# What runs between `into_cgroup NAME` and `reclaim NAME MB` is charged to the
# cgroup NAME; reclaim then leaves this shell's cgroup and has the kernel
# swap MB MiB of it out at once (memory.reclaim), which goes to zram, the
# area of highest priority.  No limit stays: nothing is pushed out again
# when it comes back.
into_cgroup() {
	if ! mkdir "$CGROOT/$1" || ! echo $$ >"$CGROOT/$1/cgroup.procs"; then
		fatal "cannot enter a cgroup of its own"
	fi
}
reclaim() {
	echo $$ >$CGROOT/cgroup.procs || fatal "cannot leave cgroup $1"
	# EAGAIN when it reclaimed less than asked: the host checks zram's use.
	echo "${2}M" >"$CGROOT/$1/memory.reclaim" 2>/dev/null || true
}

zram_setup() {
	[ -f /etc/hibtest/modules.zram ] || fatal "the kernel has no zram module"
	[ -e /sys/block/zram0 ] || fatal "zram0 missing after loading zram"
	echo 256M >/sys/block/zram0/disksize || fatal "setting zram0's disksize failed"
	mkswap /dev/zram0 >/dev/null || fatal "mkswap /dev/zram0 failed"
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	swapon-prio 100 /dev/zram0 || fatal "swapon-prio 100 /dev/zram0 failed"
	mkdir -p $CGROOT
	mount -t cgroup2 none $CGROOT || fatal "mounting cgroup2 failed"
	echo +memory >$CGROOT/cgroup.subtree_control || fatal "no memory controller"
}

case $1 in
1)
	zram_setup
	# The workload's own file too goes through zram.
	into_cgroup fill1
	workload_start
	ballast /run/ballast 48
	reclaim fill1 64
	workload_report
	say ballast_hash "$(cat /run/ballast.sha)"
	say zram_before "$(zram_swap)"
	say vda1_prio "$(awk '$1 == "/dev/vda1" { print $5 }' /proc/swaps)"
	say zram_mm_stat "$(cat /sys/block/zram0/mm_stat)"
	dmesg_mark
	say mark hibernate
	hibernate -v
	resumed_or_exit $?
	workload_after_resume
	say ballast_hash "$(sha256sum /run/ballast | cut -d' ' -f1)"
	say zram_after "$(zram_swap)"
	say zram_after_flags "$(zram_swapon_flags)"

	# A cycle that fails once zram is off: vda2 as a 32 MiB swap area cannot
	# hold the image.  zram holds pages again first.
	into_cgroup fill2
	ballast /run/ballast2 8
	reclaim fill2 8
	say zram_before_fail "$(zram_swap)"
	mkswap /dev/vda2 32768 >/dev/null || fatal "mkswap /dev/vda2 failed"
	swapon /dev/vda2 || fatal "swapon /dev/vda2 failed"
	dmesg_mark
	say mark fail
	hibernate -v --device /dev/vda2 >/run/fail.out 2>&1
	say fail_rc "$?"
	sed 's/^/  | /' /run/fail.out
	say fail_zram_line "$(grep -a 'zram0 (' /run/fail.out | tail -n 1)"
	say zram_after_fail "$(zram_swap)"
	say zram_after_fail_flags "$(zram_swapon_flags)"
	say ballast2_ok "$([ "$(sha256sum /run/ballast2 | cut -d' ' -f1)" = "$(cat /run/ballast2.sha)" ] && echo 1 || echo 0)"
	workload_recheck
	;;
2)
	dmesg_mark
	say mark resume
	resume_step
	;;
*)
	fatal "zram-beside has no boot $1"
	;;
esac
