// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * systemctl and busctl through the one runner (systemd.h). Found at fixed
 * paths, never through $PATH: hibernate runs as root from units and hooks.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
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

bool hib_cgroup_service(const char *proc_cgroup, char *buf, size_t len)
{
	const char *line = strstr(proc_cgroup, ":name=systemd:/");
	const char *end, *name;
	size_t n;

	if (line) {
		line += strlen(":name=systemd:");
	} else {
		line = strstr(proc_cgroup, "0::/");
		if (!line || (line != proc_cgroup && line[-1] != '\n'))
			return false;
		line += 3;
	}
	end = strchrnul(line, '\n');
	for (name = end; name > line && name[-1] != '/'; name--)
		;
	n = (size_t)(end - name);
	if (n <= strlen(".service") || strncmp(end - strlen(".service"), ".service", 8) != 0 ||
	    n >= len)
		return false;
	memcpy(buf, name, n);
	buf[n] = 0;
	return true;
}

/* Whether @pid's cgroup is @scope. */
static bool in_scope(pid_t pid, const char *scope)
{
	char path[64], cg[1024], want[300];

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	snprintf(want, sizeof(want), "/%s\n", scope);
	return hib_read_text(path, cg, sizeof(cg)) > 0 && strstr(cg, want);
}

int hib_systemd_scope_adopt(pid_t pid, const char *scope, const char *description,
			    struct hib_error *err)
{
	static const char *const paths[] = { "/usr/bin/busctl", "/bin/busctl" };
	char spid[16];
	const char *argv[] = { find_tool(paths, ARRAY_SIZE(paths)),
			       "--timeout=5",
			       "call",
			       "org.freedesktop.systemd1",
			       "/org/freedesktop/systemd1",
			       "org.freedesktop.systemd1.Manager",
			       "StartTransientUnit",
			       "ssa(sv)a(sa(sv))",
			       scope,
			       "fail",
			       "3",
			       "PIDs",
			       "au",
			       "1",
			       spid,
			       "Description",
			       "s",
			       description,
			       "CollectMode",
			       "s",
			       "inactive-or-failed",
			       "0",
			       NULL };
	struct hib_spawn sp = { .argv = argv,
				.timeout_ms = 10000,
				.stdin_fd = -1,
				.stderr_mode = HIB_SPAWN_STDERR_NULL };
	struct hib_spawn_result res;
	int r;

	if (!argv[0])
		return hib_error_set(err, -ENOENT, "busctl: not found (no systemd here)");
	snprintf(spid, sizeof(spid), "%d", (int)pid);
	r = hib_spawn_check(&sp, &res, err);
	if (r < 0)
		return r;
	/* The job starts the scope after the call returns. */
	for (int i = 0; i < 100; i++) {
		if (in_scope(pid, scope))
			return 0;
		nanosleep(&(struct timespec){ .tv_nsec = 20000000 }, NULL);
	}
	return hib_error_set(err, -ETIMEDOUT, "%s: process %d not in it after 2 s", scope,
			     (int)pid);
}
