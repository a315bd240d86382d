// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * logind's CanHibernate and hibernate doctor agreeing. systemd 255 and later
 * (hibernation_is_safe) say "na" unless a swap area is active, /sys/power/resume
 * names it (or the boot was through EFI) and Active(anon) fits in its free
 * space; systemd-logind.service started with SYSTEMD_BYPASS_HIBERNATION_MEMORY_CHECK=1
 * skips the swap and space part (not resume=, not noresume). hibernate needs
 * none of that: a compressed image, an image file with no swap, swap turned
 * on for the cycle. So where doctor passes, /sys/power/resume names the target
 * and logind gets the bypass; where it fails, logind is left to its own checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "frontend/logind.h"
#include "frontend/systemd.h"
#include "storage/swaps.h"
#include "util/error.h"
#include "util/util.h"

static FILE *open_under(const char *root, const char *p)
{
	char full[PATH_MAX];

	snprintf(full, sizeof(full), "%s%s", root ? root : "", p);
	return fopen(full, "re");
}

static bool read_line_under(const char *root, const char *p, char *buf, size_t len)
{
	FILE *f = open_under(root, p);
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = 0;
	return ok;
}

static bool exists_under(const char *root, const char *p)
{
	char full[PATH_MAX];

	snprintf(full, sizeof(full), "%s%s", root ? root : "", p);
	return access(full, F_OK) == 0;
}

/* The device a swap area lives on: a partition's own, a file's filesystem's. */
static dev_t swap_dev(const char *root, const char *path, const char *type)
{
	char full[PATH_MAX];
	struct stat st;

	snprintf(full, sizeof(full), "%s%s", root ? root : "", path);
	if (stat(full, &st) < 0)
		return 0;
	return strcmp(type, "file") == 0 ? st.st_dev : st.st_rdev;
}

static void read_swaps(const char *root, struct hib_logind_facts *f)
{
	char line[PATH_MAX + 128], path[PATH_MAX], type[32];
	unsigned long long size, used;
	FILE *sw = open_under(root, "/proc/swaps");

	if (!sw)
		return;
	while (fgets(line, sizeof(line), sw)) {
		if (sscanf(line, "%4095s %31s %llu %llu", path, type, &size, &used) != 4)
			continue; /* the header */
		if (hib_swap_is_zram(path) ||
		    (strcmp(type, "file") != 0 && strcmp(type, "partition") != 0))
			continue;
		f->swaps++;
		if (f->resume_dev && swap_dev(root, path, type) == f->resume_dev)
			f->resume_swap = true;
		if (size - used > f->swap_free_kib)
			f->swap_free_kib = size - used;
	}
	fclose(sw);
}

static void read_active_anon(const char *root, struct hib_logind_facts *f)
{
	char line[256];
	unsigned long long kib;
	FILE *m = open_under(root, "/proc/meminfo");

	if (!m)
		return;
	while (fgets(line, sizeof(line), m))
		if (sscanf(line, "Active(anon): %llu kB", &kib) == 1)
			f->active_anon_kib = kib;
	fclose(m);
}

void hib_logind_facts_read(const char *root, struct hib_logind_facts *ret)
{
	struct hib_logind_facts f = { 0 };
	struct hib_cmdline kc = { 0 };
	unsigned maj, min;
	char buf[4096];

	if (read_line_under(root, "/proc/cmdline", buf, sizeof(buf)) &&
	    hib_cmdline_parse(buf, &kc) >= 0) {
		f.noresume = kc.noresume;
		hib_cmdline_free(&kc);
	}
	if (read_line_under(root, "/sys/power/resume", buf, sizeof(buf)) &&
	    sscanf(buf, "%u:%u", &maj, &min) == 2)
		f.resume_dev = makedev(maj, min);
	f.efi = exists_under(root, "/sys/firmware/efi");
	f.disk_state = read_line_under(root, "/sys/power/state", buf, sizeof(buf)) &&
		       strstr(buf, "disk") != NULL;
	f.bypass = read_line_under(root, HIB_LOGIND_ENV_PATH, buf, sizeof(buf)) &&
		   strcmp(buf, HIB_LOGIND_ENV_LINE) == 0;
	read_swaps(root, &f);
	read_active_anon(root, &f);
	*ret = f;
}

#define RESTART_FIX                                                                                \
	"systemctl restart hibernate-logind.service (it tells logind when doctor passes)"

/* Why logind says "na" while doctor passes, in the order logind checks. */
static void explain_na(const struct hib_logind_facts *f, char *buf, size_t len)
{
	unsigned long long free_mib = f->swap_free_kib / 1024, anon_mib = f->active_anon_kib / 1024;

	if (!f->disk_state)
		snprintf(buf, len, "logind says na: /sys/power/state does not offer disk");
	else if (f->noresume)
		snprintf(buf, len,
			 "logind says na: the kernel command line has noresume, with which logind "
			 "refuses hibernation; remove it from the boot loader's configuration");
	else if (!f->bypass && f->swaps == 0)
		snprintf(buf, len,
			 "logind says na: no swap area is active and logind was not told that "
			 "hibernate needs none: %s",
			 RESTART_FIX);
	else if (!f->resume_dev && !f->efi)
		snprintf(buf, len,
			 "logind says na: /sys/power/resume is not set and this is not an EFI "
			 "boot: %s",
			 RESTART_FIX);
	else if (!f->bypass && !f->resume_swap && f->resume_dev)
		snprintf(buf, len,
			 "logind says na: /sys/power/resume names %u:%u, which no active swap "
			 "area is on: %s",
			 major(f->resume_dev), minor(f->resume_dev), RESTART_FIX);
	else if (!f->bypass && anon_mib * 100 > free_mib * 98)
		snprintf(buf, len,
			 "logind says na: Active(anon) %llu MiB is more than 98%% of the free "
			 "swap, %llu MiB (logind's estimate, blind to compression): %s",
			 anon_mib, free_mib, RESTART_FIX);
	else
		snprintf(buf, len,
			 "logind says na for a reason not seen here: journalctl -u "
			 "systemd-logind.service (SYSTEMD_LOG_LEVEL=debug) says which");
}

static enum hib_logind_verdict explain_yes(const struct hib_logind_facts *f, char *buf, size_t len)
{
	if (!f->doctor_failed) {
		snprintf(buf, len, "logind says yes (CanHibernate)%s",
			 f->bypass ? ", told by hibernate-logind.service to skip its swap-space "
				     "estimate (the image is compressed, and needs no active swap)"
				   : ", by its own checks");
		return HIB_LOGIND_PASS;
	}
	if (f->bypass)
		snprintf(buf, len,
			 "logind says yes, told so before the FAIL above: once it is fixed, or to "
			 "take the yes back, %s",
			 RESTART_FIX);
	else
		snprintf(buf, len,
			 "logind says yes by its own checks, but the FAIL above stands: systemctl "
			 "hibernate would start hibernate, which refuses before freezing anything");
	return HIB_LOGIND_WARN;
}

enum hib_logind_verdict hib_logind_explain(const struct hib_logind_facts *f, char *buf, size_t len)
{
	if (!f->answer) {
		snprintf(buf, len, "logind not asked: %s", f->unasked ? f->unasked : "unknown");
		return HIB_LOGIND_SKIP;
	}
	if (strcmp(f->answer, "yes") == 0)
		return explain_yes(f, buf, len);
	if (f->doctor_failed) {
		snprintf(buf, len,
			 "logind says %s: it agrees that this machine cannot hibernate now (the "
			 "FAIL above)",
			 f->answer);
		return HIB_LOGIND_PASS;
	}
	if (strcmp(f->answer, "challenge") == 0)
		snprintf(buf, len,
			 "logind says challenge: the caller must authenticate (polkit action "
			 "org.freedesktop.login1.hibernate); root is not asked");
	else if (strcmp(f->answer, "no") == 0)
		snprintf(buf, len,
			 "logind says no: polkit or an inhibitor forbids it to this caller "
			 "(systemd-inhibit --list)");
	else if (strcmp(f->answer, "na") == 0)
		explain_na(f, buf, len);
	else
		snprintf(buf, len, "logind says '%s', an answer this version does not know",
			 f->answer);
	return HIB_LOGIND_WARN;
}

/* The device and first page of @t, as resume= and resume_offset= give them. */
static int target_location(const struct hib_target *t, dev_t *ret_dev, uint64_t *ret_off,
			   struct hib_error *err)
{
	struct hib_file_location l;
	struct stat st;
	int r;

	if (hib_target_devnum(t)) {
		*ret_dev = hib_target_devnum(t);
		*ret_off = hib_target_offset_pages(t);
		return 0;
	}
	r = hib_file_locate(hib_target_file(t), &l, err);
	if (r < 0)
		return r;
	if (stat(l.device, &st) < 0 || !S_ISBLK(st.st_mode))
		r = hib_error_set(err, -ENOTBLK, "%s: the device under %s is not a block device",
				  l.device, hib_target_file(t));
	else {
		*ret_dev = st.st_rdev;
		*ret_off = l.offset_pages;
	}
	hib_file_location_free(&l);
	return r;
}

static int write_under(const char *root, const char *p, const char *text)
{
	char full[PATH_MAX];
	int fd, r = 0;

	snprintf(full, sizeof(full), "%s%s", root ? root : "", p);
	fd = open(full, O_WRONLY | O_CLOEXEC | O_TRUNC);
	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		r = errno ? -errno : -EIO;
	close(fd);
	return r;
}

/* /sys/power/resume and resume_offset (first: the kernel takes the pair when
 * resume is written) name @t; left alone when they already do. The kernel
 * looks there for its own signature only, which no target of ours holds. */
static int set_resume(const char *root, const struct hib_target *t, struct hib_error *err)
{
	char now[64], want[64], off[32];
	uint64_t o = 0;
	dev_t d = 0;
	int r;

	r = target_location(t, &d, &o, err);
	if (r < 0)
		return r;
	snprintf(want, sizeof(want), "%u:%u", major(d), minor(d));
	snprintf(off, sizeof(off), "%" PRIu64, o);
	if (read_line_under(root, "/sys/power/resume", now, sizeof(now)) && !strcmp(now, want) &&
	    read_line_under(root, "/sys/power/resume_offset", now, sizeof(now)) &&
	    !strcmp(now, off))
		return 0;
	r = write_under(root, "/sys/power/resume_offset", off);
	if (r >= 0)
		r = write_under(root, "/sys/power/resume", want);
	if (r < 0)
		return hib_error_set(err, r, "cannot write %s (offset %s) to /sys/power/resume: %s",
				     want, off, strerror(-r));
	return 0;
}

/* @p (under @root) holds @text, put in place by rename. */
static int replace_file(const char *p, const char *text)
{
	char tmp[PATH_MAX + 8];
	size_t n = strlen(text);
	int fd, r = 0;

	snprintf(tmp, sizeof(tmp), "%s.new", p);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, text, n) != (ssize_t)n)
		r = errno ? -errno : -EIO;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, p) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}

int hib_logind_configure(const char *root, const struct hib_target *t, struct hib_error *err)
{
	char p[PATH_MAX], dir[PATH_MAX], now[128];
	bool had;
	int r;

	snprintf(p, sizeof(p), "%s%s", root ? root : "", HIB_LOGIND_ENV_PATH);
	had = read_line_under(root, HIB_LOGIND_ENV_PATH, now, sizeof(now)) &&
	      !strcmp(now, HIB_LOGIND_ENV_LINE);
	if (!t) {
		if (unlink(p) < 0 && errno != ENOENT)
			return hib_error_set(err, -errno, "cannot remove %s: %s", p,
					     strerror(errno));
		return had;
	}
	r = set_resume(root, t, err);
	if (r < 0 || had)
		return r;
	snprintf(dir, sizeof(dir), "%s/run/hibernate", root ? root : "");
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return hib_error_set(err, -errno, "cannot make %s: %s", dir, strerror(errno));
	r = replace_file(p, HIB_LOGIND_ENV_LINE "\n");
	if (r < 0)
		return hib_error_set(err, r, "cannot write %s: %s", p, strerror(-r));
	return 1;
}

enum hib_logind_verdict hib_logind_doctor(const char *root, const char *test_answer,
					  bool doctor_failed, char *buf, size_t len)
{
	struct hib_logind_facts f;
	char answer[32];

	hib_logind_facts_read(root, &f);
	f.doctor_failed = doctor_failed;
	if (root) {
		f.unasked = "a test root, not this system";
		f.answer = test_answer;
	} else if (hib_logind_can_hibernate(answer, sizeof(answer), &f.unasked) == 0) {
		f.answer = answer;
	}
	return hib_logind_explain(&f, buf, len);
}

int hib_logind_setup(const struct hib_doctor_input *in, struct hib_logind_setup *ret,
		     struct hib_error *err)
{
	struct hib_target_request req = in->target;
	int r;

	*ret = (struct hib_logind_setup){ 0 };
	if (hib_doctor(in, hib_doctor_first_fail, &ret->fail) != HIB_DOCTOR_FAIL) {
		req.file_target = true;
		r = hib_target_resolve(&req, &ret->target, err);
		if (r < 0)
			return r;
	}
	r = hib_logind_configure(in->root, ret->target, err);
	if (r < 0) {
		hib_target_close(ret->target);
		ret->target = NULL;
		return r;
	}
	ret->changed = r > 0;
	return 0;
}
