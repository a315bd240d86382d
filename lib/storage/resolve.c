// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Which target: the one order behind hibernate, its resume step and the
 * doctor. --device, else device = in the config file, else resume= on the
 * kernel command line, else the only active swap partition; and when none
 * names one, or the one named cannot be opened, a message that says what to
 * do. New kinds of target (btrfs, LVM, LUKS) are opened from here.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "storage/target-priv.h"
#include "util/error.h"
#include "util/util.h"

/* /proc/cmdline's one line, malloc'ed; NULL when it cannot be read. */
static char *read_proc_cmdline(void)
{
	char *text = NULL;
	size_t cap = 0;
	FILE *f = fopen("/proc/cmdline", "re");

	if (!f)
		return NULL;
	if (getline(&text, &cap, f) < 0) {
		free(text);
		text = NULL;
	}
	fclose(f);
	return text;
}

/* Nothing given: resume= on the kernel command line, else the only active swap partition. */
static int choose_from_kernel_and_swaps(const struct hib_target_request *req,
					struct hib_target_choice *c, struct hib_error *err)
{
	_cleanup_(freep) char *text = NULL;
	const char *cmdline = req->cmdline;
	struct hib_cmdline kc;
	int r;

	if (!cmdline) {
		text = read_proc_cmdline();
		cmdline = text ? text : "";
	}
	r = hib_cmdline_parse(cmdline, &kc);
	if (r < 0)
		return hib_error_set(err, r, "choosing the target from the kernel command line: %s",
				     strerror(-r));
	if (kc.resume) {
		c->spec = TAKE_PTR(kc.resume);
		c->offset_pages = kc.resume_offset;
		c->source = HIB_TARGET_FROM_CMDLINE;
		return 0;
	}
	r = hib_swaps_only_partition(req->proc_swaps, &c->spec);
	if (r == -ENOTUNIQ)
		return hib_error_set(err, r,
				     "several swap areas are active and none is configured: name "
				     "one with --device, 'device =' in %s, or resume= on the "
				     "kernel command line",
				     HIB_CONFIG_PATH);
	if (r == -ENOENT)
		return hib_error_set(err, r,
				     "no target: no device = in %s, no resume= on the kernel "
				     "command line and no active swap partition. Make one (mkswap "
				     "+ swapon, a swap file, or hibernate prepare-file) and name "
				     "it with --device, device = or resume=",
				     HIB_CONFIG_PATH);
	if (r < 0)
		return hib_error_set(err, r, "choosing the target from %s: %s",
				     req->proc_swaps ? req->proc_swaps : "/proc/swaps",
				     strerror(-r));
	c->source = HIB_TARGET_FROM_ONLY_SWAP;
	return 0;
}

int hib_target_choose(const struct hib_target_request *req, struct hib_target_choice *ret,
		      struct hib_error *err)
{
	struct hib_target_choice c = { 0 };
	const char *given = req->spec ? req->spec : req->config_spec;
	int r;

	hib_error_clear(err);
	if (given) {
		c.spec = strdup(given);
		if (!c.spec)
			return hib_error_set(err, -ENOMEM, "%s: %s", given, strerror(ENOMEM));
		c.source = req->spec ? HIB_TARGET_FROM_OPTION : HIB_TARGET_FROM_CONFIG;
	} else {
		r = choose_from_kernel_and_swaps(req, &c, err);
		if (r < 0)
			return r;
	}
	/* Each option overrides its config key on its own, as everywhere: --offset
	 * applies to device = too, and either to resume=. */
	if (req->offset_set || req->config_offset_set) {
		c.offset_pages = req->offset_set ? req->offset_pages : req->config_offset_pages;
		c.offset_set = true;
	}
	*ret = c;
	return 0;
}

void hib_target_choice_free(struct hib_target_choice *c)
{
	free(c->spec);
	c->spec = NULL;
}

/* What hib_target_open's errors mean to the one who named @spec. */
static int open_error(struct hib_error *err, int r, const char *spec, uint64_t offset_pages)
{
	switch (r) {
	case -ENOENT:
		return hib_error_set(err, r, "%s: no such device (check the UUID or path)", spec);
	case -ENODEV:
		return hib_error_set(err, r, "%s: not a block device or regular file", spec);
	case -EINVAL:
		return hib_error_set(err, r,
				     "%s: not a device: use a /dev path, UUID=, LABEL=, PARTUUID=, "
				     "MAJ:MIN or the kernel's hex device number",
				     spec);
	case -ERANGE:
		return hib_error_set(err, r,
				     "%s: offset %" PRIu64 " pages lies beyond the end of the "
				     "device",
				     spec, offset_pages);
	}
	return hib_error_set(err, r, "%s: cannot open: %s", spec, strerror(-r));
}

int hib_target_resolve(const struct hib_target_request *req, struct hib_target **ret,
		       struct hib_error *err)
{
	_cleanup_(hib_target_choice_free) struct hib_target_choice c = { 0 };
	struct hib_target *t = NULL;
	struct stat st;
	int r;

	r = hib_target_choose(req, &c, err);
	if (r < 0)
		return r;
	/* A file named with an offset is a disk image, read and written as it is. */
	if (req->file_target && !c.offset_set && stat(c.spec, &st) == 0 && S_ISREG(st.st_mode)) {
		r = hib_target_open_file(c.spec, req->writable, &t, err);
		if (r < 0)
			return r;
	} else {
		r = hib_target_open(c.spec, c.offset_pages, req->writable, &t);
		if (r < 0)
			return open_error(err, r, c.spec, c.offset_pages);
	}
	t->source = c.source;
	*ret = t;
	return 0;
}

enum hib_target_source hib_target_source(const struct hib_target *t)
{
	return t->source;
}

const char *hib_target_source_name(enum hib_target_source s)
{
	switch (s) {
	case HIB_TARGET_FROM_SPEC:
		return "by name";
	case HIB_TARGET_FROM_OPTION:
		return "by --device";
	case HIB_TARGET_FROM_CONFIG:
		return "by device = in " HIB_CONFIG_PATH;
	case HIB_TARGET_FROM_CMDLINE:
		return "by resume= on the kernel command line";
	case HIB_TARGET_FROM_ONLY_SWAP:
		return "as the only active swap partition";
	}
	return "somehow";
}
