/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Filling a struct hib_error (include/hibernate.h): the one way a message reaches the user. */
#ifndef HIB_ERROR_H
#define HIB_ERROR_H

#include "hibernate.h"
#include "util/util.h"

/* No error: 0 and an empty message. @e may be NULL. */
void hib_error_clear(struct hib_error *e);

/* @r and the formatted message into @e (which may be NULL); returns @r. */
int hib_error_set(struct hib_error *e, int r, const char *fmt, ...) _printf_(3, 4);

/* @r, and strerror(-r) as the message unless @e says something already. */
int hib_error_ensure(struct hib_error *e, int r);

/*
 * @r, and the formatted prefix put before what @e says already, or before
 * strerror(-r) when it says nothing yet: a callee's reason becomes the
 * caller's complete message ("/swapfile: cannot be a hibernation target: "
 * + "it has a hole at byte 0; ..."). Returns @r.
 */
int hib_error_prefix(struct hib_error *e, int r, const char *fmt, ...) _printf_(3, 4);

#endif
