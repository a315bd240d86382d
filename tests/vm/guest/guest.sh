# shellcheck shell=sh
# Helpers for /init and the scenario scripts (busybox sh), sourced.

# say KEY VALUE: one line of the guest -> host protocol.
say() {
	echo "HIBTEST $1=$2"
}

# Power off now, whatever state we are in.  poweroff -f calls
# reboot(RB_POWER_OFF) directly (no init to ask); sysrq is the fallback.
power_off() {
	sync
	poweroff -f
	sleep 2
	echo o >/proc/sysrq-trigger
	sleep 30
	exit 1
}

# fatal MESSAGE: report and power off (never returns).
fatal() {
	say error "$*"
	power_off
}

# use_test_binary: from here on `hibernate` is /bin/hibernate-test, the build
# that reads the test-only variables (HIBERNATE_TEST_PAUSE,
# HIBERNATE_DOCTOR_ROOT, HIBERNATE_HOOKS_DIRS); /bin/hibernate ignores them.
use_test_binary() {
	[ -x /bin/hibernate-test ] || fatal "/bin/hibernate-test missing from the initramfs: make static-test"
	mkdir -p /run/test-bin
	ln -sf /bin/hibernate-test /run/test-bin/hibernate
	PATH=/run/test-bin:$PATH
	export PATH
}

# Milliseconds since boot (from /proc/uptime: 10 ms resolution).  Not
# wall-clock time: after a resume it is the resumed kernel's uptime.
uptime_ms() {
	awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime
}

# load_modules SET: insmod the modules of /etc/hibtest/modules.SET, in order
# (the host resolved the dependencies and the order when it built the image).
load_modules() {
	[ -f "/etc/hibtest/modules.$1" ] || fatal "no module set '$1' in the initramfs"
	while read -r m; do
		insmod "/lib/modules/$m.ko" || fatal "insmod $m failed (set $1)"
	done <"/etc/hibtest/modules.$1"
}

# wait_for_block DEV: wait up to 5 s for a block device node (devtmpfs
# creates it once the driver has probed the disk and read its partitions).
wait_for_block() {
	i=0
	while [ ! -b "$1" ]; do
		i=$((i + 1))
		[ $i -gt 100 ] && return 1
		usleep 50000
	done
	return 0
}

# Printable form of raw bytes (for signatures read off a disk).
printable() {
	tr -c 'A-Za-z0-9_\n' '.'
}

# The swap signature: the last 10 bytes of the first page of DEV.
swap_signature() {
	dd if="$1" bs=4096 count=1 2>/dev/null | tail -c 10 | printable
}

# dmesg_mark: remember how far the kernel log goes; dump_kernel_log then
# shows what the kernel said after that (freezer, snapshot, swsusp...), as
# evidence on the console when a step failed.
dmesg_mark() {
	dmesg_lines=$(dmesg | wc -l)
}
dump_kernel_log() {
	dmesg | tail -n +$((${dmesg_lines:-0} + 1)) | tail -n 30 | sed 's/^/  dmesg: /'
}

# resumed_or_exit RC: RC is a hibernate command's exit status.  0: this is the
# resumed world (on the resuming boot's console), go on.  Anything else: the
# cycle failed and this boot goes on: report it with the kernel's log, end
# the scenario script.
resumed_or_exit() {
	[ "$1" -eq 0 ] && return 0
	say hibernate_rc "$1"
	dump_kernel_log
	exit 1
}

# resume_step [ARGS...]: the resuming boot's step, `hibernate resume ARGS`.
# When it restores the image it never returns; when it does return, say so
# ("resumed=0", its exit status and how long it took: resume_ms) with the
# kernel's log.
# shellcheck disable=SC2120 # the arguments are optional: called without them too
resume_step() {
	resume_t0=$(uptime_ms)
	hibernate resume "$@"
	resume_rc=$?
	resume_ms=$(($(uptime_ms) - resume_t0))
	say resumed 0
	say resume_rc "$resume_rc"
	say resume_ms "$resume_ms"
	dump_kernel_log
}

# dev_head_sha DEV [MB]: sha256 of the first MB MiB (default 16) of DEV as
# the disk holds them: the page cache is dropped first, so a write that went
# around it (O_DIRECT) cannot hide behind pages read before it.
dev_head_sha() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	dd if="$1" bs=1M count="${2:-16}" 2>/dev/null | sha256sum | cut -d' ' -f1
}

# froze_since_mark: 1 if the kernel froze processes since dmesg_mark (a
# hibernate got as far as FREEZE), else 0.
froze_since_mark() {
	if dmesg | tail -n +$((${dmesg_lines:-0} + 1)) | grep -q 'Freezing user space'; then
		echo 1
	else
		echo 0
	fi
}

# disk_signature DEV: the signature of DEV's first page read with O_DIRECT by
# `hibernate status` (what the disk holds, not a page cache from before a
# resume), as status names it.
disk_signature() {
	hibernate status --device "$1" 2>/dev/null | sed -n 's/^signature: *//p'
}
