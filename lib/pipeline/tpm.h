/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A key-encryption key sealed to the TPM 2.0 (format.h, struct hib_tpm):
 * bound to PCR values, and optionally to a PIN. Talks to /dev/tpmrm0 (else
 * /dev/tpm0) through libtss2-esys and the device TCTI, linked directly so an
 * initramfs needs no TCTI plugin. Never called while processes are frozen:
 * the TSS allocates.
 */
#ifndef HIB_TPM_H
#define HIB_TPM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

#define HIB_TPM_KEK_BYTES 32u
#define HIB_TPM_PIN_BYTES 32u /* a PIN is handed over as this hash of it */

/* Whether this binary was built with TPM support (the static build is not). */
bool tpm_supported(void);

/*
 * "auto", or PCR numbers 0..23 and ranges ("0,2,4-7"), at most
 * HIB_TPM_PCRS_MAX of them. 0 for "auto" (tpm_default_pcrs at sealing),
 * else the mask. -EINVAL otherwise.
 */
int tpm_pcrs_parse(const char *text, uint32_t *ret_mask);
/* "0,2,4-7" for a mask; "auto" for 0. */
void tpm_pcrs_format(uint32_t mask, char *buf, size_t len);
/*
 * The PCRs @mask stands for on this TPM: @mask itself, or for "auto" (0) the
 * PCRs of 0..7 its SHA-256 bank has, as tpm_seal picks them. -ENODEV no TPM,
 * -EOPNOTSUPP built without TPM support (only "auto" needs the TPM), -EIO.
 */
int tpm_pcrs_resolve(uint32_t mask, uint32_t *ret_mask);

/* Where the machine key's enrollment is kept (and the initramfs has its copy). */
#define HIB_TPM_MACHINE_PATH "/var/lib/hibernate/tpm-machine.key"

/*
 * Seal @kek to the PCRs of @pcr_mask (0: those of 0..7 the TPM's SHA-256
 * bank has) and, when @pin is not NULL, to the PIN (HIB_TPM_PIN_BYTES):
 * fills pcr_mask, public/private and pcr_values of @ret (flags untouched).
 * With @pinned, under a storage key of the name it recorded only (-EREMCHG
 * another one). -ENODEV no TPM, -EOPNOTSUPP built without TPM support, -EIO
 * the TPM failed.
 */
int tpm_seal(const uint8_t *kek, uint32_t pcr_mask, const uint8_t *pin,
	     const struct hib_tpm_machine *pinned, struct hib_tpm *ret);

/*
 * Unseal @t's key-encryption key into @kek (HIB_TPM_KEK_BYTES), with @pin
 * when the image has one. -EPERM: the PCRs differ from the sealed ones, and
 * *ret_changed (may be NULL) has a bit per PCR whose value changed; -EACCES
 * wrong PIN; -EBUSY the TPM locks out (too many wrong PINs); -ENODEV no TPM;
 * -EOPNOTSUPP built without; -EBADMSG the blob does not parse; -EREMCHG
 * the storage key is not the one @pinned recorded (checked before anything
 * is loaded; NULL: not checked); -EIO other.
 */
int tpm_unseal(const struct hib_tpm *t, const uint8_t *pin, const struct hib_tpm_machine *pinned,
	       uint8_t *kek, uint32_t *ret_changed);

/*
 * Enroll this machine: a random machine key (HIB_TPM_KEK_BYTES) sealed to
 * the PCRs of @pcr_mask (resolved as tpm_pcrs_resolve; at least one), and the
 * storage key's name, into @ret (sealed, ready to be written). Errors as
 * tpm_seal; -EINVAL no PCR.
 */
int tpm_enroll(uint32_t pcr_mask, struct hib_tpm_machine *ret);
/* Whether @m's machine key unseals now, the key itself wiped: as tpm_unseal. */
int tpm_machine_unseals(const struct hib_tpm_machine *m, uint32_t *ret_changed);

/* Tests: use this TCTI context (a TSS2_TCTI_CONTEXT, not owned) instead of the device. */
void tpm_set_tcti(void *tcti);

#endif
