/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What hibernate setup did, so that --undo reverses exactly that:
 * /var/lib/hibernate/setup.state, one action a line ("ACTION PATH"), written
 * by rename after each action and before the next; an edited file's original
 * bytes under /var/lib/hibernate/setup.orig/ (its absolute path below that).
 * Every path is under a root prefix ("" for /), so tests run it on the host.
 */
#ifndef HIB_FRONTEND_SETUPSTATE_H
#define HIB_FRONTEND_SETUPSTATE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "hibernate.h"

#define HIB_SETUP_STATE_FILE "/var/lib/hibernate/setup.state"
#define HIB_SETUP_ORIG_DIR "/var/lib/hibernate/setup.orig"
#define HIB_SETUP_MAX_ACTIONS 32

enum hib_setup_act {
	HIB_ACT_CREATED_FILE, /* "created PATH": undo removes it */
	HIB_ACT_CREATED_DIR,  /* "mkdir PATH": undo removes it (empty by then) */
	HIB_ACT_SUBVOLUME,    /* "subvolume PATH": undo deletes the btrfs subvolume */
	HIB_ACT_EDITED,       /* "edited PATH": undo puts setup.orig's copy back */
	HIB_ACT_SWAPON,       /* "swapon PATH": undo swaps it off first */
	HIB_ACT_RERUN,        /* "rerun NAME": undo runs it again once all is back */
	HIB_ACT_TARGET,       /* "target DEVICE": what setup configured (not undone) */
};

struct hib_setup_action {
	enum hib_setup_act act;
	char arg[256];
};

struct hib_setup_state {
	struct hib_setup_action a[HIB_SETUP_MAX_ACTIONS];
	size_t n;
};

/* The state's text; -ENOSPC when @len is too small. */
int hib_setup_state_format(const struct hib_setup_state *st, char *buf, size_t len);
/* -EINVAL for a line it does not know (@err names it). */
int hib_setup_state_parse(const char *text, struct hib_setup_state *st, struct hib_error *err);
/* Read @root's state file: 0, -ENOENT when there is none, or -errno and @err. */
int hib_setup_state_load(const char *root, struct hib_setup_state *st, struct hib_error *err);
/* Append one action and write the state by rename. */
int hib_setup_state_add(const char *root, struct hib_setup_state *st, enum hib_setup_act act,
			const char *arg, struct hib_error *err);
/* The target line of the state, or NULL. */
const char *hib_setup_state_target(const struct hib_setup_state *st);

/*
 * Replace @path's contents by @text (written beside it and renamed over it,
 * its mode and owner kept): its original bytes are copied to setup.orig first
 * and the state records "edited" (or "created" when it did not exist) before
 * the file changes. Text equal to the file's changes nothing and records
 * nothing (returns 0; 1 when it wrote).
 */
int hib_setup_edit_file(const char *root, struct hib_setup_state *st, const char *path,
			const char *text, struct hib_error *err);

/* Write @text to @full (a full path) by rename, with @mode. */
int hib_setup_write_file(const char *full, const char *text, size_t len, unsigned mode,
			 struct hib_error *err);

/* What undo asks the caller to do (the program: swapoff(2), children). */
struct hib_setup_undo_ops {
	int (*swapoff)(const char *full_path, void *ud);
	int (*subvolume_delete)(const char *full_path, void *ud);
	int (*rerun)(const char *name, void *ud);
	void *ud;
};

/*
 * Undo @st newest first: swap off, remove created files, directories and
 * subvolumes, put every edited file back byte for byte; then rerun what was
 * recorded (the initramfs rebuild), and remove the state and setup.orig.
 * Goes on past a failure and returns the first (@err says it); the state is
 * kept then, naming what is left.
 */
int hib_setup_undo(const char *root, struct hib_setup_state *st,
		   const struct hib_setup_undo_ops *ops, struct hib_error *err);

#endif
