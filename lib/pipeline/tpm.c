// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A key-encryption key sealed to the TPM (tpm.h): the PCR list as the
 * configuration writes it (pure), and what is sealed and unsealed, with which
 * policy, and the machine key enrolled; talking to the TPM itself is
 * tpm-esys.c's. Without TPM support, each operation says -EOPNOTSUPP.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "pipeline/tpm.h"
#include "util/util.h"

int tpm_pcrs_parse(const char *text, uint32_t *ret_mask)
{
	uint32_t mask = 0;
	const char *p = text;

	if (strcmp(text, "auto") == 0) {
		*ret_mask = 0;
		return 0;
	}
	for (;;) {
		char *end;
		unsigned long lo, hi;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		lo = hi = strtoul(p, &end, 10);
		if (*end == '-') {
			p = end + 1;
			if (*p < '0' || *p > '9')
				return -EINVAL;
			hi = strtoul(p, &end, 10);
		}
		if (lo > hi || hi > 23)
			return -EINVAL;
		for (unsigned long i = lo; i <= hi; i++)
			mask |= 1u << i;
		if (*end == 0)
			break;
		if (*end != ',')
			return -EINVAL;
		p = end + 1;
	}
	if (__builtin_popcount(mask) > (int)HIB_TPM_PCRS_MAX)
		return -EINVAL;
	*ret_mask = mask;
	return 0;
}

void tpm_pcrs_format(uint32_t mask, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	if (mask == 0) {
		snprintf(buf, len, "auto");
		return;
	}
	for (unsigned i = 0; i < 24 && n < len; i++) {
		unsigned j = i;

		if (!(mask & (1u << i)))
			continue;
		while (j + 1 < 24 && (mask & (1u << (j + 1))))
			j++;
		n += (size_t)snprintf(buf + n, len - n, j > i ? "%s%u-%u" : "%s%u", n ? "," : "", i,
				      j);
		i = j;
	}
}

#ifndef HIB_HAVE_TPM

bool tpm_supported(void)
{
	return false;
}

int tpm_pcrs_resolve(uint32_t mask, uint32_t *ret_mask)
{
	*ret_mask = mask;
	return mask ? 0 : -EOPNOTSUPP;
}

int tpm_seal(const uint8_t *kek, uint32_t pcr_mask, const uint8_t *pin,
	     const struct hib_tpm_machine *pinned, struct hib_tpm *ret)
{
	(void)kek, (void)pcr_mask, (void)pin, (void)pinned, (void)ret;
	return -EOPNOTSUPP;
}

int tpm_unseal(const struct hib_tpm *t, const uint8_t *pin, const struct hib_tpm_machine *pinned,
	       uint8_t *kek, uint32_t *ret_changed)
{
	(void)t, (void)pin, (void)pinned, (void)kek, (void)ret_changed;
	return -EOPNOTSUPP;
}

int tpm_enroll(uint32_t pcr_mask, struct hib_tpm_machine *ret)
{
	(void)pcr_mask, (void)ret;
	return -EOPNOTSUPP;
}

int tpm_machine_unseals(const struct hib_tpm_machine *m, uint32_t *ret_changed)
{
	(void)m, (void)ret_changed;
	return -EOPNOTSUPP;
}

void tpm_set_tcti(void *tcti)
{
	(void)tcti;
}

#else

#include <tss2/tss2_mu.h>

#include "pipeline/tpm-priv.h"

bool tpm_supported(void)
{
	return true;
}

static int policy_digest(struct tpm *t, uint32_t mask, bool pin, TPM2B_DIGEST *ret)
{
	TPM2B_DIGEST *d = NULL;
	TSS2_RC rc;
	int r;

	r = tpm_start_session(t, TPM2_SE_TRIAL, 0);
	if (r == 0)
		r = tpm_apply_policy(t, mask, pin);
	if (r < 0)
		return r;
	rc = Esys_PolicyGetDigest(t->esys, t->session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
				  &d);
	if (rc != TSS2_RC_SUCCESS)
		return tpm_tss_err(rc, "computing the policy");
	*ret = *d;
	Esys_Free(d);
	tpm_end_session(t);
	return 0;
}

static int marshal(const TPM2B_PUBLIC *pub, const TPM2B_PRIVATE *priv, struct hib_tpm *ret)
{
	size_t off = 0, pub_len;

	if (Tss2_MU_TPM2B_PUBLIC_Marshal(pub, ret->blob, sizeof(ret->blob), &off) !=
	    TSS2_RC_SUCCESS)
		return -EIO;
	pub_len = off;
	if (Tss2_MU_TPM2B_PRIVATE_Marshal(priv, ret->blob, sizeof(ret->blob), &off) !=
	    TSS2_RC_SUCCESS)
		return -EIO;
	ret->public_len = (uint16_t)pub_len;
	ret->private_len = (uint16_t)(off - pub_len);
	return 0;
}

static int create_sealed(struct tpm *t, const uint8_t *kek, const uint8_t *pin,
			 const TPM2B_DIGEST *policy, struct hib_tpm *ret)
{
	static const TPM2B_DATA outside = { 0 };
	static const TPML_PCR_SELECTION none = { 0 };
	TPM2B_SENSITIVE_CREATE sens = { 0 };
	TPM2B_PUBLIC tmpl = {
		.publicArea = {
			.type = TPM2_ALG_KEYEDHASH,
			.nameAlg = TPM2_ALG_SHA256,
			/* No USERWITHAUTH: only the policy opens it. */
			.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
					    (pin ? 0 : TPMA_OBJECT_NODA),
			.authPolicy = *policy,
			.parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL,
		},
	};
	TPM2B_PRIVATE *priv = NULL;
	TPM2B_PUBLIC *pub = NULL;
	TSS2_RC rc;
	int r;

	sens.sensitive.data.size = HIB_TPM_KEK_BYTES;
	memcpy(sens.sensitive.data.buffer, kek, HIB_TPM_KEK_BYTES);
	if (pin) {
		sens.sensitive.userAuth.size = HIB_TPM_PIN_BYTES;
		memcpy(sens.sensitive.userAuth.buffer, pin, HIB_TPM_PIN_BYTES);
	}
	r = tpm_start_session(t, TPM2_SE_HMAC, TPMA_SESSION_DECRYPT | TPMA_SESSION_CONTINUESESSION);
	if (r == 0) {
		rc = Esys_Create(t->esys, t->primary, t->session, ESYS_TR_NONE, ESYS_TR_NONE, &sens,
				 &tmpl, &outside, &none, &priv, &pub, NULL, NULL, NULL);
		r = rc == TSS2_RC_SUCCESS ? marshal(pub, priv, ret) : tpm_tss_err(rc, "sealing");
	}
	explicit_bzero(&sens, sizeof(sens));
	Esys_Free(priv);
	Esys_Free(pub);
	return r;
}

int tpm_seal(const uint8_t *kek, uint32_t pcr_mask, const uint8_t *pin,
	     const struct hib_tpm_machine *pinned, struct hib_tpm *ret)
{
	struct tpm t;
	TPM2B_DIGEST policy;
	int r = tpm_open(&t, pinned);

	if (r == 0 && pcr_mask == 0)
		r = tpm_default_pcrs(&t, &pcr_mask);
	if (r == 0)
		r = tpm_read_pcrs(&t, pcr_mask, ret->pcr_values);
	if (r == 0)
		r = policy_digest(&t, pcr_mask, pin != NULL, &policy);
	if (r == 0)
		r = create_sealed(&t, kek, pin, &policy, ret);
	if (r == 0)
		ret->pcr_mask = pcr_mask;
	tpm_close(&t);
	return r;
}

int tpm_pcrs_resolve(uint32_t mask, uint32_t *ret_mask)
{
	struct tpm t;
	int r;

	if (mask) {
		*ret_mask = mask;
		return 0;
	}
	r = tpm_open(&t, NULL);
	if (r == 0)
		r = tpm_default_pcrs(&t, ret_mask);
	tpm_close(&t);
	return r;
}

static int load_sealed(struct tpm *t, const struct hib_tpm *h, ESYS_TR *ret)
{
	TPM2B_PUBLIC pub = { 0 };
	TPM2B_PRIVATE priv = { 0 };
	size_t off = 0;
	TSS2_RC rc;

	if (Tss2_MU_TPM2B_PUBLIC_Unmarshal(h->blob, h->public_len, &off, &pub) != TSS2_RC_SUCCESS ||
	    off != h->public_len ||
	    Tss2_MU_TPM2B_PRIVATE_Unmarshal(h->blob, (size_t)h->public_len + h->private_len, &off,
					    &priv) != TSS2_RC_SUCCESS)
		return -EBADMSG;
	rc = Esys_Load(t->esys, t->primary, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &priv,
		       &pub, ret);
	return rc == TSS2_RC_SUCCESS ? 0 : tpm_tss_err(rc, "loading the sealed key");
}

/* Which of the policy's PCRs differ from the values sealed with it. */
static uint32_t changed_pcrs(struct tpm *t, const struct hib_tpm *h)
{
	uint8_t now[HIB_TPM_PCRS_MAX][32];
	uint32_t changed = 0;
	unsigned n = 0;

	if (tpm_read_pcrs(t, h->pcr_mask, now) < 0)
		return 0;
	for (unsigned i = 0; i < 24; i++)
		if (h->pcr_mask & (1u << i)) {
			if (memcmp(now[n], h->pcr_values[n], 32) != 0)
				changed |= 1u << i;
			n++;
		}
	return changed;
}

static int unseal_loaded(struct tpm *t, const struct hib_tpm *h, ESYS_TR obj, const uint8_t *pin,
			 uint8_t *kek)
{
	TPM2B_SENSITIVE_DATA *out = NULL;
	TSS2_RC rc;
	int r;

	r = tpm_start_session(t, TPM2_SE_POLICY, TPMA_SESSION_ENCRYPT);
	if (r == 0)
		r = tpm_apply_policy(t, h->pcr_mask, h->flags & HIB_TPM_PIN);
	if (r == 0 && (h->flags & HIB_TPM_PIN)) {
		TPM2B_AUTH auth = { .size = HIB_TPM_PIN_BYTES };

		memcpy(auth.buffer, pin, HIB_TPM_PIN_BYTES);
		rc = Esys_TR_SetAuth(t->esys, obj, &auth);
		explicit_bzero(&auth, sizeof(auth));
		if (rc != TSS2_RC_SUCCESS)
			r = tpm_tss_err(rc, "setting the PIN");
	}
	if (r < 0)
		return r;
	rc = Esys_Unseal(t->esys, obj, t->session, ESYS_TR_NONE, ESYS_TR_NONE, &out);
	if (rc != TSS2_RC_SUCCESS)
		return tpm_tss_err(rc, "unsealing");
	t->session = ESYS_TR_NONE; /* spent: the TPM flushed it */
	r = out->size == HIB_TPM_KEK_BYTES ? 0 : -EBADMSG;
	if (r == 0)
		memcpy(kek, out->buffer, HIB_TPM_KEK_BYTES);
	explicit_bzero(out, sizeof(*out));
	Esys_Free(out);
	return r;
}

int tpm_unseal(const struct hib_tpm *h, const uint8_t *pin, const struct hib_tpm_machine *pinned,
	       uint8_t *kek, uint32_t *ret_changed)
{
	ESYS_TR obj = ESYS_TR_NONE;
	struct tpm t;
	int r;

	if ((h->flags & HIB_TPM_PIN) && !pin)
		return -EACCES;
	r = tpm_open(&t, pinned);
	if (r == 0)
		r = load_sealed(&t, h, &obj);
	if (r == 0)
		r = unseal_loaded(&t, h, obj, pin, kek);
	if (r == -EPERM && ret_changed)
		*ret_changed = changed_pcrs(&t, h);
	if (obj != ESYS_TR_NONE)
		Esys_FlushContext(t.esys, obj);
	tpm_close(&t);
	return r;
}

int tpm_enroll(uint32_t pcr_mask, struct hib_tpm_machine *ret)
{
	uint8_t key[HIB_TPM_KEK_BYTES];
	struct tpm t;
	int r = tpm_open(&t, NULL);

	memset(ret, 0, sizeof(*ret));
	if (r == 0 && pcr_mask == 0)
		r = tpm_default_pcrs(&t, &pcr_mask);
	if (r == 0)
		r = tpm_primary_name(&t, ret->srk_name, &ret->srk_name_len);
	tpm_close(&t);
	if (r < 0)
		return r;
	if (getrandom(key, sizeof(key), 0) != sizeof(key) ||
	    getrandom(ret->machine_id, sizeof(ret->machine_id), 0) != sizeof(ret->machine_id))
		return -EIO;
	memcpy(ret->magic, HIB_MACHINE_MAGIC, 16);
	ret->version = HIB_MACHINE_VERSION;
	r = tpm_seal(key, pcr_mask, NULL, ret, &ret->sealed);
	explicit_bzero(key, sizeof(key));
	if (r == 0)
		hib_tpm_machine_seal(ret);
	return r;
}

int tpm_machine_unseals(const struct hib_tpm_machine *m, uint32_t *ret_changed)
{
	uint8_t key[HIB_TPM_KEK_BYTES];
	int r = tpm_unseal(&m->sealed, NULL, m, key, ret_changed);

	explicit_bzero(key, sizeof(key));
	return r;
}

#endif
