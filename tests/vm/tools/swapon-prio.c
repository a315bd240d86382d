// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * swapon-prio PRIO DEVICE: swapon(2) at a priority, with discard, as
 * util-linux's `swapon -d -p PRIO` does; the guest's busybox swapon has no -p.
 * Built static on the host into the zram-beside scenario's initramfs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/swap.h>

int main(int argc, char **argv)
{
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
	if (swapon(argv[2], SWAP_FLAG_PREFER | SWAP_FLAG_DISCARD | (int)prio) < 0) {
		fprintf(stderr, "swapon-prio: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	return 0;
}
