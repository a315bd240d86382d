#!/bin/sh
# Encrypted images: passphrase typed on the console, key file, wrong passphrase.
#   boot 1: workload + a text marker, `hibernate --encrypt`, the passphrase
#           typed twice on the console (the host finds no plaintext on disk)
#   boot 2: `hibernate resume`, passphrase typed: boot 1's world again; its
#           header page must be zeros now (the host checks the resume read
#           part of the image while the passphrase was typed: resume-preload,
#           its line with N MiB > 0); it hibernates with --key-file
#   boot 3: `hibernate resume --key-file`: again; header zeros; then
#           `hibernate --encrypt` with the passphrase once more
#   boot 4: `hibernate resume`, three wrong passphrases: refused, the image
#           discarded (what was read ahead dropped), the boot goes on with
#           the swap area usable.  Then the
#           control: a new workload, a plain `hibernate`, whose image shows
#           the workload in clear to the same search on the host
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
	fault_marker
	workload_report
	say mark hibernate-passphrase
	fault_hibernate --encrypt || exit 1
	# Boot 2's console: resumed after the passphrase.
	fault_header_wiped
	say mark hibernate-keyfile
	fault_hibernate --encrypt --key-file "$FAULT_KEYFILE" || exit 1
	# Boot 3's console.
	fault_header_wiped
	say mark hibernate-passphrase-2
	fault_hibernate --encrypt || exit 1
	say error "boot 4 resumed the image despite three wrong passphrases"
	;;
2) fault_resume_console ;;
3) fault_resume_console --key-file "$FAULT_KEYFILE" ;;
4)
	fault_resume_console
	fault_status
	fault_header_wiped
	fault_swapon
	# The control: the same workload, not encrypted.
	workload_start
	fault_marker
	workload_report
	say mark hibernate-plain
	fault_hibernate || exit 1
	;;
*) fatal "encrypted has no boot $1" ;;
esac
