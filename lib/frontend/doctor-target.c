// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * doctor's checks of the target: found as hibernate finds it (but only read),
 * its first page, its room for an image, its size against what setup would
 * make now, and how resume finds it (the initramfs's record, resume= and
 * resume_offset=); then the checks of its encryption and zram beside it.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "frontend/doctor-priv.h"
#include "frontend/location.h"
#include "frontend/setupplan.h"
#include "frontend/setupstate.h"
#include "storage/dmstack.h"
#include "util/util.h"

/* The room for an image on @t: what the kernel says is free in it when it is
 * active swap (other swap areas do not count: the image goes to this one),
 * else all of it. */
static uint64_t target_room(const struct swaps_seen *sw, const struct hib_target *t)
{
	if (hib_target_kind(t) == HIB_TARGET_PLAINFILE)
		return hib_target_file_size(t);
	for (int i = 0; i < sw->n; i++)
		if (hib_target_is_area(t, sw->v[i].path))
			return sw->v[i].free_kib * 1024;
	return hib_target_size(t);
}

static uint64_t mem_total_bytes(struct doctor_ctx *c)
{
	char buf[4096];
	unsigned long long kib = 0;
	char *p;

	if (doctor_read_file(c, "/proc/meminfo", buf, sizeof(buf)) < 0)
		return 0;
	p = strstr(buf, "MemTotal:");
	if (p)
		sscanf(p + 9, "%llu", &kib);
	return (uint64_t)kib * 1024;
}

/* A target hibernate setup made or chose for less RAM than there is now
 * (a VM or cloud instance resized): setup's size is the worst case. */
static void check_setup_size(struct doctor_ctx *c, const struct hib_target *t, uint64_t mem)
{
	char p[PATH_MAX];
	uint64_t need = hib_setup_need_bytes(mem >> 10);
	uint64_t size = hib_target_file(t) ? hib_target_file_size(t) : hib_target_size(t);

	doctor_path(c, HIB_SETUP_STATE_FILE, p, sizeof(p));
	if (mem == 0 || access(p, F_OK) < 0)
		return;
	if (size >= need)
		doctor_report(c, HIB_DOCTOR_PASS, "setup-size",
			      "%s: %" PRIu64 " MiB, setup's size for this machine's RAM is %" PRIu64
			      " MiB",
			      hib_target_name(t), size >> 20, need >> 20);
	else
		doctor_report(
			c, HIB_DOCTOR_WARN, "setup-size",
			"%s: %" PRIu64 " MiB, but this machine's RAM now calls for %" PRIu64
			" MiB (RAM grew?): run hibernate setup --undo, then hibernate setup, to "
			"re-size it",
			hib_target_name(t), size >> 20, need >> 20);
}

/* Room for the image: at most the kernel's image_size (2/5 of RAM by default). */
static void check_space(struct doctor_ctx *c, const struct swaps_seen *sw,
			const struct hib_target *t)
{
	const struct hib_doctor_input *in = c->in;
	uint64_t mem = mem_total_bytes(c);
	uint64_t need = in->image_size > 0 ? (uint64_t)in->image_size : mem / 5 * 2;
	uint64_t avail = target_room(sw, t);

	if (need == 0)
		doctor_report(c, HIB_DOCTOR_WARN, "space", "cannot tell the memory size");
	else if (avail >= need)
		doctor_report(c, HIB_DOCTOR_PASS, "space",
			      "%" PRIu64 " MiB free for an image of at most %" PRIu64 " MiB",
			      avail >> 20, need >> 20);
	else if (avail >= need / 2)
		doctor_report(
			c, HIB_DOCTOR_WARN, "space",
			"%" PRIu64 " MiB free for an image of up to %" PRIu64 " MiB: enough only "
			"if it compresses to half (lz4 usually does); more swap, or a smaller "
			"image-size, makes sure",
			avail >> 20, need >> 20);
	else
		doctor_report(c, HIB_DOCTOR_FAIL, "space",
			      "%" PRIu64 " MiB free for an image of up to %" PRIu64
			      " MiB: make the swap "
			      "area larger, or set image-size in %s",
			      avail >> 20, need >> 20, HIB_CONFIG_PATH);
	check_setup_size(c, t, mem);
}

/* The record of what the running kernel's initramfs carries (the hooks write
 * it, hibernate compares before the freeze): true when it names the target,
 * so resume finds the image whatever the kernel command line says. */
static bool check_location(struct doctor_ctx *c, const struct hib_target *t)
{
	static const enum hib_doctor_verdict verdicts[] = {
		[HIB_LOCATION_MATCH] = HIB_DOCTOR_PASS,
		[HIB_LOCATION_MISMATCH] = HIB_DOCTOR_FAIL,
		[HIB_LOCATION_UNRECORDED] = HIB_DOCTOR_FAIL,
		[HIB_LOCATION_UNKNOWN] = HIB_DOCTOR_PASS,
	};
	const struct hib_target_request *req = &c->in->target;
	const char *configured = req->spec ? NULL : req->config_spec;
	bool required = hib_location_required(c->in->root, configured, NULL, NULL);
	struct hib_location l;
	struct hib_error err;
	struct utsname u;
	enum hib_location_verdict v;
	char msg[1024];

	if (uname(&u) < 0)
		return false;
	if (hib_location_of_target(c->in->root, t, &l, &err) < 0) {
		if (required)
			doctor_report(c, HIB_DOCTOR_FAIL, "location", "%s", err.msg);
		return false;
	}
	required = hib_location_required(c->in->root, configured, c->cmdline, &l);
	v = hib_location_check(c->in->root, u.release, &l, required, msg, sizeof(msg));
	doctor_report(c, verdicts[v], "location", "%s", msg);
	return v == HIB_LOCATION_MATCH;
}

/* A file target: resume finds it by resume= and resume_offset=, unless the
 * initramfs was handed its location when it was built. */
static void check_resume_offset(struct doctor_ctx *c, const struct hib_target *t)
{
	const char *file = hib_target_file(t);
	uint64_t off = hib_target_offset_pages(t);

	if (check_location(c, t))
		return;
	if (file) {
		if (!c->kc.resume)
			doctor_report(c, HIB_DOCTOR_FAIL, "resume-offset",
				      "%s is a file: the kernel command line needs resume= and "
				      "resume_offset=%" PRIu64 " (hibernate offset %s prints both)",
				      file, off, file);
		else if (c->kc.resume_offset != off)
			doctor_report(c, HIB_DOCTOR_FAIL, "resume-offset",
				      "resume_offset=%" PRIu64
				      " on the kernel command line, but %s starts "
				      "at page %" PRIu64 ": set resume_offset=%" PRIu64,
				      c->kc.resume_offset, file, off, off);
		else
			doctor_report(c, HIB_DOCTOR_PASS, "resume-offset",
				      "resume_offset=%" PRIu64 " matches %s", off, file);
	} else if (!c->kc.resume) {
		doctor_report(
			c, HIB_DOCTOR_WARN, "resume-offset",
			"no resume= on the kernel command line: the initramfs finds the image only "
			"through /etc/hibernate.conf or the only swap partition; resume=%s is surer",
			hib_target_path(t));
	} else {
		doctor_report(c, HIB_DOCTOR_PASS, "resume-offset",
			      "resume=%s on the kernel command line", c->kc.resume);
	}
}

/* The target's page 0: hibernate writes only to a swap area or image file. */
static int report_signature(struct doctor_ctx *c, struct hib_target *t, const char *name,
			    enum hib_sig_state *st)
{
	int r = hib_target_probe(t, st);

	if (r < 0) {
		doctor_report(c, HIB_DOCTOR_FAIL, "target", "%s: cannot read its first page: %s",
			      name, strerror(-r));
	} else if (*st == HIB_SIG_SWAP || *st == HIB_SIG_FILE) {
		doctor_report(c, HIB_DOCTOR_PASS, "target", "%s: %s%s; chosen %s", name,
			      hib_sig_state_name(*st),
			      hib_target_file_unwritten(t) ? " (made with fallocate: fine for swap)"
							   : "",
			      hib_target_source_name(hib_target_source(t)));
	} else if (*st == HIB_SIG_IMAGE || *st == HIB_SIG_BROKEN) {
		doctor_report(
			c, HIB_DOCTOR_WARN, "target",
			"%s holds an image that was not resumed: resume it, or hibernate invalidate",
			name);
	} else {
		doctor_report(
			c, HIB_DOCTOR_FAIL, "target",
			"%s is %s: hibernate will not write to it. mkswap it if it is meant as swap, "
			"or name the right device",
			name, hib_sig_state_name(*st));
	}
	return r;
}

/* What hibernate would write to, found as hibernate finds it (but only read). */
void doctor_check_target(struct doctor_ctx *c, const struct swaps_seen *sw)
{
	_cleanup_(hib_target_closep) struct hib_target *t = NULL;
	struct hib_target_request req = c->in->target;
	char swaps[PATH_MAX];
	struct hib_error err;
	enum hib_sig_state st;
	const char *name;
	int r;

	doctor_path(c, "/proc/swaps", swaps, sizeof(swaps));
	req.cmdline = c->cmdline;
	req.proc_swaps = swaps;
	req.writable = false;
	req.file_target = true;
	r = hib_target_resolve(&req, &t, &err);
	if (r < 0) {
		doctor_report(c, HIB_DOCTOR_FAIL, "target", "%s", err.msg);
		doctor_check_zram_cycle(c, NULL);
		return;
	}
	name = hib_target_name(t);
	r = hib_target_check_stack(t, c->in->root, &err);
	if (r < 0)
		doctor_report(c, HIB_DOCTOR_FAIL, "target", "%s", err.msg);
	else
		r = report_signature(c, t, name, &st);
	/* Room, only on a target hibernate would write to: the room of a device
	 * it refuses says nothing. */
	if (r >= 0 && (st == HIB_SIG_SWAP || st == HIB_SIG_FILE || st == HIB_SIG_IMAGE ||
		       st == HIB_SIG_BROKEN))
		check_space(c, sw, t);

	check_resume_offset(c, t);
	doctor_check_crypt(c, t);
	doctor_check_root_crypt(c, t);
	doctor_check_zram_cycle(c, t);
}
