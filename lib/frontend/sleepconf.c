// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sleep.conf, read the way systemd reads it, for the keys a cycle that
 * replaces systemd-sleep must honour. Only these: the rest of the file
 * (AllowHibernation=, MemorySleepMode=, ...) stays systemd's, which checks it
 * before it starts the unit that runs us.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "frontend/sleepconf.h"
#include "util/error.h"
#include "util/util.h"

#define DEFAULT_SUSPEND_STATE "mem standby freeze"

void hib_sleep_conf_init(struct hib_sleep_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->hibernate_delay_usec = HIB_SLEEP_DEFAULT_DELAY_USEC;
	c->suspend_estimation_usec = HIB_SLEEP_DEFAULT_ESTIMATION_USEC;
	c->hibernate_on_ac = c->allow_suspend = c->allow_hibernation = c->allow_sth = true;
	c->allow_hybrid = true;
	snprintf(c->suspend_state, sizeof(c->suspend_state), "%s", DEFAULT_SUSPEND_STATE);
}

static const struct {
	const char *unit;
	uint64_t usec;
} time_units[] = {
	{ "usec", 1 },
	{ "us", 1 },
	{ "msec", 1000 },
	{ "ms", 1000 },
	{ "seconds", 1000000 },
	{ "second", 1000000 },
	{ "sec", 1000000 },
	{ "s", 1000000 },
	{ "minutes", 60000000ULL },
	{ "minute", 60000000ULL },
	{ "min", 60000000ULL },
	{ "m", 60000000ULL },
	{ "hours", 3600000000ULL },
	{ "hour", 3600000000ULL },
	{ "hr", 3600000000ULL },
	{ "h", 3600000000ULL },
	{ "days", 86400000000ULL },
	{ "day", 86400000000ULL },
	{ "d", 86400000000ULL },
	{ "weeks", 604800000000ULL },
	{ "week", 604800000000ULL },
	{ "w", 604800000000ULL },
};

/* The unit at @s (longest names first in the table), its length in *ret_len. */
static int time_unit(const char *s, uint64_t *ret_usec, size_t *ret_len)
{
	size_t len = 0;

	while (isalpha((unsigned char)s[len]))
		len++;
	if (len == 0) {
		*ret_usec = 1000000; /* a bare number is seconds */
		*ret_len = 0;
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(time_units); i++)
		if (strlen(time_units[i].unit) == len && strncmp(s, time_units[i].unit, len) == 0) {
			*ret_usec = time_units[i].usec;
			*ret_len = len;
			return 0;
		}
	return -EINVAL;
}

int hib_parse_timespan(const char *s, uint64_t *ret_usec)
{
	uint64_t total = 0;
	bool any = false;

	while (*s) {
		uint64_t n, unit;
		size_t ulen;
		char *end;

		while (isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		errno = 0;
		n = strtoull(s, &end, 10);
		if (errno)
			return -EINVAL;
		while (isspace((unsigned char)*end))
			end++;
		if (time_unit(end, &unit, &ulen) < 0 || (n && unit > UINT64_MAX / n) ||
		    total > UINT64_MAX - n * unit)
			return -EINVAL;
		total += n * unit;
		s = end + ulen;
		any = true;
	}
	if (!any)
		return -EINVAL;
	*ret_usec = total;
	return 0;
}

int hib_sleep_mode_powerdown(const char *modes, enum hib_powerdown *ret)
{
	static const struct {
		const char *name;
		enum hib_powerdown pd;
	} map[] = {
		{ "platform", HIB_POWERDOWN_PLATFORM },
		{ "shutdown", HIB_POWERDOWN_SHUTDOWN },
		{ "reboot", HIB_POWERDOWN_REBOOT },
		{ "suspend", HIB_POWERDOWN_SUSPEND },
	};
	const char *p = modes;

	while (*p) {
		size_t len;

		p += strspn(p, " \t");
		len = strcspn(p, " \t");
		for (size_t i = 0; len && i < ARRAY_SIZE(map); i++)
			if (strlen(map[i].name) == len && strncmp(p, map[i].name, len) == 0) {
				*ret = map[i].pd;
				return 0;
			}
		p += len;
	}
	return -ENOENT;
}

int hib_systemd_version_parse(const char *line, unsigned *ret_version)
{
	unsigned long v;
	char *end;

	if (strncmp(line, "systemd ", 8) != 0 || !isdigit((unsigned char)line[8]))
		return -EINVAL;
	errno = 0;
	v = strtoul(line + 8, &end, 10);
	if (errno || v == 0 || v > 100000 || (*end && *end != ' ' && *end != '\n'))
		return -EINVAL;
	*ret_version = (unsigned)v;
	return 0;
}

int hib_parse_boolean(const char *s, bool *ret)
{
	static const char *const yes[] = { "1", "yes", "y", "true", "t", "on" };
	static const char *const no[] = { "0", "no", "n", "false", "f", "off" };

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*ret = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

const char *hib_sleep_disallowed(const struct hib_sleep_conf *c, int op)
{
	if (op == 1 && !c->allow_hybrid)
		return "AllowHybridSleep=no";
	if (op == 2 && !c->allow_sth)
		return "AllowSuspendThenHibernate=no";
	if (op == 2 && !c->allow_suspend)
		return "AllowSuspend=no";
	if (!c->allow_hibernation)
		return "AllowHibernation=no";
	return NULL;
}

/* The boolean keys: each with its default (yes) when emptied. */
static int bool_key(struct hib_sleep_conf *c, const char *key, const char *value,
		    struct hib_error *err)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ "HibernateOnACPower", offsetof(struct hib_sleep_conf, hibernate_on_ac) },
		{ "AllowSuspend", offsetof(struct hib_sleep_conf, allow_suspend) },
		{ "AllowHibernation", offsetof(struct hib_sleep_conf, allow_hibernation) },
		{ "AllowSuspendThenHibernate", offsetof(struct hib_sleep_conf, allow_sth) },
		{ "AllowHybridSleep", offsetof(struct hib_sleep_conf, allow_hybrid) },
	};

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		bool *b = (bool *)((char *)c + keys[i].off);

		if (strcmp(key, keys[i].key) != 0)
			continue;
		*b = true;
		if (*value && hib_parse_boolean(value, b) < 0)
			return hib_error_set(err, -EINVAL, "%s=%s: not a boolean (yes or no)", key,
					     value);
		return 1;
	}
	return 0;
}

/* One KEY=VALUE of [Sleep]. */
static int sleep_key(struct hib_sleep_conf *c, const char *key, const char *value,
		     struct hib_error *err)
{
	int r = bool_key(c, key, value, err);

	if (r != 0)
		return r < 0 ? r : 0;
	if (strcmp(key, "HibernateDelaySec") == 0) {
		c->delay_set = *value != 0;
		c->hibernate_delay_usec = HIB_SLEEP_DEFAULT_DELAY_USEC;
		if (*value && (hib_parse_timespan(value, &c->hibernate_delay_usec) < 0 ||
			       c->hibernate_delay_usec == 0))
			return hib_error_set(err, -EINVAL,
					     "HibernateDelaySec=%s: not a time span like 30min",
					     value);
	} else if (strcmp(key, "HibernateMode") == 0) {
		c->mode_set = *value && hib_sleep_mode_powerdown(value, &c->powerdown) == 0;
		if (*value && !c->mode_set)
			return hib_error_set(err, -EINVAL,
					     "HibernateMode=%s: none of platform, shutdown, "
					     "reboot, suspend",
					     value);
	} else if (strcmp(key, "SuspendEstimationSec") == 0) {
		c->suspend_estimation_usec = HIB_SLEEP_DEFAULT_ESTIMATION_USEC;
		if (*value && (hib_parse_timespan(value, &c->suspend_estimation_usec) < 0 ||
			       c->suspend_estimation_usec == 0))
			return hib_error_set(err, -EINVAL,
					     "SuspendEstimationSec=%s: not a time span like 1h",
					     value);
	} else if (strcmp(key, "SuspendState") == 0) {
		snprintf(c->suspend_state, sizeof(c->suspend_state), "%s",
			 *value ? value : DEFAULT_SUSPEND_STATE);
	}
	return 0;
}

int hib_sleep_conf_parse(struct hib_sleep_conf *c, const char *text, unsigned *ret_line,
			 struct hib_error *err)
{
	_cleanup_(freep) char *copy = strdup(text);
	bool in_sleep = false;
	unsigned line = 0;

	hib_error_clear(err);
	if (!copy)
		return hib_error_ensure(err, -ENOMEM);
	for (char *p = copy, *nl; p && *p; p = nl) {
		char *s, *eq;
		int r;

		nl = strchr(p, '\n');
		if (nl)
			*nl++ = 0;
		line++;
		s = hib_strip(p);
		if (*s == 0 || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			in_sleep = strcmp(s, "[Sleep]") == 0;
			continue;
		}
		eq = strchr(s, '=');
		if (!in_sleep || !eq)
			continue;
		*eq = 0;
		r = sleep_key(c, hib_strip(s), hib_strip(eq + 1), err);
		if (r < 0) {
			*ret_line = line;
			return r;
		}
	}
	return 0;
}

static const char *const conf_dirs[] = { "/etc/systemd", "/run/systemd", "/usr/local/lib/systemd",
					 "/usr/lib/systemd" };

/* The whole of @path; -ENOENT when it is not there. */
static int read_text(const char *path, char **ret)
{
	_cleanup_(freep) char *buf = NULL;
	size_t len = 0, cap = 0, n;
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	do {
		if (cap - len < 4096) {
			char *b = cap < (1u << 20) ? realloc(buf, cap + 8192) : NULL;
			if (!b) {
				fclose(f);
				return -ENOMEM;
			}
			buf = b;
			cap += 8192;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	fclose(f);
	buf[len] = 0;
	*ret = TAKE_PTR(buf);
	return 0;
}

static int load_file(struct hib_sleep_conf *c, const char *path, struct hib_error *err)
{
	_cleanup_(freep) char *text = NULL;
	unsigned line = 0;
	int r = read_text(path, &text);

	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return hib_error_set(err, r, "%s: %s", path, strerror(-r));
	r = hib_sleep_conf_parse(c, text, &line, err);
	return r < 0 ? hib_error_prefix(err, r, "%s:%u: ", path, line) : 1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

#define MAX_DROPINS 64

/* The drop-ins' names, each once, sorted; the count, or -errno. */
static int dropin_names(const char *root, char **names)
{
	int n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(conf_dirs); i++) {
		char dir[4096];
		struct dirent *e;
		DIR *d;

		snprintf(dir, sizeof(dir), "%s%s/sleep.conf.d", root, conf_dirs[i]);
		d = opendir(dir);
		while (d && (e = readdir(d)) && n < MAX_DROPINS) {
			size_t len = strlen(e->d_name);
			bool seen = false;

			if (e->d_name[0] == '.' || len < 6 || strcmp(e->d_name + len - 5, ".conf"))
				continue;
			for (int k = 0; k < n && !seen; k++)
				seen = strcmp(names[k], e->d_name) == 0;
			if (!seen && !(names[n++] = strdup(e->d_name))) {
				closedir(d);
				while (n-- > 0)
					free(names[n]);
				return -ENOMEM;
			}
		}
		if (d)
			closedir(d);
	}
	qsort(names, (size_t)n, sizeof(*names), cmp_str);
	return n;
}

/* Drop-in @name from the first directory that has it. */
static int load_dropin(struct hib_sleep_conf *c, const char *root, const char *name,
		       struct hib_error *err)
{
	for (size_t i = 0; i < ARRAY_SIZE(conf_dirs); i++) {
		char path[4096];
		int r;

		snprintf(path, sizeof(path), "%s%s/sleep.conf.d/%s", root, conf_dirs[i], name);
		r = load_file(c, path, err);
		if (r != 0)
			return r;
	}
	return 0;
}

int hib_sleep_conf_load(const char *root, struct hib_sleep_conf *ret, struct hib_error *err)
{
	struct hib_sleep_conf c;
	char *names[MAX_DROPINS];
	int r = 0, n;

	hib_error_clear(err);
	hib_sleep_conf_init(&c);
	root = root ? root : "";
	for (size_t i = 0; i < ARRAY_SIZE(conf_dirs) && r == 0; i++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s%s/sleep.conf", root, conf_dirs[i]);
		r = load_file(&c, path, err);
	}
	if (r < 0)
		return r;
	n = dropin_names(root, names);
	if (n < 0)
		return hib_error_ensure(err, n);
	for (int i = 0; i < n; i++) {
		if (r >= 0)
			r = load_dropin(&c, root, names[i], err);
		free(names[i]);
	}
	if (r < 0)
		return r;
	*ret = c;
	return 0;
}
