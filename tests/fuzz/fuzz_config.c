// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * /etc/hibernate.conf: hib_config_load on a file holding the input (key =
 * value lines, OnSuspend/OnResume hook lines), then what `hibernate status`
 * and the hook runner do with the result (hib_config_dump,
 * hib_config_hook_env); and hib_config_set with the input split into a key
 * and a value (at the first '=', the value ending at the first NUL), as the
 * command line's options reach it. Error messages go into a buffer of exactly
 * errlen bytes (1..64, from the input's length), so truncation is checked too.
 */
#include "frontend/config.h"
#include "fuzz-common.h"

static struct memfile mf;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fuzz_quiet_logs();
	memfile_open(&mf, "fuzz-config");
	return 0;
}

static bool known_error(int r)
{
	/* -E2BIG: more hook lines than the config holds. */
	return r == -EINVAL || r == -ENOKEY || r == -ENOMEM || r == -E2BIG;
}

/* Whatever was accepted is something the rest of the program can use. */
static void check_config(const struct hib_config *c)
{
	const struct hib_options *o = &c->opts;

	FUZZ_CHECK(c->loglevel >= -1 && c->loglevel <= HIB_LOG_DEBUG);
	FUZZ_CHECK(o->threads <= 64);
	FUZZ_CHECK(o->codec == HIB_COMPRESS_NONE || o->codec == HIB_COMPRESS_LZ4 ||
		   o->codec == HIB_COMPRESS_ZSTD);
	FUZZ_CHECK(o->codec_level == 0 ||
		   (o->codec == HIB_COMPRESS_ZSTD && o->codec_level >= 1 && o->codec_level <= 19));
	FUZZ_CHECK(o->image_size >= -1);
	FUZZ_CHECK(o->image_size <= 0 || o->image_size % (1 << 20) == 0);
	FUZZ_CHECK(!c->offset_set || c->offset <= UINT64_MAX / 4096);
	FUZZ_CHECK(o->powerdown == HIB_POWERDOWN_SHUTDOWN ||
		   o->powerdown == HIB_POWERDOWN_PLATFORM || o->powerdown == HIB_POWERDOWN_REBOOT ||
		   o->powerdown == HIB_POWERDOWN_SUSPEND);
	FUZZ_CHECK(!c->device || c->device[0]);
	FUZZ_CHECK(!c->key_file || c->key_file[0]);
	FUZZ_CHECK(c->hook_timeout >= 1 && c->hook_timeout <= 3600);
	FUZZ_CHECK(c->n_inline <= HIB_CONFIG_MAX_INLINE);
	for (size_t i = 0; i < c->n_inline; i++) {
		const struct hib_inline_hook *h = &c->inl[i];
		const char *cmd = h->pre_cmd ? h->pre_cmd : h->post_cmd;

		FUZZ_CHECK(h->order >= 0 && h->order <= 99);
		FUZZ_CHECK(!h->pre_cmd != !h->post_cmd);
		FUZZ_CHECK(cmd[0] != 0);
	}
	for (size_t k = 0; k < HIB_CONFIG_MAX_KEYS; k++) {
		const char *e = c->hook_env[k];
		/* One KEY=value line in every hook's environment. */
		FUZZ_CHECK(!e || (strchr(e, '=') && !strchr(e, '\n')));
	}
}

static void dump_cb(const char *key, const char *value, enum hib_config_source src, void *ud)
{
	(void)ud;
	FUZZ_CHECK(key && key[0]);
	FUZZ_CHECK(value && strlen(value) < 4096);
	FUZZ_CHECK(src >= HIB_SRC_DEFAULT && src <= HIB_SRC_OPTION);
	FUZZ_CHECK(hib_config_source_name(src) != NULL);
}

/* What `hibernate config get` prints: whole or refused, one line when it came from a
 * file (an option's value is the caller's own), and what the file would say: set back
 * on a fresh config, it reads the same. */
static void check_get(const struct hib_config *c, bool from_file)
{
	static char v[4096], again[4096];
	const char *key;
	char err[256];

	FUZZ_CHECK(hib_config_get(c, "no-such-key", v, sizeof(v)) == -ENOKEY);
	for (size_t i = 0; (key = hib_config_key(i, NULL)); i++) {
		struct hib_config fresh;
		int r = hib_config_get(c, key, v, sizeof(v));

		FUZZ_CHECK(r == 0 || r == -E2BIG);
		if (r < 0 || !*v)
			continue;
		FUZZ_CHECK(!from_file || !strchr(v, '\n'));
		hib_config_init(&fresh);
		FUZZ_CHECK(hib_config_set_from(&fresh, key, v, HIB_SRC_FILE, err, sizeof(err)) ==
			   0);
		FUZZ_CHECK(hib_config_get(&fresh, key, again, sizeof(again)) == 0);
		FUZZ_CHECK(strcmp(v, again) == 0);
		hib_config_free(&fresh);
	}
}

static void use_config(const struct hib_config *c, size_t max_env, bool from_file)
{
	char **env = malloc(max_env * sizeof(*env)); /* exactly max: the NULL included */
	size_t n;

	if (!env)
		abort();
	check_config(c);
	hib_config_dump(c, dump_cb, NULL);
	check_get(c, from_file);
	n = hib_config_hook_env(c, env, max_env);
	FUZZ_CHECK(n < max_env && env[n] == NULL);
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK(strncmp(env[i], "HIBERNATE_", 10) == 0 && strchr(env[i], '='));
	free(env);
}

static void check_err(const char *err, size_t errlen, int r)
{
	FUZZ_CHECK(memchr(err, 0, errlen) != NULL);
	if (r < 0)
		FUZZ_CHECK(errlen == 1 || err[0] != 0); /* says something */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hib_config c;
	size_t errlen = size % 64 + 1, max_env = size % 50 + 1;
	char *err = malloc(errlen);
	char *text = malloc(size + 1);
	char *eq;
	unsigned line = 0;
	int r;

	if (!err || !text)
		abort();

	memfile_set(&mf, data, size);
	hib_config_init(&c);
	err[0] = 0;
	r = hib_config_load(&c, mf.path, &line, err, errlen);
	FUZZ_CHECK(r == 0 || known_error(r));
	if (r < 0) {
		FUZZ_CHECK(line >= 1);
		check_err(err, errlen, r);
	}
	use_config(&c, max_env, true);
	hib_config_free(&c);
	FUZZ_CHECK(c.device == NULL && c.key_file == NULL && c.n_inline == 0);

	/* One key = value, as `--option value` hands it over. */
	memcpy(text, data, size);
	text[size] = 0;
	eq = strchr(text, '=');
	if (eq)
		*eq = 0;
	hib_config_init(&c);
	err[0] = 0;
	r = hib_config_set(&c, text, eq ? eq + 1 : "", err, errlen);
	FUZZ_CHECK(r == 0 || known_error(r));
	check_err(err, errlen, r);
	use_config(&c, max_env, false);
	hib_config_free(&c);
	free(text);
	free(err);
	return 0;
}
