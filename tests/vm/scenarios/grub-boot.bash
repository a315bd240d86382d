# shellcheck shell=bash disable=SC2034 # DG_*/DS_* are read by the functions here and in debian-system.host
# A debootstrapped Debian system booted THROUGH ITS OWN GRUB (SeaBIOS,
# grub-pc): no -kernel, no -initrd, so the kernel command line is the one
# the system's boot loader gives (what `hibernate setup` must live with).
# Shared by the setup-* scenarios.  Source it from a scenario's .host file
# after debian-system.host (bookworm) or trixie-base.bash (trixie).
#
# How GRUB gets onto the disk: never on this host.  dg_prepare builds the
# root (the debian-system base plus grub-pc, cached by ds_base_plus), the
# package installed in it with dpkg -i, and a GPT disk: vda1 = BIOS boot
# partition (1 MiB, where grub-install puts its core image), vda2 = the
# root (ext4 or btrfs, made from the root directory on the host: mkfs -d /
# --rootdir, no loop device), and optionally vda3 (DG_EXTRA_MIB, for the
# scenario's own use: an LVM PV).  Boot 0 is the only -kernel boot: the
# distro's vmlinuz and initrd.img, and the scenario's guest script runs
# `grub-install /dev/vda && update-grub` inside the guest (common.sh:
# grub_install_step) plus the scenario's own preparation, and powers off.
# From then on every boot is VM_FIRMWARE_BOOT=1 (lib.sh): SeaBIOS -> GRUB
# -> the distro kernel and initramfs, the boot number on QEMU's fw_cfg.
#
# Not cached: the disk holds the package of this tree (installed before
# boot 0, so that boot 0's initramfs and GRUB menu are the ones a user
# would have), so boot 0 runs on every run (its time is in `times`).

# The GRUB settings of the test machine (a drop-in, as a user's would be):
# the console on the serial line (the log), no menu wait, and nothing about
# resume: the command line is GRUB's own.
DG_GRUB_DROPIN='GRUB_TIMEOUT=0
GRUB_TERMINAL=serial
GRUB_SERIAL_COMMAND="serial --unit=0 --speed=115200"
GRUB_CMDLINE_LINUX_DEFAULT="console=ttyS0 quiet no_console_suspend panic=-1"
GRUB_DISABLE_OS_PROBER=true'
DG_FS=ext4
DG_ROOT_MIB=4096
DG_EXTRA_MIB=0
# The GPT type of a BIOS boot partition.
DG_BIOS_BOOT=21686148-6449-6E6F-744E-656564454649

# dg_time STEP: the seconds since the scenario began, as "STEP S" in
# $VM_LOGDIR/times (and on stderr).
dg_time() {
	local now=$EPOCHREALTIME
	echo "$1 $(elapsed "$DG_T0" "$now") (+$(elapsed "$DG_TLAST" "$now"))" >>"$VM_LOGDIR/times"
	hibvm_info "tests/vm: $SCENARIO: $1 at $(elapsed "$DG_T0" "$now")s (+$(elapsed "$DG_TLAST" "$now")s)"
	DG_TLAST=$now
}

# dg_disk IMG ROOT: the GPT disk above, vda2 made from ROOT.
dg_disk() {
	local img=$1 root=$2 tmp end=$((2 + DG_ROOT_MIB))
	rm -f "$img"
	truncate -s $((end + DG_EXTRA_MIB + 1))M "$img"
	{
		echo "label: gpt"
		echo "start=1MiB, size=1MiB, type=$DG_BIOS_BOOT, name=bios"
		echo "start=2MiB, size=${DG_ROOT_MIB}MiB, type=linux, name=root"
		((DG_EXTRA_MIB == 0)) || echo "start=${end}MiB, size=${DG_EXTRA_MIB}MiB, type=linux, name=extra"
	} | sfdisk --quiet --no-reread --no-tell-kernel "$img"
	tmp=$(mktemp "${TMPDIR:-/tmp}/hibvm-dg.XXXXXX")
	truncate -s "${DG_ROOT_MIB}M" "$tmp"
	case $DG_FS in
	ext4) mkfs.ext4 -q -F -U "$DS_ROOT_UUID" -L hibroot -d "$root" "$tmp" ;;
	btrfs) mkfs.btrfs -q -f -U "$DS_ROOT_UUID" -L hibroot --rootdir "$root" "$tmp" ;;
	*) false ;;
	esac >"$VM_LOGDIR/mkfs.log" 2>&1 ||
		{ rm -f "$tmp"; fail "mkfs.$DG_FS of the root failed: $(tail -n 3 "$VM_LOGDIR/mkfs.log")"; }
	dd if="$tmp" of="$img" bs=1M seek=2 conv=notrunc,sparse status=none
	rm -f "$tmp"
}

# dg_prepare SCRIPT BASE-NAME [PACKAGE...]: the disk ($VM_DISK) of a
# system with grub-pc and PACKAGEs (cached as the base BASE-NAME), this
# tree's package installed, SCRIPT as the guest script, GRUB installed by
# boot 0.  Leaves VM_FIRMWARE_BOOT=1 for the boots that follow.
dg_prepare() {
	local script=$1 name=$2 work base deb root rel v
	shift 2
	DG_T0=$EPOCHREALTIME DG_TLAST=$EPOCHREALTIME
	: >"$VM_LOGDIR/times"
	command -v debootstrap >/dev/null || fail "debootstrap missing: apt-get install debootstrap (scripts/install-deps)"
	work=$(dirname "$VM_DISK")
	base=$(ds_base) || fail "cannot build the Debian $DS_SUITE base (see messages above)"
	base=$(ds_base_plus "$base" "$name" grub-pc "$@") || fail "cannot install grub-pc $* in the $DS_SUITE base"
	dg_time base
	deb=$(ds_make_deb "$work")
	dg_time make-deb
	root=$work/root
	cp -a "$base/root" "$root"
	# A machine with no swap at all: no RESUME= for the initramfs.
	rm -f "$root/etc/initramfs-tools/conf.d/resume"
	case $DG_FS in
	ext4) printf 'UUID=%s / ext4 errors=remount-ro 0 1\n' "$DS_ROOT_UUID" ;;
	btrfs) printf 'UUID=%s / btrfs defaults 0 0\n' "$DS_ROOT_UUID" ;;
	esac >"$root/etc/fstab"
	install -d "$root/etc/default/grub.d"
	printf '%s\n' "$DG_GRUB_DROPIN" >"$root/etc/default/grub.d/hibtest.cfg"
	# The scenario's own configuration of the machine (optional).
	! declare -F dg_root_hook >/dev/null || dg_root_hook "$root"
	ds_install_package "$root" "$deb"
	ds_install_tests "$root" "$script"
	install -m 644 "$HIBVM_DIR/guest/debian/setup.sh" "$root/usr/local/lib/hibtest/"
	# The resumed world runs setup --undo (an initramfs build) in
	# hibtest-resumed.service: no start timeout.
	install -d "$root/etc/systemd/system/hibtest-resumed.service.d"
	printf '[Service]\nTimeoutStartSec=infinity\n' >"$root/etc/systemd/system/hibtest-resumed.service.d/timeout.conf"
	rel=$(basename "$(compgen -G "$root/boot/vmlinuz-*" | head -n1)")
	rel=${rel#vmlinuz-}
	DG_KERNEL=$rel
	cp "$root/boot/vmlinuz-$rel" "$work/vmlinuz"
	cp "$root/boot/initrd.img-$rel" "$work/initrd.img"
	dg_disk "$VM_DISK" "$root"
	rm -rf "$root"
	dg_time image
	# Boot 0: grub-install inside the guest, the scenario's preparation.
	KERNEL_VMLINUZ=$work/vmlinuz
	VM_APPEND="root=UUID=$DS_ROOT_UUID ro"
	ds_boot 0 "$work/initrd.img"
	v=$(need 0 grub_install)
	[[ $v == ok ]] || fail "boot 0: grub-install /dev/vda && update-grub: $v (log: $(boot_log 0))"
	grep -aq 'reboot: Power down' "$(boot_log 0)" || fail "boot 0 did not power off (log: $(boot_log 0))"
	dg_time grub-install-boot
	VM_FIRMWARE_BOOT=1
	VM_APPEND=
}

# dg_boot N: boot N through GRUB; FAIL unless GRUB's command line reached
# the kernel (the guest says cmdline=) with no resume= or resume_offset=.
dg_boot() {
	local n=$1 log cmdline
	boot_or_fail "$n"
	log=$(boot_log "$n")
	hibvm_info "tests/vm: $SCENARIO: boot $n (GRUB) took $(elapsed "$VM_BOOT_START" "$VM_BOOT_END")s"
	dg_time "boot$n"
	grep -aq 'Booting from Hard Disk' "$log" || fail "boot $n: SeaBIOS did not boot the disk (log: $log)"
	grep -aq "Booting \`Debian GNU/Linux'" "$log" || fail "boot $n: GRUB did not boot its first entry (log: $log)"
	# After setup the menu entry (grub.cfg) must have no resume= either:
	# a resumed boot's own command line is gone with its kernel.
	if hib_has "$(boot_log 1)" grubcfg_resume; then
		[[ $(hib_get "$(boot_log 1)" grubcfg_resume) == 0 ]] ||
			fail "boot 1: after setup grub.cfg has resume= (log: $(boot_log 1))"
	fi
	# The resumed world prints on the resuming boot's console; a boot that
	# resumed may have no step of its own: the check is on any cmdline line.
	cmdline=$(hib_get "$log" cmdline) || return 0
	[[ $cmdline == *BOOT_IMAGE=/boot/vmlinuz-* ]] ||
		fail "boot $n: the command line '$cmdline' is not GRUB's (no BOOT_IMAGE=) (log: $log)"
	[[ $cmdline != *resume=* && $cmdline != *resume_offset=* ]] ||
		fail "boot $n: GRUB's command line has resume parameters: '$cmdline' (log: $log)"
}

