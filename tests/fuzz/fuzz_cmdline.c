// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kernel command line and the other strings a user types: the input as
 * one NUL-terminated string through hib_cmdline_parse, hib_codec_parse and
 * hib_target_guess; and the same bytes as a /proc/swaps table (the format
 * tests hand in as a file) through hib_target_guess and
 * hib_target_swap_active, whose parser unescapes \ooo in paths.
 */
#include "fuzz-common.h"

static struct memfile swaps, area;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	uint8_t page[4096] = { 0 };

	(void)argc, (void)argv;
	fuzz_quiet_logs();
	memfile_open(&swaps, "fuzz-proc-swaps");
	memfile_open(&area, "fuzz-area");
	memcpy(page + 4086, "SWAPSPACE2", 10);
	memfile_set(&area, page, sizeof(page));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct hib_cmdline c;
	enum hib_codec_choice codec = HIB_COMPRESS_LZ4;
	struct hib_target *t = NULL;
	char *spec = NULL;
	uint64_t off = 0;
	int level = -1, r;

	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = 0;

	r = hib_cmdline_parse(text, &c);
	FUZZ_CHECK(r == 0 || r == -ENOMEM);
	if (r == 0) {
		if (c.resume) {
			size_t n = strlen(c.resume);
			/* A word of the line, quotes taken out, never empty or cut loose. */
			FUZZ_CHECK(n > 0 && n < 4096 && n <= size);
			FUZZ_CHECK(strchr(c.resume, '"') == NULL);
		}
		if (c.noresume || c.hibernate_no || c.resume || c.resume_offset)
			FUZZ_CHECK(size > 0);
		hib_cmdline_free(&c);
		FUZZ_CHECK(c.resume == NULL);
	}

	r = hib_codec_parse(text, &codec, &level);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	if (r == 0) {
		enum hib_codec_choice again;
		int lv;

		FUZZ_CHECK(codec == HIB_COMPRESS_NONE || codec == HIB_COMPRESS_LZ4 ||
			   codec == HIB_COMPRESS_ZSTD);
		FUZZ_CHECK(level == 0 || (codec == HIB_COMPRESS_ZSTD && level >= 1 && level <= 19));
		/* The name it prints parses back to the same codec. */
		FUZZ_CHECK(hib_codec_parse(hib_codec_name(codec), &again, &lv) == 0);
		FUZZ_CHECK(again == codec && lv == 0);
	}

	/* The same bytes as /proc/swaps; the command line decides first. */
	memfile_set(&swaps, data, size);
	r = hib_target_guess(text, swaps.path, &spec, &off);
	FUZZ_CHECK(r == 0 || r == -ENOENT || r == -ENOTUNIQ || r == -ENOMEM);
	if (r == 0) {
		FUZZ_CHECK(spec != NULL && spec[0] != 0);
		free(spec);
		spec = NULL;
	}
	r = hib_target_guess("", swaps.path, &spec, &off);
	FUZZ_CHECK(r == 0 || r == -ENOENT || r == -ENOTUNIQ || r == -ENOMEM);
	if (r == 0) {
		FUZZ_CHECK(spec != NULL && off == 0);
		free(spec);
	}
	r = hib_target_open(area.path, 0, false, &t);
	FUZZ_CHECK(r == 0);
	r = hib_target_swap_active(t, swaps.path);
	FUZZ_CHECK(r == 0 || r == 1);
	hib_target_close(t);
	free(text);
	return 0;
}
