/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The screen a cycle is shown on when hibernate has no terminal in front of
 * the person: `systemctl hibernate` (a desktop's Hibernate button, logind's
 * keys) runs it with the journal for its output. The 70-switch-vt hook has
 * then put a text console in front (switch-vt); the bar, the cycle's lines
 * and the cancel hint are drawn there, and Esc is read there
 * (tools/hibernate/output.c and cancel.c). A console a display server draws
 * (KD_GRAPHICS) is never written to. Pure: which console is in front and
 * what to do with it; the program opens it and asks its mode.
 */
#ifndef HIB_SCREEN_H
#define HIB_SCREEN_H

#include <stdbool.h>

#include "hibernate.h"

/* What the cycle does with the console in front. */
enum hib_screen_use {
	HIB_SCREEN_NONE,       /* nothing: no console, a graphical one, or our own terminal */
	HIB_SCREEN_DRAW,       /* the bar, the lines and the hint drawn on it, Esc read there */
	HIB_SCREEN_DRAW_CLEAR, /* the same on switch-vt's console, cleared first */
};

/* What is known of the console in front when the image is about to be written. */
struct hib_screen_facts {
	unsigned vt;        /* its number (tty<vt>), 0: none */
	bool graphics;      /* in KD_GRAPHICS mode: a display server's */
	bool is_terminal;   /* our stderr already is that console */
	unsigned switch_vt; /* switch-vt's console, 0: switch-vt = no */
};

/* The console in front, from @root (NULL or "": /) /sys/class/tty/tty0/active
 * ("tty12"): 0 and *@ret_vt, or -errno with @err naming the file. A serial
 * console or a pseudo-terminal there is no virtual console: -ENOTTY. */
int hib_screen_front(const char *root, unsigned *ret_vt, struct hib_error *err);

/* switch-vt's value (auto, no, yes, or 1-63) as the console the hook switches
 * to: 0 for no, 12 for yes and for auto (also unset: the default); -EINVAL
 * for anything else. */
int hib_screen_switch_vt(const char *value, unsigned *ret_vt);

enum hib_screen_use hib_screen_choose(const struct hib_screen_facts *f);

/* switch-vt's value as the hooks get it (HIBERNATE_SWITCH_VT): auto (also
 * unset) becomes "12" when a display server draws the console in front
 * (@front_graphics), else "no"; any other value is handed on as it is. */
const char *hib_screen_switch_resolve(const char *value, bool front_graphics);

#endif
