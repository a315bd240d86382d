#!/bin/sh
# Hooks run in order around a real cycle.
#   boot 1: hooks in /etc/hibernate/hooks.d and /usr/lib/hibernate/hooks.d
#           (a name in /etc replaces /usr/lib's, a link to /dev/null masks
#           it, a bad name and a non-executable file are ignored), OnSuspend /
#           OnResume lines in /etc/hibernate.conf; `hibernate -v` (powers off).
#           In the resumed world (on boot 2's console): the hook log.
#   boot 2: `hibernate resume`: restores boot 1's world.
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
# The hooks need no big workload: a counter process and a token.
WORKLOAD_MB=1
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh
# shellcheck source=../guest/hooks.sh
. /lib/hibtest/hooks.sh

[ -x /bin/hibernate ] || fatal "/bin/hibernate missing from the initramfs"

case $1 in
1)
	hooks_dirs
	hook_logger "$LIB_HOOKS/10-alpha" 10-alpha
	hook_logger "$ETC_HOOKS/20-beta" 20-beta
	hook_logger "$LIB_HOOKS/30-gamma" 30-gamma
	hook_logger "$LIB_HOOKS/50-masked" 50-masked
	ln -s /dev/null "$ETC_HOOKS/50-masked"
	hook_logger "$LIB_HOOKS/60-replaced" 60-replaced-usr
	hook_logger "$ETC_HOOKS/60-replaced" 60-replaced-etc
	hook_logger "$ETC_HOOKS/70-delta" 70-delta
	hook_logger "$ETC_HOOKS/80-noexec" 80-noexec
	chmod 644 "$ETC_HOOKS/80-noexec"
	hook_logger "$LIB_HOOKS/90-omega" 90-omega
	hook_logger "$ETC_HOOKS/README" README
	cat >/etc/hibernate.conf <<-'CONF'
		# hooks-order: commands at their positions among the hooks
		OnSuspend 25 /run/inline-log OnSuspend-25
		OnResume 25 /run/inline-log OnResume-25
		OnSuspend 85 /run/inline-log OnSuspend-85
		OnResume 15 /run/inline-log OnResume-15
	CONF
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	workload_start
	workload_report 0
	say mark hibernate
	hibernate -v
	rc=$?
	if [ $rc -ne 0 ]; then
		say hibernate_rc "$rc"
		dump_hooklog
		exit 1
	fi
	workload_after_resume
	dump_hooklog
	;;
2)
	resume_boot
	;;
*)
	fatal "hooks-order has no boot $1"
	;;
esac
