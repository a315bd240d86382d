// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What picks the target and the options: the kernel command line
 * (resume=, resume_offset=, noresume, hibernate=no), the guess from
 * /proc/swaps, /etc/hibernate.conf, and codec names.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "format/format.h"
#include "frontend/config.h"
#include "helpers.h"
#include "storage/target.h"
#include "util/util.h"

/* ---- kernel command line ---------------------------------------------- */

static struct hib_cmdline parse(const char *text)
{
	struct hib_cmdline c;

	memset(&c, 0x5a, sizeof(c)); /* every field must be written */
	assert_int_equal(hib_cmdline_parse(text, &c), 0);
	return c;
}

static void cmdline_resume_uuid_and_offset(void **state)
{
	struct hib_cmdline c = parse("BOOT_IMAGE=/vmlinuz-6.1.0 root=UUID=aaaa ro "
				     "resume=UUID=3f1c5f5e-8a8b-4b43-a4ce-0123456789ab "
				     "resume_offset=34816 quiet splash");

	(void)state;
	assert_string_equal(c.resume, "UUID=3f1c5f5e-8a8b-4b43-a4ce-0123456789ab");
	assert_int_equal(c.resume_offset, 34816);
	assert_false(c.noresume);
	assert_false(c.hibernate_no);
	hib_cmdline_free(&c);
	assert_null(c.resume);
}

static void cmdline_nothing_relevant(void **state)
{
	static const char *const texts[] = { "", "   \t\n", "root=/dev/sda1 quiet",
					     "xresume=/dev/sda2 noresumex presume=/dev/x "
					     "myresume_offset=5 hibernate=yes" };

	(void)state;
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct hib_cmdline c = parse(texts[i]);
		assert_null(c.resume);
		assert_int_equal(c.resume_offset, 0);
		assert_false(c.noresume);
		assert_false(c.hibernate_no);
	}
	{
		struct hib_cmdline c = parse(NULL);
		assert_null(c.resume);
		assert_false(c.noresume);
	}
}

static void cmdline_noresume_and_hibernate_no(void **state)
{
	struct hib_cmdline c;

	(void)state;
	c = parse("resume=/dev/sda2 noresume");
	assert_true(c.noresume);
	assert_false(c.hibernate_no);
	assert_string_equal(c.resume, "/dev/sda2");
	hib_cmdline_free(&c);

	c = parse("hibernate=no");
	assert_true(c.hibernate_no);
	assert_false(c.noresume);
	c = parse("quiet nohibernate");
	assert_true(c.hibernate_no);
	c = parse("hibernate=noresume");
	assert_true(c.noresume);
	assert_false(c.hibernate_no);
}

static void cmdline_quoted_label(void **state)
{
	struct hib_cmdline c;

	(void)state;
	c = parse("root=/dev/sda1 resume=LABEL=\"my swap\" resume_offset=8 ro");
	assert_string_equal(c.resume, "LABEL=my swap");
	assert_int_equal(c.resume_offset, 8);
	hib_cmdline_free(&c);
	/* The quotes may wrap the whole word, and hold tabs. */
	c = parse("\"resume=LABEL=a \tb\" quiet");
	assert_string_equal(c.resume, "LABEL=a \tb");
	hib_cmdline_free(&c);
}

static void cmdline_last_resume_wins(void **state)
{
	struct hib_cmdline c;

	(void)state;
	c = parse("resume=/dev/sda2 resume=/dev/sdb3 resume_offset=1 resume_offset=2");
	assert_string_equal(c.resume, "/dev/sdb3");
	assert_int_equal(c.resume_offset, 2);
	hib_cmdline_free(&c);
	/* An empty resume= clears it. */
	c = parse("resume=/dev/sda2 resume=");
	assert_null(c.resume);
}

static void cmdline_garbage_offsets_ignored(void **state)
{
	static const char *const bad[] = { "resume_offset=", "resume_offset=abc",
					   "resume_offset=-5", "resume_offset=0x",
					   "resume_offset=99999999999999999999999" };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct hib_cmdline c = parse(bad[i]);
		if (c.resume_offset != 0)
			fail_msg("'%s' gave offset %llu", bad[i],
				 (unsigned long long)c.resume_offset);
	}
}

/*
 * The kernel reads resume_offset= with sscanf("%llu"): decimal, and a value it
 * cannot read leaves the earlier one in place. hibernate must find the swap
 * header where the kernel will look for it.
 */
static void cmdline_offset_read_like_the_kernel(void **state)
{
	static const struct {
		const char *text;
		uint64_t kernel;
	} cases[] = {
		{ "resume=/dev/sda2 resume_offset=010", 10 },
		{ "resume=/dev/sda2 resume_offset=34816 resume_offset=bogus", 34816 },
		{ "resume=/dev/sda2 resume_offset=34816 resume_offset=-1", 34816 },
		{ "resume=/dev/sda2 resume_offset=12abc", 12 }, /* leading digits */
	};
	unsigned wrong = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hib_cmdline c = parse(cases[i].text);

		if (c.resume_offset != cases[i].kernel) {
			print_message("# '%s': offset %llu, the kernel reads %llu\n", cases[i].text,
				      (unsigned long long)c.resume_offset,
				      (unsigned long long)cases[i].kernel);
			wrong++;
		}
		hib_cmdline_free(&c);
	}
	assert_int_equal(wrong, 0);
}

/* ---- guessing the target ---------------------------------------------- */

#define SWAPS_HEAD "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"

struct guess_case {
	const char *name;
	const char *cmdline;
	const char *swaps; /* NULL: the file does not exist */
	int want;
	const char *want_spec;
	uint64_t want_offset;
};

static const struct guess_case guess_cases[] = {
	{ "guess_no_swap_at_all", "", SWAPS_HEAD, -ENOENT, NULL, 0 },
	{ "guess_empty_swaps_table", "", "", -ENOENT, NULL, 0 },
	{ "guess_missing_swaps_table", "", NULL, -ENOENT, NULL, 0 },
	{ "guess_one_partition", "quiet",
	  SWAPS_HEAD "/dev/vda2                               partition\t2097148\t\t0\t\t-2\n", 0,
	  "/dev/vda2", 0 },
	{ "guess_only_swap_files_is_nothing", "",
	  SWAPS_HEAD "/swapfile                               file\t\t1048572\t\t0\t\t-2\n",
	  -ENOENT, NULL, 0 },
	{ "guess_one_partition_among_files", "",
	  SWAPS_HEAD "/swapfile                               file\t\t1048572\t\t0\t\t-2\n"
		     "/dev/nvme0n1p3                          partition\t8388604\t\t0\t\t-3\n",
	  0, "/dev/nvme0n1p3", 0 },
	{ "guess_several_partitions_not_unique", "",
	  SWAPS_HEAD "/dev/vda2                               partition\t2097148\t\t0\t\t-2\n"
		     "/dev/vdb1                               partition\t2097148\t\t0\t\t-3\n",
	  -ENOTUNIQ, NULL, 0 },
	{ "guess_resume_wins_over_several", "resume=UUID=abcd-1234 resume_offset=777",
	  SWAPS_HEAD "/dev/vda2                               partition\t2097148\t\t0\t\t-2\n"
		     "/dev/vdb1                               partition\t2097148\t\t0\t\t-3\n",
	  0, "UUID=abcd-1234", 777 },
	{ "guess_resume_wins_over_one", "resume=/dev/sdz9",
	  SWAPS_HEAD "/dev/vda2                               partition\t2097148\t\t0\t\t-2\n", 0,
	  "/dev/sdz9", 0 },
	{ "guess_resume_without_swaps_table", "resume=LABEL=\"x y\" resume_offset=3", NULL, 0,
	  "LABEL=x y", 3 },
	{ "guess_offset_ignored_without_resume", "resume_offset=999",
	  SWAPS_HEAD "/dev/vda2                               partition\t2097148\t\t0\t\t-2\n", 0,
	  "/dev/vda2", 0 },
	{ "guess_unescapes_swaps_paths", "",
	  SWAPS_HEAD "/dev/disk/by-label/my\\040swap         partition\t2097148\t\t0\t\t-2\n", 0,
	  "/dev/disk/by-label/my swap", 0 },
};

static void guess(void **state)
{
	const struct guess_case *c = *state;
	char path[PATH_MAX];
	struct hib_target_request req = { .cmdline = c->cmdline, .proc_swaps = path };
	struct hib_target_choice choice = { .spec = (char *)0x1, .offset_pages = 0xabcdef };
	int fd = make_temp(path, "swaps");
	int r;

	close(fd);
	if (c->swaps)
		write_text_file(path, c->swaps);
	else
		unlink(path);
	r = hib_target_choose(&req, &choice, NULL);
	unlink(path);
	assert_int_equal(r, c->want);
	if (r < 0) {
		assert_ptr_equal(choice.spec, (char *)0x1); /* untouched on failure */
		assert_int_equal(choice.offset_pages, 0xabcdef);
		return;
	}
	assert_string_equal(choice.spec, c->want_spec);
	assert_int_equal(choice.offset_pages, c->want_offset);
	hib_target_choice_free(&choice);
}

/* ---- configuration file ------------------------------------------------ */

static char conf_path[PATH_MAX];

static int conf_setup(void **state)
{
	(void)state;
	close(make_temp(conf_path, "conf"));
	return 0;
}

static int conf_teardown(void **state)
{
	(void)state;
	unlink(conf_path);
	return 0;
}

struct load_result {
	int r;
	unsigned line;
	char err[256];
	struct hib_config c;
};

static void load(const char *text, struct load_result *res)
{
	write_text_file(conf_path, text);
	memset(res, 0, sizeof(*res));
	hib_config_init(&res->c);
	res->r = hib_config_load(&res->c, conf_path, &res->line, res->err, sizeof(res->err));
}

static void config_good_file(void **state)
{
	struct load_result res;

	(void)state;
	load("# hibernate configuration\n"
	     "\n"
	     "device = \"/dev/disk/by-label/my swap\"\n"
	     "   offset=34816   \n"
	     "compress = zstd:5\n"
	     "\t# indented comment\n"
	     "threads = 4\n"
	     "image-size = 512\n"
	     "powerdown = platform\n"
	     "loglevel = 4\n"
	     "verify = yes\n"
	     "cancel = no\n"
	     "auto-swapon = true\n",
	     &res);
	assert_int_equal(res.r, 0);
	assert_string_equal(res.c.device, "/dev/disk/by-label/my swap");
	assert_true(res.c.offset_set);
	assert_int_equal(res.c.offset, 34816);
	assert_int_equal(res.c.opts.codec, HIB_COMPRESS_ZSTD);
	assert_int_equal(res.c.opts.codec_level, 5);
	assert_int_equal(res.c.opts.threads, 4);
	assert_int_equal(res.c.opts.image_size, 512ll << 20);
	assert_int_equal(res.c.opts.powerdown, HIB_POWERDOWN_PLATFORM);
	assert_int_equal(res.c.loglevel, 4);
	assert_true(res.c.opts.verify);
	assert_false(res.c.cancel);
	assert_true(res.c.opts.auto_swapon);
	hib_config_free(&res.c);

	load("image-size = min\npowerdown = reboot\ncompress = 'none'\nverify = 0\n", &res);
	assert_int_equal(res.r, 0);
	assert_false(res.c.opts.verify);
	assert_int_equal(res.c.opts.image_size, 0);
	assert_int_equal(res.c.opts.powerdown, HIB_POWERDOWN_REBOOT);
	assert_int_equal(res.c.opts.codec, HIB_COMPRESS_NONE);
	assert_null(res.c.device);
	assert_false(res.c.offset_set);
	hib_config_free(&res.c);

	load("powerdown = suspend\n", &res);
	assert_int_equal(res.r, 0);
	assert_int_equal(res.c.opts.powerdown, HIB_POWERDOWN_SUSPEND);
	hib_config_free(&res.c);

	load("zram = keep\n", &res);
	assert_int_equal(res.r, 0);
	assert_int_equal(res.c.opts.zram, HIB_ZRAM_KEEP);
	hib_config_free(&res.c);
	load("zram = keep\nzram = swapoff\n", &res);
	assert_int_equal(res.r, 0);
	assert_int_equal(res.c.opts.zram, HIB_ZRAM_SWAPOFF);
	hib_config_free(&res.c);
}

static void config_defaults_untouched_by_empty_file(void **state)
{
	struct load_result res;
	struct hib_options def;

	(void)state;
	hib_options_init(&def);
	load("# nothing\n\n", &res);
	assert_int_equal(res.r, 0);
	assert_int_equal(res.c.loglevel, -1); /* not set: the program's default stands */
	assert_true(res.c.cancel);
	assert_false(res.c.opts.verify);
	assert_false(res.c.opts.auto_swapon);
	assert_int_equal(res.c.opts.zram, HIB_ZRAM_SWAPOFF);
	assert_int_equal(res.c.opts.codec, def.codec);
	assert_int_equal(res.c.opts.image_size, def.image_size);
	assert_int_equal(res.c.opts.powerdown, def.powerdown);
	assert_int_equal(res.c.opts.threads, def.threads);
	assert_null(res.c.device);
	/* systemd-sleep's hooks run unless switched off; pm-utils' only when asked. */
	assert_true(res.c.hooks_systemd);
	assert_false(res.c.hooks_pmutils);
	hib_config_free(&res.c);
	load("systemd-hooks = no\n", &res);
	assert_int_equal(res.r, 0);
	assert_false(res.c.hooks_systemd);
	hib_config_free(&res.c);
}

static void config_unknown_key_names_line(void **state)
{
	struct load_result res;

	(void)state;
	load("# comment\ndevice = /dev/vda2\ncompresion = lz4\nthreads = 2\n", &res);
	assert_int_equal(res.r, -ENOKEY);
	assert_int_equal(res.line, 3);
	assert_non_null(strstr(res.err, "compresion"));
	/* Lines after the error are not applied. */
	assert_int_equal(res.c.opts.threads, 0);
	hib_config_free(&res.c);
}

/* Argon2id's cost: only within what every reader takes, the range in the message. */
static void config_kdf_cost_bounded(void **state)
{
	static const struct {
		const char *text, *range;
	} out[] = {
		{ "kdf-memory = 512\n", "(8 to 256 MiB)" },
		{ "kdf-memory = 7\n", "(8 to 256 MiB)" },
		{ "kdf-passes = 0\n", "(1 to 4)" },
		{ "kdf-passes = 5\n", "(1 to 4)" },
	};
	struct load_result res;

	(void)state;
	load("kdf-passes = 4\nkdf-memory = 256\n", &res);
	assert_int_equal(res.r, 0);
	assert_int_equal(res.c.opts.kdf_passes, HIB_ARGON_OPS_MAX);
	assert_int_equal(res.c.opts.kdf_memory, HIB_ARGON_MEM_MAX);
	hib_config_free(&res.c);
	load("kdf-passes = 1\nkdf-memory = 8\n", &res);
	assert_int_equal(res.r, 0);
	assert_int_equal(res.c.opts.kdf_passes, HIB_ARGON_OPS_MIN);
	assert_int_equal(res.c.opts.kdf_memory, HIB_ARGON_MEM_MIN);
	hib_config_free(&res.c);
	/* Not set: the library's default (libsodium's interactive level). */
	load("\n", &res);
	assert_int_equal(res.c.opts.kdf_passes, 0);
	assert_int_equal(res.c.opts.kdf_memory, 0);
	hib_config_free(&res.c);
	for (size_t i = 0; i < sizeof(out) / sizeof(out[0]); i++) {
		load(out[i].text, &res);
		assert_int_equal(res.r, -ERANGE);
		assert_int_equal(res.line, 1);
		if (!strstr(res.err, out[i].range))
			fail_msg("'%s': error '%s' does not give the range %s", out[i].text,
				 res.err, out[i].range);
		hib_config_free(&res.c);
	}
}

struct bad_value_case {
	const char *name;
	const char *text;
	unsigned line;
	const char *key;
};

static const struct bad_value_case bad_values[] = {
	{ "config_services_path_refused", "services = ../../tmp/x\n", 1, "services" },
	{ "config_services_absolute_path_refused", "services = ssh /tmp/x\n", 1, "services" },
	{ "config_services_option_refused", "services = cron --now\n", 1, "services" },
	{ "config_services_hidden_refused", "services = .x\n", 1, "services" },
	{ "config_services_shell_refused", "services = 'a;reboot'\n", 1, "services" },
	{ "config_modules_path_refused", "unload-modules = e1000e ../x\n", 1, "unload-modules" },
	{ "config_modules_dot_refused", "unload-modules = a.ko\n", 1, "unload-modules" },
	{ "config_modules_option_refused", "unload-modules = -r\n", 1, "unload-modules" },
	{ "config_bad_threads_names_key", "threads = 4\nthreads = lots\n", 2, "threads" },
	{ "config_threads_above_64_names_key", "threads = 65\n", 1, "threads" },
	{ "config_negative_offset_names_key", "\n\noffset = -1\n", 3, "offset" },
	{ "config_offset_trailing_garbage_names_key", "offset = 12k\n", 1, "offset" },
	{ "config_bad_compress_names_key", "compress = gzip\n", 1, "compress" },
	{ "config_lz4_level_names_key", "compress = lz4:3\n", 1, "compress" },
	{ "config_bad_image_size_names_key", "image-size = huge\n", 1, "image-size" },
	{ "config_bad_powerdown_names_key", "powerdown = nap\n", 1, "powerdown" },
	{ "config_bad_boolean_names_key", "verify = yes\nauto-swapon = maybe\n", 2, "auto-swapon" },
	{ "config_loglevel_above_5_names_key", "loglevel = 6\n", 1, "loglevel" },
	{ "config_bad_zram_names_key", "zram = off\n", 1, "zram" },
	{ "config_empty_value_names_key", "threads =\n", 1, "threads" },
	{ "config_onsuspend_plus_sign", "OnSuspend +5 echo\n", 1, "OnSuspend" },
	{ "config_onsuspend_trailing_letters", "\nOnSuspend 5x echo\n", 2, "OnSuspend" },
	{ "config_onsuspend_three_digits", "OnSuspend 100 echo\n", 1, "OnSuspend" },
	{ "config_onresume_negative", "OnResume -1 echo\n", 1, "OnResume" },
	{ "config_onresume_no_blank_before_nn", "OnResume10 echo\n", 1, "OnResume" },
	{ "config_onresume_no_command", "OnResume 10  \n", 1, "OnResume" },
	{ "config_onsuspend_no_number", "OnSuspend echo\n", 1, "OnSuspend" },
};

/* Names a hook hands to systemctl, init scripts, rmmod and modprobe: the
 * safe ones pass; the error for a bad one names the value and the rule. */
static void config_name_lists(void **state)
{
	struct load_result res;

	(void)state;
	load("services = ssh.service getty@tty1.service sys-dev\\x2dx.mount\n"
	     "unload-modules = e1000e snd_hda_intel i2c-dev\n",
	     &res);
	assert_int_equal(res.r, 0);
	hib_config_free(&res.c);
	load("services = no\nunload-modules = unused\n", &res);
	assert_int_equal(res.r, 0);
	hib_config_free(&res.c);
	load("services = ../../tmp/x\n", &res);
	assert_int_equal(res.r, -EINVAL);
	assert_non_null(strstr(res.err, "'../../tmp/x'"));
	assert_non_null(strstr(res.err, "none starting with '.' or '-'"));
	hib_config_free(&res.c);
}

static void config_bad_value(void **state)
{
	const struct bad_value_case *c = *state;
	struct load_result res;

	load(c->text, &res);
	assert_int_equal(res.r, -EINVAL);
	assert_int_equal(res.line, c->line);
	if (!strstr(res.err, c->key))
		fail_msg("error '%s' does not name the key '%s'", res.err, c->key);
	hib_config_free(&res.c);
}

static void config_inline_hooks_parsed(void **state)
{
	struct load_result res;

	(void)state;
	load("OnSuspend 05 echo a  b\nOnResume\t7\tlogger x\nOnSuspend 99 true\n", &res);
	assert_int_equal(res.r, 0);
	assert_int_equal(res.c.n_inline, 3);
	assert_int_equal(res.c.inl[0].order, 5);
	assert_string_equal(res.c.inl[0].pre_cmd, "echo a  b");
	assert_null(res.c.inl[0].post_cmd);
	assert_int_equal(res.c.inl[1].order, 7);
	assert_string_equal(res.c.inl[1].post_cmd, "logger x");
	assert_null(res.c.inl[1].pre_cmd);
	assert_int_equal(res.c.inl[2].order, 99);
	hib_config_free(&res.c);
}

static void config_line_without_equals(void **state)
{
	struct load_result res;

	(void)state;
	load("device = /dev/vda2\njust some words\n", &res);
	assert_int_equal(res.r, -EINVAL);
	assert_int_equal(res.line, 2);
	assert_non_null(strstr(res.err, "just some words"));
	hib_config_free(&res.c);
}

static void config_missing_file(void **state)
{
	struct hib_config c;
	char err[64] = "";
	unsigned line = 4242;

	(void)state;
	hib_config_init(&c);
	assert_int_equal(hib_config_load(&c, "/nonexistent/hibernate.conf", &line, err,
					 sizeof(err)),
			 -ENOENT);
	assert_int_equal(line, 4242);
	hib_config_free(&c);
}

/* A file named with --config that is not there: -ENOENT, and the message
 * names it (the program stops on it; only the default path may be absent). */
static void config_trusted_missing_file(void **state)
{
	struct hib_config c;
	char err[512] = "";
	unsigned line = 4242;

	(void)state;
	hib_config_init(&c);
	assert_int_equal(hib_config_load_trusted(&c, "/nonexistent/hibernate.conf", &line, err,
						 sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/hibernate.conf"));
	assert_int_equal(line, 4242);
	hib_config_free(&c);
}

/* Absent when checked, there when read: the old check (hib_path_trusted, absent
 * accepted) then hib_config_load by name read whatever appeared; the file is
 * now checked on the descriptor it is read from. */
static void config_trusted_checks_what_it_reads(void **state)
{
	struct hib_config c;
	char err[512] = "", path[PATH_MAX + 8];
	unsigned line = 0;

	(void)state;
	if (geteuid() != 0)
		skip();
	snprintf(path, sizeof(path), "%s.late", conf_path);
	assert_int_equal(hib_path_trusted(path, NULL), -ENOENT);
	write_text_file(path, "OnSuspend 10 /usr/bin/true\n");
	assert_int_equal(chown(path, 1000, 1000), 0);
	hib_config_init(&c);
	assert_int_equal(hib_config_load_trusted(&c, path, &line, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "chown root:root"));
	assert_int_equal(c.n_inline, 0);
	assert_int_equal(line, 0);
	assert_int_equal(chown(path, 0, 0), 0);
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(hib_config_load_trusted(&c, path, &line, err, sizeof(err)), 0);
	assert_int_equal(c.n_inline, 1);
	hib_config_free(&c);
	unlink(path);
}

/* ---- effective values, as scripts read them (hibernate config get) ------ */

static void assert_get(const struct hib_config *c, const char *key, const char *want)
{
	char buf[512];
	int r = hib_config_get(c, key, buf, sizeof(buf));

	if (r != 0 || strcmp(buf, want) != 0)
		fail_msg("config get %s: %d '%s', want '%s'", key, r, r == 0 ? buf : "", want);
}

/* The values the shell integration used to misread: quotes, spaces, blanks around. */
static void config_get_unquotes_like_the_program(void **state)
{
	struct load_result res;

	(void)state;
	load("kernel-mismatch = \"keep\"\n"
	     "key-file = '/etc/hibernate key'\n"
	     "  device =   \"/dev/disk/by-label/my swap\"  \n"
	     "# key-file = /commented/out\n"
	     "\tservices = \"ssh cups\"\n"
	     "compress='zstd:3'\n"
	     "offset = \"34816\"\n",
	     &res);
	assert_int_equal(res.r, 0);
	assert_get(&res.c, "kernel-mismatch", "keep");
	assert_get(&res.c, "key-file", "/etc/hibernate key");
	assert_get(&res.c, "device", "/dev/disk/by-label/my swap");
	assert_get(&res.c, "services", "ssh cups");
	assert_get(&res.c, "compress", "zstd:3");
	assert_get(&res.c, "offset", "34816");
	hib_config_free(&res.c);

	/* '#' starts a comment only at the start of a line: the program's key file is
	 * this whole text, and a script must look for the same file. */
	load("key-file = /etc/hibernate.key # the old one\nkernel-mismatch = keep\n", &res);
	assert_int_equal(res.r, 0);
	assert_get(&res.c, "key-file", "/etc/hibernate.key # the old one");
	assert_get(&res.c, "kernel-mismatch", "keep");
	hib_config_free(&res.c);
}

/* Unset: an empty value where the key is optional, else the default in the file's words. */
static void config_get_unset_keys(void **state)
{
	static const char *const want[][2] = {
		{ "device", "" },
		{ "offset", "" },
		{ "key-file", "" },
		{ "threads", "0" },
		{ "image-size", "default" },
		{ "kernel-mismatch", "discard" },
		{ "loglevel", "3" },
		{ "compress", "lz4" },
		{ "encrypt", "no" },
		{ "clock", "yes" },
		{ "services", "no" },
		{ "hook-timeout", "30" },
		{ "restore-working-set", "yes" },
		{ "restore-limit", "30" },
		{ "resume-preload", "yes" },
	};
	struct load_result res;

	(void)state;
	load("# nothing\n", &res);
	assert_int_equal(res.r, 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_get(&res.c, want[i][0], want[i][1]);
	hib_config_free(&res.c);
}

/* The working set's restore: on by default, switched off and bounded by the file. */
static void config_restore_keys(void **state)
{
	static const char *const bad[] = { "restore-limit = 0\n", "restore-limit = 3601\n",
					   "restore-limit = 5s\n",
					   "restore-working-set = maybe\n" };
	struct load_result res;

	(void)state;
	load("# nothing\n", &res);
	assert_true(res.c.restore_working_set);
	assert_int_equal(res.c.restore_limit, 30);
	hib_config_free(&res.c);
	load("restore-working-set = no\nrestore-limit = 3600\n", &res);
	assert_int_equal(res.r, 0);
	assert_false(res.c.restore_working_set);
	assert_int_equal(res.c.restore_limit, 3600);
	hib_config_free(&res.c);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		load(bad[i], &res);
		if (res.r >= 0)
			fail_msg("'%s' taken", bad[i]);
		assert_int_equal(res.line, 1);
		hib_config_free(&res.c);
	}
}

/* resume-preload: on by default, off in the options when the file says no. */
static void config_resume_preload(void **state)
{
	struct load_result res;

	(void)state;
	load("# nothing\n", &res);
	assert_false(res.c.opts.no_preload);
	hib_config_free(&res.c);
	load("resume-preload = no\n", &res);
	assert_int_equal(res.r, 0);
	assert_true(res.c.opts.no_preload);
	assert_get(&res.c, "resume-preload", "no");
	hib_config_free(&res.c);
	load("resume-preload = later\n", &res);
	assert_true(res.r < 0);
	assert_int_equal(res.line, 1);
	hib_config_free(&res.c);
}

/* What get prints is what the file would say: set back, it gives the same value. */
static void config_get_round_trips(void **state)
{
	struct load_result res;
	const char *key;

	(void)state;
	load("device = /dev/vda2\noffset = 7\nthreads = 3\nimage-size = 512\nloglevel = 4\n"
	     "compress = zstd:5\npowerdown = suspend\nkey-file = /k\nnetwork = wlan0\n",
	     &res);
	assert_int_equal(res.r, 0);
	for (size_t i = 0; (key = hib_config_key(i, NULL)); i++) {
		char v[512], again[512], err[256];
		struct hib_config c;

		assert_int_equal(hib_config_get(&res.c, key, v, sizeof(v)), 0);
		hib_config_init(&c);
		if (*v && hib_config_set_from(&c, key, v, HIB_SRC_FILE, err, sizeof(err)) < 0)
			fail_msg("%s = %s: %s", key, v, err);
		assert_int_equal(hib_config_get(&c, key, again, sizeof(again)), 0);
		if (strcmp(v, again) != 0)
			fail_msg("%s: '%s' set back reads '%s'", key, v, again);
		hib_config_free(&c);
	}
	hib_config_free(&res.c);
}

static void config_get_unknown_key(void **state)
{
	static const char *const bad[] = { "nope", "", "OnSuspend", "Device", "key-file ", "#" };
	struct hib_config c;
	char buf[64] = "untouched";

	(void)state;
	hib_config_init(&c);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (hib_config_get(&c, bad[i], buf, sizeof(buf)) != -ENOKEY)
			fail_msg("'%s' taken for a key", bad[i]);
	hib_config_free(&c);
}

/* A value that does not fit is an error, never a shorter path. */
static void config_get_never_cuts(void **state)
{
	char path[300], buf[301], err[256];
	struct hib_config c;

	(void)state;
	memset(path, 'k', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = 0;
	hib_config_init(&c);
	assert_int_equal(hib_config_set_from(&c, "key-file", path, HIB_SRC_FILE, err, sizeof(err)),
			 0);
	assert_int_equal(hib_config_get(&c, "key-file", buf, sizeof(buf)), 0);
	assert_string_equal(buf, path);
	assert_int_equal(hib_config_get(&c, "key-file", buf, sizeof(buf) - 1), -E2BIG);
	assert_int_equal(hib_config_get(&c, "key-file", buf, 64), -E2BIG);
	hib_config_free(&c);
}

static void dump_collect(const char *key, const char *value, enum hib_config_source src, void *ud)
{
	char *out = ud;
	size_t n = strlen(out);

	(void)src;
	snprintf(out + n, 4096 - n, "%s=%s\n", key, value);
}

/* hibernate status still says what an unset key means; get gives the bare value. */
static void config_status_says_what_unset_means(void **state)
{
	static const char *const want[] = {
		"device=(auto: resume=, else the active swap)\n",
		"offset=(none)\n",
		"threads=0 (one per CPU)\n",
		"image-size=default (the kernel's, 2/5 of RAM, unless just under the memory in use)\n",
		"key-file=(none)\n",
		"kernel-mismatch=discard\n",
	};
	struct hib_config c;
	char out[4096] = "";

	(void)state;
	hib_config_init(&c);
	hib_config_dump(&c, dump_collect, out);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(out, want[i]))
			fail_msg("status lacks '%s':\n%s", want[i], out);
	hib_config_free(&c);
}

/* ---- codec names ------------------------------------------------------- */

static void codec_parse_good(void **state)
{
	static const struct {
		const char *text;
		enum hib_codec_choice codec;
		int level;
	} good[] = {
		{ "none", HIB_COMPRESS_NONE, 0 },     { "lz4", HIB_COMPRESS_LZ4, 0 },
		{ "zstd", HIB_COMPRESS_ZSTD, 0 },     { "zstd:1", HIB_COMPRESS_ZSTD, 1 },
		{ "zstd:19", HIB_COMPRESS_ZSTD, 19 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		enum hib_codec_choice codec = (enum hib_codec_choice)99;
		int level = 99;

		assert_int_equal(hib_codec_parse(good[i].text, &codec, &level), 0);
		assert_int_equal(codec, good[i].codec);
		assert_int_equal(level, good[i].level);
		/* The name round trips. */
		assert_int_equal(strncmp(hib_codec_name(codec), good[i].text,
					 strlen(hib_codec_name(codec))),
				 0);
	}
	assert_string_equal(hib_codec_name(99), "unknown");
}

static void codec_parse_bad(void **state)
{
	static const char *const bad[] = { "",        "gzip",    "LZ4",      "zstd:", "zstd:0",
					   "zstd:20", "zstd:-1", "zstd:3x",  "lz4:1", "none:1",
					   "zstdx",   "lz",      "zstd:1:2", " lz4",  "lz4 " };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		enum hib_codec_choice codec = (enum hib_codec_choice)99;
		int level = 99;

		if (hib_codec_parse(bad[i], &codec, &level) != -EINVAL)
			fail_msg("'%s' accepted", bad[i]);
		assert_int_equal(codec, 99);
		assert_int_equal(level, 99);
	}
}

#define NAMED(fn)                                                                                  \
	{                                                                                          \
		.name = #fn, .test_func = fn                                                       \
	}
#define CONF(fn)                                                                                   \
	{                                                                                          \
		.name = #fn, .test_func = fn, .setup_func = conf_setup,                            \
		.teardown_func = conf_teardown                                                     \
	}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		NAMED(cmdline_resume_uuid_and_offset),
		NAMED(cmdline_nothing_relevant),
		NAMED(cmdline_noresume_and_hibernate_no),
		NAMED(cmdline_quoted_label),
		NAMED(cmdline_last_resume_wins),
		NAMED(cmdline_garbage_offsets_ignored),
		NAMED(cmdline_offset_read_like_the_kernel),
		CONF(config_good_file),
		CONF(config_defaults_untouched_by_empty_file),
		CONF(config_unknown_key_names_line),
		CONF(config_kdf_cost_bounded),
		CONF(config_inline_hooks_parsed),
		CONF(config_name_lists),
		CONF(config_line_without_equals),
		NAMED(config_missing_file),
		NAMED(config_trusted_missing_file),
		CONF(config_trusted_checks_what_it_reads),
		CONF(config_get_unquotes_like_the_program),
		CONF(config_get_unset_keys),
		CONF(config_restore_keys),
		CONF(config_resume_preload),
		CONF(config_get_round_trips),
		NAMED(config_get_unknown_key),
		NAMED(config_get_never_cuts),
		NAMED(config_status_says_what_unset_means),
		NAMED(codec_parse_good),
		NAMED(codec_parse_bad),
	};
	enum {
		N_F = sizeof(fixed) / sizeof(fixed[0]),
		N_G = sizeof(guess_cases) / sizeof(guess_cases[0]),
		N_B = sizeof(bad_values) / sizeof(bad_values[0]),
	};
	struct CMUnitTest tests[N_F + N_G + N_B];
	size_t n = 0;

	for (size_t i = 0; i < N_F; i++)
		tests[n++] = fixed[i];
	for (size_t i = 0; i < N_G; i++)
		tests[n++] = (struct CMUnitTest){ .name = guess_cases[i].name,
						  .test_func = guess,
						  .initial_state = (void *)&guess_cases[i] };
	for (size_t i = 0; i < N_B; i++)
		tests[n++] = (struct CMUnitTest){ .name = bad_values[i].name,
						  .test_func = config_bad_value,
						  .setup_func = conf_setup,
						  .teardown_func = conf_teardown,
						  .initial_state = (void *)&bad_values[i] };
	quiet_logs();
	return _cmocka_run_group_tests("config-cmdline", tests, n, NULL, NULL);
}
