// SPDX-License-Identifier: GPL-2.0-or-later
#include <pthread.h>
#include <sodium.h>
#include <stdatomic.h>
#include <string.h>

#include "pipeline/crypt.h"
#include "pipeline/tpm.h"
#include "util/util.h"

/* By default Argon2id at libsodium's "interactive" cost: about 64 MiB and a
 * fraction of a second on a laptop. The parameters are stored, so images keep
 * opening whatever a later configuration says; a writer stays within what
 * every reader takes (format.h). */
_Static_assert(HIB_ARGON_OPS_DEFAULT == crypto_pwhash_OPSLIMIT_INTERACTIVE &&
		       HIB_ARGON_MEM_DEFAULT == crypto_pwhash_MEMLIMIT_INTERACTIVE,
	       "the default cost is libsodium's interactive one");
_Static_assert(HIB_ARGON_OPS_MIN >= crypto_pwhash_OPSLIMIT_MIN &&
		       HIB_ARGON_MEM_MIN >= crypto_pwhash_MEMLIMIT_MIN &&
		       HIB_ARGON_OPS_MIN <= HIB_ARGON_OPS_DEFAULT &&
		       HIB_ARGON_OPS_DEFAULT <= HIB_ARGON_OPS_MAX &&
		       HIB_ARGON_MEM_MIN <= HIB_ARGON_MEM_DEFAULT &&
		       HIB_ARGON_MEM_DEFAULT <= HIB_ARGON_MEM_MAX,
	       "readers must accept what writers write");

int crypt_kdf_cost(uint64_t passes, uint64_t memory, uint64_t ram, uint64_t *ret_ops,
		   uint64_t *ret_mem)
{
	uint64_t ops = passes ? passes : HIB_ARGON_OPS_DEFAULT;
	uint64_t mem = memory ? memory : HIB_ARGON_MEM_DEFAULT;

	if (ops < HIB_ARGON_OPS_MIN || ops > HIB_ARGON_OPS_MAX || mem < HIB_ARGON_MEM_MIN ||
	    mem > HIB_ARGON_MEM_MAX)
		return -ERANGE;
	if (ram && mem > ram / 2)
		return -E2BIG;
	*ret_ops = ops;
	*ret_mem = mem;
	return 0;
}

static int init_sodium(void)
{
	return sodium_init() < 0 ? -EIO : 0;
}

static void *warm_up_main(void *arg)
{
	int r = sodium_init(); /* a failure is crypt_open's to report, from its call */

	(void)arg;
	(void)r;
	return NULL;
}

static void warm_up_once(void)
{
	pthread_attr_t attr;
	pthread_t t;

	if (pthread_attr_init(&attr))
		return;
	if (!pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED))
		(void)pthread_create(&t, &attr, warm_up_main, NULL);
	pthread_attr_destroy(&attr);
}

void crypt_warm_up(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, warm_up_once);
}

static atomic_uint keys_held;

static uint8_t *key_alloc(void)
{
	uint8_t *key = sodium_malloc(HIB_KEY_BYTES);

	if (key)
		atomic_fetch_add(&keys_held, 1);
	return key;
}

void crypt_key_free(uint8_t *key)
{
	if (!key)
		return;
	sodium_free(key); /* wipes it */
	atomic_fetch_sub(&keys_held, 1);
}

unsigned crypt_keys_held(void)
{
	return atomic_load(&keys_held);
}

/* A passphrase's key-encryption key, with parameters a reader bounds. */
static int argon_kek(const struct hib_secret *s, uint64_t ops, uint64_t mem, const uint8_t *salt,
		     uint8_t *kek)
{
	if (s->kind != HIB_SECRET_PASSPHRASE)
		return -EACCES;
	if (ops < crypto_pwhash_OPSLIMIT_MIN || ops > HIB_ARGON_OPS_MAX ||
	    mem < crypto_pwhash_MEMLIMIT_MIN || mem > HIB_ARGON_MEM_MAX)
		return -EBADMSG;
	if (crypto_pwhash(kek, HIB_KEY_BYTES, s->data, s->len, salt, ops, (size_t)mem,
			  crypto_pwhash_ALG_ARGON2ID13) != 0)
		return -ENOMEM;
	return 0;
}

/* The key-encryption key from the user's secret and the header's parameters. */
static int derive_kek(const struct hib_secret *s, const struct hib_crypt *c, uint8_t *kek)
{
	switch (c->kdf) {
	case HIB_KDF_ARGON2ID:
		return argon_kek(s, c->opslimit, c->memlimit, c->salt, kek);
	case HIB_KDF_KEYFILE:
		if (!s || s->kind != HIB_SECRET_KEYFILE)
			return -EACCES;
		crypto_generichash(kek, HIB_KEY_BYTES, s->data, s->len, c->salt, sizeof(c->salt));
		return 0;
	}
	return -EBADMSG;
}

/* Locked memory for the key-encryption key (derived from @s and @c) and for
 * the data key; on failure the caller still frees whatever is set. */
static int keys_new(const struct hib_secret *s, const struct hib_crypt *c, uint8_t **ret_kek,
		    uint8_t **ret_key)
{
	*ret_kek = key_alloc();
	*ret_key = key_alloc();
	if (!*ret_kek || !*ret_key)
		return -ENOMEM;
	return derive_kek(s, c, *ret_kek);
}

/* What a wrapped key is bound to: this image and how its key-encryption key
 * is derived (@params, @len bytes of the header). */
static void wrap_ad(const struct hib_header *hdr, const void *params, size_t len, uint8_t ad[32])
{
	crypto_generichash_state st;

	crypto_generichash_init(&st, NULL, 0, 32);
	crypto_generichash_update(&st, (const uint8_t *)&hdr->image_id, sizeof(hdr->image_id));
	crypto_generichash_update(&st, params, len);
	crypto_generichash_final(&st, ad, 32);
}

static void crypt_ad(const struct hib_header *hdr, uint8_t ad[32])
{
	wrap_ad(hdr, &hdr->crypt, offsetof(struct hib_crypt, wrap_nonce), ad);
}

/* The fallback's parameters, and that it is the fallback (another AD than the main key's). */
static void fallback_ad(const struct hib_header *hdr, uint8_t ad[32])
{
	struct {
		uint8_t what[8];
		uint64_t ops, mem;
		uint8_t salt[16];
	} p = { "fallbck", hdr->tpm.fb_opslimit, hdr->tpm.fb_memlimit, { 0 } };

	memcpy(p.salt, hdr->tpm.fb_salt, sizeof(p.salt));
	wrap_ad(hdr, &p, sizeof(p), ad);
}

static int wrap(const uint8_t *kek, const uint8_t *key, const uint8_t ad[32], const uint8_t *nonce,
		uint8_t out[48])
{
	unsigned long long clen;

	return crypto_aead_xchacha20poly1305_ietf_encrypt(out, &clen, key, HIB_KEY_BYTES, ad, 32,
							  NULL, nonce, kek) == 0
		       ? 0
		       : -EIO;
}

/* A wrong key-encryption key and a tampered wrapped key look the same: -EACCES. */
static int unwrap(const uint8_t *kek, const uint8_t in[48], const uint8_t ad[32],
		  const uint8_t *nonce, uint8_t *key)
{
	unsigned long long mlen;

	if (crypto_aead_xchacha20poly1305_ietf_decrypt(key, &mlen, NULL, in, 48, ad, 32, nonce,
						       kek) != 0 ||
	    mlen != HIB_KEY_BYTES)
		return -EACCES;
	return 0;
}

int crypt_setup(const struct hib_secret *s, uint64_t ops, uint64_t mem, struct hib_header *hdr,
		uint8_t **ret_key)
{
	struct hib_crypt *c = &hdr->crypt;
	uint8_t *kek = NULL, *key = NULL, ad[32];
	int r = init_sodium();

	if (r < 0)
		return r;
	if (!s || !s->data || s->len == 0)
		return -EINVAL;
	r = crypt_kdf_cost(ops, mem, 0, &ops, &mem);
	if (r < 0)
		return r;
	memset(c, 0, sizeof(*c));
	c->kdf = s->kind == HIB_SECRET_PASSPHRASE ? HIB_KDF_ARGON2ID : HIB_KDF_KEYFILE;
	c->opslimit = ops;
	c->memlimit = mem;
	randombytes_buf(c->salt, sizeof(c->salt));
	randombytes_buf(c->wrap_nonce, sizeof(c->wrap_nonce));
	r = keys_new(s, c, &kek, &key);
	if (r < 0)
		goto out;
	randombytes_buf(key, HIB_KEY_BYTES);
	crypt_ad(hdr, ad);
	r = wrap(kek, key, ad, c->wrap_nonce, c->wrapped_key);
	if (r < 0)
		goto out;
	hdr->flags |= HIB_HFLAG_ENCRYPTED;
	*ret_key = TAKE_PTR(key);
out:
	crypt_key_free(kek);
	crypt_key_free(key);
	return r;
}

int crypt_open(const struct hib_secret *s, const struct hib_header *hdr, uint8_t **ret_key)
{
	const struct hib_crypt *c = &hdr->crypt;
	uint8_t *kek = NULL, *key = NULL, ad[32];
	int r = init_sodium();

	if (r < 0)
		return r;
	if (!(hdr->flags & HIB_HFLAG_ENCRYPTED))
		return -EINVAL;
	r = keys_new(s, c, &kek, &key);
	if (r < 0)
		goto out;
	crypt_ad(hdr, ad);
	r = unwrap(kek, c->wrapped_key, ad, c->wrap_nonce, key);
	if (r < 0)
		goto out;
	*ret_key = TAKE_PTR(key);
out:
	crypt_key_free(kek);
	crypt_key_free(key);
	return r;
}

/*
 * BLAKE2b over the header page with header_mac zero and header_xxh3_self zero
 * (it is sealed after the MAC), fed in pieces: no copy of the page, no
 * allocation (hibernate seals the header after the freeze). Every step is
 * checked and a missing key is an error: a MAC that could come out as zeros
 * or unkeyed would be one anybody can forge.
 */
static int header_mac(const uint8_t *key, const struct hib_header *hdr, uint8_t mac[32])
{
	static const uint8_t zero[32];
	const uint8_t *p = (const uint8_t *)hdr;
	size_t m = offsetof(struct hib_header, crypt) + offsetof(struct hib_crypt, header_mac);
	size_t m_end = m + sizeof(hdr->crypt.header_mac);
	size_t self = offsetof(struct hib_header, header_xxh3_self);
	crypto_generichash_state st;

	_Static_assert(sizeof(hdr->crypt.header_mac) == sizeof(zero) &&
			       sizeof(hdr->header_xxh3_self) <= sizeof(zero) &&
			       offsetof(struct hib_header, header_xxh3_self) +
					       sizeof(hdr->header_xxh3_self) ==
				       sizeof(struct hib_header),
		       "the MAC covers the whole page");
	if (!key)
		return -EINVAL;
	if (crypto_generichash_init(&st, key, HIB_KEY_BYTES, 32) != 0 ||
	    crypto_generichash_update(&st, p, m) != 0 ||
	    crypto_generichash_update(&st, zero, sizeof(hdr->crypt.header_mac)) != 0 ||
	    crypto_generichash_update(&st, p + m_end, self - m_end) != 0 ||
	    crypto_generichash_update(&st, zero, sizeof(hdr->header_xxh3_self)) != 0 ||
	    crypto_generichash_final(&st, mac, 32) != 0) {
		sodium_memzero(&st, sizeof(st));
		return -EIO;
	}
	return 0;
}

int crypt_header_mac_set(const uint8_t *key, struct hib_header *hdr)
{
	uint8_t mac[32];
	int r = header_mac(key, hdr, mac);

	if (r < 0)
		return r;
	memcpy(hdr->crypt.header_mac, mac, sizeof(mac));
	return 0;
}

int crypt_header_mac_check(const uint8_t *key, const struct hib_header *hdr)
{
	uint8_t mac[32];
	int r = header_mac(key, hdr, mac);

	if (r < 0)
		return r;
	return sodium_memcmp(mac, hdr->crypt.header_mac, 32) == 0 ? 0 : -EBADMSG;
}

/* What the TPM holds for a PIN: a keyed hash of it (the TPM takes up to 32 bytes). */
static void pin_auth(const struct hib_secret *pin, const struct hib_header *hdr, uint8_t *out)
{
	crypto_generichash(out, HIB_TPM_PIN_BYTES, pin->data, pin->len, hdr->crypt.salt,
			   sizeof(hdr->crypt.salt));
}

/* @key wrapped a second time, under the fallback passphrase @pass. */
static int wrap_fallback(const struct hib_secret *pass, struct hib_header *hdr, const uint8_t *key)
{
	struct hib_tpm *t = &hdr->tpm;
	uint8_t *kek = key_alloc(), ad[32];
	int r = kek ? 0 : -ENOMEM;

	t->fb_opslimit = HIB_ARGON_OPS_DEFAULT;
	t->fb_memlimit = HIB_ARGON_MEM_DEFAULT;
	randombytes_buf(t->fb_salt, sizeof(t->fb_salt));
	randombytes_buf(t->fb_wrap_nonce, sizeof(t->fb_wrap_nonce));
	if (r == 0)
		r = argon_kek(pass, t->fb_opslimit, t->fb_memlimit, t->fb_salt, kek);
	fallback_ad(hdr, ad);
	if (r == 0)
		r = wrap(kek, key, ad, t->fb_wrap_nonce, t->fb_wrapped_key);
	if (r == 0)
		t->flags |= HIB_TPM_FALLBACK;
	crypt_key_free(kek);
	return r;
}

/* Seal a random key-encryption key @kek to the TPM, with the PIN's hash in @pin. */
static int seal_kek(const struct hib_tpm_options *o, struct hib_header *hdr, uint8_t *kek,
		    uint8_t *pin)
{
	randombytes_buf(kek, HIB_KEY_BYTES);
	if (o->pin) {
		pin_auth(o->pin, hdr, pin);
		hdr->tpm.flags |= HIB_TPM_PIN;
	}
	return tpm_seal(kek, o->pcrs, o->pin ? pin : NULL, o->machine, &hdr->tpm);
}

/*
 * The key the data key is wrapped under in a bound image: the image's
 * unsealed key-encryption key @kek, keyed with the machine key unsealed from
 * the enrollment @m (pinned storage key, its PCRs), for this image. Only
 * this machine's legitimate boot can unseal the machine key, so only its
 * writer can make a wrapping its resume opens. @out: HIB_KEY_BYTES.
 */
static int bound_kek(const struct hib_tpm_machine *m, const struct hib_header *hdr,
		     const uint8_t *kek, uint32_t *ret_changed, uint8_t *out)
{
	static const uint8_t what[16] = "hibernate bind 1";
	crypto_generichash_state st;
	uint8_t *mkey = key_alloc();
	int r = mkey ? tpm_unseal(&m->sealed, NULL, m, mkey, ret_changed) : -ENOMEM;

	if (r == 0 && (crypto_generichash_init(&st, mkey, HIB_KEY_BYTES, HIB_KEY_BYTES) != 0 ||
		       crypto_generichash_update(&st, what, sizeof(what)) != 0 ||
		       crypto_generichash_update(&st, (const uint8_t *)&hdr->image_id,
						 sizeof(hdr->image_id)) != 0 ||
		       crypto_generichash_update(&st, kek, HIB_KEY_BYTES) != 0 ||
		       crypto_generichash_final(&st, out, HIB_KEY_BYTES) != 0))
		r = -EIO;
	sodium_memzero(&st, sizeof(st));
	crypt_key_free(mkey);
	return r;
}

int crypt_setup_tpm(const struct hib_tpm_options *o, struct hib_header *hdr, uint8_t **ret_key)
{
	struct hib_crypt *c = &hdr->crypt;
	uint8_t *kek = NULL, *key = NULL, *pin = NULL, ad[32];
	int r = init_sodium();

	if (r < 0)
		return r;
	if (!tpm_supported())
		return -EOPNOTSUPP;
	if (!o->machine)
		return -ENOKEY;
	memset(c, 0, sizeof(*c));
	memset(&hdr->tpm, 0, sizeof(hdr->tpm));
	c->kdf = HIB_KDF_TPM2;
	randombytes_buf(c->salt, sizeof(c->salt));
	randombytes_buf(c->wrap_nonce, sizeof(c->wrap_nonce));
	kek = key_alloc();
	key = key_alloc();
	pin = key_alloc();
	r = kek && key && pin ? seal_kek(o, hdr, kek, pin) : -ENOMEM;
	if (r == 0)
		r = bound_kek(o->machine, hdr, kek, NULL, kek);
	if (r < 0)
		goto out;
	hdr->version |= HIB_FEATURE_TPM | HIB_FEATURE_TPM_BOUND;
	memcpy(hdr->tpm.machine_id, o->machine->machine_id, sizeof(hdr->tpm.machine_id));
	randombytes_buf(key, HIB_KEY_BYTES);
	crypt_ad(hdr, ad);
	r = wrap(kek, key, ad, c->wrap_nonce, c->wrapped_key);
	if (r == 0 && o->fallback)
		r = wrap_fallback(o->fallback, hdr, key);
	if (r < 0)
		goto out;
	hdr->flags |= HIB_HFLAG_ENCRYPTED;
	*ret_key = TAKE_PTR(key);
out:
	crypt_key_free(pin);
	crypt_key_free(kek);
	crypt_key_free(key);
	return r;
}

static bool tpm_sealed(const struct hib_header *hdr)
{
	return (hdr->flags & HIB_HFLAG_ENCRYPTED) && hdr->crypt.kdf == HIB_KDF_TPM2;
}

/* Whether @hdr says it is bound to the enrollment @m: its word only, which
 * the unwrapping then holds it to. */
static int bound_to(const struct hib_header *hdr, const struct hib_tpm_machine *m)
{
	if (!m)
		return -ENOKEY;
	if (!(hdr->version & HIB_FEATURE_TPM_BOUND) ||
	    memcmp(hdr->tpm.machine_id, m->machine_id, sizeof(m->machine_id)) != 0)
		return -EKEYREJECTED;
	return 0;
}

int crypt_open_tpm(const struct hib_secret *pin, const struct hib_header *hdr,
		   const struct hib_tpm_machine *m, uint8_t **ret_key, uint32_t *ret_changed)
{
	uint8_t *kek = NULL, *key = NULL, *auth = NULL, ad[32];
	int r = init_sodium();

	if (r < 0)
		return r;
	if (!tpm_sealed(hdr))
		return -EINVAL;
	r = bound_to(hdr, m);
	if (r < 0)
		return r;
	kek = key_alloc();
	key = key_alloc();
	auth = key_alloc();
	r = kek && key && auth ? 0 : -ENOMEM;
	if (r == 0 && pin)
		pin_auth(pin, hdr, auth);
	if (r == 0)
		r = tpm_unseal(&hdr->tpm, pin ? auth : NULL, m, kek, ret_changed);
	if (r == 0)
		r = bound_kek(m, hdr, kek, ret_changed, kek);
	crypt_ad(hdr, ad);
	/* Both keys unsealed: a wrapping that does not open is another writer's. */
	if (r == 0 && unwrap(kek, hdr->crypt.wrapped_key, ad, hdr->crypt.wrap_nonce, key) < 0)
		r = -EKEYREJECTED;
	if (r == 0)
		*ret_key = TAKE_PTR(key);
	crypt_key_free(auth);
	crypt_key_free(kek);
	crypt_key_free(key);
	return r;
}

int crypt_tpm_policy_check(const struct hib_header *hdr, uint32_t pcrs, bool pin,
			   uint32_t *ret_pcrs)
{
	uint32_t want = 0;
	int r;

	if (!tpm_sealed(hdr))
		return -EINVAL;
	if (pin && !(hdr->tpm.flags & HIB_TPM_PIN))
		return -ENOKEY;
	r = tpm_pcrs_resolve(pcrs, &want);
	if (ret_pcrs)
		*ret_pcrs = want;
	if (r < 0)
		return r;
	return hdr->tpm.pcr_mask == want ? 0 : -EPERM;
}

int crypt_open_fallback(const struct hib_secret *s, const struct hib_header *hdr, uint8_t **ret_key)
{
	const struct hib_tpm *t = &hdr->tpm;
	uint8_t *kek = NULL, *key = NULL, ad[32];
	int r = init_sodium();

	if (r < 0)
		return r;
	if (!tpm_sealed(hdr) || !(t->flags & HIB_TPM_FALLBACK))
		return -EINVAL;
	kek = key_alloc();
	key = key_alloc();
	r = kek && key ? argon_kek(s, t->fb_opslimit, t->fb_memlimit, t->fb_salt, kek) : -ENOMEM;
	fallback_ad(hdr, ad);
	if (r == 0)
		r = unwrap(kek, t->fb_wrapped_key, ad, t->fb_wrap_nonce, key);
	if (r == 0)
		*ret_key = TAKE_PTR(key);
	crypt_key_free(kek);
	crypt_key_free(key);
	return r;
}
