// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The whole resume path on an image file: hib_image_info(), then hib_resume()
 * into a fake snapshot device (or hib_image_invalidate()).
 *
 * Input: two mode bytes, then
 *   raw mode      the file's first pages (zero-padded to 64 pages, at most 256)
 *   overlay mode  patches on a real base image (fuzz-image.h), each
 *                 [anchor u8][offset u16 LE][len u8][len bytes]:
 *                   anchor & 7 == 1  page 0               + offset % 4096
 *                              == 2  the header page      + offset % 4096
 *                              == 3  map page (anchor>>3) + offset % 4096
 *                              == 4  block k's first page + offset % 4096
 *                              == 5  logical page k       + offset % 4096
 *                              else  byte ((anchor>>3) << 16 | offset)
 *                 with k = (anchor >> 3) | (offset >> 12) << 5; anchors are
 *                 where things are in the base image, before any patch.
 * Mode byte 0: bits 0-1 base (0 raw, 1..3 fuzz_bases[]), bits 2-5 checksums
 *   put right after patching (FUZZ_FIX_*), bit 6 two codec threads, bit 7
 *   hib_image_invalidate() instead of hib_resume().
 * Mode byte 1 (how the resume runs): bits 0-1 the secret (right key file,
 *   wrong one, no callback, callback gives up), bit 2 leave the header MAC
 *   stale when fixing the header, bit 3 target read-only, bits 4-5 the fake
 *   expects one page more (1) or fewer (2), bit 6 progress callback, bit 7 no
 *   snapshot device at all.
 *
 * Invariants: no image → not a byte written; a read-only target is never
 * written; a failed resume leaves a usable area (SWAPSPACE2 or HIBIMGFILE)
 * and nothing frozen; RESTORED only when the fake received exactly its
 * stream, from an image whose key was given.
 */
#include "fuzz-image.h"

#define RAW_MIN_PAGES 64u
#define RAW_MAX_PAGES 256u

static struct memfile mf;
static uint8_t *base_img[FUZZ_NBASE];
static size_t base_size[FUZZ_NBASE];
static struct fuzz_layout base_layout[FUZZ_NBASE];
static uint8_t *img_buf, *now_buf; /* the file as written, as read back */
static size_t buf_size;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fuzz_quiet_logs();
	fuzz_random_install();
	for (unsigned i = 1; i < FUZZ_NBASE; i++) {
		base_img[i] = fuzz_make_image(&fuzz_bases[i], &base_size[i]);
		fuzz_layout_parse(base_img[i], base_size[i], &base_layout[i]);
	}
	memfile_open(&mf, "fuzz-image");
	/* One buffer for the largest file, for every run: no big allocation per input. */
	buf_size = RAW_MAX_PAGES * HIB_PAGE_SIZE;
	for (unsigned i = 1; i < FUZZ_NBASE; i++)
		buf_size = base_size[i] > buf_size ? base_size[i] : buf_size;
	img_buf = malloc(buf_size);
	now_buf = malloc(buf_size);
	if (!img_buf || !now_buf)
		abort();
	return 0;
}

/* Byte offset a patch starts at, in base image @v. */
static uint64_t anchor_offset(unsigned v, uint8_t anchor, uint16_t off)
{
	const struct fuzz_layout *L = &base_layout[v];
	uint32_t k = (uint32_t)(anchor >> 3) | (uint32_t)(off >> 12) << 5;
	uint64_t in = off % HIB_PAGE_SIZE;

	switch (anchor & 7) {
	case 1:
		return in;
	case 2:
		return L->hdr_off + in;
	case 3:
		return L->nmap ? L->map_off[(anchor >> 3) % L->nmap] + in : in;
	case 4:
		if (!L->nblocks)
			return in;
		return (uint64_t)L->lpage[L->block_lp[k % L->nblocks]] * HIB_PAGE_SIZE + in;
	case 5:
		if (!L->nlp)
			return in;
		return (uint64_t)L->lpage[k % L->nlp] * HIB_PAGE_SIZE + in;
	default:
		return ((uint64_t)(anchor >> 3) << 16 | off) % base_size[v];
	}
}

static void apply_patches(unsigned v, uint8_t *img, size_t size, const uint8_t *p, size_t n)
{
	while (n >= 4) {
		uint8_t anchor = p[0];
		uint16_t off = (uint16_t)fuzz_le(p + 1, 2, 2);
		size_t len = p[3];
		uint64_t at = anchor_offset(v, anchor, off);

		p += 4;
		n -= 4;
		if (len > n)
			len = n;
		if (at < size)
			memcpy(img + at, p, len < size - at ? len : size - at);
		p += len;
		n -= len;
	}
}

static bool usable_area(const uint8_t page0[HIB_PAGE_SIZE])
{
	const uint8_t *sig = page0 + HIB_PAGE_SIZE - HIB_SIG_LEN;

	return memcmp(sig, HIB_SWAP_SIG, HIB_SIG_LEN) == 0 ||
	       memcmp(sig, HIB_FILE_SIG, HIB_SIG_LEN) == 0;
}

static bool file_is(const uint8_t *img, size_t size)
{
	memfile_get(&mf, now_buf, size, 0);
	return memcmp(now_buf, img, size) == 0;
}

static bool area_usable_now(void)
{
	uint8_t page0[HIB_PAGE_SIZE];

	memfile_get(&mf, page0, sizeof(page0), 0);
	return usable_area(page0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_resume_knobs k = fuzz_knobs_default;
	struct hib_target *t = NULL;
	struct hib_image_info info;
	unsigned v, fix;
	bool invalidate, had_image, encrypted = false;
	const struct fuzz_base *b;
	uint8_t *img;
	size_t isize;
	int r;

	if (size < 2)
		return 0;
	v = data[0] & 3;
	fix = (data[0] >> 2) & 15;
	k.threads = (data[0] & 0x40) ? 2 : 1;
	invalidate = data[0] & 0x80;
	k.secret = (enum fuzz_secret_mode)(data[1] & 3);
	if (data[1] & 4)
		fix |= FUZZ_FIX_NO_MAC;
	k.read_only = data[1] & 8;
	k.stream_delta = ((data[1] >> 4) & 3) == 1 ? 1 : ((data[1] >> 4) & 3) == 2 ? -1 : 0;
	k.progress = data[1] & 0x40;
	k.no_snapshot = data[1] & 0x80;
	k.attempts = 2;
	data += 2;
	size -= 2;
	b = &fuzz_bases[v];

	if (v == 0) {
		size_t pages = (size + HIB_PAGE_SIZE - 1) / HIB_PAGE_SIZE;

		pages = pages < RAW_MIN_PAGES ? RAW_MIN_PAGES : pages;
		pages = pages > RAW_MAX_PAGES ? RAW_MAX_PAGES : pages;
		isize = pages * HIB_PAGE_SIZE;
		img = img_buf;
		memset(img, 0, isize);
		memcpy(img, data, size < isize ? size : isize);
	} else {
		isize = base_size[v];
		img = img_buf;
		memcpy(img, base_img[v], isize);
		apply_patches(v, img, isize, data, size);
	}
	if (fix & FUZZ_FIX_ALL)
		fuzz_fixup(img, isize, fix);
	memfile_set(&mf, img, isize);

	r = hib_target_open(mf.path, 0, true, &t);
	FUZZ_CHECK(r == 0);
	r = hib_image_info(t, &info);
	FUZZ_CHECK(r == 0);
	had_image = info.state == HIB_SIG_IMAGE || info.state == HIB_SIG_BROKEN;
	FUZZ_CHECK(!info.header_valid || info.state == HIB_SIG_IMAGE);
	FUZZ_CHECK(memchr(info.kernel_release, 0, sizeof(info.kernel_release)) != NULL);
	FUZZ_CHECK(memchr(info.kernel_version, 0, sizeof(info.kernel_version)) != NULL);
	FUZZ_CHECK(memchr(info.machine, 0, sizeof(info.machine)) != NULL);
	FUZZ_CHECK(file_is(img, isize)); /* status only reads */
	if (info.header_valid) {
		const struct hib_sig_tail *tail =
			(const void *)(img + HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE);
		const struct hib_header *h = (const void *)(img + tail->header_offset);

		encrypted = h->flags & HIB_HFLAG_ENCRYPTED;
		FUZZ_CHECK(info.image_id == tail->image_id);
	}

	if (invalidate) {
		r = hib_image_invalidate(t);
		hib_target_close(t);
		fuzz_trace("fuzz_image: base %s fix %#x: state %d, invalidate %d\n", b->name, fix,
			   info.state, r);
		if (had_image) {
			FUZZ_CHECK(r == 1);
			FUZZ_CHECK(area_usable_now());
		} else {
			FUZZ_CHECK(r == 0);
			FUZZ_CHECK(file_is(img, isize));
		}
	} else {
		struct fuzz_resume_out out;
		struct resume_result *res = &out.res;

		hib_target_close(t);
		out = fuzz_resume_path(mf.path, b, &k);
		r = res->r;
		fuzz_trace(
			"fuzz_image: base %s fix %#x threads %u secret %d ro %d delta %d snap %d: "
			"state %d, resume %d (pages ok %llu, complete %d, asked %d)\n",
			b->name, fix, k.threads, k.secret, k.read_only, k.stream_delta,
			!k.no_snapshot, info.state, r, (unsigned long long)res->pages_ok,
			res->complete, out.ask_calls);
		FUZZ_CHECK(out.ask_calls <= k.attempts);
		if (!had_image) {
			FUZZ_CHECK(r == HIB_RESUME_NO_IMAGE);
			FUZZ_CHECK(file_is(img, isize));
			FUZZ_CHECK(res->pages_ok == 0 && !res->frozen && !res->restored);
		} else if (r == HIB_RESUME_RESTORED) {
			/* The heart of it: nothing but the true stream is ever restored,
			 * and an encrypted one only with its key. */
			FUZZ_CHECK(res->restored && res->complete);
			FUZZ_CHECK(res->pages_ok == out.fake_pages);
			FUZZ_CHECK(!k.read_only && !k.no_snapshot);
			FUZZ_CHECK(!encrypted || k.secret == FUZZ_SECRET_RIGHT);
			FUZZ_CHECK(out.stats.stream_bytes == out.fake_pages * HIB_PAGE_SIZE);
			FUZZ_CHECK(area_usable_now());
		} else {
			FUZZ_CHECK(r < 0);
			FUZZ_CHECK(!res->restored && !res->frozen);
			if (k.read_only)
				FUZZ_CHECK(file_is(img, isize)); /* nothing written */
			else
				FUZZ_CHECK(area_usable_now());
		}
	}
	return 0;
}
