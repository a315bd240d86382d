#!/bin/sh
# Guest part of setup-grub: runs inside the Debian 12 system the host built
# (tests/vm/scenarios/setup-grub.host), booted through its own GRUB after
# boot 0; installed as /usr/local/lib/hibtest/debian-system.sh (the name
# guest/debian's units run).
#   step      hibtest.service, once the system is up: the step of boot N
#   resumed   hibtest-resumed.service, after hibernate.target
# Boots:
#   0  (-kernel) grub-install /dev/vda, update-grub; power off
#   1  (GRUB) the command line said; every file of /etc and grub.cfg hashed;
#      `hibernate setup --dry-run` (its plan), `hibernate setup --yes`, what
#      it chose and doctor; the workload; systemctl hibernate
#   2  (GRUB) resumed by the initramfs setup made: report; then in the
#      resumed world `hibernate setup --undo --yes`, the files hashed again
#      (the host compares), the target gone, doctor; power off
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

step() {
	boot=$(cmdline_boot)
	mkdir -p $STATE
	say boot_start "$boot"
	say kernel "$(uname -r)"
	say cmdline "$(cat /proc/cmdline)"
	case $boot in
	0) boot0 ;;
	1)
		say swaps_before "$(tail -n +2 /proc/swaps | wc -l)"
		snapshot before
		run_timed setup_dry hibernate setup --dry-run
		snapshot dry
		run_timed setup hibernate setup --yes || fatal "hibernate setup failed: $(tail -n 3 $STATE/setup.out | tr '\n' ' ')"
		setup_report
		say target "$(setup_target)"
		hibernate_now 1
		;;
	*) not_resumed ;;
	esac
}

resumed() {
	resumed_report || return 0
	say journal_resumed "$(journalctl -b -o cat -u systemd-hibernate.service | grep -c '^hibernate: resumed')"
	target=$(setup_target)
	run_timed undo hibernate setup --undo --yes
	snapshot after
	if [ -z "$target" ]; then
		say target_after_undo "unknown (no target found before --undo)"
	elif [ -e "$target" ]; then
		say target_after_undo "$target exists"
	else
		say target_after_undo gone
	fi
	say setup_state_after_undo "$(if [ -e /var/lib/hibernate/setup.state ]; then echo exists; else echo gone; fi)"
	diff "$SNAP/before.sha" "$SNAP/after.sha" | show undo-diff
	say undo_diff "$(diff "$SNAP/before.sha" "$SNAP/after.sha" | grep -c '^[<>]')"
	diff "$SNAP/before.varlib" "$SNAP/after.varlib" | show varlib-diff
	say varlib_diff "$(diff "$SNAP/before.varlib" "$SNAP/after.varlib" | grep -c '^[<>]')"
	say dry_diff "$(diff "$SNAP/before.sha" "$SNAP/dry.sha" | grep -c '^[<>]')"
	run_timed doctor_after_undo hibernate doctor
	say doctor_after_undo "$(grep -iE 'not set up|no target' "$STATE/doctor_after_undo.out" | head -n 1)"
	systemd-run --quiet --on-active=2 systemctl poweroff
}

dispatch "$1"
