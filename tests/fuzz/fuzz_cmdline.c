// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kernel command line and the other strings a user types: the input as
 * one NUL-terminated string through hib_cmdline_parse, hib_codec_parse and
 * hib_target_choose (the target order, without opening anything); and the
 * same bytes as a /proc/swaps table (the format tests hand in as a file)
 * through hib_target_choose and hib_target_swap_active, whose parser
 * unescapes \ooo in paths.
 */
#include "fuzz-common.h"
#include "storage/target.h"

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
	struct hib_target_request req = { .cmdline = text, .proc_swaps = swaps.path };
	struct hib_target_choice choice;
	struct hib_error err;
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
	r = hib_target_choose(&req, &choice, &err);
	FUZZ_CHECK(r == 0 || r == -ENOENT || r == -ENOTUNIQ || r == -ENOMEM);
	/* The error record says something exactly when there was an error. */
	FUZZ_CHECK(err.error == (r < 0 ? r : 0) && (err.msg[0] != 0) == (r < 0));
	if (r == 0) {
		FUZZ_CHECK(choice.spec != NULL && choice.spec[0] != 0);
		FUZZ_CHECK(!choice.offset_set);
		hib_target_choice_free(&choice);
	}
	req.cmdline = "";
	r = hib_target_choose(&req, &choice, &err);
	FUZZ_CHECK(r == 0 || r == -ENOENT || r == -ENOTUNIQ || r == -ENOMEM);
	if (r == 0) {
		FUZZ_CHECK(choice.spec != NULL && choice.offset_pages == 0);
		FUZZ_CHECK(choice.source == HIB_TARGET_FROM_ONLY_SWAP);
		hib_target_choice_free(&choice);
	}
	r = hib_target_open(area.path, 0, false, &t);
	FUZZ_CHECK(r == 0);
	r = hib_target_swap_active(t, swaps.path);
	FUZZ_CHECK(r == 0 || r == 1);
	hib_target_close(t);
	free(text);
	return 0;
}
