// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The active swap areas, as /proc/swaps lists them: is a target one of them,
 * and which is the only swap partition (the last rung of the target order).
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>

#include "storage/filemap.h"
#include "storage/target-priv.h"
#include "util/util.h"

/*
 * /proc/swaps names active areas by path, with spaces and such escaped as
 * \ooo. Compare by identity, not by name: /dev/vda1 and
 * /dev/disk/by-uuid/… are the same area.
 */
static void unescape_octal(char *s)
{
	char *w = s;

	for (char *p = s; *p; p++) {
		if (p[0] == '\\' && isdigit((unsigned char)p[1]) && isdigit((unsigned char)p[2]) &&
		    isdigit((unsigned char)p[3])) {
			*w++ = (char)(((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0'));
			p += 3;
		} else {
			*w++ = *p;
		}
	}
	*w = 0;
}

/* Calls fn(path, type) for each active swap area; stops when fn returns non-zero. */
static int for_each_swap(const char *proc_swaps,
			 int (*fn)(const char *path, const char *type, void *ud), void *ud)
{
	_cleanup_(freep) char *line = NULL;
	size_t cap = 0;
	FILE *f;
	int r = 0;

	f = fopen(proc_swaps ? proc_swaps : "/proc/swaps", "re");
	if (!f)
		return -errno;
	if (getline(&line, &cap, f) < 0) { /* the column titles */
		fclose(f);
		return 0;
	}
	while (getline(&line, &cap, f) > 0) {
		char path[PATH_MAX], type[32];

		if (sscanf(line, "%4095s %31s", path, type) != 2)
			continue;
		unescape_octal(path);
		r = fn(path, type, ud);
		if (r)
			break;
	}
	fclose(f);
	return r;
}

/* A file whose st_dev is no device: btrfs numbers each subvolume. */
static bool dev_is_anonymous(const char *path)
{
	struct statfs sfs;

	return statfs(path, &sfs) == 0 && (unsigned long)sfs.f_type == BTRFS_SUPER_MAGIC;
}

/* hib_target_is_area for a name already unescaped. */
static bool is_area(const struct hib_target *t, const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return false;
	if (S_ISBLK(st.st_mode))
		return t->is_blk && st.st_rdev == t->dev && t->offset_pages == 0;
	if (!S_ISREG(st.st_mode))
		return false;
	if (t->file_ino)
		return st.st_dev == t->file_dev && st.st_ino == t->file_ino;
	/* A swap file named by device and offset (resume= resume_offset=): map it. */
	if (t->is_blk && t->offset_pages > 0 && (st.st_dev == t->dev || dev_is_anonymous(path))) {
		struct hib_filemap m;
		bool hit = false;
		if (hib_filemap_read(path, &m, NULL) == 0) {
			hit = m.dev == t->dev && m.first_page == t->offset_pages;
			hib_filemap_free(&m);
		}
		return hit;
	}
	return false;
}

bool hib_target_is_area(const struct hib_target *t, const char *swaps_name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s", swaps_name);
	unescape_octal(path);
	return is_area(t, path);
}

static int match_target(const char *path, const char *type, void *ud)
{
	(void)type;
	return is_area(ud, path);
}

int hib_target_swap_active(const struct hib_target *t, const char *proc_swaps)
{
	int r = for_each_swap(proc_swaps, match_target, (void *)t);

	return r < 0 ? r : r > 0;
}

struct only_partition {
	char *found;
	int count;
};

static int collect_partition(const char *path, const char *type, void *ud)
{
	struct only_partition *g = ud;

	if (strcmp(type, "partition") != 0)
		return 0;
	if (++g->count == 1)
		g->found = strdup(path);
	return 0;
}

int hib_swaps_only_partition(const char *proc_swaps, char **ret_path)
{
	struct only_partition g = { 0 };
	int r = for_each_swap(proc_swaps, collect_partition, &g);

	if (r < 0) {
		free(g.found);
		return r;
	}
	if (g.count == 0)
		return -ENOENT;
	if (g.count > 1) {
		free(g.found);
		return -ENOTUNIQ;
	}
	if (!g.found)
		return -ENOMEM;
	*ret_path = g.found;
	return 0;
}
