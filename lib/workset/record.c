// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The working-set record's serialized form and the /proc texts it is made
 * from: pure functions, no I/O (tests/unit/test-workset.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "util/util.h"
#include "workset/workset.h"

_Static_assert(sizeof(struct hib_ws_header) == 40, "record header layout");
_Static_assert(sizeof(struct hib_ws_proc) == 16, "record proc layout");
_Static_assert(sizeof(struct hib_ws_file) == 16, "record file layout");
_Static_assert(sizeof(struct hib_ws_range) == 16, "record range layout");

void hib_ws_builder_free(struct hib_ws_builder *b)
{
	free(b->procs);
	free(b->files);
	free(b->ranges);
	free(b->paths);
	memset(b, 0, sizeof(*b));
}

/* Room for one more element of @size in *@arr holding @n, up to @max. */
static int grow(void **arr, uint32_t n, uint32_t max, size_t size)
{
	void *p;

	if (n >= max)
		return -E2BIG;
	/* Capacity: 16, then doubled each time a power of two is reached. */
	if (n != 0 && (n < 16 || (n & (n - 1)) != 0))
		return 0;
	p = realloc(*arr, (n ? n * 2 : 16) * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	return 0;
}

int hib_ws_add_proc(struct hib_ws_builder *b, pid_t pid, uint64_t start_time)
{
	int r = grow((void **)&b->procs, b->n_procs, HIB_WS_MAX_PROCS, sizeof(*b->procs));

	if (r < 0)
		return r;
	b->procs[b->n_procs++] =
		(struct hib_ws_proc){ .pid = (int32_t)pid, .start_time = start_time };
	return 0;
}

int hib_ws_add_file(struct hib_ws_builder *b, const char *path)
{
	size_t len = strlen(path) + 1;
	char *p;
	int r;

	if (path[0] != '/')
		return -EINVAL;
	if (len > HIB_WS_MAX_PATHS - b->paths_len)
		return -E2BIG;
	r = grow((void **)&b->files, b->n_files, HIB_WS_MAX_FILES, sizeof(*b->files));
	if (r < 0)
		return r;
	p = realloc(b->paths, b->paths_len + len);
	if (!p)
		return -ENOMEM;
	b->paths = p;
	memcpy(p + b->paths_len, path, len);
	b->files[b->n_files++] =
		(struct hib_ws_file){ .path_off = b->paths_len, .first_range = b->n_ranges };
	b->paths_len += (uint32_t)len;
	return 0;
}

int hib_ws_add_range(struct hib_ws_builder *b, uint64_t off, uint64_t len)
{
	int r;

	if (b->n_files == 0)
		return -EINVAL;
	r = grow((void **)&b->ranges, b->n_ranges, HIB_WS_MAX_RANGES, sizeof(*b->ranges));
	if (r < 0)
		return r;
	b->ranges[b->n_ranges++] = (struct hib_ws_range){ .off = off, .len = len };
	b->files[b->n_files - 1].n_ranges++;
	return 0;
}

static size_t body_len(uint32_t procs, uint32_t files, uint32_t ranges, uint32_t paths)
{
	return (size_t)procs * sizeof(struct hib_ws_proc) +
	       (size_t)files * sizeof(struct hib_ws_file) +
	       (size_t)ranges * sizeof(struct hib_ws_range) + paths;
}

/* @len bytes of @src at @p (an empty table may be NULL); the end. */
static uint8_t *put(uint8_t *p, const void *src, size_t len)
{
	if (len)
		memcpy(p, src, len);
	return p + len;
}

int hib_ws_encode(const struct hib_ws_builder *b, void **ret_buf, size_t *ret_len)
{
	size_t len = sizeof(struct hib_ws_header) +
		     body_len(b->n_procs, b->n_files, b->n_ranges, b->paths_len);
	struct hib_ws_header h = {
		.magic = HIB_WS_MAGIC,
		.version = HIB_WS_VERSION,
		.n_procs = b->n_procs,
		.n_files = b->n_files,
		.n_ranges = b->n_ranges,
		.paths_len = b->paths_len,
	};
	uint8_t *buf = malloc(len), *p;

	if (!buf)
		return -ENOMEM;
	p = buf + sizeof(h);
	p = put(p, b->procs, b->n_procs * sizeof(*b->procs));
	p = put(p, b->files, b->n_files * sizeof(*b->files));
	p = put(p, b->ranges, b->n_ranges * sizeof(*b->ranges));
	put(p, b->paths, b->paths_len);
	h.xxh3 = XXH3_64bits(buf + sizeof(h), len - sizeof(h));
	memcpy(buf, &h, sizeof(h));
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}

/* Every file's path and ranges inside their tables. */
static bool view_consistent(const struct hib_ws_view *v)
{
	if (v->paths_len && v->paths[v->paths_len - 1] != 0)
		return false;
	for (uint32_t i = 0; i < v->n_files; i++) {
		const struct hib_ws_file *f = &v->files[i];

		if (f->path_off >= v->paths_len || v->paths[f->path_off] != '/')
			return false;
		if (f->first_range > v->n_ranges || f->n_ranges > v->n_ranges - f->first_range)
			return false;
	}
	return true;
}

int hib_ws_decode(const void *buf, size_t len, struct hib_ws_view *ret)
{
	const uint8_t *p = buf;
	struct hib_ws_header h;
	struct hib_ws_view v;

	if (len < sizeof(h))
		return -EBADMSG;
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, HIB_WS_MAGIC, sizeof(h.magic)) != 0)
		return -EBADMSG;
	if (h.version != HIB_WS_VERSION)
		return -EPROTO;
	if (h.n_procs > HIB_WS_MAX_PROCS || h.n_files > HIB_WS_MAX_FILES ||
	    h.n_ranges > HIB_WS_MAX_RANGES || h.paths_len > HIB_WS_MAX_PATHS)
		return -E2BIG;
	if (len != sizeof(h) + body_len(h.n_procs, h.n_files, h.n_ranges, h.paths_len))
		return -EBADMSG;
	if (XXH3_64bits(p + sizeof(h), len - sizeof(h)) != h.xxh3)
		return -EBADMSG;
	p += sizeof(h);
	v.procs = (const void *)p, p += h.n_procs * sizeof(*v.procs);
	v.files = (const void *)p, p += h.n_files * sizeof(*v.files);
	v.ranges = (const void *)p, p += h.n_ranges * sizeof(*v.ranges);
	v.paths = (const char *)p;
	v.n_procs = h.n_procs, v.n_files = h.n_files, v.n_ranges = h.n_ranges;
	v.paths_len = h.paths_len;
	if (!view_consistent(&v))
		return -EBADMSG;
	*ret = v;
	return 0;
}

/* ---- /proc texts ----------------------------------------------------------- */

/* "start-end " at the start of an smaps/maps VMA line; NULL if it is not one. */
static const char *vma_line(const char *line, uint64_t *start, uint64_t *end)
{
	char *e;

	if (!((line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f')))
		return NULL;
	errno = 0;
	*start = strtoull(line, &e, 16);
	if (*e != '-')
		return NULL;
	*end = strtoull(e + 1, &e, 16);
	if (*e != ' ' || errno || *end < *start)
		return NULL;
	return e + 1;
}

/* A key line of smaps ("Swap: N kB") is "Key:"; a VMA line has a '-' first. */
static bool is_key_line(const char *line)
{
	size_t n = strcspn(line, ": \n-");

	return n > 0 && line[n] == ':';
}

int hib_ws_parse_smaps(const char *text, struct hib_ws_vma *ret, size_t max, uint64_t *ret_swap_kb)
{
	uint64_t start = 0, end = 0, total = 0, kb;
	bool in_vma = false;
	size_t n = 0;

	for (const char *line = text; line && *line;) {
		const char *next = strchr(line, '\n');

		if (vma_line(line, &start, &end))
			in_vma = true;
		else if (!is_key_line(line))
			return -EBADMSG;
		else if (strncmp(line, "Swap:", 5) == 0 && in_vma) {
			if (sscanf(line + 5, "%" SCNu64, &kb) != 1)
				return -EBADMSG;
			if (kb) {
				if (n < max)
					ret[n] = (struct hib_ws_vma){ start, end, kb };
				n++;
				total += kb;
			}
		}
		line = next ? next + 1 : NULL;
	}
	*ret_swap_kb = total;
	return (int)MIN(n, (size_t)INT32_MAX);
}

/* Whether a maps path names a file worth reading back. */
static bool maps_path_wanted(const char *path, size_t n)
{
	static const char deleted[] = " (deleted)";
	static const char *const pseudo[] = { "/dev/", "/proc/", "/sys/", "/memfd:", "/SYSV" };

	if (n == 0 || path[0] != '/')
		return false;
	if (n >= sizeof(deleted) - 1 &&
	    memcmp(path + n - (sizeof(deleted) - 1), deleted, sizeof(deleted) - 1) == 0)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(pseudo); i++)
		if (strncmp(path, pseudo[i], strlen(pseudo[i])) == 0)
			return false;
	return true;
}

int hib_ws_parse_maps_next(const char *text, size_t *pos, char *buf, size_t len)
{
	while (text[*pos]) {
		const char *line = text + *pos, *next = strchr(line, '\n'), *rest, *path;
		size_t line_len = next ? (size_t)(next - line) : strlen(line), n;
		uint64_t start, end;

		*pos += line_len + (next ? 1 : 0);
		rest = vma_line(line, &start, &end);
		if (!rest)
			return -EBADMSG;
		/* perms offset dev inode, then spaces, then the path (may hold spaces). */
		path = rest;
		for (int field = 0; field < 4; field++) {
			path += strcspn(path, " \n");
			path += strspn(path, " ");
		}
		if (path > line + line_len)
			return -EBADMSG;
		n = (size_t)(line + line_len - path);
		if (!maps_path_wanted(path, n) || n >= len)
			continue;
		memcpy(buf, path, n);
		buf[n] = 0;
		return 1;
	}
	return 0;
}

int hib_ws_parse_start_time(const char *stat, uint64_t *ret)
{
	const char *p = strrchr(stat, ')'); /* comm may hold spaces and parentheses */
	uint64_t v;

	if (!p)
		return -EBADMSG;
	p++;
	/* Field 3 (state) follows ")"; starttime is field 22: 19 more. */
	for (int field = 3; field < 22; field++) {
		p += strspn(p, " ");
		if (!*p)
			return -EBADMSG;
		p += strcspn(p, " ");
	}
	if (sscanf(p, " %" SCNu64, &v) != 1)
		return -EBADMSG;
	*ret = v;
	return 0;
}

int hib_ws_parse_kb(const char *text, const char *key, uint64_t *ret)
{
	size_t klen = strlen(key);

	for (const char *line = text; line && *line;) {
		const char *next = strchr(line, '\n');

		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			uint64_t v;

			if (sscanf(line + klen + 1, "%" SCNu64, &v) != 1)
				return -EBADMSG;
			*ret = v;
			return 0;
		}
		line = next ? next + 1 : NULL;
	}
	return -ENOENT;
}

/* ---- when to stop ----------------------------------------------------------- */

const char *hib_ws_stop_name(enum hib_ws_stop s)
{
	static const char *const names[] = {
		[HIB_WS_DONE] = "done",
		[HIB_WS_TIME] = "time limit",
		[HIB_WS_MEMORY] = "memory low",
		[HIB_WS_DISABLED] = "nothing recorded",
	};

	return (unsigned)s < ARRAY_SIZE(names) ? names[s] : "?";
}

uint64_t hib_ws_floor_kb(uint64_t mem_total_kb)
{
	return MAX(mem_total_kb / 16, (uint64_t)64 * 1024);
}

enum hib_ws_stop hib_ws_should_stop(const struct hib_ws_limits *l, uint64_t now_ms,
				    uint64_t mem_available_kb)
{
	if (l->limit_ms && now_ms - l->start_ms >= l->limit_ms)
		return HIB_WS_TIME;
	if (mem_available_kb != UINT64_MAX && mem_available_kb < l->floor_kb)
		return HIB_WS_MEMORY;
	return HIB_WS_DONE;
}
