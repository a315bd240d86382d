#!/bin/sh
# encrypt = tpm: the image's key sealed to the (software) TPM's PCRs, and
# bound to the machine key hibernate enrolls (kept on vda2 + 1 MiB across
# boots, as a root filesystem and the initramfs keep it).
#   boot 1: `hibernate --tpm` enrolls the machine key and stops (nothing
#           written); workload, `hibernate --tpm`: no prompt
#   boot 2: encrypt = tpm in /etc/hibernate.conf (so require-encryption is on),
#           `hibernate resume`: boot 1's world again with no prompt (a);
#           it hibernates again with --tpm
#   boot 3: PCR 7 extended (tpm2_pcrextend), then `hibernate resume`: the
#           TPM refuses, resume names the PCR, the image is discarded, the
#           swap area is usable (b).  The machine key no longer unseals:
#           enrolled anew; a new workload, and
#           `hibernate --tpm --tpm-fallback passphrase` (typed twice)
#   boot 4: PCR 7 extended twice (boot 3 sealed to it extended once),
#           tpm-fallback = passphrase configured, `hibernate resume`: refused,
#           the passphrase asked and typed: boot 3's world again (c); enrolled
#           anew (PCR 7 is boot 4's now), it hibernates with --tpm --tpm-pin
#           (the PIN typed twice)
#   boot 5: PCR 7 as boot 4 sealed it; a wrong PIN, then the right one:
#           boot 3's world again; it hibernates with --tpm, no PIN
#   boot 6: tpm-pin = yes configured: boot 5's image (no PIN) refused before
#           anything is unsealed (d).  Then another writer: the machine key
#           put aside, its own enrolled, an image bound to it written
#   boot 7: the machine key back: the forged image refused (e)
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

TPM_KEY=/var/lib/hibernate/tpm-machine.key

# tpm_key_load, tpm_key_save: the machine key, 1128 bytes at vda2 + 1 MiB.
tpm_key_load() {
	mkdir -p /var/lib/hibernate && chmod 700 /var/lib/hibernate
	(umask 077 && dd if=/dev/vda2 of=$TPM_KEY bs=8 skip=131072 count=141 2>/dev/null)
}
tpm_key_save() {
	dd if=$TPM_KEY of=/dev/vda2 bs=8 seek=131072 conv=notrunc 2>/dev/null && sync
}

# tpm_enroll: hibernate enrolls a new machine key and stops, writing no image.
tpm_enroll() {
	mkdir -p /var/lib
	rm -f $TPM_KEY
	hibernate --tpm >/run/enroll.out 2>&1
	say enroll_rc $?
	say enroll_signature "$(swap_signature /dev/vda1)"
	if grep -q "enrolled a new TPM machine key" /run/enroll.out; then
		say enrolled yes
	else
		say enrolled "no: $(tail -n1 /run/enroll.out)"
	fi
	[ -f $TPM_KEY ] && tpm_key_save
}

[ -c /dev/tpmrm0 ] || fatal "no /dev/tpmrm0 in the guest (TPM device not attached?)"
[ "$1" = 1 ] || tpm_key_load
case $1 in
1)
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	tpm_enroll
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
	tpm_enroll
	workload_start
	fault_marker
	workload_report
	say mark hibernate-fallback
	fault_hibernate --tpm --tpm-fallback passphrase || exit 1
	# Boot 4's console: resumed with the passphrase; PCR 7 is boot 4's now,
	# so enrolled anew; then with a PIN too.
	fault_header_wiped
	tpm_enroll
	say mark hibernate-pin
	fault_hibernate --tpm --tpm-pin || exit 1
	# Boot 5's console: resumed after a wrong PIN and the right one.
	fault_header_wiped
	say mark hibernate-nopin
	fault_hibernate --tpm || exit 1
	say error "boot 6 resumed an image without a PIN despite tpm-pin = yes"
	;;
4)
	tpm_change_pcr 2
	printf 'encrypt = tpm\ntpm-fallback = passphrase\n' >/etc/hibernate.conf
	fault_resume_console
	;;
5)
	tpm_change_pcr 2
	fault_resume_console
	;;
6)
	tpm_change_pcr 2
	printf 'encrypt = tpm\ntpm-pin = yes\n' >/etc/hibernate.conf
	fault_resume_console
	fault_status
	fault_header_wiped
	fault_swapon
	# Another writer on this TPM, with a machine key of its own (not kept).
	echo "encrypt = tpm" >/etc/hibernate.conf
	mv $TPM_KEY /run/real.key
	hibernate --tpm >/run/forger-enroll.out 2>&1
	say forger_enrolled "$(grep -c "enrolled a new TPM machine key" /run/forger-enroll.out)"
	say mark hibernate-forged
	hibernate --tpm
	say hibernate_rc "$?"
	say error "boot 6: the forged hibernate returned"
	;;
7)
	tpm_change_pcr 2
	echo "encrypt = tpm" >/etc/hibernate.conf
	fault_resume_console
	fault_status
	fault_header_wiped
	fault_swapon
	;;
*) fatal "tpm has no boot $1" ;;
esac
