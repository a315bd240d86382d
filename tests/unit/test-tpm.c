// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * TPM-sealed image keys: the tpm-pcrs list, the format's feature bit and
 * struct hib_tpm checks, and (where swtpm is installed and the build has TPM
 * support) sealing and unsealing against a software TPM: a PCR change is
 * refused and named, a wrong PIN is refused, the fallback passphrase opens.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "format/format.h"
#include "frontend/tpmenroll.h"
#include "pipeline/crypt.h"
#include "pipeline/tpm.h"

#define IMAGE_ID 0x6a09e667f3bcc908ull

/* ---- tpm-pcrs ----------------------------------------------------------- */

static void pcrs_parse_accepts_lists_and_ranges(void **state)
{
	static const struct {
		const char *text;
		uint32_t mask;
	} ok[] = {
		{ "auto", 0 },      { "7", 1u << 7 }, { "0,2,4-7", 0xf5 },
		{ "23", 1u << 23 }, { "0-7", 0xff },  { "16,23", (1u << 16) | (1u << 23) },
		{ "3-3", 1u << 3 },
	};
	char buf[64];

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint32_t m = 0xdead;

		assert_int_equal(tpm_pcrs_parse(ok[i].text, &m), 0);
		assert_int_equal(m, ok[i].mask);
		/* What it prints parses back to the same PCRs. */
		tpm_pcrs_format(m, buf, sizeof(buf));
		assert_int_equal(tpm_pcrs_parse(buf, &m), 0);
		assert_int_equal(m, ok[i].mask);
	}
	tpm_pcrs_format(0xf5, buf, sizeof(buf));
	assert_string_equal(buf, "0,2,4-7");
}

static void pcrs_parse_refuses_the_rest(void **state)
{
	static const char *const bad[] = {
		"",
		"24",
		"0-24",
		"7-3",
		"1,",
		",1",
		"1,,2",
		"a",
		"-1",
		"0-8",
		/* nine PCRs: more than a header keeps */ "1 2",
		"1-",
		"auto,1",
		" 1",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint32_t m = 0xdead;

		if (tpm_pcrs_parse(bad[i], &m) != -EINVAL || m != 0xdead)
			fail_msg("tpm-pcrs '%s' accepted", bad[i]);
	}
}

/* ---- format ------------------------------------------------------------- */

static void make_header(struct hib_header *h)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, HIB_HEADER_MAGIC, 16);
	h->version = HIB_FORMAT_VERSION;
	h->image_id = IMAGE_ID;
	h->stream_bytes = 64ull * HIB_PAGE_SIZE;
	h->codec = HIB_CODEC_LZ4;
	h->block_raw_bytes = 16 * HIB_PAGE_SIZE;
	h->nr_blocks = 4;
	h->data_pages = 64;
	h->map_offset = 50ull * HIB_PAGE_SIZE;
	h->map_pages = 1;
}

/* A header as a TPM-sealed image's writer leaves it (the blob is not parsed here). */
static void make_tpm_header(struct hib_header *h)
{
	make_header(h);
	h->version |= HIB_FEATURE_TPM;
	h->flags |= HIB_HFLAG_ENCRYPTED;
	h->crypt.kdf = HIB_KDF_TPM2;
	h->tpm.pcr_mask = 0x81;
	h->tpm.public_len = 80;
	h->tpm.private_len = 160;
}

static int check(struct hib_header *h)
{
	hib_header_seal(h);
	return hib_header_check(h, IMAGE_ID, hib_header_xxh3(h));
}

static void version_features(void **state)
{
	(void)state;
	assert_int_equal(hib_version_check(HIB_FORMAT_VERSION), 0);
	assert_int_equal(hib_version_check(HIB_FORMAT_VERSION | HIB_FEATURE_TPM), 0);
	/* A feature this reader does not know, or another base version. */
	assert_int_equal(hib_version_check(HIB_FORMAT_VERSION | HIB_FEATURE_TPM |
					   HIB_FEATURE_TPM_BOUND),
			 0);
	assert_int_equal(hib_version_check(HIB_FORMAT_VERSION | (1u << 18)), -EPROTO);
	assert_int_equal(hib_version_check(HIB_FORMAT_VERSION | (1u << 31)), -EPROTO);
	assert_int_equal(hib_version_check((HIB_FORMAT_VERSION + 1) | HIB_FEATURE_TPM), -EPROTO);
}

/* The bytes an older reader compares: a TPM image's version is not its own. */
static void tpm_image_is_another_version_to_old_readers(void **state)
{
	struct hib_header h;

	(void)state;
	make_tpm_header(&h);
	assert_int_equal(check(&h), 0);
	assert_int_not_equal(h.version, HIB_FORMAT_VERSION);
	assert_int_equal(h.version & 0xffff, HIB_FORMAT_VERSION);
}

static void tpm_header_fields_checked(void **state)
{
	struct hib_header h;

	(void)state;
	/* The feature bit and the key's kind go together, both ways. */
	make_tpm_header(&h);
	h.version &= ~HIB_FEATURE_TPM;
	assert_int_equal(check(&h), -EBADMSG);
	make_header(&h);
	h.version |= HIB_FEATURE_TPM;
	assert_int_equal(check(&h), -EBADMSG);
	make_tpm_header(&h);
	h.flags &= ~HIB_HFLAG_ENCRYPTED;
	assert_int_equal(check(&h), -EBADMSG);
	/* The binding only with the TPM feature. */
	make_header(&h);
	h.version |= HIB_FEATURE_TPM_BOUND;
	assert_int_equal(check(&h), -EBADMSG);
	make_tpm_header(&h);
	h.version |= HIB_FEATURE_TPM_BOUND;
	assert_int_equal(check(&h), 0);
	make_tpm_header(&h);
	h.crypt.kdf = HIB_KDF_ARGON2ID;
	assert_int_equal(check(&h), -EBADMSG);
	/* The PCRs: some, at most eight, of 0..23. */
	make_tpm_header(&h);
	h.tpm.pcr_mask = 0;
	assert_int_equal(check(&h), -EBADMSG);
	h.tpm.pcr_mask = 1u << 24;
	assert_int_equal(check(&h), -EBADMSG);
	h.tpm.pcr_mask = 0x1ff;
	assert_int_equal(check(&h), -EBADMSG);
	/* The blob's lengths fit the room. */
	make_tpm_header(&h);
	h.tpm.public_len = 0;
	assert_int_equal(check(&h), -EBADMSG);
	make_tpm_header(&h);
	h.tpm.private_len = HIB_TPM_BLOB_MAX;
	assert_int_equal(check(&h), -EBADMSG);
	make_tpm_header(&h);
	h.tpm.flags = 1u << 2;
	assert_int_equal(check(&h), -EBADMSG);
}

/* The policy is the configuration's: an image that asks for less is refused
 * before the TPM is asked for anything (an explicit PCR list needs no TPM). */
static void policy_from_the_configuration(void **state)
{
	struct hib_header h;
	uint32_t want = 0;

	(void)state;
	make_tpm_header(&h); /* PCRs 0 and 7, no PIN */
	assert_int_equal(crypt_tpm_policy_check(&h, 0x81, false, &want), 0);
	assert_int_equal(want, 0x81);
	/* tpm-pin = yes, and the image needs no PIN. */
	assert_int_equal(crypt_tpm_policy_check(&h, 0x81, true, NULL), -ENOKEY);
	h.tpm.flags |= HIB_TPM_PIN;
	assert_int_equal(crypt_tpm_policy_check(&h, 0x81, true, NULL), 0);
	/* A PIN the configuration does not ask for is more, not less. */
	assert_int_equal(crypt_tpm_policy_check(&h, 0x81, false, NULL), 0);
	/* Fewer PCRs, other PCRs, more PCRs: not the configured set. */
	assert_int_equal(crypt_tpm_policy_check(&h, 0x80, false, &want), -EPERM);
	assert_int_equal(want, 0x80);
	assert_int_equal(crypt_tpm_policy_check(&h, 0x381, false, NULL), -EPERM);
	h.tpm.pcr_mask = 0x01;
	assert_int_equal(crypt_tpm_policy_check(&h, 0x81, false, NULL), -EPERM);
	/* Not a TPM-sealed image. */
	make_header(&h);
	assert_int_equal(crypt_tpm_policy_check(&h, 0x81, false, NULL), -EINVAL);
}

/* The enrollment file: its own magic, version and checksum, and a sealed
 * object's bounds (no PIN: nothing asks for one when hibernate binds). */
static void machine_file_checked(void **state)
{
	struct hib_tpm_machine m, bad;

	(void)state;
	memset(&m, 0, sizeof(m));
	memcpy(m.magic, HIB_MACHINE_MAGIC, 16);
	m.version = HIB_MACHINE_VERSION;
	m.srk_name_len = 34;
	m.sealed.pcr_mask = 0xff;
	m.sealed.public_len = 80;
	m.sealed.private_len = 160;
	hib_tpm_machine_seal(&m);
	assert_int_equal(hib_tpm_machine_check(&m), 0);
	bad = m;
	bad.srk_name[0] ^= 1; /* not resealed: damaged */
	assert_int_equal(hib_tpm_machine_check(&bad), -EBADMSG);
	bad = m;
	bad.version = 2;
	hib_tpm_machine_seal(&bad);
	assert_int_equal(hib_tpm_machine_check(&bad), -EPROTO);
	bad = m;
	bad.sealed.flags = HIB_TPM_PIN;
	hib_tpm_machine_seal(&bad);
	assert_int_equal(hib_tpm_machine_check(&bad), -EBADMSG);
	bad = m;
	bad.srk_name_len = HIB_TPM_NAME_MAX + 1;
	hib_tpm_machine_seal(&bad);
	assert_int_equal(hib_tpm_machine_check(&bad), -EBADMSG);
}

/* The file: written root's and 0600 in a 0700 directory it makes, read back
 * whole; anything else refused with a reason. */
static void machine_file_written_and_read(void **state)
{
	char dir[] = "/tmp/test-tpm-file-XXXXXX", path[96], cmd[128];
	struct hib_tpm_machine m, back;
	struct hib_error err;
	struct stat st;
	FILE *f;

	(void)state;
	if (geteuid() != 0) {
		print_message("# skipped: not root: the machine key file must be root's\n");
		skip();
	}
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/sub/tpm-machine.key", dir);
	assert_int_equal(hib_tpm_machine_read(path, &back, &err), -ENOENT);
	memset(&m, 0, sizeof(m));
	memcpy(m.magic, HIB_MACHINE_MAGIC, 16);
	m.version = HIB_MACHINE_VERSION;
	m.srk_name_len = 34;
	m.sealed.pcr_mask = 0x80;
	m.sealed.public_len = 80;
	m.sealed.private_len = 160;
	hib_tpm_machine_seal(&m);
	assert_int_equal(hib_tpm_machine_write(path, &m, &err), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(hib_tpm_machine_read(path, &back, &err), 0);
	assert_memory_equal(&m, &back, sizeof(m));
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(hib_tpm_machine_read(path, &back, &err), -EPERM);
	assert_non_null(strstr(err.msg, "chmod 600"));
	assert_int_equal(chmod(path, 0600), 0);
	f = fopen(path, "a");
	assert_non_null(f);
	fputc(0, f);
	fclose(f);
	assert_int_equal(hib_tpm_machine_read(path, &back, &err), -EBADMSG);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* Old images: zeros where struct hib_tpm is now, and no feature bit. */
static void tpm_room_was_reserved(void **state)
{
	(void)state;
	assert_int_equal(offsetof(struct hib_header, tpm),
			 offsetof(struct hib_header, crypt) + sizeof(struct hib_crypt));
	assert_true(offsetof(struct hib_header, header_xxh3_self) == HIB_PAGE_SIZE - 8);
}

/* ---- against swtpm ------------------------------------------------------ */

#ifdef HIB_HAVE_TPM
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_tcti_swtpm.h>

static pid_t swtpm_pid;
static char swtpm_dir[64];
static TSS2_TCTI_CONTEXT *tcti;
/* This machine's enrollment, made on each test's fresh TPM (PCRs 0..7). */
static struct hib_tpm_machine machine;

/* Whether something accepts connections on the socket at @path. */
static bool socket_answers(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* A fresh TPM for each test, on sockets in a directory of its own (TCP ports
 * would compete with the ephemeral ports of the TSS's own connections: one
 * per command). */
static int swtpm_start(void)
{
	char server[160], ctrl[160], state[96], conf[160], sock[80], sock_ctrl[96];
	size_t size = 0;

	snprintf(swtpm_dir, sizeof(swtpm_dir), "/tmp/test-tpm-XXXXXX");
	if (system("command -v swtpm >/dev/null 2>&1") != 0 || !mkdtemp(swtpm_dir))
		return -1;
	snprintf(sock, sizeof(sock), "%s/tpm", swtpm_dir);
	snprintf(sock_ctrl, sizeof(sock_ctrl), "%s.ctrl", sock); /* the TCTI's name for it */
	snprintf(server, sizeof(server), "type=unixio,path=%s", sock);
	snprintf(ctrl, sizeof(ctrl), "type=unixio,path=%s", sock_ctrl);
	snprintf(state, sizeof(state), "dir=%s", swtpm_dir);
	swtpm_pid = fork();
	if (swtpm_pid == 0) {
		execlp("swtpm", "swtpm", "socket", "--tpm2", "--server", server, "--ctrl", ctrl,
		       "--tpmstate", state, "--flags", "not-need-init,startup-clear", NULL);
		_exit(127);
	}
	snprintf(conf, sizeof(conf), "path=%s", sock);
	/* Up to 20 s on a loaded machine; a swtpm that exited ends the wait at
	 * once. Init leaks its copy of @conf when the TPM socket answers and the
	 * control socket (set_locality) does not yet: wait for both first. */
	for (int i = 0; i < 400; i++) {
		usleep(50000);
		if (swtpm_pid < 0 || waitpid(swtpm_pid, NULL, WNOHANG) == swtpm_pid) {
			swtpm_pid = 0;
			break;
		}
		if (!socket_answers(sock) || !socket_answers(sock_ctrl))
			continue;
		if (Tss2_Tcti_Swtpm_Init(NULL, &size, conf) != TSS2_RC_SUCCESS)
			return -1;
		free(tcti);
		tcti = calloc(1, size);
		if (Tss2_Tcti_Swtpm_Init(tcti, &size, conf) == TSS2_RC_SUCCESS)
			break;
		free(tcti);
		tcti = NULL;
	}
	if (!tcti)
		return -1;
	tpm_set_tcti(tcti);
	return 0;
}

/* Without swtpm the tests skip (in the test: a setup cannot). */
static int setup(void **state)
{
	(void)state;
	if (swtpm_start() < 0)
		tpm_set_tcti(NULL);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	memset(&machine, 0, sizeof(machine));
	tpm_set_tcti(NULL);
	if (tcti) {
		Tss2_Tcti_Finalize(tcti);
		free(tcti);
		tcti = NULL;
	}
	if (swtpm_pid > 0) {
		kill(swtpm_pid, SIGTERM);
		waitpid(swtpm_pid, NULL, 0);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", swtpm_dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void extend_pcr(unsigned pcr)
{
	ESYS_CONTEXT *e = NULL;
	TPML_DIGEST_VALUES v = { .count = 1, .digests[0].hashAlg = TPM2_ALG_SHA256 };

	memset(v.digests[0].digest.sha256, 0x5a, 32);
	assert_int_equal(Esys_Initialize(&e, tcti, NULL), TSS2_RC_SUCCESS);
	assert_int_equal(Esys_PCR_Extend(e, ESYS_TR_PCR0 + pcr, ESYS_TR_PASSWORD, ESYS_TR_NONE,
					 ESYS_TR_NONE, &v),
			 TSS2_RC_SUCCESS);
	Esys_Finalize(&e);
}

static const struct hib_secret PIN = { HIB_SECRET_PASSPHRASE, "2468", 4 };
static const struct hib_secret PASS = { HIB_SECRET_PASSPHRASE, "fallback words", 14 };

static void enrolled(void)
{
	if (!tcti) {
		print_message("# skipped: swtpm did not start or answer within 20 s\n");
		skip();
	}
	if (memcmp(machine.magic, HIB_MACHINE_MAGIC, 16) == 0)
		return;
	assert_int_equal(tpm_enroll(0, &machine), 0);
	assert_int_equal(hib_tpm_machine_check(&machine), 0);
	assert_int_equal(machine.sealed.pcr_mask, 0xff);
}

static void sealed(struct hib_header *h, struct hib_tpm_options *o, uint8_t **ret_key)
{
	enrolled();
	if (!o->machine)
		o->machine = &machine;
	make_header(h);
	assert_int_equal(crypt_setup_tpm(o, h, ret_key), 0);
	assert_int_equal(h->crypt.kdf, HIB_KDF_TPM2);
	assert_true(h->version & HIB_FEATURE_TPM);
	assert_true(h->version & HIB_FEATURE_TPM_BOUND);
	assert_memory_equal(h->tpm.machine_id, o->machine->machine_id, 8);
	assert_int_equal(check(h), 0);
}

static void seal_unseal_and_pcr_change(void **state)
{
	struct hib_tpm_options o = { .pcrs = (1u << 16) | (1u << 23) };
	struct hib_header h;
	uint8_t *key = NULL, *back = NULL;
	uint32_t changed = 0;

	(void)state;
	sealed(&h, &o, &key);
	assert_int_equal(h.tpm.pcr_mask, o.pcrs);
	assert_int_equal(crypt_open_tpm(NULL, &h, &machine, &back, &changed), 0);
	assert_memory_equal(key, back, HIB_KEY_BYTES);
	crypt_key_free(back);
	back = NULL;
	/* No fallback was configured: there is none to open. */
	assert_int_equal(crypt_open_fallback(&PASS, &h, &back), -EINVAL);
	extend_pcr(23);
	assert_int_equal(crypt_open_tpm(NULL, &h, &machine, &back, &changed), -EPERM);
	assert_null(back);
	assert_int_equal(changed, 1u << 23);
	crypt_key_free(key);
}

static void default_pcrs_are_0_to_7(void **state)
{
	struct hib_tpm_options o = { 0 };
	struct hib_header h;
	uint8_t *key = NULL, *back = NULL;

	(void)state;
	sealed(&h, &o, &key);
	assert_int_equal(h.tpm.pcr_mask, 0xff);
	assert_int_equal(crypt_open_tpm(NULL, &h, &machine, &back, NULL), 0);
	crypt_key_free(back);
	crypt_key_free(key);
}

/* "auto" is resolved on the TPM as sealing resolves it: 0..7 on swtpm. */
static void policy_auto_and_pin_against_the_tpm(void **state)
{
	struct hib_tpm_options o = { .pcrs = 1u << 16 };
	struct hib_header h;
	uint8_t *key = NULL;
	uint32_t want = 0;

	(void)state;
	sealed(&h, &o, &key); /* tpm-pcrs = 16, no PIN */
	crypt_key_free(key);
	assert_int_equal(crypt_tpm_policy_check(&h, 1u << 16, false, NULL), 0);
	assert_int_equal(crypt_tpm_policy_check(&h, 0, false, &want), -EPERM);
	assert_int_equal(want, 0xff);
	assert_int_equal(crypt_tpm_policy_check(&h, 1u << 16, true, NULL), -ENOKEY);
	o.pcrs = 0;
	sealed(&h, &o, &key); /* auto */
	crypt_key_free(key);
	assert_int_equal(crypt_tpm_policy_check(&h, 0, false, &want), 0);
	assert_int_equal(want, 0xff);
	assert_int_equal(crypt_tpm_policy_check(&h, 0xff, false, NULL), 0);
	assert_int_equal(crypt_tpm_policy_check(&h, 0x7f, false, NULL), -EPERM);
}

/*
 * Another writer — a live USB, a member of tss — can use the TPM: it seals a
 * key of its own under exactly the configured policy (the header's PCRs, no
 * PIN) and names this machine's enrollment. The policy check passes; the
 * binding does not, for lack of the machine key.
 */
static void forged_image_refused(void **state)
{
	struct hib_tpm_machine theirs;
	struct hib_tpm_options mine = { 0 }, forger = { 0 };
	struct hib_header h;
	uint8_t *key = NULL, *back = NULL;

	(void)state;
	enrolled();
	assert_int_equal(tpm_enroll(0, &theirs), 0);
	forger.machine = &theirs;
	sealed(&h, &forger, &key);
	crypt_key_free(key);
	memcpy(h.tpm.machine_id, machine.machine_id, sizeof(h.tpm.machine_id));
	assert_int_equal(crypt_tpm_policy_check(&h, 0, false, NULL), 0);
	assert_int_equal(crypt_open_tpm(NULL, &h, &machine, &back, NULL), -EKEYREJECTED);
	assert_null(back);
	/* Without the binding at all (as written before it existed): refused. */
	sealed(&h, &mine, &key);
	crypt_key_free(key);
	h.version &= ~HIB_FEATURE_TPM_BOUND;
	assert_int_equal(crypt_open_tpm(NULL, &h, &machine, &back, NULL), -EKEYREJECTED);
	/* No enrollment to check it against: refused, and none is written. */
	h.version |= HIB_FEATURE_TPM_BOUND;
	assert_int_equal(crypt_open_tpm(NULL, &h, NULL, &back, NULL), -ENOKEY);
	mine.machine = NULL;
	make_header(&h);
	assert_int_equal(crypt_setup_tpm(&mine, &h, &key), -ENOKEY);
	assert_null(back);
}

/* The storage key is the one enrolled, or nothing is sealed or unsealed. */
static void wrong_storage_key_refused(void **state)
{
	struct hib_tpm_options o = { 0 };
	struct hib_tpm_machine other;
	struct hib_header h, h2;
	uint8_t *key = NULL, *back = NULL;

	(void)state;
	sealed(&h, &o, &key);
	other = machine;
	other.srk_name[other.srk_name_len - 1] ^= 1;
	hib_tpm_machine_seal(&other);
	assert_int_equal(crypt_open_tpm(NULL, &h, &other, &back, NULL), -EREMCHG);
	assert_null(back);
	o.machine = &other;
	make_header(&h2);
	assert_int_equal(crypt_setup_tpm(&o, &h2, &back), -EREMCHG);
	assert_null(back);
	/* The right one still opens it. */
	assert_int_equal(crypt_open_tpm(NULL, &h, &machine, &back, NULL), 0);
	assert_memory_equal(key, back, HIB_KEY_BYTES);
	crypt_key_free(back);
	crypt_key_free(key);
}

/* GRUB measures the initramfs into PCR 9: with 8 and 9 in the policy, an
 * initramfs changed since hibernation cannot unseal the key. */
static void initramfs_change_refused_with_pcr_9(void **state)
{
	struct hib_tpm_options o = { .pcrs = (1u << 7) | (1u << 8) | (1u << 9) };
	struct hib_header h;
	uint8_t *key = NULL, *back = NULL;
	uint32_t changed = 0;

	(void)state;
	sealed(&h, &o, &key);
	assert_int_equal(crypt_open_tpm(NULL, &h, &machine, &back, NULL), 0);
	crypt_key_free(back);
	back = NULL;
	extend_pcr(9);
	assert_int_equal(crypt_open_tpm(NULL, &h, &machine, &back, &changed), -EPERM);
	assert_int_equal(changed, 1u << 9);
	assert_null(back);
	crypt_key_free(key);
}

static void pin_needed(void **state)
{
	struct hib_tpm_options o = { .pcrs = 1u << 16, .pin = &PIN };
	struct hib_secret wrong = { HIB_SECRET_PASSPHRASE, "1357", 4 };
	struct hib_header h;
	uint8_t *key = NULL, *back = NULL;

	(void)state;
	sealed(&h, &o, &key);
	assert_true(h.tpm.flags & HIB_TPM_PIN);
	assert_int_equal(crypt_open_tpm(NULL, &h, &machine, &back, NULL), -EACCES);
	assert_int_equal(crypt_open_tpm(&wrong, &h, &machine, &back, NULL), -EACCES);
	assert_null(back);
	assert_int_equal(crypt_open_tpm(&PIN, &h, &machine, &back, NULL), 0);
	assert_memory_equal(key, back, HIB_KEY_BYTES);
	crypt_key_free(back);
	crypt_key_free(key);
}

static void fallback_opens_after_pcr_change(void **state)
{
	struct hib_tpm_options o = { .pcrs = 1u << 23, .fallback = &PASS };
	struct hib_secret wrong = { HIB_SECRET_PASSPHRASE, "fallback word", 13 };
	struct hib_header h;
	uint8_t *key = NULL, *back = NULL;

	(void)state;
	sealed(&h, &o, &key);
	assert_true(h.tpm.flags & HIB_TPM_FALLBACK);
	extend_pcr(23);
	assert_int_equal(crypt_open_tpm(NULL, &h, &machine, &back, NULL), -EPERM);
	assert_int_equal(crypt_open_fallback(&wrong, &h, &back), -EACCES);
	assert_int_equal(crypt_open_fallback(&PASS, &h, &back), 0);
	assert_memory_equal(key, back, HIB_KEY_BYTES);
	crypt_key_free(back);
	crypt_key_free(key);
}
#endif

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(pcrs_parse_accepts_lists_and_ranges),
		cmocka_unit_test(pcrs_parse_refuses_the_rest),
		cmocka_unit_test(version_features),
		cmocka_unit_test(tpm_image_is_another_version_to_old_readers),
		cmocka_unit_test(tpm_header_fields_checked),
		cmocka_unit_test(tpm_room_was_reserved),
		cmocka_unit_test(policy_from_the_configuration),
		cmocka_unit_test(machine_file_checked),
		cmocka_unit_test(machine_file_written_and_read),
#ifdef HIB_HAVE_TPM
		cmocka_unit_test_setup_teardown(seal_unseal_and_pcr_change, setup, teardown),
		cmocka_unit_test_setup_teardown(default_pcrs_are_0_to_7, setup, teardown),
		cmocka_unit_test_setup_teardown(policy_auto_and_pin_against_the_tpm, setup,
						teardown),
		cmocka_unit_test_setup_teardown(pin_needed, setup, teardown),
		cmocka_unit_test_setup_teardown(forged_image_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(wrong_storage_key_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(initramfs_change_refused_with_pcr_9, setup,
						teardown),
		cmocka_unit_test_setup_teardown(fallback_opens_after_pcr_change, setup, teardown),
#endif
	};

	return cmocka_run_group_tests_name("tpm", tests, NULL, NULL);
}
