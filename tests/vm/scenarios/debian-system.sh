#!/bin/sh
# Guest part of debian-system: runs inside the Debian system the host built
# (tests/vm/scenarios/debian-system.host), not in the busybox initramfs.
#   debian-system.sh step      hibtest.service, once the system is up: the
#                              step of boot hibtest.boot=N
#   debian-system.sh resumed   hibtest-resumed.service, after hibernate.target:
#                              in the resumed world (or when hibernating failed)
# Boots (the host's plan; RESUME= in /etc/initramfs-tools/conf.d/resume names
# vda2 for boots 1-4, boots 5-6 have resume=UUID= resume_offset= instead):
#   1  swapon vda2, the workload service, systemctl hibernate
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
# Results: "HIBTEST key=value" lines on the console (ttyS0).
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
STATE=/run/hibtest
DATA=/dev/shm/workload.bin
DATA_MB=64

say() {
	echo "HIBTEST $1=$2" >/dev/console
	echo "HIBTEST $1=$2"
}
# show PREFIX: stdin on the console (for the log), each line prefixed.
show() {
	sed "s|^|  $1: |" >/dev/console
}
fatal() {
	say error "$*"
	systemctl poweroff
	exit 1
}
cmdline_boot() {
	# shellcheck disable=SC2013 # words, not lines
	for w in $(cat /proc/cmdline); do
		case $w in hibtest.boot=*) echo "${w#*=}" ;; esac
	done
}

unit_report() {
	# The stale-image unit of this boot: its state and what it said.
	say stale_unit "$(systemctl show -P ActiveState hibernate-discard-stale.service)/$(systemctl show -P Result hibernate-discard-stale.service)"
	journalctl -b -o cat -u hibernate-discard-stale.service | grep -v '^Starting\|^Finished' | show stale-unit
	say stale_unit_said "$(journalctl -b -o cat -u hibernate-discard-stale.service | grep hibernate: | tail -n 1)"
}

# The image state of vda2 as the binary sees it.
vda2_report() {
	hibernate status --device /dev/vda2 >$STATE/status 2>&1
	say vda2_image "$(sed -n 's/^image: *//p' $STATE/status)"
	say vda2_signature "$(sed -n 's/^signature: *//p' $STATE/status)"
}

# swap_active DEV: 1 when DEV is an active swap area.
swap_active() {
	if grep -q "^$(readlink -f "$1") " /proc/swaps; then echo 1; else echo 0; fi
}

workload_start() {
	systemctl start hibtest-counter.service || fatal "cannot start hibtest-counter.service"
	dd if=/dev/urandom of=$DATA bs=1M count=$DATA_MB status=none || fatal "cannot write $DATA"
	sha256sum $DATA | cut -d' ' -f1 >$STATE/hash
	while [ ! -s $STATE/counter ]; do sleep 0.2; done
	read -r pid n token <$STATE/counter
	say token "$token"
	say hash "$(cat $STATE/hash)"
	say counter "$n"
	say counter_pid "$pid"
	say counter_unit_pid "$(systemctl show -P MainPID hibtest-counter.service)"
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
		if [ "$boot" = 3 ]; then
			vda2_report
			journalctl -b -k -o cat | grep -i 'PM: \|hibernat' | show kernel-log
		fi
		# systemd's gpt-auto-generator may have turned it on already (a swap
		# partition on the root disk).
		say vda2_active "$(swap_active /dev/vda2)"
		[ "$(swap_active /dev/vda2)" = 1 ] || out=$(swapon /dev/vda2 2>&1) || fatal "swapon /dev/vda2 failed: $out; $(blkid -p /dev/vda2 2>&1)"
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
	# and gzip -1: the full build takes ~8 min under TCG, this ~2.
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

resumed() {
	touch $STATE/resumed
	from=$(cat $STATE/hibernated_in 2>/dev/null)
	result=$(systemctl show -P Result systemd-hibernate.service)
	say resumed_from "$from"
	if [ "$result" != success ]; then
		say hibernate_rc "systemd-hibernate.service: $result"
		journalctl -b -o cat -u systemd-hibernate.service | show hibernate-unit
		systemd-run --quiet --on-active=2 systemctl poweroff
		return
	fi
	say resumed 1
	read -r pid n token <$STATE/counter
	say token "$token"
	say counter "$n"
	say counter_pid "$pid"
	say hash "$(sha256sum $DATA | cut -d' ' -f1)"
	sleep 2
	read -r pid2 n2 _ <$STATE/counter
	say counter_later "$n2"
	say counter_later_pid "$pid2"
	if kill -0 "$pid" 2>/dev/null; then say counter_alive 1; else say counter_alive 0; fi
	say counter_unit_pid "$(systemctl show -P MainPID hibtest-counter.service)"
	# The cycle in the journal: the unit's messages (the binary's stderr) and
	# the kernel log (its /dev/kmsg lines).
	journalctl -b -o cat -u systemd-hibernate.service | show journal
	say journal_unit_lines "$(journalctl -b -o cat -u systemd-hibernate.service | grep -c '^hibernate: ')"
	say journal_hibernating "$(journalctl -b -o cat -u systemd-hibernate.service | grep -c '^hibernate: hibernating to ')"
	say journal_resumed "$(journalctl -b -o cat -u systemd-hibernate.service | grep -c '^hibernate: resumed')"
	say journal_report "$(journalctl -b -o cat -u systemd-hibernate.service | grep -c '^hibernate: resumed: .* written in .* loaded in')"
	say journal_stats "$(journalctl -b -o cat -u systemd-hibernate.service | grep '^hibernate: ' | grep -i 'MB\|MiB\|written\|ms\|s,' | tail -n 1)"
	say journal_kmsg_lines "$(journalctl -b -k -t hibernate -o cat | wc -l)"
	say journal_keyfile "$(journalctl -b -o cat -u systemd-hibernate.service | grep -c '^hibernate: hibernating to .*encrypted with the key file')"
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
		systemd-run --quiet --on-active=2 sh -c \
			'systemctl hibernate 2>&1 | sed "s/^/  systemctl hibernate: /" >/dev/console' ||
			say hibernate_rc "systemd-run: exit $?"
		;;
	*)
		# Not at once: logind refuses a power-off while it still counts the
		# sleep operation as running.
		systemd-run --quiet --on-active=2 systemctl poweroff
		;;
	esac
}

case $1 in
step) step ;;
resumed) resumed ;;
*) echo "usage: $0 step|resumed" >&2; exit 2 ;;
esac
