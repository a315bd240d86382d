// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The history of every cycle (history.h): the record's line (one table of
 * keys), the bounded file rewritten by rename, the handover from the
 * initramfs, and the journal's datagram.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "frontend/history.h"
#include "util/error.h"
#include "util/util.h"

#define FILE_MAX (HIB_HISTORY_KEEP * 2 * HIB_HISTORY_LINE_MAX) /* read no more */

static const char *const result_names[] = {
	[HIB_HISTORY_RESUMED] = "resumed",
	[HIB_HISTORY_CANCELLED] = "cancelled",
	[HIB_HISTORY_FAILED] = "failed",
	[HIB_HISTORY_REFUSED] = "refused",
	[HIB_HISTORY_RESUME_FAILED] = "resume-failed",
	[HIB_HISTORY_TEST] = "test",
	[HIB_HISTORY_RAM] = "woke-from-ram",
};

const char *hib_history_result_name(enum hib_history_result r)
{
	return (unsigned)r < ARRAY_SIZE(result_names) ? result_names[r] : NULL;
}

const char *hib_history_encryption_name(uint32_t kind)
{
	switch (kind) {
	case 0:
		return "none";
	case 1:
		return "passphrase";
	case 2:
		return "keyfile";
	case 3:
		return "tpm";
	}
	return "";
}

/* The numeric keys, in the line's order; the text keys are written around them. */
struct num_key {
	const char *key;
	size_t off, size;
};

#define NUM(k, field)                                                                              \
	{                                                                                          \
		k, offsetof(struct hib_history_entry, field),                                      \
			sizeof(((struct hib_history_entry *)0)->field)                             \
	}

static const struct num_key num_keys[] = {
	NUM("stream_bytes", stream_bytes), NUM("stored_bytes", stored_bytes),
	NUM("threads", threads),           NUM("snapshot_ms", snapshot_ms),
	NUM("write_ms", write_ms),         NUM("load_ms", load_ms),
	NUM("load_threads", load_threads), NUM("loaded", loaded_unix),
};

static uint64_t num_get(const struct num_key *k, const struct hib_history_entry *e)
{
	const unsigned char *p = (const unsigned char *)e + k->off;
	uint64_t v64;
	uint32_t v32;

	if (k->size == sizeof(v64)) {
		memcpy(&v64, p, sizeof(v64));
		return v64;
	}
	memcpy(&v32, p, sizeof(v32));
	return v32;
}

static void num_set(const struct num_key *k, struct hib_history_entry *e, uint64_t v)
{
	unsigned char *p = (unsigned char *)e + k->off;
	uint32_t v32 = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;

	if (k->size == sizeof(v))
		memcpy(p, &v, sizeof(v));
	else
		memcpy(p, &v32, sizeof(v32));
}

/* @src into @dst (@len bytes) without what would break the line: control
 * characters become spaces, and where @word, spaces and '=' become '_'. */
static void clean_copy(char *dst, size_t len, const char *src, bool word)
{
	size_t i = 0;

	for (; src && *src && i + 1 < len; src++) {
		unsigned char c = (unsigned char)*src;

		if (c < 0x20 || c == 0x7f)
			c = ' ';
		if (word && (c == ' ' || c == '='))
			c = '_';
		dst[i++] = (char)c;
	}
	dst[i] = 0;
}

#define APPEND(...)                                                                                \
	(n += (size_t)snprintf(n < len ? buf + n : NULL, n < len ? len - n : 0, __VA_ARGS__))

int hib_history_format(const struct hib_history_entry *e, char *buf, size_t len)
{
	const char *res = hib_history_result_name(e->result);
	char codec[sizeof(e->codec)], enc[sizeof(e->encryption)], reason[sizeof(e->reason)];
	size_t n = 0;

	clean_copy(codec, sizeof(codec), e->codec, true);
	clean_copy(enc, sizeof(enc), e->encryption, true);
	clean_copy(reason, sizeof(reason), e->reason, false);
	APPEND("v=1 start=%" PRIu64 " result=%s image_id=%016" PRIx64, e->start_unix,
	       res ? res : "unknown", e->image_id);
	APPEND(" codec=%s encryption=%s", codec[0] ? codec : "-", enc[0] ? enc : "-");
	for (size_t k = 0; k < ARRAY_SIZE(num_keys); k++)
		APPEND(" %s=%" PRIu64, num_keys[k].key, num_get(&num_keys[k], e));
	APPEND(" reason=%s", reason);
	if (len)
		buf[n < len ? n : len - 1] = 0;
	return (int)n;
}

static int parse_u64(const char *s, size_t n, int base, uint64_t *v)
{
	char tmp[24], *end;

	if (n == 0 || n >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, s, n);
	tmp[n] = 0;
	if (tmp[0] == '-')
		return -EINVAL;
	errno = 0;
	*v = strtoull(tmp, &end, base);
	return errno || *end ? -EINVAL : 0;
}

static int parse_result(const char *s, size_t n, struct hib_history_entry *e)
{
	for (size_t i = 1; i < ARRAY_SIZE(result_names); i++)
		if (strlen(result_names[i]) == n && memcmp(result_names[i], s, n) == 0) {
			e->result = (enum hib_history_result)i;
			return 0;
		}
	return -EINVAL;
}

static void parse_text(char *dst, size_t len, const char *s, size_t n)
{
	if (n == 1 && s[0] == '-')
		n = 0;
	if (n >= len)
		n = len - 1;
	memcpy(dst, s, n);
	dst[n] = 0;
}

/* key=value (@v, @vn) into @e; unknown keys are a newer writer's: skipped. */
static int parse_pair(const char *key, size_t kn, const char *v, size_t vn,
		      struct hib_history_entry *e)
{
#define IS(k) (kn == strlen(k) && memcmp(key, k, kn) == 0)
	uint64_t x;

	if (IS("v"))
		return vn == 1 && v[0] == '1' ? 0 : -EINVAL;
	if (IS("start"))
		return parse_u64(v, vn, 10, &e->start_unix);
	if (IS("result"))
		return parse_result(v, vn, e);
	if (IS("image_id"))
		return parse_u64(v, vn, 16, &e->image_id);
	if (IS("codec") || IS("encryption")) {
		if (IS("codec"))
			parse_text(e->codec, sizeof(e->codec), v, vn);
		else
			parse_text(e->encryption, sizeof(e->encryption), v, vn);
		return 0;
	}
	for (size_t k = 0; k < ARRAY_SIZE(num_keys); k++)
		if (IS(num_keys[k].key)) {
			if (parse_u64(v, vn, 10, &x) < 0)
				return -EINVAL;
			num_set(&num_keys[k], e, x);
			return 0;
		}
	return 0;
#undef IS
}

int hib_history_parse(const char *line, struct hib_history_entry *e)
{
	const char *p = line, *end = line + strcspn(line, "\n");
	bool versioned = false;

	*e = (struct hib_history_entry){ 0 };
	while (p < end) {
		const char *sp, *eq;

		while (p < end && *p == ' ')
			p++;
		if (p == end)
			break;
		if ((size_t)(end - p) >= 7 && memcmp(p, "reason=", 7) == 0) {
			parse_text(e->reason, sizeof(e->reason), p + 7, (size_t)(end - p - 7));
			break;
		}
		sp = memchr(p, ' ', (size_t)(end - p));
		sp = sp ? sp : end;
		eq = memchr(p, '=', (size_t)(sp - p));
		if (!eq || parse_pair(p, (size_t)(eq - p), eq + 1, (size_t)(sp - eq - 1), e) < 0)
			return -EINVAL;
		versioned |= p == line && eq - p == 1 && p[0] == 'v';
		p = sp;
	}
	return versioned && e->result && e->start_unix ? 0 : -EINVAL;
}

void hib_history_summary(const struct hib_history_entry *e, char *buf, size_t len)
{
	const char *res = hib_history_result_name(e->result);
	size_t n = 0;

	APPEND("%s", res ? res : "unknown");
	if (e->stream_bytes)
		APPEND(": %" PRIu64 " MiB image (%" PRIu64 " MiB on disk)", e->stream_bytes >> 20,
		       e->stored_bytes >> 20);
	if (e->write_ms)
		APPEND(" written in %.1f s", (double)e->write_ms / 1000);
	if (e->load_ms)
		APPEND("%s loaded in %.1f s", e->write_ms ? "," : "", (double)e->load_ms / 1000);
	if (e->reason[0])
		APPEND("%s%s", e->stream_bytes || e->write_ms || e->load_ms ? "; " : ": ",
		       e->reason);
}

/* ---- the file --------------------------------------------------------------- */

/* @path whole (at most FILE_MAX bytes: the tail), NUL-terminated, into *@ret. */
static int read_tail(const char *path, char **ret, struct hib_error *err)
{
	_cleanup_(closep) int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	_cleanup_(freep) char *buf = NULL;
	struct stat st;
	ssize_t got;
	off_t from;

	if (fd < 0)
		return errno == ENOENT
			       ? 0
			       : hib_error_set(err, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0)
		return hib_error_set(err, -errno, "%s: %s", path, strerror(errno));
	from = st.st_size > FILE_MAX ? st.st_size - FILE_MAX : 0;
	buf = malloc(FILE_MAX + 1);
	if (!buf)
		return hib_error_set(err, -ENOMEM, "%s: out of memory", path);
	got = pread(fd, buf, FILE_MAX, from);
	if (got < 0)
		return hib_error_set(err, -errno, "%s: %s", path, strerror(errno));
	buf[got] = 0;
	*ret = TAKE_PTR(buf);
	return 0;
}

int hib_history_load(const char *path, struct hib_history_entry *out, size_t max, size_t *n,
		     struct hib_error *err)
{
	_cleanup_(freep) char *buf = NULL;
	struct hib_history_entry e;
	size_t count = 0;
	int r;

	hib_error_clear(err);
	*n = 0;
	r = read_tail(path, &buf, err);
	if (r < 0 || !buf || max == 0)
		return r;
	for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		if (hib_history_parse(l, &e) < 0)
			continue;
		/* A ring of the last @max, put in order below. */
		out[count++ % max] = e;
	}
	if (count > max) {
		size_t first = count % max;
		struct hib_history_entry *tmp = malloc(max * sizeof(*tmp));

		if (!tmp)
			return hib_error_set(err, -ENOMEM, "%s: out of memory", path);
		for (size_t i = 0; i < max; i++)
			tmp[i] = out[(first + i) % max];
		memcpy(out, tmp, max * sizeof(*tmp));
		free(tmp);
	}
	*n = count < max ? count : max;
	return 0;
}

static int write_lines(int fd, const struct hib_history_entry *list, size_t n)
{
	char line[HIB_HISTORY_LINE_MAX + 1];

	for (size_t i = 0; i < n; i++) {
		int len = hib_history_format(&list[i], line, sizeof(line) - 1);

		if (len < 0 || (size_t)len >= sizeof(line) - 1)
			len = (int)strlen(line); /* cut: the reason's end goes */
		line[len++] = '\n';
		if (write(fd, line, (size_t)len) != len)
			return errno ? -errno : -EIO;
	}
	return fsync(fd) < 0 ? -errno : 0;
}

/* @list into @path by path.new and rename, the directory synced after. */
static int replace_file(const char *path, const struct hib_history_entry *list, size_t n,
			struct hib_error *err)
{
	char copy[PATH_MAX], tmp[PATH_MAX + 8];
	_cleanup_(closep) int dfd = -1;
	int fd, r;

	snprintf(copy, sizeof(copy), "%s", path);
	dfd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 && errno == ENOENT && mkdir(copy, 0755) == 0)
		dfd = open(copy, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return hib_error_set(err, -errno, "%s: %s: the history was not written", copy,
				     strerror(errno));
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return hib_error_set(err, -errno, "%s: %s: the history was not written", tmp,
				     strerror(errno));
	r = write_lines(fd, list, n);
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r == 0 && fsync(dfd) < 0)
		r = -errno;
	if (r < 0) {
		unlink(tmp);
		return hib_error_set(err, r, "%s: %s: the history was not written", path,
				     strerror(-r));
	}
	return 0;
}

int hib_history_add(const char *path, const struct hib_history_entry *e, size_t keep,
		    struct hib_error *err)
{
	_cleanup_(freep) struct hib_history_entry *list = NULL;
	size_t n = 0;
	int r;

	hib_error_clear(err);
	if (keep == 0)
		return hib_error_set(err, -EINVAL, "%s: a history of no record", path);
	list = calloc(keep, sizeof(*list));
	if (!list)
		return hib_error_set(err, -ENOMEM, "%s: out of memory", path);
	r = hib_history_load(path, list, keep - 1, &n, err);
	if (r < 0)
		return r;
	list[n++] = *e;
	return replace_file(path, list, n, err);
}

int hib_history_import(const char *handover, const char *path, size_t keep,
		       struct hib_history_entry *out, size_t max, size_t *n, struct hib_error *err)
{
	int r = hib_history_load(handover, out, max, n, err);

	for (size_t i = 0; r == 0 && i < *n; i++)
		r = hib_history_add(path, &out[i], keep, err);
	if (r < 0) {
		*n = 0;
		return r;
	}
	if (unlink(handover) < 0 && errno != ENOENT)
		return hib_error_set(err, -errno, "%s: %s: remove it, or its records come again",
				     handover, strerror(errno));
	return 0;
}

/* ---- the journal ------------------------------------------------------------ */

int hib_history_journal_format(const struct hib_history_entry *e, char *buf, size_t len)
{
	static const char *const field[] = {
		"HIBERNATE_STREAM_BYTES", "HIBERNATE_IMAGE_BYTES", "HIBERNATE_THREADS",
		"HIBERNATE_SNAPSHOT_MS",  "HIBERNATE_WRITE_MS",    "HIBERNATE_LOAD_MS",
		"HIBERNATE_LOAD_THREADS", "HIBERNATE_LOADED_UNIX",
	};
	_Static_assert(ARRAY_SIZE(field) == ARRAY_SIZE(num_keys), "a field a key");
	const char *res = hib_history_result_name(e->result);
	char msg[HIB_HISTORY_LINE_MAX], reason[sizeof(e->reason)];
	bool bad = e->result == HIB_HISTORY_FAILED || e->result == HIB_HISTORY_REFUSED ||
		   e->result == HIB_HISTORY_RESUME_FAILED;
	size_t n = 0;

	hib_history_summary(e, msg, sizeof(msg));
	clean_copy(msg, sizeof(msg), msg, false);
	clean_copy(reason, sizeof(reason), e->reason, false);
	APPEND("MESSAGE_ID=%s\nPRIORITY=%d\nSYSLOG_IDENTIFIER=hibernate\n", HIB_HISTORY_MESSAGE_ID,
	       bad ? 4 : 6);
	APPEND("MESSAGE=hibernation cycle %s\n", msg);
	APPEND("HIBERNATE_RESULT=%s\nHIBERNATE_START_UNIX=%" PRIu64 "\n", res ? res : "unknown",
	       e->start_unix);
	APPEND("HIBERNATE_IMAGE_ID=%016" PRIx64 "\n", e->image_id);
	for (size_t k = 0; k < ARRAY_SIZE(num_keys); k++)
		APPEND("%s=%" PRIu64 "\n", field[k], num_get(&num_keys[k], e));
	if (e->codec[0])
		APPEND("HIBERNATE_CODEC=%s\n", e->codec);
	if (e->encryption[0])
		APPEND("HIBERNATE_ENCRYPTION=%s\n", e->encryption);
	if (reason[0])
		APPEND("HIBERNATE_REASON=%s\n", reason);
	return n < len ? (int)n : -ENOBUFS;
}

int hib_history_journal_send(const struct hib_history_entry *e, const char *socket_path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[4096];
	_cleanup_(closep) int fd = -1;
	int len = hib_history_journal_format(e, buf, sizeof(buf));

	if (len < 0)
		return len;
	if (strlen(socket_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, socket_path, strlen(socket_path) + 1);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (sendto(fd, buf, (size_t)len, MSG_NOSIGNAL, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	return 0;
}
