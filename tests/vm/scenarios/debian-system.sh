#!/bin/sh
# Guest part of debian-system: runs inside the Debian system the host built
# (tests/vm/scenarios/debian-system.host), not in the busybox initramfs.
#   debian-system.sh step      hibtest.service, once the system is up: the
#                              step of boot hibtest.boot=N
#   debian-system.sh resumed   hibtest-resumed.service, after hibernate.target:
#                              in the resumed world (or when hibernating failed)
# Boots (the host's plan; RESUME= in /etc/initramfs-tools/conf.d/resume names
# vda2 for boots 1-4, boots 5-6 have resume=UUID= resume_offset= instead):
#   1  doctor's initramfs line; swapon vda2, the workload service,
#      systemctl hibernate
#   2  resumed (distro initramfs): report; systemctl hibernate again (image 2)
#   3  an initramfs made before the package was installed: no resume; the
#      stale-image unit discards image 2; then systemctl hibernate (image 3)
#   4  noresume: the initramfs discards image 3; make /swapfile and report
#      `hibernate offset /swapfile`
#   5  swapon /swapfile, the workload, the power key (logind) hibernates
#   6  resumed from the swap file: report; then encrypt = yes with a key
#      file in hibernate.conf, update-initramfs (the hook copies the key),
#      the new initramfs handed to the host on vdb; systemctl hibernate
#   7  the new initramfs resumes the encrypted image with the key file: report
#   8  (that initramfs from here on) swapon vda2, the workload, the KERNEL's
#      own hibernation (echo disk > /sys/power/state): S1SUSPEND on vda2
#   9  our local-premount script must refuse and discard it (a key file is
#      configured: require-encryption) before Debian's local-premount/resume
#      asks the kernel: a fresh boot, vda2 a swap area that swapon takes
# Results: "HIBTEST key=value" lines on the console (ttyS0).
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
STATE=/run/hibtest
DATA=/dev/shm/workload.bin
DATA_MB=64
# say, show, fatal, cmdline_boot, swap_active, workload_start, resumed_report,
# later, dispatch.
# shellcheck source=../guest/debian/common.sh
. /usr/local/lib/hibtest/common.sh
# The swap device of boots 1-4: vda2, or the one /etc/hibtest.swap names
# (luks-swap: the swap LV).
SWAPDEV=$(cat /etc/hibtest.swap 2>/dev/null) || SWAPDEV=/dev/vda2

unit_report() {
	# A device that came after the stale-image unit (luks-swap-dracut's swap
	# LV) has a late unit of its own: let it end first.
	n=0
	while [ $n -lt 150 ] && systemctl list-units --no-legend 'hibernate-discard-stale-late-*' | grep -q .; do
		sleep 1
		n=$((n + 1))
	done
	# The stale-image unit of this boot: its state and what it and any late
	# unit said; the swap units' lines beside them.
	say stale_unit "$(systemctl show -P ActiveState hibernate-discard-stale.service)/$(systemctl show -P Result hibernate-discard-stale.service)"
	journalctl -b -o cat -u 'hibernate-discard-stale*' | grep -v '^Starting\|^Finished' | show stale-unit
	journalctl -b -o cat -u '*.swap' | show swap-units
	say stale_unit_said "$(journalctl -b -o cat -u 'hibernate-discard-stale*' | grep hibernate: | tail -n 1)"
	say stale_late "$(journalctl -b -o cat -u hibernate-discard-stale.service | grep -c 'is not there yet')"
	say swapon_rewrote "$(journalctl -b -o cat -u '*.swap' | grep -c 'software suspend data detected')"
}

# The image state of the swap device (vda2) as the binary sees it.
vda2_report() {
	hibernate status --device "$SWAPDEV" >$STATE/status 2>&1
	say vda2_image "$(sed -n 's/^image: *//p' $STATE/status)"
	say vda2_signature "$(sed -n 's/^signature: *//p' $STATE/status)"
}

hibernate_now() {
	echo "$1" >$STATE/hibernated_in
	sync
	say mark hibernate
	systemctl hibernate || say hibernate_rc "systemctl hibernate: exit $?"
}

step() {
	boot=$(cmdline_boot)
	mkdir -p $STATE
	say boot_start "$boot"
	say kernel "$(uname -r)"
	say system_state "$(systemctl is-system-running)"
	say cmdline "$(cat /proc/cmdline)"
	unit_report
	case $boot in
	1 | 3)
		if [ "$boot" = 1 ]; then
			# doctor's initramfs line on the initramfs update-initramfs
			# built with our hook (zstd-compressed since bookworm).
			hibernate doctor >$STATE/doctor 2>&1
			show doctor <$STATE/doctor
			say doctor_initramfs "$(grep -E '^[A-Z]+ +initramfs ' $STATE/doctor)"
		fi
		if [ "$boot" = 3 ]; then
			vda2_report
			journalctl -b -k -o cat | grep -i 'PM: \|hibernat' | show kernel-log
		fi
		# systemd's gpt-auto-generator may have turned it on already (a swap
		# partition on the root disk), or fstab (luks-swap).
		say vda2_active "$(swap_active "$SWAPDEV")"
		[ "$(swap_active "$SWAPDEV")" = 1 ] || out=$(swapon "$SWAPDEV" 2>&1) || fatal "swapon $SWAPDEV failed: $out; $(blkid -p "$SWAPDEV" 2>&1)"
		workload_start
		hibernate_now "$boot"
		;;
	4)
		vda2_report
		# What `hibernate resume` in the initramfs wrote to /dev/kmsg ("hibernate:
		# ..." lines: the journal's identifier "hibernate").
		journalctl -b -k -t hibernate -o short-monotonic | show kernel-log
		say noresume_said "$(journalctl -b -k -t hibernate -o cat | grep 'noresume' | tail -n 1)"
		# A swap file for boots 5 and 6 (dd: no unwritten extents).
		dd if=/dev/zero of=/swapfile bs=1M count=512 status=none || fatal "dd /swapfile failed"
		chmod 600 /swapfile
		mkswap /swapfile >/dev/null || fatal "mkswap /swapfile failed"
		sync
		hibernate offset /swapfile >$STATE/offset 2>&1 || fatal "hibernate offset: $(cat $STATE/offset)"
		show offset <$STATE/offset
		say swapfile_params "$(grep '^resume=UUID=' $STATE/offset)"
		systemctl poweroff
		;;
	5)
		out=$(swapon /swapfile 2>&1) || fatal "swapon /swapfile failed: $out"
		workload_start
		# This time through logind's power key action (HandlePowerKey=
		# hibernate): the host presses the ACPI power button (QEMU
		# system_powerdown) when it sees mark=powerkey.
		say logind_buttons "$(journalctl -b -o cat -u systemd-logind.service | grep -c 'Watching system buttons')"
		echo 5 >$STATE/hibernated_in
		sync
		say mark powerkey
		sleep 150
		# The sleep goes on in the resumed world: nothing to say there.
		[ -e $STATE/resumed ] && exit 0
		say hibernate_rc "the power key did not hibernate within 150 s"
		systemctl poweroff
		;;
	luks-setup)
		luks_setup
		systemctl poweroff
		;;
	8)
		kernel_hibernate
		;;
	9)
		kernel_image_refused
		;;
	2 | 6 | 7)
		# Here only when the initramfs did not resume.
		say resumed 0
		journalctl -b -k -t hibernate -o cat | show kernel-log
		systemctl poweroff
		;;
	*)
		fatal "debian-system has no boot $boot"
		;;
	esac
}

# kernel_hibernate (boot 8): the kernel's own image on the swap partition,
# hibernate not involved, as an offline attacker with the same kernel build
# can write it.  Debian's resume script set /sys/power/resume to it already.
kernel_hibernate() {
	[ "$(swap_active "$SWAPDEV")" = 1 ] || out=$(swapon "$SWAPDEV" 2>&1) || fatal "swapon $SWAPDEV failed: $out"
	workload_start
	devno=$(cat "/sys/class/block/$(basename "$(readlink -f "$SWAPDEV")")/dev")
	say power_resume "$(cat /sys/power/resume)"
	[ "$(cat /sys/power/resume)" = "$devno" ] || echo "$devno" >/sys/power/resume
	echo shutdown >/sys/power/disk
	echo 8 >$STATE/hibernated_in
	sync
	say mark hibernate
	echo disk >/sys/power/state
	# shellcheck disable=SC2320 # the write's status is the point
	rc=$?
	# Here when the kernel's hibernation failed, or when its image was
	# restored (then on boot 9's console: the downgrade worked).
	if [ $rc -ne 0 ]; then say hibernate_rc "echo disk > /sys/power/state: exit $rc"; else say resumed 1; fi
	systemctl poweroff
}

# kernel_image_refused (boot 9, pm_debug_messages): a fresh boot; the order
# in the kernel log of our refusal, the kernel's look for an image ("PM: Image
# not found": Debian's resume script wrote /sys/power/resume; no resume= on
# the command line) and the root's mount; vda2 a swap area again.
kernel_image_refused() {
	say resumed 0
	if [ -e $STATE/hibernated_in ] || [ -e "$DATA" ]; then say fresh no; else say fresh yes; fi
	journalctl -b -k -o short-monotonic | grep 'hibernate\|PM: \|EXT4-fs (vda1)' | show kernel-log
	say refusal "$(journalctl -b -k -t hibernate -o cat | grep "refused: it holds the kernel's own hibernation image" | tail -n 1)"
	say kernel_order "$(journalctl -b -k -o cat | sed -n -e "s/.*refused: it holds the kernel's own.*/hibernate/p" \
		-e 's/.*PM: Image not found.*/resume/p' -e 's/.*EXT4-fs (vda1): mounted.*/root/p' | awk '!seen[$0]++' | paste -sd' ')"
	say blkid_type "$(blkid -p -o value -s TYPE "$SWAPDEV")"
	# systemd may have turned it on (gpt-auto): off, then on by hand.
	[ "$(swap_active "$SWAPDEV")" = 0 ] || swapoff "$SWAPDEV"
	if out=$(swapon "$SWAPDEV" 2>&1); then say swapon ok; else say swapon "$out"; fi
	systemctl poweroff
}

# keyfile_setup: seal the next image with a key file. The initramfs must
# carry the key to resume it: update-initramfs runs our hook, which copies it.
# The host boots the VM with -initrd, so the new initramfs goes to the host
# raw on vdb, a scratch disk of the host's: a line "HIBTEST-INITRD SIZE"
# padded to 4 KiB, then the file.
keyfile_setup() {
	key=/etc/hibernate/image.key
	initrd=/boot/initrd.img-$(uname -r)
	install -d -m 700 /etc/hibernate
	(umask 077 && head -c 64 /dev/urandom >$key) || fatal "cannot write $key"
	# Quoted, as a user may write it: the hook must take the file the binary takes.
	printf 'encrypt = yes\nkey-file = "%s"\n' $key >>/etc/hibernate.conf
	# The initramfs holds a secret now: readable by root only.  MODULES=dep
	# and compression level 1: the full build takes ~8 min under TCG, this ~2.
	printf 'UMASK=0077\nMODULES=dep\nCOMPRESSLEVEL=1\n' >/etc/initramfs-tools/conf.d/hibtest
	update-initramfs -u -k "$(uname -r)" >$STATE/update-initramfs 2>&1 ||
		fatal "update-initramfs failed: $(tail -n 3 $STATE/update-initramfs)"
	show update-initramfs <$STATE/update-initramfs
	say initramfs_key "$(lsinitramfs -l "$initrd" | grep -c ' etc/hibernate/image.key$')"
	say initramfs_key_mode "$(lsinitramfs -l "$initrd" | grep ' etc/hibernate/image.key$' | cut -c1-10)"
	size=$(stat -c %s "$initrd")
	printf 'HIBTEST-INITRD %s\n' "$size" | dd of=/dev/vdb bs=4096 conv=sync status=none ||
		fatal "cannot write to /dev/vdb"
	dd if="$initrd" of=/dev/vdb bs=4096 seek=1 conv=fsync status=none || fatal "cannot copy $initrd to /dev/vdb"
	say initrd_bytes "$size"
	say initrd_sha "$(sha256sum "$initrd" | cut -d' ' -f1)"
}

# give_initrd FILE DISK: FILE to the host, raw on DISK (a line
# "HIBTEST-INITRD SIZE" padded to 4 KiB, then the file).
give_initrd() {
	size=$(stat -c %s "$1")
	printf 'HIBTEST-INITRD %s\n' "$size" | dd of="$2" bs=4096 conv=sync status=none ||
		fatal "cannot write to $2"
	dd if="$1" of="$2" bs=4096 seek=1 conv=fsync status=none || fatal "cannot copy $1 to $2"
}

# initramfs_tools_images: /boot/initrd.img-$rel by update-initramfs, then
# /root/initrd.nohandover without our conf hook, in the chroot $mnt.
initramfs_tools_images() {
	chroot $mnt update-initramfs -u -k "$rel" >$STATE/update-initramfs 2>&1 ||
		fatal "update-initramfs in the chroot failed: $(tail -n 3 $STATE/update-initramfs)"
	show update-initramfs <$STATE/update-initramfs
	say handover_said "$(grep 'hibernate: resume device' $STATE/update-initramfs)"
	# What the initramfs got: RESUME= in its conf.d, cryptroot's crypttab.
	unmkinitramfs $mnt/boot/initrd.img-"$rel" $STATE/unpacked || fatal "unmkinitramfs failed"
	say initramfs_resume "$(cat "$(find $STATE/unpacked -path '*/conf/conf.d/zz-resume-hibernate')" 2>/dev/null)"
	say initramfs_crypttab "$(cut -d' ' -f1 "$(find $STATE/unpacked -path '*/cryptroot/crypttab')" 2>/dev/null | paste -sd' ')"
	hook=$mnt/usr/share/initramfs-tools/conf-hooks.d/hibernate
	mv $hook $mnt/root/conf-hook.hibernate || fatal "no conf hook $hook"
	chroot $mnt mkinitramfs -o /root/initrd.nohandover "$rel" >$STATE/mkinitramfs 2>&1 ||
		fatal "mkinitramfs without the conf hook failed: $(tail -n 3 $STATE/mkinitramfs)"
	mv $mnt/root/conf-hook.hibernate $hook
}

# dracut_images: the same with dracut, host-only (as Fedora's): without our
# configuration the image would unlock the container and activate the root
# LV only.
dracut_images() {
	printf 'hostonly="yes"\ncompress="gzip"\n' >$mnt/etc/dracut.conf.d/hibtest.conf
	chroot $mnt dracut -f /boot/initrd.img-"$rel" "$rel" >$STATE/dracut 2>&1 ||
		fatal "dracut in the chroot failed: $(tail -n 3 $STATE/dracut)"
	show dracut <$STATE/dracut
	say handover_said "$(grep 'hibernate: resume device' $STATE/dracut)"
	say initramfs_resume "$(chroot $mnt lsinitrd -f etc/cmdline.d/90lvm.conf /boot/initrd.img-"$rel" | tr -s ' \n' '  ')"
	say initramfs_crypttab "$(chroot $mnt lsinitrd -f etc/crypttab /boot/initrd.img-"$rel" | cut -d' ' -f1 | paste -sd' ')"
	conf=$mnt/usr/lib/dracut/dracut.conf.d/90-hibernate.conf
	mv $conf $mnt/root/dracut.hibernate.conf || fatal "no $conf"
	chroot $mnt dracut -f /root/initrd.nohandover "$rel" >$STATE/dracut2 2>&1 ||
		fatal "dracut without our configuration failed: $(tail -n 3 $STATE/dracut2)"
	mv $mnt/root/dracut.hibernate.conf $conf
}

# luks_setup (luks-swap's first boot, from the plain root on vdb): vda1
# becomes a LUKS2 container holding the volume group hibvg with the root
# LV (a copy of this system) and the swap LV, as Debian's installer makes
# it.  Inside it, as the installer does, update-initramfs in a chroot (its
# hooks see the layout; initramfs-tools or dracut, the one installed): the
# initramfs with the hand-over to vdc, one made without it to vdd.
luks_setup() {
	pass=$(cat /usr/local/lib/hibtest/luks.pass) || fatal "no passphrase file"
	mnt=/mnt/luks
	t0=$(date +%s)
	# pbkdf2 at its minimum: the initramfs unlocks under TCG in no time.
	printf %s "$pass" | cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 \
		--pbkdf-force-iterations 1000 /dev/vda1 - || fatal "luksFormat /dev/vda1 failed"
	printf %s "$pass" | cryptsetup open --key-file - /dev/vda1 vda1_crypt || fatal "cryptsetup open failed"
	out=$({ pvcreate -q /dev/mapper/vda1_crypt && vgcreate -q hibvg /dev/mapper/vda1_crypt &&
		lvcreate -q -y -L 2560M -n root hibvg && lvcreate -q -y -l 100%FREE -n swap hibvg &&
		mkfs.ext4 -q -L hibroot /dev/hibvg/root && mkswap /dev/hibvg/swap; } 2>&1) ||
		fatal "LVM on /dev/mapper/vda1_crypt failed: $out"
	mkdir -p $mnt
	mount /dev/hibvg/root $mnt || fatal "mount /dev/hibvg/root failed"
	# From a bind mount of / alone: no mounts under it, $mnt not inside it.
	mkdir -p /run/hibsrc
	mount --bind / /run/hibsrc || fatal "mount --bind / failed"
	out=$(cp -a /run/hibsrc/. $mnt/ 2>&1) || fatal "copying the root into the LV failed: $out"
	umount /run/hibsrc
	rm -f $mnt/usr/local/lib/hibtest/luks.pass $mnt/etc/initramfs-tools/conf.d/resume
	printf '/dev/mapper/hibvg-root / ext4 errors=remount-ro 0 1\n/dev/mapper/hibvg-swap none swap sw 0 0\n' >$mnt/etc/fstab
	echo "vda1_crypt UUID=$(blkid -s UUID -o value /dev/vda1) none luks,discard" >$mnt/etc/crypttab
	# The target is named in hibernate.conf only: no resume=, no conf.d/resume.
	echo 'device = /dev/mapper/hibvg-swap' >>$mnt/etc/hibernate.conf
	echo /dev/mapper/hibvg-swap >$mnt/etc/hibtest.swap
	# MODULES=dep and compression level 1: ~2 min under TCG instead of ~8.
	printf 'MODULES=dep\nCOMPRESSLEVEL=1\n' >$mnt/etc/initramfs-tools/conf.d/hibtest
	for d in dev proc sys run; do mount --bind /$d $mnt/$d || fatal "mount --bind /$d failed"; done
	say mark setup_copied
	say setup_copy_s "$(($(date +%s) - t0))"
	rel=$(uname -r)
	if [ -x $mnt/usr/sbin/update-initramfs ]; then
		initramfs_tools_images
	else
		dracut_images
	fi
	give_initrd $mnt/boot/initrd.img-"$rel" /dev/vdc
	say initrd_bytes "$(stat -c %s $mnt/boot/initrd.img-"$rel")"
	say initrd_sha "$(sha256sum $mnt/boot/initrd.img-"$rel" | cut -d' ' -f1)"
	give_initrd $mnt/root/initrd.nohandover /dev/vdd
	say initrd2_bytes "$(stat -c %s $mnt/root/initrd.nohandover)"
	say initrd2_sha "$(sha256sum $mnt/root/initrd.nohandover | cut -d' ' -f1)"
	rm -f $mnt/root/initrd.nohandover
	for d in run sys proc dev; do umount $mnt/$d; done
	{ umount $mnt && vgchange -q -an hibvg >/dev/null && cryptsetup close vda1_crypt; } ||
		fatal "cannot close the LUKS layout"
	say setup_s "$(($(date +%s) - t0))"
	say setup_done 1
}

resumed() {
	resumed_report || return 0
	say journal_unit_lines "$(journalctl -b -o cat -u systemd-hibernate.service | grep -c '^hibernate: ')"
	say journal_hibernating "$(journalctl -b -o cat -u systemd-hibernate.service | grep -c '^hibernate: hibernating to ')"
	say journal_resumed "$(journalctl -b -o cat -u systemd-hibernate.service | grep -c '^hibernate: resumed')"
	say journal_report "$(journalctl -b -o cat -u systemd-hibernate.service | grep -c '^hibernate: resumed: .* written in .* loaded in')"
	say journal_stats "$(journalctl -b -o cat -u systemd-hibernate.service | grep '^hibernate: ' | grep -i 'MB\|MiB\|written\|ms\|s,' | tail -n 1)"
	say journal_kmsg_lines "$(journalctl -b -k -t hibernate -o cat | wc -l)"
	say journal_keyfile "$(journalctl -b -o cat -u systemd-hibernate.service | grep -c '^hibernate: hibernating to .*encrypted with the key file')"
	say journal_passphrase "$(journalctl -b -o cat -u systemd-hibernate.service | grep -c '^hibernate: hibernating to .*encrypted with a passphrase')"
	# One cycle only (ask-password): the resumed world powers off.
	[ -e /etc/hibtest.once ] && from=once
	case $from in
	1)
		# Image 2, for the stale-image boot (3): from a timer, outside this
		# hibernate transaction.
		echo 2 >$STATE/hibernated_in
		say mark hibernate2
		systemd-run --quiet --on-active=2 systemctl hibernate ||
			say hibernate_rc "systemd-run: exit $?"
		;;
	5)
		# Image 4, encrypted, resumed in boot 7 by the key file in the initramfs.
		keyfile_setup
		echo 6 >$STATE/hibernated_in
		sync
		say mark hibernate4
		# systemctl's refusal, if any, on the console.
		later "systemctl hibernate" "systemctl hibernate"
		;;
	*)
		# Not at once: logind refuses a power-off while it still counts the
		# sleep operation as running.
		systemd-run --quiet --on-active=2 systemctl poweroff
		;;
	esac
}

dispatch "$1"
