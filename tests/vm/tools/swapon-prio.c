// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * swapon-prio PRIO DEVICE: swapon(2) at a priority, discarding freed clusters
 * only, as util-linux's `swapon --discard=pages -p PRIO` does; the guest's
 * busybox swapon has no -p.  Built static on the host into the zram-beside
 * scenario's initramfs.
 *
 * The flags: SWAP_FLAG_PREFER | PRIO, and SWAP_FLAG_DISCARD with
 * SWAP_FLAG_DISCARD_PAGES, the same discard policy hibernate's own swapon of
 * zram uses (lib/storage/swaps.c hib_zram_on).  Distributions ask for discard
 * on zram (zram-generator's default `options = discard`, i.e. `swapon
 * --discard`), which without a policy also discards the whole area inside
 * swapon(2).  On a zram device just sized that frees nothing (only mkswap's
 * header page is stored, and the kernel never discards it), and that swapon
 * was once seen in CI stuck in a soft lockup on 6.1 under load: the
 * scenario's setup keeps clear of it, as hibernate does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/swap.h>

/* The kernel's value; glibc's <sys/swap.h> lacks it. */
#ifndef SWAP_FLAG_DISCARD_PAGES
#define SWAP_FLAG_DISCARD_PAGES 0x40000
#endif

int main(int argc, char **argv)
{
	int flags = SWAP_FLAG_PREFER | SWAP_FLAG_DISCARD | SWAP_FLAG_DISCARD_PAGES;
	long prio;
	char *end;

	if (argc != 3) {
		fprintf(stderr, "usage: swapon-prio PRIO DEVICE\n");
		return 2;
	}
	prio = strtol(argv[1], &end, 10);
	if (*end || prio < 0 || prio > SWAP_FLAG_PRIO_MASK) {
		fprintf(stderr, "swapon-prio: priority %s: 0 to %d\n", argv[1],
			SWAP_FLAG_PRIO_MASK);
		return 2;
	}
	if (swapon(argv[2], flags | (int)prio) < 0) {
		fprintf(stderr, "swapon-prio: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	return 0;
}
