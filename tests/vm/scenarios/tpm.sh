#!/bin/sh
# encrypt = tpm: the image's key sealed to the (software) TPM's PCRs.
#   boot 1: workload, `hibernate --tpm`: no prompt
#   boot 2: encrypt = tpm in /etc/hibernate.conf (so require-encryption is on),
#           `hibernate resume`: boot 1's world again with no prompt (a);
#           it hibernates again with --tpm
#   boot 3: PCR 7 extended (tpm2_pcrextend), then `hibernate resume`: the
#           TPM refuses, resume names the PCR, the image is discarded, the
#           swap area is usable (b).  Then a new workload, and
#           `hibernate --tpm --tpm-fallback passphrase` (typed twice)
#   boot 4: PCR 7 extended twice (boot 3 sealed to it extended once),
#           `hibernate resume`: refused, the
#           passphrase asked and typed: boot 3's world again (c); it
#           hibernates with --tpm --tpm-pin (the PIN typed twice)
#   boot 5: PCR 7 as boot 4 sealed it; a wrong PIN, then the right one:
#           boot 3's world again
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
# shellcheck disable=SC2034 # read by workload.sh
WORKLOAD_MB=8
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh
# shellcheck source=../guest/faults-guest.sh
. /lib/hibtest/faults-guest.sh

# tpm_change_pcr N: a firmware or boot loader change, as the TPM sees it:
# PCR 7 extended N times (boot 3 seals to its once-extended value, so boot 4
# extends twice to differ from it).
tpm_change_pcr() {
	i=0
	while [ $i -lt "$1" ]; do
		TPM2TOOLS_TCTI=device:/dev/tpmrm0 tpm2_pcrextend \
			7:sha256=5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a ||
			{ say pcr_extended "failed (exit $?)"; return; }
		i=$((i + 1))
	done
	say pcr_extended 7
}

[ -c /dev/tpmrm0 ] || fatal "no /dev/tpmrm0 in the guest (TPM device not attached?)"
case $1 in
1)
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	workload_start
	fault_marker
	workload_report
	say mark hibernate-tpm
	fault_hibernate --tpm || exit 1
	# Boot 2's console: resumed with no question.
	fault_header_wiped
	say mark hibernate-tpm-2
	fault_hibernate --tpm || exit 1
	say error "boot 3 resumed the image despite the changed PCR"
	;;
2)
	# encrypt = tpm configured: require-encryption is on, and takes TPM-sealed images.
	echo "encrypt = tpm" >/etc/hibernate.conf
	fault_resume_console
	;;
3)
	tpm_change_pcr 1
	fault_resume_console
	fault_status
	fault_header_wiped
	fault_swapon
	workload_start
	fault_marker
	workload_report
	say mark hibernate-fallback
	fault_hibernate --tpm --tpm-fallback passphrase || exit 1
	# Boot 4's console: resumed with the passphrase; now with a PIN too.
	fault_header_wiped
	say mark hibernate-pin
	fault_hibernate --tpm --tpm-pin || exit 1
	# Boot 5's console: resumed after a wrong PIN and the right one.
	fault_header_wiped
	;;
4)
	tpm_change_pcr 2
	fault_resume_console
	;;
5)
	tpm_change_pcr 2
	fault_resume_console
	;;
*) fatal "tpm has no boot $1" ;;
esac
