/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * systemd's command-line tools, run through the one child runner
 * (util/spawn.h) by their fixed paths with a built environment: systemctl for
 * user.slice and logind's restart, busctl for logind's CanHibernate.
 */
#ifndef HIB_SYSTEMD_H
#define HIB_SYSTEMD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "hibernate.h"

/* How long a question to systemd may take. */
#define HIB_SYSTEMD_TIMEOUT_MS 30000

/*
 * systemctl ARGS... (NULL-terminated), its stdout into @out (NUL-terminated,
 * cut to @outlen; may be NULL). @return its exit status (>= 0), or -errno
 * with @err when it could not be run: -ENOENT no systemctl here, -ETIME past
 * HIB_SYSTEMD_TIMEOUT_MS.
 */
int hib_systemctl(const char *const *args, char *out, size_t outlen, struct hib_error *err);

/*
 * logind's answer to CanHibernate over D-Bus through busctl (5 s at most):
 * "yes", "no", "na" or "challenge" into @buf (at least 32 bytes). @return 0,
 * or -errno with *@ret_why saying why it could not be asked.
 */
int hib_logind_can_hibernate(char *buf, size_t len, const char **ret_why);

/* busctl's reply line (`s "yes"`) into @buf; -EBADMSG when it is not one. */
int hib_busctl_parse_string(const char *reply, char *buf, size_t len);

/*
 * The service @proc_cgroup (the text of /proc/PID/cgroup: the name=systemd
 * line of a hybrid hierarchy, else the unified one) puts its process in: its name into @buf and
 * true when the cgroup's last element ends in ".service", false otherwise
 * (a session's scope, no systemd).
 */
bool hib_cgroup_service(const char *proc_cgroup, char *buf, size_t len);

/*
 * Process @pid moved into a transient scope @scope of its own
 * (StartTransientUnit through busctl, PIDs=), out of the calling service,
 * whose end would find it still running: waits (2 s at most) until it is in
 * it. Its children forked after are in the scope too. -errno with @err:
 * -ENOENT no busctl, -ETIMEDOUT not moved in time.
 */
int hib_systemd_scope_adopt(pid_t pid, const char *scope, const char *description,
			    struct hib_error *err);

#endif
