/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef HIB_FILEMAP_H
#define HIB_FILEMAP_H

#include <sys/types.h>

#include "storage/extmap.h"
#include "hibernate.h"

struct hib_filemap {
	char *device; /* the filesystem's block device, /dev/… */
	char *uuid;   /* the filesystem's UUID, or NULL */
	dev_t dev;
	uint64_t first_page; /* device page of the file's first page: resume_offset= */
	uint64_t file_pages;
	struct hib_extmap map; /* the file's pages in order, as device extents */
	char fstype[16];
};

/* Map a file; on refusal, @err says what is wrong with it (the reason alone:
 * callers put the file and their context before it). */
int hib_filemap_read(const char *path, struct hib_filemap *ret, struct hib_error *err);
void hib_filemap_free(struct hib_filemap *m);

#endif
