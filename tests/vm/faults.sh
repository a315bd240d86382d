# shellcheck shell=bash
# shellcheck disable=SC2034 # globals set here are read by the sourcing scripts
# tests/vm/faults.sh — host helpers of the fault-injection scenarios
# (powercut, corrupt, stale-image, kernel-mismatch, no-space, encrypted,
# tampered).  Sourced by their .host files, after lib.sh (tests/vm/run has
# sourced it); the guest side is guest/faults-guest.sh.
#
#   fault_tool                  build tests/vm/tools/hibimg (FAULT_HIBIMG)
#   hibimg_p1 CMD ...           run it on vda1 of $VM_DISK (probe, info,
#                               grep, corrupt, tamper)
#   fault_text_write FILE       the host's text for the next boot -> vda2
#   fault_stage_write FILE      replacement bytes of a plan -> vda2 + 1 MiB
#   fault_count FAULT N ...     one row of the outcome table (faults.tsv)
#   fault_check_trials BOOT     verdicts of a guest trial loop (fault_trials)
#   fault_check_hibernated N    boot N's last hibernate wrote a whole image
#   use_kernel SERIES           boot another kernel series from now on
#   cut_arm TRIGGER DELAY [PCT] a power cut (SIGKILL to QEMU) in the next boot
#   console_answer_start N TEXT...  type at boot N's passphrase prompts
#   corrupt_run, encrypted_run, tampered_run, powercut_run: the scenarios
#
# Outcome table: every scenario appends rows to $VM_LOGDIR/faults.tsv,
#   fault <TAB> tried <TAB> resumed <TAB> fresh <TAB> discarded <TAB> other <TAB> note
# (resumed = resumed correctly, fresh = clean fresh boot with the swap area
# usable, discarded = the damage was detected and the image discarded,
# other = anything else: a data-losing outcome; must be 0).
# tests/vm/reliability turns them into docs/reliability.md.

FAULT_P1_OFF=$((HIBVM_P1_START_MIB * 1048576))

# fault_tool: build the host tool (a second, with nothing else to build).
fault_tool() {
	FAULT_HIBIMG=${VM_DISK%/*}/hibimg
	[[ -x $FAULT_HIBIMG ]] && return 0
	cc -O2 -Wall -D_GNU_SOURCE -DXXH_STATIC_LINKING_ONLY -I"$HIBVM_REPO/lib" -I"$HIBVM_REPO/include" \
		-o "$FAULT_HIBIMG" "$HIBVM_DIR/tools/hibimg.c" "$HIBVM_REPO/lib/format/format.c" \
		"$HIBVM_REPO/lib/format/xxh.c" "$HIBVM_REPO/lib/format/xxh-scalar.c" \
		-lxxhash || hibvm_die "building tests/vm/tools/hibimg failed (libxxhash-dev?)"
}

# hibimg_p1 CMD ARGS...: hibimg on vda1, with the partition's place in the
# disk image recomputed (a scenario may have changed the layout).
hibimg_p1() {
	fault_tool
	"$FAULT_HIBIMG" "$VM_DISK" $((HIBVM_P1_START_MIB * 1048576)) \
		$((HIBVM_P1_SIZE_MIB * 1048576)) "$@"
}

# hibimg_get KEY: one value of `hibimg info` on vda1.
hibimg_get() {
	hibimg_p1 info | sed -n "s/^$1=//p"
}

# fault_text_write FILE|-: the text the guest reads with fault_text (at most
# 1 MiB; the rest of that MiB is zeroed, so no older text shows through).
fault_text_write() {
	local tmp
	tmp=$(mktemp "${TMPDIR:-/tmp}/hibvm-text.XXXXXX")
	cat "$1" >"$tmp"
	(($(stat -c %s "$tmp") < 1048576)) || hibvm_die "host text for the guest over 1 MiB"
	truncate -s 1M "$tmp"
	dd if="$tmp" of="$VM_DISK" bs=1M seek="$HIBVM_P2_START_MIB" conv=notrunc status=none
	rm -f "$tmp"
}

# fault_stage_write FILE: a plan's replacement bytes, at vda2 + 1 MiB.
fault_stage_write() {
	local max=$(((HIBVM_P2_SIZE_MIB - 1) * 1048576))
	(($(stat -c %s "$1") <= max)) || hibvm_die "staging area over $((max >> 20)) MiB"
	dd if="$1" of="$VM_DISK" bs=1M seek=$((HIBVM_P2_START_MIB + 1)) conv=notrunc status=none
}

# fault_count FAULT TRIED RESUMED FRESH DISCARDED OTHER [NOTE]
fault_count() {
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$6" "${7:-}" \
		>>"$VM_LOGDIR/faults.tsv"
}

# fault_counts_line: the scenario's rows in one line, for PASS/FAIL reasons.
fault_counts_line() {
	awk -F'\t' '{ sep = NR > 1 ? "; " : ""
		printf "%s%s: %d tried, %d resumed, %d fresh, %d discarded, %d other", sep, $1, $2, $3, $4, $5, $6 }' \
		"$VM_LOGDIR/faults.tsv"
}

# fault_pass_note: say the counts in the verdict line of a passing scenario
# (run prints "PASS"; the reason of a PASS is this line on stderr and in the
# log directory).
fault_pass_note() {
	local line
	line=$(fault_counts_line)
	hibvm_info "tests/vm: $SCENARIO [$KERNEL_LABEL] counts: $line"
	printf '%s\n' "$line" >"$VM_LOGDIR/counts"
}

# fault_check_trials BOOT FAULT-PREFIX [MSG-CHECK]: the "trial=" lines a guest
# trial loop (fault_trials) printed in boot BOOT.  Each must show exit status
# non-zero, SWAPSPACE2 afterwards and a message; MSG-CHECK is a function
# called with REGION KIND MESSAGE that returns 1 when the message does not
# say what is wrong.  Counts go to faults.tsv, one row per region, as
# "FAULT-PREFIX REGION".  Sets FAULT_BAD to the first bad trial (empty when
# all are fine) and FAULT_SUMMARY to "region n/n ...".
fault_check_trials() {
	local boot=$1 prefix=$2 check=${3:-} log line n region kind what rc sig ms msg
	local -A tried=() good=()
	local -a order=()
	log=$(boot_log "$boot")
	FAULT_BAD=
	while IFS='|' read -r n region kind what rc sig ms msg; do
		rc=${rc#rc=}; sig=${sig#sig=}; msg=${msg#msg=}
		[[ -n ${tried[$region]:-} ]] || { order+=("$region"); tried[$region]=0; good[$region]=0; }
		tried[$region]=$((tried[$region] + 1))
		local why=
		if [[ $rc == 0 ]]; then
			why="hibernate resume exited 0"
		elif [[ $sig != SWAPSPACE2 ]]; then
			why="signature afterwards is '$sig'"
		elif [[ -z $msg ]]; then
			why="no message"
		elif [[ -n $check ]] && ! "$check" "$region" "$kind" "$msg"; then
			why="the message does not say what is wrong"
		fi
		if [[ -z $why ]]; then
			good[$region]=$((good[$region] + 1))
		elif [[ -z $FAULT_BAD ]]; then
			FAULT_BAD="trial $n ($region $kind $what): $why: $msg"
		fi
	done < <(hib_get_all "$log" trial)
	FAULT_SUMMARY=
	for region in "${order[@]}"; do
		fault_count "$prefix $region" "${tried[$region]}" 0 0 "${good[$region]}" \
			$((tried[$region] - good[$region]))
		FAULT_SUMMARY+="${FAULT_SUMMARY:+, }$region ${good[$region]}/${tried[$region]}"
	done
}

# fault_check_hibernated N: boot N's last `hibernate` (fault_hibernate) wrote
# its image and powered the VM off.  Unlike check_hibernated, the boot may
# have run `hibernate resume` (resumed=0) before.
fault_check_hibernated() {
	local n=$1 log
	log=$(boot_log "$n")
	need "$n" mark >/dev/null
	if hib_has "$log" hibernate_rc; then
		fail "boot $n: hibernate failed with exit $(hib_get "$log" hibernate_rc); it printed: $(log_tail "$log" 8 mark=hibernate) (log: $log)"
	fi
	# The last hibernate did not come back in this boot (a resumed world may
	# hibernate again: only what follows the last mark counts).
	[[ $(grep -a -o -E 'HIBTEST (mark=hibernate|resumed=1)' "$log" | tail -n1) == *mark=hibernate ]] ||
		fail "boot $n: hibernate returned 0 without powering the VM off (log: $log)"
	grep -aq 'reboot: Power down' "$log" ||
		fail "boot $n: after hibernate the VM stopped without powering off ($(boot_end_note "$log")); last lines: $(log_tail "$log" 6) (log: $log)"
	[[ $(hibimg_p1 probe) == *"complete=1"* ]] ||
		fail "boot $n powered off without a complete image on vda1: $(hibimg_p1 probe) (log: $log)"
}

# use_kernel SERIES: the following boots use the kernel of SERIES, with an
# initramfs built for it (once per scenario run).  For the scenarios that
# span two kernels (kernel-mismatch).
use_kernel() {
	local series=$1 initrd
	declare -gA FAULT_INITRDS
	# The kernel the scenario started with keeps the initramfs run built.
	[[ -n ${FAULT_INITRDS[$KERNEL_SERIES]:-} ]] || FAULT_INITRDS[$KERNEL_SERIES]=$VM_INITRD
	kernel_prepare "$series" 2>/dev/null || hibvm_die "cannot prepare the $series kernel"
	initrd=${FAULT_INITRDS[$series]:-}
	if [[ -z $initrd ]]; then
		initrd=${VM_DISK%/*}/initrd-$series.gz
		initramfs_build "$initrd" || hibvm_die "initramfs for $series failed"
		FAULT_INITRDS[$series]=$initrd
	fi
	VM_INITRD=$initrd
}

# ---------------------------------------------------------------- power cuts

# cut_arm TRIGGER DELAY [MIN-PCT]: during the next vm_boot, DELAY seconds
# after a console line containing TRIGGER (and, with MIN-PCT, a percentage
# of at least MIN-PCT: a progress line), QEMU gets SIGKILL: a power cut.
# What the guest wrote and QEMU passed on to the disk image stays, nothing
# else.  Afterwards cut_happened says whether it came before the VM ended.
cut_arm() {
	CUT_TRIGGER=$1 CUT_DELAY=$2 CUT_MIN_PCT=${3:-}
	CUT_FILE=$VM_LOGDIR/cut.$BASHPID.$RANDOM
	CUT_PIDFILE=$VM_LOGDIR/qemu.pid
	rm -f "$CUT_FILE" "$CUT_PIDFILE"
	CUT_SAVED_QEMU_ARGS=${VM_QEMU_ARGS:-}
	VM_QEMU_ARGS="$CUT_SAVED_QEMU_ARGS -pidfile $CUT_PIDFILE"
}

cut_disarm() {
	CUT_TRIGGER=
	VM_QEMU_ARGS=${CUT_SAVED_QEMU_ARGS:-}
	# The sleeping killer of a boot that ended before its time (ours, by pid).
	if [[ -s $CUT_FILE.sleeper ]]; then
		kill "$(cat "$CUT_FILE.sleeper")" 2>/dev/null || true
	fi
	rm -f "$CUT_FILE.sleeper"
}

cut_happened() {
	[[ -s $CUT_FILE ]]
}

# Called by lib.sh's _vm_stamp for every piece of console output.  With
# CUT_MIN_PCT, the trigger is a progress line showing at least that many %.
vm_on_piece() {
	[[ -n ${CUT_TRIGGER:-} && -z ${_cut_armed_done:-} ]] || return 0
	[[ $2 == *"$CUT_TRIGGER"* ]] || return 0
	if [[ -n ${CUT_MIN_PCT:-} ]]; then
		[[ $2 =~ ([0-9]+)% ]] && ((BASH_REMATCH[1] >= CUT_MIN_PCT)) || return 0
	fi
	_cut_armed_done=1
	(
		sleep "$CUT_DELAY"
		local pid
		pid=$(cat "$CUT_PIDFILE" 2>/dev/null) || exit 0
		# Only our QEMU: the pid file is this boot's.
		[[ -n $pid && $(cat "/proc/$pid/comm" 2>/dev/null) == qemu-system-* ]] || exit 0
		kill -KILL "$pid" 2>/dev/null && echo "$EPOCHREALTIME" >"$CUT_FILE"
	) &
	echo "$!" >"$CUT_FILE.sleeper"
}

# ---------------------------------------------------------------- corrupt

# What "the message says what is wrong" means, per region.
corrupt_msg_ok() {
	local region=$1 msg=$3
	case $region in
	tail) [[ $msg == *signature* ]] ;;
	header) [[ $msg == *header* ]] ;;
	map) [[ $msg == *map* ]] ;;
	data) [[ $msg == *block* ]] ;;
	*) return 1 ;;
	esac
}

# corrupt_run COUNT: the corrupt scenario (guest part: scenarios/corrupt.sh).
corrupt_run() {
	local count=$1 seed=${HIB_FAULT_SEED:-1} dir=${VM_DISK%/*} probe end done_n
	# Boot 2 runs every trial: a second or two each under TCG.
	HIBVM_TIMEOUT=$((HIBVM_TIMEOUT + count * 8))
	boot_or_fail 1
	check_hibernated 1 hibernate
	probe=$(hibimg_p1 probe)
	[[ $probe == *"complete=1"* ]] || fail "boot 1 left no complete image on vda1: $probe"
	end=$(hibimg_get end)
	hibimg_p1 corrupt "$seed" "$count" "$dir/plan" "$dir/stage" 2>>"$VM_LOGDIR/hibimg.log" ||
		fail "planning the damage failed: $(tail -n1 "$VM_LOGDIR/hibimg.log")"
	{ echo "IMAGE_END $end"; cat "$dir/plan"; } >"$VM_LOGDIR/plan.txt"
	fault_text_write "$VM_LOGDIR/plan.txt"
	fault_stage_write "$dir/stage"
	boot_or_fail 2
	done_n=$(need 2 trials_done)
	[[ $done_n == "$count" ]] || fail "boot 2 ran $done_n trials of $count (log: $(boot_log 2))"
	fault_check_trials 2 "damaged image:" corrupt_msg_ok
	SCENARIO_PASS_NOTE="$count changes, detected and discarded: $FAULT_SUMMARY; seed $seed"
	[[ -z $FAULT_BAD ]] || fail "$FAULT_BAD; $SCENARIO_PASS_NOTE (log: $(boot_log 2))"
	[[ $(need 2 pristine) == same ]] ||
		fail "the image region differs after the trials were undone (log: $(boot_log 2))"
	# The untouched image still resumes: the trials were refused for their damage.
	check_resumed_workload 1 2
	fault_pass_note
}

# ---------------------------------------------------------------- console input

# console_answer_start N TEXT...: during boot N, type TEXT1 at the first
# passphrase or PIN prompt ("Passphrase" or "TPM PIN" on the console, or
# what the extended regex CONSOLE_PROMPT_RE matches), TEXT2
# at the second... (with Enter).  Needs vm_console_open.  A prompt has no
# newline yet when it shows, so this watches the log file rather than the
# console's lines; it waits a little after each prompt, because `hibernate`
# flushes the tty's input right after printing it.  console_answer_stop when the boot is over.
console_answer_start() {
	local n=$1 log
	shift
	log=$(boot_log "$n")
	(
		# Long enough for vm_boot's boot again after an early-boot hang.
		local i=0 text seen deadline=$((SECONDS + HIBVM_TIMEOUT * (1 + ${HIBVM_BOOT_RETRIES:-1}) + 10))
		for text in "$@"; do
			i=$((i + 1))
			while :; do
				seen=$(grep -a -c -E "${CONSOLE_PROMPT_RE:-^(Passphrase|TPM PIN)}" "$log" 2>/dev/null)
				((seen >= i)) && break
				((SECONDS < deadline)) || exit 0
				sleep 0.2
			done
			sleep 0.7
			vm_console_send "$text\r"
			echo "$EPOCHREALTIME prompt $i answered" >>"$VM_LOGDIR/console.answers"
		done
	) &
	CONSOLE_ANSWER_PID=$!
}

console_answer_stop() {
	[[ -n ${CONSOLE_ANSWER_PID:-} ]] && kill "$CONSOLE_ANSWER_PID" 2>/dev/null
	CONSOLE_ANSWER_PID=
	return 0
}

# disk_grep_p1 TEXT...: how many times each TEXT is on vda1 of the disk
# image, raw (one count per line).
disk_grep_p1() {
	hibimg_p1 grep "$@"
}

# ---------------------------------------------------------------- encrypted

ENC_PASS="correct horse battery staple"

# enc_no_plaintext N [W]: the image boot N wrote holds neither the token nor
# the marker of its world (boot W's, default 1: resumed by boots 2 and 3) in
# clear; saves its header offset for the next boot.
enc_no_plaintext() {
	local n=$1 w=${2:-1} token marker c1 c2
	token=$(need "$w" token); marker=$(need "$w" marker)
	[[ $(hibimg_p1 probe) == *"complete=1"* ]] || fail "boot $n left no complete image: $(hibimg_p1 probe)"
	[[ $(hibimg_get encrypted) == 1 ]] || fail "boot $n wrote an image that is not encrypted"
	{ read -r c1; read -r c2; } < <(disk_grep_p1 "$token" "$marker")
	((c1 == 0 && c2 == 0)) ||
		fail "the encrypted image of boot $n holds plaintext: token $c1 times, marker $c2 times"
	printf 'hdr_off=%s\n' "$(hibimg_get header_offset)" >"$VM_LOGDIR/text.$n"
	fault_text_write "$VM_LOGDIR/text.$n"
	ENC_GREPS=$((ENC_GREPS + 1))
}

# enc_boot N TEXT...: boot N with answers for its passphrase prompts.
enc_boot() {
	local n=$1
	shift
	console_answer_start "$n" "$@"
	vm_boot "$n" || { console_answer_stop; fail "$VM_BOOT_ERROR (log: $(boot_log "$n"))"; }
	console_answer_stop
	if hib_has "$(boot_log "$n")" error; then
		fail "boot $n: guest error: $(hib_get "$(boot_log "$n")" error) (log: $(boot_log "$n"))"
	fi
	! grep -aqF "$ENC_PASS" "$(boot_log "$n")" ||
		fail "boot $n: the passphrase shows on the console (echo on?) (log: $(boot_log "$n"))"
}

# enc_resumed N [W]: boot N resumed boot W's world (default 1), and the
# header page of the image is zeros now.
enc_resumed() {
	local n=$1 w=${2:-1} log
	log=$(boot_log "$n")
	[[ $(hib_get "$log" resumed) == 1 ]] ||
		fail "boot $n did not resume: exit $(hib_get "$log" resume_rc), '$(hib_get "$log" resume_msg)' (log: $log)"
	[[ $(hib_get_all "$log" token | head -n1) == "$(need "$w" token)" ]] || fail "boot $n resumed another world (log: $log)"
	[[ $(need "$n" counter_alive) == 1 && $(hib_get_all "$log" hash | head -n1) == "$(need "$w" hash)" ]] ||
		fail "boot $n: the workload did not survive (log: $log)"
	[[ $(need "$n" header_wiped) == yes ]] ||
		fail "boot $n: the header page (key material) of the resumed image is not zeros: $(need "$n" header_wiped) (log: $log)"
}

# enc_preloaded N: boot N's resume read part of the image while the
# passphrase was typed (resume-preload's default): its line says N MiB > 0.
# Sets ENC_PRELOAD to the line.
enc_preloaded() {
	local log line mib
	log=$(boot_log "$1")
	line=$(grep -a -o -E 'read [0-9.]+ MiB of [0-9.]+ ahead while waiting for the passphrase \([0-9]+ ms\)' "$log" | head -n1)
	[[ -n $line ]] || fail "boot $1: no line of the read-ahead while the passphrase was typed (log: $log)"
	mib=${line#read }
	mib=${mib%% MiB*}
	awk -v n="$mib" 'BEGIN { exit !(n > 0) }' ||
		fail "boot $1 read nothing ahead while the passphrase was typed: '$line' (log: $log)"
	ENC_PRELOAD=$line
}

# enc_says N TEXT: boot N's hibernate said TEXT (how the image is sealed).
enc_says() {
	grep -aqF "$2" "$(boot_log "$1")" ||
		fail "boot $1: hibernate did not say '$2': $(grep -a 'hibernating to' "$(boot_log "$1")" | tail -n1) (log: $(boot_log "$1"))"
}

encrypted_run() {
	local log c1 c2 msg
	ENC_GREPS=0
	vm_console_open
	enc_boot 1 "$ENC_PASS" "$ENC_PASS"
	fault_check_hibernated 1
	enc_says 1 "hibernating to /dev/vda1 (lz4, encrypted with a passphrase)"
	enc_no_plaintext 1
	enc_boot 2 "$ENC_PASS"
	enc_resumed 2
	enc_preloaded 2
	fault_count "encrypted image, passphrase typed on the console" 1 1 0 0 0
	fault_check_hibernated 2
	enc_says 2 "hibernating to /dev/vda1 (lz4, encrypted with the key file)"
	enc_no_plaintext 2
	# Boot 3 resumes with the key file; the resumed world then asks twice.
	enc_boot 3 "$ENC_PASS" "$ENC_PASS"
	enc_resumed 3
	fault_count "encrypted image, key file" 1 1 0 0 0
	fault_check_hibernated 3
	enc_no_plaintext 3

	# Boot 4: three wrong passphrases.
	enc_boot 4 "wrong one" "wrong two" "wrong three"
	log=$(boot_log 4)
	msg=$(need 4 resume_msg)
	[[ $(hib_get_all "$log" resumed | head -n1) == 0 ]] || fail "boot 4 resumed with a wrong passphrase (log: $log)"
	[[ $(grep -a -c '^Passphrase' "$log") == 3 ]] ||
		fail "boot 4 asked $(grep -a -c '^Passphrase' "$log") times for the passphrase, not 3 (log: $log)"
	grep -aq 'wrong passphrase (attempt 2 of 3)' "$log" ||
		fail "boot 4 did not say the passphrase was wrong (log: $log)"
	[[ $(need 4 resume_rc) != 0 && $msg == *"wrong passphrase 3 times"* ]] ||
		fail "boot 4: resume exited $(need 4 resume_rc): '$msg' (log: $log)"
	[[ $(need 4 signature) == SWAPSPACE2 && $(need 4 status_image) == none && $(need 4 swapon) == ok ]] ||
		fail "boot 4: the image was not discarded: signature '$(need 4 signature)', status '$(need 4 status_image)', swapon $(need 4 swapon) (log: $log)"
	[[ $(need 4 header_wiped) == yes ]] ||
		fail "boot 4: the discarded image's header page is not zeros: $(need 4 header_wiped) (log: $log)"
	grep -aqE 'ahead while waiting for the passphrase \([0-9]+ ms\).*; dropped: the image is not resumed' "$log" ||
		fail "boot 4: the read-ahead of the refused image does not say it was dropped (log: $log)"
	fault_count "encrypted image, wrong passphrase 3 times" 1 0 0 1 0

	# The control: boot 4's plain image shows its workload to the same search.
	# (LZ4 may turn a repeated string into back-references: the token or the
	# marker, either will do.)
	fault_check_hibernated 4
	enc_says 4 "hibernating to /dev/vda1 (lz4)"
	{ read -r c1; read -r c2; } < <(disk_grep_p1 "$(need 4 token)" "$(need 4 marker)")
	((c1 + c2 > 0)) ||
		fail "control: neither the token nor the marker is found in a plain image: the plaintext check would prove nothing"
	SCENARIO_PASS_NOTE="2 encrypted resumes (passphrase on the console, key file; $ENC_PRELOAD), 1 refused after 3 wrong passphrases; no plaintext on disk in $ENC_GREPS images (control: token $c1 and marker $c2 times in a plain one)"
	fault_pass_note
}

# ---------------------------------------------------------------- tampered

# What "says what is wrong" means for a tampered image, per kind of change.
tamper_msg_ok() {
	local region=$1 kind=$2 msg=$3
	case $kind in
	salt | wrapped-key) [[ $msg == *"wrong key file"* || $msg == *"key file"* ]] ;;
	# The header says "not encrypted": with a key file given, require-encryption
	# refuses it from the header, before a block is read.
	unencrypted) [[ $msg == *"not encrypted"* && $msg == *require-encryption* ]] ;;
	payload | block-header | unsealed-flag | swapped-blocks) [[ $msg == *block* ]] ;;
	# A forged record of a filesystem that is not there: refused before the
	# key is asked for, as one that cannot be checked.
	fs-entry) [[ $msg == *"tampered"* || $msg == *"unchecked-filesystems"* ]] ;;
	*) [[ $msg == *"tampered"* ]] ;;
	esac
}

tampered_run() {
	local dir=${VM_DISK%/*} seed=${HIB_FAULT_SEED:-1} count end
	boot_or_fail 1
	fault_check_hibernated 1
	[[ $(hibimg_get encrypted) == 1 ]] || fail "boot 1 wrote an image that is not encrypted"
	end=$(hibimg_get end)
	hibimg_p1 tamper "$seed" "$dir/plan" "$dir/stage" 2>>"$VM_LOGDIR/hibimg.log" ||
		fail "planning the changes failed: $(tail -n1 "$VM_LOGDIR/hibimg.log")"
	{ echo "IMAGE_END $end"; cat "$dir/plan"; } >"$VM_LOGDIR/plan.txt"
	count=$(grep -c '^T ' "$dir/plan")
	fault_text_write "$VM_LOGDIR/plan.txt"
	fault_stage_write "$dir/stage"
	boot_or_fail 2
	[[ $(need 2 trials_done) == "$count" ]] || fail "boot 2 ran $(need 2 trials_done) trials of $count (log: $(boot_log 2))"
	fault_check_trials 2 "tampered encrypted image:" tamper_msg_ok
	SCENARIO_PASS_NOTE="$count changes with fixed-up checksums, refused and discarded: $FAULT_SUMMARY"
	[[ -z $FAULT_BAD ]] || fail "$FAULT_BAD; $SCENARIO_PASS_NOTE (log: $(boot_log 2))"
	[[ $(need 2 pristine) == same ]] ||
		fail "the image region differs after the trials were undone (log: $(boot_log 2))"
	check_resumed_workload 1 2
	fault_pass_note
}

# ---------------------------------------------------------------- powercut

# pc_disk_state: what the next boot will find on vda1: complete (an image
# that checks out end to end), none (SWAPSPACE2), broken (our signature over
# something that does not check out), other.
pc_disk_state() {
	local p
	p=$(hibimg_p1 probe)
	case $p in
	*"complete=1"*) echo complete ;;
	"state=none "*) echo none ;;
	"state=broken "* | "state=image "*) echo broken ;;
	*) echo "other(${p#state=})" ;;
	esac
}

# pc_phase N SIDE: where boot N was when the power went (SIDE hib: its
# `hibernate`; res: its `hibernate resume`), from what the console showed.
pc_phase() {
	local log pct
	log=$(boot_log "$1")
	if grep -aq "test pause at" "$log"; then
		grep -ao "test pause at '[a-z]*'" "$log" | tail -n1 | sed "s/test pause at /pause /; s/'//g"
		return
	fi
	if [[ $2 == res ]]; then
		pct=$(grep -ao 'Loading image: *[0-9]*%' "$log" | tail -n1 | grep -o '[0-9]*%')
		if hib_has "$log" resumed; then
			echo "resumed world running"
		elif [[ -z $pct ]]; then
			echo "checks before loading"
		elif [[ $pct == 100% ]]; then
			echo "image loaded: invalidate/restore"
		else
			echo "loading $pct"
		fi
		return
	fi
	pct=$(grep -ao 'Writing image[^%]*%' "$log" | tail -n1 | grep -o '[0-9]*%$')
	if ! grep -aq 'hibernating to' "$log"; then
		echo "before hibernate"
	elif [[ -z $pct ]]; then
		echo "freeze/snapshot"
	elif [[ $pct == 100% ]]; then
		if grep -aq 'reboot: Power down' "$log"; then echo "powered off"; else echo "data written: map/header/sync/signature"; fi
	else
		echo "writing data $pct"
	fi
}

# pc_judge N STATE: did boot N's resume step do what STATE (the disk as boot
# N-1 left it) calls for?  Prints resumed|fresh|discarded, or "other: why".
pc_judge() {
	local n=$1 state=$2 log first rc sig swapon tok
	log=$(boot_log "$n")
	first=$(hib_get_all "$log" resumed | head -n1)
	rc=$(hib_get_all "$log" resume_rc | head -n1)
	sig=$(hib_get_all "$log" signature | head -n1)
	swapon=$(hib_get_all "$log" swapon | head -n1)
	case $state in
	complete)
		[[ $first == 1 ]] || { echo "other: a complete image was not resumed (exit ${rc:-?}: $(hib_get_all "$log" resume_msg | head -n1))"; return; }
		tok=$(hib_get_all "$log" token | head -n1)
		[[ $tok == "$PC_IMG_TOKEN" ]] || { echo "other: resumed world has token $tok, the image was written by $PC_IMG_TOKEN"; return; }
		[[ $(hib_get_all "$log" hash_ok | head -n1) == 1 && $(hib_get_all "$log" counter_alive | head -n1) == 1 ]] ||
			{ echo "other: the resumed workload is damaged (hash_ok $(hib_get_all "$log" hash_ok | head -n1))"; return; }
		echo resumed
		;;
	none | broken)
		[[ $first == 0 ]] || { echo "other: resumed=$first with no complete image on the disk"; return; }
		if [[ $state == none ]]; then
			[[ $rc == 0 ]] || { echo "other: no image, but resume exited $rc"; return; }
		else
			[[ $rc != 0 ]] || { echo "other: a damaged image, but resume exited 0"; return; }
		fi
		[[ $sig == SWAPSPACE2 && $swapon == ok ]] || { echo "other: swap area not usable: signature '$sig', swapon '$swapon'"; return; }
		[[ $state == none ]] && echo fresh || echo discarded
		;;
	*) echo "other: the disk holds $state" ;;
	esac
}

# powercut_run: the powercut scenario (guest part: scenarios/powercut.sh).
# Cuts, each in its own boot, judged by the next boot's `hibernate resume`:
#   hib-timed  while `hibernate` runs: 0.2 and 0.8 s after it started
#              (freeze, snapshot), when the progress shows 5, 11 ... 95% of
#              the data written, and 0 and 0.1 s after it shows 100% (map,
#              header, sync, signature, power-off)
#   hib-pause  at HIBERNATE_TEST_PAUSE points data, map, header, sync, signature
#   res-timed  while `hibernate resume` runs: at 20, 50, 80% loaded, and 0.2
#              and 1 s after 100% (invalidation, restore, resumed world)
#   res-pause  at the points loaded and invalidated
# HIB_POWERCUT_BPS (8000000): the disk's write limit in bytes/s, so that the
# image takes seconds to write.
powercut_run() {
	local bps=${HIB_POWERCUT_BPS:-8000000}
	local -a trials=()
	local k b=0 state prev_state="none" pending="" verdict phase
	local -A tried=() nocut=() outcome=()
	VM_DRIVE_OPTS="throttling.bps-write=$bps"
	HIBVM_TIMEOUT=120
	PC_IMG_TOKEN=
	: >"$VM_LOGDIR/trials"

	# side|row|trigger|min-pct|delay|pause
	trials+=("hib|hib-timed|hibernating to||0.2|" "hib|hib-timed|hibernating to||0.8|")
	for ((k = 5; k <= 95; k += 6)); do trials+=("hib|hib-timed|Writing image|$k|0|"); done
	trials+=("hib|hib-timed|Writing image|100|0|" "hib|hib-timed|Writing image|100|0.1|")
	for k in data map header sync signature; do trials+=("hib|hib-pause|test pause at '$k'||0.3|$k"); done
	for k in 20 50 80; do trials+=("res|res-timed|Loading image|$k|0|"); done
	trials+=("res|res-timed|Loading image|100|0.2|" "res|res-timed|Loading image|100|1|")
	trials+=("res|res-pause|test pause at 'loaded'||0.3|loaded" "res|res-pause|test pause at 'invalidated'||0.3|invalidated")

	# pc_boot JUDGE TEXT [SIDE ROW TRIGGER MIN-PCT DELAY]: one boot with the
	# host's TEXT and, with a TRIGGER, a cut.  JUDGE=1: this boot's resume
	# step judges what the previous boot left (0 when this boot cuts its own
	# resume: the previous boot was an uncut one that made the image).
	pc_boot() {
		local judge=$1 text=$2 side=${3:-} row=${4:-} trigger=${5:-} minpct=${6:-} delay=${7:-} prow
		local log cut=0 err=$VM_LOGDIR/stderr.log
		b=$((b + 1))
		log=$(boot_log "$b")
		printf 'step=%s\n%s\n' "$b" "$text" >"$VM_LOGDIR/text.$b"
		fault_text_write "$VM_LOGDIR/text.$b"
		[[ -n $trigger ]] && cut_arm "$trigger" "$delay" "$minpct"
		# (A killed QEMU makes bash print "Killed" for its pipeline: not in the
		# run's output, unless VERBOSE asked for the console there.)
		[[ ${VERBOSE:-0} != 0 ]] && err=/dev/stderr
		if ! vm_boot "$b" 2>>"$err"; then
			if ! { [[ -n $trigger ]] && cut_happened; }; then
				[[ -n $trigger ]] && cut_disarm
				fail "boot $b: $VM_BOOT_ERROR (log: $log)"
			fi
		fi
		if [[ -n $trigger ]]; then
			cut_happened && cut=1
			cut_disarm
		fi
		hib_has "$log" error && fail "boot $b: guest error: $(hib_get "$log" error) (log: $log)"
		if ((b > 1 && judge)); then
			verdict=$(pc_judge "$b" "$prev_state")
			prow=${pending%% *}
			[[ -n $pending ]] || prow=control
			tried[$prow]=$((${tried[$prow]:-0} + 1))
			case $verdict in
			other*) outcome[$prow.other]=$((${outcome[$prow.other]:-0} + 1)) ;;
			*) outcome[$prow.$verdict]=$((${outcome[$prow.$verdict]:-0} + 1)) ;;
			esac
			printf '%s | disk %s | next boot: %s\n' "${pending:-control boot $((b - 1)): no cut}" \
				"$prev_state" "$verdict" >>"$VM_LOGDIR/trials"
			[[ $verdict != other* ]] ||
				PC_FAIL=${PC_FAIL:-"boot $b after ${pending:-a clean power-off}: ${verdict#other: } (logs: $(boot_log $((b - 1))), $log)"}
		fi
		state=$(pc_disk_state)
		# Whose image is on the disk: the last one this boot wrote whole.
		if [[ $state == complete && $(grep -a -o -E 'HIBTEST (mark=hibernate|resumed=1)' "$log" | tail -n1) == *mark=hibernate ]]; then
			PC_IMG_TOKEN=$(hib_get "$log" hib_token)
		fi
		pending=
		if [[ -n $trigger ]]; then
			phase=$(pc_phase "$b" "$side")
			if ((cut)); then
				pending="$row boot $b: cut ${delay}s after '$trigger'${minpct:+ showed ${minpct}%}: $phase"
			else
				nocut[$row]=$((${nocut[$row]:-0} + 1))
				pending="$row boot $b: no cut (${delay}s after '$trigger'${minpct:+ showed ${minpct}%}: $phase)"
			fi
		fi
		prev_state=$state
	}

	pc_boot 1 "hib=run"
	[[ $prev_state == complete ]] || fail "boot 1 left no complete image ($prev_state) (log: $(boot_log 1))"
	PC_CALIB_HIB=$(elapsed "$(hib_mark_time 1 mark=hibernate)" "$VM_BOOT_END")

	local i=0 side row trig minpct delay pause text
	while ((i < ${#trials[@]})); do
		IFS='|' read -r side row trig minpct delay pause <<<"${trials[$i]}"
		if [[ $side == res && ( -n $pending || $prev_state != complete ) ]]; then
			# A resume to cut needs an image made by an uncut boot: this one,
			# which also judges the previous cut.
			pc_boot 1 "hib=run"
			continue
		fi
		if [[ $side == hib ]]; then
			text="hib=run${pause:+$'\n'hib_pause=$pause:30}"
			pc_boot 1 "$text" "$side" "$row" "$trig" "$minpct" "$delay"
		else
			text="hib=none${pause:+$'\n'resume_pause=$pause:30}"
			pc_boot 0 "$text" "$side" "$row" "$trig" "$minpct" "$delay"
		fi
		i=$((i + 1))
	done
	pc_boot 1 "hib=none"

	local label total=0 bad=0 missed=0 nres=0 nfresh=0 ndisc=0
	for row in hib-timed hib-pause res-timed res-pause control; do
		case $row in
		hib-timed) label="power cut while hibernating, spread over freeze, data, map/header/sync/signature" ;;
		hib-pause) label="power cut while hibernating, between phases (data, map, header, sync, signature)" ;;
		res-timed) label="power cut while resuming, spread over loading, invalidation, restore" ;;
		res-pause) label="power cut while resuming, after loading / after invalidating" ;;
		control) label="no cut (the first, uncut cycle)" ;;
		esac
		[[ -n ${tried[$row]:-} ]] || continue
		fault_count "$label" "${tried[$row]}" "${outcome[$row.resumed]:-0}" "${outcome[$row.fresh]:-0}" \
			"${outcome[$row.discarded]:-0}" "${outcome[$row.other]:-0}" \
			"${nocut[$row]:+${nocut[$row]} of them came after the VM had powered off}"
		bad=$((bad + ${outcome[$row.other]:-0}))
		[[ $row == control ]] && continue
		total=$((total + tried[$row] - ${nocut[$row]:-0}))
		missed=$((missed + ${nocut[$row]:-0}))
		nres=$((nres + ${outcome[$row.resumed]:-0}))
		nfresh=$((nfresh + ${outcome[$row.fresh]:-0}))
		ndisc=$((ndisc + ${outcome[$row.discarded]:-0}))
	done
	local late=
	((missed == 0)) || late=" (+$missed too late: the VM was already off)"
	SCENARIO_PASS_NOTE="$total cuts$late in $b boots: $nres correct resumes, $nfresh clean fresh boots, $ndisc discarded, $bad other (hibernate took ${PC_CALIB_HIB}s uncut; trials: $VM_LOGDIR/trials)"
	[[ -z ${PC_FAIL:-} ]] || fail "$PC_FAIL; $SCENARIO_PASS_NOTE"
	fault_pass_note
}
