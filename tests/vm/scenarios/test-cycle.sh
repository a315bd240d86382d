#!/bin/sh
# `hibernate --test`: write the image, restore it at once without powering
# off; the same boot goes on.  One boot.
# Proof that memory really was restored: at --loglevel 5 the tool's messages
# also go to the kernel log; the ones from before the snapshot ("pipeline:")
# are in the restored memory, the ones from after it ("image written") were
# only in the memory the restore replaced.
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
WORKLOAD_MB=${WORKLOAD_MB:-32}
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh

[ -x /bin/hibernate ] || fatal "/bin/hibernate missing from the initramfs"
[ "$1" = 1 ] || fatal "test-cycle has no boot $1"

swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
workload_start
workload_report
dmesg_mark
say mark hibernate
t0=$(uptime_ms)
hibernate --test --loglevel 5
rc=$?
t1=$(uptime_ms)
say mark checks
say test_rc "$rc"
say test_ms $((t1 - t0))
workload_after_resume
say kmsg_before "$(dmesg | grep -c 'hibernate: pipeline:')"
say kmsg_after "$(dmesg | grep -c 'hibernate: image written')"
dump_kernel_log
say disk_signature "$(disk_signature /dev/vda1)"
say image "$(hibernate status --device /dev/vda1 2>/dev/null | sed -n 's/^image: *//p')"
say swap_active "$(hibernate status --device /dev/vda1 2>/dev/null | sed -n 's/^active-swap: *//p')"
