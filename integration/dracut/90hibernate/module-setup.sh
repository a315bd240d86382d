#!/bin/bash
# dracut module of hibernate(8): `hibernate resume` before the root
# filesystem is mounted (hook: hibernate-resume.sh, pre-mount).

check() {
	require_binaries @SBINDIR@/hibernate || return 1
	return 0
}

depends() {
	return 0
}

install() {
	local conf=/etc/hibernate.conf keyfile
	inst_binary @SBINDIR@/hibernate /usr/sbin/hibernate
	# encrypt = tpm: resume unseals through /dev/tpmrm0 (the drivers are
	# built in on Debian; instmods is quiet where they are).
	instmods -o tpm_tis tpm_crb
	if [[ -f $conf ]]; then
		inst_simple "$conf"
		# key-file = FILE (the last one wins); '#' starts a comment.
		keyfile=$(sed -n 's/#.*//; s/^[[:space:]]*key-file[[:space:]]*=[[:space:]]*//p' "$conf" |
			sed 's/[[:space:]]*$//' | tail -n 1)
		if [[ -n $keyfile && -f $keyfile ]]; then
			inst_simple "$keyfile"
			# hibernate resume refuses a key file group or others may read.
			# shellcheck disable=SC2154 # initdir: set by dracut
			chmod 600 "${initdir}${keyfile}"
		elif [[ -n $keyfile ]]; then
			dwarning "hibernate: key-file $keyfile (in $conf) does not exist"
		fi
	fi
	# pre-mount: after udev has brought up the devices the root needs and
	# the initqueue has waited for resume= (dracut's resume module), before
	# anything is mounted.
	# shellcheck disable=SC2154 # moddir: set by dracut
	inst_hook pre-mount 10 "$moddir/hibernate-resume.sh"
}
