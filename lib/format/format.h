/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The on-disk layout of a hibernation image, in one place.
 *
 * Every field is fixed-width and little-endian; every struct has explicit
 * padding and its size asserted. Nothing else in the project may define a
 * byte that lands on disk.
 *
 * Layout inside the target (swap partition, swapfile or plain file), in
 * pages of HIB_PAGE_SIZE bytes counted from the target's first page:
 *
 *   page 0       signature page: the swap header, with its last
 *                HIB_SIG_TAIL_SIZE bytes replaced by struct hib_sig_tail.
 *                Bytes before the tail (boot bits, swap version, uuid, label)
 *                are left as they are, so blkid still names the area.
 *   anywhere     data blocks, the extent map and the header page, in pages
 *                handed out by the target's allocator (ALLOC_SWAP_PAGE for
 *                swap). Their device byte offsets are what the map records.
 *
 * The image is a "logical" byte stream, laid page by page over the extents
 * of the map, in order. It is a sequence of blocks; each block starts on a
 * page boundary with a struct hib_block_hdr followed by its payload, and is
 * padded with zeros to the next page. Blocks decode independently, so reading
 * and decoding run in parallel.
 *
 * Write order (why it is safe): blocks, map, header, sync, THEN the signature
 * tail, sync. A power cut before the tail leaves a swap area whose page 0
 * still says SWAPSPACE2: nothing to resume, nothing lost. The resume side
 * rewrites the tail back to SWAPSPACE2 (and syncs) before it hands the image
 * to the kernel, so one image can never be resumed twice.
 */
#ifndef HIB_FORMAT_H
#define HIB_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define HIB_PAGE_SIZE 4096u

/* ---- signature page --------------------------------------------------- */

/*
 * The last 10 bytes of a swap area's first page name what it holds.
 * "SWAPSPACE2" is a usable swap area. Ours is "S2SUSPEND": util-linux swapon
 * and blkid know it as suspend data (TYPE="swsuspend"; swapon rewrites
 * SWAPSPACE2 before use, so a normal boot can never swap over our image and
 * then resume it), and the kernel's own resume only acts on "S1SUSPEND", so
 * it never tries to read our format.
 */
#define HIB_SWAP_SIG "SWAPSPACE2"
#define HIB_IMAGE_SIG "S2SUSPEND\0"
#define HIB_SIG_LEN 10u
/* A plain image file (no swap) carries this where a swap area has SWAPSPACE2. */
#define HIB_FILE_SIG "HIBIMGFILE"

#define HIB_TAIL_MAGIC "HIBERNATE-TAIL01" /* 16 bytes, no NUL */
#define HIB_FORMAT_VERSION 2u             /* 2: stream_xxh3 chains the blocks' raw_xxh3 */
/*
 * The version field's high 16 bits are features a reader must know to read
 * the image (as ext4's incompat flags): the low 16 bits stay
 * HIB_FORMAT_VERSION. An image uses a feature bit only when it needs it, so
 * every other image stays readable by a binary that knows no features, and
 * such a binary refuses one that has them as "another format version" before
 * it asks for anything. Tail and header carry the same value.
 */
#define HIB_FEATURE_TPM (1u << 16) /* the key is sealed to the TPM: HIB_KDF_TPM2 */
/* With HIB_FEATURE_TPM: the data key is wrapped under the image's sealed key
 * combined with the enrolled machine key (struct hib_tpm_machine), so only
 * this machine's writer makes an image its resume opens. */
#define HIB_FEATURE_TPM_BOUND (1u << 17)
#define HIB_FEATURES_KNOWN (HIB_FEATURE_TPM | HIB_FEATURE_TPM_BOUND)
#define HIB_SIG_TAIL_SIZE 256u

/* Placed at byte HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE of page 0. */
struct hib_sig_tail {
	uint8_t magic[16];      /* HIB_TAIL_MAGIC */
	uint32_t version;       /* HIB_FORMAT_VERSION | HIB_FEATURE_* */
	uint32_t page_size;     /* HIB_PAGE_SIZE */
	uint64_t header_offset; /* byte offset of the header page, from the start of the device */
	uint64_t image_id;      /* random per image; seeds every checksum of this image */
	uint64_t header_xxh3;   /* XXH3-64 of the header page, seeded with image_id */
	uint64_t created_unix;  /* seconds since the epoch, when the image was written */
	uint64_t tail_xxh3;     /* XXH3-64 of this struct with this field zero (seed 0) */
	uint8_t reserved[172];  /* zero */
	uint8_t orig_sig[HIB_SIG_LEN]; /* the swap signature we replaced ("SWAPSPACE2") */
	uint8_t sig[HIB_SIG_LEN];      /* HIB_IMAGE_SIG */
};
_Static_assert(sizeof(struct hib_sig_tail) == HIB_SIG_TAIL_SIZE, "signature tail size");
_Static_assert(offsetof(struct hib_sig_tail, sig) == HIB_SIG_TAIL_SIZE - HIB_SIG_LEN,
	       "signature must end the page");

/* ---- header page ------------------------------------------------------ */

/*
 * A block filesystem that was mounted when the image was made, and the state
 * of its superblock right after the snapshot (processes and the filesystems'
 * kernel threads frozen, everything synced). If that state differs at resume,
 * the filesystem was mounted or written since (booted without resuming,
 * mounted elsewhere): restoring memory that remembers the old state would
 * corrupt it, so resume refuses.
 */
#define HIB_MAX_FS 32

/*
 * Every writable block filesystem is recorded. ext*, xfs and btrfs were the
 * first (format version 2 as first written); the later types go after them,
 * counted by nr_fs_later, where readers that know only the first never look:
 * such a reader judges the first nr_fs records as it always did.
 */
enum hib_fs_type {
	HIB_FS_EXT = 1,
	HIB_FS_XFS = 2,
	HIB_FS_BTRFS = 3,
	HIB_FS_VFAT = 4,  /* uuid[0..3]: the volume serial; digest of the FAT region */
	HIB_FS_F2FS = 5,  /* digest of the superblock and both checkpoint packs' heads */
	HIB_FS_OTHER = 6, /* no comparison: uuid holds the type's name (NUL-padded) */
};

struct hib_fs_state {
	uint8_t uuid[16]; /* the filesystem's UUID, to find it at resume */
	uint64_t devnum;  /* st_rdev when the image was made (for messages) */
	uint64_t sb_xxh3; /* XXH3-64 of its superblock region (see enum hib_fs_type) */
	uint32_t fs_type; /* enum hib_fs_type */
	uint32_t pad;
};
_Static_assert(sizeof(struct hib_fs_state) == 40, "fs state size");

#define HIB_HEADER_MAGIC "HIBERNATE-HEAD01" /* 16 bytes, no NUL */

/*
 * The codecs, as the header's codec field names them. These numbers are the
 * authoritative ones: block records (enum hib_block_codec) and the options'
 * choice (include/hibernate.h, enum hib_codec_choice, asserted in
 * lib/engine/options.c) use the same, and they are on disk, so they are
 * pinned here: renumbering fails to compile.
 */
enum hib_codec { HIB_CODEC_NONE = 0, HIB_CODEC_LZ4 = 1, HIB_CODEC_ZSTD = 2, HIB_CODEC_MAX };
_Static_assert(HIB_CODEC_NONE == 0 && HIB_CODEC_LZ4 == 1 && HIB_CODEC_ZSTD == 2,
	       "codec numbers are on disk");

/* Header flags. */
#define HIB_HFLAG_PLATFORM (1u << 0)  /* written with platform (ACPI S4) support */
#define HIB_HFLAG_ENCRYPTED (1u << 1) /* blocks sealed, see struct hib_crypt */

/*
 * Encryption. Every block's payload is sealed with XChaCha20-Poly1305 under a
 * random data key (nonce: image_id, block index; additional data: the block
 * header), and the header is authenticated with a BLAKE2b MAC under the same
 * key. The data key is stored only wrapped (sealed) under a key-encryption
 * key derived from the passphrase (Argon2id) or the key file (keyed BLAKE2b
 * with the salt). Nothing secret is ever on disk in the clear.
 */
enum hib_kdf { HIB_KDF_ARGON2ID = 1, HIB_KDF_KEYFILE = 2, HIB_KDF_TPM2 = 3 };

/*
 * The Argon2id parameters are read before the header's MAC can be checked
 * (the MAC key is what they unlock), so a reader bounds them: a forged header
 * must not make resume spin for hours or ask for more memory than an
 * initramfs has.  Writers use libsodium's INTERACTIVE values (2 passes,
 * 64 MiB) unless configured (kdf-passes, kdf-memory), and only within
 * [MIN, MAX]: readers take all of that (lib/pipeline/crypt.c asserts it).
 */
#define HIB_ARGON_OPS_MIN 1ull
#define HIB_ARGON_OPS_DEFAULT 2ull
#define HIB_ARGON_OPS_MAX 4ull /* libsodium's SENSITIVE */
#define HIB_ARGON_MEM_MIN (8ull << 20)
#define HIB_ARGON_MEM_DEFAULT (64ull << 20)
#define HIB_ARGON_MEM_MAX (256ull << 20) /* libsodium's MODERATE */

struct hib_crypt {
	uint32_t kdf; /* enum hib_kdf */
	uint32_t pad;
	uint64_t opslimit; /* Argon2id parameters */
	uint64_t memlimit;
	uint8_t salt[16];
	uint8_t wrap_nonce[24];
	uint8_t wrapped_key[48]; /* the 32-byte data key, sealed (16-byte tag) */
	uint8_t header_mac[32];  /* BLAKE2b-256 of the header page with this field zero */
};
_Static_assert(sizeof(struct hib_crypt) == 144, "crypt size");

/*
 * HIB_KDF_TPM2: the key-encryption key is random, and sealed to the TPM 2.0
 * as a keyed-hash object under the owner hierarchy's storage primary key (the
 * well-known ECC P-256 template, recreated at each use), with a policy on the
 * PCRs of pcr_mask in the SHA-256 bank (PolicyPCR), plus the PIN with
 * HIB_TPM_PIN (PolicyAuthValue). With HIB_TPM_FALLBACK the data key is also
 * wrapped under a passphrase (Argon2id, as HIB_KDF_ARGON2ID): a changed PCR
 * then asks for it instead of losing the image.
 */
#define HIB_TPM_PIN (1u << 0)
#define HIB_TPM_FALLBACK (1u << 1)
#define HIB_TPM_BLOB_MAX 640u /* marshalled TPM2B_PUBLIC + TPM2B_PRIVATE */
#define HIB_TPM_PCRS_MAX 8u   /* PCRs in a policy, out of 0..23 */

struct hib_tpm {
	uint32_t pcr_mask;    /* bit n: PCR n of the SHA-256 bank is in the policy */
	uint32_t flags;       /* HIB_TPM_* */
	uint16_t public_len;  /* marshalled TPM2B_PUBLIC, at blob[0] */
	uint16_t private_len; /* marshalled TPM2B_PRIVATE, right after it */
	uint32_t pad;
	uint8_t blob[HIB_TPM_BLOB_MAX];
	/* The policy's PCRs when the key was sealed, lowest first: not needed to
	 * unseal, but they name the PCR that changed when the TPM refuses. */
	uint8_t pcr_values[HIB_TPM_PCRS_MAX][32];
	/* HIB_TPM_FALLBACK: the data key wrapped under the passphrase. */
	uint64_t fb_opslimit;
	uint64_t fb_memlimit;
	uint8_t fb_salt[16];
	uint8_t fb_wrap_nonce[24];
	uint8_t fb_wrapped_key[48];
	/* HIB_FEATURE_TPM_BOUND: the id of the enrollment whose machine key the
	 * image is bound to (not secret: it names it in messages); else zero. */
	uint8_t machine_id[8];
};
_Static_assert(sizeof(struct hib_tpm) == 1024, "tpm size");

/*
 * The machine key's enrollment (/var/lib/hibernate/tpm-machine.key, and a
 * copy in the initramfs): a random 32-byte key sealed to the TPM (as an
 * image's key, struct hib_tpm: PCRs only, no PIN, no fallback) that every
 * TPM image of this machine is bound to (HIB_FEATURE_TPM_BOUND), and the name
 * of the storage key it was sealed under, which every later use checks
 * (a TPM2B_NAME's bytes: the name algorithm, then the digest).
 */
#define HIB_MACHINE_MAGIC "HIBERNATE-TPMK01" /* 16 bytes, no NUL */
#define HIB_MACHINE_VERSION 1u
#define HIB_TPM_NAME_MAX 64u

struct hib_tpm_machine {
	uint8_t magic[16]; /* HIB_MACHINE_MAGIC */
	uint32_t version;  /* HIB_MACHINE_VERSION */
	uint16_t srk_name_len;
	uint16_t pad;
	uint8_t machine_id[8]; /* random: what a bound image names */
	uint8_t srk_name[HIB_TPM_NAME_MAX];
	struct hib_tpm sealed; /* pcr_mask, public_len, private_len, blob, pcr_values */
	uint64_t xxh3;         /* XXH3-64 of this struct with this field zero (seed 0) */
};
_Static_assert(sizeof(struct hib_tpm_machine) == 1128, "machine key size");

/*
 * What the resume side writes over the header page once it has invalidated
 * the image, instead of zeros: the cycle's numbers, nothing secret (no key
 * material, no map).  The resumed system knows where its header page is (it
 * allocated it before the snapshot), logs the numbers (so the journal of the
 * resumed system has them) and zeros the page.
 */
#define HIB_REPORT_MAGIC "HIBERNATE-RPRT01" /* 16 bytes, no NUL */

struct hib_report {
	uint8_t magic[16]; /* HIB_REPORT_MAGIC */
	uint64_t image_id;
	uint64_t stream_bytes;
	uint64_t stored_bytes;
	uint64_t created_unix; /* the image was written */
	uint64_t loaded_unix;  /* the resume side restores it */
	uint32_t snapshot_ms;  /* hibernate: freeze + atomic copy */
	uint32_t write_ms;     /* hibernate: stream to disk */
	uint32_t load_ms;      /* resume: from start to restore */
	uint32_t write_threads;
	uint32_t load_threads;
	uint32_t pad;
	uint64_t xxh3; /* XXH3-64 of this struct with this field zero, seed image_id */
};
_Static_assert(sizeof(struct hib_report) == 88, "report size");

/*
 * The block sizes a writer makes and a reader accepts: powers of two from
 * HIB_BLOCK_MIN_BYTES to HIB_BLOCK_MAX_BYTES (hibernate writes 256 KiB).
 * Both sides hold a few blocks per thread in memory, and a reader takes the
 * size from a header it cannot authenticate yet (the MAC key comes later):
 * the bound keeps a forged one from claiming gigabytes in the initramfs.
 * Readers once took any page multiple up to 16 MiB; the hibernate command
 * never wrote anything but 256 KiB.
 */
#define HIB_BLOCK_MIN_BYTES HIB_PAGE_SIZE
#define HIB_BLOCK_MAX_BYTES (4u << 20)

static inline int hib_block_size_ok(uint32_t bytes)
{
	return bytes >= HIB_BLOCK_MIN_BYTES && bytes <= HIB_BLOCK_MAX_BYTES &&
	       (bytes & (bytes - 1)) == 0;
}

/* Block flags. */
#define HIB_BFLAG_SEALED (1u << 0) /* payload encrypted; stored_bytes includes the tag */
#define HIB_SEAL_TAG 16u

struct hib_header {
	uint8_t magic[16]; /* HIB_HEADER_MAGIC */
	uint32_t version;  /* HIB_FORMAT_VERSION | HIB_FEATURE_* */
	uint32_t flags;    /* HIB_HFLAG_* */
	uint64_t image_id; /* same as the tail's */
	uint64_t created_unix;

	/* The kernel that wrote the image: restoring it into another one crashes. */
	char kernel_release[65];  /* uname -r, NUL-padded */
	char kernel_version[129]; /* uname -v (build number and date) */
	char machine[16];         /* uname -m */
	uint8_t pad0[6];

	/* The stream /dev/snapshot produced and will take back. */
	uint64_t stream_bytes; /* bytes read from /dev/snapshot */
	uint64_t stream_xxh3;  /* XXH3-64, seeded with image_id, of every block's
				    * raw_xxh3 in order (each 8 bytes, little-endian):
				    * the whole stream's check, without a serial pass
				    * over its bytes (0 when encrypted) */

	/* How the stream is stored. */
	uint32_t codec; /* enum hib_codec requested (blocks say what they used) */
	int32_t codec_level;
	uint32_t block_raw_bytes; /* stream bytes per block (the last may be shorter) */
	uint32_t nr_blocks;
	uint64_t data_pages; /* logical pages holding blocks */

	/* Where the logical pages live: a chain of map pages. */
	uint64_t map_offset; /* byte offset of the first map page */
	uint32_t map_pages;
	uint32_t map_extents;

	/* Statistics of the write, for `hibernate status` and the journal. */
	uint64_t stat_snapshot_ms;  /* FREEZE..CREATE_IMAGE returned */
	uint64_t stat_write_ms;     /* first stream byte..header written */
	uint64_t stat_stored_bytes; /* bytes of block records on disk */
	uint32_t stat_threads;
	uint32_t pad1;

	/* The bytes of page 0 that the tail replaced, to put back exactly. */
	uint8_t orig_tail[HIB_SIG_TAIL_SIZE];

	/* Mounted block filesystems and their state (see struct hib_fs_state):
	 * fs[0, nr_fs) ext*, xfs, btrfs; then nr_fs_later of the later types (0 in
	 * images of older writers, whose field was padding). */
	uint32_t nr_fs;
	uint32_t nr_fs_later;
	struct hib_fs_state fs[HIB_MAX_FS];

	struct hib_crypt crypt; /* with HIB_HFLAG_ENCRYPTED */
	struct hib_tpm tpm;     /* with HIB_KDF_TPM2 (HIB_FEATURE_TPM); zero otherwise */

	uint8_t reserved[HIB_PAGE_SIZE - 16 - 4 - 4 - 8 - 8 - 65 - 129 - 16 - 6 - 8 - 8 - 4 - 4 -
			 4 - 4 - 8 - 8 - 4 - 4 - 8 - 8 - 8 - 4 - 4 - HIB_SIG_TAIL_SIZE - 8 -
			 HIB_MAX_FS * sizeof(struct hib_fs_state) - 8 - sizeof(struct hib_crypt) -
			 sizeof(struct hib_tpm)];
	uint64_t header_xxh3_self; /* XXH3-64 of the page up to here, seed image_id */
};
_Static_assert(sizeof(struct hib_header) == HIB_PAGE_SIZE, "header is one page");

/* ---- extent map ------------------------------------------------------- */

#define HIB_MAP_MAGIC "HMAP"

struct hib_extent {
	uint64_t offset; /* device byte offset, page aligned */
	uint64_t pages;  /* length in pages */
};
_Static_assert(sizeof(struct hib_extent) == 16, "extent size");

#define HIB_MAP_ENTRIES ((HIB_PAGE_SIZE - 32) / sizeof(struct hib_extent))

struct hib_map_page {
	uint8_t magic[4]; /* HIB_MAP_MAGIC */
	uint32_t index;   /* 0, 1, 2 ... in chain order */
	uint32_t count;   /* extents used in this page */
	uint32_t pad;
	uint64_t next_offset; /* byte offset of the next map page, 0 at the end */
	uint64_t xxh3;        /* XXH3-64 of the page with this field zero, seed image_id */
	struct hib_extent ext[HIB_MAP_ENTRIES];
};
_Static_assert(sizeof(struct hib_map_page) == HIB_PAGE_SIZE, "map page is one page");

/* ---- blocks ------------------------------------------------------------ */

#define HIB_BLOCK_MAGIC 0x4b4c4248u /* "HBLK" */

/* Block codecs: what the payload is. A compressed block says its codec by the
 * header's number (enum hib_codec); the two that are not codecs come after them. */
enum hib_block_codec {
	HIB_BLOCK_RAW = HIB_CODEC_NONE, /* payload = the stream bytes as they are */
	HIB_BLOCK_LZ4 = HIB_CODEC_LZ4,
	HIB_BLOCK_ZSTD = HIB_CODEC_ZSTD,
	HIB_BLOCK_ZERO = 3, /* every stream byte is zero; no payload */
};
/* A new codec needs a block number of its own, not ZERO's. */
_Static_assert(HIB_BLOCK_ZERO == 3 && (int)HIB_BLOCK_ZERO >= (int)HIB_CODEC_MAX,
	       "block codec numbers are on disk");

struct hib_block_hdr {
	uint32_t magic;        /* HIB_BLOCK_MAGIC */
	uint32_t index;        /* block number, from 0 */
	uint32_t raw_bytes;    /* stream bytes this block decodes to */
	uint32_t stored_bytes; /* payload bytes after this header */
	uint16_t codec;        /* enum hib_block_codec */
	uint16_t flags;
	uint32_t pad;
	uint64_t raw_xxh3;      /* XXH3-64 of the decoded bytes, seed image_id */
	uint64_t stream_offset; /* where the decoded bytes start in the stream */
	uint64_t stored_xxh3;   /* XXH3-64 of header (this field zero) + payload, seed image_id */
	uint8_t reserved[16];
};
_Static_assert(sizeof(struct hib_block_hdr) == 64, "block header size");

/* Pages a block record occupies on disk. */
static inline uint64_t hib_block_pages(uint32_t stored_bytes)
{
	return ((uint64_t)sizeof(struct hib_block_hdr) + stored_bytes + HIB_PAGE_SIZE - 1) /
	       HIB_PAGE_SIZE;
}

/* ---- encode / check (lib/format/format.c) ------------------------------ */
/*
 * All structs above are kept in host order in memory; the project builds on
 * little-endian hosts only (meson refuses others), so encoding is a copy.
 * The check functions validate everything a reader relies on and return 0,
 * or -EBADMSG naming nothing (the caller knows what it read and from where).
 */
struct hib_sig_tail;

/* 0 for a version field this reader reads (hib_sig_tail, hib_header), else -EPROTO. */
int hib_version_check(uint32_t version);

int hib_tail_is_ours(const uint8_t page[HIB_PAGE_SIZE]);
int hib_tail_check(const struct hib_sig_tail *t);
void hib_tail_seal(struct hib_sig_tail *t);

int hib_header_check(const struct hib_header *h, uint64_t image_id, uint64_t expect_xxh3);
void hib_header_seal(struct hib_header *h);
uint64_t hib_header_xxh3(const struct hib_header *h);

int hib_map_page_check(const struct hib_map_page *m, uint64_t image_id, uint32_t index);
void hib_map_page_seal(struct hib_map_page *m, uint64_t image_id);

int hib_block_hdr_check(const struct hib_block_hdr *b, uint32_t index, uint32_t max_raw);
uint64_t hib_block_stored_xxh3(const struct hib_block_hdr *b, const void *payload,
			       uint64_t image_id);

/* The report the resume side leaves: -ENOENT unless it is one, of image @image_id,
 * and its checksum holds. */
int hib_report_check(const struct hib_report *r, uint64_t image_id);

/* A machine key's enrollment: 0, or -EBADMSG (not one, damaged, or out of
 * bounds), -EPROTO another version. hib_tpm_machine_seal sets its checksum. */
int hib_tpm_machine_check(const struct hib_tpm_machine *m);
void hib_tpm_machine_seal(struct hib_tpm_machine *m);

/*
 * Start a seeded streaming XXH3-64 (XXH3_state_t), as every checksum of the
 * format that is computed in parts is (stream_xxh3, a block's stored_xxh3).
 */
struct XXH3_state_s;
void hib_xxh3_reset(struct XXH3_state_s *st, uint64_t seed);

/* ---- builders (lib/format/format.c) ------------------------------------ */
/*
 * Every metadata byte a writer puts on disk is laid out here, from what the
 * caller knows; nothing is read or written. (Block records are built by
 * lib/pipeline/codec.c and checked above.)
 */
struct utsname;

/*
 * A new header: magic, version, @image_id, @created_unix, how the stream is
 * stored (@codec, enum hib_codec; @codec_level; @block_raw_bytes), the kernel
 * that writes it (@kernel, from uname(); NULL leaves it empty), and the tail
 * bytes of @orig_page (page 0 as it was) that the signature will replace.
 * Everything else zero, for the writer to fill in and seal.
 */
void hib_header_init(struct hib_header *h, uint64_t image_id, uint64_t created_unix, uint32_t codec,
		     int32_t codec_level, uint32_t block_raw_bytes, const struct utsname *kernel,
		     const uint8_t orig_page[HIB_PAGE_SIZE]);
/* 0 when @kernel (from uname()) is the kernel the header says wrote the image,
 * else -EXDEV. */
int hib_header_kernel_check(const struct hib_header *h, const struct utsname *kernel);

/*
 * The signature tail of the image whose sealed header @h is at byte
 * @header_offset: the image id and time from the header, the checksum of its
 * page, the signature it replaces from @orig_page. Sealed.
 */
void hib_tail_build(struct hib_sig_tail *t, const struct hib_header *h, uint64_t header_offset,
		    const uint8_t orig_page[HIB_PAGE_SIZE]);

/*
 * Page @index of the map chain of the @n extents @ext (HIB_MAP_ENTRIES a page,
 * in order), pointing at the next page at @next_offset (0: the last). Sealed
 * with @image_id.
 */
void hib_map_page_build(struct hib_map_page *m, uint64_t image_id, const struct hib_extent *ext,
			size_t n, uint32_t index, uint64_t next_offset);

/* The report of the image whose header is @h, loaded at @loaded_unix in
 * @load_ms by @load_threads threads. Sealed. */
void hib_report_build(struct hib_report *r, const struct hib_header *h, uint64_t loaded_unix,
		      uint64_t load_ms, uint32_t load_threads);

#endif
