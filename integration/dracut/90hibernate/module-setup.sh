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
	local conf=/etc/hibernate.conf hibernate=@SBINDIR@/hibernate keyfile dev encrypt
	local machinekey=/var/lib/hibernate/tpm-machine.key
	local machinekey_src=${HIBERNATE_TPM_MACHINE_KEY:-$machinekey}
	# The initramfs resumes with this file: one the binary refuses stops the
	# build here, where it can be fixed, rather than at resume.  Its values come
	# from the binary too (quotes, blanks, comments as it reads them).
	if ! "$hibernate" config check >/dev/null; then
		dfatal "hibernate: $conf is not valid (above): fix it, then run dracut -f"
		exit 1
	fi
	if ! keyfile=$("$hibernate" config get key-file); then
		dfatal "hibernate: $hibernate config get key-file failed (above): fix $conf, then run dracut -f"
		exit 1
	fi
	if ! encrypt=$("$hibernate" config get encrypt); then
		dfatal "hibernate: $hibernate config get encrypt failed (above): fix $conf, then run dracut -f"
		exit 1
	fi
	inst_binary "$hibernate" /usr/sbin/hibernate
	# encrypt = tpm: resume unseals through /dev/tpmrm0 (the drivers are
	# built in on Debian; instmods is quiet where they are).
	instmods -o tpm_tis tpm_crb
	[[ -f $conf ]] && inst_simple "$conf"
	# The target's location, resolved now (hibernate-setup(8)): the image's
	# copy of the configuration names its device by UUID with the page
	# offset, so no resume= is needed; recorded per kernel for the check
	# hibernate makes before the freeze.  Not locatable: a warning, the
	# record goes, and hibernate refuses with the fix.
	# shellcheck disable=SC2154 # kernel: set by dracut
	local loc record=${HIBERNATE_LOCATION_RECORD:-/var/lib/hibernate/initramfs/$kernel}
	# shellcheck disable=SC2154 # initdir: set by dracut
	if loc=$("$hibernate" config location) && [[ -n $loc ]]; then
		rm -f "${initdir}${conf}"
		if ! "$hibernate" config initramfs >"${initdir}${conf}"; then
			dfatal "hibernate: $hibernate config initramfs failed (above): fix $conf, then run dracut -f"
			exit 1
		fi
		mkdir -p "${record%/*}"
		printf 'location %s\nbuilt %s\n' "$loc" "$(date +%s)" >"$record.tmp" && mv "$record.tmp" "$record"
		dinfo "hibernate: image location $loc (device in $conf) carried by the image of $kernel"
	else
		[[ -z $loc ]] || dwarning "hibernate: the target in $conf cannot be located: hibernate refuses until it is fixed and dracut -f has run"
		rm -f "$record"
	fi
	if [[ -n $keyfile && -f $keyfile ]]; then
		inst_simple "$keyfile"
		# hibernate resume refuses a key file group or others may read.
		# shellcheck disable=SC2154 # initdir: set by dracut
		chmod 600 "${initdir}${keyfile}"
	elif [[ -n $keyfile ]]; then
		dwarning "hibernate: key-file $keyfile (in $conf) does not exist"
	fi
	# encrypt = tpm: resume restores only images bound to this machine's key
	# (hibernate enrolls it at its first use).
	if [[ -f $machinekey_src ]]; then
		inst_simple "$machinekey_src" "$machinekey"
		chmod 600 "${initdir}${machinekey}"
	elif [[ $encrypt == tpm ]]; then
		dwarning "hibernate: encrypt = tpm and no TPM machine key at $machinekey_src: resume refuses every TPM image; run hibernate once (it enrolls the key), then dracut -f"
	fi
	# The target named in hibernate.conf only (90-hibernate.conf made it a
	# host device): the initqueue waits for it, as for resume=, but a boot
	# without it goes on.
	dev=$(@PKGLIBDIR@/initramfs-device)
	if [[ -n $dev ]]; then
		wait_for_dev -n "$dev"
		dinfo "hibernate: resume device $dev (device in $conf) handed to the image (host device, waited for)"
	fi
	# The kernel's resume comes before pre-mount: dracut's resume module asks
	# it from the initqueue (its udev rule for a swsuspend device: the
	# finished job 00resume), the systemd initrd from
	# systemd-hibernate-resume(@).service.  Ahead of both, an image of another
	# format (the kernel's own, never encrypted) is refused and discarded where
	# encryption is required: our rule sorts before dracut's 99-resume.rules
	# and its job 00hibernate before 00resume; in the systemd initrd, drop-ins
	# run it as the services' ExecStartPre=.
	inst_script "@PKGLIBDIR@/discard-other-format" "@PKGLIBDIR@/discard-other-format"
	if dracut_module_included systemd; then
		# shellcheck disable=SC2154 # systemdsystemunitdir: set by dracut
		inst_simple "$systemdsystemunitdir/systemd-hibernate-resume.service.d/hibernate.conf"
		inst_simple "$systemdsystemunitdir/systemd-hibernate-resume@.service.d/hibernate.conf"
	else
		mkdir -p "${initdir}/etc/udev/rules.d"
		printf '%s\n' 'SUBSYSTEM=="block", ACTION=="add|change", ENV{ID_FS_TYPE}=="suspend|swsuspend|swsupend", RUN+="/sbin/initqueue --finished --unique --name 00hibernate @PKGLIBDIR@/discard-other-format"' \
			>"${initdir}/etc/udev/rules.d/98-hibernate.rules"
	fi
	# pre-mount: after udev has brought up the devices the root needs and
	# the initqueue has waited for resume= (dracut's resume module), before
	# anything is mounted.
	# shellcheck disable=SC2154 # moddir: set by dracut
	inst_hook pre-mount 10 "$moddir/hibernate-resume.sh"
}
