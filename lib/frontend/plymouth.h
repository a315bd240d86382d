/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Plymouth's splash as our screen (plymouth.c): where plymouthd runs — the
 * initramfs of a desktop booted with `splash`, Debian's plymouth hook or
 * dracut's plymouth module — the resume step shows its progress and its
 * messages in the splash and asks its passphrase there, through the
 * `plymouth` client at a fixed path, so that nothing is typed into a console
 * no one can see and no text is drawn over the splash.
 */
#ifndef HIB_PLYMOUTH_H
#define HIB_PLYMOUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "hibernate.h"

struct hib_plymouth {
	/* The client's path, "" when there is none or no plymouthd answers it. */
	char client[128];
	int last_pct; /* the last progress shown; -1 none */
	int pid;      /* plymouthd's, from its pid file; 0 unknown */
};

/*
 * The first executable of @clients (NULL-terminated; NULL: /usr/bin/plymouth,
 * /bin/plymouth) whose `--ping` says plymouthd runs. Nothing when there is no
 * /run/plymouth/pid under @run_dir ("" or NULL: /run), so a boot without a
 * splash never starts a client. true when the splash is there.
 */
bool hib_plymouth_probe_at(struct hib_plymouth *p, const char *run_dir, const char *const *clients);
bool hib_plymouth_probe(struct hib_plymouth *p);
static inline bool hib_plymouth_active(const struct hib_plymouth *p)
{
	return p && p->client[0];
}

/* One message line in the splash (`display-message`); a later one replaces it. */
int hib_plymouth_message(const struct hib_plymouth *p, const char *text, struct hib_error *err);

/*
 * The load's progress in the splash, at most every @step percent (and 100):
 * the theme's progress bar (`system-update --progress`, which themes without
 * one ignore) and the message line "@what NN%". 1 when shown, 0 when it was
 * too soon after the last, <0 on an error.
 */
int hib_plymouth_progress(struct hib_plymouth *p, const char *what, int pct, int step,
			  struct hib_error *err);

/*
 * Let the splash go (`quit --retain-splash`: its last picture stays on the
 * screen) and give the console back, before processes are frozen for a
 * restore: the kernel then moves the console to its own VT, which a frozen
 * plymouthd holding it would never release: so this returns once plymouthd
 * is gone (or a zombie). One that has not gone 5 s after its answer (or its
 * silence: 10 s) is killed, -ETIMEDOUT. The splash is no longer active after
 * this.
 */
int hib_plymouth_quit(struct hib_plymouth *p, struct hib_error *err);

/*
 * Ask @prompt in the splash (`ask-for-password`), the answer read straight
 * into @buf (the caller's locked memory) without the newline: as
 * hib_askpass_agent answers (-ECANCELED: no answer; -ENODATA empty; -E2BIG).
 */
int hib_plymouth_ask(const struct hib_plymouth *p, const char *prompt, char *buf, size_t size,
		     size_t *ret_len, struct hib_error *err);

#endif
