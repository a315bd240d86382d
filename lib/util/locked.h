/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Memory for a secret while it is typed: locked (never written to swap, where
 * the image goes), left out of core dumps, fenced by a guard page on each
 * side, and wiped when given back. It needs no random numbers, unlike
 * sodium_malloc(), whose sodium_init() waits for the kernel's random pool:
 * seconds at boot on a machine without a hardware source, before the
 * passphrase prompt could show.
 */
#ifndef HIB_UTIL_LOCKED_H
#define HIB_UTIL_LOCKED_H

#include <stddef.h>

/* @size bytes, zeroed; NULL with errno set (ENOMEM, or mlock()'s error). */
void *hib_locked_alloc(size_t size);
/* Wipe and give back what hib_locked_alloc(@size) returned; NULL is a no-op. */
void hib_locked_free(void *p, size_t size);

#endif
