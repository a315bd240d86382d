// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The hooks of one run, as the cycle and systemd's sleep steps both run them:
 * the configuration's environment and hook directories, switch-vt resolved
 * for the console in front, the pres collected and run, and the posts of
 * what ran (hooks_end, a _cleanup_).
 */
#include <stdio.h>
#include <string.h>

#include "frontend/hooks.h"
#include "frontend/screen.h"
#include "tool.h"
#include "util/util.h"

static void hook_log(enum hib_loglevel level, const char *who, const char *msg, void *ud)
{
	const char *base = strrchr(who, '/');

	tlog(ud, level, "hook %s: %s", base ? base + 1 : who, msg);
}

/* Tests point the runner at their own directories (test builds only). */
static void hooks_test_dirs(struct hooks_run *h)
{
	const char *knob = hib_test_knob("HIBERNATE_HOOKS_DIRS");
	size_t n = 0;

	if (!knob)
		return;
	snprintf(h->dirs_buf, sizeof(h->dirs_buf), "%s", knob);
	for (char *save = NULL, *d = strtok_r(h->dirs_buf, ":", &save); d && n < 8;
	     d = strtok_r(NULL, ":", &save))
		h->dirs[n++] = d;
	h->dirs[n] = NULL;
	h->hc.dirs = h->dirs;
}

/* switch-vt = auto: 70-switch-vt gets 12 when a display server draws the
 * console in front (its frozen picture would stay on the screen while the
 * image is written), else no. Once, before the pres: the posts switch back
 * by what the pre saved. */
static void hooks_switch_vt(struct control *ctl, struct hooks_run *h)
{
	static const char name[] = "HIBERNATE_SWITCH_VT=";
	char v[32] = "";

	for (size_t i = 0; h->env[i]; i++) {
		if (strncmp(h->env[i], name, sizeof(name) - 1) != 0)
			continue;
		(void)hib_config_get(&ctl->cfg, "switch-vt", v, sizeof(v));
		snprintf(h->switch_vt_env, sizeof(h->switch_vt_env), "%s%s", name,
			 hib_screen_switch_resolve(v, output_front_graphics()));
		h->env[i] = h->switch_vt_env;
	}
}

void hooks_setup(struct control *ctl, struct hooks_run *h, const char *mode, const char *step)
{
	*h = (struct hooks_run){ .ctl = ctl };
	hib_config_hook_env(&ctl->cfg, h->env, ARRAY_SIZE(h->env));
	hooks_switch_vt(ctl, h);
	h->hc = (struct hib_hook_config){
		.env = h->env,
		.systemd = ctl->cfg.hooks_systemd,
		.pmutils = ctl->cfg.hooks_pmutils,
		.timeout_s = ctl->cfg.hook_timeout,
		.force = ctl->cfg.force,
		.mode = mode,
		.systemd_verb = ctl->sleep_op,
		.systemd_action = step,
		.inl = ctl->cfg.inl,
		.n_inline = ctl->cfg.n_inline,
		.log = hook_log,
		.userdata = ctl,
		.interrupted = &run_stop_signal,
	};
	hooks_test_dirs(h);
}

int hooks_start(struct hooks_run *h, const char *what)
{
	struct hib_error err;
	int r;

	h->msg[0] = 0;
	if (h->ctl->no_hooks)
		return 0;
	r = hib_hooks_collect(&h->hc, &h->hooks, &err);
	if (r < 0) {
		say(h->ctl, "%s; %s", err.msg, what);
		return r;
	}
	h->collected = true;
	r = hib_hooks_pre(h->hooks, &h->hc, h->msg, sizeof(h->msg));
	if (r < 0) {
		hib_hooks_free(h->hooks);
		h->hooks = NULL;
	}
	return r;
}

void hooks_end(struct hooks_run *h)
{
	if (!h->hooks)
		return;
	hib_hooks_post(h->hooks, &h->hc);
	hib_hooks_free(h->hooks);
	h->hooks = NULL;
}
