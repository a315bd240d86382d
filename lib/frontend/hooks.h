/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Ordered pre/post hooks with unwinding (hooks.c). */
#ifndef HIB_HOOKS_H
#define HIB_HOOKS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "hibernate.h"

/* A message about hook @who (its path or name). */
typedef void (*hib_hook_log_fn)(enum hib_loglevel level, const char *who, const char *msg,
				void *userdata);

/* "OnSuspend NN command" / "OnResume NN command" from the config: a command
 * run at position NN before the cycle, or after it (if the "pre" sequence got
 * that far). */
struct hib_inline_hook {
	int order;            /* 0..99 */
	const char *pre_cmd;  /* NULL: nothing before */
	const char *post_cmd; /* NULL: nothing after */
};

struct hib_hook_config {
	/* Our hook directories, earlier ones winning on a name; NULL for the defaults
	 * (/etc/hibernate/hooks.d, /usr/lib/hibernate/hooks.d). */
	const char *const *dirs;
	bool systemd;                    /* also systemd-sleep hooks ("pre|post hibernate") */
	const char *const *systemd_dirs; /* NULL: /etc and /usr/lib systemd/system-sleep */
	bool pmutils;                    /* also pm-utils hooks ("hibernate|thaw") */
	const char *const *pmutils_dirs; /* NULL: /etc/pm/sleep.d, /usr/lib/pm-utils/sleep.d */
	unsigned timeout_s;              /* per hook; 0 = 30 */
	bool force;                      /* a failing hook (exit 1) does not abort */
	const char *mode;                /* HIBERNATE_MODE: hibernate, test, suspend, … */
	/* What systemd-sleep would tell its hooks: the unit's operation as their
	 * second argument (hibernate, hybrid-sleep, suspend-then-hibernate) and this
	 * step of it as SYSTEMD_SLEEP_ACTION (suspend, hibernate, hybrid-sleep,
	 * suspend-after-failed-hibernate). NULL: "hibernate" for both. */
	const char *systemd_verb;
	const char *systemd_action;
	/* More KEY=VALUE for the hooks (the config's). Hooks get these and PATH (fixed),
	 * LANG=C, HIBERNATE_PHASE, HIBERNATE_MODE, SYSTEMD_SLEEP_ACTION: nothing of the
	 * caller's environment. */
	char **env;
	const struct hib_inline_hook *inl; /* inline hooks … */
	size_t n_inline;                   /* … and how many */
	/* Non-zero (set by a signal handler): the run is to stop. The running "pre"
	 * is killed, no further "pre" starts, and every "post" still runs. */
	const volatile sig_atomic_t *interrupted;
	hib_hook_log_fn log;
	void *userdata;
};

struct hib_hooks;

/*
 * Find the hooks: those of @c's directories, then the inline ones. Every
 * directory that exists and every hook that would run must pass
 * hib_path_trusted (root-owned, not writable by group or others): one that
 * does not fails the whole collection with -EPERM, naming it and the fix in
 * @err, so that no cycle runs without what the hook would have prepared.
 */
int hib_hooks_collect(const struct hib_hook_config *c, struct hib_hooks **ret,
		      struct hib_error *err);
void hib_hooks_free(struct hib_hooks *h);
size_t hib_hooks_count(const struct hib_hooks *h);
const char *hib_hooks_name(const struct hib_hooks *h, size_t i);

/*
 * Run every hook's "pre" in order. On a failure, unwind (the "post" of those
 * whose "pre" succeeded, in reverse) and return -EIO (exit 1, a timeout, a
 * hook that cannot run) or -ECANCELED (exit 2 or 3); @msg then says why (empty
 * for exit 3). When @c->interrupted is set, unwind (the "post" of the hook cut
 * short too) and return -EINTR.
 */
int hib_hooks_pre(struct hib_hooks *h, const struct hib_hook_config *c, char *msg, size_t msglen);
/* Run "post" of every hook whose "pre" succeeded, in reverse order. */
void hib_hooks_post(struct hib_hooks *h, const struct hib_hook_config *c);

#endif
