// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The initramfs side: honour noresume, find the target, and with an image
 * there load, check and restore it; with none, return at once having written
 * nothing. Whatever goes wrong, the image is discarded and the boot goes on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"
#include "util/util.h"

/* noresume or hibernate=no on the kernel command line. */
static bool resume_refused(void)
{
	struct hib_cmdline kc = { 0 };
	char buf[4096];
	bool no;
	FILE *f = fopen("/proc/cmdline", "re");

	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f))
		hib_cmdline_parse(buf, &kc);
	fclose(f);
	no = kc.noresume || kc.hibernate_no;
	hib_cmdline_free(&kc);
	return no;
}

/* This boot goes on without the image and will change the filesystems it
 * remembers: discard it now, so no later boot can resume it. */
static int discard_for_noresume(struct control *ctl)
{
	_cleanup_(hib_target_closep) struct hib_target *t = NULL;
	struct hib_image_info info = { 0 };
	int r;

	if (pick_target(ctl, true, &t) < 0)
		return EXIT_SUCCESS;
	(void)hib_image_info(t, &info);
	r = hib_image_invalidate(t);
	if (r > 0) {
		tlog(ctl, HIB_LOG_WARN, "noresume: the image on %s was discarded",
		     hib_target_path(t));
		history_handover(ctl, HIB_HISTORY_REFUSED, &info,
				 "noresume on the kernel command line: the image was discarded");
	} else
		tlog(ctl, HIB_LOG_INFO, "noresume on the kernel command line: not resuming");
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Is there an image on @t? 1 yes, 0 no (said why, the boot goes on), <0 failed (said). */
static int probe_image(struct control *ctl, struct hib_target *t)
{
	enum hib_sig_state st;
	int r = hib_target_probe(t, &st);

	if (r < 0) {
		say(ctl, "%s: cannot read the swap header: %s", hib_target_path(t), strerror(-r));
		return r;
	}
	if (st == HIB_SIG_FOREIGN) {
		/* No image, and the boot goes on: but resume= (or --device) names
		 * something that never could hold one, which the user should hear. */
		tlog(ctl, HIB_LOG_WARN,
		     "%s: no image: it is not a swap area or image file%s; "
		     "check resume= and resume_offset=",
		     hib_target_path(t), hib_target_offset_pages(t) ? " at that offset" : "");
		return 0;
	}
	/* Another format's image is a downgrade where encryption is required:
	 * hib_resume refuses and discards it (lib/engine/resume.c). */
	if (st != HIB_SIG_IMAGE && st != HIB_SIG_BROKEN &&
	    (st != HIB_SIG_KERNEL || !ctl->cfg.opts.require_encryption)) {
		tlog(ctl, HIB_LOG_INFO, "%s: no image (%s)", hib_target_path(t),
		     hib_sig_state_name(st));
		return 0;
	}
	return 1;
}

/* The same target, opened for writing: from here on we may invalidate. */
static int reopen_writable(struct control *ctl, struct hib_target **t)
{
	_cleanup_(freep) char *path = strdup(hib_target_path(*t));
	uint64_t off = hib_target_offset_pages(*t);
	int r;

	hib_target_closep(t);
	r = path ? hib_target_open(path, off, true, t) : -ENOMEM;
	if (r < 0)
		say(ctl, "%s: cannot open for writing: %s", path ? path : "?", strerror(-r));
	return r;
}

/* Load and restore; without the snapshot device the image cannot be
 * restored: it is discarded all the same. */
static int load_and_restore(struct control *ctl, struct hib_target *t,
			    enum hib_resume_outcome *outcome)
{
	_cleanup_(hib_snapshot_closep) struct hib_snapshot *snap = NULL;
	_cleanup_(secrets_free) struct secrets s;
	struct hib_options opts = output_options(ctl);
	int r;

	secrets_init(&s, ctl);
	r = snapshot_open(ctl, HIB_SNAP_RESUME, &snap);
	secrets_attach_resume(&s, &opts);
	output_progress_start(ctl);
	return hib_resume(t, r < 0 ? NULL : snap, &opts, outcome, NULL);
}

/* The splash's last line before the boot goes on: why, in the library's words
 * (hib_resume has returned: nothing is frozen). */
static void splash_refused(struct control *ctl)
{
	char msg[600];

	snprintf(msg, sizeof(msg), "The saved image was not resumed: %s. Starting normally.",
		 ctl->out.last_error[0] ? ctl->out.last_error : "see the boot log");
	output_splash_message(ctl, msg);
}

int do_resume(struct control *ctl)
{
	_cleanup_(hib_target_closep) struct hib_target *t = NULL;
	enum hib_resume_outcome outcome = 0;
	struct hib_image_info info = { 0 };
	int r;

	/* noresume: the user wants a fresh boot. */
	if (resume_refused())
		return discard_for_noresume(ctl);
	output_splash(ctl);
	r = pick_target(ctl, false, &t);
	if (r < 0)
		return r == -ENOENT && !ctl->device && !ctl->cfg.device ? EXIT_SUCCESS
									: EXIT_FAILURE;
	r = probe_image(ctl, t);
	if (r <= 0)
		return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
	if (reopen_writable(ctl, &t) < 0)
		return EXIT_FAILURE;
	(void)hib_image_info(t, &info);
	ctl->out.last_error[0] = 0;
	r = load_and_restore(ctl, t, &outcome);
	/* An image kept for another kernel is not resumed either. */
	if (r == 0 && outcome == HIB_RESUME_NO_IMAGE)
		return EXIT_SUCCESS;
	/* What happened reaches the running system's history (history.c). */
	if (r < 0)
		history_handover(ctl,
				 ctl->out.loading ? HIB_HISTORY_RESUME_FAILED : HIB_HISTORY_REFUSED,
				 &info, ctl->out.last_error);
	say(ctl, "resume failed; booting normally");
	/* In the kernel log too: under a splash, stderr reaches no console. */
	output_kmsg(ctl, HIB_LOG_WARN, "resume failed; booting normally");
	splash_refused(ctl);
	return EXIT_FAILURE;
}
