#!/bin/sh
# The downgrade attack: a plain image where encryption is configured.
#   boot 1: nothing configured: workload, a plain `hibernate` (powers off)
#   boot 2: encrypt = yes and a key file in /etc/hibernate.conf (so
#           require-encryption is on by default): `hibernate resume` must
#           refuse the plain image, say why, and give the swap area back; the
#           boot goes on fresh (no workload); swapon works.  Then the
#           control: a new workload, `hibernate` with the same config (an
#           image sealed with the key file)
#   boot 3: the same config: `hibernate resume` restores boot 2's world
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
# shellcheck disable=SC2034 # read by workload.sh
WORKLOAD_MB=8
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh
# shellcheck source=../guest/faults-guest.sh
. /lib/hibtest/faults-guest.sh

# downgrade_config: encryption with the key file, the way an installed
# system has it: in /etc/hibernate.conf, which the initramfs carries.
downgrade_config() {
	fault_make_keyfile
	printf 'encrypt = yes\nkey-file = %s\n' "$FAULT_KEYFILE" >/etc/hibernate.conf
	say require "$(hibernate status --device /dev/vda1 2>&1 | sed -n 's/^ *require-encryption *//p')"
}

case $1 in
1)
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	workload_start
	workload_report
	fault_hibernate || exit 1
	;;
2)
	downgrade_config
	fault_resume
	# A fresh boot: nothing of boot 1's world is here.
	if [ -e /run/counter ]; then say fresh no; else say fresh yes; fi
	fault_status
	fault_swapon
	workload_start
	workload_report
	fault_hibernate || exit 1
	;;
3)
	downgrade_config
	fault_resume
	;;
*) fatal "downgrade has no boot $1" ;;
esac
