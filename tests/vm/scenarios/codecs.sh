#!/bin/sh
# Four cycles in a row: -c none, -c lz4, -c zstd:3 with --no-adaptive (every
# block through the codec), then -c zstd:19 with adaptive compression (the
# default): zstd -19 is far slower than the disk under TCG, so blocks must go
# out raw while the disk waits.  The workload holds compressible text besides
# its random data.
#   boot 1: swapon, workload, `hibernate -c none --no-adaptive`
#   boot N (2..5): `hibernate status` (codec, sizes of the image on disk),
#           then resume; the resumed world goes on with the next codec
#           (boots 2 to 4) or ends (boot 5)
# shellcheck source=../guest/guest.sh
. /lib/hibtest/guest.sh
WORKLOAD_MB=${WORKLOAD_MB:-16}
# shellcheck source=../guest/workload.sh
. /lib/hibtest/workload.sh

[ -x /bin/hibernate ] || fatal "/bin/hibernate missing from the initramfs"

case $1 in
1)
	swapon /dev/vda1 || fatal "swapon /dev/vda1 failed"
	workload_start
	# ~13 MB of log-like text: compresses well, better with zstd than lz4
	# (busybox awk under TCG writes about 2 MB a second).
	awk 'BEGIN { for (i = 0; i < 200000; i++)
		printf "%08d kernel: the quick brown fox jumps over the lazy dog, id %x\n", i, (i * 7919) % 65521 }' \
		>/run/text || fatal "making the text data failed"
	text_hash=$(sha256sum /run/text | cut -d' ' -f1)
	workload_report
	for codec in none lz4 zstd:3 zstd:19; do
		dmesg_mark
		say mark "hibernate-$codec"
		if [ "$codec" = zstd:19 ]; then
			hibernate -c "$codec" --loglevel 4
		else
			hibernate -c "$codec" --no-adaptive
		fi
		resumed_or_exit $?
		workload_after_resume
		if [ "$(sha256sum /run/text | cut -d' ' -f1)" = "$text_hash" ]; then
			say text_ok 1
		else
			say text_ok 0
		fi
	done
	;;
2 | 3 | 4 | 5)
	hibernate status --device /dev/vda1 >/run/status 2>&1
	sed 's/^/  status: /' /run/status
	for k in codec image-bytes stream-bytes; do
		say "status_$k" "$(sed -n "s/^$k: *//p" /run/status)"
	done
	dmesg_mark
	say mark resume
	resume_step
	;;
*)
	fatal "codecs has no boot $1"
	;;
esac
