# shellcheck shell=bash disable=SC2034 # DS_* are read by debian-system.host's functions
# The Debian 13 "trixie" base of the trixie-* scenarios: debian-system.host's
# base (ds_base: debootstrap, cached in $HIBVM_CACHE/debian-system/base-<key>)
# with trixie's package names and trixie's own kernel (its
# linux-image-amd64, 6.12.N+deb13, fetched by debootstrap from the suite),
# systemd 257 with logind and dbus.  Source it from a scenario's .host file
# after nothing else; the scenario then calls ds_base as debian-system does.
# shellcheck source-path=SCRIPTDIR source=debian-system.host
source "$HIBVM_DIR/scenarios/debian-system.host"
# ds_trixie: the DS_* values of trixie (again after a file that sourced
# debian-system.host, which sets bookworm's).
ds_trixie() {
	DS_SUITE=trixie
	DS_KERNEL=suite
	DS_PACKAGES="systemd-sysv,udev,kmod,util-linux,e2fsprogs,initramfs-tools,procps,dbus"
	DS_PACKAGES+=",linux-image-amd64"
	# The package's runtime libraries: trixie renamed the tss2 ones (t64).
	DS_PACKAGES+=",liblz4-1,libzstd1,libxxhash0,libsodium23,liburing2,libblkid1"
	DS_PACKAGES+=",libtss2-esys-3.0.2-0t64,libtss2-mu-4.0.1-0t64,libtss2-rc0t64,libtss2-tcti-device0t64"
}
ds_trixie
