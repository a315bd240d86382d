#!/bin/sh
# The shipped hooks (hooks/, in /usr/lib/hibernate/hooks.d), each enabled by
# its key in /etc/hibernate.conf, through one real cycle.
#   boot 1: set up what each hook acts on (a dummy interface d0, a spare
#           module loaded with modprobe, an init.d service "demo", a program
#           "napper"); OnSuspend lines placed right after each hook record
#           what the hook did (/run/observed); OnSuspend 65 sets the system
#           clock to 2001 after 60-clock saved the right time to the RTC.
#           `hibernate -v` (powers off); in the resumed world: the state.
#   boot 2: `hibernate resume`.
# A part the guest cannot do prints skip_PART=reason (the host reports it).
# shellcheck disable=SC2016 # the OnSuspend commands, quoted as is
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
WORKLOAD_MB=1
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh
# shellcheck source=../guest/hooks.sh
. /lib/hibtest/hooks.sh

[ -x /bin/hibernate ] || fatal "/bin/hibernate missing from the initramfs"

# The VT in front (what fgconsole says), from the kernel.
active_vt() {
	sed -n 's/^tty//p' /sys/class/tty/tty0/active 2>/dev/null
}
demo_pid() {
	cat /run/demo.pid 2>/dev/null
}

case $1 in
1)
	hooks_dirs
	# shellcheck disable=SC2012 # our own file names
	say shipped "$(ls "$LIB_HOOKS" | paste -sd' ')"
	conf=/etc/hibernate.conf
	: >$conf
	: >/run/observed
	# observe NN SHELL: an OnSuspend line at NN appending "SHELL's output" to
	# /run/observed.
	observe() {
		echo "OnSuspend $1 $2 >>/run/observed 2>&1" >>$conf
	}

	# clock (60-clock): the RTC.
	if [ -e /dev/rtc0 ] || [ -e /dev/rtc ]; then
		echo "clock = yes" >>$conf
		observe 65 'date -s "2001-01-01 00:00:00" >/dev/null && echo "clock_set_back $(date +%Y)"'
	else
		say skip_clock "the guest has no /dev/rtc0 (no RTC driver)"
		echo "clock = no" >>$conf
	fi

	# network (40-network): a dummy interface, up.
	if modprobe dummy 2>/dev/null && ip link add d0 type dummy && ip link set d0 up; then
		say d0_flags_before "$(cat /sys/class/net/d0/flags)"
		echo "network = yes" >>$conf
		observe 45 'echo "d0_flags_during $(cat /sys/class/net/d0/flags)"'
	else
		say skip_network "no dummy interface: modprobe dummy or ip link add failed (the kernel may lack CONFIG_DUMMY)"
	fi

	# unload-modules (50-modules): a module nothing uses, loaded by modprobe
	# (as the hook's reload will).
	if [ -f /etc/hibtest/modules.spare ] && modprobe crc_itu_t; then
		say spare_before "$(grep -c '^crc_itu_t ' /proc/modules)"
		echo "unload-modules = crc_itu_t" >>$conf
		observe 55 'echo "spare_during $(grep -c "^crc_itu_t " /proc/modules)"'
	else
		say skip_modules "crc_itu_t cannot be loaded with modprobe in this guest"
	fi

	# services (30-services): an init.d service.
	mkdir -p /etc/init.d
	cat >/etc/init.d/demo <<-'DEMO'
		#!/bin/sh
		# A tiny service: a sleep loop, its pid in /run/demo.pid.
		pidfile=/run/demo.pid
		running() { [ -f $pidfile ] && kill -0 "$(cat $pidfile)" 2>/dev/null; }
		case $1 in
		start)
			running && exit 0
			setsid sh -c 'while :; do sleep 1; done' </dev/null >/dev/null 2>&1 &
			echo $! >$pidfile
			echo "start $!" >>/run/demo.events
			;;
		stop)
			running || exit 0
			kill "$(cat $pidfile)"
			echo "stop $(cat $pidfile)" >>/run/demo.events
			rm -f $pidfile
			;;
		status) running ;;
		*) exit 3 ;;
		esac
	DEMO
	chmod 755 /etc/init.d/demo
	/etc/init.d/demo start || fatal "/etc/init.d/demo start failed"
	say demo_pid_before "$(demo_pid)"
	echo "services = demo" >>$conf
	observe 35 'if /etc/init.d/demo status; then echo "demo_during running"; else echo "demo_during stopped"; fi'

	# stop-programs (20-stop-programs): a program that must not see a cycle.
	printf '#!/bin/sh\nwhile :; do sleep 1; done\n' >/bin/napper
	chmod 755 /bin/napper
	napper </dev/null >/dev/null 2>&1 &
	napper_pid=$!
	usleep 200000
	say napper_before "$(pidof napper)"
	echo "stop-programs = napper" >>$conf
	observe 25 'echo "napper_during $(pidof napper || echo none)"'

	# switch-vt (70-switch-vt): needs a VT in front.
	vt=$(active_vt)
	if [ -n "$vt" ] && [ -e /dev/tty0 ]; then
		say vt_before "$vt"
		echo "switch-vt = yes" >>$conf
		observe 75 'echo "vt_during $(sed -n "s/^tty//p" /sys/class/tty/tty0/active)"'
	else
		say skip_switch_vt "no virtual terminal: /sys/class/tty/tty0/active says '$(cat /sys/class/tty/tty0/active 2>/dev/null)'"
	fi

	# lock-console (10-lock-console): no logind here and busybox has no vlock;
	# a stand-in vlock on the hooks' PATH records what it was started on and
	# stays, as the real one waits for a password. The hook's own logic (the
	# console in front, setsid, the check that the lock is up) runs as shipped.
	# That check looks for a process named vlock on the console: the stand-in
	# stays that process (a loop, no exec).
	if [ -n "$vt" ] && [ -e "/dev/tty$vt" ]; then
		mkdir -p /usr/local/bin
		cat >/usr/local/bin/vlock <<-'EOF'
			#!/bin/sh
			echo $$ >/run/vlock.pid
			echo "$* $(readlink /proc/$$/fd/0)" >/run/vlock.started
			while :; do sleep 1000; done
		EOF
		chmod 755 /usr/local/bin/vlock
		echo "lock-console = yes" >>$conf
		observe 15 'echo "lock_during $(cat /run/vlock.started 2>/dev/null || echo none)"'
	else
		say skip_lock_console "no virtual terminal in front to lock"
	fi

	sed 's/^/  conf: /' $conf
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	workload_start
	workload_report 0
	say mark hibernate
	hibernate -v
	rc=$?
	if [ $rc -ne 0 ]; then
		say hibernate_rc "$rc"
		sed 's/^/  observed: /' /run/observed
		exit 1
	fi
	workload_after_resume
	# What the OnSuspend lines saw during pre.
	while read -r key value; do
		say "$key" "$value"
	done </run/observed
	# And now, after the post hooks.
	say clock_after "$(date +%s)"
	[ -e /sys/class/net/d0 ] && say d0_flags_after "$(cat /sys/class/net/d0/flags)"
	say spare_after "$(grep -c '^crc_itu_t ' /proc/modules)"
	if /etc/init.d/demo status; then say demo_after running; else say demo_after stopped; fi
	say demo_pid_after "$(demo_pid)"
	say demo_events "$(paste -sd, /run/demo.events)"
	if kill -0 "$napper_pid" 2>/dev/null; then say napper_after alive; else say napper_after gone; fi
	say vt_after "$(active_vt)"
	if kill -0 "$(cat /run/vlock.pid 2>/dev/null)" 2>/dev/null; then
		say lock_after alive
	else
		say lock_after gone
	fi
	;;
2)
	resume_boot
	;;
*)
	fatal "scriptlets has no boot $1"
	;;
esac
