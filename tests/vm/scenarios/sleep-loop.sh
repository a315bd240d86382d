#!/bin/sh
# Guest part of sleep-loop (see sleep-loop.host): suspend to RAM
# hibtest.loops times, each woken by the RTC alarm 2 s later.
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh

loops=20
# shellcheck disable=SC2013 # words, not lines
for word in $(cat /proc/cmdline); do
	case $word in hibtest.loops=*) loops=${word#*=} ;; esac
done
say mem_sleep "$(cat /sys/power/mem_sleep)"
dmesg -n 7
rtc=/sys/class/rtc/rtc0
[ -e $rtc/wakealarm ] || fatal "no $rtc/wakealarm"
mode=mem
grep -q hibtest.hybrid /proc/cmdline && mode=hybrid
if [ $mode = hybrid ]; then
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
fi
# sleep_once: to RAM once, woken by the RTC: the kernel's own suspend
# (/sys/power/state, 2 s), or `hibernate --powerdown suspend` (the image,
# then S3 through /dev/snapshot; 30 s: the image is written first).
sleep_once() {
	echo 0 >$rtc/wakealarm
	if [ $mode = hybrid ]; then
		echo +30 >$rtc/wakealarm
		hibernate --powerdown suspend >/dev/null 2>&1
	else
		echo +2 >$rtc/wakealarm
		echo mem >/sys/power/state
	fi
}
i=0 woke=0 total=0
while [ $i -lt "$loops" ]; do
	i=$((i + 1))
	t0=$(uptime_ms)
	if sleep_once; then
		woke=$((woke + 1))
	else
		say sleep_error "suspend $i failed"
	fi
	t1=$(uptime_ms)
	total=$((total + t1 - t0))
	say slept "$i $((t1 - t0)) ms"
done
say woke "$woke"
say sleep_ms "$total"
poweroff -f
