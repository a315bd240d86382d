# shellcheck shell=sh
# Guest steps shared by the swap file scenarios (swapfile-ext4, swapfile-xfs,
# plain-file), sourced after guest.sh and workload.sh.  The file lives on
# vda2, mounted at /mnt; the host made the filesystem.

SWAPFILE=/mnt/swapfile

# mount_vda2 FS: mount the scenario's filesystem at /mnt.
mount_vda2() {
	mount -t "$1" /dev/vda2 /mnt || fatal "mount -t $1 /dev/vda2 /mnt failed"
}

# make_swapfile MB: a swap file made the classic way: every byte written with
# dd (swapfile-fallocate makes them with fallocate), mode 0600, mkswap, swapon.
make_swapfile() {
	dd if=/dev/zero of="$SWAPFILE" bs=1M count="$1" 2>/dev/null ||
		fatal "dd of a $1 MB swap file failed"
	chmod 600 "$SWAPFILE"
	mkswap "$SWAPFILE" >/dev/null || fatal "mkswap $SWAPFILE failed"
	settle_metadata
	swapon "$SWAPFILE" || fatal "swapon $SWAPFILE failed"
}

# settle_metadata: /mnt's metadata written in place.  The host maps files
# from the filesystem's metadata after the boot, and xfs keeps new metadata
# in its log until the log is covered, which sync does not do and a freeze
# does.
settle_metadata() {
	sync
	fsfreeze --freeze /mnt || fatal "fsfreeze --freeze /mnt failed"
	fsfreeze --unfreeze /mnt || fatal "fsfreeze --unfreeze /mnt failed"
}

# report_offset FILE: run `hibernate offset FILE` and report its two kernel
# parameter lines (resume_uuid, resume_dev) and exit status (offset_rc).
report_offset() {
	hibernate offset "$1" >/run/offset.out 2>&1
	report_offset_output "$?" /run/offset.out
}

# report_offset_output RC OUTFILE: the same for output already captured
# (prepare-file prints the same lines).
report_offset_output() {
	say offset_rc "$1"
	sed 's/^/  offset: /' "$2"
	say resume_uuid "$(grep '^resume=UUID=' "$2")"
	say resume_dev "$(grep '^resume=/dev/' "$2")"
}

# Active swap areas (lines of /proc/swaps after its title line).
swaps_count() {
	tail -n +2 /proc/swaps | wc -l
}

# Is vda2 mounted?  Boot 2 of these scenarios must resume without it.
vda2_mounted() {
	if grep -q '^/dev/vda2 ' /proc/mounts; then echo 1; else echo 0; fi
}

# resume_from_cmdline: `hibernate resume` with no --device: the target comes
# from resume= and resume_offset= alone.  Returns only if nothing was restored.
resume_from_cmdline() {
	say vda2_mounted "$(vda2_mounted)"
	say cmdline_resume "$(tr ' ' '\n' </proc/cmdline | grep '^resume' | paste -sd' ')"
	dmesg_mark
	say mark resume
	resume_step
}

# hibernate_into FILE: the workload, then `hibernate --device FILE`.  Returns
# only in the resumed world (on the resuming boot's console), with the
# workload checked and the file's signature said (status_after).
hibernate_into() {
	workload_start
	workload_report
	dmesg_mark
	say mark hibernate
	hibernate --device "$1"
	resumed_or_exit $?
	workload_after_resume
	# O_DIRECT through the file: what the disk holds, not boot 1's page cache.
	say status_after "$(status_line "$1" signature)"
}

# status_line DEV-OR-FILE KEY: one "key: value" of `hibernate status`.
status_line() {
	hibernate status --device "$1" 2>/dev/null | sed -n "s/^$2: *//p"
}

# hibernate_into_swapfile: hibernate_into the scenario's $SWAPFILE.
hibernate_into_swapfile() {
	hibernate_into "$SWAPFILE"
}
