#!/bin/sh
# Guest part of trixie-history: runs inside the Debian 13 system the host
# built (tests/vm/scenarios/trixie-history.host), as
# /usr/local/lib/hibtest/debian-system.sh (the name guest/debian's units run).
#   1  persistent journal; a hook (OnSuspend, exit 3) cancels `hibernate`:
#      the cancelled record; then `systemctl hibernate` to vda2
#   2  the host damaged that image's header: the distro initramfs's
#      `hibernate resume` refused it and left its record in /run, which
#      hibernate-history.service moved into the history and the journal;
#      said; `systemctl hibernate` again
#   3  resumed by the initramfs: the resumed hibernate's record; the journal's
#      entries of MESSAGE_ID (their fields), journalctl -x's catalog text and
#      hibernate status's history table said
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
STATE=/run/hibtest
DATA=/dev/shm/workload.bin
DATA_MB=32
CONF=/etc/hibernate.conf
ID=fdbd4e690fe44ad4a2ba9caf4eca45fc
# say, show, fatal, cmdline_boot, swap_active, workload_start, resumed_report,
# later, dispatch.
# shellcheck source=../guest/debian/common.sh
. /usr/local/lib/hibtest/common.sh

# Every cycle entry of the journal, oldest first: one line of its fields in
# this order (the journal keeps an entry's fields in an order of its own).
journal_entries() {
	journalctl MESSAGE_ID=$ID -o export --no-pager | awk '
		function flush() {
			if (n) print f["RESULT"] " " f["IMAGE_BYTES"] " " f["LOAD_MS"] " " f["REASON"]
			n = 0; split("", f)
		}
		/^HIBERNATE_(RESULT|LOAD_MS|IMAGE_BYTES|REASON)=/ {
			k = substr($0, 11, index($0, "=") - 11); f[k] = $0; n++
		}
		/^$/ { flush() }
		END { flush() }'
}

# vda2 on as swap, then logind told again (hibernate-logind.service) whether
# it can hibernate now, and awaited, as trixie-system's target does.
swapon_vda2() {
	[ "$(swap_active /dev/vda2)" = 1 ] || out=$(swapon /dev/vda2 2>&1) || fatal "swapon /dev/vda2 failed: $out"
	systemctl restart hibernate-logind.service || say logind_unit_rc "$?"
	n=0
	while [ $n -lt 120 ] && systemctl list-jobs --no-legend | grep -q .; do
		sleep 0.5
		n=$((n + 1))
	done
}

step() {
	boot=$(cmdline_boot)
	mkdir -p $STATE
	say boot_start "$boot"
	say kernel "$(uname -r)"
	say systemd_version "$(systemctl --version | head -n 1)"
	case $boot in
	1)
		mkdir -p /var/log/journal
		journalctl --flush
		cp $CONF $CONF.pkg
		printf '%s\n' "device = /dev/vda2" "OnSuspend 10 echo not now; exit 3" >>$CONF
		swapon_vda2
		say mark cancel
		hibernate >$STATE/cancel 2>&1
		say cancel_rc "$?"
		show cancel <$STATE/cancel
		cp $CONF.pkg $CONF
		echo "device = /dev/vda2" >>$CONF
		swapon_vda2
		workload_start
		echo 1 >$STATE/hibernated_in
		sync
		say mark hibernate
		systemctl hibernate || say hibernate_rc "systemctl hibernate: exit $?"
		;;
	2)
		journalctl -b -k -t hibernate -o cat | show kernel-log
		say history_unit "$(systemctl show -P Result hibernate-history.service):$(systemctl show -P ExecMainStatus hibernate-history.service)"
		if [ -e /run/hibernate/resume-result ]; then say handover present; else say handover gone; fi
		journal_entries | while IFS= read -r l; do say journal_boot2 "$l"; done
		swapon_vda2
		workload_start
		echo 2 >$STATE/hibernated_in
		sync
		say mark hibernate
		systemctl hibernate || say hibernate_rc "systemctl hibernate: exit $?"
		;;
	*) not_resumed ;;
	esac
}

resumed() {
	resumed_report || return 0
	journal_entries | while IFS= read -r l; do say journal_entry "$l"; done
	say catalog "$(journalctl -x MESSAGE_ID=$ID -n 1 --no-pager | grep -c 'Subject: A hibernation cycle ended')"
	hibernate status >$STATE/status 2>&1
	sed -n '/^history/,$p' $STATE/status | while IFS= read -r l; do say status_line "$l"; done
	systemd-run --quiet --on-active=2 systemctl poweroff
}

dispatch "$1"
