#!/bin/sh
# Guest part of desktop-dm: runs inside the Debian 13 desktop the host built
# (tests/vm/scenarios/desktop-dm.host): lightdm on the bochs DRM display,
# logged into user desk's X session (an xterm with a clock on a blue root
# window) by lightdm's autologin.
#   desktop-dm.sh step      hibtest.service, once the system is up
#   desktop-dm.sh resumed   (unused: step goes on after its cycles)
# Boot 1: waits for the X session, says its VT and the VT in front (mark
# desktop: the host's picture), the workload; `systemctl hibernate` with the
# host typing Esc on the PS/2 keyboard (mark cancel): the cycle must be
# cancelled, the session's VT in front again (mark cancelled: picture);
# then `systemctl hibernate` to the end (mark hibernate: pictures while the
# image is written). After the resume (boot 2's console): the workload, the
# VT in front (mark after: picture), power off.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
STATE=/run/hibtest
DATA=/dev/shm/workload.bin
DATA_MB=64
# shellcheck source=../guest/debian/common.sh
. /usr/local/lib/hibtest/common.sh

# session_field FIELD: FIELD of user desk's session (loginctl), "" if none.
session_field() {
	for id in $(loginctl --no-legend list-sessions 2>/dev/null | awk '$3 == "desk" { print $1 }'); do
		loginctl show-session -P "$1" "$id" 2>/dev/null && return 0
	done
	return 1
}

# wait_session: user desk's X session up, its xterm running (5 min at most).
wait_session() {
	n=0
	until [ "$(session_field Type)" = x11 ] && pgrep -u desk xterm >/dev/null; do
		n=$((n + 1))
		[ $n -lt 300 ] || fatal "no X session of desk after 300 s: $(systemctl is-active lightdm)"
		sleep 1
	done
	# The greeter gone, the session drawn.
	sleep 8
}

# vt_report SUFFIX: the VT in front (fgconsole, as the hook reads it) and the
# session's.
vt_report() {
	say "fgconsole$1" "$(fgconsole 2>&1)"
	say "active$1" "$(cat /sys/class/tty/tty0/active)"
}

# hibernate_wait: `systemctl hibernate`, which only asks logind, then the
# cycle's end: systemd-hibernate.service started anew (its InvocationID) and
# no longer activating; in a cycle that powers off, that is in the resumed
# world. rc: systemctl's exit; result: the unit's Result.
hibernate_wait() {
	before=$(systemctl show -P InvocationID systemd-hibernate.service)
	rc=0
	systemctl hibernate >/dev/null 2>&1 || rc=$?
	n=0
	while [ "$(systemctl show -P InvocationID systemd-hibernate.service)" = "$before" ]; do
		n=$((n + 1))
		[ $n -lt 240 ] || { say hibernate_wait "systemd-hibernate.service never started"; break; }
		sleep 0.5
	done
	while [ "$(systemctl show -P ActiveState systemd-hibernate.service)" = activating ]; do
		sleep 0.5
	done
	result=$(systemctl show -P Result systemd-hibernate.service)
}

# unit_report: the last cycle's lines of systemd-hibernate.service.
unit_report() {
	journalctl -b -o cat -u systemd-hibernate.service --since "$1" | tail -n 60 | show hibernate-unit
}

# vt_watch: each change of the console in front, on the serial console
# with the uptime (frozen with everything else while the image is written).
vt_watch() {
	last=
	while :; do
		cur=$(cat /sys/class/tty/tty0/active)
		if [ "$cur" != "$last" ]; then
			echo "vt-watch: $(cut -d' ' -f1 /proc/uptime) $cur" >/dev/console
			last=$cur
		fi
		sleep 0.2
	done
}

step() {
	mkdir -p "$STATE"
	[ "$(cmdline_boot)" = 1 ] || { say resumed 0; systemctl poweroff; exit 0; }
	wait_session
	say session_vt "$(session_field VTNr)"
	say session_type "$(session_field Type)"
	vt_report ""
	say mark desktop
	sleep 6
	[ "$(swap_active /dev/vda2)" = 1 ] || out=$(swapon /dev/vda2 2>&1) ||
		fatal "swapon /dev/vda2 failed: $out"
	workload_start
	echo 1 >"$STATE/hibernated_in"
	vt_watch &

	# The host types Esc until this cycle ends.
	since=$(date '+%Y-%m-%d %H:%M:%S')
	say mark cancel
	hibernate_wait
	say cancel_rc "$rc"
	say cancel_result "$result"
	sleep 6
	unit_report "$since"
	vt_report _cancel
	say mark cancelled
	sleep 6
	check_cancelled="$(journalctl -b -o cat -u systemd-hibernate.service --since "$since" |
		grep -c 'cancelled')"
	say cancel_said "$check_cancelled"

	since=$(date '+%Y-%m-%d %H:%M:%S')
	say mark hibernate
	hibernate_wait
	# The resumed world (boot 2's console).
	sleep 6
	say resumed 1
	say hibernate_result "$result"
	workload_report
	unit_report "$since"
	vt_report _resumed
	say mark after
	sleep 6
	systemctl poweroff
}

resumed() { :; }

dispatch "$1"
