// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The small commands: status, invalidate, offset, prepare-file and config,
 * and hibernate's own entry, which hands over to a cycle or a sleep.
 * Each resolves what it works on, asks the library, and prints the answer.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "frontend/location.h"
#include "frontend/setupplan.h"
#include "tool.h"
#include "util/util.h"

static void print_location(const char *path, const struct hib_file_location *l)
{
	printf("file: %s (%s, %" PRIu64 " pages in %" PRIu64 " extent%s", path, l->fstype,
	       l->file_pages, l->extents, l->extents == 1 ? "" : "s");
	/* Said, so that nobody "fixes" an fallocated swap file that is fine. */
	if (l->unwritten_pages)
		printf("; %" PRIu64 " unwritten: made with fallocate, which a swap file may be",
		       l->unwritten_pages);
	printf(")\n");
	printf("device: %s\n", l->device);
	if (l->uuid)
		printf("resume=UUID=%s resume_offset=%" PRIu64 "\n", l->uuid, l->offset_pages);
	printf("resume=%s resume_offset=%" PRIu64 "\n", l->device, l->offset_pages);
}

int do_offset(struct control *ctl)
{
	struct hib_file_location l;
	struct hib_error err;
	int r = hib_file_locate(ctl->args[0], &l, &err);

	if (r < 0) {
		say(ctl, "%s", err.msg);
		return EXIT_FAILURE;
	}
	print_location(ctl->args[0], &l);
	hib_file_location_free(&l);
	return EXIT_SUCCESS;
}

int do_prepare(struct control *ctl)
{
	struct hib_error err;
	unsigned long long mb;
	char *end;
	int r;

	errno = 0;
	mb = strtoull(ctl->args[1], &end, 10);
	if (errno || *end || mb == 0 || mb > (1ull << 30) || ctl->args[1][0] == '-')
		bad_usage("prepare-file: '%s' is not a size in MiB", ctl->args[1]);
	r = hib_prepare_file(ctl->args[0], mb << 20, &err);
	if (r < 0) {
		say(ctl, "%s", err.msg);
		return EXIT_FAILURE;
	}
	tlog(ctl, HIB_LOG_PROGRESS, "%s: image file of %llu MiB ready; set device = %s in %s",
	     ctl->args[0], mb, ctl->args[0], HIB_CONFIG_PATH);
	return do_offset(ctl);
}

static void print_config(const char *key, const char *value, enum hib_config_source src, void *ud)
{
	(void)ud;
	printf("  %-15s %-40s (%s)\n", key, value, hib_config_source_name(src));
}

static void print_image(const struct hib_image_info *info)
{
	char when[64] = "?";
	time_t c = (time_t)info->created_unix;
	struct tm tm;

	if (gmtime_r(&c, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	printf("image: present\n");
	printf("image-id: %016" PRIx64 "\n", info->image_id);
	printf("created: %s\n", when);
	printf("kernel: %s %s (%s)\n", info->kernel_release, info->kernel_version, info->machine);
	printf("stream-bytes: %" PRIu64 "\n", info->stream_bytes);
	printf("image-bytes: %" PRIu64 "\n", info->stored_bytes);
	printf("ratio: %.3f\n",
	       info->stream_bytes ? (double)info->stored_bytes / (double)info->stream_bytes : 0.0);
	printf("codec: %s\n", hib_codec_name(info->codec));
	printf("blocks: %u\n", info->nr_blocks);
	printf("extents: %u\n", info->map_extents);
	printf("threads: %u\n", info->threads);
	printf("snapshot-ms: %" PRIu64 "\n", info->snapshot_ms);
	printf("write-ms: %" PRIu64 "\n", info->write_ms);
}

int do_status(struct control *ctl)
{
	_cleanup_(hib_target_closep) struct hib_target *t = NULL;
	struct hib_image_info info;
	int r;

	history_import(ctl); /* a resume of this boot that did not happen */
	if (pick_target(ctl, false, &t) < 0)
		return EXIT_FAILURE;
	r = hib_image_info(t, &info);
	if (r < 0) {
		say(ctl, "%s: cannot read: %s", hib_target_path(t), strerror(-r));
		return EXIT_FAILURE;
	}
	printf("target: %s\n", hib_target_path(t));
	printf("offset-pages: %" PRIu64 "\n", hib_target_offset_pages(t));
	printf("size-bytes: %" PRIu64 "\n", hib_target_size(t));
	printf("active-swap: %s\n", hib_target_swap_active(t, NULL) == 1 ? "yes" : "no");
	printf("signature: %s\n", hib_sig_state_name(info.state));
	if (info.state == HIB_SIG_IMAGE && info.header_valid)
		print_image(&info);
	else if (info.state == HIB_SIG_IMAGE || info.state == HIB_SIG_BROKEN)
		printf("image: damaged\n");
	else
		printf("image: none\n");
	printf("config:\n");
	hib_config_dump(&ctl->cfg, print_config, NULL);
	history_print(ctl, 10);
	return EXIT_SUCCESS;
}

int do_invalidate(struct control *ctl)
{
	_cleanup_(hib_target_closep) struct hib_target *t = NULL;
	int r;

	if (pick_target(ctl, true, &t) < 0)
		return EXIT_FAILURE;
	r = hib_image_invalidate(t);
	if (r < 0)
		say(ctl, "%s: unable to write the signature page: %s", hib_target_path(t),
		    strerror(-r));
	else if (r == 0)
		tlog(ctl, HIB_LOG_PROGRESS, "%s: no image to invalidate", hib_target_path(t));
	else
		tlog(ctl, HIB_LOG_PROGRESS, "%s: image discarded, swap signature restored",
		     hib_target_path(t));
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* config dump: every key's effective value, then the inline hooks. */
static int config_dump(const struct control *ctl, char *value, size_t size)
{
	const char *key;
	int r = 0;

	for (size_t i = 0; r == 0 && (key = hib_config_key(i, NULL)); i++) {
		r = hib_config_get(&ctl->cfg, key, value, size);
		if (r == 0)
			printf("%s = %s\n", key, value);
		else
			snprintf(value, size, "%s", key); /* names the key that did not fit */
	}
	for (size_t i = 0; r == 0 && i < ctl->cfg.n_inline; i++) {
		const struct hib_inline_hook *h = &ctl->cfg.inl[i];

		printf("%s %02d %s\n", h->pre_cmd ? "OnSuspend" : "OnResume", h->order,
		       h->pre_cmd ? h->pre_cmd : h->post_cmd);
	}
	return r;
}

/* The configured target's location as the initramfs gets it; 1 when device =
 * is unset (nothing to hand over), 0, or -errno said. */
static int configured_location(struct control *ctl, struct hib_location *ret)
{
	_cleanup_(hib_target_closep) struct hib_target *t = NULL;
	char dev[PATH_MAX];
	struct hib_error err;
	int r;

	struct stat st;

	if (hib_config_get(&ctl->cfg, "device", dev, sizeof(dev)) < 0 || !dev[0])
		return 1;
	/* A file: where its blocks are, without opening the device under it. */
	if (stat(dev, &st) == 0 && S_ISREG(st.st_mode))
		r = hib_location_of_file(dev, ret, &err);
	else if (pick_target(ctl, false, &t) < 0)
		return -EINVAL;
	else
		r = hib_location_of_target(NULL, t, ret, &err);
	if (r < 0)
		say(ctl, "%s", err.msg);
	return r;
}

/* config location: "SPEC OFFSET"; config initramfs: the file as the initramfs
 * carries it, device = and offset = resolved (unchanged without device =). */
static int config_location(struct control *ctl, const char *path, bool whole_file)
{
	struct hib_location l;
	_cleanup_(freep) char *text = NULL, *edited = NULL;
	char line[PATH_MAX + 32], offset[32];
	size_t len = 0;
	FILE *f;
	int r = configured_location(ctl, &l);

	if (r < 0)
		return EXIT_FAILURE;
	if (!whole_file) {
		hib_location_format(&l, line, sizeof(line));
		if (r == 0)
			printf("%s\n", line);
		return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
	}
	f = fopen(path, "re");
	if (f && getdelim(&text, &len, 0, f) < 0)
		text = (free(text), NULL);
	if (f)
		fclose(f);
	snprintf(offset, sizeof(offset), "%llu", (unsigned long long)l.offset);
	edited = r == 0 ? hib_setup_conf_edit(text, l.spec, offset) : NULL;
	fputs(edited ? edited : text ? text : "", stdout);
	return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* The one reading of the config file: the shell integration asks here instead of
 * parsing it, so a quoted value or a stray '#' means to it what it means to us.
 * main.c has refused a file with an error already, naming its line. */
int do_config(struct control *ctl)
{
	const char *action = ctl->args[0], *key = ctl->args[1];
	const char *path = ctl->config_path ? ctl->config_path : HIB_CONFIG_PATH;
	char value[8192];
	int r = 0;

	if (strcmp(action, "check") == 0 && !key) {
		printf("%s: %s\n", path,
		       access(path, F_OK) == 0 ? "valid" : "absent: every key has its default");
	} else if (strcmp(action, "get") == 0 && key) {
		r = hib_config_get(&ctl->cfg, key, value, sizeof(value));
		if (r == -ENOKEY)
			bad_usage("config get: unknown key '%s' (hibernate.conf(5) lists them)",
				  key);
		if (r == 0)
			printf("%s\n", value);
	} else if (strcmp(action, "location") == 0 && !key) {
		return config_location(ctl, path, false);
	} else if (strcmp(action, "initramfs") == 0 && !key) {
		return config_location(ctl, path, true);
	} else if (strcmp(action, "dump") == 0 && !key) {
		r = config_dump(ctl, value, sizeof(value));
		key = value;
	} else {
		bad_usage(CONFIG_USAGE);
	}
	if (r < 0) {
		say(ctl, "%s: %s: the value is longer than %zu bytes; shorten it", path, key,
		    sizeof(value) - 1);
		return EXIT_FAILURE;
	}
	return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* The hibernate command: systemd's sleep operation (--systemd-sleep), or one
 * cycle. */
int do_hibernate(struct control *ctl)
{
	static const struct cycle_request plain = { 0 };

	return ctl->sleep_op ? systemd_sleep(ctl) : hibernate_cycle(ctl, &plain);
}
