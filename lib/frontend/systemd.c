// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * systemctl and busctl through the one runner (systemd.h). Found at fixed
 * paths, never through $PATH: hibernate runs as root from units and hooks.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "frontend/systemd.h"
#include "util/error.h"
#include "util/spawn.h"
#include "util/util.h"

/* The first of @paths that is executable, or NULL. */
static const char *find_tool(const char *const *paths, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (access(paths[i], X_OK) == 0)
			return paths[i];
	return NULL;
}

int hib_systemctl(const char *const *args, char *out, size_t outlen, struct hib_error *err)
{
	static const char *const paths[] = { "/usr/bin/systemctl", "/bin/systemctl" };
	const char *argv[16] = { find_tool(paths, ARRAY_SIZE(paths)) };
	struct hib_spawn sp = { .argv = argv,
				.timeout_ms = HIB_SYSTEMD_TIMEOUT_MS,
				.stdin_fd = -1,
				.stderr_mode = HIB_SPAWN_STDERR_NULL,
				.out = out,
				.out_size = outlen };
	struct hib_spawn_result res;
	size_t n = 1;
	int r;

	if (!argv[0])
		return hib_error_set(err, -ENOENT, "systemctl: not found (no systemd here)");
	for (; args[n - 1] && n < ARRAY_SIZE(argv) - 1; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	r = hib_spawn_run(&sp, &res, err);
	return r < 0 ? r : res.status;
}

int hib_busctl_parse_string(const char *reply, char *buf, size_t len)
{
	char word[32];

	if (len < sizeof(word) || sscanf(reply, "s \"%31[a-z]\"", word) != 1)
		return -EBADMSG;
	snprintf(buf, len, "%s", word);
	return 0;
}

int hib_logind_can_hibernate(char *buf, size_t len, const char **ret_why)
{
	static const char *const paths[] = { "/usr/bin/busctl", "/bin/busctl" };
	const char *argv[] = { find_tool(paths, ARRAY_SIZE(paths)),
			       "--timeout=5",
			       "call",
			       "org.freedesktop.login1",
			       "/org/freedesktop/login1",
			       "org.freedesktop.login1.Manager",
			       "CanHibernate",
			       NULL };
	char out[128] = "";
	struct hib_spawn sp = { .argv = argv,
				.timeout_ms = 10000,
				.stdin_fd = -1,
				.stderr_mode = HIB_SPAWN_STDERR_NULL,
				.out = out,
				.out_size = sizeof(out) };
	struct hib_spawn_result res;
	struct hib_error err;
	int r;

	*ret_why = "no busctl (systemd) here to ask it";
	if (!argv[0])
		return -ENOENT;
	*ret_why = "systemd-logind did not answer on the system bus (not running?)";
	r = hib_spawn_check(&sp, &res, &err);
	if (r < 0)
		return r;
	return hib_busctl_parse_string(out, buf, len);
}
