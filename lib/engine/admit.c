// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Target admission: is the target ours to write, by what its page 0 says? A
 * swap area (SWAPSPACE2), or an image file named as the file itself; never
 * one that already holds an image, nor anything else. A swap area must be
 * active, as the kernel hands out only active swap's pages (--auto-swapon
 * turns it on for the cycle). Before a byte is written or a process frozen;
 * prepare checked the device-mapper stack under it first.
 */
#include "engine/suspend-priv.h"

int suspend_check_target(struct hib_target *t, struct hib_snapshot *snap, uint8_t *page,
			 bool auto_swapon)
{
	const char *name = hib_target_name(t);
	enum hib_sig_state st;
	int r;

	if (!hib_target_writable(t))
		return -EBADF;
	r = hib_sig_read(t, page, &st);
	if (r < 0)
		return log_err(r, "%s: unable to read the swap header: %m", name);
	switch (st) {
	case HIB_SIG_SWAP:
		if (hib_target_kind(t) == HIB_TARGET_PLAINFILE)
			return log_err(-EMEDIUMTYPE, "%s: changed under us", name);
		break;
	case HIB_SIG_FILE:
		if (hib_target_kind(t) != HIB_TARGET_PLAINFILE)
			return log_err(-EMEDIUMTYPE,
				       "%s at page %llu holds an image file: name the file "
				       "itself with --device FILE, so its pages can be mapped",
				       hib_target_path(t),
				       (unsigned long long)hib_target_offset_pages(t));
		return 0;
	case HIB_SIG_IMAGE:
	case HIB_SIG_BROKEN:
		return log_err(-EEXIST,
			       "%s already holds a hibernation image; resume it, or discard it "
			       "with: hibernate invalidate --device %s",
			       name, name);
	default:
		/* Named by device and offset: the offset is the likelier mistake. */
		if (hib_target_offset_pages(t) && !hib_target_file(t))
			return log_err(-EMEDIUMTYPE,
				       "%s has no swap header at page %llu (%s); refusing to write "
				       "to it. Check --offset or resume_offset= ('hibernate offset "
				       "FILE' prints it for a swap file)",
				       name, (unsigned long long)hib_target_offset_pages(t),
				       hib_sig_state_name(st));
		return log_err(-EMEDIUMTYPE,
			       "%s is not a swap area (%s); refusing to write to it. Make it one "
			       "with mkswap, or name the right device with --device",
			       name, hib_sig_state_name(st));
	}
	if (hib_snapshot_can(snap, HIB_SNAP_CAP_FREEZES_SYSTEM) && hib_target_is_swap(t)) {
		r = hib_target_swap_active(t, NULL);
		if (r == 0 && auto_swapon) {
			/* Only a named file or device can be turned on; the kernel wants the
			 * swap area active to hand out its pages. */
			if (hib_target_offset_pages(t) && !hib_target_file(t))
				return log_err(-ENXIO,
					       "%s: a swap file named by device and offset cannot "
					       "be turned on: name the file with --device",
					       hib_target_path(t));
			r = hib_target_auto_swapon(t);
			if (r < 0)
				return log_err(r, "swapon %s failed: %m", name);
			log_info("%s: swap turned on for this cycle", name);
			r = 1;
		}
		if (r == 0)
			return log_err(-ENXIO,
				       "%s is not an active swap area; the kernel hands out image "
				       "pages only from active swap: swapon %s (or set "
				       "auto-swapon = yes in /etc/hibernate.conf)",
				       name, name);
	}
	return 0;
}
