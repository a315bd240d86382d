// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * /etc/hibernate.conf: "key = value" lines, '#' comments. Unknown keys and
 * bad values are errors that name the line: a typo must not silently
 * hibernate to the wrong place.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "util.h"

static char *strip(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	if (e - s >= 2 && ((s[0] == '"' && e[-1] == '"') || (s[0] == '\'' && e[-1] == '\''))) {
		e[-1] = 0;
		s++;
	}
	return s;
}

static int parse_uint(const char *v, uint64_t max, uint64_t *ret)
{
	char *end;
	unsigned long long x;

	if (!*v || *v == '-')
		return -EINVAL;
	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno || *end || x > max)
		return -EINVAL;
	*ret = x;
	return 0;
}

int hib_config_set(struct hib_config *c, const char *key, const char *value, char *err,
		   size_t errlen)
{
	uint64_t u;

	if (strcmp(key, "device") == 0) {
		free(c->device);
		c->device = strdup(value);
		return c->device ? 0 : -ENOMEM;
	}
	if (strcmp(key, "offset") == 0) {
		if (parse_uint(value, UINT64_MAX / 4096, &u) < 0)
			goto bad;
		c->offset = u;
		c->offset_set = true;
		return 0;
	}
	if (strcmp(key, "compress") == 0) {
		if (hib_codec_parse(value, &c->opts.codec, &c->opts.codec_level) < 0) {
			snprintf(err, errlen, "compress: '%s' is not none, lz4 or zstd[:1-19]", value);
			return -EINVAL;
		}
		return 0;
	}
	if (strcmp(key, "threads") == 0) {
		if (parse_uint(value, 64, &u) < 0)
			goto bad;
		c->opts.threads = (unsigned)u;
		return 0;
	}
	if (strcmp(key, "image-size") == 0) {
		if (strcmp(value, "min") == 0)
			c->opts.image_size = 0;
		else if (strcmp(value, "default") == 0)
			c->opts.image_size = -1;
		else if (parse_uint(value, UINT64_MAX >> 21, &u) == 0)
			c->opts.image_size = (int64_t)(u << 20);
		else
			goto bad;
		return 0;
	}
	if (strcmp(key, "loglevel") == 0) {
		if (parse_uint(value, 5, &u) < 0)
			goto bad;
		c->loglevel = (int)u;
		return 0;
	}
	if (strcmp(key, "key-file") == 0) {
		free(c->key_file);
		c->key_file = strdup(value);
		return c->key_file ? 0 : -ENOMEM;
	}
	if (strcmp(key, "cancel") == 0 || strcmp(key, "verify") == 0 ||
	    strcmp(key, "auto-swapon") == 0 || strcmp(key, "encrypt") == 0) {
		bool v;
		if (!strcmp(value, "yes") || !strcmp(value, "true") || !strcmp(value, "1"))
			v = true;
		else if (!strcmp(value, "no") || !strcmp(value, "false") || !strcmp(value, "0"))
			v = false;
		else
			goto bad;
		if (key[0] == 'c')
			c->cancel = v;
		else if (key[0] == 'e')
			c->encrypt = v;
		else if (key[0] == 'v')
			c->opts.verify = v;
		else
			c->opts.auto_swapon = v;
		return 0;
	}
	if (strcmp(key, "powerdown") == 0) {
		if (strcmp(value, "shutdown") == 0)
			c->opts.powerdown = HIB_POWERDOWN_SHUTDOWN;
		else if (strcmp(value, "platform") == 0)
			c->opts.powerdown = HIB_POWERDOWN_PLATFORM;
		else if (strcmp(value, "reboot") == 0)
			c->opts.powerdown = HIB_POWERDOWN_REBOOT;
		else if (strcmp(value, "suspend") == 0)
			c->opts.powerdown = HIB_POWERDOWN_SUSPEND;
		else
			goto bad;
		return 0;
	}
	snprintf(err, errlen, "unknown key '%s'", key);
	return -ENOKEY;
bad:
	snprintf(err, errlen, "%s: invalid value '%s'", key, value);
	return -EINVAL;
}

void hib_config_init(struct hib_config *c)
{
	memset(c, 0, sizeof(*c));
	c->loglevel = -1;
	c->cancel = true;
	hib_options_init(&c->opts);
}

void hib_config_free(struct hib_config *c)
{
	free(c->device);
	c->device = NULL;
	free(c->key_file);
	c->key_file = NULL;
}

int hib_config_load(struct hib_config *c, const char *path, unsigned *ret_line, char *err,
		    size_t errlen)
{
	_cleanup_(freep) char *line = NULL;
	size_t cap = 0;
	unsigned n = 0;
	FILE *f;
	int r = 0;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *s, *eq;

		n++;
		s = strip(line);
		if (!*s || *s == '#')
			continue;
		eq = strchr(s, '=');
		if (!eq) {
			snprintf(err, errlen, "expected 'key = value', got '%s'", s);
			r = -EINVAL;
			break;
		}
		*eq = 0;
		r = hib_config_set(c, strip(s), strip(eq + 1), err, errlen);
		if (r < 0)
			break;
	}
	fclose(f);
	if (r < 0 && ret_line)
		*ret_line = n;
	return r;
}
