// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The target's location for the initramfs (UUID and page offset), its record
 * per kernel release, and the comparison hibernate makes before the freeze.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frontend/location.h"
#include "frontend/setupstate.h"
#include "util/error.h"
#include "util/util.h"

/* The UUID of block device @dev under @root/dev/disk/by-uuid, or "". */
static void uuid_of_dev(const char *root, dev_t dev, char *buf, size_t len)
{
	char dir[PATH_MAX], p[PATH_MAX * 2];
	struct dirent *de;
	struct stat st;
	DIR *d;

	buf[0] = 0;
	snprintf(dir, sizeof(dir), "%s/dev/disk/by-uuid", root);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (de->d_name[0] != '.' && stat(p, &st) == 0 && S_ISBLK(st.st_mode) &&
		    st.st_rdev == dev && strlen(de->d_name) < len) {
			snprintf(buf, len, "%s", de->d_name);
			break;
		}
	}
	closedir(d);
}

int hib_location_of_file(const char *path, struct hib_location *ret, struct hib_error *err)
{
	struct hib_file_location l;
	int r = hib_file_locate(path, &l, err);

	*ret = (struct hib_location){ 0 };
	if (r < 0)
		return r;
	if (l.uuid)
		snprintf(ret->spec, sizeof(ret->spec), "UUID=%s", l.uuid);
	else
		snprintf(ret->spec, sizeof(ret->spec), "%s", l.device);
	ret->offset = l.offset_pages;
	hib_file_location_free(&l);
	return 0;
}

int hib_location_of_target(const char *root, const struct hib_target *t, struct hib_location *ret,
			   struct hib_error *err)
{
	char uuid[64];

	hib_error_clear(err);
	if (hib_target_file(t))
		return hib_location_of_file(hib_target_file(t), ret, err);
	*ret = (struct hib_location){ 0 };
	uuid_of_dev(root ? root : "", hib_target_devnum(t), uuid, sizeof(uuid));
	if (uuid[0])
		snprintf(ret->spec, sizeof(ret->spec), "UUID=%s", uuid);
	else
		snprintf(ret->spec, sizeof(ret->spec), "%s", hib_target_path(t));
	ret->offset = hib_target_offset_pages(t);
	return 0;
}

void hib_location_format(const struct hib_location *l, char *buf, size_t len)
{
	snprintf(buf, len, "%s %" PRIu64, l->spec, l->offset);
}

int hib_location_parse(const char *line, struct hib_location *ret)
{
	unsigned long long off;
	char spec[PATH_MAX], end;

	if (sscanf(line, "%4095s %llu%c", spec, &off, &end) < 2 || (end && end != '\n'))
		return -EINVAL;
	snprintf(ret->spec, sizeof(ret->spec), "%s", spec);
	ret->offset = off;
	return 0;
}

bool hib_location_required(const char *root, const char *configured_device)
{
	char p[PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s%s", root ? root : "", HIB_SETUP_STATE_FILE);
	if (access(p, F_OK) == 0)
		return true;
	return configured_device && configured_device[0] == '/' &&
	       stat(configured_device, &st) == 0 && S_ISREG(st.st_mode);
}

/* The "location" line of @release's record: 0, -ENOENT, -EINVAL. */
static int record_read(const char *root, const char *release, struct hib_location *ret)
{
	char p[PATH_MAX], line[PATH_MAX + 64];
	int r = -EINVAL;
	FILE *f;

	snprintf(p, sizeof(p), "%s%s/%s", root ? root : "", HIB_LOCATION_DIR, release);
	f = fopen(p, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "location ", 9) == 0) {
			r = hib_location_parse(line + 9, ret);
			break;
		}
	fclose(f);
	return r;
}

enum hib_location_verdict hib_location_check(const char *root, const char *release,
					     const struct hib_location *target, bool required,
					     char *msg, size_t len)
{
	struct hib_location rec;
	int r = record_read(root, release, &rec);

	if (r < 0 && !required) {
		snprintf(msg, len,
			 "no record of what the initramfs of %s carries (%s/%s): resume relies "
			 "on resume= or the initramfs configuration; hibernate setup hands the "
			 "location over itself",
			 release, HIB_LOCATION_DIR, release);
		return HIB_LOCATION_UNKNOWN;
	}
	if (r < 0) {
		snprintf(msg, len,
			 "the initramfs of %s has no record of the target %s at page %" PRIu64
			 " (%s/%s %s): run update-initramfs -u -k %s (or dracut -f), or "
			 "hibernate setup",
			 release, target->spec, target->offset, HIB_LOCATION_DIR, release,
			 r == -ENOENT ? "missing" : "unreadable", release);
		return HIB_LOCATION_UNRECORDED;
	}
	if (strcmp(rec.spec, target->spec) != 0 || rec.offset != target->offset) {
		snprintf(msg, len,
			 "the initramfs of %s looks for the image at %s page %" PRIu64
			 ", the target is now %s page %" PRIu64
			 " (the file re-created, the disk changed?): no boot would find this "
			 "image; run update-initramfs -u -k %s (or dracut -f), then hibernate",
			 release, rec.spec, rec.offset, target->spec, target->offset, release);
		return HIB_LOCATION_MISMATCH;
	}
	snprintf(msg, len, "the initramfs of %s carries the target: %s page %" PRIu64, release,
		 target->spec, target->offset);
	return HIB_LOCATION_MATCH;
}
