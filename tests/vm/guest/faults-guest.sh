# shellcheck shell=sh
# Guest helpers of the fault-injection scenarios (busybox sh, sourced after
# guest.sh).  The host side is tests/vm/faults.sh.
#
# The host talks to the guest through the start of vda2 (raw, no
# filesystem): NUL-padded text at byte 0 (a plan of trials, or key=value
# lines for the boot), and for plans the replacement bytes from byte 1 MiB
# on.  Read with O_DIRECT, so that a resumed world (whose page cache is from
# the boot that wrote the image) sees what the host wrote for this boot.

# The host's text for this boot.
fault_text() {
	dd if=/dev/vda2 bs=65536 count=16 iflag=direct 2>/dev/null | tr -d '\000'
}

# fault_get KEY: the value of a "KEY=value" line of the host's text.
fault_get() {
	fault_text | sed -n "s/^$1=//p" | head -n1
}

# The image header's byte offset, from the signature tail on vda1 (offset
# 4096 - 256 + 24, a little-endian u64).
fault_header_offset() {
	dd if=/dev/vda1 bs=1 skip=3864 count=8 2>/dev/null | od -An -tu8 | tr -d ' \n'
}

fault_drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# The first lines `hibernate` printed (progress and prompts left out), joined: what the
# trial's verdict quotes.
_fault_msg() {
	grep -v -e '^$' -e 'Loading image' -e '^Passphrase' "$1" | sed 's/^hibernate: //' | head -n 5 |
		tr '\n' '|' | tr -d '\r' |
		sed 's/|$//; s/|/ | /g'
}

# _fault_run_trial ARGS...: apply the current trial's patches to vda1, run
# `hibernate resume ARGS`, report, put everything back.
_fault_run_trial() {
	i=0
	for p in $patches; do
		off=${p%%:*}; rest=${p#*:}; len=${rest%%:*}; soff=${rest#*:}
		dd if=/dev/vda1 of=/run/fault.orig.$i bs=4096 skip="$off" count="$len" \
			iflag=skip_bytes,count_bytes 2>/dev/null || fatal "trial $cur: saving $off+$len failed"
		dd if=/dev/vda2 of=/dev/vda1 bs=4096 skip=$((soff + 1048576)) seek="$off" count="$len" \
			iflag=skip_bytes,count_bytes oflag=seek_bytes conv=notrunc 2>/dev/null ||
			fatal "trial $cur: patching $off+$len failed"
		i=$((i + 1))
	done
	fault_drop_caches
	t0=$(uptime_ms)
	hibernate resume --device /dev/vda1 "$@" </dev/null >/run/fault.out 2>&1
	rc=$?
	t1=$(uptime_ms)
	# Still here: nothing was restored.
	sig=$(swap_signature /dev/vda1)
	say trial "$cur|$region|$kind|$what|rc=$rc|sig=$sig|ms=$((t1 - t0))|msg=$(_fault_msg /run/fault.out)"
	# Put back the patched bytes, then what resume itself writes: the
	# signature page and the header page.
	i=0
	for p in $patches; do
		off=${p%%:*}
		dd if=/run/fault.orig.$i of=/dev/vda1 bs=4096 seek="$off" oflag=seek_bytes conv=notrunc \
			2>/dev/null || fatal "trial $cur: restoring $off failed"
		rm -f /run/fault.orig.$i
		i=$((i + 1))
	done
	dd if=/run/fault.page0 of=/dev/vda1 bs=4096 conv=notrunc 2>/dev/null
	dd if=/run/fault.header of=/dev/vda1 bs=4096 seek=$((hoff / 4096)) conv=notrunc 2>/dev/null
	fault_drop_caches
	dd if=/dev/vda1 bs=4096 count=1 iflag=direct 2>/dev/null | cmp -s - /run/fault.page0 ||
		fatal "trial $cur: the signature page did not come back"
}

# fault_trials ARGS...: every trial of the host's plan, against the image on
# vda1; ARGS go to each `hibernate resume`.  Prints "trial=..." per trial and
# "pristine=same|changed" (the image region hashed before and after).
# shellcheck disable=SC2120 # the arguments are optional: called without them too
fault_trials() {
	fault_text >/run/fault.plan
	end=$(sed -n 's/^IMAGE_END //p' /run/fault.plan)
	[ -n "$end" ] || fatal "no plan on vda2"
	hoff=$(fault_header_offset)
	say header_offset "$hoff"
	dd if=/dev/vda1 of=/run/fault.page0 bs=4096 count=1 2>/dev/null
	dd if=/dev/vda1 of=/run/fault.header bs=4096 skip=$((hoff / 4096)) count=1 2>/dev/null
	region_hash() {
		dd if=/dev/vda1 bs=65536 count=$(((end + 65535) / 65536)) iflag=direct 2>/dev/null |
			sha256sum | cut -d' ' -f1
	}
	before=$(region_hash)
	cur='' patches=''
	while read -r tag a b c d; do
		case $tag in
		T)
			[ -n "$cur" ] && _fault_run_trial "$@"
			cur=$a region=$b kind=$c what=$d patches=''
			;;
		P) patches="$patches $a:$b:$c" ;;
		END)
			[ -n "$cur" ] && _fault_run_trial "$@"
			cur=''
			;;
		esac
	done </run/fault.plan
	after=$(region_hash)
	if [ "$before" = "$after" ]; then say pristine same; else say pristine changed; fi
	say trials_done "$(grep -c '^T ' /run/fault.plan)"
}

# fault_resume ARGS...: `hibernate resume --device /dev/vda1 ARGS`; returns
# only when nothing was restored, then prints resumed=0, resume_rc,
# resume_ms, resume_msg (its first lines) and signature (vda1 afterwards).
# shellcheck disable=SC2120 # the arguments are optional: called without them too
fault_resume() {
	t0=$(uptime_ms)
	hibernate resume --device /dev/vda1 "$@" >/run/fault.resume 2>&1
	rc=$?
	t1=$(uptime_ms)
	sed 's/^/  | /' /run/fault.resume
	say resumed 0
	say resume_rc "$rc"
	say resume_ms $((t1 - t0))
	say resume_msg "$(_fault_msg /run/fault.resume)"
	say signature "$(swap_signature /dev/vda1)"
}

# fault_swapon: swapon vda1 and say how it went (swapon=ok|failed).
fault_swapon() {
	if swapon /dev/vda1; then say swapon ok; else say swapon "failed (exit $?)"; fi
}

# fault_status: `hibernate status` of vda1, as status_image=present|none|...
fault_status() {
	hibernate status --device /dev/vda1 >/run/fault.status 2>&1
	say status_image "$(sed -n 's/^image: *//p' /run/fault.status)"
}

# fault_hibernate ARGS...: `hibernate ARGS`; in the resumed world prints the
# workload's state; when it fails, hibernate_rc.
# shellcheck disable=SC2120 # the arguments are optional: called without them too
fault_hibernate() {
	say mark hibernate
	hibernate "$@"
	rc=$?
	if [ $rc -ne 0 ]; then
		say hibernate_rc "$rc"
		return 1
	fi
	workload_after_resume
	return 0
}

# The key file of the encrypted scenarios: the same bytes on every boot (82,
# more than the 32 a key file needs), root's and mode 0600, as hibernate
# requires of a key file.
FAULT_KEYFILE=/etc/hibtest.key
fault_make_keyfile() {
	(umask 077 && printf 'hibtest key file\n%s\n' \
		0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff >$FAULT_KEYFILE)
	chmod 600 $FAULT_KEYFILE
}

# A text the host greps for on the raw disk: in memory, in clear.
# (token: set by workload_start)
# shellcheck disable=SC2154
fault_marker() {
	i=0
	while [ $i -lt 64 ]; do
		echo "line $i: HIBTEST-PLAINTEXT-MARKER-$token"
		i=$((i + 1))
	done >/run/marker.txt
	say marker "HIBTEST-PLAINTEXT-MARKER-$token"
}

# fault_header_wiped: the page at the host's hdr_off (the header of the image
# just resumed or discarded) is all zeros: header_wiped=yes|no.
fault_header_wiped() {
	off=$(fault_get hdr_off)
	[ -n "$off" ] || { say header_wiped "no hdr_off from the host"; return; }
	nz=$(dd if=/dev/vda1 bs=4096 skip=$((off / 4096)) count=1 iflag=direct 2>/dev/null |
		tr -d '\000' | wc -c)
	if [ "$nz" = 0 ]; then say header_wiped yes; else say header_wiped "no ($nz non-zero bytes)"; fi
}

# fault_resume_console ARGS...: like fault_resume, but hibernate's messages
# (its passphrase prompts) reach the console as they come.
# shellcheck disable=SC2120 # the arguments are optional: called without them too
fault_resume_console() {
	t0=$(uptime_ms)
	{
		hibernate resume --device /dev/vda1 "$@"
		echo $? >/run/fault.rc
	} 2>&1 | tee /run/fault.resume
	rc=$(cat /run/fault.rc)
	t1=$(uptime_ms)
	say resumed 0
	say resume_rc "$rc"
	say resume_ms $((t1 - t0))
	say resume_msg "$(_fault_msg /run/fault.resume)"
	say signature "$(swap_signature /dev/vda1)"
}
