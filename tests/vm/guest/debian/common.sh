# shellcheck shell=sh disable=SC2034 # from, result: the caller's
# Shared by the guest parts of the Debian system scenarios (debian-system.sh,
# trixie-system.sh, trixie-sleep.sh), installed beside them as
# /usr/local/lib/hibtest/common.sh and sourced: they set STATE, DATA and
# DATA_MB first.

# say KEY VALUE: a result line on the console (ttyS0) and in the journal.
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
# cmdline_boot: the boot number, hibtest.boot=N on the kernel command line
# or, in a boot through the disk's own boot loader (lib.sh's
# VM_FIRMWARE_BOOT), QEMU's fw_cfg file opt/hibtest/boot.
cmdline_boot() {
	# shellcheck disable=SC2013 # words, not lines
	for w in $(cat /proc/cmdline); do
		case $w in hibtest.boot=*) echo "${w#*=}"; return 0 ;; esac
	done
	f=/sys/firmware/qemu_fw_cfg/by_name/opt/hibtest/boot/raw
	[ -e $f ] || modprobe qemu_fw_cfg 2>/dev/null
	cat $f 2>/dev/null
}

# swap_active DEV: 1 when DEV is an active swap area.
swap_active() {
	if grep -q "^$(readlink -f "$1") " /proc/swaps; then echo 1; else echo 0; fi
}

# workload_start: the workload service and the tmpfs data; their state said.
workload_start() {
	systemctl start hibtest-counter.service || fatal "cannot start hibtest-counter.service"
	dd if=/dev/urandom of="$DATA" bs=1M count="$DATA_MB" status=none || fatal "cannot write $DATA"
	sha256sum "$DATA" | cut -d' ' -f1 >"$STATE/hash"
	while [ ! -s "$STATE/counter" ]; do sleep 0.2; done
	read -r pid n token <"$STATE/counter"
	say token "$token"
	say hash "$(cat "$STATE/hash")"
	say counter "$n"
	say counter_pid "$pid"
	say counter_unit_pid "$(systemctl show -P MainPID hibtest-counter.service)"
}

# workload_report: the workload's state after a resume (its token, count,
# process and data, and the count 2 s later: still ticking), with pid the
# process it read.
workload_report() {
	read -r pid n token <"$STATE/counter"
	say token "$token"
	say counter "$n"
	say counter_pid "$pid"
	say hash "$(sha256sum "$DATA" | cut -d' ' -f1)"
	sleep 2
	read -r pid2 n2 _ <"$STATE/counter"
	say counter_later "$n2"
	say counter_later_pid "$pid2"
	if kill -0 "$pid" 2>/dev/null; then say counter_alive 1; else say counter_alive 0; fi
}

# resumed_report: after hibernate.target, from where (from=) and the
# workload's state, and the cycle's journal. Status 1 (a power-off on its
# way) when systemd-hibernate.service failed.
resumed_report() {
	touch "$STATE/resumed"
	from=$(cat "$STATE/hibernated_in" 2>/dev/null)
	result=$(systemctl show -P Result systemd-hibernate.service)
	say resumed_from "$from"
	if [ "$result" != success ]; then
		say hibernate_rc "systemd-hibernate.service: $result"
		journalctl -b -o cat -u systemd-hibernate.service | show hibernate-unit
		# Who was to answer a passphrase question (ask-password).
		journalctl -b -o cat -u 'systemd-ask-password-*' | show ask-password
		systemctl list-units --all --no-legend 'systemd-ask-password-*' | show ask-password
		systemd-run --quiet --on-active=2 systemctl poweroff
		return 1
	fi
	say resumed 1
	workload_report
	say counter_unit_pid "$(systemctl show -P MainPID hibtest-counter.service)"
	# The cycle in the journal: the unit's messages (the binary's stderr) and
	# the kernel log (its /dev/kmsg lines).
	journalctl -b -o cat -u systemd-hibernate.service | show journal
}

# later PREFIX COMMAND: COMMAND (a shell line) in 2 s, from a transient unit
# (outside the hibernate transaction), its output on the console.
later() {
	systemd-run --quiet --on-active=2 sh -c "$2 2>&1 | sed 's/^/  $1: /' >/dev/console" ||
		say hibernate_rc "systemd-run: exit $?"
}

# not_resumed: a boot meant to resume reached its step, so the initramfs did
# not resume: say so, with hibernate's kernel-log lines, and power off.
not_resumed() {
	say resumed 0
	journalctl -b -k -t hibernate -o cat | show kernel-log
	systemctl poweroff
}

# dispatch ARG: the guest script's entry, step or resumed (its functions).
dispatch() {
	case $1 in
	step) step ;;
	resumed) resumed ;;
	*) echo "usage: $0 step|resumed" >&2; exit 2 ;;
	esac
}

# grub_install_step: boot 0 of a scenario booted through GRUB (grub-boot.bash):
# GRUB installed inside the guest, on its own disk, then the grub.cfg made
# from /etc/default/grub{,.d}; "grub_install=ok" or what failed.
grub_install_step() {
	if ! out=$(grub-install --target=i386-pc /dev/vda 2>&1); then
		say grub_install "grub-install /dev/vda failed: $(echo "$out" | tail -n 2 | tr '\n' ' ')"
		return 1
	fi
	if ! out=$(update-grub 2>&1); then
		say grub_install "update-grub failed: $(echo "$out" | tail -n 2 | tr '\n' ' ')"
		return 1
	fi
	echo "$out" | show update-grub
	grep -E '^[[:space:]]*linux[[:space:]]' /boot/grub/grub.cfg | head -n 1 | show grub-cfg
	say grub_install ok
}
