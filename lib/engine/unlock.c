// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Resume of an encrypted image: its key opened (resume_unlock_image, at the
 * end), for resume.c's verify phase.
 *
 *   passphrase, key file   asked for (o->ask_secret), the key derived and
 *                          unwrapped: unlock.
 *   TPM                    the configuration's policy held against the
 *                          image's, the key unsealed (with the PIN when it has
 *                          one); a refusal said, and the fallback passphrase
 *                          asked when configured: unlock_tpm.
 *   MAC                    the key opens, so the header is checked with it.
 *
 * Each secret is wiped as soon as it was tried (forget_secret); the image is
 * read ahead meanwhile (preload.c). A failure here discards the image.
 */
#include "engine/preload.h"
#include "engine/resume-priv.h"
#include "pipeline/crypt.h"
#include "pipeline/tpm.h"

/* The secret ask_secret gave has been tried, opened or not: the caller wipes it. */
static void forget_secret(const struct hib_options *o)
{
	if (o->forget_secret)
		o->forget_secret(o->ask_secret_userdata);
}

/* The fallback passphrase of a TPM-sealed image, asked like a passphrase. */
static int unlock_fallback(struct resume_ctx *rc, const struct hib_options *o)
{
	const char *path = hib_target_path(rc->t);
	int attempts = o->secret_attempts > 0 ? o->secret_attempts : 3;
	int r = -EACCES;

	if (!o->ask_secret)
		return log_err(-ENOKEY,
			       "%s: no passphrase can be asked for; booting without the image",
			       path);
	for (int i = 1; i <= attempts && r == -EACCES; i++) {
		struct hib_secret s = { 0 };

		r = o->ask_secret(i, "TPM fallback passphrase", &s, o->ask_secret_userdata);
		if (r < 0)
			return log_err(r, "%s: no passphrase: %m", path);
		r = crypt_open_fallback(&s, rc->img.hdr, &rc->key);
		forget_secret(o);
		if (r == -EACCES && i < attempts)
			log_warn("wrong passphrase (attempt %d of %d)", i, attempts);
	}
	if (r == -EACCES)
		return log_err(r, "%s: wrong passphrase %d times; booting without the image", path,
			       attempts);
	if (r < 0)
		return log_err(r, "%s: the image's fallback key is out of bounds (tampered with)",
			       path);
	return 0;
}

/* Not this machine's writer, or not this machine's TPM: refused, with no
 * fallback (an image of somebody else's has a fallback of theirs). */
static int tpm_not_bound(struct resume_ctx *rc, int r)
{
	const char *path = hib_target_path(rc->t);

	if (r == -ENOKEY)
		return log_err(
			-EPERM,
			"%s: refused: no TPM machine key is enrolled here (" HIB_TPM_MACHINE_PATH
			" is not in the initramfs), so a TPM-sealed image cannot be told from a "
			"forgery; hibernate once, then run update-initramfs -u (or dracut -f)",
			path);
	if (r == -EREMCHG)
		return log_err(
			-EPERM,
			"%s: refused: the TPM's storage key is not the one enrolled in " HIB_TPM_MACHINE_PATH
			" (another or a cleared TPM?)",
			path);
	return log_err(-EPERM,
		       "%s: refused: the image was not written by this machine's hibernate "
		       "(its key is not bound to the enrolled machine key: written by an older "
		       "version, under an earlier enrollment, or forged); booting without it",
		       path);
}

/* What the TPM's refusal means, said; the fallback passphrase when the image has one. */
static int tpm_refused(struct resume_ctx *rc, const struct hib_options *o, int r, uint32_t changed)
{
	const char *path = hib_target_path(rc->t);
	char pcrs[64];

	tpm_pcrs_format(changed, pcrs, sizeof(pcrs));
	if (r == -EPERM)
		log_err(r,
			"%s: the TPM refused to unseal the image key: PCR %s changed since "
			"hibernation (firmware, boot loader or Secure Boot changed?)",
			path, changed ? pcrs : "(one of the policy's)");
	else if (r == -EBUSY)
		log_err(r,
			"%s: the TPM is locked out after wrong PINs; it unlocks after a while "
			"(or: tpm2_dictionarylockout --clear-lockout)",
			path);
	else if (r == -ENODEV)
		log_err(r,
			"%s: the image's key is sealed to a TPM, and there is none at /dev/tpmrm0 "
			"(is the TPM driver in the initramfs?)",
			path);
	else if (r == -EOPNOTSUPP)
		log_err(r,
			"%s: the image's key is sealed to the TPM, and this hibernate was built "
			"without TPM support (the static build); put the package's binary in the "
			"initramfs",
			path);
	else if (r == -EACCES)
		log_err(r, "%s: wrong TPM PIN", path);
	else
		log_err(r, "%s: unsealing the image key failed: %m", path);
	if ((rc->img.hdr->tpm.flags & HIB_TPM_FALLBACK) && o->tpm_fallback) {
		log_warn("%s: asking for the image's passphrase instead", path);
		return unlock_fallback(rc, o);
	}
	if (rc->img.hdr->tpm.flags & HIB_TPM_FALLBACK)
		log_warn("%s: the image has a fallback passphrase, and tpm-fallback = passphrase "
			 "is not configured: not asked",
			 path);
	return log_err(r, "%s: the image cannot be unlocked; booting without the image", path);
}

/* The configuration's TPM policy, not the image's: anybody who can use the
 * TPM can seal a key under a weaker one (no PIN, other PCRs). No fallback on
 * a refusal: the fallback of such an image is theirs too. */
static int check_tpm_policy(struct resume_ctx *rc, const struct hib_options *o)
{
	const struct hib_header *h = rc->img.hdr;
	const char *path = hib_target_path(rc->t);
	char want[64], got[64];
	uint32_t mask = 0;
	int r = crypt_tpm_policy_check(h, o->tpm_pcrs, o->tpm_pin, &mask);

	if (r == -ENOKEY)
		return log_err(
			-EPERM,
			"%s: refused: the image's key is sealed without a PIN, and tpm-pin = "
			"yes requires one",
			path);
	if (r == -EPERM) {
		tpm_pcrs_format(mask, want, sizeof(want));
		tpm_pcrs_format(h->tpm.pcr_mask, got, sizeof(got));
		return log_err(-EPERM,
			       "%s: refused: the image's key is sealed to PCRs %s, and tpm-pcrs "
			       "asks for %s",
			       path, got, want);
	}
	return r;
}

/* A TPM-sealed image: unsealed with no question, or with the PIN when it has one. */
static int unlock_tpm(struct resume_ctx *rc, const struct hib_options *o)
{
	bool pin = rc->img.hdr->tpm.flags & HIB_TPM_PIN;
	int attempts = !pin ? 1 : o->secret_attempts > 0 ? o->secret_attempts : 3;
	uint32_t changed = 0;
	int r = check_tpm_policy(rc, o);

	if (r == -EPERM)
		return r;
	if (r < 0) /* no TPM to resolve "auto" on: unsealing fails the same way */
		return tpm_refused(rc, o, r, 0);
	r = -EACCES;
	for (int i = 1; i <= attempts && r == -EACCES; i++) {
		struct hib_secret s = { 0 };

		if (pin && !o->ask_secret) {
			r = log_err(-ENOKEY,
				    "%s: the image needs the TPM PIN and none can be asked for",
				    hib_target_path(rc->t));
			break;
		}
		if (pin) {
			r = o->ask_secret(i, "TPM PIN", &s, o->ask_secret_userdata);
			if (r < 0)
				return log_err(r, "%s: no TPM PIN: %m", hib_target_path(rc->t));
		}
		r = crypt_open_tpm(pin ? &s : NULL, rc->img.hdr, o->tpm_machine, &rc->key,
				   &changed);
		if (pin)
			forget_secret(o);
		if (r == -EACCES && i < attempts)
			log_warn("wrong TPM PIN (attempt %d of %d)", i, attempts);
	}
	if (r == -ENOKEY || r == -EKEYREJECTED || r == -EREMCHG)
		return tpm_not_bound(rc, r);
	if (r < 0)
		return tpm_refused(rc, o, r, changed);
	return 0;
}

/* Ask for the secret until it opens the image's key, or the attempts run out.
 * A key file gets one attempt: it does not get better by asking again. */
static int unlock(struct resume_ctx *rc, const struct hib_options *o)
{
	bool keyfile = rc->img.hdr->crypt.kdf == HIB_KDF_KEYFILE;
	const char *what = keyfile ? "key file" : "passphrase";
	int attempts = keyfile ? 1 : o->secret_attempts > 0 ? o->secret_attempts : 3;
	int r = -EACCES;

	if (!o->ask_secret)
		return log_err(-ENOKEY, "%s: the image is encrypted and no %s was given",
			       hib_target_path(rc->t), what);
	for (int i = 1; i <= attempts; i++) {
		struct hib_secret s = { 0 };

		r = o->ask_secret(i, what, &s, o->ask_secret_userdata);
		if (r < 0)
			return log_err(r, "%s: no %s: %m", hib_target_path(rc->t), what);
		if ((s.kind == HIB_SECRET_KEYFILE) != keyfile)
			return log_err(-EACCES,
				       "%s: the image was sealed with a %s, and a %s was given; "
				       "booting without the image",
				       hib_target_path(rc->t), what,
				       keyfile ? "passphrase" : "key file");
		rc->kdf_ns = hib_now_ns();
		r = crypt_open(&s, rc->img.hdr, &rc->key);
		rc->kdf_ns = hib_now_ns() - rc->kdf_ns;
		/* Opened or not, this secret is done with (see forget_key). */
		forget_secret(o);
		if (r == -EACCES) {
			if (i < attempts)
				log_warn("wrong %s (attempt %d of %d)", what, i, attempts);
			continue;
		}
		if (r == -EBADMSG)
			return log_err(r,
				       "%s: the image's key parameters are out of bounds "
				       "(tampered with, or written by a newer version)",
				       hib_target_path(rc->t));
		if (r < 0)
			return log_err(r, "%s: unlocking the image failed: %m",
				       hib_target_path(rc->t));
		break;
	}
	if (r < 0) {
		if (keyfile)
			return log_err(-EACCES,
				       "%s: the key file does not open this image (another "
				       "key file, or the image's key was tampered with); booting "
				       "without the image",
				       hib_target_path(rc->t));
		return log_err(-EACCES, "%s: wrong passphrase %d times; booting without the image",
			       hib_target_path(rc->t), attempts);
	}
	return 0;
}

/* The key opens, so any difference in the header now is tampering. */
static int mac_check(struct resume_ctx *rc)
{
	int r = crypt_header_mac_check(rc->key, rc->img.hdr);

	if (r == -EBADMSG)
		return log_err(r, "%s: the image header was tampered with (MAC mismatch)",
			       hib_target_path(rc->t));
	if (r < 0)
		return log_err(r,
			       "%s: the image header's MAC could not be checked: %m; "
			       "booting without the image",
			       hib_target_path(rc->t));
	return 0;
}

/* The key, while the image is read ahead (preload.c) and libsodium readied
 * (crypt_warm_up): what was read stays for
 * the load when the key opens the image, and is freed otherwise. */
int resume_unlock_image(struct resume_ctx *rc, const struct hib_options *o)
{
	int r;

	crypt_warm_up();
	engine_preload_start(rc->t, &rc->img, o, &rc->pre);
	r = rc->img.hdr->crypt.kdf == HIB_KDF_TPM2 ? unlock_tpm(rc, o) : unlock(rc, o);
	if (r == 0)
		r = mac_check(rc);
	rc->stop_ns = hib_now_ns();
	engine_preload_stop(&rc->pre, r == 0, &rc->preload_bytes, &rc->preload_ms);
	rc->stop_ns = hib_now_ns() - rc->stop_ns;
	return r;
}
