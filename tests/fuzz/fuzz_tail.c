// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The signature page: hib_tail_is_ours / hib_tail_check on page 0, as read
 * and as resealed (so the checks behind the checksum run), then the page as
 * a target's page 0: probe, image info, invalidate.
 *
 * Input: page 0. Shorter inputs are aligned to the END of the page, so a
 * 256-byte input is exactly the tail.
 */
#include "format/format.h"
#include "fuzz-common.h"

static struct memfile mf;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fuzz_quiet_logs();
	memfile_open(&mf, "fuzz-tail");
	return 0;
}

/* What hib_tail_check must say about a tail whose checksum holds. */
static int expect_sealed(const struct hib_sig_tail *t, int ours)
{
	if (!ours)
		return -ENOENT;
	/* The base version, and no feature this reader does not know. */
	if ((t->version & 0xffffu) != HIB_FORMAT_VERSION ||
	    (t->version & ~0xffffu & ~HIB_FEATURES_KNOWN) != 0)
		return -EPROTO;
	if (t->page_size != HIB_PAGE_SIZE || t->header_offset % HIB_PAGE_SIZE)
		return -EBADMSG;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t page[8 * HIB_PAGE_SIZE] __attribute__((aligned(HIB_PAGE_SIZE)));
	uint8_t after[HIB_PAGE_SIZE];
	const struct hib_sig_tail *t = (const void *)(page + HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE);
	struct hib_sig_tail sealed;
	struct hib_target *tg = NULL;
	struct hib_image_info info;
	enum hib_sig_state st;
	int ours, r, r2;
	size_t n = size < HIB_PAGE_SIZE ? size : HIB_PAGE_SIZE;

	memset(page, 0, sizeof(page));
	memcpy(page + HIB_PAGE_SIZE - n, data, n);

	ours = hib_tail_is_ours(page);
	FUZZ_CHECK(ours == 0 || ours == 1);
	r = hib_tail_check(t);
	FUZZ_CHECK(r == 0 || r == -ENOENT || r == -EBADMSG || r == -EPROTO);
	/* Not ours exactly when the magic or the signature is missing. */
	FUZZ_CHECK((r == -ENOENT) == !ours);

	sealed = *t;
	hib_tail_seal(&sealed);
	r2 = hib_tail_check(&sealed);
	FUZZ_CHECK(r2 == expect_sealed(&sealed, ours));
	if (r == 0) {
		/* A valid tail is already sealed. */
		FUZZ_CHECK(memcmp(&sealed, t, sizeof(sealed)) == 0);
	}

	/* The page as a target's page 0 (eight pages, the rest zero). */
	memfile_set(&mf, page, sizeof(page));
	r = hib_target_open(mf.path, 0, true, &tg);
	FUZZ_CHECK(r == 0);
	r = hib_target_probe(tg, &st);
	FUZZ_CHECK(r == 0);
	/* An image only with a tail that checks; ours but failing is a damaged one.
	 * (Pages that are only partly ours — our magic, or our signature — may be
	 * called damaged images too: resume must discard those, not skip them.) */
	if (ours)
		FUZZ_CHECK(st == (hib_tail_check(t) == 0 ? HIB_SIG_IMAGE : HIB_SIG_BROKEN));
	else
		FUZZ_CHECK(st != HIB_SIG_IMAGE);
	FUZZ_CHECK(hib_sig_state_name(st) != NULL);
	r = hib_image_info(tg, &info);
	FUZZ_CHECK(r == 0 && info.state == st);
	/* Seven zero pages cannot hold a header that checks. */
	FUZZ_CHECK(!info.header_valid);
	r = hib_image_invalidate(tg);
	hib_target_close(tg);
	memfile_get(&mf, after, sizeof(after), 0);
	if (st == HIB_SIG_IMAGE || st == HIB_SIG_BROKEN) {
		const uint8_t *sig = after + HIB_PAGE_SIZE - HIB_SIG_LEN;

		FUZZ_CHECK(r == 1);
		FUZZ_CHECK(memcmp(sig, HIB_SWAP_SIG, HIB_SIG_LEN) == 0 ||
			   memcmp(sig, HIB_FILE_SIG, HIB_SIG_LEN) == 0);
		/* Only the tail is ever rewritten: uuid, label, boot bits stay. */
		FUZZ_CHECK(memcmp(after, page, HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE) == 0);
		/* The saved free-state signature decides which one comes back. */
		if (memcmp(page + HIB_PAGE_SIZE - 2 * HIB_SIG_LEN, HIB_FILE_SIG, HIB_SIG_LEN) == 0)
			FUZZ_CHECK(memcmp(sig, HIB_FILE_SIG, HIB_SIG_LEN) == 0);
	} else {
		FUZZ_CHECK(r == 0);
		FUZZ_CHECK(memcmp(after, page, HIB_PAGE_SIZE) == 0);
	}
	return 0;
}
