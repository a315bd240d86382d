// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The screen of a cycle without a terminal (screen.h): the console in front,
 * as the kernel says it, and whether the cycle draws on it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/screen.h"
#include "util/error.h"
#include "util/util.h"

/* MAX_NR_CONSOLES: tty1 to tty63. */
#define VT_MAX 63

static int vt_number(const char *s, unsigned *ret)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < 1 || v > VT_MAX)
		return -EINVAL;
	*ret = (unsigned)v;
	return 0;
}

int hib_screen_front(const char *root, unsigned *ret_vt, struct hib_error *err)
{
	char path[PATH_MAX], buf[64];
	int r;

	snprintf(path, sizeof(path), "%s/sys/class/tty/tty0/active", root ? root : "");
	r = hib_read_text(path, buf, sizeof(buf));
	if (r < 0)
		return hib_error_set(err, r, "%s: cannot read the console in front: %s", path,
				     strerror(-r));
	hib_strip(buf);
	if (strncmp(buf, "tty", 3) != 0 || vt_number(buf + 3, ret_vt) < 0)
		return hib_error_set(err, -ENOTTY, "%s: '%s' is no virtual console", path, buf);
	return 0;
}

int hib_screen_switch_vt(const char *value, unsigned *ret_vt)
{
	if (value && strcmp(value, "no") == 0) {
		*ret_vt = 0;
		return 0;
	}
	/* auto (also unset): where the hook switches at all, it switches there too. */
	if (!value || !*value || strcmp(value, "yes") == 0 || strcmp(value, "auto") == 0) {
		*ret_vt = 12; /* as hooks/70-switch-vt */
		return 0;
	}
	return vt_number(value, ret_vt);
}

const char *hib_screen_switch_resolve(const char *value, bool front_graphics)
{
	if (value && *value && strcmp(value, "auto") != 0)
		return value;
	return front_graphics ? "12" : "no";
}

enum hib_screen_use hib_screen_choose(const struct hib_screen_facts *f)
{
	/* A display server's console: its picture stays, nothing is drawn over it. */
	if (!f->vt || f->graphics || f->is_terminal)
		return HIB_SCREEN_NONE;
	/* switch-vt's console is the cycle's own: nothing of a person's on it. */
	return f->vt == f->switch_vt ? HIB_SCREEN_DRAW_CLEAR : HIB_SCREEN_DRAW;
}
