// SPDX-License-Identifier: GPL-2.0-or-later
/* Building, sealing (checksumming) and checking of the on-disk structs of format.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <xxhash.h>

#include "format/format.h"
#include "format/xxh.h"

int hib_version_check(uint32_t version)
{
	if ((version & 0xffffu) != HIB_FORMAT_VERSION ||
	    (version >> 16) & ~(HIB_FEATURES_KNOWN >> 16))
		return -EPROTO;
	return 0;
}

int hib_tail_is_ours(const uint8_t page[HIB_PAGE_SIZE])
{
	return memcmp(page + HIB_PAGE_SIZE - HIB_SIG_LEN, HIB_IMAGE_SIG, HIB_SIG_LEN) == 0 &&
	       memcmp(page + HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE, HIB_TAIL_MAGIC, 16) == 0;
}

static uint64_t tail_sum(const struct hib_sig_tail *t)
{
	struct hib_sig_tail tmp = *t;

	tmp.tail_xxh3 = 0;
	return XXH3_64bits(&tmp, sizeof(tmp));
}

void hib_tail_seal(struct hib_sig_tail *t)
{
	t->tail_xxh3 = tail_sum(t);
}

int hib_tail_check(const struct hib_sig_tail *t)
{
	if (memcmp(t->magic, HIB_TAIL_MAGIC, 16) || memcmp(t->sig, HIB_IMAGE_SIG, HIB_SIG_LEN))
		return -ENOENT;
	if (t->tail_xxh3 != tail_sum(t))
		return -EBADMSG;
	if (hib_version_check(t->version) < 0)
		return -EPROTO;
	if (t->page_size != HIB_PAGE_SIZE || t->header_offset % HIB_PAGE_SIZE)
		return -EBADMSG;
	return 0;
}

uint64_t hib_header_xxh3(const struct hib_header *h)
{
	return XXH3_64bits_withSeed(h, HIB_PAGE_SIZE, h->image_id);
}

void hib_header_seal(struct hib_header *h)
{
	h->header_xxh3_self =
		XXH3_64bits_withSeed(h, offsetof(struct hib_header, header_xxh3_self), h->image_id);
}

/* A sealed object's lengths and PCRs are what a writer makes. */
static int tpm_sealed_check(const struct hib_tpm *t)
{
	int n = __builtin_popcount(t->pcr_mask);

	if (t->pcr_mask >> 24 || n == 0 || n > (int)HIB_TPM_PCRS_MAX ||
	    t->flags & ~(HIB_TPM_PIN | HIB_TPM_FALLBACK) || t->public_len == 0 ||
	    t->private_len == 0 || (uint32_t)t->public_len + t->private_len > HIB_TPM_BLOB_MAX)
		return -EBADMSG;
	return 0;
}

static uint64_t machine_sum(const struct hib_tpm_machine *m)
{
	struct hib_tpm_machine tmp = *m;

	tmp.xxh3 = 0;
	return XXH3_64bits(&tmp, sizeof(tmp));
}

void hib_tpm_machine_seal(struct hib_tpm_machine *m)
{
	m->xxh3 = machine_sum(m);
}

int hib_tpm_machine_check(const struct hib_tpm_machine *m)
{
	if (memcmp(m->magic, HIB_MACHINE_MAGIC, 16) || m->xxh3 != machine_sum(m))
		return -EBADMSG;
	if (m->version != HIB_MACHINE_VERSION)
		return -EPROTO;
	if (m->srk_name_len == 0 || m->srk_name_len > HIB_TPM_NAME_MAX || m->sealed.flags != 0 ||
	    tpm_sealed_check(&m->sealed) < 0)
		return -EBADMSG;
	return 0;
}

/* The TPM feature is there exactly when the key is sealed to the TPM, and its
 * lengths and PCRs are what a writer makes; binding only with it. */
static int tpm_check(const struct hib_header *h)
{
	const struct hib_tpm *t = &h->tpm;
	bool sealed = (h->flags & HIB_HFLAG_ENCRYPTED) && h->crypt.kdf == HIB_KDF_TPM2;

	if (!!(h->version & HIB_FEATURE_TPM) != sealed)
		return -EBADMSG;
	if (!sealed)
		return (h->version & HIB_FEATURE_TPM_BOUND) ? -EBADMSG : 0;
	return tpm_sealed_check(t);
}

int hib_header_check(const struct hib_header *h, uint64_t image_id, uint64_t expect_xxh3)
{
	if (memcmp(h->magic, HIB_HEADER_MAGIC, 16))
		return -EBADMSG;
	if (h->image_id != image_id)
		return -EBADMSG;
	/* The tail's checksum of the whole page and the page's own must both hold. */
	if (hib_header_xxh3(h) != expect_xxh3)
		return -EBADMSG;
	if (h->header_xxh3_self !=
	    XXH3_64bits_withSeed(h, offsetof(struct hib_header, header_xxh3_self), image_id))
		return -EBADMSG;
	if (hib_version_check(h->version) < 0)
		return -EPROTO;
	if (tpm_check(h) < 0)
		return -EBADMSG;
	if (h->codec >= HIB_CODEC_MAX || !hib_block_size_ok(h->block_raw_bytes))
		return -EBADMSG;
	if (h->stream_bytes == 0 || h->stream_bytes % HIB_PAGE_SIZE)
		return -EBADMSG;
	if (h->stream_bytes / h->block_raw_bytes + (h->stream_bytes % h->block_raw_bytes != 0) !=
	    (uint64_t)h->nr_blocks)
		return -EBADMSG;
	if (h->map_offset % HIB_PAGE_SIZE || h->map_pages == 0 ||
	    h->map_extents > (uint64_t)h->map_pages * HIB_MAP_ENTRIES)
		return -EBADMSG;
	if (h->data_pages < h->nr_blocks)
		return -EBADMSG;
	if (h->nr_fs > HIB_MAX_FS || h->nr_fs_later > HIB_MAX_FS - h->nr_fs)
		return -EBADMSG;
	if (memchr(h->kernel_release, 0, sizeof(h->kernel_release)) == NULL ||
	    memchr(h->kernel_version, 0, sizeof(h->kernel_version)) == NULL ||
	    memchr(h->machine, 0, sizeof(h->machine)) == NULL)
		return -EBADMSG;
	return 0;
}

static uint64_t map_sum(const struct hib_map_page *m, uint64_t image_id)
{
	struct hib_map_page tmp;

	memcpy(&tmp, m, sizeof(tmp));
	tmp.xxh3 = 0;
	return XXH3_64bits_withSeed(&tmp, sizeof(tmp), image_id);
}

void hib_map_page_seal(struct hib_map_page *m, uint64_t image_id)
{
	m->xxh3 = 0;
	m->xxh3 = map_sum(m, image_id);
}

int hib_map_page_check(const struct hib_map_page *m, uint64_t image_id, uint32_t index)
{
	if (memcmp(m->magic, HIB_MAP_MAGIC, 4) || m->index != index)
		return -EBADMSG;
	if (m->xxh3 != map_sum(m, image_id))
		return -EBADMSG;
	if (m->count == 0 || m->count > HIB_MAP_ENTRIES || m->next_offset % HIB_PAGE_SIZE)
		return -EBADMSG;
	for (uint32_t i = 0; i < m->count; i++)
		if (m->ext[i].offset % HIB_PAGE_SIZE || m->ext[i].pages == 0 ||
		    m->ext[i].pages > (UINT64_MAX / HIB_PAGE_SIZE) ||
		    m->ext[i].offset > UINT64_MAX - m->ext[i].pages * HIB_PAGE_SIZE)
			return -EBADMSG;
	return 0;
}

int hib_block_hdr_check(const struct hib_block_hdr *b, uint32_t index, uint32_t max_raw)
{
	if (b->magic != HIB_BLOCK_MAGIC || b->index != index)
		return -EBADMSG;
	if (b->raw_bytes == 0 || b->raw_bytes > max_raw || b->raw_bytes % HIB_PAGE_SIZE)
		return -EBADMSG;
	uint32_t tag = (b->flags & HIB_BFLAG_SEALED) ? HIB_SEAL_TAG : 0;

	if (b->flags & ~HIB_BFLAG_SEALED)
		return -EBADMSG;
	switch (b->codec) {
	case HIB_BLOCK_RAW:
		if (b->stored_bytes != b->raw_bytes + tag)
			return -EBADMSG;
		break;
	case HIB_BLOCK_ZERO:
		/* Sealed images never use zero blocks: they would say where memory is empty. */
		if (b->stored_bytes != 0 || tag)
			return -EBADMSG;
		break;
	case HIB_BLOCK_LZ4:
	case HIB_BLOCK_ZSTD:
		/* Compressed payloads are kept only when they save a page, so they are
		 * always smaller than the raw block: a record never outgrows a raw one. */
		if (b->stored_bytes <= tag || b->stored_bytes >= b->raw_bytes + tag)
			return -EBADMSG;
		break;
	default:
		return -EBADMSG;
	}
	return 0;
}

uint64_t hib_block_stored_xxh3(const struct hib_block_hdr *b, const void *payload,
			       uint64_t image_id)
{
	struct hib_block_hdr tmp = *b;

	tmp.stored_xxh3 = 0;
	return hib_xxh3_two(&tmp, sizeof(tmp), payload, b->stored_bytes, image_id);
}

void hib_xxh3_reset(struct XXH3_state_s *st, uint64_t seed)
{
	/* libxxhash 0.8.1 reads the state's old seed to decide whether to rebuild its
	 * secret: a state must be initialised or the hash is wrong at random. */
	XXH3_INITSTATE(st);
	XXH3_64bits_reset_withSeed(st, seed);
}

void hib_header_init(struct hib_header *h, uint64_t image_id, uint64_t created_unix, uint32_t codec,
		     int32_t codec_level, uint32_t block_raw_bytes, const struct utsname *kernel,
		     const uint8_t orig_page[HIB_PAGE_SIZE])
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, HIB_HEADER_MAGIC, 16);
	h->version = HIB_FORMAT_VERSION;
	h->image_id = image_id;
	h->created_unix = created_unix;
	h->codec = codec;
	h->codec_level = codec_level;
	h->block_raw_bytes = block_raw_bytes;
	if (kernel) {
		snprintf(h->kernel_release, sizeof(h->kernel_release), "%s", kernel->release);
		snprintf(h->kernel_version, sizeof(h->kernel_version), "%s", kernel->version);
		snprintf(h->machine, sizeof(h->machine), "%.15s", kernel->machine);
	}
	memcpy(h->orig_tail, orig_page + HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE, HIB_SIG_TAIL_SIZE);
}

int hib_header_kernel_check(const struct hib_header *h, const struct utsname *kernel)
{
	if (strcmp(kernel->release, h->kernel_release) ||
	    strcmp(kernel->version, h->kernel_version) || strcmp(kernel->machine, h->machine))
		return -EXDEV;
	return 0;
}

void hib_tail_build(struct hib_sig_tail *t, const struct hib_header *h, uint64_t header_offset,
		    const uint8_t orig_page[HIB_PAGE_SIZE])
{
	memset(t, 0, sizeof(*t));
	memcpy(t->magic, HIB_TAIL_MAGIC, 16);
	t->version = h->version;
	t->page_size = HIB_PAGE_SIZE;
	t->header_offset = header_offset;
	t->image_id = h->image_id;
	t->header_xxh3 = hib_header_xxh3(h);
	t->created_unix = h->created_unix;
	memcpy(t->orig_sig, orig_page + HIB_PAGE_SIZE - HIB_SIG_LEN, HIB_SIG_LEN);
	memcpy(t->sig, HIB_IMAGE_SIG, HIB_SIG_LEN);
	hib_tail_seal(t);
}

void hib_map_page_build(struct hib_map_page *m, uint64_t image_id, const struct hib_extent *ext,
			size_t n, uint32_t index, uint64_t next_offset)
{
	size_t first = (size_t)index * HIB_MAP_ENTRIES;
	size_t cnt = first < n ? n - first : 0;

	if (cnt > HIB_MAP_ENTRIES)
		cnt = HIB_MAP_ENTRIES;
	memset(m, 0, sizeof(*m));
	memcpy(m->magic, HIB_MAP_MAGIC, 4);
	m->index = index;
	m->count = (uint32_t)cnt;
	m->next_offset = next_offset;
	memcpy(m->ext, ext + first, cnt * sizeof(struct hib_extent));
	hib_map_page_seal(m, image_id);
}

static uint32_t clamp_u32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static uint64_t report_sum(const struct hib_report *r)
{
	struct hib_report tmp = *r;

	tmp.xxh3 = 0;
	return XXH3_64bits_withSeed(&tmp, sizeof(tmp), r->image_id);
}

void hib_report_build(struct hib_report *r, const struct hib_header *h, uint64_t loaded_unix,
		      uint64_t load_ms, uint32_t load_threads)
{
	memset(r, 0, sizeof(*r));
	memcpy(r->magic, HIB_REPORT_MAGIC, sizeof(r->magic));
	r->image_id = h->image_id;
	r->stream_bytes = h->stream_bytes;
	r->stored_bytes = h->stat_stored_bytes;
	r->created_unix = h->created_unix;
	r->loaded_unix = loaded_unix;
	r->snapshot_ms = clamp_u32(h->stat_snapshot_ms);
	r->write_ms = clamp_u32(h->stat_write_ms);
	r->load_ms = clamp_u32(load_ms);
	r->write_threads = h->stat_threads;
	r->load_threads = load_threads;
	r->xxh3 = report_sum(r);
}

int hib_report_check(const struct hib_report *r, uint64_t image_id)
{
	if (memcmp(r->magic, HIB_REPORT_MAGIC, sizeof(r->magic)) != 0 || r->image_id != image_id ||
	    r->xxh3 != report_sum(r))
		return -ENOENT;
	return 0;
}
