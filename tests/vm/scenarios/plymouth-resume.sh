#!/bin/sh
# Guest part of plymouth-resume: runs inside the Debian 13 system the host
# built (tests/vm/scenarios/plymouth-resume.host), booted with `splash`, so
# Debian's initramfs starts plymouthd (the spinner theme on the bochs DRM
# device of QEMU's standard VGA) before our local-premount script resumes.
#   plymouth-resume.sh step      hibtest.service, once the system is up
#   plymouth-resume.sh resumed   (unused: the cycles here are started by
#                                step itself, which goes on after them)
# Boots (the host's plan; /etc/hibernate.conf: encrypt = yes):
#   1  swapon vda2, the workload, the passphrase piped into `hibernate`;
#      after the resume (boot 2's console): report, mark=after for the
#      host's picture of the resumed screen, then hibernate again
#   2  the initramfs asks the passphrase in the splash; the host types it,
#      takes pictures of the question and the load
#   3  the host types a wrong passphrase at each of the three questions: the
#      splash says why the image is not resumed and the boot goes on; this
#      step reports plymouth's debug log (plymouth.debug=file:/run/...,
#      which initramfs-tools moves with /run to the real root)
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
STATE=/run/hibtest
DATA=/dev/shm/workload.bin
DATA_MB=64
PASS=hibtest-plymouth
# shellcheck source=../guest/debian/common.sh
. /usr/local/lib/hibtest/common.sh

# One cycle with the passphrase piped in; the lines after it run in the
# resumed world (on the next boot's console).
cycle() {
	say mark "$1"
	rc=0
	printf '%s\n' "$PASS" | hibernate >/dev/console 2>&1 || rc=$?
	if [ $rc -ne 0 ]; then
		say hibernate_rc "$rc"
		return 1
	fi
	return 0
}

resumed_here() {
	say resumed 1
	workload_report
	say counter_unit_pid "$(systemctl show -P MainPID hibtest-counter.service)"
}

step() {
	mkdir -p "$STATE"
	boot=$(cmdline_boot)
	case $boot in
	1)
		# systemd's gpt-auto generator may have turned the swap partition on.
		[ "$(swap_active /dev/vda2)" = 1 ] || out=$(swapon /dev/vda2 2>&1) ||
			fatal "swapon /dev/vda2 failed: $out"
		workload_start
		echo 1 >"$STATE/hibernated_in"
		cycle hibernate || { systemctl poweroff; exit 1; }
		resumed_here
		# The resumed screen, then the second image (boot 3 refuses it).
		say mark after
		sleep 4
		cycle hibernate2 || systemctl poweroff
		;;
	3)
		if [ -e "$STATE/counter" ]; then say fresh no; else say fresh yes; fi
		say resumed 0
		journalctl -b -k -o cat | grep 'hibernate:' | show kernel-log
		log=/run/plymouth-debug.log
		if [ -r $log ]; then
			say plymouth_log yes
			say plymouth_questions "$(grep -c 'ask-for-password\|password request\|ask_for_password' $log)"
			say plymouth_said "$(grep -o "The saved image was not resumed[^']*" $log | tail -n 1)"
			say plymouth_progress "$(grep -c 'Resuming [0-9]*%' $log)"
			grep -i 'message\|password\|update' $log | tail -n 40 | show plymouth
		else
			say plymouth_log no
		fi
		[ "$(swap_active /dev/vda2)" = 0 ] || swapoff /dev/vda2
		if out=$(swapon /dev/vda2 2>&1); then say swapon ok; else say swapon "$out"; fi
		systemctl poweroff
		;;
	*)
		say resumed 0
		journalctl -b -k -o cat | grep 'hibernate:' | show kernel-log
		systemctl poweroff
		;;
	esac
}

resumed() { :; }

dispatch "$1"
