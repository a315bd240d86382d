#!/bin/sh
# Guest part of trixie-system: runs inside the Debian 13 system the host
# built (tests/vm/scenarios/trixie-system.host), installed by the host as
# /usr/local/lib/hibtest/debian-system.sh (the name guest/debian's units run).
#   step      hibtest.service, once the system is up: the step of hibtest.boot=N
#   resumed   hibtest-resumed.service, after hibernate.target
# Boots (a file target needs its resume= resume_offset= on the command
# line, which doctor checks: each file kind has a boot of its own):
#   1  systemd and kernel versions; /swapfile and /hibimage (prepare-file)
#      made, their parameters said; for a swap partition and an auto-swapon
#      area that is off, hibernate.conf names it, hibernate-logind.service
#      runs again, logind's CanHibernate and `hibernate doctor` reported;
#      then a target that is not there (doctor fails), with no swap on:
#      CanHibernate must not be "yes".  Then the workload and `systemctl hibernate` to the partition.
#   2  resumed by the distro initramfs: report, power off
#   3  (the image file's parameters) CanHibernate and doctor for the image
#      file, no swap in use; the workload; logind's D-Bus Hibernate call
#   4  resumed from the image file: report, power off
#   5  (the swap file's parameters) CanHibernate and doctor for the swap
#      file, power off
# Results: "HIBTEST key=value" lines on the console (ttyS0).
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
STATE=/run/hibtest
DATA=/dev/shm/workload.bin
DATA_MB=64
CONF=/etc/hibernate.conf
# say, show, fatal, cmdline_boot, swap_active, workload_start, resumed_report,
# later, dispatch.
# shellcheck source=../guest/debian/common.sh
. /usr/local/lib/hibtest/common.sh

# target LINES: hibernate.conf is the package's plus LINES; then the unit
# that tells logind is run again, and logind (restarted by it) awaited.
target() {
	cp /etc/hibernate.conf.pkg $CONF
	printf '%s\n' "$@" >>$CONF
	systemctl restart hibernate-logind.service || say logind_unit_rc "$?"
	n=0
	while [ $n -lt 120 ] && systemctl list-jobs --no-legend | grep -q .; do
		sleep 0.5
		n=$((n + 1))
	done
	journalctl -o cat -n 1 -u hibernate-logind.service | show logind-setup
}

can_hibernate() {
	busctl --timeout=30 call org.freedesktop.login1 /org/freedesktop/login1 \
		org.freedesktop.login1.Manager CanHibernate 2>&1 | sed 's/^s "\(.*\)"$/\1/'
}

# report KIND: logind's answer, doctor's exit status and its logind line.
report() {
	say "can_$1" "$(can_hibernate)"
	hibernate doctor >"$STATE/doctor.$1" 2>&1
	say "doctor_rc_$1" "$?"
	show "doctor-$1" <"$STATE/doctor.$1"
	say "doctor_logind_$1" "$(grep '  logind ' "$STATE/doctor.$1")"
	say "doctor_fail_$1" "$(grep '^FAIL' "$STATE/doctor.$1" | head -n 1)"
	say "bypass_$1" "$(cat /run/hibernate/logind.env 2>/dev/null)"
	say "sys_resume_$1" "$(cat /sys/power/resume):$(cat /sys/power/resume_offset)"
}

# systemd's gpt-auto-generator may have turned it on already.
swapon_vda2() {
	[ "$(swap_active /dev/vda2)" = 1 ] || out=$(swapon /dev/vda2 2>&1) || fatal "swapon /dev/vda2 failed: $out"
}

swapoff_all() {
	swapoff -a
	for s in $(tail -n +2 /proc/swaps | cut -d' ' -f1); do swapoff "$s"; done
}

# files: the swap file and the image file of boots 3-5, and their
# parameters (resume=UUID= resume_offset=).
files() {
	cp $CONF /etc/hibernate.conf.pkg
	dd if=/dev/zero of=/swapfile bs=1M count=384 status=none || fatal "dd /swapfile failed"
	chmod 600 /swapfile
	mkswap /swapfile >/dev/null || fatal "mkswap /swapfile failed"
	hibernate prepare-file /hibimage 384 >$STATE/prepare 2>&1 || fatal "prepare-file: $(cat $STATE/prepare)"
	sync
	for f in swapfile hibimage; do
		hibernate offset /$f >$STATE/offset 2>&1 || fatal "hibernate offset /$f: $(cat $STATE/offset)"
		say "${f}_params" "$(grep '^resume=UUID=' $STATE/offset)"
	done
}

# The swap partition and the auto-swapon area, then a target that is gone.
kinds() {
	swapon_vda2
	target "device = /dev/vda2"
	report partition
	swapoff_all
	target "device = /dev/vda2" "auto-swapon = yes"
	report autoswapon
	say autoswapon_active "$(swap_active /dev/vda2)"
	target "device = /gone.img"
	report gone
}

step() {
	boot=$(cmdline_boot)
	mkdir -p $STATE
	say boot_start "$boot"
	say kernel "$(uname -r)"
	say systemd_version "$(systemctl --version | head -n 1)"
	say system_state "$(systemctl is-system-running)"
	say cmdline "$(cat /proc/cmdline)"
	case $boot in
	1)
		say logind_setup_boot "$(journalctl -b -o cat -u hibernate-logind.service | grep 'logind:' | tail -n 1)"
		files
		kinds
		swapon_vda2
		target "device = /dev/vda2"
		workload_start
		echo 1 >$STATE/hibernated_in
		sync
		say mark hibernate
		systemctl hibernate || say hibernate_rc "systemctl hibernate: exit $?"
		;;
	3)
		# No swap in use: the image goes to the file.
		swapoff_all
		target "device = /hibimage"
		report imagefile
		workload_start
		echo 3 >$STATE/hibernated_in
		sync
		say mark hibernate_dbus
		busctl call org.freedesktop.login1 /org/freedesktop/login1 \
			org.freedesktop.login1.Manager Hibernate b false >$STATE/busctl 2>&1 ||
			say hibernate_rc "busctl Hibernate: $(cat $STATE/busctl)"
		# The resumed world goes on from here: nothing to say there.
		sleep 150
		[ -e $STATE/resumed ] && exit 0
		say hibernate_rc "logind's Hibernate call did not hibernate within 150 s"
		systemctl poweroff
		;;
	5)
		swapoff_all
		swapon /swapfile || fatal "swapon /swapfile failed"
		target "device = /swapfile"
		report swapfile
		systemctl poweroff
		;;
	*) not_resumed ;;
	esac
}

resumed() {
	resumed_report || return 0
	say journal_resumed "$(journalctl -b -o cat -u systemd-hibernate.service | grep -c '^hibernate: resumed')"
	say journal_target "$(journalctl -b -o cat -u systemd-hibernate.service | grep '^hibernate: hibernating to ' | tail -n 1)"
	# Not at once: logind refuses a power-off while it still counts the
	# sleep operation as running.
	systemd-run --quiet --on-active=2 systemctl poweroff
}

dispatch "$1"
