# shellcheck shell=bash disable=SC2034 # RESUME_ARGS, FILE_PAGE: read by the .host files
# Host-side checks shared by the file-target scenarios (swapfile-ext4,
# swapfile-xfs, swapfile-btrfs, plain-file); sourced by their .host files.
# Not a scenario: tests/vm/run lists only *.host.

P2_BYTES=$((HIBVM_P2_START_MIB * 1048576))

# p2_uuid: the filesystem UUID on vda2, read on the host by libblkid.
p2_uuid() {
	blkid -p -O "$P2_BYTES" -s UUID -o value "$VM_DISK"
}

# p2_btrfs_file_bytes NAME: "LOGICAL DEVICE" bytes of the first byte of file
# NAME in the top directory of vda2's btrfs, from its metadata read on the
# host: the file's first EXTENT_DATA item (a btrfs logical address) and the
# chunk tree item holding it (stripe 0's offset + the distance from the
# chunk's start).  Empty when the tool cannot tell.
p2_btrfs_file_bytes() {
	local name=$1 tmp ino logical
	tmp=$(mktemp "${TMPDIR:-/tmp}/hibvm-btrfs.XXXXXX")
	dd if="$VM_DISK" of="$tmp" bs=1M skip="$HIBVM_P2_START_MIB" count="$HIBVM_P2_SIZE_MIB" \
		conv=sparse status=none
	# "item 7 key (257 INODE_REF 256) ..." then "index 2 namelen 8 name: NAME";
	# "key (257 EXTENT_DATA 0)" then "extent data disk byte B nr N" and
	# "extent data offset O nr N ram N": logical B + O.
	ino=$(btrfs inspect-internal dump-tree -t 5 "$tmp" 2>/dev/null | awk -v n="$name" '
		/ INODE_REF 256\)/ { i = $4; sub(/\(/, "", i); next }
		i != "" && / name: / && $NF == n { print i; exit }
		{ i = "" }')
	if [[ $ino =~ ^[0-9]+$ ]]; then
		logical=$(btrfs inspect-internal dump-tree -t 5 "$tmp" 2>/dev/null | awk -v k="($ino" '
			$4 == k && $5 == "EXTENT_DATA" && $6 == "0)" { on = 1; next }
			on && /extent data disk byte/ { b = $5 }
			on && /extent data offset/ { print b + $4; exit }')
	fi
	if [[ $logical =~ ^[0-9]+$ ]]; then
		btrfs inspect-internal dump-tree -t chunk "$tmp" 2>/dev/null | awk -v l="$logical" '
			/ CHUNK_ITEM / { s = $6; sub(/\)/, "", s); len = "" }
			/^[ \t]*length / { len = $2 }
			/^[ \t]*stripe 0 / && len != "" && l >= s && l < s + len {
				printf "%d %d\n", l, $6 + (l - s); exit }'
	fi
	rm -f "$tmp"
	return 0
}

# p2_file_first_page FS PATH: the page of vda2 holding the first byte of PATH,
# from the filesystem's own metadata (not from hibernate): debugfs for ext4,
# xfs_db for xfs, btrfs's dump-tree for btrfs (PATH in the top directory).
# Empty when the tool cannot tell.
p2_file_first_page() {
	local fs=$1 path=$2 blk tmp fsb daddr bytes
	case $fs in
	btrfs)
		bytes=$(p2_btrfs_file_bytes "${path#/}")
		[[ $bytes =~ ^[0-9]+\ ([0-9]+)$ ]] && echo $((BASH_REMATCH[1] / 4096))
		;;
	ext4)
		# "bmap FILE 0": the physical block of logical block 0; the scenarios
		# make ext4 with 4 KiB blocks, so block = page.
		blk=$(debugfs -R "bmap $path 0" "$VM_DISK?offset=$P2_BYTES" 2>/dev/null | tr -d '\r')
		[[ $blk =~ ^[0-9]+$ ]] && echo "$blk"
		;;
	xfs)
		# xfs_db cannot read at an offset: a sparse copy of the partition.
		tmp=$(mktemp "${TMPDIR:-/tmp}/hibvm-xfs.XXXXXX")
		dd if="$VM_DISK" of="$tmp" bs=1M skip="$HIBVM_P2_START_MIB" count="$HIBVM_P2_SIZE_MIB" \
			conv=sparse status=none
		# "data offset 0 startblock 24 (0/24) count 40960 flag 0": startblock
		# is an AG-encoded fs block; convert gives 512-byte sectors, printed
		# as "0x28050 (163920)".
		fsb=$(xfs_db -r -c "path $path" -c bmap "$tmp" 2>/dev/null |
			sed -n 's/^data offset 0 startblock \([0-9]*\) .*/\1/p')
		if [[ $fsb =~ ^[0-9]+$ ]]; then
			daddr=$(xfs_db -r -c "convert fsblock $fsb daddr" "$tmp" 2>/dev/null |
				sed -n 's/^0x[0-9a-f]* (\([0-9]*\))$/\1/p')
			[[ $daddr =~ ^[0-9]+$ ]] && echo $((daddr * 512 / 4096))
		fi
		rm -f "$tmp"
		;;
	esac
	return 0
}

# check_offset_lines N FS PATH: boot N's `hibernate offset` printed
# "resume=UUID=<vda2's uuid> resume_offset=P" and "resume=/dev/vda2
# resume_offset=P", with P the page the filesystem itself says the file
# starts at.  Sets RESUME_ARGS (boot 2's cmdline) and FILE_PAGE.
check_offset_lines() {
	local n=$1 fs=$2 path=$3 log u d uuid page
	log=$(boot_log "$n")
	[[ $(need "$n" offset_rc) == 0 ]] ||
		fail "boot $n: hibernate offset exited $(need "$n" offset_rc): $(grep -a '  offset: ' "$log" | tr -d '\r' | paste -sd' ') (log: $log)"
	u=$(need "$n" resume_uuid)
	d=$(need "$n" resume_dev)
	uuid=$(p2_uuid)
	[[ -n $uuid ]] || fail "harness: blkid found no UUID on vda2 of $VM_DISK"
	[[ $u =~ ^resume=UUID=([0-9a-f-]+)\ resume_offset=([0-9]+)$ ]] ||
		fail "boot $n: hibernate offset printed '$u', not 'resume=UUID=<uuid> resume_offset=<pages>' (log: $log)"
	[[ ${BASH_REMATCH[1]} == "$uuid" ]] ||
		fail "boot $n: hibernate offset names UUID ${BASH_REMATCH[1]}, vda2's $fs has $uuid (log: $log)"
	FILE_PAGE=${BASH_REMATCH[2]}
	[[ $d == "resume=/dev/vda2 resume_offset=$FILE_PAGE" ]] ||
		fail "boot $n: second line '$d', expected 'resume=/dev/vda2 resume_offset=$FILE_PAGE' (log: $log)"
	page=$(p2_file_first_page "$fs" "$path")
	[[ -n $page ]] || fail "harness: could not map $path on the host ($fs)"
	[[ $page == "$FILE_PAGE" ]] ||
		fail "boot $n: hibernate offset says page $FILE_PAGE, the $fs metadata says $path starts at page $page (log: $log)"
	RESUME_ARGS="resume=UUID=$uuid resume_offset=$FILE_PAGE"
}

# file_sig_on_disk: the signature of the file's first page, read from the
# disk image on the host.
file_sig_on_disk() {
	disk_page_sig "$VM_DISK" $((P2_BYTES + FILE_PAGE * 4096))
}
