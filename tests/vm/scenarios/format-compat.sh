#!/bin/sh
# An image written by an older hibernate resumes with today's.
#   boot 1: swapon vda1, workload, `hibernate-old -v` (the binary built at the
#           commit format-compat.host names) powers the VM off
#   boot 2: today's `hibernate resume`: must restore boot 1's world
#   boot 3: no image left, the swap area usable again
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh

boot=$1
[ -x /bin/hibernate-old ] || fatal "/bin/hibernate-old missing from the initramfs"

case $boot in
1)
	say writer_sha "$(sha256sum /bin/hibernate-old | cut -d' ' -f1)"
	say reader_sha "$(sha256sum /bin/hibernate | cut -d' ' -f1)"
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	workload_start
	workload_report 0
	say mark hibernate
	hibernate-old -v
	resumed_or_exit $?
	workload_after_resume
	;;
2)
	say mark resume
	resume_step --device /dev/vda1
	;;
3)
	resume_step --device /dev/vda1
	say signature "$(swap_signature /dev/vda1)"
	if swapon /dev/vda1; then say swapon ok; else say swapon "failed (exit $?)"; fi
	;;
*)
	fatal "format-compat has no boot $boot"
	;;
esac
