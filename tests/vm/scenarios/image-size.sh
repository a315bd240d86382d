#!/bin/sh
# --image-size: the kernel must shrink the image (drop page cache) to meet a
# limit, and a limit it cannot meet must fail cleanly.
#   boot 1: swapon vda1; ~300 MB of files read from vda2 (page cache) plus the
#           tmpfs workload; `hibernate --image-size $LIMIT`
#   boot 2: `hibernate status` (stream-bytes of the image), resume; in the
#           resumed world `hibernate --image-size 8` must fail, the system
#           keeps running; then the test build's first image counts over the
#           limit (HIBERNATE_TEST_IMAGE_MISS: the kernel's miss, not made on
#           demand otherwise) and `hibernate-test --test` must make it again
#           under the limit, write it and restore it
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
WORKLOAD_MB=${WORKLOAD_MB:-64}
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh

[ -x /bin/hibernate ] || fatal "/bin/hibernate missing from the initramfs"
limit=180
# shellcheck disable=SC2013 # words, not lines
for word in $(cat /proc/cmdline); do
	case $word in hibtest.limit=*) limit=${word#*=} ;; esac
done

cached_kb() {
	awk '/^Cached:/ { print $2 }' /proc/meminfo
}

case $1 in
1)
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	mount -t ext4 -o ro /dev/vda2 /mnt || fatal "mount vda2 failed"
	cat /mnt/data/* >/dev/null || fatal "reading /mnt/data failed"
	workload_start
	workload_report
	say cached_before "$(cached_kb)"
	say limit "$limit"
	dmesg_mark
	say mark hibernate
	hibernate --image-size "$limit"
	resumed_or_exit $?
	workload_after_resume
	say cached_after "$(cached_kb)"

	dmesg_mark
	say mark impossible
	hibernate --image-size 8
	say impossible_rc "$?"
	say mark impossible_checks
	workload_recheck
	say disk_signature "$(disk_signature /dev/vda1)"

	# The kernel's miss, made on demand by the test build: the first image
	# counts 4 MiB over the limit, is freed, and is made again smaller;
	# --test writes it and restores it at once (--loglevel 4: the lines that
	# say so).
	dmesg_mark
	say mark miss
	HIBERNATE_TEST_IMAGE_MISS=4 hibernate-test --test --loglevel 4 --image-size "$limit"
	say miss_rc "$?"
	say mark miss_checks
	workload_recheck
	;;
2)
	hibernate status --device /dev/vda1 >/run/status 2>&1
	sed 's/^/  status: /' /run/status
	say stream_bytes "$(sed -n 's/^stream-bytes: *//p' /run/status)"
	dmesg_mark
	say mark resume
	resume_step
	;;
*)
	fatal "image-size has no boot $1"
	;;
esac
