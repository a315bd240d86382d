#!/bin/sh
# Guest part of setup-stale: runs inside the Debian 12 system the host built
# (tests/vm/scenarios/setup-stale.host), booted through its own GRUB after
# boot 0; installed as /usr/local/lib/hibtest/debian-system.sh.
#   step      hibtest.service, once the system is up: the step of boot N
#   resumed   hibtest-resumed.service, after hibernate.target
# Boots:
#   0  (-kernel) grub-install /dev/vda, update-grub; power off
#   1  (GRUB) `hibernate setup --yes`; the target file re-created where
#      its offset changes (a filler file first takes its old blocks; then
#      the same recipe: mkswap for a swap file, prepare-file for an image
#      file) WITHOUT update-initramfs; the workload; `hibernate` and then
#      `systemctl hibernate` must both refuse before the freeze (the
#      workload reported again: same process, still ticking); then
#      update-initramfs -u and systemctl hibernate
#   2  (GRUB) resumed: report; power off
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

# first_offset FILE: the physical offset of FILE's first block (filefrag).
first_offset() {
	filefrag -v "$1" 2>/dev/null | awk '$1 == "0:" { sub(/\.\..*/, "", $4); print $4; exit }'
}

# recreate FILE: FILE removed and made again, its blocks elsewhere.
recreate() {
	f=$1
	size_mb=$(($(stat -c %s "$f") / 1048576))
	swap=$(swap_active "$f")
	say recreate_kind "$(if [ "$swap" = 1 ]; then echo swapfile; else echo imagefile; fi)"
	say offset_old "$(first_offset "$f")"
	[ "$swap" = 0 ] || swapoff "$f" || fatal "swapoff $f failed"
	rm -f "$f"
	# The old blocks taken first: the new file cannot get them back.
	dd if=/dev/zero of=/filler bs=1M count="$size_mb" status=none || fatal "dd /filler failed"
	sync
	if [ "$swap" = 1 ]; then
		dd if=/dev/zero of="$f" bs=1M count="$size_mb" status=none || fatal "dd $f failed"
		chmod 600 "$f"
		mkswap "$f" >/dev/null || fatal "mkswap $f failed"
		swapon "$f" || fatal "swapon $f failed"
	else
		out=$(hibernate prepare-file "$f" "$size_mb" 2>&1) || fatal "hibernate prepare-file $f: $out"
	fi
	rm -f /filler
	sync
	say offset_new "$(first_offset "$f")"
}

# workload_again: the workload reported again (same process, ticking).
workload_again() {
	sleep 2
	read -r pid n token <"$STATE/counter"
	say token "$token"
	say hash "$(sha256sum "$DATA" | cut -d' ' -f1)"
	say counter_later "$n"
	say counter_later_pid "$pid"
	if kill -0 "$pid" 2>/dev/null; then say counter_alive 1; else say counter_alive 0; fi
	say counter_pid "$pid"
}

# refused KEY COMMAND...: COMMAND must fail; its output said; the workload
# reported again.
refused() {
	key=$1
	shift
	say mark "$key"
	run_timed "$key" "$@"
	say "${key}_said" "$(grep -iE 'initramfs|refus' "$STATE/$key.out" | head -n 2 | paste -sd' ' -)"
	workload_again
}

# refused_systemctl: `systemctl hibernate` asks logind, which starts
# hibernate.target and returns at once: the refusal is the result of
# systemd-hibernate.service (awaited: hibtest-resumed.service runs after
# the target either way and, told by $STATE/expect_refusal, only notes it)
# and its journal.
refused_systemctl() {
	say mark systemctl_stale
	rm -f $STATE/refusal_seen
	touch $STATE/expect_refusal
	systemctl hibernate >$STATE/systemctl_stale.out 2>&1
	say systemctl_stale_call "$?"
	n=0
	while [ ! -e $STATE/refusal_seen ] && [ $n -lt 240 ]; do
		sleep 0.5
		n=$((n + 1))
	done
	rm -f $STATE/expect_refusal
	# "success" would have been a hibernation (and no boot to say so).
	say systemctl_stale_rc "$(systemctl show -P Result systemd-hibernate.service)"
	journalctl -b -o cat -u systemd-hibernate.service | show systemctl_stale
	say systemctl_stale_said "$(journalctl -b -o cat -u systemd-hibernate.service | grep 'refused' | tail -n 1)"
	workload_again
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
		run_timed setup hibernate setup --yes || fatal "hibernate setup failed: $(tail -n 3 $STATE/setup.out | tr '\n' ' ')"
		setup_report
		target=$(setup_target)
		say target "$target"
		[ -f "$target" ] || fatal "setup's target '$target' is not a file: nothing to re-create"
		recreate "$target"
		workload_start
		refused hibernate_stale hibernate
		refused_systemctl
		# The kernel logs every freeze of user space (ours through
		# /dev/snapshot as well): none so far.
		say freezes "$(journalctl -b -k -o cat | grep -c 'Freezing user space')"
		run_timed update_initramfs update-initramfs -u
		run_timed doctor_fixed hibernate doctor
		echo 1 >"$STATE/hibernated_in"
		sync
		say mark hibernate
		systemctl hibernate || say hibernate_rc "systemctl hibernate: exit $?"
		;;
	*) not_resumed ;;
	esac
}

resumed() {
	if [ -e $STATE/expect_refusal ]; then
		touch $STATE/refusal_seen
		return 0
	fi
	resumed_report || return 0
	systemd-run --quiet --on-active=2 systemctl poweroff
}

dispatch "$1"
