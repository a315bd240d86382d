#!/bin/sh
# Tampering with an encrypted image: checksums fixed up, so that only the
# header MAC, the key wrap or the blocks' AEAD can notice.
#   boot 1: workload, `hibernate --encrypt --key-file` (powers off)
#   boot 2: the host's plan (tests/vm/tools/hibimg tamper) on vda2: for
#           each change, apply, `hibernate resume --key-file` (must refuse
#           and discard), undo.  Then the untouched image must resume.
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
# shellcheck disable=SC2034 # read by workload.sh
WORKLOAD_MB=8
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh
# shellcheck source=../guest/faults-guest.sh
. /lib/hibtest/faults-guest.sh

fault_make_keyfile
case $1 in
1)
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	workload_start
	workload_report
	fault_hibernate --encrypt --key-file "$FAULT_KEYFILE" || exit 1
	;;
2)
	fault_trials --key-file "$FAULT_KEYFILE"
	say mark resume
	hibernate resume --device /dev/vda1 --key-file "$FAULT_KEYFILE"
	say resume_rc "$?"
	say resumed 0
	;;
*) fatal "tampered has no boot $1" ;;
esac
