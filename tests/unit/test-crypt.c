// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Encrypted images through the fake snapshot device: a passphrase and a key
 * file open them; a wrong secret, a secret of the other kind, a tampered
 * block (checksum fixed up), a tampered header and forged Argon2 parameters
 * are refused with the swap area given back; nothing of the stream, the
 * passphrase or the key file is on disk in the clear, and a resume wipes the
 * image's key material.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>
#include <xxhash.h>

#include "engine/engine.h"
#include "helpers.h"
#include "pipeline/crypt.h"

#define STREAM_PAGES 700u
#define SWAP_PAGES (2 * STREAM_PAGES + 64)

static const char PASSPHRASE[] = "correct horse battery staple";
static const char KEYFILE[] = "\x01\x7fkey-file bytes that must never reach the disk\xfe";

struct fx {
	char path[PATH_MAX];
	struct hib_fake_params fp;
	uint8_t swap_header[HIB_PAGE_SIZE];
};

/* What the user answers, attempt by attempt. */
struct asker {
	struct hib_secret answers[4];
	int n, asked;
	/* Where the answers' bytes are, when the test owns them: forget wipes it. */
	uint8_t *buf;
	size_t buf_len;
	int forgotten;
};

static void forget(void *ud)
{
	struct asker *a = ud;

	a->forgotten++;
	if (a->buf)
		sodium_memzero(a->buf, a->buf_len);
}

static int ask(int attempt, const char *what, struct hib_secret *ret, void *ud)
{
	struct asker *a = ud;

	(void)what;
	a->asked++;
	if (attempt > a->n)
		return -ENODATA;
	*ret = a->answers[attempt - 1];
	return 0;
}

static struct hib_secret passphrase(const char *p)
{
	return (struct hib_secret){ .kind = HIB_SECRET_PASSPHRASE,
				    .data = (const uint8_t *)p,
				    .len = strlen(p) };
}

static struct hib_secret keyfile(void)
{
	return (struct hib_secret){ .kind = HIB_SECRET_KEYFILE,
				    .data = (const uint8_t *)KEYFILE,
				    .len = sizeof(KEYFILE) - 1 };
}

static void fx_new(struct fx *f)
{
	int fd = make_temp(f->path, "crypt");

	f->fp = (struct hib_fake_params){ .seed = 7,
					  .stream_pages = STREAM_PAGES,
					  .swap_pages = SWAP_PAGES,
					  .fail_read_at = -1,
					  .fail_write_at = -1 };
	make_swap_file(fd, SWAP_PAGES);
	assert_int_equal(pread(fd, f->swap_header, HIB_PAGE_SIZE, 0), (ssize_t)HIB_PAGE_SIZE);
	close(fd);
}

static void fx_free(struct fx *f)
{
	unlink(f->path);
}

/* Hibernate into the fixture's swap file, encrypted with @s (NULL: not) at
 * Argon2id's cost @passes, @memory (0: default); what hib_suspend came to. */
static int hibernate_cost(struct fx *f, const struct hib_secret *s, enum hib_codec_choice codec,
			  uint32_t passes, uint64_t memory)
{
	struct hib_target *t = NULL;
	struct hib_snapshot *snap = NULL;
	struct hib_options o;
	enum hib_suspend_outcome written = 0;
	bool frozen = true;
	int r;

	hib_options_init(&o);
	o.codec = codec;
	o.threads = 2;
	o.powerdown = HIB_POWERDOWN_NONE;
	o.secret = s;
	o.kdf_passes = passes;
	o.kdf_memory = memory;
	assert_int_equal(hib_target_open(f->path, 0, true, &t), 0);
	assert_int_equal(hib_snapshot_fake_new(&f->fp, HIB_SNAP_HIBERNATE, &snap), 0);
	r = hib_suspend(t, snap, &o, &written, NULL);
	if (r == 0)
		assert_int_equal(written, HIB_SUSPEND_WRITTEN);
	hib_snapshot_fake_result(snap, NULL, NULL, NULL, &frozen);
	assert_false(frozen);
	hib_snapshot_close(snap);
	hib_target_close(t);
	return r;
}

static void hibernate(struct fx *f, const struct hib_secret *s, enum hib_codec_choice codec)
{
	assert_int_equal(hibernate_cost(f, s, codec, 0, 0), 0);
}

/* Resume with @a answering; returns what hib_resume came to (cycle_result),
 * *ret_restored whether the fake restored it. */
static int resume(struct fx *f, struct asker *a, bool *ret_restored)
{
	struct hib_target *t = NULL;
	struct hib_snapshot *snap = NULL;
	struct hib_options o;
	enum hib_resume_outcome outcome = 0;
	bool restored = false, complete = false;
	int r;

	hib_options_init(&o);
	o.threads = 2;
	o.ask_secret = a ? ask : NULL;
	o.ask_secret_userdata = a;
	o.forget_secret = a ? forget : NULL;
	assert_int_equal(hib_target_open(f->path, 0, true, &t), 0);
	assert_int_equal(hib_snapshot_fake_new(&f->fp, HIB_SNAP_RESUME, &snap), 0);
	r = hib_resume(t, snap, &o, &outcome, NULL);
	r = cycle_result(r, outcome);
	hib_snapshot_fake_result(snap, NULL, &complete, &restored, NULL);
	if (restored)
		assert_true(complete);
	*ret_restored = restored;
	hib_snapshot_close(snap);
	hib_target_close(t);
	return r;
}

static uint8_t *slurp(const char *path, size_t *ret_len)
{
	struct stat st;
	uint8_t *b;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	b = malloc((size_t)st.st_size);
	assert_non_null(b);
	assert_int_equal(pread(fd, b, (size_t)st.st_size, 0), st.st_size);
	close(fd);
	*ret_len = (size_t)st.st_size;
	return b;
}

static void patch(const char *path, uint64_t off, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, buf, len, (off_t)off), (ssize_t)len);
	close(fd);
}

/* The header page: the one starting with its magic. */
static uint64_t header_offset(const uint8_t *img, size_t len)
{
	for (size_t off = HIB_PAGE_SIZE; off + HIB_PAGE_SIZE <= len; off += HIB_PAGE_SIZE)
		if (memcmp(img + off, HIB_HEADER_MAGIC, 16) == 0)
			return off;
	fail_msg("no header page in the image");
	return 0;
}

/* The swap area after a refused or completed resume: page 0 as it was. */
static void expect_swap_given_back(const struct fx *f)
{
	size_t len;
	uint8_t *img = slurp(f->path, &len);

	assert_memory_equal(img, f->swap_header, HIB_PAGE_SIZE);
	free(img);
}

/* Threads of this process now. */
static long thread_count(void)
{
	long n = proc_status_field("Threads");

	assert_true(n > 0);
	return n;
}

/* crypt_warm_up initialises libsodium on a thread of its own and returns at
 * once; after it, sodium_init() has nothing left to do (1). First in the
 * group: nothing before it may have initialised libsodium. */
static void warm_up_initialises_in_the_background(void **state)
{
	int waited_ms = 0;

	(void)state;
	assert_int_equal(thread_count(), 1);
	crypt_warm_up();
	crypt_warm_up(); /* once only */
	while (thread_count() > 1 && waited_ms < 10000) {
		usleep(10000);
		waited_ms += 10;
	}
	assert_int_equal(thread_count(), 1);
	assert_int_equal(sodium_init(), 1);
}

/* Give the swap area back without resuming, as `hibernate invalidate` does. */
static void invalidate(struct fx *f)
{
	struct hib_target *t = NULL;

	assert_int_equal(hib_target_open(f->path, 0, true, &t), 0);
	assert_int_equal(hib_image_invalidate(t), 1);
	hib_target_close(t);
	expect_swap_given_back(f);
}

static bool contains(const uint8_t *hay, size_t len, const void *needle, size_t n)
{
	return n <= len && memmem(hay, len, needle, n) != NULL;
}

static void passphrase_opens_and_resume_wipes_the_key(void **state)
{
	struct fx f;
	struct hib_secret pp = passphrase(PASSPHRASE);
	struct asker a = { .answers = { pp }, .n = 1 };
	struct hib_crypt crypt;
	uint8_t *img;
	size_t len;
	uint64_t hoff;
	bool restored;

	(void)state;
	fx_new(&f);
	hibernate(&f, &pp, HIB_COMPRESS_LZ4);
	img = slurp(f.path, &len);
	hoff = header_offset(img, len);
	memcpy(&crypt, img + hoff + offsetof(struct hib_header, crypt), sizeof(crypt));
	assert_int_equal(crypt.kdf, HIB_KDF_ARGON2ID);
	assert_false(contains(img, len, PASSPHRASE, sizeof(PASSPHRASE) - 1));
	free(img);

	assert_int_equal(resume(&f, &a, &restored), HIB_RESUME_RESTORED);
	assert_true(restored);
	assert_int_equal(a.asked, 1);
	expect_swap_given_back(&f);
	/* The wrapped key, its salt and nonce are gone from the disk. */
	img = slurp(f.path, &len);
	assert_false(contains(img, len, crypt.wrapped_key, sizeof(crypt.wrapped_key)));
	assert_false(contains(img, len, crypt.salt, sizeof(crypt.salt)));
	assert_false(contains(img, len, crypt.wrap_nonce, sizeof(crypt.wrap_nonce)));
	free(img);
	fx_free(&f);
}

static void key_file_opens_once_and_only_the_right_one(void **state)
{
	struct fx f;
	struct hib_secret kf = keyfile();
	struct hib_secret other = { .kind = HIB_SECRET_KEYFILE,
				    .data = (const uint8_t *)"other",
				    .len = 5 };
	struct asker wrong = { .answers = { other, kf }, .n = 2 };
	struct asker right = { .answers = { kf }, .n = 1 };
	uint8_t *img;
	size_t len;
	bool restored;

	(void)state;
	fx_new(&f);
	hibernate(&f, &kf, HIB_COMPRESS_ZSTD);
	img = slurp(f.path, &len);
	assert_false(contains(img, len, KEYFILE, sizeof(KEYFILE) - 1));
	free(img);
	/* A wrong key file is not asked for again, and the image is discarded. */
	assert_int_equal(resume(&f, &wrong, &restored), -EACCES);
	assert_false(restored);
	assert_int_equal(wrong.asked, 1);
	expect_swap_given_back(&f);
	/* Discarded means gone: the right key file finds no image now. */
	assert_int_equal(resume(&f, &right, &restored), HIB_RESUME_NO_IMAGE);
	assert_int_equal(right.asked, 0);

	hibernate(&f, &kf, HIB_COMPRESS_ZSTD);
	assert_int_equal(resume(&f, &right, &restored), HIB_RESUME_RESTORED);
	assert_true(restored);
	fx_free(&f);
}

static void wrong_passphrase_asked_again_then_refused(void **state)
{
	struct fx f;
	struct hib_secret pp = passphrase(PASSPHRASE);
	struct hib_secret bad = passphrase("Correct horse battery staple");
	struct asker third = { .answers = { bad, bad, pp }, .n = 3 };
	struct asker never = { .answers = { bad, bad, bad, pp }, .n = 4 };
	bool restored;

	(void)state;
	fx_new(&f);
	hibernate(&f, &pp, HIB_COMPRESS_LZ4);
	assert_int_equal(resume(&f, &third, &restored), HIB_RESUME_RESTORED);
	assert_true(restored);
	assert_int_equal(third.asked, 3);

	hibernate(&f, &pp, HIB_COMPRESS_LZ4);
	assert_int_equal(resume(&f, &never, &restored), -EACCES);
	assert_false(restored);
	assert_int_equal(never.asked, 3);
	expect_swap_given_back(&f);
	fx_free(&f);
}

static void secret_of_the_other_kind_or_none_refused(void **state)
{
	struct fx f;
	struct hib_secret pp = passphrase(PASSPHRASE);
	struct asker kf = { .answers = { keyfile() }, .n = 1 };
	bool restored;

	(void)state;
	fx_new(&f);
	hibernate(&f, &pp, HIB_COMPRESS_NONE);
	assert_int_equal(resume(&f, &kf, &restored), -EACCES);
	assert_false(restored);
	expect_swap_given_back(&f);

	hibernate(&f, &pp, HIB_COMPRESS_NONE);
	assert_int_equal(resume(&f, NULL, &restored), -ENOKEY);
	assert_false(restored);
	expect_swap_given_back(&f);
	fx_free(&f);
}

/* Nothing of the stream is on disk in the clear: 64 windows of stream pages
 * are found in an unencrypted image (the control) and in no encrypted one. */
static void no_stream_bytes_in_the_clear(void **state)
{
	struct fx f;
	struct hib_secret pp = passphrase(PASSPHRASE);
	struct hib_snapshot *src = NULL;
	uint8_t(*win)[48] = calloc(64, 48);
	uint8_t page[HIB_PAGE_SIZE], *img;
	unsigned have = 0;
	int in_suspend = 0;
	size_t len;

	(void)state;
	assert_non_null(win);
	fx_new(&f);
	/* Windows from the stream itself, skipping pages of one repeated byte. */
	assert_int_equal(hib_snapshot_fake_new(&f.fp, HIB_SNAP_HIBERNATE, &src), 0);
	assert_int_equal(src->ops->freeze(src), 0);
	assert_int_equal(src->ops->create_image(src, &in_suspend), 0);
	for (unsigned i = 0; i < STREAM_PAGES && have < 64; i++) {
		assert_int_equal(src->ops->read_pages(src, page, 1), (ssize_t)HIB_PAGE_SIZE);
		if (i % 7 == 3 && memchr(page + 1000, page[1000] ^ 0xff, 48) == NULL &&
		    memcmp(page + 1000, page + 1001, 47) != 0)
			memcpy(win[have++], page + 1000, 48);
	}
	hib_snapshot_close(src);
	assert_true(have >= 32);

	hibernate(&f, NULL, HIB_COMPRESS_NONE);
	img = slurp(f.path, &len);
	for (unsigned i = 0; i < have; i++)
		if (!contains(img, len, win[i], 48))
			fail_msg("control: stream window %u not found in an unencrypted image", i);
	free(img);
	invalidate(&f);
	for (int codec = HIB_COMPRESS_NONE; codec <= HIB_COMPRESS_ZSTD; codec++) {
		hibernate(&f, &pp, codec);
		img = slurp(f.path, &len);
		for (unsigned i = 0; i < have; i++)
			if (contains(img, len, win[i], 48))
				fail_msg("codec %d: stream window %u is on disk in the clear",
					 codec, i);
		free(img);
		invalidate(&f);
	}
	free(win);
	fx_free(&f);
}

/* Change a data block's payload and fix up its checksum, as someone who knows
 * the format would: the seal catches it, nothing is restored. */
static void tampered_block_with_fixed_checksum_refused(void **state)
{
	struct fx f;
	struct hib_secret pp = passphrase(PASSPHRASE);
	struct asker a = { .answers = { pp }, .n = 1 };
	uint8_t *img;
	size_t len;
	uint64_t hoff, boff = 0;
	struct hib_header h;
	bool restored;

	(void)state;
	fx_new(&f);
	hibernate(&f, &pp, HIB_COMPRESS_LZ4);
	img = slurp(f.path, &len);
	hoff = header_offset(img, len);
	memcpy(&h, img + hoff, sizeof(h));
	/* The second block record, found by its magic and index. */
	for (size_t off = HIB_PAGE_SIZE; off + HIB_PAGE_SIZE <= len; off += HIB_PAGE_SIZE) {
		const struct hib_block_hdr *b = (const void *)(img + off);
		if (b->magic == HIB_BLOCK_MAGIC && b->index == 1) {
			boff = off;
			break;
		}
	}
	assert_true(boff > 0);
	{
		struct hib_block_hdr *b = (void *)(img + boff);
		uint8_t *payload = img + boff + sizeof(*b);

		assert_true(b->flags & HIB_BFLAG_SEALED);
		payload[b->stored_bytes / 2] ^= 0x20;
		b->stored_xxh3 = hib_block_stored_xxh3(b, payload, h.image_id);
		patch(f.path, boff, img + boff, sizeof(*b) + b->stored_bytes);
	}
	free(img);
	assert_int_equal(resume(&f, &a, &restored), HIB_ERR_AUTH);
	assert_false(restored);
	expect_swap_given_back(&f);
	fx_free(&f);
}

/* Header changes, each with the header's own checksum fixed up. */
enum hdr_tamper { T_STATS, T_CODEC_BLOCKS, T_ARGON_OPS, T_ARGON_MEM, T_WRAPPED_KEY };

static void tamper_header(struct hib_header *h, enum hdr_tamper k)
{
	switch (k) {
	case T_STATS:
		h->stat_stored_bytes ^= 1;
		break;
	case T_CODEC_BLOCKS:
		h->stream_xxh3 ^= 0x100;
		break;
	case T_ARGON_OPS:
		h->crypt.opslimit = HIB_ARGON_OPS_MAX + 1;
		break;
	case T_ARGON_MEM:
		h->crypt.memlimit = HIB_ARGON_MEM_MAX * 2;
		break;
	case T_WRAPPED_KEY:
		h->crypt.wrapped_key[5] ^= 1;
		break;
	}
}

static void tampered_header_refused(void **state)
{
	static const int want[] = { [T_STATS] = -EBADMSG,
				    [T_CODEC_BLOCKS] = -EBADMSG,
				    [T_ARGON_OPS] = -EBADMSG,
				    [T_ARGON_MEM] = -EBADMSG,
				    [T_WRAPPED_KEY] = -EACCES };
	struct fx f;
	struct hib_secret pp = passphrase(PASSPHRASE);

	(void)state;
	fx_new(&f);
	for (int k = T_STATS; k <= T_WRAPPED_KEY; k++) {
		struct asker a = { .answers = { pp, pp, pp }, .n = 3 };
		uint8_t *img, page[HIB_PAGE_SIZE];
		struct hib_header *h = (struct hib_header *)page;
		struct hib_sig_tail tail;
		uint64_t hoff;
		size_t len;
		bool restored;

		hibernate(&f, &pp, HIB_COMPRESS_LZ4);
		img = slurp(f.path, &len);
		hoff = header_offset(img, len);
		memcpy(page, img + hoff, HIB_PAGE_SIZE);
		memcpy(&tail, img + HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE, sizeof(tail));
		free(img);
		tamper_header(h, (enum hdr_tamper)k);
		/* Fix up the checksum the signature tail keeps of the header. */
		hib_header_seal(h);
		tail.header_xxh3 = hib_header_xxh3(h);
		hib_tail_seal(&tail);
		patch(f.path, hoff, page, HIB_PAGE_SIZE);
		patch(f.path, HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE, &tail, sizeof(tail));
		if (resume(&f, &a, &restored) != want[k])
			fail_msg("header change %d: not refused with %d", k, want[k]);
		assert_false(restored);
		expect_swap_given_back(&f);
	}
	fx_free(&f);
}

/*
 * The header MAC fails closed: without a key there is nothing to check it
 * with, and a header whose MAC is the unkeyed hash of its bytes (what anybody
 * can compute) or all zeros (what a failed computation once left) is refused.
 */
static void header_mac_fails_closed(void **state)
{
	static uint8_t key[HIB_KEY_BYTES] = { 1, 2, 3 };
	uint8_t page[HIB_PAGE_SIZE] = { 0 };
	struct hib_header *h = (struct hib_header *)page;

	(void)state;
	assert_true(sodium_init() >= 0);
	memcpy(h->magic, HIB_HEADER_MAGIC, 16);
	h->flags = HIB_HFLAG_ENCRYPTED;
	h->image_id = 42;
	/* The unkeyed hash of the page as the MAC sees it (both fields zero). */
	crypto_generichash(h->crypt.header_mac, 32, page, sizeof(page), NULL, 0);
	assert_true(crypt_header_mac_check(NULL, h) < 0);
	assert_int_equal(crypt_header_mac_check(key, h), -EBADMSG);
	memset(h->crypt.header_mac, 0, 32);
	assert_true(crypt_header_mac_check(NULL, h) < 0);
	assert_int_equal(crypt_header_mac_check(key, h), -EBADMSG);
	/* Sealed with the key, it holds, and only under that key. */
	assert_int_equal(crypt_header_mac_set(key, h), 0);
	assert_int_equal(crypt_header_mac_check(key, h), 0);
	assert_true(crypt_header_mac_check(NULL, h) < 0);
	key[0] ^= 1;
	assert_int_equal(crypt_header_mac_check(key, h), -EBADMSG);
	key[0] ^= 1;
	/* Without a key, nothing is sealed: the header is left as it was. */
	memset(h->crypt.header_mac, 0xa5, 32);
	assert_int_equal(crypt_header_mac_set(NULL, h), -EINVAL);
	for (int i = 0; i < 32; i++)
		assert_int_equal(h->crypt.header_mac[i], 0xa5);
}

/* What the resuming process still holds when the kernel restores the image. */
struct at_restore {
	struct asker *a;
	int calls;
	unsigned keys_held;
	bool secret_wiped;
};

static void look_at_restore(void *ud)
{
	struct at_restore *r = ud;

	r->calls++;
	r->keys_held = crypt_keys_held();
	r->secret_wiped = sodium_is_zero(r->a->buf, r->a->buf_len);
}

/*
 * Before ATOMIC_RESTORE, the data key is freed (wiped) and the passphrase
 * wiped through forget_secret: a restore does not return, and what this
 * process leaves in memory the restored kernel sees as free, uncleared RAM.
 */
static void keys_and_secret_wiped_before_the_restore(void **state)
{
	struct fx f;
	struct hib_secret pp = passphrase(PASSPHRASE);
	uint8_t *buf = sodium_malloc(sizeof(PASSPHRASE));
	struct asker a = { .n = 1, .buf = buf, .buf_len = sizeof(PASSPHRASE) - 1 };
	struct at_restore seen = { .a = &a };
	bool restored;

	(void)state;
	assert_non_null(buf);
	memcpy(buf, PASSPHRASE, sizeof(PASSPHRASE));
	a.answers[0] = (struct hib_secret){ .kind = HIB_SECRET_PASSPHRASE,
					    .data = buf,
					    .len = sizeof(PASSPHRASE) - 1 };
	fx_new(&f);
	hibernate(&f, &pp, HIB_COMPRESS_ZSTD);
	assert_int_equal(crypt_keys_held(), 0);
	f.fp.on_atomic_restore = look_at_restore;
	f.fp.hook_userdata = &seen;
	assert_int_equal(resume(&f, &a, &restored), HIB_RESUME_RESTORED);
	assert_true(restored);
	assert_int_equal(seen.calls, 1);
	assert_int_equal(seen.keys_held, 0);
	assert_int_equal(a.forgotten, 1);
	assert_true(seen.secret_wiped);
	sodium_free(buf);
	fx_free(&f);
}

/*
 * Argon2id's cost: the default is libsodium's interactive level; a writer
 * takes only what every reader accepts, and no more memory than half of RAM;
 * the corners of that range resume, and the header says what was used.
 */
static void kdf_cost_configurable_within_what_readers_take(void **state)
{
	static const struct {
		uint32_t passes;
		uint64_t memory;
	} corners[] = { { HIB_ARGON_OPS_MIN, HIB_ARGON_MEM_MAX },
			{ HIB_ARGON_OPS_MAX, HIB_ARGON_MEM_MIN } };
	struct fx f;
	struct hib_secret pp = passphrase(PASSPHRASE);
	uint64_t ops, mem;

	(void)state;
	assert_int_equal(crypt_kdf_cost(0, 0, 0, &ops, &mem), 0);
	assert_int_equal(ops, crypto_pwhash_OPSLIMIT_INTERACTIVE);
	assert_int_equal(mem, crypto_pwhash_MEMLIMIT_INTERACTIVE);
	assert_int_equal(crypt_kdf_cost(HIB_ARGON_OPS_MAX + 1, 0, 0, &ops, &mem), -ERANGE);
	assert_int_equal(crypt_kdf_cost(0, HIB_ARGON_MEM_MAX + (1 << 20), 0, &ops, &mem), -ERANGE);
	assert_int_equal(crypt_kdf_cost(0, HIB_ARGON_MEM_MIN - (1 << 20), 0, &ops, &mem), -ERANGE);
	assert_int_equal(crypt_kdf_cost(0, 256ull << 20, 511ull << 20, &ops, &mem), -E2BIG);
	assert_int_equal(crypt_kdf_cost(0, 256ull << 20, 512ull << 20, &ops, &mem), 0);
	fx_new(&f);
	assert_int_equal(hibernate_cost(&f, &pp, HIB_COMPRESS_LZ4, HIB_ARGON_OPS_MAX + 1, 0),
			 -ERANGE);
	expect_swap_given_back(&f);
	for (size_t i = 0; i < sizeof(corners) / sizeof(corners[0]); i++) {
		struct asker a = { .answers = { pp }, .n = 1 };
		struct hib_crypt crypt;
		uint8_t *img;
		size_t len;
		bool restored;

		assert_int_equal(hibernate_cost(&f, &pp, HIB_COMPRESS_LZ4, corners[i].passes,
						corners[i].memory),
				 0);
		img = slurp(f.path, &len);
		memcpy(&crypt, img + header_offset(img, len) + offsetof(struct hib_header, crypt),
		       sizeof(crypt));
		free(img);
		assert_int_equal(crypt.opslimit, corners[i].passes);
		assert_int_equal(crypt.memlimit, corners[i].memory);
		assert_int_equal(resume(&f, &a, &restored), HIB_RESUME_RESTORED);
		assert_true(restored);
	}
	fx_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(warm_up_initialises_in_the_background),
		cmocka_unit_test(passphrase_opens_and_resume_wipes_the_key),
		cmocka_unit_test(key_file_opens_once_and_only_the_right_one),
		cmocka_unit_test(wrong_passphrase_asked_again_then_refused),
		cmocka_unit_test(secret_of_the_other_kind_or_none_refused),
		cmocka_unit_test(no_stream_bytes_in_the_clear),
		cmocka_unit_test(tampered_block_with_fixed_checksum_refused),
		cmocka_unit_test(tampered_header_refused),
		cmocka_unit_test(header_mac_fails_closed),
		cmocka_unit_test(keys_and_secret_wiped_before_the_restore),
		cmocka_unit_test(kdf_cost_configurable_within_what_readers_take),
	};
	quiet_logs();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
