// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a target spec names: a path, UUID=, LABEL=, PARTUUID=, PARTLABEL=,
 * MAJ:MIN or the kernel's hexadecimal device number, as the user writes it
 * after --device or device = and as the kernel reads it after resume=.
 */
#include <blkid.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "storage/target.h"
#include "util/util.h"

/*
 * "MAJ:MIN", or the kernel's other resume= number: a bare hexadecimal dev_t
 * in its new encoding ("fe01" is 254:1) → /dev/… through blkid's device scan.
 */
static int resolve_devnum(const char *spec, char **ret)
{
	unsigned maj, min;
	char tail;
	char *name;

	if (sscanf(spec, "%u:%u%c", &maj, &min, &tail) != 2) {
		size_t n = strspn(spec, "0123456789abcdefABCDEF");
		unsigned long v;

		if (n == 0 || n > 8 || spec[n])
			return -EINVAL;
		v = strtoul(spec, NULL, 16);
		maj = (unsigned)((v & 0xfff00) >> 8);
		min = (unsigned)((v & 0xff) | ((v >> 12) & 0xfff00));
	}
	name = blkid_devno_to_devname(makedev(maj, min));
	if (!name)
		return -ENOENT;
	*ret = name;
	return 0;
}

/*
 * The kernel matches PARTUUID= without regard to case, and sfdisk, gdisk and
 * Windows print GUIDs in upper case where blkid reports them in lower case
 * (FAT's serial the other way round): a UUID not found as written is looked
 * for in lower case, then in upper case. Labels are names: taken as written.
 */
static char *evaluate_uuid_anycase(const char *tag, const char *val)
{
	static int (*const fold[])(int) = { tolower, toupper };
	char buf[128];
	char *path;
	size_t n = strlen(val);

	if (n >= sizeof(buf))
		return NULL;
	for (size_t f = 0; f < ARRAY_SIZE(fold); f++) {
		for (size_t i = 0; i <= n; i++)
			buf[i] = (char)fold[f]((unsigned char)val[i]);
		if (strcmp(buf, val) && (path = blkid_evaluate_tag(tag, buf, NULL)))
			return path;
	}
	return NULL;
}

int hib_target_spec_path(const char *spec, char **ret)
{
	static const struct {
		const char *prefix;
		bool uuid; /* found in any case, like the kernel's PARTUUID= */
	} tags[] = {
		{ "UUID=", true },
		{ "LABEL=", false },
		{ "PARTUUID=", true },
		{ "PARTLABEL=", false },
	};
	char *path;

	if (!spec || !*spec)
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(tags); i++) {
		size_t l = strlen(tags[i].prefix);
		if (strncmp(spec, tags[i].prefix, l) == 0) {
			char tag[16];
			const char *val = spec + l;

			if (!*val)
				return -EINVAL;
			snprintf(tag, sizeof(tag), "%.*s", (int)(l - 1), spec);
			path = blkid_evaluate_tag(tag, val, NULL);
			if (!path && tags[i].uuid)
				path = evaluate_uuid_anycase(tag, val);
			if (!path)
				return -ENOENT;
			*ret = path;
			return 0;
		}
	}
	if (spec[0] != '/' && spec[0] != '.')
		return resolve_devnum(spec, ret);
	path = strdup(spec);
	if (!path)
		return -ENOMEM;
	*ret = path;
	return 0;
}
