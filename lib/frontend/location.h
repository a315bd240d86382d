/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where the image goes, as the initramfs must be told it: the device's UUID
 * (a file's filesystem's) and the page offset of the target's first page.
 * The initramfs hooks bake it in at build time (`hibernate config location`,
 * `hibernate config initramfs`) and record it per kernel release under
 * /var/lib/hibernate/initramfs/; before the freeze, hibernate compares the
 * target it is about to write with the record of the running kernel's
 * initramfs, and doctor says the same (hibernate-setup(8)).
 */
#ifndef HIB_FRONTEND_LOCATION_H
#define HIB_FRONTEND_LOCATION_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hibernate.h"

#define HIB_LOCATION_DIR "/var/lib/hibernate/initramfs"

struct hib_location {
	char spec[PATH_MAX]; /* UUID=..., else the device path */
	uint64_t offset;     /* pages */
};

/* @t's location: a file target's through hib_file_locate, a device's UUID
 * from @root/dev/disk/by-uuid (its path when it has none). -errno and @err. */
int hib_location_of_target(const char *root, const struct hib_target *t, struct hib_location *ret,
			   struct hib_error *err);
/* A swap or image file's: its filesystem's UUID (else device) and first page. */
int hib_location_of_file(const char *path, struct hib_location *ret, struct hib_error *err);
/* "SPEC OFFSET" and back; -EINVAL for a line that is not one. */
void hib_location_format(const struct hib_location *l, char *buf, size_t len);
int hib_location_parse(const char *line, struct hib_location *ret);

/* Must the running kernel's initramfs have a record of the target? Yes when
 * hibernate setup's state exists under @root, or @configured_device (device =,
 * or NULL) is a regular file (only the initramfs's copy of the configuration
 * can name it); a machine set up by hand with resume= keeps working without. */
bool hib_location_required(const char *root, const char *configured_device);

enum hib_location_verdict {
	HIB_LOCATION_MATCH,      /* the initramfs carries this target */
	HIB_LOCATION_MISMATCH,   /* it carries another one: refuse */
	HIB_LOCATION_UNRECORDED, /* no record, and one is required: refuse */
	HIB_LOCATION_UNKNOWN,    /* no record, none required (resume= by hand) */
};

/*
 * Compare @target with the record of @release's initramfs under @root
 * (the file HIB_LOCATION_DIR/RELEASE, its "location SPEC OFFSET" line).
 * @required: a record must exist (setup ran, or device = names a file).
 * @msg says what was found and, for the refusals, the fix.
 */
enum hib_location_verdict hib_location_check(const char *root, const char *release,
					     const struct hib_location *target, bool required,
					     char *msg, size_t len);

#endif
