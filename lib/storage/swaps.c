// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The active swap areas, as /proc/swaps lists them: is a target one of them,
 * which is the only swap partition (the last rung of the target order), and
 * which zram areas a cycle moves out of the way (storage/swaps.h).
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/swap.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>

#include "storage/filemap.h"
#include "storage/swaps.h"
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

/* Calls fn(area, type) for each active swap area; stops when fn returns non-zero. */
static int for_each_swap(const char *proc_swaps,
			 int (*fn)(const struct hib_swap_area *a, const char *type, void *ud),
			 void *ud)
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
		struct hib_swap_area a = { .prio = -1 };
		unsigned long long size = 0, used = 0;
		char type[32];

		/* Size, Used (KiB) and Priority: only the plan for zram reads them. */
		if (sscanf(line, "%4095s %31s %llu %llu %d", a.path, type, &size, &used, &a.prio) <
		    2)
			continue;
		unescape_octal(a.path);
		a.size_kib = size;
		a.used_kib = used;
		r = fn(&a, type, ud);
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

static int match_target(const struct hib_swap_area *a, const char *type, void *ud)
{
	(void)type;
	return is_area(ud, a->path);
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

static int collect_partition(const struct hib_swap_area *a, const char *type, void *ud)
{
	struct only_partition *g = ud;

	if (strcmp(type, "partition") != 0)
		return 0;
	if (++g->count == 1)
		g->found = strdup(a->path);
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

/* ---- zram beside the target ------------------------------------------- */

static int sys_swapoff(const char *path)
{
	return swapoff(path) < 0 ? -errno : 0;
}

static int sys_swapon(const char *path, int flags)
{
	return swapon(path, flags) < 0 ? -errno : 0;
}

static const struct hib_swap_env system_env = {
	.swapoff = sys_swapoff,
	.swapon = sys_swapon,
	.system = true,
};
static const struct hib_swap_env *swap_env = &system_env;

const struct hib_swap_env *hib_swap_env_get(void)
{
	return swap_env;
}

void hib_swap_env_set(const struct hib_swap_env *env)
{
	swap_env = env ? env : &system_env;
}

bool hib_swap_is_zram(const char *path)
{
	const char *p = path;
	size_t digits;

	if (strncmp(p, "/dev/", 5) != 0)
		return false;
	p += 5;
	if (strncmp(p, "zram", 4) != 0)
		return false;
	p += 4;
	digits = strspn(p, "0123456789");
	return digits > 0 && p[digits] == 0;
}

struct plan_walk {
	struct hib_zram_plan *p;
	const struct hib_target *t;
	size_t cap;
};

static int plan_area(const struct hib_swap_area *a, const char *type, void *ud)
{
	struct plan_walk *w = ud;
	struct hib_zram_plan *p = w->p;

	(void)type;
	if (w->t && is_area(w->t, a->path)) {
		p->target_listed = true;
		p->target_prio = a->prio;
		return 0;
	}
	if (!hib_swap_is_zram(a->path)) {
		if (a->size_kib > a->used_kib)
			p->room_kib += a->size_kib - a->used_kib;
		return 0;
	}
	if (p->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 4;
		struct hib_zram_area *n = realloc(p->areas, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->areas = n;
		w->cap = cap;
	}
	p->areas[p->n++] = (struct hib_zram_area){ .a = *a };
	p->used_kib += a->used_kib;
	return 0;
}

uint64_t hib_meminfo_kib(const char *meminfo, const char *key)
{
	_cleanup_(freep) char *line = NULL;
	unsigned long long kib = 0;
	size_t cap = 0, n = strlen(key);
	FILE *f = fopen(meminfo ? meminfo : "/proc/meminfo", "re");

	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0)
		if (strncmp(line, key, n) == 0 && line[n] == ':' &&
		    sscanf(line + n + 1, "%llu kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

int hib_zram_plan_make(const struct hib_swap_env *env, const struct hib_target *t,
		       struct hib_zram_plan *ret)
{
	struct hib_zram_plan p = { 0 };
	struct plan_walk w = { .p = &p, .t = t };
	int r = for_each_swap(env->proc_swaps, plan_area, &w);

	if (r < 0) {
		free(p.areas);
		return r;
	}
	p.room_kib += hib_meminfo_kib(env->meminfo, "MemAvailable");
	*ret = p;
	return 0;
}

void hib_zram_plan_free(struct hib_zram_plan *p)
{
	free(p->areas);
	*p = (struct hib_zram_plan){ 0 };
}

bool hib_zram_plan_fits(const struct hib_zram_plan *p)
{
	return p->used_kib == 0 || p->used_kib + HIB_ZRAM_MARGIN_KIB <= p->room_kib;
}

/* swapoff stops with EINTR whenever a signal is pending, and io_uring's task
 * work can make it look so for a moment without any signal: try again. */
int hib_swap_off(const struct hib_swap_env *env, const char *path)
{
	int (*off)(const char *) = env->swapoff ? env->swapoff : sys_swapoff;
	int r, tries = 0;

	while ((r = off(path)) == -EINTR && ++tries < 10)
		;
	return r;
}

int hib_target_auto_swapon(struct hib_target *t)
{
	const struct hib_swap_env *env = hib_swap_env_get();
	int (*on)(const char *, int) = env->swapon ? env->swapon : sys_swapon;
	int r = on(hib_target_name(t), 0);

	if (r == 0)
		t->swapped_on = true;
	return r;
}

int hib_target_auto_swapoff(struct hib_target *t)
{
	int r;

	if (!t || !t->swapped_on)
		return 0;
	r = hib_swap_off(hib_swap_env_get(), hib_target_name(t));
	if (r == 0)
		t->swapped_on = false;
	return r;
}

int hib_zram_on(const struct hib_swap_env *env, const struct hib_swap_area *a)
{
	int (*on)(const char *, int) = env->swapon ? env->swapon : sys_swapon;
	/* Page discards only: no whole-area discard inside swapon (swaps.h). */
	int flags = SWAP_FLAG_DISCARD | SWAP_FLAG_DISCARD_PAGES;

	if (a->prio >= 0)
		flags |= SWAP_FLAG_PREFER |
			 (MIN(a->prio, SWAP_FLAG_PRIO_MASK) << SWAP_FLAG_PRIO_SHIFT);
	return on(a->path, flags);
}
