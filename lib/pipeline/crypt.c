// SPDX-License-Identifier: GPL-2.0-or-later
#include <sodium.h>
#include <stdatomic.h>
#include <string.h>

#include "pipeline/crypt.h"
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

/* The key-encryption key from the user's secret and the header's parameters. */
static int derive_kek(const struct hib_secret *s, const struct hib_crypt *c, uint8_t *kek)
{
	switch (c->kdf) {
	case HIB_KDF_ARGON2ID:
		if (s->kind != HIB_SECRET_PASSPHRASE)
			return -EACCES;
		if (c->opslimit < crypto_pwhash_OPSLIMIT_MIN || c->opslimit > HIB_ARGON_OPS_MAX ||
		    c->memlimit < crypto_pwhash_MEMLIMIT_MIN || c->memlimit > HIB_ARGON_MEM_MAX)
			return -EBADMSG;
		if (crypto_pwhash(kek, HIB_KEY_BYTES, s->data, s->len, c->salt, c->opslimit,
				  (size_t)c->memlimit, crypto_pwhash_ALG_ARGON2ID13) != 0)
			return -ENOMEM;
		return 0;
	case HIB_KDF_KEYFILE:
		if (s->kind != HIB_SECRET_KEYFILE)
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

/* What the wrapped key is bound to: this image and how its key is derived. */
static void wrap_ad(const struct hib_header *hdr, uint8_t ad[32])
{
	crypto_generichash_state st;

	crypto_generichash_init(&st, NULL, 0, 32);
	crypto_generichash_update(&st, (const uint8_t *)&hdr->image_id, sizeof(hdr->image_id));
	crypto_generichash_update(&st, (const uint8_t *)&hdr->crypt,
				  offsetof(struct hib_crypt, wrap_nonce));
	crypto_generichash_final(&st, ad, 32);
}

int crypt_setup(const struct hib_secret *s, uint64_t ops, uint64_t mem, struct hib_header *hdr,
		uint8_t **ret_key)
{
	struct hib_crypt *c = &hdr->crypt;
	uint8_t *kek = NULL, *key = NULL, ad[32];
	unsigned long long clen;
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
	wrap_ad(hdr, ad);
	if (crypto_aead_xchacha20poly1305_ietf_encrypt(c->wrapped_key, &clen, key, HIB_KEY_BYTES,
						       ad, sizeof(ad), NULL, c->wrap_nonce,
						       kek) != 0) {
		r = -EIO;
		goto out;
	}
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
	unsigned long long mlen;
	int r = init_sodium();

	if (r < 0)
		return r;
	if (!(hdr->flags & HIB_HFLAG_ENCRYPTED))
		return -EINVAL;
	r = keys_new(s, c, &kek, &key);
	if (r < 0)
		goto out;
	wrap_ad(hdr, ad);
	/* A wrong secret and a tampered wrapped key look the same: neither opens. */
	if (crypto_aead_xchacha20poly1305_ietf_decrypt(key, &mlen, NULL, c->wrapped_key,
						       sizeof(c->wrapped_key), ad, sizeof(ad),
						       c->wrap_nonce, kek) != 0 ||
	    mlen != HIB_KEY_BYTES) {
		r = -EACCES;
		goto out;
	}
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
