// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * doctor's view of the swap areas: what /proc/swaps lists (read once, for the
 * other checks too), zram as the only swap, and what a cycle does with zram.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "frontend/doctor-priv.h"
#include "storage/swaps.h"
#include "util/util.h"

void doctor_scan_swaps(struct doctor_ctx *c, struct swaps_seen *s)
{
	char buf[8192], *line, *save = NULL;

	memset(s, 0, sizeof(*s));
	if (doctor_read_file(c, "/proc/swaps", buf, sizeof(buf)) < 0)
		return;
	line = strtok_r(buf, "\n", &save); /* titles */
	while ((line = strtok_r(NULL, "\n", &save))) {
		char path[512], type[32];
		unsigned long long size, used;

		if (sscanf(line, "%511s %31s %llu %llu", path, type, &size, &used) != 4)
			continue;
		s->total++;
		if (strncmp(path, "/dev/zram", 9) == 0)
			s->zram++;
		if (s->n < DOCTOR_MAX_SWAPS) {
			memcpy(s->v[s->n].path, path, sizeof(path));
			s->v[s->n].free_kib = size - MIN(used, size);
			s->n++;
		}
	}
}

void doctor_check_zram(struct doctor_ctx *c, const struct swaps_seen *s)
{
	if (s->total > 0 && s->zram == s->total)
		doctor_report(
			c, HIB_DOCTOR_FAIL, "swap-kind",
			"the only swap is zram, which lives in memory: an image there is gone at "
			"power-off. Add a swap partition or a swap file (see hibernate offset), or "
			"an image file (hibernate prepare-file)");
	else if (s->zram)
		doctor_report(c, HIB_DOCTOR_PASS, "swap-kind", "swap on disk besides zram");
	else
		doctor_report(c, HIB_DOCTOR_PASS, "swap-kind", "no zram-only swap");
}

/* What a cycle will do with zram swap beside @t (NULL: no target known). */
void doctor_check_zram_cycle(struct doctor_ctx *c, const struct hib_target *t)
{
	char swaps[PATH_MAX], meminfo[PATH_MAX], where[64] = "";
	struct hib_swap_env env = { .proc_swaps = swaps, .meminfo = meminfo };
	struct hib_zram_plan p = { 0 };
	const struct hib_swap_area *a;

	doctor_path(c, "/proc/swaps", swaps, sizeof(swaps));
	doctor_path(c, "/proc/meminfo", meminfo, sizeof(meminfo));
	if (hib_zram_plan_make(&env, t, &p) < 0 || p.n == 0) {
		doctor_report(c, HIB_DOCTOR_PASS, "zram",
			      "no zram swap: nothing to move for the cycle");
		hib_zram_plan_free(&p);
		return;
	}
	a = &p.areas[0].a;
	if (p.target_listed)
		snprintf(where, sizeof(where), " %s the target's %d",
			 a->prio > p.target_prio ? "above" : "at or below", p.target_prio);
	if (c->in->zram == HIB_ZRAM_KEEP)
		doctor_report(
			c, HIB_DOCTOR_WARN, "zram",
			"%s is active swap at priority %d%s, and zram = keep leaves it on: the "
			"kernel's room for the snapshot then goes into RAM, and it may fail with "
			"\"Cannot allocate memory\" (zram = swapoff moves it out of the way)",
			a->path, a->prio, where);
	else if (!hib_zram_plan_fits(&p))
		doctor_report(
			c, HIB_DOCTOR_WARN, "zram",
			"%s holds %llu MiB, more than the memory available and the other swap "
			"can take now (%llu MiB, 64 MiB kept free): hibernate would refuse to swap "
			"it off; close programs, or add disk swap",
			a->path, (unsigned long long)(p.used_kib >> 10),
			(unsigned long long)(p.room_kib >> 10));
	else
		doctor_report(
			c, HIB_DOCTOR_PASS, "zram",
			"%s is active swap at priority %d%s: hibernate swaps it off for the cycle "
			"(%llu MiB back into memory) and on again after%s",
			a->path, a->prio, where, (unsigned long long)(p.used_kib >> 10),
			p.n > 1 ? ", and the other zram areas too" : "");
	hib_zram_plan_free(&p);
}
