/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The active swap areas beside the target, and zram among them: the kernel's
 * preallocation for the snapshot swaps out to the area of highest priority,
 * and a zram area keeps what it is given in RAM, so the snapshot gains
 * nothing from it and may fail for want of memory. The engine swaps such
 * areas off for a cycle (zram.c) and on again after.
 */
#ifndef HIB_STORAGE_SWAPS_H
#define HIB_STORAGE_SWAPS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/swap.h>

#include "hibernate.h"

/* Where the swap table and the memory figures come from, and how an area is
 * turned off and on: the system's (hib_swap_env_get's default), or a test's. */
struct hib_swap_env {
	const char *proc_swaps;                     /* NULL: /proc/swaps */
	const char *meminfo;                        /* NULL: /proc/meminfo */
	int (*swapoff)(const char *path);           /* -errno; NULL: swapoff(2) */
	int (*swapon)(const char *path, int flags); /* -errno; NULL: swapon(2) */
	bool system; /* the running system's: only where a snapshot device freezes it */
};
/* The environment in use: the system's unless a test set its own. */
const struct hib_swap_env *hib_swap_env_get(void);
/* Tests only: use @env (NULL: the system's again). */
void hib_swap_env_set(const struct hib_swap_env *env);

/* One line of /proc/swaps. */
struct hib_swap_area {
	char path[PATH_MAX]; /* unescaped */
	uint64_t size_kib;
	uint64_t used_kib;
	int prio; /* negative: the kernel chose it (no -p) */
};

/* A zram swap area of the plan, and how it is turned back on. */
struct hib_zram_area {
	struct hib_swap_area a;
	bool off; /* the engine swapped it off for the cycle */
};

/*
 * What to move out of the way for a cycle to @t: every active swap area on
 * /dev/zramN but the target itself, and what can take their pages.
 */
struct hib_zram_plan {
	struct hib_zram_area *areas; /* /proc/swaps order; malloc'ed */
	size_t n;
	uint64_t used_kib; /* what they hold together */
	/* What takes those pages when they leave zram: the memory available
	 * (MemAvailable) and the free space of the other, non-zram areas. */
	uint64_t room_kib;
	bool target_listed; /* the target is an active area, at target_prio */
	int target_prio;
};

/* The figure of @key ("MemAvailable", "MemTotal") in the meminfo file
 * @meminfo (NULL: /proc/meminfo; a test's: hib_swap_env's), in KiB; 0 when
 * the file does not say. */
uint64_t hib_meminfo_kib(const char *meminfo, const char *key);

/* Read /proc/swaps and /proc/meminfo of @env into a plan for @t (NULL: no
 * target known, nothing excluded). -errno when the swap table cannot be read. */
int hib_zram_plan_make(const struct hib_swap_env *env, const struct hib_target *t,
		       struct hib_zram_plan *ret);
void hib_zram_plan_free(struct hib_zram_plan *p);
/* Kept free beside the pages swapoff brings back: the snapshot needs memory
 * of its own, and running out while swapping off wakes the OOM killer. */
#define HIB_ZRAM_MARGIN_KIB (64u * 1024u)
/* Can the plan's areas all be swapped off: do their pages fit, with the margin
 * (or are there none)? */
bool hib_zram_plan_fits(const struct hib_zram_plan *p);
/* Is @path a zram device's name (/dev/zramN)? */
bool hib_swap_is_zram(const char *path);

/* swapoff @path (EINTR retried); -ENOMEM when its pages did not fit: the
 * kernel then keeps it on, as it was. */
int hib_swap_off(const struct hib_swap_env *env, const char *path);
/* auto_swapon: swapon @t's area (its file, or its device) for a cycle, and
 * remember it for hib_target_auto_swapoff (include/hibernate.h). -errno. */
int hib_target_auto_swapon(struct hib_target *t);
/* The discard policies beside SWAP_FLAG_DISCARD (the kernel's values; glibc's
 * <sys/swap.h> lacks them, util-linux's swapon defines them likewise). */
#ifndef SWAP_FLAG_DISCARD_ONCE
#define SWAP_FLAG_DISCARD_ONCE 0x20000 /* the whole area at swapon only */
#endif
#ifndef SWAP_FLAG_DISCARD_PAGES
#define SWAP_FLAG_DISCARD_PAGES 0x40000 /* freed clusters only, not the area */
#endif
/* swapon @a again at its priority (a negative one: the kernel's next), with
 * discard of freed clusters only (`swapon --discard=pages`), never of the
 * whole area. /proc/swaps does not say whether it had discard. zram frees a
 * slot when the swap layer frees it (swap_slot_free_notify): a discard only
 * catches the few that notification missed. The whole-area discard that
 * SWAP_FLAG_DISCARD alone also asks for would walk every slot of the device
 * inside swapon(2), with no preemption point per 4 GiB, to free nothing our
 * swapoff left; that swapon was seen stuck in a soft lockup once on 6.1. */
int hib_zram_on(const struct hib_swap_env *env, const struct hib_swap_area *a);

#endif
