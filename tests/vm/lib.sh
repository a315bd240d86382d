# shellcheck shell=bash
# shellcheck disable=SC2034 # globals set here are read by the sourcing scripts
# tests/vm/lib.sh — host-side helpers for the VM test harness.
#
# Sourced by tests/vm/run, tests/vm/demo and the scenario host parts
# (tests/vm/scenarios/*.host).  Nothing here runs on its own.
#
# Pieces, in the order a scenario run uses them:
#   kernel_prepare SERIES   fetch + unpack a Debian kernel ("6.1", "6.12", "newest")
#   initramfs_build OUT     busybox + modules (cached) + /init, scenarios, binary
#   disk_create IMG         sparse GPT disk: vda1 = 1 GiB swap, vda2 = 256 MiB
#   vm_boot N               one QEMU boot, console -> $VM_LOGDIR/bootN.log
#   hib_get LOG KEY         read a `HIBTEST key=value` line the guest printed
#
# Guest -> host protocol: the guest prints lines "HIBTEST key=value" on the
# serial console, one pair per line; the value is the rest of the line.

HIBVM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
HIBVM_REPO=$(cd "$HIBVM_DIR/../.." && pwd)
HIBVM_CACHE=${HIBERNATE_VM_CACHE:-/var/cache/hibernate-vm}
HIBVM_LOGROOT=${HIBERNATE_VM_LOGS:-/tmp/hibernate-vm-logs}
HIBVM_BINARY=${HIBERNATE_BINARY:-$HIBVM_REPO/build-static/hibernate}
# The same built with the test-only environment variables (make static-test):
# /bin/hibernate-test in the guest, for the scenarios that need them.
HIBVM_TEST_BINARY=${HIBERNATE_TEST_BINARY:-$HIBVM_REPO/build-static-test/hibernate}
# Seconds one boot may take before QEMU is killed.  A boot is ~5-10 s under
# TCG and a hibernate/resume of the test workload a few seconds more; the
# limit only matters when something hangs.
HIBVM_TIMEOUT=${HIBERNATE_VM_TIMEOUT:-150}
# Seconds to the first line of the test /init ("init_start"; about 5 s
# under TCG for a series kernel booted as its ELF, 10 s as a bzImage).  A
# kernel silent for longer hung in early boot (see vm_boot): it is stopped
# then, not at HIBVM_TIMEOUT.  0 = no such limit (a boot with another init,
# e.g. debian-system's systemd).
HIBVM_INIT_TIMEOUT=${HIBERNATE_VM_INIT_TIMEOUT:-60}
# Keep -m and the machine type identical between the boots of one scenario:
# x86-64 compares the e820 map of the resuming kernel with the image's.
HIBVM_MEM=${HIBERNATE_VM_MEM:-1024}
HIBVM_SMP=${HIBERNATE_VM_SMP:-2}
HIBVM_MACHINE=${HIBERNATE_VM_MACHINE:-pc}
# A guest kernel line that says the kernel crashed: an oops, a panic, a
# general protection fault, a BUG() or a bad pointer (the kernel's console
# lines, timestamped).  Not "WARNING: CPU:" alone (a warning lets the
# kernel go on, and some drivers warn under QEMU), nor "BUG: soft lockup"
# (TCG on a loaded host).  vm_boot ends such a boot HIBVM_OOPS_GRACE seconds
# later (the trace printed by then) rather than at its timeout.  One
# warning counts: a #DB in kernel code (exc_debug_kernel), which under TCG
# follows an S3 resume whose CPU flags came back with TF set and garbage in
# the reserved bits (trixie-sleep, powerdown-modes); the guest then hangs
# or oopses in syscore_resume ("Interrupts enabled after irqrouter_resume").
HIBVM_OOPS_RE='\[ *[0-9]+\.[0-9]+\] (\[ *[CT][0-9]+\] )?(Oops: |Kernel panic - not syncing|general protection fault|kernel BUG at |BUG: kernel NULL pointer dereference|BUG: unable to handle |WARNING: CPU: [0-9]+ PID: [0-9]+ at [^ ]+ exc_debug_kernel)'
# The guest kernel crashes that QEMU's TCG causes, not the kernel nor our
# code (tests/vm/run runs such a scenario once more): a stale int3 while
# the kernel patches its own text, and the #DB above after an S3 resume.
HIBVM_TCG_CRASH_RE='Oops: int3|WARNING: CPU: [0-9]+ PID: [0-9]+ at [^ ]+ exc_debug_kernel'
HIBVM_OOPS_GRACE=${HIBERNATE_VM_OOPS_GRACE:-3}

# The kernel series (tests/vm/run --kernels):
#   6.1     bookworm's kernel (what linux-image-amd64 depends on)
#   6.12    the newest 6.12 Debian ships for bookworm (6.12.N+deb12)
#   newest  the newest linux-image-*-amd64 of Debian unstable, looked up
#           when a run starts (see _kernel_fetch_suite)
#   backports  the newest linux-image-6.*-amd64 of Debian trixie-backports
#           (the kernels users of the stable release install: 6.16-6.19),
#           looked up the same way
HIBVM_SERIES_KNOWN="6.1 6.12 newest backports"
# "newest" and "backports" are asked of the Debian mirror apt uses here,
# each through an apt configuration of its own in $HIBVM_CACHE/apt-<suite>
# (sources list, package lists, apt's cache, an empty dpkg status): the
# host's apt sources stay as they are, and its installed packages are not
# taken for the suite's.  Lists fetched less than HIBVM_NEWEST_TTL seconds
# ago are not fetched again (tests/vm/run prepares each kernel twice, and a
# scenario that crosses to another kernel prepares that one again).
declare -gA HIBVM_SUITES=([newest]=unstable [backports]=trixie-backports)
HIBVM_NEWEST_TTL=${HIBERNATE_VM_NEWEST_TTL:-900}
HIBVM_DEBIAN_KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
# The kernel directory each series was prepared from in this run
# (kernel_prepare): later calls in the run, and the scenario subshells, use
# the same one, even if the cache or unstable moved on meanwhile.
declare -gA HIBVM_KERNEL_DIRS=()

# Bump when the layout of the cached base initramfs changes.
HIBVM_BASE_FORMAT=5

# Module sets, by kernel module name.  Dependencies are resolved from each
# .ko's modinfo `depends=` (Debian's kernel .deb ships no modules.dep: depmod
# runs at install time), so only the roots are named here.  Built-in ones
# (modules.builtin) are dropped: on 6.12 virtio and virtio_pci are built in.
#   block: the virtio disk.  virtio_pci is the transport virtio_blk needs but
#          does not depend on, so it is a root of its own and comes first.
#   ext4:  loaded only when a scenario asks (SCENARIO_MODULES=ext4 ->
#          hibtest.modules=ext4): crc16, mbcache, jbd2, ext4 and crc32c.
#   xfs, btrfs: the same, for the swap file scenarios on those filesystems
#          (libcrc32c, and for btrfs xor, raid6_pq, zstd_compress).
#   dm:    device-mapper and dm-crypt, for swap on an LVM logical volume
#          (lvm-swap; its ciphers, aes and cbc, are built in), and
#          cipher_null (crypto_null) for a dm-crypt mapping that passes a
#          filesystem made on the host through (swapfile-btrfs).
#   vfat:  the ESP of unchecked-fs (codepage 437 and the ascii iocharset,
#          Debian's defaults for a vfat mount).
declare -gA HIBVM_MODSETS=(
	[block]="virtio_pci virtio_blk"
	[ext4]="ext4"
	[xfs]="xfs"
	[btrfs]="btrfs"
	[net]="dummy"
	[spare]="crc_itu_t"
	[zram]="zram"
	[dm]="dm_mod dm_crypt crypto_null"
	[dmthin]="dm_thin_pool"
	[vfat]="vfat nls_cp437 nls_ascii"
)
# Sets a kernel may lack (then the set is left out of the initramfs: no
# /etc/hibtest/modules.SET, and the scenario SKIPs that part):
#   net:   the dummy network driver (hook scenarios: an interface to take down)
#   spare: a module nothing uses, for unload-modules
#   zram:  swap in memory (hibernate doctor's zram-only check)
#   dmthin: thin provisioning (lvm-swap's refused thin LV)
HIBVM_MODSETS_OPTIONAL="net spare zram dmthin"
# softdep aliases -> modules, for the few we follow: the first of the list
# that the kernel has (as a module or built in) is taken, none if it has
# none.  ext4 and jbd2 have `softdep=pre: crypto-crc32c` (metadata_csum
# needs it at mount time); the generic implementation, because the TCG CPU
# has no SSE4.2 for crc32c-intel.  libcrc32c (xfs, btrfs; 6.1 and 6.12)
# names the same thing `softdep=pre: crc32c`.  From 6.15 on crc32c lives in
# lib/ (built in): libcrc32c and crc32c_generic are gone, and the crypto
# API's crc32c (the alias jbd2 still names) is crc32c_cryptoapi.
declare -gA HIBVM_MODALIAS=(
	[crypto-crc32c]="crc32c_generic crc32c_cryptoapi"
	[crc32c]="crc32c_generic crc32c_cryptoapi"
)

# ---------------------------------------------------------------- messages

hibvm_info() { printf '%s\n' "$*" >&2; }
hibvm_die() { printf 'tests/vm: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------- kernels

# hibvm_debian_mirror: the Debian mirror apt uses here (the first URI ending
# in /debian in /etc/apt/sources.list*; deb.debian.org when none is found).
hibvm_debian_mirror() {
	local m
	m=$(sed -n 's/^URIs:[[:space:]]*//p; s/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*\)[[:space:]]\+bookworm[[:space:]].*/\2/p' \
		/etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list /etc/apt/sources.list 2>/dev/null |
		tr ' ' '\n' | grep -m1 '/debian/\?$' || true)
	printf '%s\n' "${m:-http://deb.debian.org/debian}"
}

# _suite_apt SERIES apt-get|apt-cache ARGS...: apt with the configuration
# of SERIES (newest, backports) alone: only its sources list (its Debian
# suite), its lists and its cache, an empty dpkg status (the host's
# installed kernels are no candidates of the suite) and none of the host's
# pinning (preferences: an empty directory).
_suite_apt() {
	local dir=$HIBVM_CACHE/apt-${HIBVM_SUITES[$1]} cmd=$2
	shift 2
	mkdir -p "$dir/preferences.d"
	[[ -e $dir/status ]] || : >"$dir/status"
	"$cmd" -o Dir::Etc::sourcelist="$dir/sources.list" -o Dir::Etc::sourceparts=- \
		-o Dir::Etc::preferences="$dir/preferences" -o Dir::Etc::preferencesparts="$dir/preferences.d" \
		-o Dir::State::Lists="$dir/lists" -o Dir::State::status="$dir/status" \
		-o Dir::Cache="$dir/cache" "$@"
}

# _suite_lists_update SERIES: fetch the package lists of its suite
# (Packages.xz of main, amd64: ~11 MB for unstable, less for backports, a few
# seconds) unless that was done less than HIBVM_NEWEST_TTL seconds ago.
# Status 1 when apt could not fetch them (offline?): the lists there are, if
# any, are older ones.
_suite_lists_update() {
	local series=$1 suite=${HIBVM_SUITES[$1]} dir age line
	dir=$HIBVM_CACHE/apt-$suite
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
	line="deb [signed-by=$HIBVM_DEBIAN_KEYRING] $(hibvm_debian_mirror) $suite main"
	[[ $(cat "$dir/sources.list" 2>/dev/null) == "$line" ]] || printf '%s\n' "$line" >"$dir/sources.list"
	# "updated" holds the sources line its lists were fetched with.
	if [[ -e $dir/updated && $(cat "$dir/updated") == "$line" ]]; then
		age=$(($(date +%s) - $(stat -c %Y "$dir/updated")))
		((age < HIBVM_NEWEST_TTL)) && return 0
	fi
	hibvm_info "tests/vm: asking Debian $suite for its newest kernel ($line)"
	# --error-on=any: a list that could not be fetched is an error (plain
	# `apt-get update` warns and exits 0).
	if _suite_apt "$series" apt-get update -qq --error-on=any >"$dir/update.log" 2>&1; then
		printf '%s\n' "$line" >"$dir/updated"
		return 0
	fi
	hibvm_info "tests/vm: apt-get update of Debian $suite failed: $(grep -v '^W:' "$dir/update.log" | tail -n 2 | paste -sd' ')"
	return 1
}

# _suite_lists_date SERIES: when the series' lists were last fetched.
_suite_lists_date() {
	local f=$HIBVM_CACHE/apt-${HIBVM_SUITES[$1]}/updated
	if [[ -e $f ]]; then date -u -r "$f" '+%Y-%m-%d %H:%M UTC'; else echo never; fi
}

# _suite_parts SERIES PKG: the linux-*-<release> packages the image PKG
# depends on (its parts: linux-binary-, linux-modules-, linux-base-<release>),
# one a line, "<name>" for one the suite's lists do not hold.
_suite_parts() {
	local series=$1 pkg=$2
	_suite_apt "$series" apt-cache depends "$pkg" 2>/dev/null |
		awk -v pkg="$pkg" -v rel="-${pkg#linux-image-}" '$1 == "Depends:" {
				n = $2; gsub(/[<>]/, "", n)
				if (n ~ /^linux-/ && n != pkg && length(n) > length(rel) &&
				    substr(n, length(n) - length(rel) + 1) == rel) print $2
			}' | sort -u
}

# Package name for a kernel series, from apt's lists.
#   6.1    -> whatever linux-image-amd64 depends on (linux-image-6.1.0-NN-amd64)
#   6.12   -> the newest linux-image-6.12.N+deb12-amd64 that has a candidate
#             (the names list also holds -rt/-cloud/-dbg/-unsigned: not those)
#   newest -> the newest linux-image-<version>-amd64 of unstable's lists
#             (_suite_lists_update fetches them) that has a candidate
#   backports -> the same of trixie-backports' lists, 6.x only
# (newest, backports: and whose parts, _suite_parts, the lists all hold)
kernel_resolve_package() {
	local series=$1 pkg='' names name
	case $series in
	6.1)
		pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
			awk '!found && $1 == "Depends:" && $2 ~ /^linux-image-6\.1\.0-[0-9]+-amd64$/ { print $2; found = 1 }')
		;;
	6.12)
		# (No `| grep -q` / `| head` here: under pipefail an early-closing
		# reader makes the pipeline fail with SIGPIPE.)
		names=$(apt-cache search --names-only '^linux-image-6\.12\.[0-9]+\+deb12-amd64$' 2>/dev/null |
			awk '{print $1}' | sort -V -r)
		for name in $names; do
			# search also lists names without a downloadable version (only
			# in a Provides or an old list): keep the newest that has one.
			if [[ $(apt-cache policy "$name" 2>/dev/null) == *"Candidate: "[0-9]* ]]; then
				pkg=$name
				break
			fi
		done
		;;
	newest | backports)
		local re='^linux-image-[0-9].*-amd64$'
		[[ $series == backports ]] && re='^linux-image-6\.[0-9]+\..*-amd64$'
		# -dbg and -unsigned do not end in -amd64; -rt and -cloud do.
		names=$(_suite_apt "$series" apt-cache search --names-only "$re" 2>/dev/null |
			awk '$1 !~ /-(rt|cloud)-amd64$/ { print $1 }' | sort -V -r)
		for name in $names; do
			# A suite keeps an image whose parts have left it (trixie-
			# backports: the 6.19 images, their modules gone): not one
			# apt could install, nor one the harness could boot.
			if [[ $(_suite_apt "$series" apt-cache policy "$name" 2>/dev/null) == *"Candidate: "[0-9]* &&
				$(_suite_parts "$series" "$name") != *"<"* ]]; then
				pkg=$name
				break
			fi
		done
		;;
	*) hibvm_die "unknown kernel series '$series' (known: $HIBVM_SERIES_KNOWN)" ;;
	esac
	printf '%s\n' "$pkg"
}

# The .deb for package $1 already in the cache, if any.
kernel_cached_deb() {
	local pkg=$1 f
	for f in "$HIBVM_CACHE/debs/${pkg}_"*_amd64.deb; do
		[[ -f $f ]] && { printf '%s\n' "$f"; return 0; }
	done
	return 1
}

# Newest cached .deb of a series: the fallback when apt cannot be asked.
kernel_cached_deb_for_series() {
	local series=$1 glob
	case $series in
	6.1) glob='linux-image-6.1.0-*-amd64_*_amd64.deb' ;;
	6.12) glob='linux-image-6.12.*+deb12-amd64_*_amd64.deb' ;;
	*) return 1 ;;
	esac
	# shellcheck disable=SC2086 # $glob: a pattern, expanded in the cache directory
	(cd "$HIBVM_CACHE/debs" 2>/dev/null && ls -1 $glob 2>/dev/null) |
		sort -V | tail -n1 | sed "s|^|$HIBVM_CACHE/debs/|" | grep . || return 1
}

# _kernel_fetch_deb SERIES (6.1, 6.12): the series' kernel .deb from the
# host's apt, unpacked in the cache; prints the kernel directory.
_kernel_fetch_deb() {
	local series=$1 pkg deb dir
	pkg=$(kernel_resolve_package "$series")
	if [[ -z $pkg ]]; then
		# apt-cache knows nothing before the first `apt-get update`.
		hibvm_info "tests/vm: apt knows no kernel for $series yet: apt-get update"
		apt-get update -qq >&2 || true
		pkg=$(kernel_resolve_package "$series")
	fi
	deb=
	if [[ -n $pkg ]]; then
		deb=$(kernel_cached_deb "$pkg") || {
			hibvm_info "tests/vm: downloading $pkg"
			# apt-get download runs as _apt when it can: let it write here.
			chown _apt "$HIBVM_CACHE/debs" 2>/dev/null || true
			(cd "$HIBVM_CACHE/debs" && apt-get download -q "$pkg" >&2) || true
			deb=$(kernel_cached_deb "$pkg") || deb=
		}
	fi
	if [[ -z $deb ]]; then
		# No apt answer (offline?): an older cached kernel of the same
		# series is better than no test at all.
		deb=$(kernel_cached_deb_for_series "$series") ||
			hibvm_die "cannot get a $series kernel: apt found '${pkg:-nothing}' and the cache $HIBVM_CACHE/debs has none"
		hibvm_info "tests/vm: using cached $(basename "$deb") (apt: '${pkg:-nothing}')"
	fi
	pkg=$(basename "$deb"); pkg=${pkg%%_*}
	dir=$HIBVM_CACHE/kernels/$series/$pkg
	if [[ ! -e $dir/.unpacked ]]; then
		hibvm_info "tests/vm: unpacking $pkg"
		rm -rf "$dir"
		mkdir -p "$dir"
		dpkg -x "$deb" "$dir"
		touch "$dir/.unpacked"
	fi
	# The newest unpacked package of the series is "the" kernel.
	ln -sfn "$pkg" "$HIBVM_CACHE/kernels/$series/current"
	printf '%s\n' "$dir"
}

# _kernel_fetch_suite SERIES (newest, backports): the newest kernel of the
# series' Debian suite (unstable, trixie-backports), unpacked in the cache as
# kernels/SERIES/<package>_<version>; prints that directory.
# Unstable (and trixie-backports) splits a kernel into parts: linux-image-<release> is a small
# package that depends on linux-binary-<release> (vmlinuz), linux-modules-
# <release> (the .ko.xz) and linux-base-<release> (config, modules.builtin,
# System.map), all under usr/lib/modules/<release>/ (merged /usr).  Every
# linux-*-<release> package the image depends on is downloaded (same
# version) and unpacked into the one directory, so a kernel packaged in one
# piece works as well.  When unstable cannot be asked or a part cannot be
# downloaded, the newest kernel of the series unpacked here before is used,
# and the run says so.
_kernel_fetch_suite() {
	local series=$1 suite=${HIBVM_SUITES[$1]} root pkg='' ver='' dir='' why='' fresh=1 p parts=() debs=() f
	root=$HIBVM_CACHE/kernels/$series
	mkdir -p "$root"
	_suite_lists_update "$series" || fresh=0
	pkg=$(kernel_resolve_package "$series")
	if [[ -n $pkg ]]; then
		ver=$(_suite_apt "$series" apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: *//p')
	fi
	if [[ -z $pkg || -z $ver ]]; then
		why="apt found no linux-image-*-amd64 in the lists of Debian $suite (fetched: $(_suite_lists_date "$series"))"
	else
		dir=$root/${pkg}_$ver
		if [[ ! -e $dir/.unpacked ]]; then
			parts=("$pkg")
			while read -r p; do
				parts+=("$p")
			done < <(_suite_parts "$series" "$pkg")
			for p in "${parts[@]}"; do
				debs+=("$HIBVM_CACHE/debs/${p}_${ver//:/%3a}_amd64.deb")
			done
			local missing=()
			for p in "${!parts[@]}"; do
				[[ -s ${debs[p]} ]] || missing+=("${parts[p]}=$ver")
			done
			if ((${#missing[@]})); then
				hibvm_info "tests/vm: downloading ${missing[*]} (Debian $suite)"
				chown _apt "$HIBVM_CACHE/debs" 2>/dev/null || true
				(cd "$HIBVM_CACHE/debs" && _suite_apt "$series" apt-get download -q "${missing[@]}" >&2) || true
			fi
			for f in "${debs[@]}"; do
				[[ -s $f ]] || why="could not download $(basename "$f")"
			done
			if [[ -z $why ]]; then
				hibvm_info "tests/vm: unpacking $pkg $ver (${parts[*]})"
				rm -rf "$dir"
				mkdir -p "$dir"
				for f in "${debs[@]}"; do
					dpkg -x "$f" "$dir"
				done
				printf '%s\n' "$pkg" >"$dir/.package"
				printf '%s\n' "$ver" >"$dir/.version"
				printf '%s\n' "${debs[@]}" >"$dir/.debs"
				touch "$dir/.unpacked"
			fi
		fi
	fi
	if [[ -n $why ]]; then
		dir=$(_suite_cached "$series" | tail -n1)
		[[ -n $dir ]] ||
			hibvm_die "cannot get the $series kernel: $why, and none is cached in $root"
		dir=$root/$dir
		hibvm_info "tests/vm: $series: $why; using the newest cached one, $(cat "$dir/.package") $(cat "$dir/.version")"
	elif ((fresh == 0)); then
		hibvm_info "tests/vm: $series: $pkg $ver, from the lists fetched $(_suite_lists_date "$series") (could not fetch newer ones)"
	else
		hibvm_info "tests/vm: $series: $pkg $ver (Debian $suite, lists fetched $(_suite_lists_date "$series"))"
	fi
	ln -sfn "$(basename "$dir")" "$root/current"
	_suite_prune "$series" "$dir"
	printf '%s\n' "$dir"
}

# _suite_cached SERIES: the kernels unpacked in kernels/SERIES, oldest first.
_suite_cached() {
	local d
	for d in "$HIBVM_CACHE/kernels/$1/"*/.unpacked; do
		[[ -e $d ]] || continue
		d=${d%/.unpacked}
		printf '%s\n' "${d##*/}"
	done | sort -V
}

# _suite_prune SERIES DIR: unstable (and backports) move on every few weeks;
# of the kernels unpacked in kernels/SERIES keep DIR (the current one) and the newest
# other one (a run started a moment earlier may still use it), and remove
# the rest with their .debs and base initramfs.
_suite_prune() {
	local series=$1 current=$2 root=$HIBVM_CACHE/kernels/$1 d n=0 f
	while read -r d; do
		[[ -n $d && $root/$d != "$current" ]] || continue
		n=$((n + 1))
		((n > 1)) || continue
		hibvm_info "tests/vm: removing $d from the cache: no longer the newest"
		if [[ -f $root/$d/.debs ]]; then
			while read -r f; do
				[[ $f == "$HIBVM_CACHE/debs/"* ]] && rm -f "$f"
			done <"$root/$d/.debs"
		fi
		rm -f "$HIBVM_CACHE/initramfs/$d-base-"*.cpio*
		rm -rf "${root:?}/$d"
	done < <(_suite_cached "$series" | tac)
}

# kernel_prepare SERIES: make sure the kernel of SERIES is unpacked in the
# cache, and set
#   KERNEL_SERIES KERNEL_PKG KERNEL_VERSION (of the package, if known)
#   KERNEL_RELEASE (uname -r) KERNEL_DIR KERNEL_ID (its name)
#   KERNEL_VMLINUZ KERNEL_MODDIR KERNEL_LABEL ("6.12 6.12.107+deb12-amd64")
# The first call of a run picks the kernel; later ones reuse it.
kernel_prepare() {
	local series=$1 dir
	[[ " $HIBVM_SERIES_KNOWN " == *" $series "* ]] ||
		hibvm_die "unknown kernel series '$series' (known: $HIBVM_SERIES_KNOWN)"
	dir=${HIBVM_KERNEL_DIRS[$series]:-}
	if [[ -z $dir || ! -e $dir/.unpacked ]]; then
		mkdir -p "$HIBVM_CACHE/debs" "$HIBVM_CACHE/kernels"
		dir=$(
			{
				# One fetch at a time, also across parallel runs.
				flock 9
				case $series in
				newest | backports) _kernel_fetch_suite "$series" ;;
				*) _kernel_fetch_deb "$series" ;;
				esac
			} 9>"$HIBVM_CACHE/.lock"
		) || return 1
	fi
	[[ -n $dir && -e $dir/.unpacked ]] || hibvm_die "no $series kernel unpacked (${dir:-nothing})"

	KERNEL_SERIES=$series
	KERNEL_DIR=$dir
	KERNEL_ID=$(basename "$dir")
	KERNEL_PKG=$(cat "$dir/.package" 2>/dev/null || echo "$KERNEL_ID")
	KERNEL_VERSION=$(cat "$dir/.version" 2>/dev/null || true)
	# Debian's packages up to bookworm: boot/vmlinuz-<release> and
	# lib/modules/<release>; trixie's (backports 6.16-6.18, in one piece):
	# boot/vmlinuz-<release> and usr/lib/modules/<release>; split packages
	# (unstable, backports from 6.19): usr/lib/modules/<release>/ holds
	# vmlinuz and the modules.
	KERNEL_VMLINUZ=$(compgen -G "$dir/boot/vmlinuz-*" | head -n1 || true)
	if [[ -n $KERNEL_VMLINUZ ]]; then
		KERNEL_RELEASE=${KERNEL_VMLINUZ##*/vmlinuz-}
		KERNEL_MODDIR=$dir/lib/modules/$KERNEL_RELEASE
		[[ -d $KERNEL_MODDIR ]] || KERNEL_MODDIR=$dir/usr/lib/modules/$KERNEL_RELEASE
	else
		KERNEL_VMLINUZ=$(compgen -G "$dir/usr/lib/modules/*/vmlinuz" | head -n1 || true)
		KERNEL_RELEASE=$(basename "$(dirname "${KERNEL_VMLINUZ:-/none/none}")")
		KERNEL_MODDIR=$dir/usr/lib/modules/$KERNEL_RELEASE
	fi
	KERNEL_LABEL="$series $KERNEL_RELEASE"
	[[ -f $KERNEL_VMLINUZ && -d $KERNEL_MODDIR ]] ||
		hibvm_die "kernel $KERNEL_PKG unpacked badly in $KERNEL_DIR (no vmlinuz or modules directory)"
	KERNEL_ELF_OF=$KERNEL_VMLINUZ
	KERNEL_ELF=$(kernel_boot_elf "$dir" "$KERNEL_VMLINUZ")
	HIBVM_KERNEL_DIRS[$series]=$dir
}

# kernel_boot_elf DIR VMLINUZ: the uncompressed ELF kernel inside the bzImage
# VMLINUZ (DIR/.boot-elf, unpacked once), when it can boot through the PVH
# entry (CONFIG_PVH: a XEN_ELFNOTE_PHYS32_ENTRY note); nothing when it cannot
# (no such note, a payload not unpacked), and the bzImage boots.  Why: under
# TCG a Debian bzImage spends ~6 s of every boot decompressing itself (xz or
# zstd, emulated); the ELF starts at once.  The kernel is the same; what the
# boot path leaves out is the decompressor's work, KASLR among it.
# HIBERNATE_VM_PVH=0: always the bzImage.
kernel_boot_elf() {
	local dir=$1 bz=$2 elf=$1/.boot-elf
	[[ ${HIBERNATE_VM_PVH:-1} == 1 ]] || return 0
	if [[ ! -e $elf && ! -e $elf.none ]]; then
		(
			flock 9
			[[ -e $elf || -e $elf.none ]] || _kernel_unpack_elf "$bz" "$elf"
		) 9>"$dir/.boot-elf.lock"
	fi
	[[ -s $elf ]] && printf '%s\n' "$elf"
	return 0
}

# _kernel_unpack_elf BZIMAGE OUT: OUT = the bzImage's payload (the boot
# protocol's payload_offset and payload_length, from the protected-mode code
# at (setup_sects + 1) * 512), decompressed, when it is an ELF with the PVH
# note; else OUT.none, with the reason.
_kernel_unpack_elf() {
	local bz=$1 out=$2 sects off len magic dec why=
	sects=$(od -An -tu1 -j $((0x1f1)) -N1 "$bz" | tr -d ' ')
	((sects)) || sects=4
	off=$(od -An -tu4 -j $((0x248)) -N4 "$bz" | tr -d ' ')
	len=$(od -An -tu4 -j $((0x24c)) -N4 "$bz" | tr -d ' ')
	off=$(((sects + 1) * 512 + off))
	magic=$(od -An -tx1 -j "$off" -N4 "$bz" | tr -d ' ')
	case $magic in
	fd377a58) dec=(xz -dcq --single-stream) ;;
	28b52ffd) dec=(zstd -dcq) ;;
	1f8b*) dec=(gzip -dcq) ;;
	*) why="payload compressed as '$magic', not xz, zstd or gzip" ;;
	esac
	if [[ -z $why ]]; then
		# The payload ends in the kernel's 4-byte size, which zstd and gzip
		# call trailing garbage after writing all of the kernel: the ELF's
		# own check below decides.
		tail -c +$((off + 1)) "$bz" | head -c "$len" | "${dec[@]}" >"$out.tmp" 2>/dev/null || true
		if [[ $(od -An -tx1 -N4 "$out.tmp" | tr -d ' ') != 7f454c46 ]]; then
			why="payload not unpacked to an ELF"
		elif ! readelf -n "$out.tmp" 2>/dev/null | grep -Eq 'Xen.*(0x00000012|PHYS32)'; then
			why="no PVH entry note (CONFIG_PVH)"
		fi
	fi
	if [[ -n $why ]]; then
		rm -f "$out.tmp"
		printf '%s\n' "$why" >"$out.none"
		hibvm_info "tests/vm: $bz boots as the bzImage: $why"
		return 0
	fi
	mv "$out.tmp" "$out"
}

# ---------------------------------------------------------------- modules

# Fill HIBVM_KO[name]=path for every module file of the current kernel and
# HIBVM_BUILTIN[name]=1 for the built-in ones.  Module names use '_' where
# file names may use '-'.
_modules_index() {
	declare -gA HIBVM_KO=() HIBVM_BUILTIN=()
	local f name
	while IFS= read -r f; do
		name=${f##*/}; name=${name%.xz}; name=${name%.ko}; name=${name//-/_}
		HIBVM_KO[$name]=$f
	done < <(find "$KERNEL_MODDIR/kernel" -name '*.ko' -o -name '*.ko.xz')
	while IFS= read -r f; do
		name=${f##*/}; name=${name%.ko}; name=${name//-/_}
		HIBVM_BUILTIN[$name]=1
	done <"$KERNEL_MODDIR/modules.builtin"
}

# The .modinfo strings of a module file.
_modinfo() {
	case $1 in
	*.xz) xz -dc "$1" ;;
	*) cat "$1" ;;
	esac | tr '\0' '\n' | grep -a -E '^[a-z_]+='
}

# _modules_have NAME...: does the kernel have them (as modules or built in)?
_modules_have() {
	local m
	for m in "$@"; do
		m=${m//-/_}
		[[ -n ${HIBVM_KO[$m]:-} || -n ${HIBVM_BUILTIN[$m]:-} ]] || return 1
	done
}

# _modules_resolve NAME...: print the module names to load, dependencies
# first, each once, built-ins left out.
_modules_resolve() {
	declare -gA _seen=()
	local m
	for m in "$@"; do _modules_visit "$m"; done
}
_modules_visit() {
	local m=${1//-/_} info dep alias cand
	[[ -n ${_seen[$m]:-} ]] && return 0
	_seen[$m]=1
	[[ -n ${HIBVM_BUILTIN[$m]:-} ]] && return 0
	[[ -n ${HIBVM_KO[$m]:-} ]] ||
		hibvm_die "module $m not found in $KERNEL_PKG"
	info=$(_modinfo "${HIBVM_KO[$m]}")
	# softdep=pre: a b post: c -> the "pre" ones we know an alias for.
	# shellcheck disable=SC2013 # words, not lines
	for alias in $(sed -n 's/^softdep=pre: *//p' <<<"$info" | sed 's/ post:.*//'); do
		for cand in ${HIBVM_MODALIAS[$alias]:-}; do
			if _modules_have "$cand"; then
				_modules_visit "$cand"
				break
			fi
		done
	done
	for dep in $(sed -n 's/^depends=//p' <<<"$info" | tr ',' ' '); do
		_modules_visit "$dep"
	done
	printf '%s\n' "$m"
}

# ---------------------------------------------------------------- initramfs

# Path of the cached base initramfs (busybox + modules) of the current kernel;
# built on first use.  Its name carries what it was built from.
initramfs_base() {
	local bb=/bin/busybox key base
	[[ -x $bb ]] || hibvm_die "$bb missing: apt-get install busybox-static"
	[[ $(file -b "$bb" 2>/dev/null) == *dynamically* ]] &&
		hibvm_die "$bb is not static: apt-get install busybox-static"
	key=$( { echo "$HIBVM_BASE_FORMAT"; stat -c '%s %Y' "$bb"
		declare -p HIBVM_MODSETS HIBVM_MODALIAS HIBVM_MODSETS_OPTIONAL; } | sha256sum | cut -c1-12)
	base=$HIBVM_CACHE/initramfs/$KERNEL_ID-base-$key.cpio
	if [[ ! -s $base ]]; then
		# One builder at a time, also across parallel runs: two would write
		# the same $base.tmp.
		mkdir -p "$HIBVM_CACHE/initramfs"
		(
			flock 9
			[[ -s $base ]] || _initramfs_build_base "$base"
		) 9>"$HIBVM_CACHE/initramfs/.lock" || return 1
	fi
	printf '%s\n' "$base"
}

_initramfs_build_base() {
	local out=$1 stage set m applet
	stage=$(mktemp -d "${TMPDIR:-/tmp}/hibvm-base.XXXXXX")
	mkdir -p "$stage"/{bin,dev,proc,sys,run,tmp,mnt,lib/modules,etc/hibtest}
	ln -s bin "$stage/sbin"
	ln -s ../bin "$stage/usr" 2>/dev/null || true
	# /dev/console must exist before /init runs: the kernel opens it as
	# init's stdin/stdout/stderr, and devtmpfs is mounted only by /init.
	mknod -m 600 "$stage/dev/console" c 5 1
	cp /bin/busybox "$stage/bin/busybox"
	for applet in $(/bin/busybox --list); do
		# `busybox --list` names busybox itself.
		[[ $applet == busybox ]] && continue
		ln -sf busybox "$stage/bin/$applet"
	done
	_modules_index
	for set in "${!HIBVM_MODSETS[@]}"; do
		# shellcheck disable=SC2086 # the set's module names, as words
		if [[ " $HIBVM_MODSETS_OPTIONAL " == *" $set "* ]] && ! _modules_have ${HIBVM_MODSETS[$set]}; then
			hibvm_info "tests/vm: $KERNEL_PKG has no ${HIBVM_MODSETS[$set]}: module set '$set' left out"
			continue
		fi
		# shellcheck disable=SC2086 # as above
		_modules_resolve ${HIBVM_MODSETS[$set]} >"$stage/etc/hibtest/modules.$set"
		while read -r m; do
			# busybox insmod cannot read .ko.xz: decompress here.
			case ${HIBVM_KO[$m]} in
			*.xz) xz -dc "${HIBVM_KO[$m]}" >"$stage/lib/modules/$m.ko" ;;
			*) cp "${HIBVM_KO[$m]}" "$stage/lib/modules/$m.ko" ;;
			esac
		done <"$stage/etc/hibtest/modules.$set"
	done
	echo "$KERNEL_RELEASE" >"$stage/etc/hibtest/kernel"
	_initramfs_moddep "$stage"
	mkdir -p "$(dirname "$out")"
	# Older bases of this kernel (built by an older lib.sh) are garbage now;
	# before the new one is written, which the pattern matches too.
	rm -f "$HIBVM_CACHE/initramfs/$KERNEL_ID-base-"*.cpio*
	(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
		cpio -o -H newc --owner=0:0 --quiet) >"$out.tmp"
	mv "$out.tmp" "$out"
	rm -rf "$stage"
}

# _initramfs_moddep STAGE: /lib/modules/<uname -r>/ as modprobe wants it
# (busybox modprobe, as the shipped 50-modules hook calls it in the guest):
# every module of the base (links to /lib/modules/NAME.ko, where /init's
# insmod finds them), a modules.dep ("m.ko: deps", the one loaded first
# last, as depmod writes it) and the kernel's modules.builtin.
_initramfs_moddep() {
	local stage=$1 dir m f deps
	dir=$stage/lib/modules/$KERNEL_RELEASE
	mkdir -p "$dir"
	cp "$KERNEL_MODDIR/modules.builtin" "$dir/"
	: >"$dir/modules.dep"
	for f in "$stage"/lib/modules/*.ko; do
		[[ -e $f ]] || continue
		m=$(basename "$f" .ko)
		ln -s "../$m.ko" "$dir/$m.ko"
		deps=$(_modules_resolve "$m" | { grep -vx "$m" || true; } | tac | sed 's/$/.ko/' | paste -sd' ')
		echo "$m.ko:${deps:+ $deps}" >>"$dir/modules.dep"
	done
}

# initramfs_build OUT: the boot initramfs of the current kernel, as two
# concatenated cpio archives (the kernel unpacks them in turn): the cached
# base, then this run's /init, guest scripts and hibernate binary.  Rebuilt
# per scenario run, so edits to the binary or scripts always count.  Not
# compressed: the guest would inflate them emulated, on every boot.
initramfs_build() {
	local out=$1 base stage
	base=$(initramfs_base) || return 1
	stage=$(mktemp -d "${TMPDIR:-/tmp}/hibvm-top.XXXXXX")
	mkdir -p "$stage/bin" "$stage/scenarios" "$stage/lib/hibtest"
	install -m 755 "$HIBVM_DIR/guest/init" "$stage/init"
	install -m 644 "$HIBVM_DIR/guest/"*.sh "$stage/lib/hibtest/"
	install -m 755 "$HIBVM_DIR/scenarios/"*.sh "$stage/scenarios/"
	if [[ -x $HIBVM_BINARY ]]; then
		install -m 755 "$HIBVM_BINARY" "$stage/bin/hibernate"
	fi
	if [[ -x $HIBVM_TEST_BINARY ]]; then
		install -m 755 "$HIBVM_TEST_BINARY" "$stage/bin/hibernate-test"
	fi
	# A scenario may add files of its own (scenario_initramfs STAGE-DIR).
	if declare -F scenario_initramfs >/dev/null; then
		scenario_initramfs "$stage" || hibvm_die "scenario_initramfs failed"
	fi
	{
		cat "$base"
		(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
			cpio -o -H newc --owner=0:0 --quiet)
	} >"$out"
	rm -rf "$stage"
}

# True when the static binary exists and is static (a dynamic one would not
# start in the initramfs, which has no libc).
binary_ready() {
	[[ -x $HIBVM_BINARY ]] || return 1
	[[ $(file -b "$HIBVM_BINARY" 2>/dev/null) != *"dynamically linked"* ]]
}

# ---------------------------------------------------------------- disk

# Partition 1 (vda1): swap, 1 GiB.  Partition 2 (vda2): 256 MiB, free for
# scenarios (ext4 with a swapfile, a plain file target...).
HIBVM_P1_START_MIB=1
HIBVM_P1_SIZE_MIB=1024
HIBVM_P2_START_MIB=$((HIBVM_P1_START_MIB + HIBVM_P1_SIZE_MIB))
HIBVM_P2_SIZE_MIB=256

# disk_create IMG: a sparse raw disk with a GPT and a real swap area
# (util-linux mkswap: SWAPSPACE2, version 1, with a UUID) on partition 1.
disk_create() {
	local img=$1 tmp
	rm -f "$img"
	truncate -s $((HIBVM_P2_START_MIB + HIBVM_P2_SIZE_MIB + 1))M "$img"
	sfdisk --quiet --no-reread --no-tell-kernel "$img" <<-EOF
		label: gpt
		start=${HIBVM_P1_START_MIB}MiB, size=${HIBVM_P1_SIZE_MIB}MiB, type=swap, name=swap
		start=${HIBVM_P2_START_MIB}MiB, size=${HIBVM_P2_SIZE_MIB}MiB, type=linux, name=data
	EOF
	# mkswap needs a device or file of the partition's size; the header is
	# the first page only, so make it in a sparse file and copy that page.
	tmp=$(mktemp "${TMPDIR:-/tmp}/hibvm-swap.XXXXXX")
	truncate -s ${HIBVM_P1_SIZE_MIB}M "$tmp"
	mkswap -q "$tmp" >/dev/null 2>&1 || { rm -f "$tmp"; hibvm_die "mkswap failed"; }
	dd if="$tmp" of="$img" bs=4096 count=1 seek=$((HIBVM_P1_START_MIB * 256)) \
		conv=notrunc status=none
	rm -f "$tmp"
}

# disk_mkfs_ext4 IMG [MKFS-OPTIONS...]: an ext4 filesystem on partition 2
# (vda2), made on the host (mke2fs writes into the image at the offset).
disk_mkfs_ext4() {
	local img=$1; shift
	mkfs.ext4 -q -F -E offset=$((HIBVM_P2_START_MIB * 1048576)) "$@" "$img" "${HIBVM_P2_SIZE_MIB}M" ||
		hibvm_die "mkfs.ext4 on partition 2 of $img failed"
}

# disk_mkfs_p2 IMG TYPE [MKFS-OPTIONS...]: a TYPE (xfs, btrfs...) filesystem
# on partition 2, for mkfs programs that cannot write at an offset: made in
# a sparse file of the partition's size, then copied in (zeros skipped: the
# image is sparse and zero there already).  Scenarios that need a larger
# vda2 set HIBVM_P2_SIZE_MIB at the top of their .host file (mkfs.xfs wants
# 300 MB at least).
disk_mkfs_p2() {
	local img=$1 type=$2 tmp
	shift 2
	tmp=$(mktemp "${TMPDIR:-/tmp}/hibvm-p2.XXXXXX")
	truncate -s "${HIBVM_P2_SIZE_MIB}M" "$tmp"
	if ! "mkfs.$type" "$@" "$tmp" >"$tmp.log" 2>&1; then
		local why
		why=$(tail -n 3 "$tmp.log" | paste -sd' ')
		rm -f "$tmp" "$tmp.log"
		hibvm_die "mkfs.$type on partition 2 of $img failed: $why"
	fi
	dd if="$tmp" of="$img" bs=1M seek="$HIBVM_P2_START_MIB" conv=notrunc,sparse status=none
	rm -f "$tmp" "$tmp.log"
}

# disk_page_sig IMG BYTE-OFFSET: the signature (last 10 bytes, printable) of
# the page at BYTE-OFFSET of the disk image, read on the host: what the disk
# really holds, whatever a guest's page cache says.
disk_page_sig() {
	dd if="$1" bs=4096 count=1 skip="$2" iflag=skip_bytes status=none |
		tail -c 10 | tr -c 'A-Za-z0-9_\n' '.'
}

# disk_hash IMG: a hash of the whole disk image, to see whether a boot wrote
# to it (no adversary: a fast hash will do).  XXH128 (xxhsum -H2): 0.3 s for
# the sparse 1.3 GB image here, where b2sum took 4.5 s.
disk_hash() {
	xxhsum -H2 "$1" | cut -d' ' -f1
}

# ---------------------------------------------------------------- QEMU

# vm_boot N [EXTRA-CMDLINE...]
# Boots the VM once with hibtest.scenario=$SCENARIO hibtest.boot=N.
# Needs VM_INITRD, VM_DISK, VM_LOGDIR, SCENARIO, KERNEL_VMLINUZ; optional
# VM_APPEND (extra cmdline for every boot of the scenario), VM_DRIVE_OPTS
# (more -drive properties, e.g. "throttling.bps-write=20000000") and
# VM_CONSOLE_IN (QEMU's stdin instead of /dev/null: see vm_console_open),
# VM_FIRMWARE_BOOT=1 (no -kernel: the disk's boot loader; see below).
# Writes $VM_LOGDIR/bootN.log (the console), bootN.marks ("<host time>
# key=value" for each HIBTEST line as it arrived) and bootN.times (host
# times QEMU started and ended; also in $VM_BOOT_START and $VM_BOOT_END).  Returns 0 when QEMU exited by itself, 1 on timeout (then
# VM_BOOT_ERROR says so, with the last console lines).
# VERBOSE=1 tees the console to stderr.
vm_boot() {
	local n=$1; shift
	local log=$VM_LOGDIR/boot$n.log marks=$VM_LOGDIR/boot$n.marks
	local rcfile=$VM_LOGDIR/.boot$n.rc
	# cryptomgr.notests: no self-test of each kernel crypto algorithm as it
	# registers, 0.5 s of every boot under TCG (crypto_algapi_init and the
	# KDF's own, initcall_debug on 6.1).
	local append="console=ttyS0 quiet no_console_suspend panic=-1 cryptomgr.notests"
	append+=" hibtest.scenario=$SCENARIO hibtest.boot=$n ${VM_APPEND:-} $*"
	# VM_FIRMWARE_BOOT=1: the firmware (SeaBIOS) boots the disk's own boot
	# loader, whose command line the guest gets; hibtest.scenario and
	# hibtest.boot then reach the guest as QEMU fw_cfg files
	# (/sys/firmware/qemu_fw_cfg/by_name/opt/hibtest/{scenario,boot}/raw).
	# The series kernel boots as its ELF (kernel_boot_elf) on a machine
	# that takes it; a scenario's own kernel (KERNEL_VMLINUZ set by the
	# scenario) boots as the bzImage.
	local kernel=$KERNEL_VMLINUZ
	[[ -n ${KERNEL_ELF:-} && $KERNEL_VMLINUZ == "${KERNEL_ELF_OF:-}" ]] && _vm_pvh_ok &&
		kernel=$KERNEL_ELF
	local boot_args=(-kernel "$kernel" -initrd "$VM_INITRD" -append "$append")
	if [[ ${VM_FIRMWARE_BOOT:-0} == 1 ]]; then
		boot_args=(-boot c -fw_cfg "name=opt/hibtest/scenario,string=$SCENARIO"
			-fw_cfg "name=opt/hibtest/boot,string=$n")
	fi
	local tee_to=("$log")
	[[ ${VERBOSE:-0} != 0 ]] && tee_to+=(/dev/stderr)
	local attempt=0 rc
	VM_BOOT_ERROR=
	while :; do
	: >"$log"; : >"$marks"; rm -f "$rcfile"
	VM_BOOT_START=$EPOCHREALTIME
	local pidfile=$VM_LOGDIR/.qemu$n.pid silent=$VM_LOGDIR/.boot$n.silent watchdog=
	local oopsfile=$VM_LOGDIR/.boot$n.oops
	rm -f "$pidfile" "$silent" "$oopsfile"
	if ((HIBVM_INIT_TIMEOUT > 0)); then
		# No line from /init in time: stop QEMU (SIGTERM: it exits at once).
		(
			end=$((SECONDS + HIBVM_INIT_TIMEOUT))
			while ((SECONDS < end)); do
				[[ -s $marks || -e $rcfile ]] && exit 0
				sleep 0.5
			done
			touch "$silent"
			[[ -s $pidfile ]] && kill "$(cat "$pidfile")" 2>/dev/null
			exit 0
		) &
		watchdog=$!
	fi
	{
		local rc=0
		# -k: QEMU gets SIGTERM at the limit and SIGKILL 5 s later.
		# VM_QEMU_ARGS (e.g. disk throttling) is split into words on purpose.
		# shellcheck disable=SC2086
		timeout -k 5 "$HIBVM_TIMEOUT" qemu-system-x86_64 \
			-accel tcg -machine "$HIBVM_MACHINE" -m "$HIBVM_MEM" -smp "$HIBVM_SMP" \
			-nographic -no-reboot -nic none \
			"${boot_args[@]}" \
			-drive "file=$VM_DISK,if=virtio,format=raw${VM_DRIVE_OPTS:+,$VM_DRIVE_OPTS}" \
			-pidfile "$pidfile" \
			${VM_QEMU_ARGS:-} <"${VM_CONSOLE_IN:-/dev/null}" 2>&1 || rc=$?
		echo "$rc" >"$rcfile"
	} | tee -a "${tee_to[@]}" | _vm_stamp "$marks"
	VM_BOOT_END=$EPOCHREALTIME
	if [[ -n $watchdog ]]; then
		kill "$watchdog" 2>/dev/null
		wait "$watchdog" 2>/dev/null
	fi
	echo "start=$VM_BOOT_START end=$VM_BOOT_END" >"$VM_LOGDIR/boot$n.times"
	rc=$(cat "$rcfile" 2>/dev/null || echo '?')
	rm -f "$rcfile" "$pidfile"
	# Stopped by the watchdog: a timeout, whatever QEMU's exit status.
	local silent_stop=0
	if [[ -e $silent ]]; then
		rm -f "$silent"
		silent_stop=1 rc=124
	fi
	# QEMU's TCG now and then crashes a 6.12 guest while the kernel patches
	# its own text on two CPUs ("Oops: int3" in early boot, seen in CI), or
	# hangs a guest before it prints anything (6.1, seen in CI on a loaded
	# host: "Booting from ROM.." and silence until the timeout).  A kernel
	# that panicked or hung before /init printed its first line never ran
	# our code and never touched the disk: boot it once more, and say so.
	local why='' crash=''
	[[ -s $oopsfile ]] && crash=$(cut -d' ' -f2- "$oopsfile")
	rm -f "$oopsfile"
	if [[ ! -s $marks ]] && ((attempt < ${HIBVM_BOOT_RETRIES:-1})); then
		if [[ $rc == 0 ]] && grep -aq 'Kernel panic' "$log"; then
			why="the kernel panicked before /init ($(kernel_panic_line "$log"))"
		elif [[ -n $crash ]]; then
			why="the kernel crashed before /init ($crash)"
		elif ((silent_stop)); then
			why="the kernel hung before /init (no line from /init in ${HIBVM_INIT_TIMEOUT}s; last console lines: $(log_tail "$log" 2))"
		fi
	fi
	if [[ -n $why ]]; then
		attempt=$((attempt + 1))
		cp "$log" "$VM_LOGDIR/boot$n.crash$attempt.log"
		echo "tests/vm: $SCENARIO boot $n: $why; booting again (log: $VM_LOGDIR/boot$n.crash$attempt.log)" >&2
		echo "boot $n: $why" >>"$VM_LOGDIR/boot-retries"
		continue
	fi
	break
	done
	# The guest kernel crashed: the boot was ended a few seconds after the
	# first line that says so (or the kernel's panic=-1 ended it).
	if [[ -n $crash ]]; then
		VM_BOOT_ERROR="the guest kernel crashed in boot $n: $crash$(kernel_warning_note "$log" " (after ")"
		VM_BOOT_ERROR+="; boot ended $(elapsed "$VM_BOOT_START" "$VM_BOOT_END")s in, not at the ${HIBVM_TIMEOUT}s timeout"
		return 1
	fi
	if [[ $rc == 124 || $rc == 137 ]]; then
		if ((silent_stop)); then
			VM_BOOT_ERROR="timeout in boot $n: no line from /init in ${HIBVM_INIT_TIMEOUT}s; last console lines: $(log_tail "$log" 5)"
		else
			VM_BOOT_ERROR="timeout in boot $n (${HIBVM_TIMEOUT}s)$(kernel_warning_note "$log" " after a guest kernel warning (")"
			VM_BOOT_ERROR+="; last console lines: $(log_tail "$log" 5)"
		fi
		return 1
	fi
	if [[ $rc != 0 ]]; then
		VM_BOOT_ERROR="QEMU failed in boot $n (exit $rc): $(log_tail "$log" 5)"
		return 1
	fi
	return 0
}

# _vm_pvh_ok: QEMU 7.2 boots this machine (VM_QEMU_ARGS) right through the
# PVH entry.  Two machines it does not:
#   - one that can suspend to RAM (disable_s3=0): the kernel never comes
#     back from S3 (after system_wakeup, not a line more; powerdown-modes,
#     2 of 2 runs on 6.1), where the bzImage does;
#   - one with a TPM (-tpmdev): the initrd is loaded over the ACPI tables,
#     the RSDT names a table of length 0 ("ACPI BIOS Error (bug): Invalid
#     table length 0x0 in RSDT/XSDT"), the kernel disables ACPI and finds
#     no TPM (with an empty initrd the tables are intact).
_vm_pvh_ok() {
	[[ " ${VM_QEMU_ARGS:-} " != *disable_s3=0* && " ${VM_QEMU_ARGS:-} " != *" -tpmdev "* ]]
}

# vm_console_open: from now on QEMU's stdin is a FIFO that this shell holds
# open (so QEMU never sees EOF, and opening it never blocks); what
# vm_console_send writes reaches the guest's serial console as typed input.
# With -nographic the QEMU monitor is multiplexed on the same stream:
# vm_monitor_cmd switches to it (Ctrl-A c), sends one command, switches back.
vm_console_open() {
	VM_CONSOLE_IN=$VM_LOGDIR/console.in
	rm -f "$VM_CONSOLE_IN"
	mkfifo "$VM_CONSOLE_IN"
	exec {VM_CONSOLE_FD}<>"$VM_CONSOLE_IN"
}

# vm_console_send BYTES: type BYTES (printf %b escapes, e.g. '\033' for Esc).
vm_console_send() {
	printf '%b' "$1" >&"$VM_CONSOLE_FD"
}

# vm_monitor_cmd COMMAND: one QEMU monitor command (e.g. system_wakeup).
vm_monitor_cmd() {
	printf '\001c%s\r\001c' "$1" >&"$VM_CONSOLE_FD"
}

# Reads the console stream; for every HIBTEST line records the host time it
# arrived (bash's $EPOCHREALTIME: no fork per line).  Used for the demo's
# timings: "mark" lines printed right before the step to time.
#
# The stream is cut at '\r' rather than '\n': the guest's tty turns every
# '\n' into "\r\n", so a line is seen as soon as it is complete, and a
# progress bar that redraws itself with a bare '\r' shows each update.
# A caller may define vm_on_piece NL TEXT to watch the console live (the
# demo does): NL=1 when TEXT starts a new line, 0 when it redraws the
# current one.
_vm_stamp() {
	local marks=$1 seg nl hook=
	declare -F vm_on_piece >/dev/null && hook=1
	while IFS= read -r -d $'\r' seg || [[ -n $seg ]]; do
		nl=0
		if [[ $seg == $'\n'* ]]; then
			nl=1
			seg=${seg#$'\n'}
		fi
		# Output that did not pass through the tty may hold bare '\n's.
		while [[ $seg == *$'\n'* ]]; do
			_vm_piece "$nl" "${seg%%$'\n'*}"
			seg=${seg#*$'\n'}
			nl=1
		done
		_vm_piece "$nl" "$seg"
	done
	return 0
}
_vm_piece() {
	if [[ $2 == *"HIBTEST "* ]]; then
		printf '%s %s\n' "$EPOCHREALTIME" "${2#*HIBTEST }" >>"$marks"
	fi
	case $2 in
	*"Oops: "* | *"Kernel panic"* | *"general protection"* | *BUG* | *exc_debug_kernel*)
		[[ -n ${oopsfile:-} && ! -e $oopsfile && $2 =~ $HIBVM_OOPS_RE ]] && _vm_oops "$2"
		;;
	esac
	[[ -z $hook ]] || vm_on_piece "$1" "$2"
}

# _vm_oops LINE: the guest kernel crashed (LINE matched HIBVM_OOPS_RE).
# Notes the first such line in vm_boot's $oopsfile ("<host time> LINE") and
# stops QEMU HIBVM_OOPS_GRACE seconds later, so the trace is in the log and
# the boot ends now rather than at its timeout (an oops in a process does
# not stop the kernel: the scenario would wait for a step that never comes).
# A panic ends QEMU by itself (panic=-1, -no-reboot); the QEMU stopped is the
# one running now, even if vm_boot has started another meanwhile.
_vm_oops() {
	local line=${1#*"] "} pid
	[[ $line == "["*"] "* ]] && line=${line#*"] "}
	line=${line%$'\r'}
	printf '%s %s\n' "$EPOCHREALTIME" "$line" >"$oopsfile"
	pid=$(cat "$pidfile" 2>/dev/null) || return 0
	[[ -n $pid ]] || return 0
	(
		sleep "$HIBVM_OOPS_GRACE"
		kill "$pid" 2>/dev/null
	) </dev/null >/dev/null 2>&1 &
}

# kernel_warning_note LOG PREFIX: PREFIX, the guest kernel's first
# "WARNING: CPU:" line, ")" (nothing when there is none): the kernel's first
# complaint, which is often the cause of what follows.
kernel_warning_note() {
	local w
	w=$(grep -a -m1 -o 'WARNING: CPU: .*' "$1" | tr -d '\r') || return 0
	[[ -n $w ]] && printf '%s%s)' "$2" "$w"
	return 0
}

# ---------------------------------------------------------------- protocol

# hib_get LOG KEY: value of the last "HIBTEST KEY=value" line (empty if none;
# status 1 when there is no such line).
hib_get() {
	local v
	v=$(hib_get_all "$1" "$2" | tail -n1)
	[[ -n $v ]] || return 1
	printf '%s\n' "$v"
}

# hib_get_all LOG KEY: every value of KEY, in order.
hib_get_all() {
	sed -n "s/^.*HIBTEST $2=//p" "$1" | tr -d '\r'
}

# hib_has LOG KEY: did the guest print KEY at all?
hib_has() {
	grep -aq "HIBTEST $2=" "$1"
}

# hib_mark_time BOOT-N KEY=VALUE: host time (s.us) the line "HIBTEST KEY=VALUE"
# (or, with just KEY, the first "KEY=..." line) arrived during boot N.
hib_mark_time() {
	local marks=$VM_LOGDIR/boot$1.marks
	awk -v k="$2" '{ s = $0; sub(/^[^ ]* /, "", s) }
		index(k, "=") ? s == k : index(s, k "=") == 1 { print $1; exit }' "$marks"
}

# log_tail LOG N [FROM-KEY=VALUE]: the last N non-empty console lines as a
# terminal would show them (a line redrawn with '\r' shows its last state;
# escape sequences dropped), joined with " | ".  With FROM, only lines after
# the "HIBTEST FROM" line and before the next HIBTEST line: the output of the
# step that FROM marks (e.g. mark=hibernate -> what `hibernate` printed).
log_tail() {
	awk -v from="${3:-}" '{ sub(/\r+$/, ""); n = split($0, part, "\r"); line = part[n]
		gsub(/\033(\[[0-9;?]*[A-Za-z]|c)/, "", line); sub(/[ \t]+$/, "", line) }
		from != "" && !on { if (index(line, "HIBTEST " from) > 0) on = 1; next }
		from != "" && index(line, "HIBTEST ") > 0 { exit }
		line ~ /[^ \t]/ { print line }' "$1" | tail -n "$2" | paste -sd'|' | sed 's/|/ | /g' |
		grep . || echo '(nothing)'
}

# Seconds (3 decimals) between two $EPOCHREALTIME values.
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

# kernel_panic_line LOG: the kernel's first "Oops:" line and its panic line.
kernel_panic_line() {
	grep -a -m1 -o 'Oops: .*' "$1" | tr -d '\r' | sed 's/$/; /' | tr -d '\n'
	grep -a -m1 'Kernel panic' "$1" | tr -d '\r' | sed 's/^.*Kernel panic/Kernel panic/' | tr -d '\n'
}

# Evidence of how a boot ended, for FAIL reasons.
boot_end_note() {
	local log=$1
	if grep -aq 'Kernel panic' "$log"; then
		kernel_panic_line "$log"
	elif hib_has "$log" error; then
		printf 'guest error: %s' "$(hib_get "$log" error)"
	elif grep -aq 'reboot: Power down' "$log"; then
		printf 'guest powered off'
	else
		printf 'guest stopped without "reboot: Power down"'
	fi
}

# ---------------------------------------------------------------- checks
# For the scenario host parts (tests/vm/scenarios/*.host).  They run inside
# tests/vm/run's per-scenario subshell, where fail/skip end the scenario.

# boot_log N: path of boot N's console log.
boot_log() { printf '%s\n' "$VM_LOGDIR/boot$1.log"; }

# need N KEY: value of KEY printed in boot N, or FAIL saying it is missing.
need() {
	local log v
	log=$(boot_log "$1")
	v=$(hib_get "$log" "$2") ||
		fail "boot $1 printed no '$2' ($(boot_end_note "$log"); last lines: $(log_tail "$log" 4); log: $log)"
	printf '%s\n' "$v"
}

# boot_or_fail N [CMDLINE...]: boot N, FAIL on timeout naming the log.
boot_or_fail() {
	local n=$1
	vm_boot "$@" || fail "$VM_BOOT_ERROR (log: $(boot_log "$n"))"
	# A guest-side error line always fails the scenario.
	if hib_has "$(boot_log "$n")" error; then
		fail "boot $n: guest error: $(hib_get "$(boot_log "$n")" error) (log: $(boot_log "$n"))"
	fi
	return 0
}

# check_hibernated N: boot N ran the workload, went to hibernate and the VM
# powered off by itself.  HOW names the hibernation method for messages.
check_hibernated() {
	local n=$1 how=$2 log
	log=$(boot_log "$n")
	need "$n" token >/dev/null
	need "$n" hash >/dev/null
	need "$n" counter >/dev/null
	need "$n" counter_pid >/dev/null
	need "$n" mark >/dev/null
	if hib_has "$log" hibernate_rc; then
		fail "boot $n: $how failed with exit $(hib_get "$log" hibernate_rc), the VM kept running; it printed: $(log_tail "$log" 8 mark=hibernate) (log: $log)"
	fi
	if hib_has "$log" resumed; then
		fail "boot $n: $how returned 0 without powering the VM off (log: $log)"
	fi
	grep -aq 'reboot: Power down' "$log" ||
		fail "boot $n: after $how the VM stopped without powering off ($(boot_end_note "$log")); last lines: $(log_tail "$log" 6) (log: $log)"
}

# check_resumed_workload N M: boot M shows boot N's world resumed: same
# token and data hash, same counter process still ticking from where it was.
check_resumed_workload() {
	local n=$1 m=$2 log2 v
	log2=$(boot_log "$m")
	if ! hib_has "$log2" resumed; then
		fail "boot $m: neither resumed nor returned ($(boot_end_note "$log2")); last lines: $(log_tail "$log2" 6) (log: $log2)"
	fi
	v=$(hib_get "$log2" resumed)
	if [[ $v != 1 ]]; then
		fail "boot $m: no resume: the resume step returned with exit $(hib_get "$log2" resume_rc || echo '?') after $(hib_get "$log2" resume_ms || echo '?') ms; it printed: $(log_tail "$log2" 8 mark=resume) (log: $log2)"
	fi
	local t1 t2 h1 h2 p1 p2 c1 c2 c3
	t1=$(need "$n" token); t2=$(need "$m" token)
	[[ $t1 == "$t2" ]] || fail "boot $m: token after resume '$t2' differs from boot $n's '$t1' (log: $log2)"
	h1=$(need "$n" hash); h2=$(need "$m" hash)
	[[ $h1 == "$h2" ]] || fail "boot $m: tmpfs data hash after resume $h2 differs from $h1 before (log: $log2)"
	p1=$(need "$n" counter_pid); p2=$(need "$m" counter_pid)
	[[ $p1 == "$p2" ]] || fail "boot $m: counter pid $p2 after resume, $p1 before (log: $log2)"
	c1=$(need "$n" counter); c2=$(need "$m" counter); c3=$(need "$m" counter_later)
	[[ $c1 =~ ^[0-9]+$ && $c2 =~ ^[0-9]+$ && $c3 =~ ^[0-9]+$ ]] ||
		fail "boot $m: counter values not numbers: '$c1' '$c2' '$c3' (log: $log2)"
	((c2 >= c1)) || fail "boot $m: counter went back from $c1 to $c2 after resume (log: $log2)"
	((c3 > c2)) || fail "boot $m: counter stopped after resume: $c2 then $c3 $(hib_get "$log2" counter_later_ms || echo '?') ms later (log: $log2)"
	[[ $(need "$m" counter_later_pid) == "$p1" ]] ||
		fail "boot $m: another process writes the counter after resume (log: $log2)"
	[[ $(need "$m" counter_alive) == 1 ]] ||
		fail "boot $m: counter process $p1 is gone after resume (log: $log2)"
}

# check_no_resume N: boot N did not resume and its resume step returned 0
# within MAX_MS (default 1000).
check_no_resume() {
	local n=$1 max=${2:-1000} log rc ms
	log=$(boot_log "$n")
	[[ $(need "$n" resumed) == 0 ]] ||
		fail "boot $n: resumed an image again (log: $log)"
	rc=$(need "$n" resume_rc)
	ms=$(need "$n" resume_ms)
	[[ $rc == 0 ]] || fail "boot $n: resume with no image exited $rc; last lines: $(log_tail "$log" 6) (log: $log)"
	((ms < max)) || fail "boot $n: resume with no image took $ms ms (limit $max ms) (log: $log)"
}

# skip_part PART REASON: a part of the scenario cannot run here (no such
# tool or device in the guest...): the scenario goes on and may still PASS;
# tests/vm/run reports the part as "SKIP <scenario>/<part>: REASON".
skip_part() {
	printf '%s %s\n' "$1" "$2" >>"$VM_LOGDIR/skipped"
}

# check_swap_usable N: boot N saw SWAPSPACE2 on vda1 and swapon worked.
check_swap_usable() {
	local n=$1 log sig
	log=$(boot_log "$n")
	sig=$(need "$n" signature)
	[[ $sig == SWAPSPACE2 ]] || fail "boot $n: swap signature is '$sig', not SWAPSPACE2 (log: $log)"
	[[ $(need "$n" swapon) == ok ]] || fail "boot $n: swapon /dev/vda1: $(hib_get "$log" swapon) (log: $log)"
}

# check_workload_alive N: in boot N the workload was started, something was
# tried that must not have stopped the system (a refused or cancelled
# hibernate), and workload_after_resume then reported it: the same token,
# data and counter process as first reported, still ticking.  (No resume is
# involved: the first and the last values of boot N's log are compared.)
check_workload_alive() {
	local n=$1 log first last p c c2 k
	log=$(boot_log "$n")
	for k in token hash counter_pid; do
		first=$(hib_get_all "$log" "$k" | head -n1)
		last=$(hib_get_all "$log" "$k" | tail -n1)
		[[ -n $first && $first == "$last" ]] ||
			fail "boot $n: workload $k was '$first', later '$last' (log: $log)"
		(($(hib_get_all "$log" "$k" | wc -l) >= 2)) ||
			fail "boot $n: the workload was not reported again after the step (no second '$k'): $(boot_end_note "$log"); last lines: $(log_tail "$log" 4) (log: $log)"
	done
	p=$(need "$n" counter_pid)
	c=$(need "$n" counter); c2=$(need "$n" counter_later)
	[[ $c =~ ^[0-9]+$ && $c2 =~ ^[0-9]+$ ]] || fail "boot $n: counter values '$c' '$c2' (log: $log)"
	((c2 > c)) || fail "boot $n: the workload's counter stopped at $c (log: $log)"
	[[ $(need "$n" counter_later_pid) == "$p" && $(need "$n" counter_alive) == 1 ]] ||
		fail "boot $n: the workload's counter process $p is gone (log: $log)"
}

# log_between LOG FROM [TO]: the console lines after the line that ends in
# "HIBTEST FROM" (exactly, e.g. mark=cancel: not mark=cancel_checks) up to,
# not including, the next line holding "HIBTEST TO" (a prefix, e.g.
# "quiet_rc="), or to the end; '\r' dropped.  The console of one step.  It
# reads the log to its end: an awk that exited at TO left tr a closed pipe,
# which pipefail made a failure (a bench report exited 141).
log_between() {
	tr -d '\r' <"$1" | awk -v from="HIBTEST $2" -v to="${3:+HIBTEST $3}" '
		!on { if (length($0) >= length(from) &&
			  substr($0, length($0) - length(from) + 1) == from) on = 1
		      next }
		to != "" && index($0, to) > 0 { off = 1 }
		!off { print }'
}
