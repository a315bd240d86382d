// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The TPM spoken to (tpm-priv.h): /dev/tpmrm0 or /dev/tpm0 opened through the
 * device TCTI (or the tests' TCTI), the storage primary key recreated and
 * checked against the pinned one, salted sessions, the PCR policy, the PCRs
 * read, and a TSS return code as -errno. What is sealed with them, and how,
 * is tpm.c's.
 */
#ifdef HIB_HAVE_TPM

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/tpm-priv.h"
#include "util/util.h"

static TSS2_TCTI_CONTEXT *test_tcti;

void tpm_set_tcti(void *tcti)
{
	test_tcti = tcti;
}

int tpm_tss_err(TSS2_RC rc, const char *what)
{
	TSS2_RC tpm_rc = rc & 0xffff;
	TSS2_RC base = (tpm_rc & TPM2_RC_FMT1) ? (tpm_rc & (TPM2_RC_FMT1 | 0x3f)) : tpm_rc;

	log_debug("tpm: %s: %s", what, Tss2_RC_Decode(rc));
	if ((rc & TSS2_RC_LAYER_MASK) != TSS2_TPM_RC_LAYER)
		return -EIO;
	switch (base) {
	case TPM2_RC_POLICY_FAIL:
	case TPM2_RC_VALUE:
	case TPM2_RC_PCR_CHANGED:
		return -EPERM;
	case TPM2_RC_AUTH_FAIL:
	case TPM2_RC_BAD_AUTH:
		return -EACCES;
	case TPM2_RC_LOCKOUT:
		return -EBUSY;
	}
	return -EIO;
}

void tpm_close(struct tpm *t)
{
	if (t->esys) {
		if (t->session != ESYS_TR_NONE)
			Esys_FlushContext(t->esys, t->session);
		if (t->primary != ESYS_TR_NONE)
			Esys_FlushContext(t->esys, t->primary);
		Esys_Finalize(&t->esys);
	}
	if (t->tcti) {
		Tss2_Tcti_Finalize(t->tcti);
		free(t->tcti);
	}
}

static int tcti_device(const char *path, TSS2_TCTI_CONTEXT **ret)
{
	size_t size = 0;
	TSS2_TCTI_CONTEXT *c;

	if (Tss2_Tcti_Device_Init(NULL, &size, path) != TSS2_RC_SUCCESS)
		return -EIO;
	c = calloc(1, size);
	if (!c)
		return -ENOMEM;
	if (Tss2_Tcti_Device_Init(c, &size, path) != TSS2_RC_SUCCESS) {
		free(c);
		return -ENODEV;
	}
	*ret = c;
	return 0;
}

/* The storage primary key every use recreates: the same template gives the same key. */
static int create_primary(struct tpm *t)
{
	static const TPM2B_SENSITIVE_CREATE sens = { 0 };
	static const TPM2B_PUBLIC tmpl = {
		.publicArea = {
			.type = TPM2_ALG_ECC,
			.nameAlg = TPM2_ALG_SHA256,
			.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
					    TPMA_OBJECT_SENSITIVEDATAORIGIN |
					    TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA |
					    TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT,
			.parameters.eccDetail = {
				.symmetric = { .algorithm = TPM2_ALG_AES, .keyBits.aes = 128,
					       .mode.aes = TPM2_ALG_CFB },
				.scheme.scheme = TPM2_ALG_NULL,
				.curveID = TPM2_ECC_NIST_P256,
				.kdf.scheme = TPM2_ALG_NULL,
			},
		},
	};
	static const TPM2B_DATA outside = { 0 };
	static const TPML_PCR_SELECTION none = { 0 };
	TSS2_RC rc;

	rc = Esys_CreatePrimary(t->esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE,
				ESYS_TR_NONE, &sens, &tmpl, &outside, &none, &t->primary, NULL,
				NULL, NULL, NULL);
	return rc == TSS2_RC_SUCCESS ? 0 : tpm_tss_err(rc, "creating the storage primary key");
}

/* The storage key's name, which pins it (TPM2B_NAME's bytes). */
int tpm_primary_name(struct tpm *t, uint8_t *name, uint16_t *ret_len)
{
	TPM2B_NAME *n = NULL;
	TSS2_RC rc = Esys_TR_GetName(t->esys, t->primary, &n);
	int r = 0;

	if (rc != TSS2_RC_SUCCESS)
		return tpm_tss_err(rc, "naming the storage key");
	if (n->size == 0 || n->size > HIB_TPM_NAME_MAX)
		r = -EIO;
	else
		memcpy(name, n->name, n->size), *ret_len = n->size;
	Esys_Free(n);
	return r;
}

/* The storage key recreated is the one enrolled: a cleared or other TPM, or
 * something on the bus answering with a key of its own, is refused before
 * any session is salted with it. */
static int check_pinned(struct tpm *t, const struct hib_tpm_machine *pinned)
{
	uint8_t name[HIB_TPM_NAME_MAX];
	uint16_t len = 0;
	int r;

	if (!pinned)
		return 0;
	r = tpm_primary_name(t, name, &len);
	if (r < 0)
		return r;
	if (len != pinned->srk_name_len || memcmp(name, pinned->srk_name, len) != 0)
		return -EREMCHG;
	return 0;
}

int tpm_open(struct tpm *t, const struct hib_tpm_machine *pinned)
{
	TSS2_RC rc;
	int r;

	*t = (struct tpm){ .primary = ESYS_TR_NONE, .session = ESYS_TR_NONE };
	/* The TSS logs its errors to stderr ("ERROR:esys:…"), on the console in an
	 * initramfs, before the message that says what a refusal means: unless
	 * the user asks for them, they go to the debug log (tpm_tss_err) only. */
	setenv("TSS2_LOG", "all+none", 0);
	if (!test_tcti) {
		r = tcti_device("/dev/tpmrm0", &t->tcti);
		if (r < 0)
			r = tcti_device("/dev/tpm0", &t->tcti);
		if (r < 0)
			return -ENODEV;
	}
	rc = Esys_Initialize(&t->esys, test_tcti ? test_tcti : t->tcti, NULL);
	if (rc != TSS2_RC_SUCCESS)
		return tpm_tss_err(rc, "initializing the TSS");
	r = create_primary(t);
	return r < 0 ? r : check_pinned(t, pinned);
}

/* A session salted with the primary key, so the key-encryption key never
 * crosses the bus in the clear (@type: TPM2_SE_TRIAL, _POLICY or _HMAC). */
int tpm_start_session(struct tpm *t, TPM2_SE type, TPMA_SESSION attrs)
{
	static const TPMT_SYM_DEF aes = { .algorithm = TPM2_ALG_AES,
					  .keyBits.aes = 128,
					  .mode.aes = TPM2_ALG_CFB };
	TSS2_RC rc;

	rc = Esys_StartAuthSession(t->esys, t->primary, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
				   ESYS_TR_NONE, NULL, type, &aes, TPM2_ALG_SHA256, &t->session);
	if (rc != TSS2_RC_SUCCESS)
		return tpm_tss_err(rc, "starting a session");
	if (attrs) {
		rc = Esys_TRSess_SetAttributes(t->esys, t->session, attrs, 0xff);
		if (rc != TSS2_RC_SUCCESS)
			return tpm_tss_err(rc, "setting the session's attributes");
	}
	return 0;
}

void tpm_end_session(struct tpm *t)
{
	if (t->session != ESYS_TR_NONE)
		Esys_FlushContext(t->esys, t->session);
	t->session = ESYS_TR_NONE;
}

static void pcr_selection(uint32_t mask, TPML_PCR_SELECTION *sel)
{
	memset(sel, 0, sizeof(*sel));
	sel->count = 1;
	sel->pcrSelections[0].hash = TPM2_ALG_SHA256;
	sel->pcrSelections[0].sizeofSelect = 3;
	for (unsigned i = 0; i < 3; i++)
		sel->pcrSelections[0].pcrSelect[i] = (uint8_t)(mask >> (8 * i));
}

/* The policy: the PCRs of @mask as they are now, and the PIN when @pin. */
int tpm_apply_policy(struct tpm *t, uint32_t mask, bool pin)
{
	static const TPM2B_DIGEST current = { 0 }; /* empty: the PCRs' present values */
	TPML_PCR_SELECTION sel;
	TSS2_RC rc;

	pcr_selection(mask, &sel);
	rc = Esys_PolicyPCR(t->esys, t->session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &current,
			    &sel);
	if (rc != TSS2_RC_SUCCESS)
		return tpm_tss_err(rc, "binding to the PCRs");
	if (pin) {
		rc = Esys_PolicyAuthValue(t->esys, t->session, ESYS_TR_NONE, ESYS_TR_NONE,
					  ESYS_TR_NONE);
		if (rc != TSS2_RC_SUCCESS)
			return tpm_tss_err(rc, "binding to the PIN");
	}
	return 0;
}

/* The PCRs of @mask, lowest first, one read each (a read returns at most 8). */
int tpm_read_pcrs(struct tpm *t, uint32_t mask, uint8_t values[][32])
{
	unsigned n = 0;

	for (unsigned i = 0; i < 24 && n < HIB_TPM_PCRS_MAX; i++) {
		TPML_PCR_SELECTION sel, *out_sel = NULL;
		TPML_DIGEST *out = NULL;
		TSS2_RC rc;
		int r = 0;

		if (!(mask & (1u << i)))
			continue;
		pcr_selection(1u << i, &sel);
		rc = Esys_PCR_Read(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &sel, NULL,
				   &out_sel, &out);
		if (rc != TSS2_RC_SUCCESS)
			r = tpm_tss_err(rc, "reading the PCRs");
		else if (out->count != 1 || out->digests[0].size != 32)
			r = -EIO; /* PCR i is not in the SHA-256 bank */
		else
			memcpy(values[n++], out->digests[0].buffer, 32);
		Esys_Free(out_sel);
		Esys_Free(out);
		if (r < 0)
			return r;
	}
	return 0;
}

/* PCRs 0..7 (firmware and boot loader) that the SHA-256 bank has. */
int tpm_default_pcrs(struct tpm *t, uint32_t *ret_mask)
{
	TPMS_CAPABILITY_DATA *cap = NULL;
	TPMI_YES_NO more;
	uint32_t mask = 0;
	TSS2_RC rc;

	rc = Esys_GetCapability(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_PCRS, 0,
				1, &more, &cap);
	if (rc != TSS2_RC_SUCCESS)
		return tpm_tss_err(rc, "asking for the PCR banks");
	for (uint32_t i = 0; i < cap->data.assignedPCR.count; i++) {
		const TPMS_PCR_SELECTION *s = &cap->data.assignedPCR.pcrSelections[i];

		if (s->hash == TPM2_ALG_SHA256 && s->sizeofSelect > 0)
			mask = s->pcrSelect[0];
	}
	Esys_Free(cap);
	if (mask == 0)
		return -EIO;
	*ret_mask = mask;
	return 0;
}

#endif
