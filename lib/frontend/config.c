// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * /etc/hibernate.conf: "key = value" lines, '#' comments, and the hook lines
 * "OnSuspend NN command" / "OnResume NN command". Unknown keys and bad values
 * are errors that name the line: a typo must not silently hibernate to the
 * wrong place. This file reads the lines and merges each value into the
 * configuration (a key's own parser is config-keys.c's), and says what is
 * wrong with a bad one; the shipped hooks' settings are checked here.
 */
#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "format/format.h"
#include "frontend/cancelkeys.h"
#include "frontend/config-priv.h"
#include "util/error.h"
#include "util/util.h"

static char *strip(char *s)
{
	char *e;

	s = hib_strip(s);
	e = s + strlen(s);
	if (e - s >= 2 && ((s[0] == '"' && e[-1] == '"') || (s[0] == '\'' && e[-1] == '\''))) {
		e[-1] = 0;
		s++;
	}
	return s;
}

/* The keys whose setters say -ERANGE, and the range for the message. */
static const struct {
	const char *key;
	uint64_t min, max;
	const char *unit;
} ranges[] = {
	{ "kdf-passes", HIB_ARGON_OPS_MIN, HIB_ARGON_OPS_MAX, "" },
	{ "kdf-memory", HIB_ARGON_MEM_MIN >> 20, HIB_ARGON_MEM_MAX >> 20, " MiB" },
};

static void range_message(const char *key, const char *value, char *err, size_t errlen)
{
	for (size_t i = 0; i < ARRAY_SIZE(ranges); i++)
		if (strcmp(key, ranges[i].key) == 0) {
			snprintf(err, errlen, "%s: %s is out of range (%llu to %llu%s)", key, value,
				 (unsigned long long)ranges[i].min,
				 (unsigned long long)ranges[i].max, ranges[i].unit);
			return;
		}
	snprintf(err, errlen, "%s: %s is out of range", key, value);
}

static const char *hook_default(const char *env)
{
	/* What the shipped hooks do when not told: nothing but the clock, and
	 * away from a display server's console (switch-vt = auto, which
	 * hibernate resolves to 12 or no before the hooks run). */
	if (strcmp(env, "HIBERNATE_SWITCH_VT") == 0)
		return "auto";
	return strcmp(env, "HIBERNATE_CLOCK") == 0 ? "yes" : "no";
}

#define ALNUM "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

/* Settings that are lists of names a shipped hook hands to a command run as
 * root (systemctl, /etc/init.d/NAME, rmmod, modprobe): each word of these
 * characters only, none starting with '.' or '-' (no path, no option). */
static const struct {
	const char *key, *chars, *rule;
} name_lists[] = {
	{ "services", ALNUM ":_.@-\\",
	  "service names of letters, digits and :_.@-\\, none starting with '.' or '-'" },
	{ "unload-modules", ALNUM "_-",
	  "module names of letters, digits, '_' and '-', none starting with '-'" },
};

static const char *name_rule(const char *key, const char **ret_chars)
{
	for (size_t i = 0; i < ARRAY_SIZE(name_lists); i++)
		if (strcmp(key, name_lists[i].key) == 0) {
			if (ret_chars)
				*ret_chars = name_lists[i].chars;
			return name_lists[i].rule;
		}
	return NULL;
}

/* Blank-separated words, each of @chars only and not starting with '.' or '-'. */
static bool names_ok(const char *v, const char *chars)
{
	while (*v) {
		size_t n = strspn(v, chars);

		if (v[0] == '.' || v[0] == '-' || (v[n] && !isblank((unsigned char)v[n])))
			return false;
		v += n;
		v += strspn(v, " \t");
	}
	return true;
}

static int set_hook_setting(struct hib_config *c, size_t k, const char *v)
{
	const char *chars;
	char *e;

	/* One line in the environment of every hook: no newlines in it. */
	if (strchr(v, '\n'))
		return -EINVAL;
	if (name_rule(config_keys[k].name, &chars) && !names_ok(v, chars))
		return -EINVAL;
	if (asprintf(&e, "%s=%s", config_keys[k].hook_env, v) < 0)
		return -ENOMEM;
	free(c->hook_env[k]);
	c->hook_env[k] = e;
	return 0;
}

int hib_config_set_from(struct hib_config *c, const char *key, const char *value,
			enum hib_config_source src, char *err, size_t errlen)
{
	for (size_t k = 0; k < config_n_keys; k++) {
		int r;

		if (strcmp(key, config_keys[k].name) != 0)
			continue;
		r = config_keys[k].set ? config_keys[k].set(c, value)
				       : set_hook_setting(c, k, value);
		if (r == -EINVAL && strcmp(key, "compress") == 0)
			snprintf(err, errlen, "compress: '%s' is not none, lz4 or zstd[:1-19]",
				 value);
		else if (r == -EINVAL && strcmp(key, "cancel-keys") == 0)
			snprintf(err, errlen,
				 "cancel-keys: '%s' is not a list of esc, power and sleep, or none",
				 value);
		else if (r == -EINVAL && name_rule(key, NULL))
			snprintf(err, errlen, "%s: invalid value '%s': expected %s", key, value,
				 name_rule(key, NULL));
		else if (r == -EINVAL)
			snprintf(err, errlen, "%s: invalid value '%s'", key, value);
		else if (r == -ERANGE)
			range_message(key, value, err, errlen);
		else if (r < 0)
			snprintf(err, errlen, "%s: %s", key, strerror(-r));
		else
			c->source[k] = src;
		return r;
	}
	snprintf(err, errlen, "unknown key '%s'", key);
	return -ENOKEY;
}

int hib_config_set(struct hib_config *c, const char *key, const char *value, char *err,
		   size_t errlen)
{
	return hib_config_set_from(c, key, value, HIB_SRC_OPTION, err, errlen);
}

void hib_config_init(struct hib_config *c)
{
	memset(c, 0, sizeof(*c));
	c->loglevel = -1;
	c->cancel = true;
	c->cancel_keys = HIB_CANCEL_KEYS_DEFAULT;
	c->require_encryption = -1;
	c->hook_timeout = 30;
	/* Vendor hooks (NVIDIA's among them) expect to run around every sleep. */
	c->hooks_systemd = true;
	c->restore_working_set = true;
	c->restore_limit = 30;
	hib_options_init(&c->opts);
	for (size_t k = 0; k < config_n_keys; k++)
		if (config_keys[k].hook_env &&
		    asprintf(&c->hook_env[k], "%s=%s", config_keys[k].hook_env,
			     hook_default(config_keys[k].hook_env)) < 0)
			c->hook_env[k] = NULL;
}

void hib_config_free(struct hib_config *c)
{
	free(c->device);
	c->device = NULL;
	free(c->key_file);
	c->key_file = NULL;
	for (size_t k = 0; k < HIB_CONFIG_MAX_KEYS; k++) {
		free(c->hook_env[k]);
		c->hook_env[k] = NULL;
	}
	for (size_t i = 0; i < c->n_inline; i++) {
		free((char *)c->inl[i].pre_cmd);
		free((char *)c->inl[i].post_cmd);
	}
	c->n_inline = 0;
}

/* "OnSuspend NN command" / "OnResume NN command". */
static int parse_inline(struct hib_config *c, const char *s, char *err, size_t errlen)
{
	bool pre = strncmp(s, "OnSuspend", 9) == 0;
	const char *p = s + (pre ? 9 : 8), *digits;
	char *cmd;
	int nn = 0;

	/* Exactly: blanks, one or two digits, blanks, the command. */
	digits = p + strspn(p, " \t");
	for (p = digits; isdigit((unsigned char)*p) && p - digits < 3; p++)
		nn = nn * 10 + (*p - '0');
	if (digits == s + (pre ? 9 : 8) || p == digits || p - digits > 2 ||
	    (*p && !isspace((unsigned char)*p))) {
		snprintf(err, errlen, "%s: expected '%s NN command' with NN from 00 to 99",
			 pre ? "OnSuspend" : "OnResume", pre ? "OnSuspend" : "OnResume");
		return -EINVAL;
	}
	while (isspace((unsigned char)*p))
		p++;
	if (!*p) {
		snprintf(err, errlen, "%s %d: no command", pre ? "OnSuspend" : "OnResume", nn);
		return -EINVAL;
	}
	if (c->n_inline == HIB_CONFIG_MAX_INLINE) {
		snprintf(err, errlen, "more than %d OnSuspend/OnResume lines",
			 HIB_CONFIG_MAX_INLINE);
		return -E2BIG;
	}
	cmd = strdup(p);
	if (!cmd)
		return -ENOMEM;
	c->inl[c->n_inline].order = nn;
	c->inl[c->n_inline].pre_cmd = pre ? cmd : NULL;
	c->inl[c->n_inline].post_cmd = pre ? NULL : cmd;
	c->n_inline++;
	return 0;
}

/* The lines of @f, each into @c. */
static int load_stream(struct hib_config *c, FILE *f, unsigned *ret_line, char *err, size_t errlen)
{
	_cleanup_(freep) char *line = NULL;
	size_t cap = 0;
	unsigned n = 0;
	int r = 0;

	while (getline(&line, &cap, f) > 0) {
		char *s, *eq;

		n++;
		s = strip(line);
		if (!*s || *s == '#')
			continue;
		if (strncmp(s, "OnSuspend", 9) == 0 || strncmp(s, "OnResume", 8) == 0) {
			r = parse_inline(c, s, err, errlen);
			if (r < 0)
				break;
			continue;
		}
		eq = strchr(s, '=');
		if (!eq) {
			snprintf(err, errlen, "expected 'key = value', got '%s'", s);
			r = -EINVAL;
			break;
		}
		*eq = 0;
		r = hib_config_set_from(c, strip(s), strip(eq + 1), HIB_SRC_FILE, err, errlen);
		if (r < 0)
			break;
	}
	if (r < 0 && ret_line)
		*ret_line = n;
	return r;
}

int hib_config_load(struct hib_config *c, const char *path, unsigned *ret_line, char *err,
		    size_t errlen)
{
	FILE *f = fopen(path, "re");
	int r;

	if (!f)
		return -errno;
	r = load_stream(c, f, ret_line, err, errlen);
	fclose(f);
	return r;
}

int hib_config_load_fd(struct hib_config *c, int fd, unsigned *ret_line, char *err, size_t errlen)
{
	int own = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	FILE *f;
	int r;

	if (own < 0)
		return -errno;
	f = fdopen(own, "re");
	if (!f) {
		r = -errno;
		close(own);
		return r;
	}
	r = load_stream(c, f, ret_line, err, errlen);
	fclose(f);
	return r;
}

int hib_config_load_trusted(struct hib_config *c, const char *path, unsigned *ret_line, char *err,
			    size_t errlen)
{
	struct hib_error e = { 0 };
	_cleanup_(closep) int fd = hib_open_trusted(path, 0, &e);

	if (fd < 0) {
		snprintf(err, errlen, "%s", e.msg);
		return fd;
	}
	return hib_config_load_fd(c, fd, ret_line, err, errlen);
}
