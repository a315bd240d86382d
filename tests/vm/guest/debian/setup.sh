# shellcheck shell=sh disable=SC2034 # the scenario scripts read what is set here
# Shared by the guest parts of the setup-* scenarios (booted through GRUB,
# tests/vm/scenarios/grub-boot.bash), installed beside them as
# /usr/local/lib/hibtest/setup.sh and sourced after common.sh.
SNAP=/var/lib/hibtest

# now_ms: milliseconds since boot.
now_ms() {
	read -r up _ </proc/uptime
	echo "${up%.*}${up#*.}0" | sed 's/^0*//;s/^$/0/'
}

# snapshot NAME: sha256 of every regular file under /etc and of GRUB's
# generated grub.cfg, sorted by name, in $SNAP/NAME.sha (on the disk: it
# must outlive the boots between setup and --undo).  What setup may touch
# (fstab, initramfs and GRUB configuration, hibernate.conf, swap units)
# is all there.  Not /etc/adjtime: the cycle's clock hook (hooks/60-clock,
# hwclock --systohc) writes it when the machine hibernates, setup never
# (the host checks setup's own list of edited files).  In /var/lib/hibernate,
# every name but the history of cycles.
snapshot() {
	mkdir -p $SNAP
	find /etc /boot/grub/grub.cfg -xdev -type f ! -path /etc/adjtime -print0 | sort -z |
		xargs -0 sha256sum >"$SNAP/$1.sha"
	# Not the cycle's own history (history.c), which a resumed cycle adds and
	# which makes /var/lib/hibernate itself: setup's undo must keep it.
	find /var/lib/hibernate -mindepth 1 ! -path /var/lib/hibernate/history 2>/dev/null |
		sort >"$SNAP/$1.varlib"
	say "snapshot_$1" "$(wc -l <"$SNAP/$1.sha") files"
}

# run_timed KEY COMMAND...: COMMAND's output on the console (prefix KEY),
# "KEY_rc" and "KEY_ms" said.
run_timed() {
	key=$1
	shift
	t0=$(now_ms)
	"$@" >"$STATE/$key.out" 2>&1
	rc=$?
	t1=$(now_ms)
	show "$key" <"$STATE/$key.out"
	say "${key}_rc" "$rc"
	say "${key}_ms" "$((t1 - t0))"
	return $rc
}

# setup_report: what setup chose (swap in use, fstab, the state file) and
# doctor's verdict.
setup_report() {
	swapon --show=NAME,TYPE,SIZE,PRIO --noheadings | show swaps
	v=$(swapon --show=NAME,TYPE,SIZE,PRIO --noheadings | tr -s ' ' | paste -sd';' -)
	say swaps "${v:-none}"
	show fstab </etc/fstab
	if [ -f /var/lib/hibernate/setup.state ]; then
		show setup-state </var/lib/hibernate/setup.state
		say setup_state 1
		say setup_edited "$(awk '$1 == "edited" { print $2 }' /var/lib/hibernate/setup.state | paste -sd' ' -)"
		say setup_created "$(awk '$1 != "edited" && $1 !~ /^#/ { print $1 ":" $2 }' /var/lib/hibernate/setup.state | paste -sd' ' -)"
	else
		say setup_state 0
	fi
	say conf_device "$(hibernate config get device 2>&1)"
	# What the next boots' command line will be: GRUB's menu entry.
	say grubcfg_resume "$(grep -c 'resume=' /boot/grub/grub.cfg)"
	run_timed doctor hibernate doctor
	say doctor_verdict "$(grep -c '^PASS' "$STATE/doctor.out") PASS, $(grep -c '^WARN' "$STATE/doctor.out") WARN, $(grep -c '^FAIL' "$STATE/doctor.out") FAIL"
	say setup_verdict "$(grep '^setup: doctor:' "$STATE/setup.out" 2>/dev/null | tail -n 1)"
}

# setup_target: the target setup chose: hibernate.conf's device (a UUID=
# resolved to its device path), else the first swap area in use that is a
# file.
setup_target() {
	t=$(hibernate config get device 2>/dev/null)
	case $t in UUID=* | LABEL=*) t=$(findfs "$t" 2>/dev/null || echo "$t") ;; esac
	[ -n "$t" ] || t=$(swapon --show=NAME,TYPE --noheadings | awk '$2 == "file" { print $1; exit }')
	echo "$t"
}

# hibernate_now N: the workload, then systemctl hibernate (boot N).
hibernate_now() {
	workload_start
	echo "$1" >"$STATE/hibernated_in"
	sync
	say mark hibernate
	systemctl hibernate || say hibernate_rc "systemctl hibernate: exit $?"
}

# fast_initramfs: initramfs builds of this machine that take ~2 min under
# TCG instead of ~8 (setup and --undo each rebuild it): MODULES=dep (the
# modules this guest needs, known here, not in the host's chroot) and
# gzip -1.  Part of the machine before setup: the --undo check covers it.
fast_initramfs() {
	printf 'MODULES=dep\nCOMPRESSLEVEL=1\n' >/etc/initramfs-tools/conf.d/hibtest
}

# boot0: GRUB installed inside the guest (common.sh), then power off.
boot0() {
	grub_install_step
	fast_initramfs
	sync
	systemctl poweroff
}

