/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a block device is built of, read from sysfs: the device-mapper stack
 * under it (LVM, dm-crypt, thin pools), and the stacks hibernate refuses to
 * write an image to. @root prefixes every path ("" or NULL: the running
 * system), so tests can fake /sys.
 */
#ifndef HIB_DMSTACK_H
#define HIB_DMSTACK_H

#include <stdbool.h>
#include <sys/types.h>

#include "hibernate.h"

/* The dm-crypt device at or under a block device. */
struct hib_dm_crypt {
	dev_t dev;      /* the dm-crypt device */
	char name[128]; /* its mapping's name (dm/name: /dev/mapper/NAME) */
	bool lvm_above; /* an LVM volume between the device and it (LV on LUKS) */
	bool lvm_below; /* it maps an LVM volume (LUKS on an LV) */
};

/* 1 and @ret filled when @dev is dm-crypt or stacked on it (slaves followed
 * down through LVM and other dm layers), 0 when it is not. */
int hib_dm_crypt_below(const char *root, dev_t dev, struct hib_dm_crypt *ret);

/* 1 when @dev is an LVM thin volume (its slave is LVM's "-tpool" layer),
 * with the pool's mapping name in @ret_pool; else 0. */
int hib_dm_thin_pool_of(const char *root, dev_t dev, char *ret_pool, size_t len);

/* "dm-crypt through LVM", "dm-crypt on LVM" or "dm-crypt": how @c lies
 * under the device, for messages. */
const char *hib_dm_crypt_how(const struct hib_dm_crypt *c);

/*
 * Can @t hold a new image at all, whatever its signature says: refuses an
 * LVM thin volume, or a file on one (a full pool fails writes while the
 * image is written), and a LUKS container named instead of its opened
 * mapping, each with the reason and the fix in @err. Reads page 0; writes
 * nothing.
 */
int hib_target_check_stack(struct hib_target *t, const char *root, struct hib_error *err);

#endif
