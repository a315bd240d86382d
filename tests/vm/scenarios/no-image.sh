#!/bin/sh
# `hibernate resume` on a plain swap area (no image): must return 0 at once
# and write nothing.  The host hashes the whole disk image before and after
# the boot; the guest also hashes the start of vda1 around the call (the
# header pages, where a resume would look and write).  Not all of vda1:
# sha256 of 1 GiB takes ~17 s under TCG.
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh

[ -x /bin/hibernate ] || fatal "/bin/hibernate missing from the initramfs"
say signature_before "$(swap_signature /dev/vda1)"
head_sha() {
	dd if=/dev/vda1 bs=1M count=16 2>/dev/null | sha256sum | cut -d' ' -f1
}
before=$(head_sha)
say sha_before "$before"
resume_step --device /dev/vda1
after=$(head_sha)
say sha_after "$after"
say signature_after "$(swap_signature /dev/vda1)"
