#!/bin/sh
# Guest part of make bench (bench/vm/run): the same workload for the kernel's
# own hibernation and for `hibernate`; only the hibernate and resume commands
# differ.  Installed as /scenarios/bench.sh; the kernel cmdline says
#   bench.side=kernel|ours  bench.codec=default|none|lz4|zstd
#   bench.workload=fits|over|comeback|text|encrypted
#   (encrypted: bench.codec=luks|enc|enc-preload, bench.pass=PASSPHRASE)
#   boot 1: swapon vda1, the workload, then the hibernate command
#   boot 2: the resume step; in the resumed world boot 1's script goes on and
#           prints resumed=1 (the host's end mark for the resume time)
# Marks (the host takes their arrival times): mark=hibernate right before the
# hibernate command, mark=resume right before the resume step.  `hibernate -v`
# prints the STATS lines the host reads the image's size and phases from.
# encrypted: the fits workload behind a passphrase the host types on the
# console 5 s after the prompt shows (bench/README.md): kernel-luks (side
# kernel, codec luks) hibernates into swap on a LUKS2 mapping of vda1 that
# boot 2 opens with cryptsetup, as Debian's initramfs does, before
# echo MAJ:MIN > /sys/power/resume; ours (codec enc, enc-preload) seals the
# image with `encrypt = yes`, resume-preload = no or yes.  Argon2id at the
# same cost on both sides (KDF_PASSES, KDF_MIB, one lane).
# comeback: right after resumed=1 (the user is impatient: nothing waits for
# the background restore) every hog walks all of its memory and the mapper
# all of its files; comeback_done=<major faults of the walk> when the last is
# done (the host's end mark for the time to responsive).
# text (issue 28): tmpfs with 150 MiB random bytes and 450 MiB text, no heap
# to speak of, no page cache read; vdc (ext4, throttled like vda) mounted
# read-write with a process appending 1 MiB chunks to it every 0.1 s from
# RW_LEAD seconds before the mark on, through the cycle: the hibernate
# command starts with dirty data to sync, and with a writer to freeze.  No
# sync before the mark for this workload (the others have one).
# shellcheck source=../../../tests/vm/guest/guest.sh
. /lib/hibtest/guest.sh

side=ours codec=default wl=fits pass=
# shellcheck disable=SC2013 # words, not lines
for word in $(cat /proc/cmdline); do
	case $word in
	bench.side=*) side=${word#*=} ;;
	bench.codec=*) codec=${word#*=} ;;
	bench.workload=*) wl=${word#*=} ;;
	bench.pass=*) pass=${word#*=} ;;
	esac
done
# The encrypted workload's key derivation, the same cost on both sides:
# Argon2id, 4 passes over 64 MiB, one lane (libsodium's, hibernate's, has
# one lane; cryptsetup takes no fewer than 4 passes for argon2id).
KDF_PASSES=4 KDF_MIB=64
# The LUKS2 mapping of kernel-luks, named as Debian's installer names it.
LUKS_NAME=vda1_crypt

# Sizes in MiB.  fits: ~650 MiB the image must carry (+ the kernel's own
# memory), under the default image size of 2/5 of RAM; over: ~1150 MiB, above
# it: the kernel must swap some out before the snapshot.  Both then read
# 600 MiB of files (page cache the snapshot may drop).
case $wl in
fits | encrypted) t_random=150 t_text=150 t_bins="bin1" h_zero=100 h_struct=50 h_text=50 h_random=50 ;;
over) t_random=250 t_text=250 t_bins="bin1 bin2" h_zero=150 h_struct=100 h_text=100 h_random=100 ;;
comeback) ;;
text) t_random=150 t_text=450 t_bins="" h_zero=0 h_struct=0 h_text=0 h_random=0 ;;
*) fatal "unknown bench.workload=$wl" ;;
esac

# tty_drain: let a mark's line leave the console before the step after it,
# whose first kernel line the console would otherwise print into the middle
# of it (a kernel-lzo run read "HIBTEST mark=hib[ 73.43] PM: hibernation:
# hibernation entry", and had no start). Both sides wait the same 50 ms,
# inside the time measured.
tty_drain() {
	sleep 0.05
}

# copy_mib MIB DEST FILE...: the first MIB MiB of the FILEs, one after the
# other, into DEST, in 1 MiB reads and writes.  (busybox head -c moved 13 MB/s
# here under TCG, dd 180: a text run spent 50 s making its workload.)
copy_mib() {
	mib=$1 dest=$2
	shift 2
	cat "$@" | dd of="$dest" bs=1048576 count="$mib" iflag=fullblock 2>/dev/null ||
		fatal "copying $mib MiB of $* to $dest failed"
	[ "$(stat -c %s "$dest")" -eq $((mib * 1048576)) ] ||
		fatal "$* hold fewer than $mib MiB: $dest is short"
}

meminfo() {
	awk '/^(MemTotal|MemFree|Cached|Shmem|AnonPages|SwapTotal|SwapFree):/ { printf "%s%s=%d", sep, $1, $2 / 1024; sep = " " }
		END { print "" }' /proc/meminfo | tr -d ':'
}

workload() {
	mkdir -p /mnt/data /bench
	mount -t ext4 -o ro,noload /dev/vdb /mnt/data || fatal "mount /dev/vdb (bench data) failed"
	mount -t tmpfs -o size=90% tmpfs /bench || fatal "mount tmpfs on /bench failed"
	d=/mnt/data/load
	# tmpfs: random bytes, text, binaries.
	copy_mib "$t_random" /bench/random.bin $d/random.bin
	# The 250 MiB text file, then (text's 450 MiB) the cache's two of 100 MiB.
	copy_mib "$t_text" /bench/text.txt $d/text.txt /mnt/data/cache/text-1.txt \
		/mnt/data/cache/text-2.txt
	for b in $t_bins; do
		cp -r "$d/$b" /bench/ || fatal "copy $b"
	done
	# The process heap: zero pages, records, text, random bytes.
	# (A file's share only when not 0: memhog cannot map 0 bytes.)
	hog_files=
	[ "$h_text" -gt 0 ] && hog_files="$d/text.txt:$h_text"
	[ "$h_random" -gt 0 ] && hog_files="$hog_files $d/random.bin:$h_random"
	# shellcheck disable=SC2086 # FILE:MB arguments, as words
	/bin/memhog "$h_zero" "$h_struct" $hog_files >/run/memhog.out 2>&1 &
	memhog_pid=$!
	i=0
	until grep -q ready /run/memhog.out 2>/dev/null; do
		kill -0 $memhog_pid 2>/dev/null || fatal "memhog died: $(cat /run/memhog.out)"
		i=$((i + 1))
		[ $i -gt 3000 ] && fatal "memhog not ready after 300 s"
		usleep 100000
	done
	# Only what the workload holds stays; then 600 MiB of page cache from
	# files read off the disk.
	sync
	echo 3 >/proc/sys/vm/drop_caches
	if [ "$wl" != text ]; then
		cat /mnt/data/cache/* >/dev/null || fatal "reading the page-cache files failed"
	fi
	bins_mb=$(du -sm /bench/bin* 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
	say workload_mb "$((t_random + t_text + bins_mb + h_zero + h_struct + h_text + h_random))"
	say meminfo "$(meminfo)"
	tmpfs_sum=$(md5sum </bench/random.bin | cut -d' ' -f1)
}

# rw_writer_start: workload text's writer on vdc (ext4, read-write):
# 1 MiB chunks of /bench/text.txt appended to /mnt/rw/log every 0.1 s, for
# as long as it lives (frozen while the image is made; goes on after the
# resume).  Waits RW_LEAD s so that the cycle starts with dirty pages.
RW_LEAD=10
rw_writer_start() {
	mkdir -p /mnt/rw
	mount -t ext4 /dev/vdc /mnt/rw || fatal "mount /dev/vdc (the text workload's writable disk) failed"
	(
		i=0
		while :; do
			dd if=/bench/text.txt of=/mnt/rw/log bs=1048576 count=1 skip=$((i % 450)) \
				seek=$i conv=notrunc 2>/dev/null || exit 1
			i=$((i + 1))
			usleep 100000
		done
	) &
	rw_pid=$!
	sleep $RW_LEAD
	kill -0 $rw_pid 2>/dev/null || fatal "the writer on /dev/vdc died"
	say rw_before "$(du -m /mnt/rw/log | cut -f1) MiB written, $(awk '/^(Dirty|Writeback):/ { printf "%s%s=%dMiB", s, $1, $2 / 1024; s = " " }' /proc/meminfo)"
}

# mem_sample: workload text, ours: what the hibernate process holds (VmRSS,
# VmLck) and the system's MemFree, Cached and Dirty, every 0.05 s, appended
# to /run/hibmem with /proc/uptime's time, for as long as the process lives.
# mem_said: after the resume, the last sample before the freeze ("Freezing
# user space processes" in the kernel log): the memory the snapshot's
# preallocation found.
mem_sample() {
	i=0
	until pid=$(pidof hibernate); do
		i=$((i + 1))
		[ $i -gt 200 ] && return 0
		usleep 10000
	done
	while kill -0 "$pid" 2>/dev/null; do
		{ cut -d' ' -f1 /proc/uptime | tr '\n' ' '
		  awk '/^(VmRSS|VmLck):/ { printf "%s=%dMiB ", $1, $2 / 1024 }' "/proc/$pid/status"
		  awk '/^(MemFree|Cached|Dirty):/ { printf "%s=%dMiB ", $1, $2 / 1024 }' /proc/meminfo
		  echo; } 2>/dev/null | tr -d ':' >>/run/hibmem
		usleep 50000
	done
}
mem_said() {
	t=$(dmesg | awk '/Freezing user space processes/ { sub(/^[^[]*\[ */, ""); sub(/\].*/, ""); t = $0 } END { print t }')
	[ -n "$t" ] && [ -s /run/hibmem ] || return 0
	say hib_mem "$(awk -v t="$t" '$1 + 0 < t + 0 { l = $0 } END { print l }' /run/hibmem)"
}

# comeback: no tmpfs; CB_HOGS processes of CB_HOG_MB each (records, text,
# random bytes) and one that maps 300 MiB of files: ~1100 MiB of working set
# against the default image size of ~780 MiB, so the snapshot swaps heap out
# and drops the files' pages.  Their lines ("memhog ready", "memhog walked")
# come through one FIFO, read on fd 3.
CB_HOGS=4
comeback_workload() {
	mkdir -p /mnt/data
	mount -t ext4 -o ro,noload /dev/vdb /mnt/data || fatal "mount /dev/vdb (bench data) failed"
	mkfifo /run/comeback.fifo || fatal "mkfifo failed"
	exec 3<>/run/comeback.fifo
	d=/mnt/data/load
	cb_pids=
	i=0
	while [ $i -lt $CB_HOGS ]; do
		/bin/memhog 0 60 "$d/text.txt:90" "$d/random.bin:50" >/run/comeback.fifo 2>&1 &
		cb_pids="$cb_pids $!"
		i=$((i + 1))
	done
	c=/mnt/data/cache
	/bin/memhog 0 0 "map:$c/text-1.txt" "map:$c/random-1.bin" "map:$c/bin-1" >/run/comeback.fifo 2>&1 &
	cb_pids="$cb_pids $!"
	for _ in $cb_pids; do
		read -r line <&3 || fatal "comeback: no line from a hog"
		case $line in
		"memhog ready"*) ;;
		*) fatal "comeback: a hog said: $line" ;;
		esac
	done
	say io_scheduler "vda: $(cat /sys/block/vda/queue/scheduler) vdb: $(cat /sys/block/vdb/queue/scheduler)"
	say workload_mb "$((CB_HOGS * 200 + 300))"
	say meminfo "$(meminfo)"
}

# The user is back: every hog walks its memory at once; the last one's line
# ends it.  Prints comeback_done=<sum of the walks' major faults>.
comeback() {
	# shellcheck disable=SC2086 # pids, as words
	kill -USR1 $cb_pids
	faults=0
	for _ in $cb_pids; do
		read -r line <&3 || fatal "comeback: no line from a hog"
		case $line in
		"memhog walked majflt="*) ;;
		*) fatal "comeback: a hog said: $line" ;;
		esac
		f=${line#*majflt=}
		faults=$((faults + ${f%% *}))
		say comeback_hog "${line#memhog walked }"
	done
	say comeback_done "$faults"
}

hib_opts() {
	case $codec in
	default) echo "-v" ;;
	fixed) echo "-v --no-adaptive" ;; # lz4, every block compressed
	image1g) echo "-v --image-size 1024" ;; # the kernel's cap, not its 2/5 of RAM
	norestore) # the defaults but the working set's restore
		echo "restore-working-set = no" >/run/bench-norestore.conf
		echo "-v --config /run/bench-norestore.conf"
		;;
	enc | enc-preload) echo "-v --config $(enc_conf)" ;;
	*) echo "-v -c $codec" ;;
	esac
}

# enc_conf: hibernate.conf of ours-enc and ours-enc-preload (in /run, so
# written in each boot); prints its path.  resume-preload only when the
# binary knows the key (say preload_support): else both are the same.
enc_conf() {
	conf=/run/bench-enc.conf
	printf 'encrypt = yes\nkdf-passes = %s\nkdf-memory = %s\n' $KDF_PASSES $KDF_MIB >$conf
	if hibernate config get resume-preload >/dev/null 2>&1; then
		if [ "$codec" = enc-preload ]; then echo "resume-preload = yes"; else echo "resume-preload = no"; fi >>$conf
		say preload_support 1 >&2
	else
		say preload_support 0 >&2
	fi
	echo $conf
}

# aes_setup: the encrypted workload on a CPU with AES-NI (bench/vm/run
# BENCH_CPU=max): its driver for dm-crypt, as a distribution kernel loads
# it.  Says which AES the kernel's xts(aes) would use.
aes_setup() {
	[ "$wl" = encrypted ] || return 0
	if grep -qw aes /proc/cpuinfo && [ -s /etc/hibtest/modules.benchaesni ]; then
		load_modules benchaesni
		say cpu_aes 1
	else
		say cpu_aes 0
	fi
}

# luks_dm: the open LUKS mapping's dm-N (no udev here: found by its name
# in sysfs; devtmpfs made /dev/dm-N).  Sets luks_dm, luks_devno.
luks_dm() {
	for d in /sys/block/dm-*; do
		if [ "$(cat "$d/dm/name" 2>/dev/null)" = $LUKS_NAME ]; then
			luks_dm=${d##*/} luks_devno=$(cat "$d/dev")
			return 0
		fi
	done
	fatal "no dm device named $LUKS_NAME after cryptsetup open"
}

# swap_setup: the swap the image goes to.  kernel-luks: vda1 formatted as
# LUKS2 (Argon2id at KDF_PASSES, KDF_MIB, one lane), opened, mkswap on the
# mapping, the kernel told to write its image there.  Else vda1 itself.
swap_setup() {
	if [ "$wl" != encrypted ] || [ "$side" != kernel ]; then
		swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
		return 0
	fi
	[ -n "$pass" ] || fatal "no bench.pass= on the kernel cmdline"
	printf %s "$pass" | cryptsetup luksFormat -q --type luks2 --pbkdf argon2id \
		--pbkdf-memory $((KDF_MIB * 1024)) --pbkdf-force-iterations $KDF_PASSES \
		--pbkdf-parallel 1 --key-file - /dev/vda1 || fatal "cryptsetup luksFormat /dev/vda1 failed"
	printf %s "$pass" | cryptsetup open --key-file - /dev/vda1 $LUKS_NAME ||
		fatal "cryptsetup open /dev/vda1 failed"
	luks_dm
	mkswap "/dev/$luks_dm" >/dev/null || fatal "mkswap on $LUKS_NAME failed"
	# Before swapon: the write makes the kernel look for an image there at
	# once (none: "Image not found"), which it cannot while swap holds it.
	echo "$luks_devno" >/sys/power/resume
	swapon "/dev/$luks_dm" || fatal "swapon $LUKS_NAME failed"
	say luks_keyslot "$(cryptsetup luksDump /dev/vda1 | grep -E 'PBKDF:|Time cost:|Memory:|Threads:|Cipher:' |
		tr -s ' \t' ' ' | paste -sd';')"
}

# luks_unlock: boot 2 of kernel-luks, as Debian's cryptroot does in its
# initramfs: askpass's question on the console, then cryptsetup open with
# the answer on its standard input.  Sets luks_devno.
luks_unlock() {
	printf 'Please unlock disk %s: ' $LUKS_NAME
	stty -echo 2>/dev/null
	read -r answer
	stty echo 2>/dev/null
	echo
	printf %s "$answer" | cryptsetup open --key-file - /dev/vda1 $LUKS_NAME ||
		fatal "cryptsetup open /dev/vda1 failed"
	luks_dm
}

case $1 in
1)
	aes_setup
	swap_setup
	if [ "$wl" = comeback ]; then comeback_workload; else workload; fi
	[ "$side" = kernel ] && echo shutdown >/sys/power/disk
	[ -f /sys/module/hibernate/parameters/compressor ] &&
		say kernel_compressor_param "$(cat /sys/module/hibernate/parameters/compressor)"
	if [ "$wl" = text ]; then rw_writer_start; else sync; fi
	# Kernel messages to the console, on both sides: the kernel's timings
	# (and which compressor it used) are in the log.
	echo 7 >/proc/sys/kernel/printk
	# The start of the hibernate step in the kernel's clock, beside its
	# lines (the report's phase split of boot 1).
	echo "bench: mark hibernate" >/dev/kmsg
	say mark hibernate
	tty_drain
	if [ "$side" = kernel ]; then
		echo disk >/sys/power/state
		# shellcheck disable=SC2320 # the write's status is the point
		rc=$?
	else
		[ "$wl" = text ] && mem_sample &
		# shellcheck disable=SC2046 # options, as words
		hibernate $(hib_opts)
		rc=$?
	fi
	if [ $rc -ne 0 ]; then
		say hibernate_rc "$rc"
		dmesg | tail -n 30 | sed 's/^/  dmesg: /'
		exit 1
	fi
	# The same moment in the restored kernel's clock (next to its
	# "Restarting tasks" line): how long the resumed side took to get here.
	# Before the line the host waits for: the kernel prints the message on the
	# console as it is written, and after the line it once cut that line in
	# two ("HIBTEST resumed=", the message, "1"), which read as no resume.
	echo "bench: resumed" >/dev/kmsg
	say resumed 1
	if [ "$wl" = comeback ]; then
		comeback
		echo 4 >/proc/sys/kernel/printk
		say meminfo_after "$(meminfo)"
		# The background restore's line (ours), once it has finished.
		i=0
		while [ "$side" = ours ] && [ $i -lt 600 ] && ! dmesg | grep -q 'working set \(not \)\{0,1\}restored'; do
			i=$((i + 1))
			usleep 100000
		done
		say restore_line "$(dmesg | grep -o 'working set \(not \)\{0,1\}restored.*' | tail -n1)"
		exit 0
	fi
	echo 4 >/proc/sys/kernel/printk
	say meminfo_after "$(meminfo)"
	if kill -0 "$memhog_pid" 2>/dev/null; then say memhog_alive 1; else say memhog_alive 0; fi
	if [ "$wl" = text ]; then
		if kill -0 "$rw_pid" 2>/dev/null; then say rw_alive 1; else say rw_alive 0; fi
		mem_said
	fi
	if [ "$(md5sum </bench/random.bin | cut -d' ' -f1)" = "$tmpfs_sum" ]; then
		say tmpfs_ok 1
	else
		say tmpfs_ok 0
	fi
	;;
2)
	aes_setup
	devno=$(cat /sys/class/block/vda1/dev)
	echo 7 >/proc/sys/kernel/printk
	# The start of the resume step in this kernel's clock, beside its lines.
	echo "bench: mark resume" >/dev/kmsg
	say mark resume
	tty_drain
	if [ "$side" = kernel ] && [ "$wl" = encrypted ]; then
		luks_unlock
		echo "$luks_devno" >/sys/power/resume
	elif [ "$side" = kernel ]; then
		echo "$devno" >/sys/power/resume
	elif [ "$wl" = encrypted ]; then
		hibernate resume -v --device /dev/vda1 --config "$(enc_conf)"
	else
		hibernate resume -v --device /dev/vda1
	fi
	rc=$?
	say resumed 0
	say resume_rc "$rc"
	dmesg | tail -n 30 | sed 's/^/  dmesg: /'
	;;
*)
	fatal "bench has no boot $1"
	;;
esac
