// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/error.h"

void hib_error_clear(struct hib_error *e)
{
	if (!e)
		return;
	e->error = 0;
	e->msg[0] = 0;
}

int hib_error_set(struct hib_error *e, int r, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return r;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	e->error = r;
	return r;
}

int hib_error_ensure(struct hib_error *e, int r)
{
	if (e && !e->msg[0])
		return hib_error_set(e, r, "%s", strerror(-r));
	if (e)
		e->error = r;
	return r;
}

int hib_error_prefix(struct hib_error *e, int r, const char *fmt, ...)
{
	char reason[sizeof(e->msg)];
	va_list ap;
	int n;

	if (!e)
		return r;
	hib_error_ensure(e, r);
	snprintf(reason, sizeof(reason), "%s", e->msg);
	va_start(ap, fmt);
	n = vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(e->msg))
		snprintf(e->msg + n, sizeof(e->msg) - (size_t)n, "%s", reason);
	e->error = r;
	return r;
}
