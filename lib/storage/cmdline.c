// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kernel command line, as far as hibernation cares: resume=,
 * resume_offset=, noresume, hibernate=no / nohibernate. Words are split on
 * white space; a double-quoted value may hold spaces (LABEL="my swap").
 * Here in storage because resume= and resume_offset= are how a target is
 * found; the frontend asks it about noresume and nohibernate.
 */
#include <ctype.h>
#include <inttypes.h>
#include <string.h>

#include "util/util.h"

int hib_cmdline_parse(const char *text, struct hib_cmdline *ret)
{
	struct hib_cmdline c = { 0 };
	const char *p = text ? text : "";

	while (*p) {
		char word[4096];
		size_t n = 0;
		bool quoted = false;

		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		while (*p && (quoted || !isspace((unsigned char)*p))) {
			if (*p == '"')
				quoted = !quoted;
			else if (n < sizeof(word) - 1)
				word[n++] = *p;
			p++;
		}
		word[n] = 0;

		if (strncmp(word, "resume=", 7) == 0) {
			free(c.resume);
			c.resume = word[7] ? strdup(word + 7) : NULL;
			if (word[7] && !c.resume)
				return -ENOMEM;
		} else if (strncmp(word, "resume_offset=", 14) == 0) {
			/* Read as the kernel reads it (sscanf "%llu": decimal, leading
			 * digits); a value it cannot read leaves the previous one, and so
			 * does a signed one, which could only wrap to nonsense. */
			if (isdigit((unsigned char)word[14])) {
				unsigned long long v;
				errno = 0;
				v = strtoull(word + 14, NULL, 10);
				if (errno == 0) /* an overflow is nonsense too */
					c.resume_offset = v;
			}
		} else if (strcmp(word, "noresume") == 0) {
			c.noresume = true;
		} else if (strcmp(word, "nohibernate") == 0 || strcmp(word, "hibernate=no") == 0) {
			c.hibernate_no = true;
		} else if (strcmp(word, "hibernate=noresume") == 0) {
			c.noresume = true;
		}
	}
	*ret = c;
	return 0;
}

void hib_cmdline_free(struct hib_cmdline *c)
{
	free(c->resume);
	c->resume = NULL;
}
