/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Keys of an encrypted image (format.h, struct hib_crypt): a random data key
 * per image, stored only wrapped under a key derived from the user's secret.
 * Keys live in sodium_malloc'ed, locked, guarded memory and are wiped when
 * freed.
 */
#ifndef HIB_CRYPT_H
#define HIB_CRYPT_H

#include <stdbool.h>
#include <stdint.h>

#include "format/format.h"
#include "hibernate.h"

#define HIB_KEY_BYTES 32u

/* The Argon2id cost a writer uses for @passes and @memory bytes (0: the
 * default, libsodium's interactive level): -ERANGE outside the bounds every
 * reader takes (format.h, HIB_ARGON_*), -E2BIG when the memory is more than
 * half of @ram bytes (0: not checked), which the initramfs may not have. */
int crypt_kdf_cost(uint64_t passes, uint64_t memory, uint64_t ram, uint64_t *ret_ops,
		   uint64_t *ret_mem);
/* New image: derive the wrapping key from @s (Argon2id with @ops passes over
 * @mem bytes, 0: default; see crypt_kdf_cost), make and wrap a data key into
 * @hdr->crypt. Returns the data key (free with crypt_key_free). */
int crypt_setup(const struct hib_secret *s, uint64_t ops, uint64_t mem, struct hib_header *hdr,
		uint8_t **ret_key);
/* Existing image: unwrap the data key with @s. -EACCES: wrong secret. */
int crypt_open(const struct hib_secret *s, const struct hib_header *hdr, uint8_t **ret_key);
/* Start libsodium's initialisation on a thread of its own, once, and return:
 * it reads getrandom(), which blocks until the kernel's random pool is ready
 * (at boot, without a hardware source, seconds after the image is found).
 * Opening an image needs no random bytes, but crypt_open waits for that
 * initialisation; begun while the secret is awaited, the wait overlaps the
 * typing instead of following the Enter. A failure to start is no error:
 * crypt_open then initialises as before. */
void crypt_warm_up(void);
void crypt_key_free(uint8_t *key);
/* Keys (data keys, key-encryption keys) this module allocated and that are not
 * freed yet, in the whole process: what a test checks is none when it must be. */
unsigned crypt_keys_held(void);

/*
 * New image, key sealed to the TPM (@o): a random key-encryption key sealed
 * to its PCRs (and PIN), under the storage key @o->machine pins; the data key
 * wrapped under it combined with the machine key unsealed from @o->machine
 * (and under the fallback passphrase) into @hdr->crypt and @hdr->tpm;
 * HIB_FEATURE_TPM and HIB_FEATURE_TPM_BOUND set. -ENOKEY no enrollment,
 * -EOPNOTSUPP built without TPM support; else as tpm_seal and tpm_unseal
 * (-EPERM: the machine key's PCRs changed since the enrollment).
 */
int crypt_setup_tpm(const struct hib_tpm_options *o, struct hib_header *hdr, uint8_t **ret_key);
/*
 * Existing TPM-sealed image: unseal the machine key of the enrollment @m and
 * the image's key (with @pin, NULL: none), both under the storage key @m
 * pins. -ENOKEY no enrollment (@m NULL); -EKEYREJECTED the image is not
 * bound to @m (written without the binding, under another enrollment, or by
 * another writer: its wrapping does not open); as tpm_unseal: -EPERM the
 * PCRs changed (*ret_changed names them), -EACCES wrong PIN, -EREMCHG
 * another storage key, ...
 */
int crypt_open_tpm(const struct hib_secret *pin, const struct hib_header *hdr,
		   const struct hib_tpm_machine *m, uint8_t **ret_key, uint32_t *ret_changed);
/*
 * Existing TPM-sealed image, before it is unsealed: whether it was sealed
 * under the policy the configuration asks for, never the one the image
 * states (anybody who can use the TPM can seal a key of their own under a
 * weaker one). -ENOKEY: @pin is asked for and the image needs no PIN;
 * -EPERM: its PCRs are not exactly @pcrs (0: "auto", resolved on this TPM
 * into *ret_pcrs, which may be NULL); else as tpm_pcrs_resolve; -EINVAL not a
 * TPM-sealed image.
 */
int crypt_tpm_policy_check(const struct hib_header *hdr, uint32_t pcrs, bool pin,
			   uint32_t *ret_pcrs);
/* Existing TPM-sealed image with HIB_TPM_FALLBACK: open with the passphrase @s.
 * -EACCES wrong passphrase, -EINVAL no fallback, -EBADMSG its cost out of bounds. */
int crypt_open_fallback(const struct hib_secret *s, const struct hib_header *hdr,
			uint8_t **ret_key);

/* The header's MAC (keyed BLAKE2b-256 of the page with header_mac and
 * header_xxh3_self zero), into hdr->crypt.header_mac. Fails closed: -EINVAL
 * without a key, -EIO when it cannot be computed (the header is then untouched). */
int crypt_header_mac_set(const uint8_t *key, struct hib_header *hdr);
/* 0 when @hdr's MAC holds under @key; -EBADMSG when not, and the errors of
 * crypt_header_mac_set when it cannot be computed: never 0 then. */
int crypt_header_mac_check(const uint8_t *key, const struct hib_header *hdr);

#endif
