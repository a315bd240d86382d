#!/bin/sh
# dracut pre-mount hook of hibernate(8) (sourced by dracut: no exit here).
# resume=, resume_offset=, noresume and hibernate=no are read from the
# kernel command line by the binary itself (noresume: the image is
# discarded, the boot goes on).  No image: exit 0 at once, nothing touched.
# A failed restore puts the swap signature back and the boot goes on.

# shellcheck source=/dev/null
type getarg >/dev/null 2>&1 || . /lib/dracut-lib.sh

if [ -x /usr/sbin/hibernate ]; then
	if [ -n "$(getarg resume=)" ]; then
		# dracut's resume module waits for the device in the initqueue; wait a
		# little here too, when dracut was built without it.
		hib_dev=$(label_uuid_to_dev "$(getarg resume=)")
		hib_n=0
		while [ ! -b "$hib_dev" ] && [ $hib_n -lt 50 ]; do
			sleep 0.1
			hib_n=$((hib_n + 1))
		done
		unset hib_dev hib_n
	fi
	/usr/sbin/hibernate resume ||
		warn "hibernate resume failed (exit $?): booting normally"
fi
