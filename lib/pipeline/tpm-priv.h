/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What tpm.c (the sealing and unsealing) and tpm-esys.c (the TPM spoken to
 * through libtss2-esys) share, and only they include. Built with TPM support
 * only (HIB_HAVE_TPM).
 */
#ifndef HIB_TPM_PRIV_H
#define HIB_TPM_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tcti_device.h>

#include "pipeline/tpm.h"

struct tpm {
	TSS2_TCTI_CONTEXT *tcti; /* ours to finalize and free (not the tests') */
	ESYS_CONTEXT *esys;
	ESYS_TR primary;
	ESYS_TR session;
};

/* @rc as -errno (-EPERM a policy or PCR refusal, -EACCES a wrong PIN, -EBUSY
 * lockout, -EIO anything else), logged at debug with @what. */
int tpm_tss_err(TSS2_RC rc, const char *what);
/* The TPM (or tpm_set_tcti's) opened and its storage primary key made; with
 * @pinned, that key must be the enrolled one (-EREMCHG). -ENODEV: no TPM.
 * tpm_close after it, whatever it returned. */
int tpm_open(struct tpm *t, const struct hib_tpm_machine *pinned);
void tpm_close(struct tpm *t);
/* The storage key's name, which pins it (TPM2B_NAME's bytes). */
int tpm_primary_name(struct tpm *t, uint8_t *name, uint16_t *ret_len);
/* A session salted with the primary key in t->session (@type: TPM2_SE_TRIAL,
 * _POLICY or _HMAC); tpm_end_session flushes it. */
int tpm_start_session(struct tpm *t, TPM2_SE type, TPMA_SESSION attrs);
void tpm_end_session(struct tpm *t);
/* The policy on t->session: the PCRs of @mask as they are now, and the PIN
 * when @pin. */
int tpm_apply_policy(struct tpm *t, uint32_t mask, bool pin);
/* The SHA-256 values of the PCRs of @mask, lowest first. */
int tpm_read_pcrs(struct tpm *t, uint32_t mask, uint8_t values[][32]);
/* PCRs 0..7 (firmware and boot loader) that the SHA-256 bank has. */
int tpm_default_pcrs(struct tpm *t, uint32_t *ret_mask);

#endif
