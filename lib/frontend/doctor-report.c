// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What every check of doctor's uses: the report of one line (the worst
 * verdict kept for hib_doctor's answer) and paths under the root prefix.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>

#include "frontend/doctor-priv.h"
#include "util/util.h"

void doctor_report(struct doctor_ctx *c, enum hib_doctor_verdict v, const char *check,
		   const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if ((int)v > c->worst)
		c->worst = (int)v;
	c->fn(v, check, msg, c->ud);
}

void doctor_path(const struct doctor_ctx *c, const char *p, char *out, size_t len)
{
	snprintf(out, len, "%s%s", c->in->root ? c->in->root : "", p);
}

int doctor_read_file(const struct doctor_ctx *c, const char *p, char *buf, size_t len)
{
	char full[PATH_MAX];

	doctor_path(c, p, full, sizeof(full));
	return hib_read_text(full, buf, len);
}
