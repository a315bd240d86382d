/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef HIB_FILEMAP_H
#define HIB_FILEMAP_H

#include <sys/types.h>

#include "storage/extmap.h"
#include "hibernate.h"

/* What a file's first page says it is (our tail's saved signature when it
 * holds an image): its extents are mapped by that kind's rules. */
enum hib_file_kind {
	HIB_FILE_OTHER = 0, /* neither, e.g. before mkswap: the strictest rules */
	HIB_FILE_SWAP = 1,  /* SWAPSPACE2 (mkswap): unwritten extents (fallocate) allowed */
	HIB_FILE_IMAGE = 2, /* HIBIMGFILE (hibernate prepare-file) */
};

struct hib_filemap {
	char *device; /* the filesystem's block device, /dev/… */
	char *uuid;   /* the filesystem's UUID, or NULL */
	dev_t dev;
	uint64_t first_page; /* device page of the file's first page: resume_offset= */
	uint64_t file_pages;
	struct hib_extmap map; /* the file's pages in order, as device extents */
	enum hib_file_kind kind;
	uint64_t unwritten_pages; /* in preallocated extents (fallocate): a swap file's only */
	char fstype[16];
};

/* Map a file by the rules of the kind its first page (read through the
 * filesystem) gives it; on refusal, @err says what is wrong with it (the
 * reason alone: callers put the file and their context before it). */
int hib_filemap_read(const char *path, struct hib_filemap *ret, struct hib_error *err);
void hib_filemap_free(struct hib_filemap *m);
/* The kind page 0 of a file (@page, as read) gives it. */
enum hib_file_kind hib_filemap_kind_of_page(const uint8_t page[HIB_PAGE_SIZE]);
/* Why an extent with FIEMAP flags @flags cannot be part of a file of @kind,
 * with the fix where there is one; NULL when it can. */
const char *hib_filemap_extent_refusal(uint32_t flags, enum hib_file_kind kind);

#endif
