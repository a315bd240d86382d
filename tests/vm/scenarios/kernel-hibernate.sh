#!/bin/sh
# Harness self-test with the KERNEL's own hibernation (no `hibernate` binary):
# proves the VM, the workload and the host checks, and is the baseline for
# benchmarks against the kernel.
#   boot 1: swapon vda1, workload, echo disk > /sys/power/state
#   boot 2: echo MAJ:MIN > /sys/power/resume  (an initramfs has no root
#           mount, so the kernel's resume= is acted on only when /init asks)
#   boot 3: the same again: the kernel's resume must find no image
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh

boot=$1
ticks=0
# shellcheck disable=SC2013 # words, not lines
for word in $(cat /proc/cmdline); do
	case $word in hibtest.ticks=*) ticks=${word#*=} ;; esac
done

# Ask the kernel to resume from vda1 (what an initramfs does for resume=).
kernel_resume() {
	devno=$(cat /sys/class/block/vda1/dev)
	say resume_dev "$devno"
	t0=$(uptime_ms)
	echo "$devno" >/sys/power/resume
	# shellcheck disable=SC2320 # the write's status is the point
	rc=$?
	t1=$(uptime_ms)
	# Still here: no image was restored.
	say resumed 0
	say resume_rc "$rc"
	say resume_ms $((t1 - t0))
}

case $boot in
1)
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	workload_start
	workload_report "$ticks"
	# "shutdown": power off after writing, like the hibernate binary does
	# (the default "platform" would enter ACPI S4).
	echo shutdown >/sys/power/disk
	dmesg_mark
	say mark hibernate
	echo disk >/sys/power/state
	# Here either the kernel resumed us (on boot 2's console) or it failed.
	# shellcheck disable=SC2320 # the write's status is the point
	resumed_or_exit $?
	workload_after_resume
	;;
2)
	dmesg_mark
	say mark resume
	kernel_resume
	dump_kernel_log
	;;
3)
	kernel_resume
	say signature "$(swap_signature /dev/vda1)"
	if swapon /dev/vda1; then say swapon ok; else say swapon "failed (exit $?)"; fi
	;;
*)
	fatal "kernel-hibernate has no boot $boot"
	;;
esac
