/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hibernate setup's decisions (hibernate-setup(8)): where the image goes, how
 * big it is, how the file is made, and the edits of hibernate.conf and
 * /etc/fstab as functions from text to text. Everything read comes through a
 * root prefix and a struct hib_setup_input a test can fill by hand; nothing
 * here writes to the system. tools/hibernate/setup.c carries the plan out.
 */
#ifndef HIB_FRONTEND_SETUPPLAN_H
#define HIB_FRONTEND_SETUPPLAN_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hibernate.h"

#define HIB_SETUP_DIR "/var/lib/hibernate"
#define HIB_SETUP_IMAGE_PATH HIB_SETUP_DIR "/image"
#define HIB_SETUP_SWAP_DIR HIB_SETUP_DIR "/swap" /* btrfs: a subvolume of its own */
#define HIB_SETUP_SWAP_PATH HIB_SETUP_SWAP_DIR "/swapfile"
#define HIB_SETUP_MAX_SWAPS 32

/* One active swap area (/proc/swaps). */
struct hib_setup_swap {
	char path[PATH_MAX];
	bool partition; /* Type "partition": a block device (partition, LV, dm-crypt) */
	bool zram;
	uint64_t size_kib;
	int prio;
	char uuid[64]; /* its swap header's UUID (/dev/disk/by-uuid), "" unknown */
};

/* The filesystem that would hold the file (the one under /var/lib/hibernate). */
struct hib_setup_fs {
	char type[32];     /* as /proc/self/mounts names it: ext4, xfs, btrfs, zfs, ... */
	char options[512]; /* its mount options */
	uint64_t total_bytes, avail_bytes; /* statfs: f_blocks, f_bavail */
	unsigned devices;                  /* btrfs: devices of the filesystem (sysfs); else 1 */
	char data_profile[16]; /* btrfs: the data profile (single, dup, raid1...), "" unknown */
};

struct hib_setup_input {
	uint64_t mem_total_kib;
	struct hib_setup_swap swaps[HIB_SETUP_MAX_SWAPS];
	size_t n_swaps;
	struct hib_setup_fs fs;
	char lockdown[32]; /* the selected lockdown mode, "" or "none": off */
	uint64_t size_mib; /* --size; 0: computed */
};

enum hib_setup_kind {
	HIB_SETUP_SWAP_AREA,  /* an active swap partition/LV/LUKS mapping: nothing made */
	HIB_SETUP_IMAGE_FILE, /* a plain image file, no swap (ext4, xfs) */
	HIB_SETUP_SWAP_FILE,  /* a NOCOW swap file in its own subvolume (btrfs), swapon'ed */
};

struct hib_setup_plan {
	enum hib_setup_kind kind;
	char path[PATH_MAX];   /* the swap area's device, or the file to make */
	char device[PATH_MAX]; /* hibernate.conf's device = (UUID=... for an area) */
	uint64_t bytes;        /* the file's size; an area's own size */
	uint64_t need_bytes;   /* what this machine's image needs */
	int swap_prio;         /* a swap file's fstab pri=, -1: none (the kernel's) */
};

/* Bytes an image of this machine may need: half of RAM (the kernel's snapshot
 * can never be larger: it copies into free pages) plus 1% and 16 MiB for the
 * header and extent map, in whole MiB. */
uint64_t hib_setup_need_bytes(uint64_t mem_total_kib);
/* What setup leaves free on the filesystem: 5% of it, at least 1 GiB. */
uint64_t hib_setup_reserve_bytes(uint64_t fs_total_bytes);

/* Choose the target and its size. -errno and @err ("what: why; the choices")
 * when nothing usable is left. */
int hib_setup_decide(const struct hib_setup_input *in, struct hib_setup_plan *ret,
		     struct hib_error *err);
const char *hib_setup_kind_name(enum hib_setup_kind k);

/*
 * hibernate.conf's text with `device = @device` and `offset = @offset` (NULL:
 * no offset line: setup's targets need none; the initramfs's copy gets the
 * resolved one), the rest byte-identical: an existing device line keeps its
 * spacing; a missing one goes under the commented example, else at the end.
 * NULL @text: an empty file. Malloc'ed, NULL when out of memory.
 */
char *hib_setup_conf_edit(const char *text, const char *device, const char *offset);
/* fstab's text with the swap line for @file added unless one names it; malloc'ed. */
char *hib_setup_fstab_edit(const char *text, const char *file, int prio);

/* /proc/meminfo's MemTotal, /proc/swaps, from their text. -EINVAL: not found. */
int hib_setup_parse_meminfo(const char *text, uint64_t *ret_kib);
int hib_setup_parse_swaps(const char *text, struct hib_setup_input *in);

/*
 * Fill @in from the system under @root ("" or NULL: /): meminfo, swaps (their
 * UUIDs from /dev/disk/by-uuid), lockdown, and the filesystem under
 * HIB_SETUP_DIR (mounts, statfs, btrfs's sysfs). -errno and @err.
 */
int hib_setup_gather(const char *root, struct hib_setup_input *in, struct hib_error *err);

#endif
