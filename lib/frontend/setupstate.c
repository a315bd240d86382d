// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hibernate setup's record of what it did, and its undoing: the state file
 * (one action a line, written by rename), the original bytes of every file it
 * edited under setup.orig/, and the undo that puts them back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frontend/location.h"
#include "frontend/setupstate.h"
#include "util/error.h"
#include "util/util.h"

static const char *const act_names[] = {
	[HIB_ACT_CREATED_FILE] = "created", [HIB_ACT_CREATED_DIR] = "mkdir",
	[HIB_ACT_SUBVOLUME] = "subvolume",  [HIB_ACT_EDITED] = "edited",
	[HIB_ACT_SWAPON] = "swapon",        [HIB_ACT_RERUN] = "rerun",
	[HIB_ACT_TARGET] = "target",
};

#define STATE_HEAD                                                                                 \
	"# hibernate setup: what it did, for hibernate setup --undo (hibernate-setup(8))\n"

int hib_setup_state_format(const struct hib_setup_state *st, char *buf, size_t len)
{
	size_t off = 0;
	int n = snprintf(buf, len, STATE_HEAD);

	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	off = (size_t)n;
	for (size_t i = 0; i < st->n; i++) {
		n = snprintf(buf + off, len - off, "%s %s\n", act_names[st->a[i].act],
			     st->a[i].arg);
		if (n < 0 || (size_t)n >= len - off)
			return -ENOSPC;
		off += (size_t)n;
	}
	return 0;
}

int hib_setup_state_parse(const char *text, struct hib_setup_state *st, struct hib_error *err)
{
	unsigned lineno = 0;

	hib_error_clear(err);
	st->n = 0;
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		size_t len = strcspn(l, "\n"), i;
		const char *sp = memchr(l, ' ', len);

		lineno++;
		if (len == 0 || *l == '#')
			continue;
		for (i = 0; sp && i < ARRAY_SIZE(act_names); i++)
			if ((size_t)(sp - l) == strlen(act_names[i]) &&
			    strncmp(l, act_names[i], (size_t)(sp - l)) == 0)
				break;
		if (!sp || i == ARRAY_SIZE(act_names) || st->n == HIB_SETUP_MAX_ACTIONS ||
		    len - (size_t)(sp + 1 - l) >= sizeof(st->a[0].arg))
			return hib_error_set(err, -EINVAL,
					     "line %u: not an action of hibernate setup", lineno);
		st->a[st->n].act = (enum hib_setup_act)i;
		snprintf(st->a[st->n].arg, sizeof(st->a[st->n].arg), "%.*s",
			 (int)(len - (size_t)(sp + 1 - l)), sp + 1);
		st->n++;
	}
	return 0;
}

/* The whole of @full into a malloc'ed string; -errno. */
static int slurp(const char *full, char **ret, size_t *ret_len, struct stat *ret_st)
{
	_cleanup_(closep) int fd = open(full, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	char *p;
	ssize_t n;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size > (16 << 20))
		return -EINVAL;
	p = malloc((size_t)st.st_size + 1);
	if (!p)
		return -ENOMEM;
	n = (ssize_t)st.st_size ? read(fd, p, (size_t)st.st_size) : 0;
	if (n != (ssize_t)st.st_size) {
		free(p);
		return n < 0 ? -errno : -EIO;
	}
	p[n] = 0;
	*ret = p;
	if (ret_len)
		*ret_len = (size_t)n;
	if (ret_st)
		*ret_st = st;
	return 0;
}

int hib_setup_state_load(const char *root, struct hib_setup_state *st, struct hib_error *err)
{
	char full[PATH_MAX];
	_cleanup_(freep) char *text = NULL;
	int r;

	hib_error_clear(err);
	st->n = 0;
	snprintf(full, sizeof(full), "%s%s", root, HIB_SETUP_STATE_FILE);
	r = slurp(full, &text, NULL, NULL);
	if (r == -ENOENT)
		return r;
	if (r < 0)
		return hib_error_set(err, r, "%s: cannot read: %s", full, strerror(-r));
	r = hib_setup_state_parse(text, st, err);
	return r < 0 ? hib_error_prefix(err, r, "%s: ", full) : 0;
}

/* mkdir -p of @full's directory. */
static int mkdir_parents(const char *full)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s", full);
	for (char *s = p + 1; (s = strchr(s, '/')); s++) {
		*s = 0;
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	return 0;
}

int hib_setup_write_file(const char *full, const char *text, size_t len, unsigned mode,
			 struct hib_error *err)
{
	char tmp[PATH_MAX + 16];
	_cleanup_(closep) int fd = -1;
	int r;

	r = mkdir_parents(full);
	if (r < 0)
		return hib_error_set(err, r, "%s: cannot make its directory: %s", full,
				     strerror(-r));
	snprintf(tmp, sizeof(tmp), "%s.hibtmp", full);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode & 07777);
	if (fd < 0)
		return hib_error_set(err, -errno, "%s: cannot create: %m", tmp);
	r = hib_pwrite_full(fd, text, len, 0);
	if (r == 0 && fchmod(fd, mode & 07777) < 0)
		r = -errno;
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r == 0 && rename(tmp, full) < 0)
		r = -errno;
	if (r < 0) {
		unlink(tmp);
		return hib_error_set(err, r, "%s: cannot write: %s", full, strerror(-r));
	}
	return 0;
}

int hib_setup_state_add(const char *root, struct hib_setup_state *st, enum hib_setup_act act,
			const char *arg, struct hib_error *err)
{
	char full[PATH_MAX], text[HIB_SETUP_MAX_ACTIONS * 128 + 256];
	int r;

	hib_error_clear(err);
	if (st->n == HIB_SETUP_MAX_ACTIONS || strchr(arg, '\n') || strlen(arg) >= 256)
		return hib_error_set(err, -E2BIG, "%s: cannot record '%s'", HIB_SETUP_STATE_FILE,
				     arg);
	st->a[st->n].act = act;
	snprintf(st->a[st->n].arg, sizeof(st->a[st->n].arg), "%s", arg);
	st->n++;
	snprintf(full, sizeof(full), "%s%s", root, HIB_SETUP_STATE_FILE);
	r = hib_setup_state_format(st, text, sizeof(text));
	if (r == 0)
		r = hib_setup_write_file(full, text, strlen(text), 0644, err);
	if (r < 0)
		st->n--;
	return r;
}

const char *hib_setup_state_target(const struct hib_setup_state *st)
{
	for (size_t i = 0; i < st->n; i++)
		if (st->a[i].act == HIB_ACT_TARGET)
			return st->a[i].arg;
	return NULL;
}

int hib_setup_edit_file(const char *root, struct hib_setup_state *st, const char *path,
			const char *text, struct hib_error *err)
{
	char full[PATH_MAX], orig[PATH_MAX];
	_cleanup_(freep) char *old = NULL;
	size_t old_len = 0;
	struct stat sb = { .st_mode = 0644 };
	int r;

	hib_error_clear(err);
	snprintf(full, sizeof(full), "%s%s", root, path);
	r = slurp(full, &old, &old_len, &sb);
	if (r < 0 && r != -ENOENT)
		return hib_error_set(err, r, "%s: cannot read: %s", full, strerror(-r));
	if (old && old_len == strlen(text) && memcmp(old, text, old_len) == 0)
		return 0;
	if (old) {
		snprintf(orig, sizeof(orig), "%s%s%s", root, HIB_SETUP_ORIG_DIR, path);
		r = hib_setup_write_file(orig, old, old_len, sb.st_mode, err);
		if (r == 0)
			r = hib_setup_state_add(root, st, HIB_ACT_EDITED, path, err);
	} else {
		r = hib_setup_state_add(root, st, HIB_ACT_CREATED_FILE, path, err);
	}
	if (r < 0)
		return r;
	r = hib_setup_write_file(full, text, strlen(text), sb.st_mode, err);
	if (r == 0 && old && chown(full, sb.st_uid, sb.st_gid) < 0)
		r = hib_error_set(err, -errno, "%s: cannot chown: %m", full);
	return r < 0 ? r : 1;
}

/* setup.orig's copy of @path back over it, byte for byte, and the copy gone. */
static int restore_file(const char *root, const char *path, struct hib_error *err)
{
	char full[PATH_MAX], orig[PATH_MAX];
	_cleanup_(freep) char *old = NULL;
	size_t len;
	struct stat sb;
	int r;

	snprintf(full, sizeof(full), "%s%s", root, path);
	snprintf(orig, sizeof(orig), "%s%s%s", root, HIB_SETUP_ORIG_DIR, path);
	r = slurp(orig, &old, &len, &sb);
	if (r < 0)
		return hib_error_set(err, r, "%s: the original of %s is not readable: %s", orig,
				     full, strerror(-r));
	r = hib_setup_write_file(full, old, len, sb.st_mode, err);
	if (r == 0 && chown(full, sb.st_uid, sb.st_gid) < 0)
		r = hib_error_set(err, -errno, "%s: cannot chown: %m", full);
	if (r == 0)
		unlink(orig);
	return r;
}

static int undo_one(const char *root, const struct hib_setup_action *a,
		    const struct hib_setup_undo_ops *ops, struct hib_error *err)
{
	char full[PATH_MAX];
	int r = 0;

	snprintf(full, sizeof(full), "%s%s", root, a->arg);
	switch (a->act) {
	case HIB_ACT_SWAPON:
		r = ops->swapoff(full, ops->ud);
		return r < 0 ? hib_error_set(err, r, "%s: swapoff failed: %s", full, strerror(-r))
			     : 0;
	case HIB_ACT_CREATED_FILE:
		if (unlink(full) < 0 && errno != ENOENT)
			return hib_error_set(err, -errno, "%s: cannot remove: %m", full);
		return 0;
	case HIB_ACT_CREATED_DIR: /* last, once the state in it is gone: remove_dirs */
		return 0;
	case HIB_ACT_SUBVOLUME:
		r = ops->subvolume_delete(full, ops->ud);
		return r < 0 ? hib_error_set(err, r, "%s: btrfs subvolume delete failed", full) : 0;
	case HIB_ACT_EDITED:
		return restore_file(root, a->arg, err);
	case HIB_ACT_RERUN:
	case HIB_ACT_TARGET:
		return 0;
	}
	return 0;
}

/* The directories setup made, newest first, once nothing of setup's is in
 * them; the hooks' record directory goes with the one that holds it (the
 * rebuild after the undo left it empty). Best effort: what another program
 * put there stays, and so does its directory. */
static void remove_dirs(const char *root, const struct hib_setup_state *st)
{
	char p[PATH_MAX];

	for (size_t i = st->n; i-- > 0;) {
		size_t n = strlen(st->a[i].arg);

		if (st->a[i].act != HIB_ACT_CREATED_DIR)
			continue;
		if (strncmp(HIB_LOCATION_DIR, st->a[i].arg, n) == 0 && HIB_LOCATION_DIR[n] == '/') {
			snprintf(p, sizeof(p), "%s%s", root, HIB_LOCATION_DIR);
			rmdir(p);
		}
		snprintf(p, sizeof(p), "%s%s", root, st->a[i].arg);
		rmdir(p);
	}
}

/* setup.orig and its now empty directories, deepest first. */
static void remove_orig_tree(const char *root, const struct hib_setup_state *st)
{
	char p[PATH_MAX];

	for (size_t i = 0; i < st->n; i++) {
		if (st->a[i].act != HIB_ACT_EDITED)
			continue;
		snprintf(p, sizeof(p), "%s%s%s", root, HIB_SETUP_ORIG_DIR, st->a[i].arg);
		for (char *s; (s = strrchr(p, '/')) &&
			      strlen(p) > strlen(root) + strlen(HIB_SETUP_ORIG_DIR);) {
			*s = 0;
			if (rmdir(p) < 0)
				break;
		}
	}
	snprintf(p, sizeof(p), "%s%s", root, HIB_SETUP_ORIG_DIR);
	rmdir(p);
}

int hib_setup_undo(const char *root, struct hib_setup_state *st,
		   const struct hib_setup_undo_ops *ops, struct hib_error *err)
{
	struct hib_setup_state left = { 0 };
	/* @err may be the caller's own, which its callbacks use: the first
	 * failure is kept apart until the end. */
	struct hib_error e, first_err = { 0 };
	char full[PATH_MAX], text[HIB_SETUP_MAX_ACTIONS * 128 + 256];
	bool keep[HIB_SETUP_MAX_ACTIONS] = { 0 };
	int first = 0, r;

	hib_error_clear(err);
	for (size_t i = st->n; i-- > 0;) {
		r = undo_one(root, &st->a[i], ops, &e);
		if (r < 0 && !first)
			first = r, first_err = e;
		keep[i] = r < 0;
	}
	for (size_t i = 0; i < st->n; i++) {
		if (st->a[i].act != HIB_ACT_RERUN)
			continue;
		r = ops->rerun(st->a[i].arg, ops->ud);
		if (r < 0 && !first)
			first = hib_error_set(&first_err, r,
					      "%s failed after the files were put back: run it "
					      "again by hand, then hibernate setup --undo",
					      st->a[i].arg);
		keep[i] = r < 0;
	}
	snprintf(full, sizeof(full), "%s%s", root, HIB_SETUP_STATE_FILE);
	if (!first) {
		remove_orig_tree(root, st);
		if (unlink(full) < 0 && errno != ENOENT)
			return hib_error_set(err, -errno, "%s: cannot remove: %m", full);
		remove_dirs(root, st);
		st->n = 0;
		return 0;
	}
	for (size_t i = 0; i < st->n; i++)
		if (keep[i] || st->a[i].act == HIB_ACT_TARGET ||
		    st->a[i].act == HIB_ACT_CREATED_DIR)
			left.a[left.n++] = st->a[i];
	*st = left;
	if (hib_setup_state_format(st, text, sizeof(text)) == 0)
		hib_setup_write_file(full, text, strlen(text), 0644, &e);
	*err = first_err;
	return first;
}
