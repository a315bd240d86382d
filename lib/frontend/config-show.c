// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The configuration shown: one key's value as `hibernate config get` gives it
 * to scripts, every key as `hibernate status` shows it (with what an unset
 * value means), where each came from, and the shipped hooks' settings as
 * their environment.
 */
#include <stdio.h>
#include <string.h>

#include "frontend/config-priv.h"
#include "util/util.h"

const char *hib_config_source_name(enum hib_config_source s)
{
	switch (s) {
	case HIB_SRC_DEFAULT:
		return "default";
	case HIB_SRC_FILE:
		return "file";
	case HIB_SRC_CMDLINE:
		return "kernel command line";
	case HIB_SRC_OPTION:
		return "option";
	}
	return "?";
}

/* `hibernate status` says what a value means where the value alone does not. */
static const struct {
	const char *key, *value, *shown;
} meanings[] = {
	{ "device", "", "(auto: resume=, else the active swap)" },
	{ "offset", "", "(none)" },
	{ "threads", "0", "0 (one per CPU)" },
	{ "image-size", "default",
	  "default (the kernel's, 2/5 of RAM, unless just under the memory in use)" },
	{ "image-size", "kernel", "kernel (the kernel's, untouched)" },
	{ "key-file", "", "(none)" },
};

/* @buf, @key's value, as `hibernate status` shows it. */
static void status_meaning(const struct hib_config *c, const char *key, char *buf, size_t len)
{
	enum hib_require r = hib_config_require(c);

	for (size_t m = 0; m < ARRAY_SIZE(meanings); m++)
		if (strcmp(meanings[m].key, key) == 0 && strcmp(meanings[m].value, buf) == 0)
			snprintf(buf, len, "%s", meanings[m].shown);
	if (strcmp(key, "require-encryption") != 0)
		return;
	if (r == HIB_REQUIRE_NOTHING)
		snprintf(buf, len, "no (resume takes plain images too)");
	else
		snprintf(buf, len, "yes (only images sealed with %s)", hib_require_name(r));
}

/* -E2BIG when it does not fit: a script must never act on a cut path. */
static int key_value(const struct hib_config *c, size_t k, char *buf, size_t len)
{
	if (config_keys[k].get)
		config_keys[k].get(c, buf, len);
	else
		snprintf(buf, len, "%s", c->hook_env[k] ? strchr(c->hook_env[k], '=') + 1 : "");
	return strnlen(buf, len) + 1 < len ? 0 : -E2BIG;
}

int hib_config_get(const struct hib_config *c, const char *key, char *buf, size_t len)
{
	for (size_t k = 0; k < config_n_keys; k++)
		if (strcmp(key, config_keys[k].name) == 0)
			return key_value(c, k, buf, len);
	return -ENOKEY;
}

void hib_config_dump(const struct hib_config *c, hib_config_dump_fn fn, void *userdata)
{
	char buf[512];

	for (size_t k = 0; k < config_n_keys; k++) {
		if (key_value(c, k, buf, sizeof(buf)) < 0)
			snprintf(buf + sizeof(buf) - 4, 4, "...");
		status_meaning(c, config_keys[k].name, buf, sizeof(buf));
		fn(config_keys[k].name, buf, c->source[k], userdata);
	}
	for (size_t i = 0; i < c->n_inline; i++) {
		char name[32];
		snprintf(name, sizeof(name), "%s %02d",
			 c->inl[i].pre_cmd ? "OnSuspend" : "OnResume", c->inl[i].order);
		fn(name, c->inl[i].pre_cmd ? c->inl[i].pre_cmd : c->inl[i].post_cmd, HIB_SRC_FILE,
		   userdata);
	}
}

size_t hib_config_hook_env(const struct hib_config *c, char **out, size_t max)
{
	size_t n = 0;

	if (max == 0)
		return 0;
	for (size_t k = 0; k < HIB_CONFIG_MAX_KEYS && n + 1 < max; k++)
		if (c->hook_env[k])
			out[n++] = c->hook_env[k];
	out[n] = NULL;
	return n;
}
