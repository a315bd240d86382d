// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The image size the kernel is asked for (SNAPSHOT_PREF_IMAGE_SIZE), and its
 * own preference put back afterwards: the ioctl sets the kernel's global
 * image_size (/sys/power/image_size), which outlives the device. And the
 * snapshot made under --image-size's limit, made again once if the kernel
 * missed it.
 *
 * By default (image-size = default) the kernel keeps its 2/5 of RAM unless
 * the memory in use is only a little above it. There its preallocation
 * (kernel/power/snapshot.c, hibernate_preallocate_memory) takes the slow way
 * for a few pages over: it reclaims, swapping tmpfs and anonymous pages out,
 * and grabs and frees half of memory to get the image down (measured on 6.1,
 * bench workload text: 60-90 MiB swapped out and the longest phase of the
 * cycle). Asking for a little more than what is in use lets it keep
 * everything, at the cost of writing those pages, compressed. Far above
 * (a large page cache), reclaim pays: it drops clean pages, which cost
 * nothing to write, and the kernel's preference stands.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>

#include "engine/suspend-priv.h"
#include "format/format.h"
#include "snapshot/snapshot.h"
#include "util/util.h"

/*
 * The preference to ask for, in bytes of memory, or 0 to leave the kernel's
 * (@kernel_pref) alone. @used is the memory in use (@ram, the RAM the kernel
 * manages, less what is free; page cache included) and the kernel counts
 * more than that: its own reserved pages (its code, data and page structs:
 * some 4% of RAM) and what grows until the preallocation runs. So: nothing
 * while @used is under @kernel_pref by more than @ram / 16; nothing either
 * when it is over by more than @ram / 8 (reclaim pays there: page cache to
 * drop); in between, @used + @ram / 8, at most @room (what the swap area
 * holds). The kernel takes no more than about half of memory whatever it is
 * asked.
 */
uint64_t engine_image_wish(uint64_t kernel_pref, uint64_t used, uint64_t ram, uint64_t room)
{
	uint64_t need = MIN(used + ram / 8, room);

	if (used + ram / 16 <= kernel_pref || used > kernel_pref + ram / 8)
		return 0;
	return need > kernel_pref ? need : 0;
}

/* The memory whose stream fits in the area's free pages, however its blocks
 * are stored (engine_raw_stream_room). */
static uint64_t area_room_bytes(const struct suspend_ctx *sc)
{
	uint32_t block_bytes = sc->o->block_bytes ? sc->o->block_bytes : HIB_DEFAULT_BLOCK_BYTES;
	uint64_t s = engine_raw_stream_room(sc->area_pages, block_bytes / HIB_PAGE_SIZE);

	return s ? hib_snapshot_pref_pages(s) * HIB_PAGE_SIZE : 0;
}

/* The wish, in bytes of memory, whose stream is at most @stream_bytes: the
 * kernel's wish counts memory pages, and one exactly met would leave the
 * stream over the limit by its header and PFN pages. */
static uint64_t wish_for_stream(uint64_t stream_bytes)
{
	return hib_snapshot_pref_pages(stream_bytes / HIB_PAGE_SIZE) * HIB_PAGE_SIZE;
}

/* The default's wish, 0 for none: only where the kernel freezes the system
 * (the memory counted is this machine's). */
static uint64_t default_wish(const struct suspend_ctx *sc, uint64_t kernel_pref)
{
	struct sysinfo si;
	uint64_t ram, used;

	if (!hib_snapshot_can(sc->snap, HIB_SNAP_CAP_FREEZES_SYSTEM) || sysinfo(&si) < 0)
		return 0;
	ram = (uint64_t)si.totalram * si.mem_unit;
	used = ram - MIN(ram, (uint64_t)si.freeram * si.mem_unit);
	return engine_image_wish(kernel_pref, used, ram, area_room_bytes(sc));
}

int suspend_image_size_wish(struct suspend_ctx *sc)
{
	struct hib_snapshot *snap = sc->snap;
	const struct hib_options *o = sc->o;
	uint64_t before = 0, wish;
	bool known = snap->ops->image_size_pref_get &&
		     snap->ops->image_size_pref_get(snap, &before) == 0;
	int r;

	if (o->image_size >= 0) {
		wish = wish_for_stream((uint64_t)o->image_size); /* the limit is on the stream */
	} else if (o->image_size == HIB_IMAGE_SIZE_DEFAULT && known) {
		wish = default_wish(sc, before);
		if (!wish)
			return 0;
		log_info("image size: %llu MiB asked for, the kernel's %llu MiB being just under "
			 "the memory in use (its reclaim would cost more than the pages)",
			 (unsigned long long)(wish >> 20), (unsigned long long)(before >> 20));
	} else {
		return 0;
	}
	r = snap->ops->pref_image_size(snap, wish);
	if (r < 0)
		return o->image_size >= 0
			       ? log_err(r, "setting the preferred image size failed: %m")
			       : 0; /* the default's wish is only a wish */
	sc->pref_before = before;
	sc->pref_set = known;
	return 0;
}

/*
 * The kernel made an image of @stream_bytes over the limit: ask for less by
 * what it missed by, and by 1/32 of the limit more (on 6.1, a 180 MiB limit
 * gave streams of 159 to 184 MiB). -E2BIG when no smaller wish is left.
 */
static int image_size_lower(struct suspend_ctx *sc, uint64_t stream_bytes)
{
	uint64_t limit = (uint64_t)sc->o->image_size, cut = stream_bytes - limit + limit / 32, wish;
	int r;

	if (cut >= limit)
		return -E2BIG;
	wish = wish_for_stream(limit - cut);
	if (!wish)
		return -E2BIG;
	log_info("the image is %llu MiB, over the limit of %llu MiB: freeing it and asking the "
		 "kernel for %llu MiB",
		 (unsigned long long)(stream_bytes >> 20), (unsigned long long)(limit >> 20),
		 (unsigned long long)(wish >> 20));
	r = sc->snap->ops->pref_image_size(sc->snap, wish);
	return r < 0 ? log_err(r, "setting the preferred image size failed: %m") : 0;
}

/* CREATE_IMAGE, and the image's size; *@held while an image is held. */
static int create_image(struct suspend_ctx *sc, int *in_suspend, bool *held)
{
	int r = sc->snap->ops->create_image(sc->snap, in_suspend);

	if (r < 0)
		return log_err(r, "the kernel could not make the snapshot: %m%s",
			       r == -ENOMEM ? " (not enough free memory for the copy; try a "
					      "smaller --image-size)"
					    : "");
	*held = true;
	if (!*in_suspend)
		return 0;
	r = sc->snap->ops->get_image_size(sc->snap, &sc->stream_bytes);
	if (r < 0)
		return log_err(r, "the kernel did not give the image size: %m");
	return 0;
}

/*
 * PREF_IMAGE_SIZE is only a wish: the kernel frees what it can and makes the
 * image anyway, a few MiB off either way. A limit the user set is a limit:
 * one image over it is freed (still frozen: the kernel allows CREATE_IMAGE
 * right after FREE) and made again under a smaller wish; a second is refused.
 */
int suspend_create_image(struct suspend_ctx *sc, int *in_suspend, bool *held)
{
	uint64_t limit = sc->o->image_size > 0 ? (uint64_t)sc->o->image_size : 0;
	/* Test builds: the first image counts this many MiB over the limit (the
	 * kernel's miss, which a test cannot make happen on demand). */
	const char *miss = hib_test_knob("HIBERNATE_TEST_IMAGE_MISS");
	int r;

	for (int tries = 0;; tries++) {
		uint64_t seen;

		r = create_image(sc, in_suspend, held);
		if (r < 0 || !*in_suspend || !limit)
			return r;
		seen = sc->stream_bytes;
		if (miss && tries == 0)
			seen = MAX(seen, limit + (strtoull(miss, NULL, 10) << 20));
		if (seen <= limit)
			return 0;
		if (tries > 0 || image_size_lower(sc, seen) < 0)
			break;
		r = sc->snap->ops->free_image(sc->snap);
		if (r < 0)
			return log_err(r, "freeing the image over the limit failed: %m");
		*held = false;
	}
	return log_err(-E2BIG,
		       "the image is %llu MiB, over the limit of %llu MiB: the kernel "
		       "could not free enough memory; raise --image-size or close programs",
		       (unsigned long long)(sc->stream_bytes >> 20),
		       (unsigned long long)(limit >> 20));
}

void suspend_image_size_put_back(struct suspend_ctx *sc)
{
	int r;

	if (!sc->pref_set)
		return;
	r = sc->snap->ops->pref_image_size(sc->snap, sc->pref_before);
	if (r < 0)
		log_warn("the kernel's image size preference (%llu bytes) could not be put back: "
			 "%s; write it to /sys/power/image_size",
			 (unsigned long long)sc->pref_before, strerror(-r));
	sc->pref_set = false;
}
