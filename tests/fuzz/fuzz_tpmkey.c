// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The TPM machine key's enrollment file (/var/lib/hibernate/tpm-machine.key,
 * copied into the initramfs): hib_tpm_machine_check as read and resealed.
 * What passes is what tpm.c and tpm-esys.c unmarshal and compare: a storage key name that
 * fits its room, a sealed object whose lengths fit the blob, some PCRs of
 * 0..23, no PIN.
 *
 * Input: the file. Shorter inputs are zero-padded, longer ones cut.
 */
#include "format/format.h"
#include "fuzz-common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fuzz_quiet_logs();
	return 0;
}

/* What hib_tpm_machine_check must say of @m once its checksum holds. */
static int expect_sealed(const struct hib_tpm_machine *m)
{
	const struct hib_tpm *t = &m->sealed;
	int n = __builtin_popcount(t->pcr_mask);

	if (memcmp(m->magic, HIB_MACHINE_MAGIC, 16) != 0)
		return -EBADMSG;
	if (m->version != HIB_MACHINE_VERSION)
		return -EPROTO;
	if (m->srk_name_len == 0 || m->srk_name_len > HIB_TPM_NAME_MAX || t->flags != 0 ||
	    t->pcr_mask >> 24 || n == 0 || n > (int)HIB_TPM_PCRS_MAX || t->public_len == 0 ||
	    t->private_len == 0 || (uint32_t)t->public_len + t->private_len > HIB_TPM_BLOB_MAX)
		return -EBADMSG;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hib_tpm_machine m, sealed;
	size_t n = size < sizeof(m) ? size : sizeof(m);
	int r;

	memset(&m, 0, sizeof(m));
	memcpy(&m, data, n);
	r = hib_tpm_machine_check(&m);
	FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -EPROTO);
	sealed = m;
	hib_tpm_machine_seal(&sealed);
	FUZZ_CHECK(hib_tpm_machine_check(&sealed) == expect_sealed(&sealed));
	if (r == 0) {
		/* A valid file is already sealed. */
		FUZZ_CHECK(memcmp(&sealed, &m, sizeof(m)) == 0);
		FUZZ_CHECK(m.srk_name_len <= sizeof(m.srk_name));
	}
	return 0;
}
