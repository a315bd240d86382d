/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The effective configuration: defaults, then /etc/hibernate.conf, then the
 * kernel command line (resume=, resume_offset=: the tool applies them), then
 * command-line options. Every key remembers where its value came from, for
 * `hibernate status`.
 */
#ifndef HIB_CONFIG_H
#define HIB_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hibernate.h"
#include "frontend/hooks.h"

enum hib_config_source {
	HIB_SRC_DEFAULT = 0,
	HIB_SRC_FILE,
	HIB_SRC_CMDLINE,
	HIB_SRC_OPTION,
};

#define HIB_CONFIG_MAX_KEYS 48
#define HIB_CONFIG_MAX_INLINE 32

struct hib_config {
	char *device;
	uint64_t offset;
	bool offset_set;
	int loglevel;           /* -1: not set */
	bool cancel;            /* cancel = no (--no-cancel): no key cancels */
	unsigned cancel_keys;   /* cancel-keys: HIB_CANCEL_* (frontend/cancelkeys.h) */
	bool encrypt;           /* encrypt the image (passphrase, or key-file if set) */
	char *key_file;         /* key file for encryption and resume */
	int require_encryption; /* 1 yes, 0 no, -1 not set: on when encryption is configured */
	bool tpm;               /* encrypt = tpm: the key sealed to the TPM (with encrypt) */
	uint32_t tpm_pcrs;      /* tpm-pcrs: bit n = PCR n; 0 = auto */
	bool tpm_pin;           /* tpm-pin: a PIN too */
	bool tpm_fallback;      /* tpm-fallback = passphrase */
	struct hib_options opts;
	bool restore_working_set; /* bring the working set back after resume (default yes) */
	unsigned restore_limit;   /* seconds the restore may take at most */

	/* Hooks. */
	bool hooks_systemd;    /* also run systemd-sleep hooks */
	bool hooks_pmutils;    /* also run pm-utils hooks */
	bool force;            /* a failing hook does not abort */
	unsigned hook_timeout; /* seconds per hook */
	/* Settings of the shipped hooks, handed to every hook as HIBERNATE_<KEY>=value;
	 * indexed like the key table (NULL for other keys): see hib_config_hook_env. */
	char *hook_env[HIB_CONFIG_MAX_KEYS + 1];
	struct hib_inline_hook inl[HIB_CONFIG_MAX_INLINE];
	size_t n_inline;

	enum hib_config_source source[HIB_CONFIG_MAX_KEYS];
};

void hib_config_init(struct hib_config *c);
void hib_config_free(struct hib_config *c);
/* One key, from a command-line option. On error writes a message to @err:
 * -ENOKEY unknown key, -EINVAL bad value, -ERANGE a number outside its range
 * (the message says the range). */
int hib_config_set(struct hib_config *c, const char *key, const char *value, char *err,
		   size_t errlen);
int hib_config_set_from(struct hib_config *c, const char *key, const char *value,
			enum hib_config_source src, char *err, size_t errlen);
/* A whole file; on error *ret_line is the offending line. -ENOENT when absent.
 * No trust check: for what root obeys, hib_config_load_trusted. */
int hib_config_load(struct hib_config *c, const char *path, unsigned *ret_line, char *err,
		    size_t errlen);
/* The same from @fd, read from where it is (a dup of it: @fd stays the caller's). */
int hib_config_load_fd(struct hib_config *c, int fd, unsigned *ret_line, char *err, size_t errlen);
/*
 * The file root obeys (OnSuspend lines run as root): opened with
 * hib_open_trusted (every directory from / root's alone, no symlink, a
 * regular file root's alone) and read from that very descriptor, so the file
 * checked is the file read. Absent: -ENOENT, the message in @err naming
 * @path; whether that is fine is the caller's to say (the default path: no
 * file, defaults; a path given with --config: an error). Refused: -EPERM,
 * -ELOOP, -EINVAL with the reason and the fix in @err, *ret_line untouched;
 * a bad line as hib_config_load.
 */
int hib_config_load_trusted(struct hib_config *c, const char *path, unsigned *ret_line, char *err,
			    size_t errlen);

/* The kind of key this configuration seals images with, whether or not
 * encrypt is on: the key file when key-file is set, else a passphrase with
 * encrypt = yes; HIB_REQUIRE_NOTHING when neither is set. */
enum hib_require hib_config_sealing(const struct hib_config *c);
/* The images resume accepts (hib_options.require_encryption): with
 * require-encryption on (yes, or not set and hib_config_sealing is not
 * NOTHING), hib_config_sealing's kind, a passphrase when nothing is
 * configured; with it off, any. */
enum hib_require hib_config_require(const struct hib_config *c);

/* The file's keys, in the order `hibernate status` shows them: the @i-th (from 0), NULL
 * past the last. *@ret_hook_env (may be NULL) gets the environment variable a shipped
 * hook's setting is handed to the hooks in, NULL for the other keys. */
const char *hib_config_key(size_t i, const char **ret_hook_env);

/* The effective value of @key, as the program uses it and as the file would set it:
 * unquoted, "" for an unset key (device, offset, key-file). -ENOKEY for a key the
 * file cannot have, -E2BIG when the value does not fit in @len (nothing cut is
 * ever returned as a value). */
int hib_config_get(const struct hib_config *c, const char *key, char *buf, size_t len);

/* Every key with its effective value (as `hibernate status` shows it: an unset key
 * says what happens then) and where it came from. */
typedef void (*hib_config_dump_fn)(const char *key, const char *value, enum hib_config_source src,
				   void *userdata);
void hib_config_dump(const struct hib_config *c, hib_config_dump_fn fn, void *userdata);
const char *hib_config_source_name(enum hib_config_source s);
/* The shipped hooks' settings as a NULL-terminated KEY=value array for the hooks'
 * environment (@max entries at most, the NULL included). Returns the count. */
size_t hib_config_hook_env(const struct hib_config *c, char **out, size_t max);

#endif
