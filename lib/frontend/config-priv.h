/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of the configuration share, and only they include: the one
 * table of keys (config-keys.c: each key's parser and formatter), which the
 * reader and merger (config.c: the file's lines, a key's value set, the
 * message of a bad one) and the formatting of `config get` and `status`
 * (config-show.c) walk.
 */
#ifndef HIB_FRONTEND_CONFIG_PRIV_H
#define HIB_FRONTEND_CONFIG_PRIV_H

#include <stddef.h>

#include "frontend/config.h"

/* The value as the file writes it, into the configuration; -EINVAL (-ERANGE:
 * a number out of its range, config.c says which) for a bad one. */
typedef int (*config_setter_fn)(struct hib_config *c, const char *v);
/* The effective value as the file would set it, unquoted; "" for an unset key. Scripts
 * read this (hib_config_get): it must mean to them what it means to the program. */
typedef void (*config_getter_fn)(const struct hib_config *c, char *buf, size_t len);

struct config_key {
	const char *name;
	config_setter_fn set;
	config_getter_fn get;
	const char *hook_env; /* a shipped hook's setting: exported to hooks under this name */
};

/* config-keys.c: every key the file can have, in the order `hibernate status`
 * shows them; a shipped hook's setting has neither setter nor getter (its value
 * is c->hook_env at the same index). */
extern const struct config_key config_keys[];
extern const size_t config_n_keys;

#endif
