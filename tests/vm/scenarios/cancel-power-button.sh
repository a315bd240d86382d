#!/bin/sh
# The power button while the image is written (the host presses QEMU's ACPI
# power button, system_powerdown on the monitor, when the progress line
# appears; the disk is throttled so that the write lasts).
#   boot 1: evdev and the ACPI button driver loaded (module set "input", added
#           by cancel-power-button.host); a logging hook; a second reader of
#           the button's device (cat, standing in for logind: the busybox
#           guest has none) kept open throughout.
#           `hibernate -v`: the press cancels (exit 3), the post hook ran, the
#           workload goes on, the swap area is usable, and the other reader
#           got nothing of the press (hibernate grabbed the device).
#           Then a press before `hibernate` starts: the other reader gets it,
#           the next `hibernate -v` is not cancelled by it, completes and
#           powers off.
#   boot 2: resume of that image.
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
WORKLOAD_MB=${WORKLOAD_MB:-32}
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh
# shellcheck source=../guest/hooks.sh
. /lib/hibtest/hooks.sh

[ -x /bin/hibernate ] || fatal "/bin/hibernate missing from the initramfs"

# power_button: the event node of the ACPI "Power Button" (waits up to 5 s
# for evdev to create it).
power_button() {
	i=0
	while [ $i -lt 100 ]; do
		for d in /sys/class/input/event*; do
			[ "$(cat "$d/device/name" 2>/dev/null)" = "Power Button" ] || continue
			[ -c "/dev/input/${d##*/}" ] && echo "/dev/input/${d##*/}" && return 0
		done
		i=$((i + 1))
		usleep 50000
	done
	return 1
}

# presses FILE: the KEY_POWER key-downs in FILE, a copy of an event device's
# stream (struct input_event on x86-64: 24 bytes, type at 16, code at 18,
# value at 20; EV_KEY = 1, KEY_POWER = 116).
presses() {
	od -An -v -tx1 -w24 "$1" | awk '$17 == "01" && $18 == "00" && $19 == "74" && $20 == "00" &&
		$21 == "01" && $22 == "00" && $23 == "00" && $24 == "00"' | wc -l
}

# input_devices: "eventN=name;..." of every input device.
input_devices() {
	for d in /sys/class/input/event*; do
		printf '%s=%s;' "${d##*/}" "$(cat "$d/device/name" 2>/dev/null)"
	done
}

case $1 in
1)
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	button=$(power_button) || fatal "no Power Button input device: $(input_devices)"
	say power_button "$button"
	say input_devices "$(input_devices)"
	hooks_dirs
	hook_logger "$ETC_HOOKS/50-log" 50-log
	workload_start
	workload_report
	# The other reader of the button, as logind is on a desktop.
	cat "$button" >/run/other-reader.ev &
	other=$!

	dmesg_mark
	say mark cancel
	hibernate -v
	say cancel_rc "$?"
	say mark cancel_checks
	sleep 1 # the other reader is thawed: what was queued for it, it has read
	say other_reader_presses "$(presses /run/other-reader.ev)"
	say hook_posts "$(grep -c '^50-log post' "$HOOKLOG")"
	say hook_pres "$(grep -c '^50-log pre' "$HOOKLOG")"
	workload_recheck
	say disk_signature "$(disk_signature /dev/vda1)"
	say image "$(hibernate status --device /dev/vda1 2>/dev/null | sed -n 's/^image: *//p')"
	if swapoff /dev/vda1 && swapon /dev/vda1; then say swapon ok; else say swapon failed; fi
	say signature "$(swap_signature /dev/vda1)"

	# A press before the cycle: the host presses at this mark.
	say mark prepress
	i=0
	while [ "$(presses /run/other-reader.ev)" -lt 1 ] && [ $i -lt 100 ]; do
		i=$((i + 1))
		usleep 50000
	done
	say prepress_other_reader "$(presses /run/other-reader.ev)"
	dmesg_mark
	say mark complete
	hibernate -v
	resumed_or_exit $?
	say mark resumed_world
	kill "$other" 2>/dev/null
	workload_after_resume
	;;
2)
	dmesg_mark
	say mark resume
	resume_step
	;;
*)
	fatal "cancel-power-button has no boot $1"
	;;
esac
