#!/bin/sh
# An image must only be restored by the kernel that wrote it.  The host
# boots a different kernel per boot (kernel-mismatch.host): THIS is the
# pass's kernel, OTHER the series before it (6.12: 6.1; newest: 6.12).
#   boot 1 (OTHER): workload, `hibernate`
#   boot 2 (THIS):  `hibernate resume` must refuse naming both kernels and
#                   discard the image; then a new image, written by THIS
#   boot 3 (OTHER): the same refusal the other way round, with
#                   kernel-mismatch = keep in /etc/hibernate.conf: the image
#                   stays (no swapon)
#   boot 4 (THIS):  resumes boot 2's image
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
# shellcheck disable=SC2034 # read by workload.sh
WORKLOAD_MB=8
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh
# shellcheck source=../guest/faults-guest.sh
. /lib/hibtest/faults-guest.sh

case $1 in
1)
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	workload_start
	workload_report
	fault_hibernate || exit 1
	;;
2)
	fault_resume
	fault_status
	fault_swapon
	workload_start
	workload_report
	fault_hibernate || exit 1
	;;
3)
	echo 'kernel-mismatch = keep' >/etc/hibernate.conf
	fault_resume
	fault_status
	;;
4)
	fault_resume
	;;
*) fatal "kernel-mismatch has no boot $1" ;;
esac
