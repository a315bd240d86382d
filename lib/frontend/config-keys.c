// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The keys of /etc/hibernate.conf: the one table of them, and each key's
 * parser (the value as the file writes it, into struct hib_config) and
 * formatter (back, as `hibernate config get` gives it). What a key's
 * value means to the program is decided here and nowhere else.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "format/format.h"
#include "frontend/cancelkeys.h"
#include "frontend/config-priv.h"
#include "pipeline/tpm.h"
#include "util/util.h"

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

const struct config_key config_keys[] = {
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
_Static_assert(ARRAY_SIZE(config_keys) <= HIB_CONFIG_MAX_KEYS, "too many keys");
const size_t config_n_keys = ARRAY_SIZE(config_keys);

const char *hib_config_key(size_t i, const char **ret_hook_env)
{
	if (i >= config_n_keys)
		return NULL;
	if (ret_hook_env)
		*ret_hook_env = config_keys[i].hook_env;
	return config_keys[i].name;
}
