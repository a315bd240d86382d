#!/bin/sh
# Guest part of trixie-sleep: runs inside the Debian system the host built
# (trixie-sleep.host), from hibtest.service once the system is up ("step")
# and from hibtest-resumed.service after suspend-then-hibernate.target
# ("resumed": in the resumed world).
#   boot 1  a vendor hook in /usr/lib/systemd/system-sleep, a ticker in
#           user.slice and a watcher of user.slice's freezer outside it;
#           HibernateDelaySec=20s.  `systemctl hybrid-sleep`: our image, then
#           S3 (the host wakes the VM); report.  Then the workload and
#           `systemctl suspend-then-hibernate`: S3, the RTC alarm wakes it,
#           our cycle powers off.
#   boot 2  the distro initramfs resumes: report the workload, the hooks,
#           the unit's journal, the freezer; power off.
# Results: "HIBTEST key=value" lines on the console (ttyS0).
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
STATE=/run/hibtest
DATA=/dev/shm/workload.bin
HOOKLOG=$STATE/sdhook.log
SLICE_EVENTS=/sys/fs/cgroup/user.slice/cgroup.events

DATA_MB=32
# shellcheck source=../guest/debian/common.sh
. /usr/local/lib/hibtest/common.sh

# A vendor hook, as NVIDIA's: what systemd-sleep would call it with.
vendor_hook() {
	mkdir -p /usr/lib/systemd/system-sleep
	cat >/usr/lib/systemd/system-sleep/hibtest-vendor <<-EOF
		#!/bin/sh
		echo "\$1 \$2 \$SYSTEMD_SLEEP_ACTION" >>$HOOKLOG
		echo "HIBTEST sdhook=\$1 \$2 \$SYSTEMD_SLEEP_ACTION" >/dev/console
	EOF
	chmod 755 /usr/lib/systemd/system-sleep/hibtest-vendor
}

# A ticker in user.slice (ticks every 0.2 s), and outside it, in system.slice,
# a watcher: whenever user.slice's cgroup says "frozen 1", the ticks then and
# 0.1 s later while still frozen, one line "BEFORE AFTER" in $STATE/frozen.
freeze_probe() {
	echo 0 >$STATE/ticks
	cat >$STATE/ticker <<-EOF
		#!/bin/sh
		n=0
		while :; do
			n=\$((n + 1))
			echo \$n >$STATE/ticks.new
			mv $STATE/ticks.new $STATE/ticks
			sleep 0.2
		done
	EOF
	cat >$STATE/watcher <<-EOF
		#!/bin/sh
		frozen() {
			f=0
			while read -r k v; do [ "\$k" = frozen ] && f=\$v; done <$SLICE_EVENTS
			[ "\$f" = 1 ]
		}
		while :; do
			if frozen; then
				read -r a <$STATE/ticks
				sleep 0.1
				frozen && read -r b <$STATE/ticks && echo "\$a \$b" >>$STATE/frozen
			fi
			sleep 0.05
		done
	EOF
	# /run is noexec: through sh.
	systemd-run --quiet --unit=hibtest-ticker --slice=user.slice /bin/sh $STATE/ticker ||
		fatal "systemd-run --slice=user.slice failed"
	systemd-run --quiet --unit=hibtest-watcher /bin/sh $STATE/watcher || fatal "systemd-run of the watcher failed"
	sleep 1
	say ticker_state "$(systemctl show -P ActiveState hibtest-ticker.service)"
	say ticker_cgroup "$(systemctl show -P ControlGroup hibtest-ticker.service)"
	say watcher_state "$(systemctl show -P ActiveState hibtest-watcher.service)"
}

# freeze_report TAG: what the watcher saw, and whether the ticker runs again.
freeze_report() {
	a=$(cat $STATE/ticks)
	sleep 1
	say "${1}_frozen_seen" "$(wc -l <$STATE/frozen 2>/dev/null || echo 0)"
	say "${1}_frozen_stalled" "$(awk '$1 == $2' $STATE/frozen 2>/dev/null | wc -l)"
	say "${1}_ticks_after" "$(($(cat $STATE/ticks) - a))"
	say "${1}_freezer_state" "$(systemctl show -P FreezerState user.slice)"
	: >$STATE/frozen
}

# wait_unit UNIT: until UNIT is no longer starting (at most 240 s), its
# state on the console every 20 s.
wait_unit() {
	n=0
	while [ $n -lt 240 ]; do
		st=$(timeout 10 systemctl show -P ActiveState "$1")
		case $st in activating | "") ;; *) return 0 ;; esac
		[ $((n % 20)) = 0 ] && say waiting "$1 $st $(timeout 10 systemctl show -P SubState,MainPID "$1" | paste -sd/)"
		sleep 1
		n=$((n + 1))
	done
	say waiting "$1 still $st after 240 s"
}

hybrid() {
	say mark hybrid
	systemctl hybrid-sleep || say hybrid_rc "systemctl hybrid-sleep: exit $?"
	wait_unit systemd-hybrid-sleep.service
	say hybrid_result "$(systemctl show -P Result systemd-hybrid-sleep.service)"
	say hybrid_status "$(systemctl show -P ExecMainStatus systemd-hybrid-sleep.service)"
	journalctl -b -o cat -u systemd-hybrid-sleep.service | show hybrid-unit
	say hybrid_woke "$(journalctl -b -o cat -u systemd-hybrid-sleep.service | grep -c '^hibernate: woke up from RAM; the image on disk was discarded')"
	say hybrid_wrote "$(journalctl -b -o cat -u systemd-hybrid-sleep.service | grep -c '^hibernate: hibernating to ')"
	say hybrid_hooks "$(paste -sd, $HOOKLOG)"
	say hybrid_leftover "$(journalctl -b -o cat -u systemd-hybrid-sleep.service | grep -c 'remains running after unit stopped')"
	say hybrid_ioq_stalls "$(journalctl -b -o cat -u systemd-hybrid-sleep.service | grep -c 'io_uring: no completion in')"
	say hybrid_workset_scope "$(journalctl -b -o cat | grep -c 'Started hibernate-workset-[0-9]*\.scope')"
	hibernate status --device /dev/vda2 >$STATE/status 2>&1
	say hybrid_image_after "$(sed -n 's/^image: *//p' $STATE/status)"
	freeze_report hybrid
	: >$HOOKLOG
}

step() {
	boot=$(cmdline_boot)
	mkdir -p $STATE
	say boot_start "$boot"
	say kernel "$(uname -r)"
	say systemd "$(systemctl --version | head -n 1)"
	case $boot in
	1)
		out=$(swapon /dev/vda2 2>&1) || grep -q '^/dev/vda2 ' /proc/swaps || fatal "swapon /dev/vda2 failed: $out"
		vendor_hook
		mkdir -p /etc/systemd/sleep.conf.d
		printf '[Sleep]\nHibernateDelaySec=20s\n' >/etc/systemd/sleep.conf.d/hibtest.conf
		# The freezer's messages are at loglevel 4.
		echo 'loglevel = 4' >>/etc/hibernate.conf
		freeze_probe
		# The kernel's "PM: suspend entry" and "PM: suspend exit" on the console.
		dmesg -n 7
		hybrid
		workload_start
		echo 1 >$STATE/hibernated_in
		sync
		say mark s2h
		systemctl suspend-then-hibernate || say hibernate_rc "systemctl suspend-then-hibernate: exit $?"
		sleep 300
		[ -e $STATE/resumed ] && exit 0
		say hibernate_rc "suspend-then-hibernate did not power off within 300 s"
		journalctl -b -o cat -u systemd-suspend-then-hibernate.service | show s2h-unit
		systemctl poweroff
		;;
	*) not_resumed ;;
	esac
}

resumed() {
	touch $STATE/resumed
	u=systemd-suspend-then-hibernate.service
	say resumed_from "$(cat $STATE/hibernated_in 2>/dev/null)"
	say s2h_result "$(systemctl show -P Result $u)"
	say resumed 1
	workload_report
	journalctl -b -o cat -u $u | show s2h-unit
	say s2h_delay "$(journalctl -b -o cat -u $u | grep -c '^hibernate: suspend-then-hibernate: hibernating after 20 s in RAM$')"
	say s2h_suspended "$(journalctl -b -o cat -u $u | grep -c '^hibernate: suspending to RAM (suspend)')"
	say s2h_woke "$(journalctl -b -o cat -u $u | grep -c '^hibernate: woke up from RAM$')"
	say s2h_hibernating "$(journalctl -b -o cat -u $u | grep -c '^hibernate: hibernating to ')"
	say s2h_resumed "$(journalctl -b -o cat -u $u | grep -c '^hibernate: resumed')"
	say s2h_frozen_msgs "$(journalctl -b -o cat -u $u | grep -c '^hibernate: user.slice frozen$')"
	say s2h_thawed_msgs "$(journalctl -b -o cat -u $u | grep -c '^hibernate: user.slice thawed$')"
	say s2h_hooks "$(paste -sd, $HOOKLOG)"
	say s2h_leftover "$(journalctl -b -o cat -u $u | grep -c 'remains running after unit stopped')"
	freeze_report s2h
	systemd-run --quiet --on-active=2 systemctl poweroff
}

dispatch "$1"
