// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench-pipeline: how fast the pipeline moves a real image stream, next to
 * what this machine can do at all — memcpy, and raw O_DIRECT writes and reads
 * of the same disk — measured in the same run, with a table for 1..N threads.
 *
 *   bench-pipeline [--stream FILE] [--synthetic-mib N] [--dir DIR]
 *                  [--codec C] [--max-threads N] [--runs R]
 *   bench-pipeline decode IMAGE STREAM    an image (a partition copy) → its stream
 *
 * The stream is a kernel snapshot stream: captured from a VM (bench/README.md
 * says how) or, by default, synthetic from the fake snapshot device's mix of
 * zeros, text, random, patterns and pointers. Hibernate goes through the
 * real engine into a file with a swap header on DIR (O_DIRECT where the
 * filesystem allows it), resume reads it back through the real engine into a
 * sink that counts; "codec capacity" is the same hibernate into /dev/shm,
 * where I/O costs next to nothing. Nothing here touches /dev/snapshot.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "hibernate.h"
#include "snapshot/snapshot-fake.h"
#include "snapshot/snapshot.h"

#define MiB (1024.0 * 1024.0)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, int r)
{
	fprintf(stderr, "bench-pipeline: %s: %s\n", what, strerror(r < 0 ? -r : r));
	exit(1);
}

static void *xalign(size_t n)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, n))
		die("memory", ENOMEM);
	memset(p, 1, n);
	return p;
}

/* A file with a swap header, sized for the stream and then some. */
static void make_target(const char *path, uint64_t pages)
{
	uint8_t page[4096] = { 0 };
	uint32_t v = 1, last = (uint32_t)(pages - 1);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		die(path, errno);
	memcpy(page + 1024, &v, 4);
	memcpy(page + 1028, &last, 4);
	memcpy(page + 4086, "SWAPSPACE2", 10);
	/* Allocated, not sparse: the disk is what we measure. */
	if (posix_fallocate(fd, 0, (off_t)(pages * 4096)) != 0 || pwrite(fd, page, 4096, 0) != 4096)
		die(path, errno);
	fsync(fd);
	close(fd);
}

/* The fake device's stream, written out once. */
static void synthesize(const char *path, uint64_t mib)
{
	struct hib_fake_params fp = { .seed = 7,
				      .stream_pages = mib * 256,
				      .swap_pages = 2,
				      .fail_read_at = -1,
				      .fail_write_at = -1 };
	struct hib_snapshot *s;
	uint8_t *buf = xalign(1 << 20);
	int fd, in = 0;
	uint64_t done = 0;

	if (hib_snapshot_fake_new(&fp, HIB_SNAP_HIBERNATE, &s) < 0)
		die("fake snapshot", ENOMEM);
	s->ops->freeze(s);
	s->ops->create_image(s, &in);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die(path, errno);
	for (;;) {
		size_t n = 0;
		ssize_t k = 0;
		while (n < (1 << 20) &&
		       (k = s->ops->read_pages(s, buf + n, ((1 << 20) - n) / 4096)) > 0)
			n += (size_t)k;
		if (n && write(fd, buf, n) != (ssize_t)n)
			die(path, errno);
		done += n;
		if (k <= 0)
			break;
	}
	close(fd);
	hib_snapshot_close(s);
	free(buf);
	(void)done;
}

/* bench/data keeps captured streams zstd-compressed. */
static void unzstd(const char *in, const char *out)
{
	FILE *fi = fopen(in, "rb"), *fo = fopen(out, "wb");
	ZSTD_DStream *d = ZSTD_createDStream();
	size_t isz = ZSTD_DStreamInSize(), osz = ZSTD_DStreamOutSize(), n;
	void *ib = malloc(isz), *ob = malloc(osz);

	if (!fi || !fo || !d || !ib || !ob)
		die(in, errno ? errno : ENOMEM);
	ZSTD_initDStream(d);
	while ((n = fread(ib, 1, isz, fi)) > 0) {
		ZSTD_inBuffer zi = { ib, n, 0 };
		while (zi.pos < zi.size) {
			ZSTD_outBuffer zo = { ob, osz, 0 };
			size_t r = ZSTD_decompressStream(d, &zo, &zi);
			if (ZSTD_isError(r))
				die(in, EBADMSG);
			fwrite(ob, 1, zo.pos, fo);
		}
	}
	fclose(fi);
	fclose(fo);
	ZSTD_freeDStream(d);
	free(ib);
	free(ob);
}

static double memcpy_mbs(void)
{
	size_t n = 256u << 20;
	char *a = xalign(n), *b = xalign(n);
	double t0 = now_s();

	for (int i = 0; i < 4; i++) {
		memcpy(b, a, n);
		a[i] = b[n - 1 - (size_t)i];
	}
	double t = now_s() - t0;
	free(a);
	free(b);
	return 4.0 * (double)n / MiB / t;
}

/* Raw O_DIRECT bandwidth of DIR, in 1 MiB writes then reads, flushed. */
static void raw_io_mbs(const char *dir, uint64_t bytes, double *w, double *r)
{
	char path[4096];
	size_t chunk = 1 << 20;
	uint8_t *buf = xalign(chunk);
	int fd;
	double t0;

	snprintf(path, sizeof(path), "%s/bench-raw.img", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0600);
	if (fd < 0)
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die(path, errno);
	if (posix_fallocate(fd, 0, (off_t)bytes) != 0)
		die(path, errno);
	t0 = now_s();
	for (uint64_t off = 0; off < bytes; off += chunk)
		if (pwrite(fd, buf, chunk, (off_t)off) != (ssize_t)chunk)
			die(path, errno);
	fdatasync(fd);
	*w = (double)bytes / MiB / (now_s() - t0);
	t0 = now_s();
	for (uint64_t off = 0; off < bytes; off += chunk)
		if (pread(fd, buf, chunk, (off_t)off) != (ssize_t)chunk)
			die(path, errno);
	*r = (double)bytes / MiB / (now_s() - t0);
	close(fd);
	unlink(path);
	free(buf);
}

struct cycle {
	double hib_s, res_s;
	uint64_t stored;
};

static void drop_log(enum hib_loglevel l, const char *m, void *u)
{
	(void)u;
	if (l <= HIB_LOG_ERR)
		fprintf(stderr, "bench-pipeline: %s\n", m);
}

static struct cycle run_cycle(const char *stream, uint64_t stream_bytes, const char *target,
			      enum hib_codec_choice codec, int level, unsigned threads, bool resume)
{
	uint64_t pages = stream_bytes / 4096 * 11 / 10 + 1024;
	struct hib_target *t;
	struct hib_snapshot *s;
	struct hib_options o;
	struct hib_stats st;
	enum hib_suspend_outcome written = 0;
	enum hib_resume_outcome resumed = 0;
	struct cycle c = { 0 };
	double t0;
	int r;

	make_target(target, pages);
	hib_options_init(&o);
	o.codec = codec;
	o.codec_level = level;
	o.threads = threads;
	o.powerdown = HIB_POWERDOWN_NONE;
	if ((r = hib_target_open(target, 0, true, &t)) < 0)
		die(target, r);
	if ((r = hib_snapshot_file_new(stream, HIB_SNAP_HIBERNATE, pages, 0, &s)) < 0)
		die(stream, r);
	t0 = now_s();
	r = hib_suspend(t, s, &o, &written, &st);
	c.hib_s = now_s() - t0;
	if (r < 0 || written != HIB_SUSPEND_WRITTEN)
		die("hibernate", r);
	c.stored = st.stored_bytes;
	hib_snapshot_close(s);
	if (resume) {
		if ((r = hib_snapshot_file_new(NULL, HIB_SNAP_RESUME, 0, stream_bytes, &s)) < 0)
			die("sink", r);
		t0 = now_s();
		r = hib_resume(t, s, &o, &resumed, NULL);
		c.res_s = now_s() - t0;
		if (r < 0 || resumed != HIB_RESUME_RESTORED)
			die("resume", r);
		hib_snapshot_close(s);
	}
	hib_target_close(t);
	unlink(target);
	return c;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int decode(const char *image, const char *out)
{
	struct hib_target *t;
	struct hib_snapshot *s;
	struct hib_image_info info;
	enum hib_resume_outcome resumed = 0;
	int r;

	/* Work on a copy: resume invalidates the image it reads. */
	if ((r = hib_target_open(image, 0, true, &t)) < 0)
		die(image, r);
	if ((r = hib_image_info(t, &info)) < 0 || !info.header_valid)
		die("no valid image in it", r < 0 ? r : EINVAL);
	if ((r = hib_snapshot_file_new(out, HIB_SNAP_RESUME, 0, info.stream_bytes, &s)) < 0)
		die(out, r);
	/* The kernel identity check is the real device's; a file sink skips it. */
	r = hib_resume(t, s, NULL, &resumed, NULL);
	if (r < 0 || resumed != HIB_RESUME_RESTORED)
		die("decoding", r);
	hib_snapshot_close(s);
	hib_target_close(t);
	printf("%s: %" PRIu64 " bytes of stream (kernel %s)\n", out, info.stream_bytes,
	       info.kernel_release);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "stream", required_argument, NULL, 's' },
		{ "synthetic-mib", required_argument, NULL, 'm' },
		{ "dir", required_argument, NULL, 'd' },
		{ "codec", required_argument, NULL, 'c' },
		{ "max-threads", required_argument, NULL, 't' },
		{ "runs", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	const char *stream_arg = NULL, *dir = "/var/tmp";
	unsigned max_threads = (unsigned)get_nprocs(), runs = 3;
	uint64_t synth_mib = 512;
	enum hib_codec_choice codec = HIB_COMPRESS_LZ4;
	int level = 0, c;
	char stream[4096], target[4096], shm[4096];
	struct stat st;
	double mc, rw, rr;

	hib_set_log(drop_log, NULL);
	if (argc == 4 && strcmp(argv[1], "decode") == 0)
		return decode(argv[2], argv[3]);
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			stream_arg = optarg;
			break;
		case 'm':
			synth_mib = strtoull(optarg, NULL, 10);
			break;
		case 'd':
			dir = optarg;
			break;
		case 'c':
			if (hib_codec_parse(optarg, &codec, &level) < 0)
				die(optarg, EINVAL);
			break;
		case 't':
			max_threads = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'r':
			runs = (unsigned)strtoul(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr,
				"usage: bench-pipeline [--stream FILE[.zst]] [--synthetic-mib N] "
				"[--dir DIR] [--codec C] [--max-threads N] [--runs R]\n"
				"       bench-pipeline decode IMAGE STREAM\n");
			return 2;
		}
	}
	if (max_threads < 1 || runs < 1 || runs > 15)
		die("arguments", EINVAL);
	snprintf(stream, sizeof(stream), "%s/bench-stream.raw", dir);
	snprintf(target, sizeof(target), "%s/bench-target.img", dir);
	snprintf(shm, sizeof(shm), "/dev/shm/bench-target.img");
	if (stream_arg && strlen(stream_arg) > 4 &&
	    strcmp(stream_arg + strlen(stream_arg) - 4, ".zst") == 0)
		unzstd(stream_arg, stream);
	else if (stream_arg)
		snprintf(stream, sizeof(stream), "%s", stream_arg);
	else
		synthesize(stream, synth_mib);
	if (stat(stream, &st) < 0)
		die(stream, errno);

	mc = memcpy_mbs();
	raw_io_mbs(dir, (uint64_t)st.st_size, &rw, &rr);
	printf("stream: %s, %.0f MiB (%s)\n", stream_arg ? stream_arg : "synthetic",
	       (double)st.st_size / MiB, hib_codec_name(codec));
	printf("machine: memcpy %.0f MiB/s; %s O_DIRECT write %.0f MiB/s, read %.0f MiB/s; %d CPUs\n",
	       mc, dir, rw, rr, get_nprocs());
	printf("\n| threads | codec capacity (RAM target) MiB/s | hibernate to disk MiB/s | "
	       "resume from disk MiB/s | stored MiB | hibernate vs limit |\n");
	printf("|---:|---:|---:|---:|---:|---:|\n");
	for (unsigned th = 1; th <= max_threads; th++) {
		double cap[15], hib[15], res[15];
		uint64_t stored = 0;

		for (unsigned i = 0; i < runs; i++) {
			struct cycle a = run_cycle(stream, (uint64_t)st.st_size, shm, codec, level,
						   th, false);
			struct cycle b = run_cycle(stream, (uint64_t)st.st_size, target, codec,
						   level, th, true);
			cap[i] = (double)st.st_size / MiB / a.hib_s;
			hib[i] = (double)st.st_size / MiB / b.hib_s;
			res[i] = (double)st.st_size / MiB / b.res_s;
			stored = b.stored;
		}
		double mcap = median(cap, (int)runs), mhib = median(hib, (int)runs),
		       mres = median(res, (int)runs);
		/* The disk moves stored bytes; in stream bytes it is worth stream/stored. */
		double disk_limit = rw * (double)st.st_size / (double)(stored ? stored : 1);
		double limit = mcap < disk_limit ? mcap : disk_limit;
		printf("| %u | %.0f | %.0f | %.0f | %.0f | %.0f%% of %.0f |\n", th, mcap, mhib,
		       mres, (double)stored / MiB, 100.0 * mhib / limit, limit);
		fflush(stdout);
	}
	unlink(shm);
	if (!stream_arg)
		unlink(stream);
	return 0;
}
