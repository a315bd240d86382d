// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Every secret a run handles: the image's passphrase (asked twice where a
 * typo would go unnoticed), the key file, the TPM's PIN and fallback, and on
 * resume what the library asks for. All of it lives in locked memory owned by
 * one struct secrets, which secrets_free wipes: a caller holds it with
 * _cleanup_(secrets_free), so no exit path can leave a secret behind, and the
 * hib_options that point into it are the caller's local copy, which dies
 * with it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "frontend/tpmenroll.h"
#include "pipeline/tpm.h"
#include "util/locked.h"
#include "tool.h"

/* How long hibernating waits for the agents' answer: a lid closed on a
 * question must not keep the machine awake. A resume waits for the user. */
#define HIBERNATE_ASK_TIMEOUT_S 90

struct secret_buf {
	char data[4096];
	size_t len;
};

/* A buffer for a secret, taken before a byte of it is read: locked memory
 * (never written to swap, which is where the image goes), left out of core
 * dumps, fenced by guard pages; freeing wipes it. Not sodium_malloc(): its
 * sodium_init() waits for the kernel's random pool, which at boot can hold
 * the passphrase prompt back for seconds, and reading a secret needs no
 * random numbers. */
static struct secret_buf *secret_buf_new(const struct control *ctl)
{
	struct secret_buf *b = hib_locked_alloc(sizeof(*b));

	if (!b)
		say(ctl, "no locked memory for the passphrase: %s (see ulimit -l)",
		    strerror(errno));
	return b;
}

static void secret_buf_free(struct secret_buf **b)
{
	hib_locked_free(*b, sizeof(**b));
	*b = NULL;
}

void secrets_init(struct secrets *s, struct control *ctl)
{
	*s = (struct secrets){ .ctl = ctl };
}

void secrets_forget_image(struct secrets *s)
{
	secret_buf_free(&s->image);
	secret_buf_free(&s->pin_buf);
	hib_key_file_free(&s->image_key);
	explicit_bzero(&s->sec, sizeof(s->sec));
	explicit_bzero(&s->pin, sizeof(s->pin));
	explicit_bzero(&s->fallback, sizeof(s->fallback));
}

void secrets_free(struct secrets *s)
{
	secrets_forget_image(s);
	secret_buf_free(&s->resume);
	hib_key_file_free(&s->resume_key);
}

/* The key file, checked and read whole into locked memory (lib/frontend/keyfile.c). */
static int read_key_file(const struct control *ctl, const char *path, struct hib_key_file *k)
{
	struct hib_error err;
	int r;

	hib_key_file_free(k);
	r = hib_key_file_read(path, k, &err);
	if (r < 0)
		say(ctl, "%s", err.msg);
	return r;
}

/* Where passphrases are asked (lib/frontend/askpass.h), decided once a run. */
static enum hib_askpass_via ask_via(struct secrets *s)
{
	if (!s->probed) {
		hib_askpass_probe(&s->askpass);
		s->probed = true;
		/* A splash whose client does not answer asks nothing: the
		 * choice as if there were none. */
		if (hib_askpass_choose(&s->askpass) == HIB_ASKPASS_PLYMOUTH &&
		    !hib_plymouth_active(&s->ctl->out.splash) &&
		    !hib_plymouth_probe(&s->ctl->out.splash))
			s->askpass.plymouth = false;
	}
	return hib_askpass_choose(&s->askpass);
}

/* Asked where a typo would go unnoticed: confirm it. */
static bool ask_interactive(struct secrets *s)
{
	enum hib_askpass_via via = ask_via(s);

	return via == HIB_ASKPASS_TTY || via == HIB_ASKPASS_AGENT || via == HIB_ASKPASS_PLYMOUTH;
}

/* @prompt without its trailing blank, for the agents (they lay out their own)
 * and for messages. */
static const char *prompt_text(const char *prompt, char *buf, size_t size)
{
	size_t len = strlen(prompt);

	while (len && prompt[len - 1] == ' ')
		len--;
	snprintf(buf, size, "%.*s", (int)len, prompt);
	return buf;
}

/* systemd-ask-password's answer, within @timeout_s (0: no limit). */
static int read_passphrase_agent(struct secrets *s, const char *prompt, unsigned timeout_s,
				 struct secret_buf *b)
{
	struct hib_error err;
	char msg[256];
	int r;

	r = hib_askpass_agent(s->askpass.agent, "image", prompt_text(prompt, msg, sizeof(msg)),
			      timeout_s, b->data, sizeof(b->data), &b->len, &err);
	if (r < 0 && r != -ENODATA)
		say(s->ctl, "%s", err.msg);
	return r;
}

/* The splash's own question (initramfs-tools under Plymouth). */
static int read_passphrase_splash(struct secrets *s, const char *prompt, struct secret_buf *b)
{
	struct hib_error err;
	char msg[256];
	int r;

	/* In the kernel log too: the splash takes the console's output. */
	tlog(s->ctl, HIB_LOG_PROGRESS, "asking for the passphrase in the splash");
	output_kmsg(s->ctl, HIB_LOG_INFO, "asking for the passphrase in the splash");
	r = hib_plymouth_ask(&s->ctl->out.splash, prompt_text(prompt, msg, sizeof(msg)), b->data,
			     sizeof(b->data), &b->len, &err);
	if (r < 0 && r != -ENODATA)
		say(s->ctl, "%s", err.msg);
	return r;
}

/* A line from stdin, echo off on a terminal. */
static int read_passphrase_stdin(const char *prompt, bool tty, struct secret_buf *b)
{
	struct termios tio, old;
	size_t n = 0;
	char c;

	tty = tty && tcgetattr(STDIN_FILENO, &old) == 0;
	fprintf(stderr, "%s", prompt);
	fflush(stderr);
	if (tty) {
		tio = old;
		tio.c_lflag &= ~(tcflag_t)ECHO;
		tio.c_lflag |= ICANON;
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &tio);
	}
	while (read(STDIN_FILENO, &c, 1) == 1 && c != '\n' && c != '\r')
		if (n < sizeof(b->data) - 1)
			b->data[n++] = c;
	if (tty) {
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
		fputc('\n', stderr);
	}
	b->len = n;
	return n ? 0 : -ENODATA;
}

/* From stdin, or the agents' answer within @agent_timeout_s (0: no limit). */
static int read_passphrase(struct secrets *s, const char *prompt, unsigned agent_timeout_s,
			   struct secret_buf *b)
{
	enum hib_askpass_via via = ask_via(s);
	char msg[256];

	if (via == HIB_ASKPASS_NONE) {
		say(s->ctl,
		    "nowhere to ask \"%s\": standard input is not a terminal and no systemd "
		    "password agent runs (systemd-ask-password); run hibernate from a terminal, "
		    "or give a key file (key-file = in /etc/hibernate.conf)",
		    prompt_text(prompt, msg, sizeof(msg)));
		return -ENOTTY;
	}
	if (via == HIB_ASKPASS_AGENT)
		return read_passphrase_agent(s, prompt, agent_timeout_s, b);
	if (via == HIB_ASKPASS_PLYMOUTH)
		return read_passphrase_splash(s, prompt, b);
	return read_passphrase_stdin(prompt, via == HIB_ASKPASS_TTY, b);
}

/* hib_options.ask_secret: @ud is the struct secrets. */
static int ask_secret(int attempt, const char *what, struct hib_secret *ret, void *ud)
{
	struct secrets *s = ud;
	const char *key_file = s->ctl->cfg.key_file;
	bool pin = strcmp(what, "TPM PIN") == 0;
	char prompt[256];
	int r;

	/* A TPM-sealed image asks for its PIN or its fallback passphrase, never a key file. */
	if (key_file && strncmp(what, "TPM ", 4) != 0) {
		/* A key file does not get better by asking again. */
		if (attempt > 1)
			return -EACCES;
		r = read_key_file(s->ctl, key_file, &s->resume_key);
		if (r < 0)
			return r;
		*ret = (struct hib_secret){ HIB_SECRET_KEYFILE, s->resume_key.data,
					    s->resume_key.len };
		return 0;
	}
	if (!s->resume && !(s->resume = secret_buf_new(s->ctl)))
		return -ENOMEM;
	snprintf(prompt, sizeof(prompt),
		 "%s for the hibernation image%s: ", pin ? "TPM PIN" : "Passphrase",
		 attempt > 1 ? " (again)" : "");
	r = read_passphrase(s, prompt, 0, s->resume);
	if (r < 0)
		return r;
	*ret = (struct hib_secret){ HIB_SECRET_PASSPHRASE, s->resume->data, s->resume->len };
	return 0;
}

/* hib_options.forget_secret: the library has tried it; a restore does not return here. */
static void forget_secret(void *ud)
{
	struct secrets *s = ud;

	if (s->resume)
		explicit_bzero(s->resume, sizeof(*s->resume));
	hib_key_file_free(&s->resume_key);
}

void secrets_attach_resume(struct secrets *s, struct hib_options *opts)
{
	struct hib_error err;
	int r;

	opts->ask_secret = ask_secret;
	opts->ask_secret_userdata = s;
	opts->forget_secret = forget_secret;
	/* Without it every TPM-sealed image is refused, and the library says so. */
	r = hib_tpm_machine_read(HIB_TPM_MACHINE_PATH, &s->machine, &err);
	if (r == 0)
		opts->tpm_machine = &s->machine;
	else if (r != -ENOENT)
		say(s->ctl, "%s", err.msg);
}

/* A second reading of @first's @what, where a typo would go unnoticed. */
static int confirm_passphrase(struct secrets *s, const char *what, const struct secret_buf *first)
{
	struct secret_buf *again = secret_buf_new(s->ctl);
	char prompt[128];
	int r;

	snprintf(prompt, sizeof(prompt), "%s again: ", what);
	r = again ? read_passphrase(s, prompt, HIBERNATE_ASK_TIMEOUT_S, again) : -ENOMEM;
	if (r == 0 && (first->len != again->len || memcmp(first->data, again->data, first->len))) {
		say(s->ctl, "the %ss differ; nothing was done", what);
		r = -EINVAL;
	}
	secret_buf_free(&again);
	return r;
}

/* A passphrase or PIN (@what) into locked memory (*@ret_buf, s owns it) and @sec. */
static int ask_new_passphrase(struct secrets *s, const char *what, struct secret_buf **ret_buf,
			      struct hib_secret *sec)
{
	struct secret_buf *b;
	char prompt[128];
	int r;

	b = *ret_buf = secret_buf_new(s->ctl);
	if (!b)
		return -ENOMEM;
	snprintf(prompt, sizeof(prompt), "%s for the hibernation image: ", what);
	r = read_passphrase(s, prompt, HIBERNATE_ASK_TIMEOUT_S, b);
	if (r == 0 && ask_interactive(s))
		r = confirm_passphrase(s, what, b);
	if (r == -ENODATA)
		say(s->ctl, "an empty %s would not protect anything; nothing was done", what);
	if (r < 0) {
		secret_buf_free(ret_buf); /* wipes what was typed */
		return r;
	}
	*sec = (struct hib_secret){ HIB_SECRET_PASSPHRASE, b->data, b->len };
	return 0;
}

/* encrypt = tpm: the PIN and the fallback passphrase when configured. */
static int ask_tpm_secrets(struct secrets *s, struct hib_options *opts)
{
	const struct hib_config *cfg = &s->ctl->cfg;
	struct hib_error err;
	int r = 0;

	if (!tpm_supported()) {
		say(s->ctl,
		    "encrypt = tpm: this hibernate was built without TPM support (the static "
		    "build); use the package's dynamically linked binary, or encrypt = yes");
		return -EOPNOTSUPP;
	}
	/* First the enrollment: a new one must reach the initramfs before an
	 * image bound to it is worth writing. */
	r = hib_tpm_machine_prepare(HIB_TPM_MACHINE_PATH, cfg->tpm_pcrs, &s->machine, &err);
	if (r != 0) {
		say(s->ctl, "%s", err.msg);
		return r > 0 ? -EAGAIN : r;
	}
	s->tpm = (struct hib_tpm_options){ .pcrs = cfg->tpm_pcrs, .machine = &s->machine };
	if (cfg->tpm_pin) {
		r = ask_new_passphrase(s, "TPM PIN", &s->pin_buf, &s->pin);
		s->tpm.pin = &s->pin;
	}
	if (r == 0 && cfg->tpm_fallback) {
		r = ask_new_passphrase(s, "Passphrase", &s->image, &s->fallback);
		s->tpm.fallback = &s->fallback;
	}
	opts->tpm = &s->tpm;
	return r;
}

int secrets_ask_image(struct secrets *s, struct hib_options *opts)
{
	const struct hib_config *cfg = &s->ctl->cfg;
	int r;

	if (cfg->tpm)
		return ask_tpm_secrets(s, opts);
	if (cfg->key_file) {
		r = read_key_file(s->ctl, cfg->key_file, &s->image_key);
		if (r < 0)
			return r;
		s->sec = (struct hib_secret){ HIB_SECRET_KEYFILE, s->image_key.data,
					      s->image_key.len };
	} else {
		r = ask_new_passphrase(s, "Passphrase", &s->image, &s->sec);
		if (r < 0)
			return r;
	}
	opts->secret = &s->sec;
	return 0;
}

int check_sealing_required(const struct control *ctl)
{
	enum hib_require want = ctl->cfg.opts.require_encryption;

	if (want == HIB_REQUIRE_NOTHING || ctl->cfg.encrypt)
		return 0;
	say(ctl,
	    "require-encryption is on (%s), so resume would refuse an image that is not "
	    "encrypted; nothing was done. Set encrypt = yes in %s (or --encrypt), or "
	    "require-encryption = no",
	    ctl->cfg.require_encryption > 0 ? "require-encryption = yes" : "key-file is set",
	    ctl->config_path ? ctl->config_path : HIB_CONFIG_PATH);
	return -EPERM;
}
