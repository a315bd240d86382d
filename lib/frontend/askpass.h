/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where a passphrase is asked: the terminal on standard input, the bytes a
 * script pipes in, or systemd's password agents (systemd-ask-password, which
 * reaches Plymouth's splash, the console agent and wall) when there is no
 * terminal — a systemd unit, dracut's systemd initrd (StandardInput=null).
 */
#ifndef HIB_ASKPASS_H
#define HIB_ASKPASS_H

#include <stdbool.h>
#include <stddef.h>

#include "hibernate.h"

enum hib_askpass_via {
	HIB_ASKPASS_TTY,      /* the terminal on stdin, echo off */
	HIB_ASKPASS_STDIN,    /* a pipe or file on stdin: one line, as given */
	HIB_ASKPASS_AGENT,    /* systemd-ask-password */
	HIB_ASKPASS_PLYMOUTH, /* the splash's own question (plymouth ask-for-password):
			       * a splash and no systemd to run the agents (initramfs-tools) */
	HIB_ASKPASS_NONE,     /* nowhere to ask */
};

/* What the choice depends on; hib_askpass_probe fills it from this process. */
struct hib_askpass_env {
	bool stdin_tty;  /* isatty(0) */
	bool stdin_data; /* stdin a pipe, socket or regular file: a script answers */
	bool plymouth;   /* a splash owns the screen (/run/plymouth/pid) */
	bool systemd;    /* systemd is the init (/run/systemd/system, also in its initrd) */
	/* systemd-ask-password's path, at a fixed place (never looked up in the
	 * caller's $PATH); "" when there is none */
	char agent[256];
};

/* This process's situation; the agent the first executable of
 * /usr/bin/systemd-ask-password, /bin/systemd-ask-password. */
void hib_askpass_probe(struct hib_askpass_env *ret);

/* The same, the agent the first executable one of @agents (NULL-terminated). */
void hib_askpass_probe_at(struct hib_askpass_env *ret, const char *const *agents);

/*
 * The agents when a splash owns the screen (typing on the console under it
 * reaches nobody) and when there is no terminal nor data on stdin; otherwise
 * stdin. The agents only where systemd runs them; under a splash without
 * them, the splash's own question (PLYMOUTH); NONE when they are wanted but
 * absent. Pure.
 */
enum hib_askpass_via hib_askpass_choose(const struct hib_askpass_env *env);

/*
 * Ask through the agents: @agent (systemd-ask-password) with @prompt, the id
 * "hibernate:@id" and @timeout_s (0: none), its answer read straight into @buf
 * (locked memory is the caller's) without the newline. *@ret_len on success.
 * -ECANCELED when no answer came (the agent exited non-zero: cancelled, timed
 * out, or no agent is running), -ENODATA for an empty answer, -E2BIG when it does not
 * fit @size, else -errno; @err says which and names @agent. The agent runs
 * through hib_spawn_run (util/spawn.h): by its path, with the default
 * environment only (none of the caller's variables), stdin /dev/null, no
 * descriptor of ours but the pipe and stderr, killed if it outlives
 * @timeout_s by a few seconds.
 */
/*
 * A question's answer as a child left it in @buf (hib_spawn_run's raw
 * capture, @size bytes): without its newline, *@ret_len bytes; -E2BIG when
 * it did not fit (never cut to a different passphrase), -ENODATA when
 * empty; @who names the asker in @err. Shared by the agents and the splash.
 */
struct hib_spawn_result;
int hib_askpass_answer(const char *who, const struct hib_spawn_result *res, char *buf, size_t size,
		       size_t *ret_len, struct hib_error *err);

int hib_askpass_agent(const char *agent, const char *id, const char *prompt, unsigned timeout_s,
		      char *buf, size_t size, size_t *ret_len, struct hib_error *err);

#endif
