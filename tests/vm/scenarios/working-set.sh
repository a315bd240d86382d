#!/bin/sh
# The working set comes back after resume: two processes whose memory the
# snapshot pushes to swap, and a file whose page cache it drops.
#   boot 1: swapon vda1; read /mnt/data/blob (vda2) into the page cache; two
#           `wstool hog` processes (anonymous memory, the blob held open);
#           the control: `hibernate --test` with restore-working-set = no,
#           then their swap and the blob's cache as the snapshot left them;
#           the blob read again, then `hibernate -v --image-size $limit`
#           (powers off)
#   boot 2: resume; in the resumed world wait for the restore's kernel-log
#           line, then their swap and the blob's cache again
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
WORKLOAD_MB=${WORKLOAD_MB:-8}
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh

[ -x /bin/hibernate ] || fatal "/bin/hibernate missing from the initramfs"
[ -x /bin/wstool ] || fatal "/bin/wstool missing from the initramfs"
# The image limit and each hog's size (MiB): tests/vm/README.md says why.
limit=256 hog_mib=192
blob=/mnt/data/blob

# The hogs' VmSwap together, in KiB.
hogs_swap() {
	s1=$(awk '/^VmSwap:/ { print $2 }' "/proc/$hog1/status")
	s2=$(awk '/^VmSwap:/ { print $2 }' "/proc/$hog2/status")
	echo $((s1 + s2))
}

# wait_restored SECONDS: the restore's line in the kernel log, or nothing.
wait_restored() {
	i=0
	while [ $i -lt $(($1 * 10)) ]; do
		line=$(dmesg | grep -o 'hibernate: working set restored: .*' | tail -n 1)
		[ -n "$line" ] && break
		usleep 100000
		i=$((i + 1))
	done
	echo "$line"
}

# wait_ready PID: the hog PID has filled its memory.
wait_ready() {
	i=0
	while [ ! -e "/run/wstool.$1.ready" ]; do
		i=$((i + 1))
		[ $i -gt 600 ] && fatal "wstool hog $1 did not fill its memory in 60 s"
		usleep 100000
	done
}

case $1 in
1)
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	mount -t ext4 -o ro /dev/vda2 /mnt || fatal "mount vda2 failed"
	cat "$blob" >/dev/null || fatal "reading $blob failed"
	wstool hog "$hog_mib" "$blob" </dev/null >/dev/null 2>&1 &
	hog1=$!
	wstool hog "$hog_mib" "$blob" </dev/null >/dev/null 2>&1 &
	hog2=$!
	wait_ready "$hog1"
	wait_ready "$hog2"
	say incore_before "$(wstool incore "$blob")"
	say swap_before "$(hogs_swap)"
	workload_start
	workload_report

	# The control: the same cycle with the restore off (--test: one boot).
	(umask 077 && echo 'restore-working-set = no' >/run/ws-off.conf)
	dmesg_mark
	say mark control
	hibernate --config /run/ws-off.conf --test --image-size "$limit"
	rc=$?
	# On 7.2 the first snapshot after the hogs came can stay over this tight
	# limit although it swapped them out whole (seen in two make check runs:
	# 256 MiB over 256, the hogs' 384 MiB in swap); a second try made 200 MiB.
	# The control is about the restore, not the limit: it may try twice.
	if [ "$rc" = 1 ] && dmesg | grep -q 'over the limit of'; then
		say control_retried 1
		hibernate --config /run/ws-off.conf --test --image-size "$limit"
		rc=$?
	fi
	say control_rc "$rc"
	# Long enough for a restore to have said it is done (about 3 s here).
	sleep 4
	say control_line "$(dmesg | grep -o 'hibernate: working set restored: .*' | tail -n 1)"
	say control_swap "$(hogs_swap)"
	say control_incore "$(wstool incore "$blob")"

	# The control dropped it: read it again for the real cycle.
	cat "$blob" >/dev/null || fatal "reading $blob failed"
	say incore_before2 "$(wstool incore "$blob")"
	dmesg_mark
	say mark hibernate
	hibernate -v --image-size "$limit"
	resumed_or_exit $?
	say restored_line "$(wait_restored 60)"
	say after_swap "$(hogs_swap)"
	say after_incore "$(wstool incore "$blob")"
	workload_after_resume
	;;
2)
	dmesg_mark
	say mark resume
	resume_step
	;;
*)
	fatal "working-set has no boot $1"
	;;
esac
