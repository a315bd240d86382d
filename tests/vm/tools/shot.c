// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a VM scenario sees on the guest's screen: QEMU's `screendump` writes
 * a PPM (P6); this turns it into a PNG to keep beside the log and says what
 * is on it, so a scenario can check a picture is not blank and differs from
 * another. No library: the PNG's deflate stream is made of stored blocks.
 *
 *   shot png IN.ppm OUT.png     the picture, as PNG
 *   shot stat IN.ppm            "WxH colours=N lit=P rows=R" (P: pixels not black, per
 *                               million; R: 16-pixel bands with any, from the top: the
 *                               lines of text a console with an 8x16 font shows)
 *   shot diff A.ppm B.ppm       ‰ of pixels that differ (same size, else 1000)
 *   shot box IN.ppm X Y W H     stat of that rectangle only
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct img {
	unsigned w, h;
	unsigned char *px; /* w * h * 3 */
};

static void die(const char *what, const char *path)
{
	fprintf(stderr, "shot: %s: %s\n", path, what);
	exit(1);
}

/* One header number, after blanks and # comments. */
static unsigned ppm_num(FILE *f, const char *path)
{
	int c;
	unsigned v = 0, digits = 0;

	while ((c = fgetc(f)) != EOF) {
		if (c == '#')
			while ((c = fgetc(f)) != EOF && c != '\n')
				;
		else if (c >= '0' && c <= '9')
			break;
		else if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			die("not a PPM header", path);
	}
	for (; c >= '0' && c <= '9'; c = fgetc(f), digits++)
		v = v * 10 + (unsigned)(c - '0');
	if (!digits || v > 100000)
		die("bad PPM number", path);
	return v;
}

static void ppm_read(const char *path, struct img *im)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		die("cannot open", path);
	if (fgetc(f) != 'P' || fgetc(f) != '6')
		die("not a P6 PPM", path);
	im->w = ppm_num(f, path);
	im->h = ppm_num(f, path);
	if (ppm_num(f, path) != 255)
		die("maxval is not 255", path);
	n = (size_t)im->w * im->h * 3;
	im->px = malloc(n ? n : 1);
	if (!im->px || fread(im->px, 1, n, f) != n)
		die("short PPM", path);
	fclose(f);
}

static uint32_t crc_table[256];

static void crc_init(void)
{
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[n] = c;
	}
}

static uint32_t crc(uint32_t c, const unsigned char *p, size_t n)
{
	c ^= 0xffffffffu;
	while (n--)
		c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

static void be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

static void chunk(FILE *f, const char *type, const unsigned char *data, size_t n)
{
	unsigned char hdr[8], tail[4];
	uint32_t c;

	be32(hdr, (uint32_t)n);
	memcpy(hdr + 4, type, 4);
	c = crc(0, hdr + 4, 4);
	c = crc(c, data, n);
	be32(tail, c);
	fwrite(hdr, 1, 8, f);
	fwrite(data, 1, n, f);
	fwrite(tail, 1, 4, f);
}

static void png_write(const struct img *im, const char *path)
{
	size_t row = (size_t)im->w * 3 + 1, raw = row * im->h, blocks = (raw + 65534) / 65535;
	size_t zn = 2 + raw + blocks * 5 + 4, o = 0;
	unsigned char *z = malloc(zn), ihdr[13] = { 0 };
	uint32_t a = 1, b = 0;
	FILE *f = fopen(path, "wb");

	if (!z || !f)
		die("cannot write", path);
	z[o++] = 0x78, z[o++] = 0x01;
	for (size_t i = 0; i < raw;) {
		size_t len = raw - i < 65535 ? raw - i : 65535;

		z[o++] = i + len == raw;
		z[o++] = (unsigned char)len, z[o++] = (unsigned char)(len >> 8);
		z[o++] = (unsigned char)~len, z[o++] = (unsigned char)(~len >> 8);
		for (size_t k = 0; k < len; k++, i++) {
			unsigned char v = i % row ? im->px[(i / row) * (row - 1) + i % row - 1] : 0;

			z[o++] = v;
			a = (a + v) % 65521, b = (b + a) % 65521;
		}
	}
	be32(z + o, (b << 16) | a), o += 4;
	be32(ihdr, im->w), be32(ihdr + 4, im->h);
	ihdr[8] = 8, ihdr[9] = 2; /* 8-bit RGB */
	fwrite("\x89PNG\r\n\x1a\n", 1, 8, f);
	chunk(f, "IHDR", ihdr, sizeof(ihdr));
	chunk(f, "IDAT", z, o);
	chunk(f, "IEND", NULL, 0);
	if (fclose(f))
		die("cannot write", path);
	free(z);
}

/* Distinct colours (capped at 4096), the pixels lit, per million, and the
 * 16-pixel bands with a pixel lit, in a rectangle. */
static void stat_box(const struct img *im, unsigned x0, unsigned y0, unsigned w, unsigned h)
{
	static uint32_t seen[4096];
	unsigned ncol = 0, rows = 0, last_band = ~0u;
	uint64_t lit = 0, total = 0;

	for (unsigned y = y0; y < y0 + h && y < im->h; y++) {
		uint64_t lit_before = lit;

		for (unsigned x = x0; x < x0 + w && x < im->w; x++) {
			const unsigned char *p = im->px + ((size_t)y * im->w + x) * 3;
			uint32_t c = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
			unsigned k;

			total++;
			lit += c != 0;
			for (k = 0; k < ncol && seen[k] != c; k++)
				;
			if (k == ncol && ncol < 4096)
				seen[ncol++] = c;
		}
		/* A band counts once, at its first lit line. */
		if (lit > lit_before && (y - y0) / 16 != last_band) {
			last_band = (y - y0) / 16;
			rows++;
		}
	}
	printf("%ux%u colours=%u lit=%u rows=%u\n", w, h, ncol,
	       total ? (unsigned)(lit * 1000000 / total) : 0, rows);
}

int main(int argc, char **argv)
{
	struct img a, b;

	crc_init();
	if (argc == 4 && !strcmp(argv[1], "png")) {
		ppm_read(argv[2], &a);
		png_write(&a, argv[3]);
	} else if (argc == 3 && !strcmp(argv[1], "stat")) {
		ppm_read(argv[2], &a);
		stat_box(&a, 0, 0, a.w, a.h);
	} else if (argc == 7 && !strcmp(argv[1], "box")) {
		ppm_read(argv[2], &a);
		stat_box(&a, (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]),
			 (unsigned)atoi(argv[5]), (unsigned)atoi(argv[6]));
	} else if (argc == 4 && !strcmp(argv[1], "diff")) {
		uint64_t d = 0, n;

		ppm_read(argv[2], &a);
		ppm_read(argv[3], &b);
		if (a.w != b.w || a.h != b.h) {
			puts("1000");
			return 0;
		}
		n = (uint64_t)a.w * a.h;
		for (uint64_t i = 0; i < n; i++)
			d += memcmp(a.px + i * 3, b.px + i * 3, 3) != 0;
		printf("%u\n", n ? (unsigned)(d * 1000 / n) : 0);
	} else {
		fputs("usage: shot png IN.ppm OUT.png | stat IN.ppm | diff A.ppm B.ppm | box IN.ppm X Y W H\n",
		      stderr);
		return 2;
	}
	return 0;
}
