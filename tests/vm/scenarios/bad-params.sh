#!/bin/sh
# Wrong targets and parameters: every call must fail (or, for resume, find
# no image) with a clear message, before anything is frozen, writing nothing.
# The host hashes the whole disk around the boots; nothing mounts vda2.
#   boot 1 (no resume= on the cmdline): no target at all, an ext4 partition,
#          a wrong --offset, a missing device, garbage, an unknown UUID, and
#          `hibernate resume --device` the ext4 partition
#   boot 2 (resume=/dev/vda2): `hibernate resume` and plain `hibernate`
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
WORKLOAD_MB=${WORKLOAD_MB:-8}
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh

[ -x /bin/hibernate ] || fatal "/bin/hibernate missing from the initramfs"

# step NAME COMMAND...: run one call; NAME_rc is its exit status, NAME_froze
# 1 if the kernel froze processes meanwhile.  Its output is on the console
# between "mark=NAME" and "NAME_rc=".
step() {
	name=$1
	shift
	dmesg_mark
	say mark "$name"
	"$@"
	rc=$?
	say "${name}_rc" "$rc"
	say "${name}_froze" "$(froze_since_mark)"
}

heads() {
	say vda1_head "$(dev_head_sha /dev/vda1 4)"
	say vda2_head "$(dev_head_sha /dev/vda2 4)"
	say vda1_sig "$(swap_signature /dev/vda1)"
}

case $1 in
1)
	workload_start
	workload_report
	heads
	say swaps "$(tail -n +2 /proc/swaps | wc -l)"
	step none hibernate
	step ext4 hibernate --device /dev/vda2
	step missing hibernate --device /dev/vdz9
	step garbage hibernate --device foo
	step uuid hibernate --device UUID=nonexistent
	step resume_ext4 hibernate resume --device /dev/vda2
	# The offsets on an active swap partition, as a user would get them wrong.
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	step offset hibernate --device /dev/vda1 --offset 12345
	step offset_end hibernate --device /dev/vda1 --offset 99999999
	swapoff /dev/vda1 || fatal "swapoff /dev/vda1 failed"
	say mark checks
	heads
	workload_recheck
	;;
2)
	workload_start
	workload_report
	heads
	step cmdline_resume hibernate resume
	step cmdline_hibernate hibernate
	say mark checks
	heads
	workload_recheck
	;;
*)
	fatal "bad-params has no boot $1"
	;;
esac
