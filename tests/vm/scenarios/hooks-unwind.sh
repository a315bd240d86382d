#!/bin/sh
# A failing hook unwinds what the hooks before it did.
#   boot 1: hooks 10-a, 30-b, 50-gate, 70-c; 50-gate does what /run/gate
#           says.  Attempts, each `hibernate -v` (the cycle must not start):
#             exit1    50-gate exits 1            -> exit 1, naming it
#             exit2    exits 2 with a message     -> exit 3, the message shown
#             exit3    exits 3 with output        -> exit 3, nothing shown
#             timeout  sleeps past hook-timeout 2 -> killed, exit 1
#             imgsize  every hook succeeds, --image-size 1 fails the cycle
#             sigterm  50-gate sleeps; meanwhile a second `hibernate` (refused:
#                      the run lock), then SIGTERM to the first -> exit 1,
#                      every post run, 50-gate's included
#           then `hibernate -v --force` with 50-gate exiting 1: the cycle
#           goes on and powers off; in the resumed world the hook log.
#   boot 2: `hibernate resume`.
# shellcheck disable=SC2016 # 50-gate's code, quoted as is
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
WORKLOAD_MB=1
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh
# shellcheck source=../guest/hooks.sh
. /lib/hibtest/hooks.sh

[ -x /bin/hibernate ] || fatal "/bin/hibernate missing from the initramfs"

# attempt ROUND GATE [OPTIONS...]: one `hibernate -v OPTIONS` with 50-gate
# doing GATE; reports ROUND_rc, ROUND_ms and ROUND_sig (vda1's signature
# after it).
attempt() {
	round=$1 gate=$2
	shift 2
	set_round "$round"
	echo "$gate" >/run/gate
	say mark "$round"
	t0=$(uptime_ms)
	hibernate -v "$@"
	rc=$?
	t1=$(uptime_ms)
	say "${round}_rc" "$rc"
	say "${round}_ms" $((t1 - t0))
	say "${round}_sig" "$(vda1_signature)"
}

case $1 in
1)
	hooks_dirs
	hook_logger "$ETC_HOOKS/10-a" 10-a
	hook_logger "$LIB_HOOKS/30-b" 30-b
	hook_logger "$ETC_HOOKS/50-gate" 50-gate '[ "$1" = pre ] || exit 0
case $(cat /run/gate) in
exit1) echo "gate: failing with 1"; exit 1 ;;
exit2) echo "Battery at 3%: not hibernating"; exit 2 ;;
exit3) echo "gate: aborting silently"; exit 3 ;;
sleep)
	sleep 60 &
	echo $! >/run/gate.child
	echo $$ >/run/gate.pid
	wait
	echo "gate: woke up"
	;;
esac
exit 0'
	hook_logger "$LIB_HOOKS/70-c" 70-c
	echo "hook-timeout = 2" >/etc/hibernate.conf
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	workload_start

	attempt exit1 exit1
	attempt exit2 exit2
	attempt exit3 exit3
	attempt timeout sleep
	alive=0
	# shellcheck disable=SC2013 # one pid per file
	for pid in $(cat /run/gate.pid /run/gate.child); do
		kill -0 "$pid" 2>/dev/null && alive=$((alive + 1))
	done
	say timeout_alive "$alive"
	attempt imgsize ok --image-size 1

	# SIGTERM while a pre hook runs (hook-timeout long enough not to end it).
	echo "hook-timeout = 30" >/etc/hibernate.conf
	rm -f /run/gate.pid /run/gate.child
	set_round sigterm
	echo sleep >/run/gate
	say mark sigterm
	hibernate -v &
	hpid=$!
	i=0
	while [ ! -s /run/gate.pid ] && [ $i -lt 100 ]; do
		usleep 100000
		i=$((i + 1))
	done
	hibernate -v >/run/second.out 2>&1
	say second_rc $?
	say second_said "$(grep -c 'another hibernate is running' /run/second.out)"
	kill -TERM "$hpid"
	wait "$hpid"
	say sigterm_rc $?
	say sigterm_sig "$(vda1_signature)"
	echo "hook-timeout = 2" >/etc/hibernate.conf

	workload_report 0
	set_round force
	echo exit1 >/run/gate
	say mark hibernate
	hibernate -v --force
	rc=$?
	if [ $rc -ne 0 ]; then
		say hibernate_rc "$rc"
		exit 1
	fi
	workload_after_resume
	dump_hooklog
	;;
2)
	resume_boot
	;;
*)
	fatal "hooks-unwind has no boot $1"
	;;
esac
