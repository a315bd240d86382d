// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * /etc/hibernate.conf: "key = value" lines, '#' comments, and the hook lines
 * "OnSuspend NN command" / "OnResume NN command". Unknown keys and bad values
 * are errors that name the line: a typo must not silently hibernate to the
 * wrong place.
 */
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "format/format.h"
#include "frontend/cancelkeys.h"
#include "frontend/config.h"
#include "pipeline/tpm.h"
#include "util/error.h"
#include "util/util.h"

static char *strip(char *s)
{
	char *e;

	s = hib_strip(s);
	e = s + strlen(s);
	if (e - s >= 2 && ((s[0] == '"' && e[-1] == '"') || (s[0] == '\'' && e[-1] == '\''))) {
		e[-1] = 0;
		s++;
	}
	return s;
}

static int parse_uint(const char *v, uint64_t max, uint64_t *ret)
{
	char *end;
	unsigned long long x;

	if (!*v || *v == '-')
		return -EINVAL;
	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno || *end || x > max)
		return -EINVAL;
	*ret = x;
	return 0;
}

static int parse_bool(const char *v, bool *ret)
{
	if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "on"))
		*ret = true;
	else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "off"))
		*ret = false;
	else
		return -EINVAL;
	return 0;
}

static int set_string(char **field, const char *v)
{
	char *s = strdup(v);

	if (!s)
		return -ENOMEM;
	free(*field);
	*field = s;
	return 0;
}

/* ---- the keys ------------------------------------------------------------ */

typedef int (*setter_fn)(struct hib_config *c, const char *v);
/* The effective value as the file would set it, unquoted; "" for an unset key. Scripts
 * read this (hib_config_get): it must mean to them what it means to the program. */
typedef void (*getter_fn)(const struct hib_config *c, char *buf, size_t len);

struct key {
	const char *name;
	setter_fn set;
	getter_fn get;
	const char *hook_env; /* a shipped hook's setting: exported to hooks under this name */
};

#define BOOL_KEY(fname, field)                                                                     \
	static int set_##fname(struct hib_config *c, const char *v)                                \
	{                                                                                          \
		return parse_bool(v, &c->field);                                                   \
	}                                                                                          \
	static void get_##fname(const struct hib_config *c, char *b, size_t l)                     \
	{                                                                                          \
		snprintf(b, l, "%s", c->field ? "yes" : "no");                                     \
	}

BOOL_KEY(cancel, cancel)
BOOL_KEY(verify, opts.verify)
BOOL_KEY(auto_swapon, opts.auto_swapon)
BOOL_KEY(systemd_hooks, hooks_systemd)
BOOL_KEY(pmutils_hooks, hooks_pmutils)
BOOL_KEY(force, force)
BOOL_KEY(tpm_pin, tpm_pin)
BOOL_KEY(restore_working_set, restore_working_set)

/* esc power sleep, or none: which keys cancel while the image is written. */
static int set_cancel_keys(struct hib_config *c, const char *v)
{
	return hib_cancel_keys_parse(v, &c->cancel_keys);
}

static void get_cancel_keys(const struct hib_config *c, char *b, size_t l)
{
	hib_cancel_keys_format(c->cancel_keys, b, l);
}

/* yes, no, or tpm: the key sealed to the TPM instead of a passphrase or key file. */
static int set_encrypt(struct hib_config *c, const char *v)
{
	bool tpm = strcmp(v, "tpm") == 0;
	int r = tpm ? 0 : parse_bool(v, &c->encrypt);

	if (r == 0) {
		c->encrypt |= tpm;
		c->tpm = tpm;
	}
	return r;
}

static void get_encrypt(const struct hib_config *c, char *b, size_t l)
{
	snprintf(b, l, "%s", c->tpm ? "tpm" : c->encrypt ? "yes" : "no");
}

static int set_tpm_pcrs(struct hib_config *c, const char *v)
{
	return tpm_pcrs_parse(v, &c->tpm_pcrs);
}

static void get_tpm_pcrs(const struct hib_config *c, char *b, size_t l)
{
	tpm_pcrs_format(c->tpm_pcrs, b, l);
}

static int set_tpm_fallback(struct hib_config *c, const char *v)
{
	if (strcmp(v, "none") != 0 && strcmp(v, "passphrase") != 0)
		return -EINVAL;
	c->tpm_fallback = strcmp(v, "passphrase") == 0;
	return 0;
}

static void get_tpm_fallback(const struct hib_config *c, char *b, size_t l)
{
	snprintf(b, l, "%s", c->tpm_fallback ? "passphrase" : "none");
}

static int set_adaptive(struct hib_config *c, const char *v)
{
	bool b;
	int r = parse_bool(v, &b);

	if (r == 0)
		c->opts.no_adaptive = !b;
	return r;
}

static void get_adaptive(const struct hib_config *c, char *b, size_t l)
{
	snprintf(b, l, "%s", c->opts.no_adaptive ? "no" : "yes");
}

static int set_io(struct hib_config *c, const char *v)
{
	if (strcmp(v, "auto") == 0)
		c->opts.io_mode = HIB_IO_AUTO;
	else if (strcmp(v, "sync") == 0)
		c->opts.io_mode = HIB_IO_SYNC;
	else
		return -EINVAL;
	return 0;
}

static void get_io(const struct hib_config *c, char *b, size_t l)
{
	snprintf(b, l, "%s", c->opts.io_mode == HIB_IO_SYNC ? "sync" : "auto");
}

static int set_kernel_mismatch(struct hib_config *c, const char *v)
{
	if (strcmp(v, "discard") == 0)
		c->opts.keep_on_kernel_mismatch = false;
	else if (strcmp(v, "keep") == 0)
		c->opts.keep_on_kernel_mismatch = true;
	else
		return -EINVAL;
	return 0;
}

static void get_kernel_mismatch(const struct hib_config *c, char *b, size_t l)
{
	snprintf(b, l, "%s", c->opts.keep_on_kernel_mismatch ? "keep" : "discard");
}

static int set_resume_preload(struct hib_config *c, const char *v)
{
	bool b;
	int r = parse_bool(v, &b);

	if (r == 0)
		c->opts.no_preload = !b;
	return r;
}

static void get_resume_preload(const struct hib_config *c, char *b, size_t l)
{
	snprintf(b, l, "%s", c->opts.no_preload ? "no" : "yes");
}

static int set_unchecked_fs(struct hib_config *c, const char *v)
{
	if (strcmp(v, "refuse") == 0)
		c->opts.allow_unchecked_fs = false;
	else if (strcmp(v, "allow") == 0)
		c->opts.allow_unchecked_fs = true;
	else
		return -EINVAL;
	return 0;
}

static void get_unchecked_fs(const struct hib_config *c, char *b, size_t l)
{
	snprintf(b, l, "%s", c->opts.allow_unchecked_fs ? "allow" : "refuse");
}

static int set_zram(struct hib_config *c, const char *v)
{
	if (strcmp(v, "swapoff") == 0)
		c->opts.zram = HIB_ZRAM_SWAPOFF;
	else if (strcmp(v, "keep") == 0)
		c->opts.zram = HIB_ZRAM_KEEP;
	else
		return -EINVAL;
	return 0;
}

static void get_zram(const struct hib_config *c, char *b, size_t l)
{
	snprintf(b, l, "%s", c->opts.zram == HIB_ZRAM_KEEP ? "keep" : "swapoff");
}

static int set_device(struct hib_config *c, const char *v)
{
	return *v ? set_string(&c->device, v) : -EINVAL;
}

static void get_device(const struct hib_config *c, char *b, size_t l)
{
	snprintf(b, l, "%s", c->device ? c->device : "");
}

static int set_offset(struct hib_config *c, const char *v)
{
	uint64_t u;

	if (parse_uint(v, UINT64_MAX / 4096, &u) < 0)
		return -EINVAL;
	c->offset = u;
	c->offset_set = true;
	return 0;
}

static void get_offset(const struct hib_config *c, char *b, size_t l)
{
	if (c->offset_set)
		snprintf(b, l, "%" PRIu64, c->offset);
	else
		snprintf(b, l, "%s", "");
}

static int set_compress(struct hib_config *c, const char *v)
{
	return hib_codec_parse(v, &c->opts.codec, &c->opts.codec_level);
}

static void get_compress(const struct hib_config *c, char *b, size_t l)
{
	if (c->opts.codec_level)
		snprintf(b, l, "%s:%d", hib_codec_name(c->opts.codec), c->opts.codec_level);
	else
		snprintf(b, l, "%s", hib_codec_name(c->opts.codec));
}

static int set_threads(struct hib_config *c, const char *v)
{
	uint64_t u;

	if (parse_uint(v, 64, &u) < 0)
		return -EINVAL;
	c->opts.threads = (unsigned)u;
	return 0;
}

static void get_threads(const struct hib_config *c, char *b, size_t l)
{
	snprintf(b, l, "%u", c->opts.threads);
}

static int set_image_size(struct hib_config *c, const char *v)
{
	uint64_t u;

	if (strcmp(v, "min") == 0)
		c->opts.image_size = 0;
	else if (strcmp(v, "default") == 0)
		c->opts.image_size = HIB_IMAGE_SIZE_DEFAULT;
	else if (strcmp(v, "kernel") == 0)
		c->opts.image_size = HIB_IMAGE_SIZE_KERNEL;
	else if (parse_uint(v, UINT64_MAX >> 21, &u) == 0 && u > 0)
		c->opts.image_size = (int64_t)(u << 20);
	else
		return -EINVAL;
	return 0;
}

static void get_image_size(const struct hib_config *c, char *b, size_t l)
{
	if (c->opts.image_size == HIB_IMAGE_SIZE_KERNEL)
		snprintf(b, l, "kernel");
	else if (c->opts.image_size < 0)
		snprintf(b, l, "default");
	else if (c->opts.image_size == 0)
		snprintf(b, l, "min");
	else
		snprintf(b, l, "%" PRId64, c->opts.image_size >> 20);
}

static int set_loglevel(struct hib_config *c, const char *v)
{
	uint64_t u;

	if (parse_uint(v, 5, &u) < 0)
		return -EINVAL;
	c->loglevel = (int)u;
	return 0;
}

static void get_loglevel(const struct hib_config *c, char *b, size_t l)
{
	snprintf(b, l, "%d", c->loglevel < 0 ? 3 : c->loglevel);
}

static int set_key_file(struct hib_config *c, const char *v)
{
	return *v ? set_string(&c->key_file, v) : -EINVAL;
}

static void get_key_file(const struct hib_config *c, char *b, size_t l)
{
	snprintf(b, l, "%s", c->key_file ? c->key_file : "");
}

static int set_require_encryption(struct hib_config *c, const char *v)
{
	bool b;
	int r = parse_bool(v, &b);

	if (r == 0)
		c->require_encryption = b;
	return r;
}

static void get_require_encryption(const struct hib_config *c, char *b, size_t l)
{
	snprintf(b, l, "%s", hib_config_require(c) == HIB_REQUIRE_NOTHING ? "no" : "yes");
}

enum hib_require hib_config_sealing(const struct hib_config *c)
{
	/* The order hibernate picks the key in (ask_image_secret). */
	if (c->encrypt && c->tpm)
		return HIB_REQUIRE_TPM;
	if (c->key_file)
		return HIB_REQUIRE_KEY_FILE;
	return c->encrypt ? HIB_REQUIRE_PASSPHRASE : HIB_REQUIRE_NOTHING;
}

enum hib_require hib_config_require(const struct hib_config *c)
{
	enum hib_require kind = hib_config_sealing(c);

	if (c->require_encryption == 0 || (c->require_encryption < 0 && !kind))
		return HIB_REQUIRE_NOTHING;
	return kind ? kind : HIB_REQUIRE_PASSPHRASE;
}

static int set_powerdown(struct hib_config *c, const char *v)
{
	static const char *const names[] = {
		[HIB_POWERDOWN_SHUTDOWN] = "shutdown",
		[HIB_POWERDOWN_PLATFORM] = "platform",
		[HIB_POWERDOWN_REBOOT] = "reboot",
		[HIB_POWERDOWN_SUSPEND] = "suspend",
	};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i] && strcmp(v, names[i]) == 0) {
			c->opts.powerdown = (enum hib_powerdown)i;
			return 0;
		}
	return -EINVAL;
}

static void get_powerdown(const struct hib_config *c, char *b, size_t l)
{
	static const char *const names[] = { "shutdown", "platform", "reboot",
					     "none",     "suspend",  "test" };
	snprintf(b, l, "%s",
		 (size_t)c->opts.powerdown < ARRAY_SIZE(names) ? names[c->opts.powerdown] : "?");
}

/* A number of seconds from 1 to an hour. */
static int parse_seconds(const char *v, unsigned *ret)
{
	uint64_t u;

	if (parse_uint(v, 3600, &u) < 0 || u == 0)
		return -EINVAL;
	*ret = (unsigned)u;
	return 0;
}

static int set_hook_timeout(struct hib_config *c, const char *v)
{
	return parse_seconds(v, &c->hook_timeout);
}

static void get_hook_timeout(const struct hib_config *c, char *b, size_t l)
{
	snprintf(b, l, "%u", c->hook_timeout);
}

static int set_restore_limit(struct hib_config *c, const char *v)
{
	return parse_seconds(v, &c->restore_limit);
}

static void get_restore_limit(const struct hib_config *c, char *b, size_t l)
{
	snprintf(b, l, "%u", c->restore_limit);
}

/* Argon2id's cost (hib_options): only what every reader takes (format.h). */
static int set_kdf_passes(struct hib_config *c, const char *v)
{
	uint64_t u;

	if (parse_uint(v, UINT32_MAX, &u) < 0)
		return -EINVAL;
	if (u < HIB_ARGON_OPS_MIN || u > HIB_ARGON_OPS_MAX)
		return -ERANGE;
	c->opts.kdf_passes = (uint32_t)u;
	return 0;
}

static void get_kdf_passes(const struct hib_config *c, char *b, size_t l)
{
	snprintf(b, l, "%llu",
		 c->opts.kdf_passes ? (unsigned long long)c->opts.kdf_passes
				    : HIB_ARGON_OPS_DEFAULT);
}

static int set_kdf_memory(struct hib_config *c, const char *v)
{
	uint64_t u;

	if (parse_uint(v, UINT64_MAX >> 20, &u) < 0)
		return -EINVAL;
	if (u < (HIB_ARGON_MEM_MIN >> 20) || u > (HIB_ARGON_MEM_MAX >> 20))
		return -ERANGE;
	c->opts.kdf_memory = u << 20;
	return 0;
}

static void get_kdf_memory(const struct hib_config *c, char *b, size_t l)
{
	snprintf(b, l, "%llu",
		 (unsigned long long)((c->opts.kdf_memory ? c->opts.kdf_memory
							  : HIB_ARGON_MEM_DEFAULT) >>
				      20));
}

/* The keys whose setters say -ERANGE, and the range for the message. */
static const struct {
	const char *key;
	uint64_t min, max;
	const char *unit;
} ranges[] = {
	{ "kdf-passes", HIB_ARGON_OPS_MIN, HIB_ARGON_OPS_MAX, "" },
	{ "kdf-memory", HIB_ARGON_MEM_MIN >> 20, HIB_ARGON_MEM_MAX >> 20, " MiB" },
};

static void range_message(const char *key, const char *value, char *err, size_t errlen)
{
	for (size_t i = 0; i < ARRAY_SIZE(ranges); i++)
		if (strcmp(key, ranges[i].key) == 0) {
			snprintf(err, errlen, "%s: %s is out of range (%llu to %llu%s)", key, value,
				 (unsigned long long)ranges[i].min,
				 (unsigned long long)ranges[i].max, ranges[i].unit);
			return;
		}
	snprintf(err, errlen, "%s: %s is out of range", key, value);
}

static const struct key keys[] = {
	{ "device", set_device, get_device, NULL },
	{ "offset", set_offset, get_offset, NULL },
	{ "compress", set_compress, get_compress, NULL },
	{ "threads", set_threads, get_threads, NULL },
	{ "adaptive", set_adaptive, get_adaptive, NULL },
	{ "io", set_io, get_io, NULL },
	{ "image-size", set_image_size, get_image_size, NULL },
	{ "powerdown", set_powerdown, get_powerdown, NULL },
	{ "loglevel", set_loglevel, get_loglevel, NULL },
	{ "cancel", set_cancel, get_cancel, NULL },
	{ "cancel-keys", set_cancel_keys, get_cancel_keys, NULL },
	{ "verify", set_verify, get_verify, NULL },
	{ "auto-swapon", set_auto_swapon, get_auto_swapon, NULL },
	{ "kernel-mismatch", set_kernel_mismatch, get_kernel_mismatch, NULL },
	{ "unchecked-filesystems", set_unchecked_fs, get_unchecked_fs, NULL },
	{ "resume-preload", set_resume_preload, get_resume_preload, NULL },
	{ "zram", set_zram, get_zram, NULL },
	{ "encrypt", set_encrypt, get_encrypt, NULL },
	{ "key-file", set_key_file, get_key_file, NULL },
	{ "require-encryption", set_require_encryption, get_require_encryption, NULL },
	{ "kdf-passes", set_kdf_passes, get_kdf_passes, NULL },
	{ "kdf-memory", set_kdf_memory, get_kdf_memory, NULL },
	{ "tpm-pcrs", set_tpm_pcrs, get_tpm_pcrs, NULL },
	{ "tpm-pin", set_tpm_pin, get_tpm_pin, NULL },
	{ "tpm-fallback", set_tpm_fallback, get_tpm_fallback, NULL },
	{ "restore-working-set", set_restore_working_set, get_restore_working_set, NULL },
	{ "restore-limit", set_restore_limit, get_restore_limit, NULL },
	{ "systemd-hooks", set_systemd_hooks, get_systemd_hooks, NULL },
	{ "pm-utils-hooks", set_pmutils_hooks, get_pmutils_hooks, NULL },
	{ "force", set_force, get_force, NULL },
	{ "hook-timeout", set_hook_timeout, get_hook_timeout, NULL },
	/* The shipped hooks' settings (hooks/): free-form values they interpret. */
	{ "clock", NULL, NULL, "HIBERNATE_CLOCK" },
	{ "network", NULL, NULL, "HIBERNATE_NETWORK" },
	{ "unload-modules", NULL, NULL, "HIBERNATE_UNLOAD_MODULES" },
	{ "services", NULL, NULL, "HIBERNATE_SERVICES" },
	{ "stop-programs", NULL, NULL, "HIBERNATE_STOP_PROGRAMS" },
	{ "switch-vt", NULL, NULL, "HIBERNATE_SWITCH_VT" },
	{ "lock-console", NULL, NULL, "HIBERNATE_LOCK_CONSOLE" },
};
_Static_assert(ARRAY_SIZE(keys) <= HIB_CONFIG_MAX_KEYS, "too many keys");

/* `hibernate status` says what a value means where the value alone does not. */
static const struct {
	const char *key, *value, *shown;
} meanings[] = {
	{ "device", "", "(auto: resume=, else the active swap)" },
	{ "offset", "", "(none)" },
	{ "threads", "0", "0 (one per CPU)" },
	{ "image-size", "default", "default (the kernel's, 2/5 of RAM, unless just under the memory in use)" },
	{ "image-size", "kernel", "kernel (the kernel's, untouched)" },
	{ "key-file", "", "(none)" },
};

/* @buf, @key's value, as `hibernate status` shows it. */
static void status_meaning(const struct hib_config *c, const char *key, char *buf, size_t len)
{
	enum hib_require r = hib_config_require(c);

	for (size_t m = 0; m < ARRAY_SIZE(meanings); m++)
		if (strcmp(meanings[m].key, key) == 0 && strcmp(meanings[m].value, buf) == 0)
			snprintf(buf, len, "%s", meanings[m].shown);
	if (strcmp(key, "require-encryption") != 0)
		return;
	if (r == HIB_REQUIRE_NOTHING)
		snprintf(buf, len, "no (resume takes plain images too)");
	else
		snprintf(buf, len, "yes (only images sealed with %s)", hib_require_name(r));
}

const char *hib_config_key(size_t i, const char **ret_hook_env)
{
	if (i >= ARRAY_SIZE(keys))
		return NULL;
	if (ret_hook_env)
		*ret_hook_env = keys[i].hook_env;
	return keys[i].name;
}

static const char *hook_default(const char *env)
{
	/* What the shipped hooks do when not told: nothing but the clock, and
	 * away from a display server's console (switch-vt = auto, which
	 * hibernate resolves to 12 or no before the hooks run). */
	if (strcmp(env, "HIBERNATE_SWITCH_VT") == 0)
		return "auto";
	return strcmp(env, "HIBERNATE_CLOCK") == 0 ? "yes" : "no";
}

#define ALNUM "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

/* Settings that are lists of names a shipped hook hands to a command run as
 * root (systemctl, /etc/init.d/NAME, rmmod, modprobe): each word of these
 * characters only, none starting with '.' or '-' (no path, no option). */
static const struct {
	const char *key, *chars, *rule;
} name_lists[] = {
	{ "services", ALNUM ":_.@-\\",
	  "service names of letters, digits and :_.@-\\, none starting with '.' or '-'" },
	{ "unload-modules", ALNUM "_-",
	  "module names of letters, digits, '_' and '-', none starting with '-'" },
};

static const char *name_rule(const char *key, const char **ret_chars)
{
	for (size_t i = 0; i < ARRAY_SIZE(name_lists); i++)
		if (strcmp(key, name_lists[i].key) == 0) {
			if (ret_chars)
				*ret_chars = name_lists[i].chars;
			return name_lists[i].rule;
		}
	return NULL;
}

/* Blank-separated words, each of @chars only and not starting with '.' or '-'. */
static bool names_ok(const char *v, const char *chars)
{
	while (*v) {
		size_t n = strspn(v, chars);

		if (v[0] == '.' || v[0] == '-' || (v[n] && !isblank((unsigned char)v[n])))
			return false;
		v += n;
		v += strspn(v, " \t");
	}
	return true;
}

static int set_hook_setting(struct hib_config *c, size_t k, const char *v)
{
	const char *chars;
	char *e;

	/* One line in the environment of every hook: no newlines in it. */
	if (strchr(v, '\n'))
		return -EINVAL;
	if (name_rule(keys[k].name, &chars) && !names_ok(v, chars))
		return -EINVAL;
	if (asprintf(&e, "%s=%s", keys[k].hook_env, v) < 0)
		return -ENOMEM;
	free(c->hook_env[k]);
	c->hook_env[k] = e;
	return 0;
}

int hib_config_set_from(struct hib_config *c, const char *key, const char *value,
			enum hib_config_source src, char *err, size_t errlen)
{
	for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
		int r;

		if (strcmp(key, keys[k].name) != 0)
			continue;
		r = keys[k].set ? keys[k].set(c, value) : set_hook_setting(c, k, value);
		if (r == -EINVAL && strcmp(key, "compress") == 0)
			snprintf(err, errlen, "compress: '%s' is not none, lz4 or zstd[:1-19]",
				 value);
		else if (r == -EINVAL && strcmp(key, "cancel-keys") == 0)
			snprintf(err, errlen,
				 "cancel-keys: '%s' is not a list of esc, power and sleep, or none",
				 value);
		else if (r == -EINVAL && name_rule(key, NULL))
			snprintf(err, errlen, "%s: invalid value '%s': expected %s", key, value,
				 name_rule(key, NULL));
		else if (r == -EINVAL)
			snprintf(err, errlen, "%s: invalid value '%s'", key, value);
		else if (r == -ERANGE)
			range_message(key, value, err, errlen);
		else if (r < 0)
			snprintf(err, errlen, "%s: %s", key, strerror(-r));
		else
			c->source[k] = src;
		return r;
	}
	snprintf(err, errlen, "unknown key '%s'", key);
	return -ENOKEY;
}

int hib_config_set(struct hib_config *c, const char *key, const char *value, char *err,
		   size_t errlen)
{
	return hib_config_set_from(c, key, value, HIB_SRC_OPTION, err, errlen);
}

void hib_config_init(struct hib_config *c)
{
	memset(c, 0, sizeof(*c));
	c->loglevel = -1;
	c->cancel = true;
	c->cancel_keys = HIB_CANCEL_KEYS_DEFAULT;
	c->require_encryption = -1;
	c->hook_timeout = 30;
	/* Vendor hooks (NVIDIA's among them) expect to run around every sleep. */
	c->hooks_systemd = true;
	c->restore_working_set = true;
	c->restore_limit = 30;
	hib_options_init(&c->opts);
	for (size_t k = 0; k < ARRAY_SIZE(keys); k++)
		if (keys[k].hook_env && asprintf(&c->hook_env[k], "%s=%s", keys[k].hook_env,
						 hook_default(keys[k].hook_env)) < 0)
			c->hook_env[k] = NULL;
}

void hib_config_free(struct hib_config *c)
{
	free(c->device);
	c->device = NULL;
	free(c->key_file);
	c->key_file = NULL;
	for (size_t k = 0; k < HIB_CONFIG_MAX_KEYS; k++) {
		free(c->hook_env[k]);
		c->hook_env[k] = NULL;
	}
	for (size_t i = 0; i < c->n_inline; i++) {
		free((char *)c->inl[i].pre_cmd);
		free((char *)c->inl[i].post_cmd);
	}
	c->n_inline = 0;
}

/* "OnSuspend NN command" / "OnResume NN command". */
static int parse_inline(struct hib_config *c, const char *s, char *err, size_t errlen)
{
	bool pre = strncmp(s, "OnSuspend", 9) == 0;
	const char *p = s + (pre ? 9 : 8), *digits;
	char *cmd;
	int nn = 0;

	/* Exactly: blanks, one or two digits, blanks, the command. */
	digits = p + strspn(p, " \t");
	for (p = digits; isdigit((unsigned char)*p) && p - digits < 3; p++)
		nn = nn * 10 + (*p - '0');
	if (digits == s + (pre ? 9 : 8) || p == digits || p - digits > 2 ||
	    (*p && !isspace((unsigned char)*p))) {
		snprintf(err, errlen, "%s: expected '%s NN command' with NN from 00 to 99",
			 pre ? "OnSuspend" : "OnResume", pre ? "OnSuspend" : "OnResume");
		return -EINVAL;
	}
	while (isspace((unsigned char)*p))
		p++;
	if (!*p) {
		snprintf(err, errlen, "%s %d: no command", pre ? "OnSuspend" : "OnResume", nn);
		return -EINVAL;
	}
	if (c->n_inline == HIB_CONFIG_MAX_INLINE) {
		snprintf(err, errlen, "more than %d OnSuspend/OnResume lines",
			 HIB_CONFIG_MAX_INLINE);
		return -E2BIG;
	}
	cmd = strdup(p);
	if (!cmd)
		return -ENOMEM;
	c->inl[c->n_inline].order = nn;
	c->inl[c->n_inline].pre_cmd = pre ? cmd : NULL;
	c->inl[c->n_inline].post_cmd = pre ? NULL : cmd;
	c->n_inline++;
	return 0;
}

/* The lines of @f, each into @c. */
static int load_stream(struct hib_config *c, FILE *f, unsigned *ret_line, char *err, size_t errlen)
{
	_cleanup_(freep) char *line = NULL;
	size_t cap = 0;
	unsigned n = 0;
	int r = 0;

	while (getline(&line, &cap, f) > 0) {
		char *s, *eq;

		n++;
		s = strip(line);
		if (!*s || *s == '#')
			continue;
		if (strncmp(s, "OnSuspend", 9) == 0 || strncmp(s, "OnResume", 8) == 0) {
			r = parse_inline(c, s, err, errlen);
			if (r < 0)
				break;
			continue;
		}
		eq = strchr(s, '=');
		if (!eq) {
			snprintf(err, errlen, "expected 'key = value', got '%s'", s);
			r = -EINVAL;
			break;
		}
		*eq = 0;
		r = hib_config_set_from(c, strip(s), strip(eq + 1), HIB_SRC_FILE, err, errlen);
		if (r < 0)
			break;
	}
	if (r < 0 && ret_line)
		*ret_line = n;
	return r;
}

int hib_config_load(struct hib_config *c, const char *path, unsigned *ret_line, char *err,
		    size_t errlen)
{
	FILE *f = fopen(path, "re");
	int r;

	if (!f)
		return -errno;
	r = load_stream(c, f, ret_line, err, errlen);
	fclose(f);
	return r;
}

int hib_config_load_fd(struct hib_config *c, int fd, unsigned *ret_line, char *err, size_t errlen)
{
	int own = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	FILE *f;
	int r;

	if (own < 0)
		return -errno;
	f = fdopen(own, "re");
	if (!f) {
		r = -errno;
		close(own);
		return r;
	}
	r = load_stream(c, f, ret_line, err, errlen);
	fclose(f);
	return r;
}

int hib_config_load_trusted(struct hib_config *c, const char *path, unsigned *ret_line, char *err,
			    size_t errlen)
{
	struct hib_error e = { 0 };
	_cleanup_(closep) int fd = hib_open_trusted(path, 0, &e);

	if (fd < 0) {
		snprintf(err, errlen, "%s", e.msg);
		return fd;
	}
	return hib_config_load_fd(c, fd, ret_line, err, errlen);
}

const char *hib_config_source_name(enum hib_config_source s)
{
	switch (s) {
	case HIB_SRC_DEFAULT:
		return "default";
	case HIB_SRC_FILE:
		return "file";
	case HIB_SRC_CMDLINE:
		return "kernel command line";
	case HIB_SRC_OPTION:
		return "option";
	}
	return "?";
}

/* -E2BIG when it does not fit: a script must never act on a cut path. */
static int key_value(const struct hib_config *c, size_t k, char *buf, size_t len)
{
	if (keys[k].get)
		keys[k].get(c, buf, len);
	else
		snprintf(buf, len, "%s", c->hook_env[k] ? strchr(c->hook_env[k], '=') + 1 : "");
	return strnlen(buf, len) + 1 < len ? 0 : -E2BIG;
}

int hib_config_get(const struct hib_config *c, const char *key, char *buf, size_t len)
{
	for (size_t k = 0; k < ARRAY_SIZE(keys); k++)
		if (strcmp(key, keys[k].name) == 0)
			return key_value(c, k, buf, len);
	return -ENOKEY;
}

void hib_config_dump(const struct hib_config *c, hib_config_dump_fn fn, void *userdata)
{
	char buf[512];

	for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
		if (key_value(c, k, buf, sizeof(buf)) < 0)
			snprintf(buf + sizeof(buf) - 4, 4, "...");
		status_meaning(c, keys[k].name, buf, sizeof(buf));
		fn(keys[k].name, buf, c->source[k], userdata);
	}
	for (size_t i = 0; i < c->n_inline; i++) {
		char name[32];
		snprintf(name, sizeof(name), "%s %02d",
			 c->inl[i].pre_cmd ? "OnSuspend" : "OnResume", c->inl[i].order);
		fn(name, c->inl[i].pre_cmd ? c->inl[i].pre_cmd : c->inl[i].post_cmd, HIB_SRC_FILE,
		   userdata);
	}
}

size_t hib_config_hook_env(const struct hib_config *c, char **out, size_t max)
{
	size_t n = 0;

	if (max == 0)
		return 0;
	for (size_t k = 0; k < HIB_CONFIG_MAX_KEYS && n + 1 < max; k++)
		if (c->hook_env[k])
			out[n++] = c->hook_env[k];
	out[n] = NULL;
	return n;
}
