#!/bin/sh
# A swap area too small for the image: `hibernate` must fail cleanly.
#   boot 1: vda1 is a 64 MiB swap area, the workload ~200 MB of random
#           data; `hibernate` must fail naming the sizes, every process
#           thawed and running, the data intact, the swap area as it was
#           (SWAPSPACE2, no image, no pages held), usable again.
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh
# shellcheck source=../guest/faults-guest.sh
. /lib/hibtest/faults-guest.sh

swap_used_kib() {
	awk '$1 == "/dev/vda1" { print $4 }' /proc/swaps
}

case $1 in
1)
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	say swap_size_kib "$(awk '$1 == "/dev/vda1" { print $3 }' /proc/swaps)"
	workload_start
	workload_report
	say swap_used_before "$(swap_used_kib)"
	say mark hibernate
	hibernate >/run/hib.out 2>&1
	rc=$?
	sed 's/^/  | /' /run/hib.out
	if [ $rc -eq 0 ]; then
		# Resumed (or never powered off): not what this scenario expects.
		workload_after_resume
		exit 0
	fi
	say hibernate_rc "$rc"
	say hibernate_msg "$(grep -v -e 'Writing image' /run/hib.out | sed 's/^hibernate: //' |
		head -n 3 | tr '\n' '|' | sed 's/|$//; s/|/ | /g')"
	# Thawed: the counter goes on, the same process, the data intact.
	read -r pid1 n1 </run/counter
	sleep 2
	read -r pid2 n2 </run/counter
	say counter_before "$n1"
	say counter_after "$n2"
	[ "$pid1" = "$pid2" ] && kill -0 "$pid1" 2>/dev/null && say counter_alive 1
	say hash_after "$(workload_hash)"
	say signature "$(swap_signature /dev/vda1)"
	say swap_used_after "$(swap_used_kib)"
	fault_status
	# Usable: off and on again, as a boot would.
	if swapoff /dev/vda1 && swapon /dev/vda1; then say swapon ok; else say swapon failed; fi
	;;
*) fatal "no-space has no boot $1" ;;
esac
