// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The signature page: page 0 of the swap area. We only ever replace its last
 * HIB_SIG_TAIL_SIZE bytes (where an ordinary swap header has nothing but the
 * unused end of the bad-pages list and "SWAPSPACE2"), and we keep the bytes
 * we replaced, so putting them back gives the user their swap area bit for
 * bit — uuid and label included.
 */
#include <stdbool.h>
#include <string.h>

#include "storage/target-priv.h"
#include "util/util.h"

/* Images of other formats, by the signature they put where SWAPSPACE2 was. */
static const struct {
	const char *sig;
	const char *name;
} other_formats[] = {
	{ "S1SUSPEND", "the kernel's own hibernation image (S1SUSPEND)" },
	/* ours without our tail: another Software Suspend 2 */
	{ "S2SUSPEND", "another Software Suspend 2's image (S2SUSPEND)" },
	{ "ULSUSPEND", "uswsusp's image (ULSUSPEND)" },
	{ "LINHIB0001", "another program's hibernation image (LINHIB0001)" },
};

const char *hib_sig_other_format(const uint8_t page[HIB_PAGE_SIZE])
{
	const uint8_t *sig = page + HIB_PAGE_SIZE - HIB_SIG_LEN;

	for (size_t i = 0; i < ARRAY_SIZE(other_formats); i++)
		if (memcmp(sig, other_formats[i].sig, strlen(other_formats[i].sig)) == 0)
			return other_formats[i].name;
	return NULL;
}

static enum hib_sig_state classify(const uint8_t page[HIB_PAGE_SIZE])
{
	const uint8_t *sig = page + HIB_PAGE_SIZE - HIB_SIG_LEN;

	if (memcmp(sig, HIB_SWAP_SIG, HIB_SIG_LEN) == 0)
		return HIB_SIG_SWAP;
	if (memcmp(sig, HIB_FILE_SIG, HIB_SIG_LEN) == 0)
		return HIB_SIG_FILE;
	if (hib_tail_is_ours(page)) {
		const struct hib_sig_tail *t =
			(const void *)(page + HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE);
		return hib_tail_check(t) == 0 ? HIB_SIG_IMAGE : HIB_SIG_BROKEN;
	}
	/* Our tail magic with a damaged signature, or our exact signature (NUL
	 * included) over a damaged magic: one of our images, damaged. Seen as
	 * anything else, resume would leave it in place and swapon would refuse
	 * the area. */
	if (memcmp(page + HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE, HIB_TAIL_MAGIC, 16) == 0 ||
	    memcmp(sig, HIB_IMAGE_SIG, HIB_SIG_LEN) == 0)
		return HIB_SIG_BROKEN;
	return hib_sig_other_format(page) ? HIB_SIG_KERNEL : HIB_SIG_FOREIGN;
}

const char *hib_sig_state_name(enum hib_sig_state s)
{
	switch (s) {
	case HIB_SIG_SWAP:
		return "swap area (SWAPSPACE2), no image";
	case HIB_SIG_IMAGE:
		return "hibernation image";
	case HIB_SIG_BROKEN:
		return "hibernation image with a damaged signature";
	case HIB_SIG_KERNEL:
		return "another program's hibernation image";
	case HIB_SIG_FOREIGN:
		return "not a swap area";
	case HIB_SIG_FILE:
		return "image file (HIBIMGFILE), no image";
	}
	return "unknown";
}

int hib_sig_read(struct hib_target *t, uint8_t page[HIB_PAGE_SIZE], enum hib_sig_state *ret)
{
	int r = hib_target_read(t, hib_target_sig_offset(t), page, HIB_PAGE_SIZE);

	if (r < 0)
		return r;
	*ret = classify(page);
	return 0;
}

int hib_target_probe(struct hib_target *t, enum hib_sig_state *ret)
{
	_cleanup_(freep) uint8_t *page = hib_alloc_pages(HIB_PAGE_SIZE);

	if (!page)
		return -ENOMEM;
	return hib_sig_read(t, page, ret);
}

static int write_page0(struct hib_target *t, const uint8_t *page)
{
	int r = hib_target_write(t, hib_target_sig_offset(t), page, HIB_PAGE_SIZE);

	if (r < 0)
		return r;
	return hib_target_sync(t);
}

int hib_sig_write_image(struct hib_target *t, uint8_t page[HIB_PAGE_SIZE],
			const struct hib_sig_tail *tail)
{
	memcpy(page + HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE, tail, HIB_SIG_TAIL_SIZE);
	return write_page0(t, page);
}

int hib_sig_restore(struct hib_target *t, const uint8_t *orig_tail)
{
	_cleanup_(freep) uint8_t *page = hib_alloc_pages(HIB_PAGE_SIZE);

	if (!page)
		return -ENOMEM;
	return hib_sig_restore_buf(t, orig_tail, page);
}

int hib_sig_restore_buf(struct hib_target *t, const uint8_t *orig_tail, uint8_t page[HIB_PAGE_SIZE])
{
	uint8_t *tail;
	int r;

	r = hib_target_read(t, hib_target_sig_offset(t), page, HIB_PAGE_SIZE);
	if (r < 0)
		return r;
	tail = page + HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE;
	if (orig_tail &&
	    (memcmp(orig_tail + HIB_SIG_TAIL_SIZE - HIB_SIG_LEN, HIB_SWAP_SIG, HIB_SIG_LEN) == 0 ||
	     memcmp(orig_tail + HIB_SIG_TAIL_SIZE - HIB_SIG_LEN, HIB_FILE_SIG, HIB_SIG_LEN) == 0)) {
		memcpy(tail, orig_tail, HIB_SIG_TAIL_SIZE);
	} else {
		/* No saved bytes: what mkswap (or prepare-file) leaves there, an empty tail
		 * and the free-state signature, which the damaged tail may still name. */
		bool file = memcmp(page + HIB_PAGE_SIZE - 2 * HIB_SIG_LEN, HIB_FILE_SIG,
				   HIB_SIG_LEN) == 0;
		memset(tail, 0, HIB_SIG_TAIL_SIZE);
		memcpy(page + HIB_PAGE_SIZE - HIB_SIG_LEN, file ? HIB_FILE_SIG : HIB_SWAP_SIG,
		       HIB_SIG_LEN);
	}
	return write_page0(t, page);
}

int hib_sig_discard_other(struct hib_target *t, uint8_t page[HIB_PAGE_SIZE])
{
	uint8_t tail[HIB_SIG_TAIL_SIZE] = { 0 };
	const uint8_t *orig = page + HIB_PAGE_SIZE - 2 * HIB_SIG_LEN;
	enum hib_target_kind kind = hib_target_kind(t);
	const void *sig = kind == HIB_TARGET_PLAINFILE ? HIB_FILE_SIG : HIB_SWAP_SIG;

	/* The kernel's header (uswsusp's too) keeps the signature it replaced just
	 * before its own, as its orig_sig: what the kernel's resume puts back. On a
	 * device that may be either of the two free states; nothing else is taken
	 * from it. */
	if (kind == HIB_TARGET_DEVICE && (memcmp(orig, HIB_SWAP_SIG, HIB_SIG_LEN) == 0 ||
					  memcmp(orig, HIB_FILE_SIG, HIB_SIG_LEN) == 0))
		sig = orig;
	memcpy(tail + HIB_SIG_TAIL_SIZE - HIB_SIG_LEN, sig, HIB_SIG_LEN);
	return hib_sig_restore_buf(t, tail, page);
}
