#!/bin/sh
# hibernate setup on a machine with an active swap partition (vda1, 1 GiB;
# the VM has 1 GiB of RAM: an image needs at most 533 MiB), then the check
# before the freeze, a cycle, and --undo.
#   boot 1: swapon vda1; setup --dry-run changes nothing; setup --yes picks
#           vda1 and makes nothing; a second setup changes nothing; a record
#           of another place refuses the cycle before anything freezes; with
#           the right record the workload hibernates; resumed, setup --undo
#           puts every file back.
#   boot 2: resume= on the kernel command line (the busybox harness has no
#           initramfs of Debian's to carry the location): the workload back.
# Simulated: update-initramfs. The harness's initramfs is built on the host,
# so a stand-in records what the package's initramfs-tools hook records
# (`hibernate config location` into /var/lib/hibernate/initramfs/RELEASE);
# the hook itself is checked by tests/check-integration, and a real rebuild
# through GRUB by the setup-* scenarios of the Debian harness.
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
WORKLOAD_MB=${WORKLOAD_MB:-16}
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh
# shellcheck source=../guest/swapfile.sh
. /lib/hibtest/swapfile.sh

record=/var/lib/hibernate/initramfs/$(uname -r)

stand_in_update_initramfs() {
	mkdir -p /usr/sbin
	cat >/usr/sbin/update-initramfs <<'EOS'
#!/bin/sh
# Stand-in: what the package's hook records on the running system.
rec=/var/lib/hibernate/initramfs/$(uname -r)
if loc=$(hibernate config location) && [ -n "$loc" ]; then
	mkdir -p "${rec%/*}"
	printf 'location %s\nbuilt %s\n' "$loc" "$(date +%s)" >"$rec"
else
	rm -f "$rec"
fi
echo "update-initramfs $*: recorded '$loc'"
EOS
	chmod 755 /usr/sbin/update-initramfs
}

# say_lines KEY FILE: each line of FILE as KEY.
say_lines() {
	while IFS= read -r l; do say "$1" "$l"; done <"$2"
}

# Every file setup may touch, as it is now: NAME=sha256 or NAME=absent.
files_state() {
	for f in /etc/hibernate.conf /etc/fstab /var/lib/hibernate/setup.state; do
		if [ -e "$f" ]; then
			printf '%s=%s ' "$f" "$(sha256sum <"$f" | cut -c1-16)"
		else
			printf '%s=absent ' "$f"
		fi
	done
}

boot=$1
[ -x /bin/hibernate ] || fatal "/bin/hibernate missing from the initramfs"

case $boot in
1)
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	stand_in_update_initramfs
	printf '# mine\nverify = no\n' >/etc/hibernate.conf
	before=$(files_state)
	say files_before "$before"
	hibernate setup --dry-run >/run/dry.out 2>&1
	say dry_rc "$?"
	say_lines dry /run/dry.out
	say dry_changed "$([ "$(files_state)" = "$before" ] && echo no || echo yes)"
	t0=$(uptime_ms)
	hibernate setup --yes >/run/setup.out 2>&1
	say setup_rc "$?"
	say setup_ms $(($(uptime_ms) - t0))
	say_lines setup /run/setup.out
	say conf_device "$(hibernate config get device)"
	say record "$(head -n 1 "$record" 2>/dev/null)"
	hibernate setup --yes >/run/again.out 2>&1
	say again_rc "$?"
	say_lines again /run/again.out
	# The initramfs re-built for another place (a stale record): refused.
	cp "$record" /run/record.good
	printf 'location /dev/vdb 1\nbuilt 1\n' >"$record"
	dmesg_mark
	hibernate >/run/stale.out 2>&1
	say stale_rc "$?"
	say stale_msg "$(grep refused /run/stale.out | head -n 1)"
	say stale_froze "$(froze_since_mark)"
	cp /run/record.good "$record"
	workload_start
	workload_report
	dmesg_mark
	say mark hibernate
	hibernate
	resumed_or_exit $?
	workload_after_resume
	hibernate setup --undo >/run/undo.out 2>&1
	say undo_rc "$?"
	say_lines undo /run/undo.out
	say files_after "$(files_state)"
	say swaps_after "$(grep -c '^/dev/vda1 ' /proc/swaps)"
	;;
2)
	resume_from_cmdline
	;;
*)
	fatal "setup-swap has no boot $boot"
	;;
esac
