# shellcheck shell=sh
# Guest steps shared by the hook scenarios (hooks-order, hooks-unwind,
# hooks-compat, scriptlets, doctor), sourced after guest.sh.
#
# A logging hook appends one line per call to $HOOKLOG (tmpfs: it is part of
# the image, so after a resume it holds both sides of the cycle):
#   NAME ARGS... phase=$HIBERNATE_PHASE mode=$HIBERNATE_MODE sd=$SYSTEMD_SLEEP_ACTION
# and prints "HIBTEST hook=ROUND NAME ARGS..." on /dev/console as it runs, so
# the host sees in which boot's log (the hibernated world or the resumed one)
# each call happened.  ROUND is the content of /run/round (set_round), to
# tell the attempts of one boot apart.

HOOKLOG=/run/hooks.log
ETC_HOOKS=/etc/hibernate/hooks.d
LIB_HOOKS=/usr/lib/hibernate/hooks.d

# hooks_dirs: the hook directories of an installed system.  The VM binary is
# built with meson's default prefix /usr/local and looks for the shipped
# hooks in /usr/local/lib/hibernate/hooks.d; a distribution's build (prefix
# /usr) looks in /usr/lib/hibernate/hooks.d.  The guest has the second, the
# first a link to it, so the scenarios hold whichever build they get.
hooks_dirs() {
	mkdir -p "$ETC_HOOKS" "$LIB_HOOKS" /usr/local/lib/hibernate ||
		fatal "cannot make the hook directories"
	[ -e /usr/local/lib/hibernate/hooks.d ] ||
		ln -s "$LIB_HOOKS" /usr/local/lib/hibernate/hooks.d
	: >"$HOOKLOG"
	set_round ""
	# The logger the OnSuspend/OnResume lines of hibernate.conf call.
	cat >/run/inline-log <<-'EOF'
		#!/bin/sh
		echo "$1 phase=$HIBERNATE_PHASE mode=$HIBERNATE_MODE sd=$SYSTEMD_SLEEP_ACTION" >>/run/hooks.log
		echo "HIBTEST hook=$(cat /run/round)$1" >/dev/console
	EOF
	chmod 755 /run/inline-log
}

# set_round TAG: prefix of the following hook= console lines ("TAG:").
set_round() {
	if [ -n "$1" ]; then echo "$1:" >/run/round; else : >/run/round; fi
}

# hook_logger PATH NAME [SHELL-CODE]: a hook that logs its calls, then runs
# SHELL-CODE (e.g. "exit 1").
hook_logger() {
	cat >"$1" <<-EOF
		#!/bin/sh
		echo "$2 \$* phase=\$HIBERNATE_PHASE mode=\$HIBERNATE_MODE sd=\$SYSTEMD_SLEEP_ACTION" >>$HOOKLOG
		echo "HIBTEST hook=\$(cat /run/round)$2 \$*" >/dev/console
		${3:-}
	EOF
	chmod 755 "$1" || fatal "cannot write hook $1"
}

# dump_hooklog: the log, one "hooklog=LINE" per line.
dump_hooklog() {
	while IFS= read -r line; do
		say hooklog "$line"
	done <"$HOOKLOG"
	say hooklog_end "$(wc -l <"$HOOKLOG")"
}

# vda1_signature: the swap signature of vda1 as the disk has it (the page
# cache dropped first: hibernate writes around it).
vda1_signature() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	swap_signature /dev/vda1
}

# resume_boot: `hibernate resume` from vda1 first thing in the boot; returns
# only if nothing was restored (then resumed=0, resume_rc, resume_ms).
resume_boot() {
	resume_step --device /dev/vda1
}
