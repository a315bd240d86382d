// SPDX-License-Identifier: GPL-2.0-or-later
/* The TPM machine key's enrollment on disk: see tpmenroll.h. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frontend/tpmenroll.h"
#include "util/error.h"

#define REBUILD "run update-initramfs -u (or dracut -f) so that resume has it"

static int check_stat(int fd, const char *path, struct hib_error *err)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return hib_error_set(err, -errno, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 077))
		return hib_error_set(err, -EPERM,
				     "%s: the TPM machine key must be a regular file only root "
				     "can read or write: chown root:root %s; chmod 600 %s",
				     path, path, path);
	if (st.st_size != (off_t)sizeof(struct hib_tpm_machine))
		return hib_error_set(err, -EBADMSG, "%s: %lld bytes, not a TPM machine key", path,
				     (long long)st.st_size);
	return 0;
}

int hib_tpm_machine_read(const char *path, struct hib_tpm_machine *ret, struct hib_error *err)
{
	int fd, r;
	ssize_t n;

	hib_error_clear(err);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return hib_error_set(err, -errno, "%s: %s", path, strerror(errno));
	r = check_stat(fd, path, err);
	if (r == 0) {
		n = read(fd, ret, sizeof(*ret));
		r = n == (ssize_t)sizeof(*ret) ? 0 : n < 0 ? -errno : -EBADMSG;
		if (r < 0)
			hib_error_set(err, r, "%s: reading the TPM machine key failed", path);
	}
	close(fd);
	if (r == 0) {
		r = hib_tpm_machine_check(ret);
		if (r < 0)
			hib_error_set(err, r, "%s: not a TPM machine key this version reads", path);
	}
	return r;
}

static int write_all(const char *tmp, const struct hib_tpm_machine *m)
{
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, m, sizeof(*m)) != (ssize_t)sizeof(*m) || fsync(fd) < 0)
		r = errno ? -errno : -EIO;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

int hib_tpm_machine_write(const char *path, const struct hib_tpm_machine *m, struct hib_error *err)
{
	char copy[256], dir[256], tmp[300];
	int r;

	hib_error_clear(err);
	snprintf(copy, sizeof(copy), "%s", path);
	snprintf(dir, sizeof(dir), "%s", dirname(copy));
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return hib_error_set(err, -errno, "%s: %s", dir, strerror(errno));
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	unlink(tmp);
	r = write_all(tmp, m);
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0) {
		unlink(tmp);
		return hib_error_set(err, r, "%s: writing the TPM machine key failed: %s", path,
				     strerror(-r));
	}
	return 0;
}

/* Why @path's enrollment cannot bind an image now: 0 when it can. */
static int unusable(const char *path, uint32_t want, struct hib_tpm_machine *m, char *why,
		    size_t len)
{
	struct hib_error e;
	char pcrs[64];
	uint32_t changed = 0;
	int r = hib_tpm_machine_read(path, m, &e);

	if (r == -ENOENT)
		snprintf(why, len, "none was enrolled");
	else if (r < 0)
		snprintf(why, len, "%.400s", e.msg);
	if (r < 0)
		return r;
	if (m->sealed.pcr_mask != want) {
		tpm_pcrs_format(m->sealed.pcr_mask, pcrs, sizeof(pcrs));
		snprintf(why, len, "the enrolled one is sealed to PCRs %s, not tpm-pcrs' 0-7",
			 pcrs);
		return -EPERM;
	}
	r = tpm_machine_unseals(m, &changed);
	tpm_pcrs_format(changed, pcrs, sizeof(pcrs));
	if (r == -EPERM)
		snprintf(why, len, "PCR %s changed since the enrollment",
			 changed ? pcrs : "(one of its)");
	else if (r == -EREMCHG)
		snprintf(why, len, "the TPM's storage key is not the enrolled one");
	return r;
}

int hib_tpm_machine_prepare(const char *path, uint32_t pcrs, struct hib_tpm_machine *ret,
			    struct hib_error *err)
{
	char why[512] = "";
	uint32_t want = 0;
	int r;

	hib_error_clear(err);
	r = tpm_pcrs_resolve(pcrs, &want);
	if (r < 0)
		return hib_error_set(err, r, "encrypt = tpm: the TPM's PCRs cannot be read: %s",
				     strerror(-r));
	want &= 0xff;
	if (!want)
		return hib_error_set(err, -EINVAL,
				     "encrypt = tpm: tpm-pcrs names none of PCRs 0-7, and the "
				     "machine key is sealed to those (docs/threat-model.md)");
	r = unusable(path, want, ret, why, sizeof(why));
	if (r == 0)
		return 0;
	if (r != -ENOENT && r != -EPERM && r != -EREMCHG && r != -EBADMSG && r != -EPROTO)
		return hib_error_set(err, r, "%s: the TPM machine key cannot be used: %s", path,
				     strerror(-r));
	r = tpm_enroll(want, ret);
	if (r < 0)
		return hib_error_set(err, r,
				     "encrypt = tpm: enrolling a TPM machine key failed: %s",
				     strerror(-r));
	r = hib_tpm_machine_write(path, ret, err);
	if (r < 0)
		return r;
	hib_error_set(err, 1,
		      "%s: enrolled a new TPM machine key (%s); every image is bound to it, and "
		      "resume reads it from the initramfs: " REBUILD ", then hibernate again",
		      path, why);
	return 1;
}
