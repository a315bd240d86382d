// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Writes the committed seed corpus: tests/fuzz/make-seeds.sh builds and runs
 * it as `make-seeds tests/fuzz/corpus`. Every seed comes from a real image
 * written through the fake snapshot device (never /dev/snapshot), or is a
 * real configuration file or kernel command line. Deterministic: running it
 * again rewrites the same bytes (with the same lz4/zstd versions).
 */
#include <sys/stat.h>

#include "pipeline/codec.h"
#include "fuzz-image.h"
#include "snapshot/snapshot-fake.h"
#include "snapshot/snapshot.h"
#include "util/util.h"

static const char *outdir;

static void put(const char *target, const char *name, const void *data, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, target);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/%s", outdir, target, name);
	f = fopen(path, "we");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/* Two parts joined, for inputs with a prefix. */
static void put2(const char *target, const char *name, const void *a, size_t alen, const void *b,
		 size_t blen)
{
	uint8_t *buf = malloc(alen + blen);

	if (!buf)
		abort();
	memcpy(buf, a, alen);
	memcpy(buf + alen, b, blen);
	put(target, name, buf, alen + blen);
	free(buf);
}

static void put_str(const char *target, const char *name, const char *s)
{
	put(target, name, s, strlen(s));
}

/* Without its trailing zero pages: the raw mode of fuzz_image pads them back. */
static size_t trimmed(const uint8_t *img, size_t size)
{
	while (size >= HIB_PAGE_SIZE) {
		size_t i;
		for (i = size - HIB_PAGE_SIZE; i < size && img[i] == 0; i++)
			;
		if (i < size)
			break;
		size -= HIB_PAGE_SIZE;
	}
	return size;
}

static struct hib_sig_tail *tail_of(uint8_t *page0)
{
	return (struct hib_sig_tail *)(page0 + HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE);
}

/* ---- fuzz_tail ---------------------------------------------------------- */

static void seeds_tail(uint8_t *const img[])
{
	uint8_t page[HIB_PAGE_SIZE];
	struct memfile mf;

	put("tail", "image-lz4", img[1], HIB_PAGE_SIZE);
	put("tail", "image-encrypted", img[2], HIB_PAGE_SIZE);
	put("tail", "tail-only", img[1] + HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE, HIB_SIG_TAIL_SIZE);

	memcpy(page, img[1], sizeof(page));
	page[HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE + 100] ^= 1; /* reserved byte: checksum breaks */
	put("tail", "broken-checksum", page, sizeof(page));

	memcpy(page, img[1], sizeof(page));
	tail_of(page)->version = 2;
	hib_tail_seal(tail_of(page));
	put("tail", "other-version", page, sizeof(page));

	memcpy(page, img[1], sizeof(page));
	memcpy(tail_of(page)->orig_sig, HIB_FILE_SIG, HIB_SIG_LEN);
	hib_tail_seal(tail_of(page));
	put("tail", "image-in-prepared-file", page, sizeof(page));

	memfile_open(&mf, "seed-swap");
	make_swap_file(mf.fd, 8);
	memfile_get(&mf, page, sizeof(page), 0);
	close(mf.fd);
	put("tail", "swapspace2", page, sizeof(page));
	memcpy(page + HIB_PAGE_SIZE - HIB_SIG_LEN, "S1SUSPEND\0", HIB_SIG_LEN);
	put("tail", "kernel-s1suspend", page, sizeof(page));
	memset(page + HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE, 0, HIB_SIG_TAIL_SIZE);
	memcpy(page + HIB_PAGE_SIZE - HIB_SIG_LEN, HIB_FILE_SIG, HIB_SIG_LEN);
	put("tail", "prepared-file", page, sizeof(page));
}

/* ---- fuzz_header, fuzz_map ---------------------------------------------- */

static void seeds_header_map(uint8_t *const img[], const size_t size[])
{
	static struct fuzz_layout L;

	for (unsigned v = 1; v < FUZZ_NBASE; v++) {
		char name[64];
		uint8_t pre[32] = { 0 };
		uint8_t *pages;
		uint32_t dev_pages = (uint32_t)(size[v] / HIB_PAGE_SIZE);

		fuzz_layout_parse(img[v], size[v], &L);
		if (!L.hdr || !L.nmap)
			abort();
		snprintf(name, sizeof(name), "header-%s", fuzz_bases[v].name);
		put("header", name, L.hdr, HIB_PAGE_SIZE);

		/* [image id][device pages][signature page][16 lookups][the chain] */
		memcpy(pre, &L.image_id, 8);
		memcpy(pre + 8, &dev_pages, 4);
		for (int i = 0; i < 16; i++)
			pre[16 + i] = (uint8_t)(i * 17);
		pages = malloc((size_t)L.nmap * HIB_PAGE_SIZE);
		if (!pages)
			abort();
		for (uint32_t i = 0; i < L.nmap; i++)
			memcpy(pages + (size_t)i * HIB_PAGE_SIZE, img[v] + L.map_off[i],
			       HIB_PAGE_SIZE);
		snprintf(name, sizeof(name), "map-%s", fuzz_bases[v].name);
		put2("map", name, pre, sizeof(pre), pages, (size_t)L.nmap * HIB_PAGE_SIZE);
		free(pages);
	}
}

/* ---- fuzz_block --------------------------------------------------------- */

static void stream_pages(uint8_t *buf, uint64_t first, uint64_t n)
{
	struct hib_fake_params fp = fake_params(21, 64, 128, 0);
	struct hib_snapshot *s;
	uint8_t skip[HIB_PAGE_SIZE];
	int in_suspend;

	if (hib_snapshot_fake_new(&fp, HIB_SNAP_HIBERNATE, &s) < 0 || s->ops->freeze(s) < 0 ||
	    s->ops->create_image(s, &in_suspend) < 0)
		abort();
	for (uint64_t i = 0; i < first; i++)
		if (s->ops->read_pages(s, skip, 1) != HIB_PAGE_SIZE)
			abort();
	for (uint64_t i = 0; i < n; i++)
		if (s->ops->read_pages(s, buf + i * HIB_PAGE_SIZE, 1) != HIB_PAGE_SIZE)
			abort();
	hib_snapshot_close(s);
}

static void seeds_block(void)
{
	static const struct {
		const char *name;
		enum hib_codec_choice codec;
		bool key;
		uint64_t first; /* stream page */
	} recs[] = {
		{ "lz4", HIB_COMPRESS_LZ4, false, 8 },
		{ "zstd", HIB_COMPRESS_ZSTD, false, 12 },
		{ "raw", HIB_COMPRESS_NONE, false, 16 },
		{ "lz4-sealed", HIB_COMPRESS_LZ4, true, 20 },
		{ "zstd-sealed", HIB_COMPRESS_ZSTD, true, 24 },
		{ "raw-sealed", HIB_COMPRESS_NONE, true, 28 },
	};
	const uint32_t pages = 4, block = pages * HIB_PAGE_SIZE;
	size_t bound = codec_record_bound(block);
	uint8_t *raw = calloc(1, block), *rec = calloc(1, bound);

	if (!raw || !rec)
		abort();
	for (size_t i = 0; i < ARRAY_SIZE(recs); i++) {
		struct hib_codec_ctx *c;
		struct hib_block_hdr *h = (struct hib_block_hdr *)rec;
		uint8_t pre[2] = { recs[i].key ? 1 : 0, (uint8_t)(pages - 1) };
		char name[64];

		stream_pages(raw, recs[i].first, pages);
		if (codec_ctx_new(recs[i].codec, 0, block, &c) < 0)
			abort();
		codec_ctx_set_seed(c, FUZZ_IMAGE_ID);
		codec_ctx_set_key(c, recs[i].key ? fuzz_data_key : NULL);
		if (codec_encode(c, raw, block, (uint32_t)i, (uint64_t)i * block, rec) < 0)
			abort();
		codec_seal(c, rec);
		codec_ctx_free(c);
		snprintf(name, sizeof(name), "record-%s", recs[i].name);
		put2("block", name, pre, sizeof(pre), rec, sizeof(*h) + h->stored_bytes);
		/* The same data, round trip. */
		snprintf(name, sizeof(name), "roundtrip-%s", recs[i].name);
		pre[0] = 8;
		if (!recs[i].key)
			put2("block", name, pre, sizeof(pre), raw, block);
	}
	{
		struct hib_codec_ctx *c;
		uint8_t pre[2] = { 0, 0 };

		memset(raw, 0, block);
		if (codec_ctx_new(HIB_COMPRESS_LZ4, 0, block, &c) < 0)
			abort();
		codec_ctx_set_seed(c, FUZZ_IMAGE_ID);
		if (codec_encode(c, raw, HIB_PAGE_SIZE, 3, 0, rec) < 0)
			abort();
		codec_seal(c, rec);
		codec_ctx_free(c);
		put2("block", "record-zero", pre, sizeof(pre), rec, sizeof(struct hib_block_hdr));
	}
	free(raw);
	free(rec);
}

/* ---- fuzz_image --------------------------------------------------------- */

static void put_image_patch(const char *name, uint8_t mode, uint8_t anchor, uint16_t off,
			    const void *bytes, uint8_t len)
{
	uint8_t buf[6 + 255];

	buf[0] = mode;
	buf[1] = 0;
	buf[2] = anchor;
	memcpy(buf + 3, &off, 2);
	buf[5] = len;
	memcpy(buf + 6, bytes, len);
	put("image", name, buf, 6 + (size_t)len);
}

static void seeds_image(void)
{
	/* Small images for raw mode: all share fuzz_bases[0]'s stream. */
	static const struct fuzz_base tiny[] = {
		{ "tiny-lz4", 11, 15, 48, 0, HIB_COMPRESS_LZ4, 16384, false },
		{ "tiny-zstd-encrypted", 11, 15, 48, 3, HIB_COMPRESS_ZSTD, 16384, true },
		{ "tiny-none", 11, 15, 48, 0, HIB_COMPRESS_NONE, 8192, false },
	};
	uint8_t mode[2] = { 0, 0 };
	char name[64];

	for (size_t i = 0; i < ARRAY_SIZE(tiny); i++) {
		size_t size;
		uint8_t *img = fuzz_make_image(&tiny[i], &size);

		snprintf(name, sizeof(name), "raw-%s", tiny[i].name);
		put2("image", name, mode, 2, img, trimmed(img, size));
		free(img);
	}
	{
		struct memfile mf;
		uint8_t page[2 + HIB_PAGE_SIZE];

		memfile_open(&mf, "seed-swap");
		make_swap_file(mf.fd, 64);
		memfile_get(&mf, page + 2, HIB_PAGE_SIZE, 0);
		close(mf.fd);
		page[0] = page[1] = 0;
		put("image", "raw-swapspace2", page, sizeof(page));
	}
	/* Overlay mode: each base as it is, with and without fix-ups, both ways. */
	for (uint8_t v = 1; v < FUZZ_NBASE; v++) {
		mode[0] = v;
		mode[1] = 0;
		snprintf(name, sizeof(name), "base-%s", fuzz_bases[v].name);
		put("image", name, mode, 2);
		mode[0] = v | FUZZ_FIX_ALL << 2 | 0x40;
		mode[1] = 0x40; /* progress */
		snprintf(name, sizeof(name), "base-%s-fixup-threads", fuzz_bases[v].name);
		put("image", name, mode, 2);
		mode[0] = v | 0x80;
		mode[1] = 0;
		snprintf(name, sizeof(name), "base-%s-invalidate", fuzz_bases[v].name);
		put("image", name, mode, 2);
		mode[0] = v;
		mode[1] = 0x10; /* the kernel wants one page more */
		snprintf(name, sizeof(name), "base-%s-short", fuzz_bases[v].name);
		put("image", name, mode, 2);
	}
	/* The encrypted image: wrong key file, no way to ask, giving up, read-only. */
	for (uint8_t m = 1; m <= 3; m++) {
		mode[0] = 2;
		mode[1] = m;
		snprintf(name, sizeof(name), "encrypted-secret-%s",
			 m == 1   ? "wrong"
			 : m == 2 ? "none"
				  : "cancel");
		put("image", name, mode, 2);
	}
	mode[0] = 2;
	mode[1] = 8;
	put("image", "encrypted-read-only", mode, 2);
	{
		uint32_t one = 1, big = 64u << 20;
		uint64_t zero = 0;
		uint8_t fix = FUZZ_FIX_ALL << 2;

		/* A header field changed, checksums put right: the field checks decide. */
		put_image_patch("patch-header-nr-blocks", 1 | fix, 2,
				(uint16_t)offsetof(struct hib_header, nr_blocks), &one, 4);
		put_image_patch("patch-header-block-bytes", 3 | fix, 2,
				(uint16_t)offsetof(struct hib_header, block_raw_bytes), &big, 4);
		put_image_patch("patch-header-flags", 1 | fix, 2,
				(uint16_t)offsetof(struct hib_header, flags), &one, 4);
		/* The first map page's first extent, and its chain pointer. */
		put_image_patch("patch-map-extent", 1 | fix, 3,
				(uint16_t)offsetof(struct hib_map_page, ext), &zero, 8);
		put_image_patch("patch-map-next", 3 | fix, 3,
				(uint16_t)offsetof(struct hib_map_page, next_offset), &zero, 8);
		/* Block 1's header: stored size, codec. */
		put_image_patch("patch-block-stored", 1 | fix, 4 | 1 << 3,
				(uint16_t)offsetof(struct hib_block_hdr, stored_bytes), &one, 4);
		put_image_patch("patch-block-codec", 2 | fix, 4 | 1 << 3,
				(uint16_t)offsetof(struct hib_block_hdr, codec), &one, 2);
		/* The stream one page shorter / longer than its blocks hold (same count). */
		{
			uint64_t shorter = (fuzz_bases[1].stream_pages - 1) * HIB_PAGE_SIZE;
			uint64_t longer = (fuzz_bases[1].stream_pages + 1) * HIB_PAGE_SIZE;

			put_image_patch("patch-header-stream-shorter", 1 | fix, 2,
					(uint16_t)offsetof(struct hib_header, stream_bytes),
					&shorter, 8);
			put_image_patch("patch-header-stream-longer", 1 | fix, 2,
					(uint16_t)offsetof(struct hib_header, stream_bytes),
					&longer, 8);
		}
		/* The last block claims to be stored raw: its record runs past the map. */
		{
			uint32_t last = (uint32_t)((fuzz_bases[1].stream_pages * HIB_PAGE_SIZE +
						    fuzz_bases[1].block_bytes - 1) /
						   fuzz_bases[1].block_bytes) -
					1;
			uint32_t raw = (uint32_t)(fuzz_bases[1].stream_pages * HIB_PAGE_SIZE -
						  (uint64_t)last * fuzz_bases[1].block_bytes);
			uint8_t fields[6];

			memcpy(fields, &raw, 4);  /* stored_bytes = raw_bytes */
			memset(fields + 4, 0, 2); /* codec = HIB_BLOCK_RAW */
			put_image_patch("patch-block-last-past-map", 1 | fix,
					(uint8_t)(4 | (last & 31) << 3),
					(uint16_t)(offsetof(struct hib_block_hdr, stored_bytes) |
						   (last >> 5) << 12),
					fields, sizeof(fields));
		}
		/* The tail points the header elsewhere. */
		put_image_patch("patch-tail-header", 1 | fix, 1,
				(uint16_t)(HIB_PAGE_SIZE - HIB_SIG_TAIL_SIZE +
					   offsetof(struct hib_sig_tail, header_offset)),
				&zero, 8);
	}
}

/* ---- fuzz_config, fuzz_cmdline ------------------------------------------- */

static void seeds_text(void)
{
	put_str("config", "full.conf",
		"# /etc/hibernate.conf\n"
		"device = /dev/disk/by-uuid/0a1b2c3d-4e5f-6789-abcd-ef0123456789\n"
		"offset = 34816\n"
		"compress = zstd:3\n"
		"threads = 4\n"
		"image-size = 2048\n"
		"powerdown = platform\n"
		"loglevel = 4\n"
		"cancel = yes\n"
		"verify = true\n"
		"auto-swapon = 0\n"
		"encrypt = no\n"
		"key-file = /etc/hibernate.key\n");
	put_str("config", "quoted.conf",
		"  device = \"LABEL=my swap\"   \n"
		"\tcompress='lz4'\n"
		"image-size = min\n"
		"powerdown = suspend\n"
		"\n# done\n");
	put_str("config", "swapfile.conf",
		"device=/swapfile\nimage-size=default\npowerdown=reboot\n");
	put_str("config", "hooks.conf",
		"# hooks around the cycle\n"
		"systemd-hooks = yes\n"
		"pm-utils-hooks = off\n"
		"force = no\n"
		"hook-timeout = 120\n"
		"clock = yes\n"
		"network = NetworkManager\n"
		"unload-modules = \"iwlwifi btusb\"\n"
		"services = docker.service\n"
		"stop-programs = firefox\n"
		"switch-vt = 63\n"
		"lock-console = on\n"
		"OnSuspend 10 /usr/bin/logger hibernating\n"
		"OnResume 90 systemctl restart NetworkManager\n");
	put_str("config", "bad-hook.conf", "OnSuspend 100 true\n");
	put_str("config", "bad-key.conf", "devcie = /dev/sda2\n");
	put_str("config", "bad-value.conf", "threads = 65\n");
	put_str("config", "no-equals.conf", "compress zstd\n");
	put_str("config", "set-compress", "compress=zstd:19");

	put_str("cmdline", "debian",
		"BOOT_IMAGE=/boot/vmlinuz-6.1.0-18-amd64 root=UUID=4f1c2d3e-5a6b-7c8d-9e0f-a1b2c3d4e5f6 "
		"ro quiet resume=UUID=0a1b2c3d-4e5f-6789-abcd-ef0123456789 resume_offset=34816\n");
	put_str("cmdline", "label-quoted",
		"root=/dev/vda2 resume=LABEL=\"my swap\" splash noresume");
	put_str("cmdline", "devnum", "console=ttyS0 resume=8:3 hibernate=no");
	put_str("cmdline", "vm", "console=ttyS0 panic=-1 resume=/dev/vda1 nohibernate");
	put_str("cmdline", "offset-junk",
		"resume=PARTUUID=abc resume_offset=-5 resume_offset=99999999999999999999999");
	put_str("cmdline", "codec-zstd", "zstd:3");
	put_str("cmdline", "codec-lz4", "lz4");
	put_str("cmdline", "proc-swaps",
		"Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
		"/dev/vda1                               partition\t1048572\t\t0\t\t-2\n"
		"/var/swap\\040file                       file\t\t524284\t\t0\t\t-3\n");
	put_str("cmdline", "proc-swaps-two",
		"Filename\tType\tSize\tUsed\tPriority\n"
		"/dev/sda2 partition 8388604 0 -2\n"
		"/dev/nvme0n1p3 partition 16777212 0 -3\n");
}

/* ---- fuzz_tpmkey -------------------------------------------------------- */

static void seeds_tpmkey(void)
{
	struct hib_tpm_machine m, bad;

	memset(&m, 0, sizeof(m));
	memcpy(m.magic, HIB_MACHINE_MAGIC, 16);
	m.version = HIB_MACHINE_VERSION;
	memset(m.machine_id, 0x4d, sizeof(m.machine_id));
	m.srk_name_len = 34;
	m.srk_name[0] = 0x00, m.srk_name[1] = 0x0b; /* TPM2_ALG_SHA256, then the digest */
	memset(m.srk_name + 2, 0x5a, 32);
	m.sealed.pcr_mask = 0xff;
	m.sealed.public_len = 80;
	m.sealed.private_len = 160;
	hib_tpm_machine_seal(&m);
	put("tpmkey", "valid", &m, sizeof(m));
	bad = m;
	bad.sealed.flags = HIB_TPM_PIN;
	hib_tpm_machine_seal(&bad);
	put("tpmkey", "pin-flag", &bad, sizeof(bad));
	bad = m;
	bad.srk_name_len = HIB_TPM_NAME_MAX + 1;
	hib_tpm_machine_seal(&bad);
	put("tpmkey", "name-too-long", &bad, sizeof(bad));
	bad = m;
	bad.version = HIB_MACHINE_VERSION + 1;
	hib_tpm_machine_seal(&bad);
	put("tpmkey", "newer-version", &bad, sizeof(bad));
	put("tpmkey", "truncated", &m, 100);
}

int main(int argc, char **argv)
{
	uint8_t *img[FUZZ_NBASE] = { 0 };
	size_t size[FUZZ_NBASE] = { 0 };

	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 2;
	}
	outdir = argv[1];
	mkdir(outdir, 0755);
	fuzz_quiet_logs();
	fuzz_random_install();
	for (unsigned v = 1; v < FUZZ_NBASE; v++)
		img[v] = fuzz_make_image(&fuzz_bases[v], &size[v]);
	seeds_tail(img);
	seeds_header_map(img, size);
	seeds_block();
	seeds_image();
	seeds_text();
	seeds_tpmkey();
	for (unsigned v = 1; v < FUZZ_NBASE; v++)
		free(img[v]);
	return 0;
}
