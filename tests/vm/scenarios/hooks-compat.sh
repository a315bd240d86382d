#!/bin/sh
# systemd-sleep and pm-utils hooks join the ordered sequence when enabled.
#   boot 1: our hooks at 10, 40, 60, 90; systemd-sleep hooks (called "pre|post
#           hibernate", at 50 whatever their name) in /usr/lib/systemd/
#           system-sleep and /etc/systemd/system-sleep; pm-utils hooks
#           (called "hibernate|thaw", at their NN) in /etc/pm/sleep.d.
#           A hook at 99 stops the first two rounds (exit 3).  Round
#           "default": no keys set, the system-sleep hooks run (the default)
#           and pm-utils ones do not.  Round "off": with systemd-hooks = no,
#           only ours ran.  Then with both keys on, `hibernate -v` (powers
#           off); in the resumed world the hook log.
#   boot 2: `hibernate resume`.
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
WORKLOAD_MB=1
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh
# shellcheck source=../guest/hooks.sh
. /lib/hibtest/hooks.sh

[ -x /bin/hibernate ] || fatal "/bin/hibernate missing from the initramfs"

SD_LIB=/usr/lib/systemd/system-sleep
SD_ETC=/etc/systemd/system-sleep
PM=/etc/pm/sleep.d

case $1 in
1)
	hooks_dirs
	mkdir -p "$SD_LIB" "$SD_ETC" "$PM"
	hook_logger "$ETC_HOOKS/10-ours" 10-ours
	hook_logger "$LIB_HOOKS/40-ours" 40-ours
	hook_logger "$ETC_HOOKS/60-ours" 60-ours
	hook_logger "$LIB_HOOKS/90-ours" 90-ours
	hook_logger "$SD_LIB/sd-plain" sd-plain
	hook_logger "$SD_LIB/20-sd-numbered" 20-sd-numbered
	hook_logger "$SD_ETC/sd-etc" sd-etc
	hook_logger "$PM/30pm" 30pm
	hook_logger "$PM/75pm" 75pm

	# Round "default": the keys are not set.
	: >/etc/hibernate.conf
	hook_logger "$ETC_HOOKS/99-stop" 99-stop 'exit 3'
	set_round default
	say mark default
	hibernate -v
	say default_rc "$?"

	# Round "off": systemd-hooks = no.
	echo 'systemd-hooks = no' >/etc/hibernate.conf
	set_round off
	say mark off
	hibernate -v
	say off_rc "$?"
	rm "$ETC_HOOKS/99-stop"

	cat >/etc/hibernate.conf <<-'CONF'
		systemd-hooks = yes
		pm-utils-hooks = yes
	CONF
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	workload_start
	workload_report 0
	set_round ""
	say mark hibernate
	hibernate -v
	rc=$?
	if [ $rc -ne 0 ]; then
		say hibernate_rc "$rc"
		exit 1
	fi
	workload_after_resume
	dump_hooklog
	;;
2)
	resume_boot
	;;
*)
	fatal "hooks-compat has no boot $1"
	;;
esac
