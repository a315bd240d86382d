#!/bin/sh
# Guest part of trixie-battery: runs inside the Debian 13 system the host
# built (trixie-battery.host), from hibtest.service once the system is up
# ("step"), from hibtest-resumed.service after suspend-then-hibernate.target
# ("resumed") and from a transient unit that goes on with the next part
# ("next").  The batteries hibernate reads are a fake power_supply root
# (HIBERNATE_TEST_POWER_SUPPLY, read by the test build only: QEMU has no
# battery); a system-sleep hook drains it before each suspend.
#   boot 1  part a: on battery at 13.0%, SuspendEstimationSec=30s, the hook
#           takes 0.5% before the first suspend (too little to measure in
#           30 s) and 1.0% before the next: `systemctl suspend-then-hibernate`
#           suspends (13.0%, the assumed 20 %/h), the RTC wakes it, suspends
#           again (12.5%, still assumed), the RTC wakes it, and at 11.5% it
#           hibernates (powers off) on the rate LEARNED from that 1.0% in
#           about 30 s (some 110 %/h): the low threshold would come before
#           the next check.
#   boot 2  the distro initramfs resumes part a: report the workload and the
#           decisions; part b: on AC with HibernateOnACPower=no, suspended
#           again at each RTC wake until the host wakes it; report; part c:
#           no battery at all, HibernateDelaySec=20s: one suspend, the RTC
#           wakes it, it hibernates (powers off).
#   boot 3  the distro initramfs resumes part c: report; power off.
# Results: "HIBTEST key=value" lines on the console (ttyS0); each part's
# timeline (the hook's readings, the decisions, the kernel's suspend entry
# and exit, from the journal) as "  timeline-P: " lines.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
STATE=/run/hibtest
DATA=/dev/shm/workload.bin
PS=$STATE/power_supply
UNIT=systemd-suspend-then-hibernate.service
SELF=/usr/local/lib/hibtest/trixie-battery.sh

DATA_MB=32
# shellcheck source=../guest/debian/common.sh
. /usr/local/lib/hibtest/common.sh

# A battery's energy, in per mille of energy_full (50 Wh), into the fake tree.
battery_set() {
	echo $(($1 * 50000)) >$PS/BAT0/energy_now
	echo $(($1 / 10)) >$PS/BAT0/capacity
}

# The fake /sys/class/power_supply: BAT0 (energy_*) and AC (Mains).
power_supply_make() {
	rm -rf $PS
	mkdir -p $PS/BAT0 $PS/AC
	echo Battery >$PS/BAT0/type
	echo 1 >$PS/BAT0/present
	echo 50000000 >$PS/BAT0/energy_full
	echo Discharging >$PS/BAT0/status
	battery_set "$1"
	echo Mains >$PS/AC/type
	echo 0 >$PS/AC/online
}

# The drain: before each suspend of suspend-then-hibernate, the next per
# mille figure of $STATE/drain comes off BAT0 (what the battery would lose
# while asleep); logged to the journal (tag hibtest-battery) and the console.
drain_hook() {
	mkdir -p /usr/lib/systemd/system-sleep
	cat >/usr/lib/systemd/system-sleep/hibtest-battery <<-EOF
		#!/bin/sh
		[ "\$1" = pre ] && [ "\$SYSTEMD_SLEEP_ACTION" = suspend ] || exit 0
		[ -d $PS/BAT0 ] || exit 0
		read -r d rest <$STATE/drain 2>/dev/null || d=0
		echo "\$rest" >$STATE/drain
		e=\$(cat $PS/BAT0/energy_now)
		e=\$((e - \${d:-0} * 50000))
		echo \$e >$PS/BAT0/energy_now
		echo \$((e / 500000)) >$PS/BAT0/capacity
		msg="before this suspend: BAT0 \$((e / 500000)).\$((e / 50000 % 10))% (-\$((\${d:-0} / 10)).\$((\${d:-0} % 10))%, simulated)"
		echo "\$msg" | systemd-cat -t hibtest-battery
		echo "HIBTEST battery=\$msg" >/dev/console
	EOF
	chmod 755 /usr/lib/systemd/system-sleep/hibtest-battery
}

# The test build reads the fake tree and keeps its rates in /run.
unit_env() {
	d=/etc/systemd/system/$UNIT.d
	mkdir -p $d
	printf '[Service]\nEnvironment=HIBERNATE_TEST_POWER_SUPPLY=%s HIBERNATE_TEST_STATE_DIR=%s\n' \
		$PS $STATE/sleep-state >$d/zz-hibtest-battery.conf
	systemctl daemon-reload
}

# sleep_conf LINE...: sleep.conf.d/hibtest.conf's [Sleep] section.
sleep_conf() {
	mkdir -p /etc/systemd/sleep.conf.d
	{
		echo '[Sleep]'
		for l in "$@"; do echo "$l"; done
	} >/etc/systemd/sleep.conf.d/hibtest.conf
}

# part_start P: part P begins (its journal from here; no learned rate).
part_start() {
	echo "$1" >$STATE/part
	rm -rf $STATE/sleep-state
	journalctl -n 1 --show-cursor -o cat | sed -n 's/^-- cursor: //p' >"$STATE/cursor.$1"
	[ -s "$STATE/cursor.$1" ] || fatal "part $1: journalctl --show-cursor said no cursor"
	say mark "part-$1"
	sync
}

# part_report P: what the unit said in part P, and its timeline.
part_report() {
	p=$1 cur=$(cat "$STATE/cursor.$1") j=$STATE/journal.$1 d=$STATE/decisions.$1
	journalctl --after-cursor="$cur" -o cat -u $UNIT >"$j"
	say "${p}_result" "$(systemctl show -P Result $UNIT)"
	grep '^hibernate: suspend-then-hibernate: ' "$j" | sed 's/^hibernate: //' >"$d"
	say "${p}_decisions" "$(wc -l <"$d")"
	while read -r l; do say "${p}_decision" "$l"; done <"$d"
	say "${p}_suspends" "$(grep -c '^hibernate: suspending to RAM (suspend)' "$j")"
	say "${p}_woke" "$(grep -c '^hibernate: woke up from RAM$' "$j")"
	say "${p}_hibernating" "$(grep -c '^hibernate: hibernating to ' "$j")"
	say "${p}_resumed" "$(grep -c '^hibernate: resumed' "$j")"
	say "${p}_stayed_up" "$(grep -c '^hibernate: woken before the hibernation delay: staying up$' "$j")"
	say "${p}_leftover" "$(grep -c 'remains running after unit stopped' "$j")"
	{
		journalctl --after-cursor="$cur" -o short-iso-precise -u $UNIT
		journalctl --after-cursor="$cur" -o short-iso-precise -t hibtest-battery
		journalctl --after-cursor="$cur" -o short-iso-precise -k --grep 'PM: suspend (entry|exit)'
	} | grep -v '^-- ' | sort -u | show "timeline-$p"
}

# The part whose hibernation was not resumed, said (power off follows).
not_powered_off() {
	say hibernate_rc "part $1: suspend-then-hibernate did not power off within 400 s"
	journalctl -b -o cat -u $UNIT | show s2h-unit
	systemctl poweroff
}

# Part a: on battery, draining; ends powered off by the hibernation.
part_a() {
	power_supply_make 130
	echo "5 10 10 10" >$STATE/drain
	sleep_conf SuspendEstimationSec=30s
	workload_start
	echo 1 >$STATE/hibernated_in
	part_start a
	systemctl suspend-then-hibernate || say hibernate_rc "systemctl suspend-then-hibernate: exit $?"
	sleep 400
	[ -e $STATE/resumed ] && exit 0
	not_powered_off a
}

# wait_unit UNIT: until UNIT is no longer starting (at most 400 s).
wait_unit() {
	n=0
	while [ $n -lt 400 ]; do
		st=$(timeout 10 systemctl show -P ActiveState "$1")
		case $st in activating | "") ;; *) return 0 ;; esac
		sleep 1
		n=$((n + 1))
	done
	say waiting "$1 still $st after 400 s"
}

# Part b: on AC (BAT0 full, AC online) with HibernateOnACPower=no: in RAM
# until the host wakes it; then part c.
part_b() {
	power_supply_make 1000
	echo Full >$PS/BAT0/status
	echo 1 >$PS/AC/online
	echo "" >$STATE/drain
	sleep_conf SuspendEstimationSec=30s HibernateOnACPower=no
	part_start b
	systemctl suspend-then-hibernate || say b_rc "systemctl suspend-then-hibernate: exit $?"
	# (logind may answer before the unit starts: wait for it to start first.)
	n=0
	while [ $n -lt 20 ] && [ "$(systemctl show -P ActiveState $UNIT)" = inactive ]; do
		sleep 0.5
		n=$((n + 1))
	done
	wait_unit $UNIT
	part_report b
	hibernate status --device /dev/vda2 >$STATE/status 2>&1
	say b_image_after "$(sed -n 's/^image: *//p' $STATE/status)"
	read -r pid n _ <$STATE/counter
	sleep 2
	read -r pid2 n2 _ <$STATE/counter
	say b_counter_ticks "$((n2 - n))"
	if [ "$pid" = "$pid2" ] && kill -0 "$pid" 2>/dev/null; then say b_counter_alive 1; else say b_counter_alive 0; fi
	part_c
}

# Part c: no battery at all (an empty power_supply root): the fixed timer
# of HibernateDelaySec=20s; ends powered off by the hibernation.
part_c() {
	rm -rf $PS
	mkdir -p $PS
	sleep_conf SuspendEstimationSec=30s HibernateDelaySec=20s
	echo 2 >$STATE/hibernated_in
	rm -f $STATE/resumed
	part_start c
	systemctl suspend-then-hibernate || say hibernate_rc "systemctl suspend-then-hibernate: exit $?"
	sleep 400
	[ -e $STATE/resumed ] && exit 0
	not_powered_off c
}

step() {
	boot=$(cmdline_boot)
	mkdir -p $STATE
	say boot_start "$boot"
	say kernel "$(uname -r)"
	say systemd "$(systemctl --version | head -n 1)"
	say package "$(dpkg-query -W -f '${Version}' hibernate)"
	case $boot in
	1)
		out=$(swapon /dev/vda2 2>&1) || grep -q '^/dev/vda2 ' /proc/swaps || fatal "swapon /dev/vda2 failed: $out"
		drain_hook
		unit_env
		# The kernel's "PM: suspend entry" and "PM: suspend exit" on the console.
		dmesg -n 7
		part_a
		;;
	*) not_resumed ;;
	esac
}

# After suspend-then-hibernate.target: parts a and c end in a resume here;
# part b's report is its own (it never hibernates).
resumed() {
	p=$(cat $STATE/part 2>/dev/null)
	case $p in
	a | c) ;;
	*) exit 0 ;;
	esac
	touch $STATE/resumed
	say resumed_from "$(cat $STATE/hibernated_in 2>/dev/null)"
	say resumed 1
	workload_report
	part_report "$p"
	if [ "$p" = a ]; then
		systemd-run --quiet --unit=hibtest-next --on-active=2 $SELF next
	else
		systemd-run --quiet --on-active=2 systemctl poweroff
	fi
}

case $1 in
next) part_b ;;
*) dispatch "$1" ;;
esac
