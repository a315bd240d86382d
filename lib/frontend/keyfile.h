/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The key file (key-file =): a secret that opens every image sealed with it,
 * read as root in the initramfs. Only a file that nobody but root could have
 * written or read is taken, and only whole.
 */
#ifndef HIB_KEYFILE_H
#define HIB_KEYFILE_H

#include <stddef.h>
#include <stdint.h>

#include "hibernate.h"

/* 32 bytes: the derived key's own size, so a key file is never the weak part. */
#define HIB_KEY_FILE_MIN 32u
/* Larger files are refused, not cut: a cut key would silently ignore its tail. */
#define HIB_KEY_FILE_MAX 4096u

/* A key file's bytes, in locked, guarded memory (sodium_malloc). */
struct hib_key_file {
	uint8_t *data;
	size_t len;
};

/*
 * Check that @path is fit to hold a key, without reading the key: opened with
 * O_NOFOLLOW (a symbolic link is refused), a regular file, owned by root, no
 * group or other permission bits, HIB_KEY_FILE_MIN to HIB_KEY_FILE_MAX bytes.
 * -ELOOP symbolic link, -EISDIR directory, -EINVAL not a regular file,
 * -EPERM wrong owner or mode, -EMSGSIZE too short or too long, else open()'s
 * -errno. @err: "FILE: why; the fix".
 */
int hib_key_file_check(const char *path, struct hib_error *err);

/*
 * hib_key_file_check, then the whole file into @ret (free it with
 * hib_key_file_free, which wipes it). -EAGAIN when the file changed size
 * while it was read.
 */
int hib_key_file_read(const char *path, struct hib_key_file *ret, struct hib_error *err);

/* Wipe and free; @k is empty after, and may be empty before. */
void hib_key_file_free(struct hib_key_file *k);

#endif
