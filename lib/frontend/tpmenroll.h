/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The TPM machine key's enrollment on disk (HIB_TPM_MACHINE_PATH): read and
 * checked before it is trusted, written atomically, and made when hibernate
 * finds none it can bind an image to (docs/threat-model.md).
 */
#ifndef HIB_TPMENROLL_H
#define HIB_TPMENROLL_H

#include <stdint.h>

#include "hibernate.h"
#include "pipeline/tpm.h"

/* @path's enrollment into @ret: -ENOENT none, -EPERM not a regular file only
 * root can read or write, -EBADMSG/-EPROTO damaged or another version; @err
 * says which and the fix. */
int hib_tpm_machine_read(const char *path, struct hib_tpm_machine *ret, struct hib_error *err);

/* @m to @path, mode 0600 in a directory made 0700, through a rename. */
int hib_tpm_machine_write(const char *path, const struct hib_tpm_machine *m, struct hib_error *err);

/*
 * Hibernate, encrypt = tpm: the enrollment at @path to bind the image to,
 * into @ret: 0 when it is usable (its PCRs are those of 0..7 of @pcrs, as
 * tpm_pcrs_resolve resolves it, its storage key is this TPM's and its key
 * unseals now). Otherwise a new one is made and written, and 1 is returned
 * with @err saying why and that the initramfs must be rebuilt before an image
 * is written (resume reads its copy). <0: no enrollment can be made (@err).
 */
int hib_tpm_machine_prepare(const char *path, uint32_t pcrs, struct hib_tpm_machine *ret,
			    struct hib_error *err);

#endif
