// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Hooks: programs that prepare the system before a cycle ("pre hibernate")
 * and bring it back after ("post hibernate") — the clock, the network,
 * modules, services, consoles.
 *
 * Unlike systemd-sleep's (all at once, no order, nothing undone on failure),
 * ours run one at a time in the order of their NN- prefix, and after the
 * cycle — resumed, failed or cancelled alike — in reverse, each only if its
 * own "pre" succeeded: a failure part-way unwinds exactly what was done.
 * systemd-sleep and pm-utils hooks join the same sequence when enabled, so
 * what people already have keeps working.
 *
 * Exit codes of "pre": 0 ok; 1 failed (abort and unwind, unless forced);
 * 2 abort, and show the hook's output as the reason; 3 abort silently.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "frontend/hooks.h"
#include "util/error.h"
#include "util/spawn.h"
#include "util/util.h"

enum hook_kind { HOOK_OURS, HOOK_PMUTILS, HOOK_SYSTEMD, HOOK_INLINE };

struct hib_hook {
	char *name;
	char *path;
	enum hook_kind kind;
	int order;
	bool pre_ok;
	const char *pre_cmd, *post_cmd; /* HOOK_INLINE: shell commands */
};

struct hib_hooks {
	struct hib_hook *v;
	size_t n, cap;
};

#ifndef HIB_LIB_HOOKS_DIR
#define HIB_LIB_HOOKS_DIR "/usr/lib/hibernate/hooks.d"
#endif
static const char *const default_dirs[] = { "/etc/hibernate/hooks.d", HIB_LIB_HOOKS_DIR, NULL };
static const char *const default_systemd[] = { "/etc/systemd/system-sleep",
					       "/usr/lib/systemd/system-sleep", NULL };
static const char *const default_pmutils[] = { "/etc/pm/sleep.d", "/usr/lib/pm-utils/sleep.d",
					       NULL };

/* NN-name: two digits, a dash, a name. */
static int our_order(const char *name)
{
	if (name[0] >= '0' && name[0] <= '9' && name[1] >= '0' && name[1] <= '9' &&
	    name[2] == '-' && name[3])
		return (name[0] - '0') * 10 + (name[1] - '0');
	return -1;
}

/* pm-utils names are "NNname" by convention; others run in the middle.
 * systemd-sleep hooks have no order (systemd runs them all at once): they
 * all run in the middle, whatever their name. */
static int leading_order(const char *name)
{
	if (name[0] >= '0' && name[0] <= '9' && name[1] >= '0' && name[1] <= '9')
		return (name[0] - '0') * 10 + (name[1] - '0');
	return 50;
}

static bool have_name(const struct hib_hooks *h, enum hook_kind kind, const char *name)
{
	for (size_t i = 0; i < h->n; i++)
		if (h->v[i].kind == kind && strcmp(h->v[i].name, name) == 0)
			return true;
	return false;
}

static int add_hook(struct hib_hooks *h, enum hook_kind kind, const char *dir, const char *name,
		    int order)
{
	struct hib_hook *k;

	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 16;
		struct hib_hook *v = realloc(h->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	k = &h->v[h->n];
	memset(k, 0, sizeof(*k));
	k->kind = kind;
	k->order = order;
	k->name = strdup(name);
	if (asprintf(&k->path, "%s/%s", dir, name) < 0)
		k->path = NULL;
	if (!k->name || !k->path) {
		free(k->name);
		free(k->path);
		return -ENOMEM;
	}
	h->n++;
	return 0;
}

/* Root runs what is in a hook directory: only root may put it there. An
 * absent directory has no hooks, as before. */
static int trusted_dir(const char *dir, struct hib_error *err)
{
	int r = hib_path_trusted(dir, err);

	if (r == -ENOENT || r == -ENOTDIR)
		return 0;
	return r < 0 ? hib_error_prefix(err, r, "hook directory: ") : 1;
}

/* Earlier directories win: /etc over /usr/lib, for the same name. */
static int scan(struct hib_hooks *h, enum hook_kind kind, const char *const *dirs,
		hib_hook_log_fn log, void *ud, struct hib_error *err)
{
	for (; dirs && *dirs; dirs++) {
		struct dirent *e;
		DIR *d;
		int r = trusted_dir(*dirs, err);

		if (r < 0)
			return r;
		d = r ? opendir(*dirs) : NULL;
		if (!d)
			continue;
		while ((e = readdir(d))) {
			char path[4096];
			struct stat st;
			int order;

			if (e->d_name[0] == '.')
				continue;
			order = kind == HOOK_OURS      ? our_order(e->d_name)
				: kind == HOOK_PMUTILS ? leading_order(e->d_name)
						       : 50;
			if (order < 0) {
				if (log)
					log(HIB_LOG_WARN, e->d_name,
					    "ignored: hook names are NN-name, NN from 00 to 99",
					    ud);
				continue;
			}
			if (have_name(h, kind, e->d_name))
				continue;
			snprintf(path, sizeof(path), "%s/%s", *dirs, e->d_name);
			/* A link to /dev/null masks the hook of that name, as systemd does. */
			if (stat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
				if (add_hook(h, kind, *dirs, e->d_name, -1) < 0) {
					closedir(d);
					return hib_error_ensure(err, -ENOMEM);
				}
				continue;
			}
			if (access(path, X_OK) < 0) {
				if (log)
					log(HIB_LOG_WARN, path, "ignored: not executable", ud);
				continue;
			}
			/* Not skipped: the cycle would go on without what it prepares. */
			r = hib_path_trusted(path, err);
			if (r < 0) {
				closedir(d);
				return hib_error_prefix(err, r, "hook: ");
			}
			if (add_hook(h, kind, *dirs, e->d_name, order) < 0) {
				closedir(d);
				return hib_error_ensure(err, -ENOMEM);
			}
		}
		closedir(d);
	}
	return 0;
}

static int cmp_hook(const void *a, const void *b)
{
	const struct hib_hook *x = a, *y = b;

	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return strcmp(x->name, y->name);
}

int hib_hooks_collect(const struct hib_hook_config *c, struct hib_hooks **ret,
		      struct hib_error *err)
{
	struct hib_hooks *h = calloc(1, sizeof(*h));
	size_t w = 0;
	int r;

	hib_error_clear(err);
	if (!h)
		return hib_error_ensure(err, -ENOMEM);
	r = scan(h, HOOK_OURS, c->dirs ? c->dirs : default_dirs, c->log, c->userdata, err);
	if (r == 0 && c->pmutils)
		r = scan(h, HOOK_PMUTILS, c->pmutils_dirs ? c->pmutils_dirs : default_pmutils,
			 c->log, c->userdata, err);
	if (r == 0 && c->systemd)
		r = scan(h, HOOK_SYSTEMD, c->systemd_dirs ? c->systemd_dirs : default_systemd,
			 c->log, c->userdata, err);
	for (size_t i = 0; r == 0 && i < c->n_inline; i++) {
		const struct hib_inline_hook *in = &c->inl[i];
		char name[32];

		if (in->order < 0 || in->order > 99) {
			r = -EINVAL;
			break;
		}
		snprintf(name, sizeof(name), "%02d-%s", in->order,
			 in->pre_cmd ? "OnSuspend" : "OnResume");
		r = add_hook(h, HOOK_INLINE, "config", name, in->order);
		if (r == 0) {
			h->v[h->n - 1].pre_cmd = in->pre_cmd;
			h->v[h->n - 1].post_cmd = in->post_cmd;
		}
	}
	if (r < 0) {
		hib_hooks_free(h);
		return hib_error_ensure(err, r);
	}
	/* Drop the masked ones (order -1) now that they have hidden their namesakes. */
	for (size_t i = 0; i < h->n; i++) {
		if (h->v[i].order < 0) {
			free(h->v[i].name);
			free(h->v[i].path);
			continue;
		}
		h->v[w++] = h->v[i];
	}
	h->n = w;
	if (h->n > 1)
		qsort(h->v, h->n, sizeof(*h->v), cmp_hook);
	*ret = h;
	return 0;
}

void hib_hooks_free(struct hib_hooks *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n; i++) {
		free(h->v[i].name);
		free(h->v[i].path);
	}
	free(h->v);
	free(h);
}

size_t hib_hooks_count(const struct hib_hooks *h)
{
	return h ? h->n : 0;
}

const char *hib_hooks_name(const struct hib_hooks *h, size_t i)
{
	return i < h->n ? h->v[i].path : NULL;
}

/* What a hook's environment holds, and nothing else (hibernate-hooks(7)): root
 * runs the hooks, so the caller's variables (LD_PRELOAD, PATH, IFS, ...) must
 * not reach them. */
#define HOOK_ENV_MAX 80

static void hook_environment(const struct hib_hook_config *c, bool pre, char (*vars)[64],
			     const char **envp)
{
	size_t n = 0;

	snprintf(vars[0], sizeof(vars[0]), "HIBERNATE_MODE=%s", c->mode ? c->mode : "hibernate");
	snprintf(vars[1], sizeof(vars[1]), "SYSTEMD_SLEEP_ACTION=%s",
		 c->systemd_action ? c->systemd_action : "hibernate");
	envp[n++] = HIB_SPAWN_DEFAULT_ENV;
	envp[n++] = "LANG=C";
	envp[n++] = pre ? "HIBERNATE_PHASE=pre" : "HIBERNATE_PHASE=post";
	envp[n++] = vars[0];
	envp[n++] = vars[1];
	for (char *const *e = c->env; e && *e && n + 1 < HOOK_ENV_MAX; e++)
		envp[n++] = *e;
	envp[n] = NULL;
}

#define HOOK_INTERRUPTED (-EINTR)

/* A signal stops the run during "pre" (a post is never cut short: it undoes). */
static bool hook_stop(void *userdata)
{
	const volatile sig_atomic_t *interrupted = userdata;

	return *interrupted;
}

/*
 * Run one hook with its arguments, its output collected into @out, for at
 * most the configured time. Returns its exit status, 124 on a timeout (the
 * whole process group is killed), HOOK_INTERRUPTED (killed too), 127 when it
 * cannot be executed (the reason in @out, as a shell says it), or -errno.
 */
static int run_one(const struct hib_hook *k, const struct hib_hook_config *c, bool pre, char *out,
		   size_t outlen)
{
	const char *argv_ours[] = { k->path, pre ? "pre" : "post", "hibernate", NULL };
	const char *argv_sd[] = { k->path, pre ? "pre" : "post",
				  c->systemd_verb ? c->systemd_verb : "hibernate", NULL };
	const char *argv_pm[] = { k->path, pre ? "hibernate" : "thaw", NULL };
	const char *argv_sh[] = { "/bin/sh", "-c", pre ? k->pre_cmd : k->post_cmd, NULL };
	char vars[2][64];
	const char *envp[HOOK_ENV_MAX];
	struct hib_spawn sp = {
		.argv = k->kind == HOOK_PMUTILS   ? argv_pm
			: k->kind == HOOK_INLINE  ? argv_sh
			: k->kind == HOOK_SYSTEMD ? argv_sd
						  : argv_ours,
		.envp = envp,
		.timeout_ms = (c->timeout_s ? c->timeout_s : 30) * 1000u,
		.stdin_fd = -1,
		.stderr_mode = HIB_SPAWN_STDERR_MERGE,
		.out = out,
		.out_size = outlen,
		.stop = pre && c->interrupted ? hook_stop : NULL,
		.userdata = (void *)c->interrupted,
	};
	struct hib_spawn_result res;
	struct hib_error err;
	int r;

	hook_environment(c, pre, vars, envp);
	r = hib_spawn_run(&sp, &res, &err);
	if (r == -ETIME)
		return 124;
	if (r == -EINTR)
		return HOOK_INTERRUPTED;
	if ((r == -ENOENT || r == -EACCES) && outlen) {
		snprintf(out, outlen, "cannot run: %s\n", strerror(-r));
		return 127;
	}
	return r < 0 ? r : res.status;
}

static void log_output(const struct hib_hook_config *c, const struct hib_hook *k, const char *out)
{
	char line[1024];
	const char *p = out;

	if (!c->log)
		return;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		if (line[0])
			c->log(HIB_LOG_INFO, k->path, line, c->userdata);
		p += len + (nl ? 1 : 0);
	}
}

/* A signal stopped the run: undo what the hooks did, @cut's part-done work
 * included (its post knows what its pre got to). */
static int unwind_interrupted(struct hib_hooks *h, const struct hib_hook_config *c,
			      struct hib_hook *cut, char *msg, size_t msglen)
{
	if (cut) {
		cut->pre_ok = true;
		snprintf(msg, msglen, "%s was cut short", cut->path);
	}
	hib_hooks_post(h, c);
	return -EINTR;
}

int hib_hooks_pre(struct hib_hooks *h, const struct hib_hook_config *c, char *msg, size_t msglen)
{
	char out[4096];

	if (msglen)
		msg[0] = 0;
	for (size_t i = 0; i < h->n; i++) {
		struct hib_hook *k = &h->v[i];
		char why[128];
		int st;

		/* An OnResume without an OnSuspend: "pre" is reaching its place. */
		if (k->kind == HOOK_INLINE && !k->pre_cmd) {
			k->pre_ok = true;
			continue;
		}
		if (c->interrupted && *c->interrupted)
			return unwind_interrupted(h, c, NULL, msg, msglen);
		st = run_one(k, c, true, out, sizeof(out));
		k->pre_ok = false;
		if (st != 3)
			log_output(c, k, out);
		if (st == 0) {
			k->pre_ok = true;
			continue;
		}
		if (st == HOOK_INTERRUPTED)
			return unwind_interrupted(h, c, k, msg, msglen);
		/* pm-utils and systemd hooks only know 0 and "failed". */
		if (k->kind != HOOK_OURS && k->kind != HOOK_INLINE && st > 0 && st != 124)
			st = 1;
		if (st == 1 && c->force) {
			if (c->log)
				c->log(HIB_LOG_WARN, k->path, "failed; going on (--force)",
				       c->userdata);
			continue;
		}
		if (st == 2) {
			/* The hook's own words are the reason. */
			size_t l = strlen(out);
			while (l && (out[l - 1] == '\n' || out[l - 1] == ' '))
				out[--l] = 0;
			snprintf(msg, msglen, "%s: %s", k->name, l ? out : "aborted the cycle");
		} else if (st == 3) {
			/* Silent: no message. */
		} else {
			if (st == 124)
				snprintf(why, sizeof(why), "did not finish within %u s",
					 c->timeout_s ? c->timeout_s : 30);
			else if (st < 0)
				snprintf(why, sizeof(why), "could not be run: %s", strerror(-st));
			else
				snprintf(why, sizeof(why), "failed (exit status %d)", st);
			snprintf(msg, msglen, "%s %s", k->path, why);
		}
		hib_hooks_post(h, c);
		return st == 2 || st == 3 ? -ECANCELED : -EIO;
	}
	return 0;
}

void hib_hooks_post(struct hib_hooks *h, const struct hib_hook_config *c)
{
	char out[4096];

	for (size_t i = h->n; i-- > 0;) {
		struct hib_hook *k = &h->v[i];
		int st;

		if (!k->pre_ok)
			continue;
		k->pre_ok = false;
		if (k->kind == HOOK_INLINE && !k->post_cmd)
			continue;
		st = run_one(k, c, false, out, sizeof(out));
		log_output(c, k, out);
		/* Too late to stop anything: say it and go on with the others. */
		if (st != 0 && c->log) {
			char why[64];
			snprintf(why, sizeof(why), "post failed (exit status %d)", st);
			c->log(HIB_LOG_WARN, k->path, why, c->userdata);
		}
	}
}
