/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of hibernate setup share, and only they include: the run's
 * state, the children it runs and the steps that setup.c's table orders.
 */
#ifndef HIB_TOOL_SETUP_PRIV_H
#define HIB_TOOL_SETUP_PRIV_H

#include <stdint.h>

#include "frontend/setupplan.h"
#include "frontend/setupstate.h"
#include "hibernate.h"

struct control;

#define MIB ((uint64_t)1024 * 1024)

struct setup {
	struct control *ctl;
	const char *root; /* "" but in a test build's HIBERNATE_SETUP_ROOT */
	struct hib_setup_plan plan;
	struct hib_setup_state st;
	const char *initramfs[6]; /* the rebuild command; [0] NULL: none found */
	struct hib_error err;
};

/* The children: a program found under the root, run with its output logged. */
const char *setup_find_prog(const struct setup *s, const char *const *names);
int setup_run_child(struct setup *s, const char *const *argv, unsigned timeout_s);
void setup_find_initramfs(struct setup *s);
int setup_rebuild_initramfs(struct setup *s);
int setup_mkdir_recorded(struct setup *s, const char *dir);

/* The steps: 0 done, 1 nothing to do here, -errno and s->err. */
int setup_step_make(struct setup *s);
int setup_step_config(struct setup *s);
int setup_step_fstab(struct setup *s);
int setup_step_swapon(struct setup *s);
int setup_step_initramfs(struct setup *s);
int setup_step_logind(struct setup *s);

#endif
