// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The history of every cycle (lib/frontend/history.h): a record's line reads
 * back as it was written, a line this reader does not know is refused, the
 * file keeps the last records only and is replaced by rename, the
 * initramfs's handover moves into it once, and the journal's datagram
 * carries the fixed MESSAGE_ID and one KEY=value line a field.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "frontend/history.h"
#include "helpers.h"

static struct hib_history_entry sample(uint64_t start, enum hib_history_result res)
{
	struct hib_history_entry e = {
		.start_unix = start,
		.result = res,
		.image_id = 0x0123456789abcdefull,
		.stream_bytes = 73400320,
		.stored_bytes = 24117248,
		.snapshot_ms = 412,
		.write_ms = 3210,
		.load_ms = 2150,
		.loaded_unix = start + 600,
		.threads = 2,
		.load_threads = 4,
	};

	snprintf(e.codec, sizeof(e.codec), "zstd:3");
	snprintf(e.encryption, sizeof(e.encryption), "passphrase");
	return e;
}

static void assert_same(const struct hib_history_entry *a, const struct hib_history_entry *b)
{
	assert_int_equal(a->start_unix, b->start_unix);
	assert_int_equal(a->result, b->result);
	assert_int_equal(a->image_id, b->image_id);
	assert_int_equal(a->stream_bytes, b->stream_bytes);
	assert_int_equal(a->stored_bytes, b->stored_bytes);
	assert_int_equal(a->snapshot_ms, b->snapshot_ms);
	assert_int_equal(a->write_ms, b->write_ms);
	assert_int_equal(a->load_ms, b->load_ms);
	assert_int_equal(a->loaded_unix, b->loaded_unix);
	assert_int_equal(a->threads, b->threads);
	assert_int_equal(a->load_threads, b->load_threads);
	assert_string_equal(a->codec, b->codec);
	assert_string_equal(a->encryption, b->encryption);
	assert_string_equal(a->reason, b->reason);
}

/* Every result's record reads back field for field. */
static void test_round_trip(void **state)
{
	(void)state;
	for (int r = HIB_HISTORY_RESUMED; r <= HIB_HISTORY_RAM; r++) {
		struct hib_history_entry e = sample(1765000000 + (uint64_t)r, r), back;
		char line[HIB_HISTORY_LINE_MAX];

		snprintf(e.reason, sizeof(e.reason), "block 12: checksum mismatch; reason=x y=z");
		assert_non_null(hib_history_result_name(e.result));
		assert_true(hib_history_format(&e, line, sizeof(line)) < (int)sizeof(line));
		assert_null(strchr(line, '\n'));
		assert_int_equal(hib_history_parse(line, &back), 0);
		assert_same(&e, &back);
	}
}

/* What would break the line goes: a newline in the reason, a space in the codec. */
static void test_cleaned(void **state)
{
	struct hib_history_entry e = sample(1765000000, HIB_HISTORY_REFUSED), back;
	char line[HIB_HISTORY_LINE_MAX];

	(void)state;
	snprintf(e.reason, sizeof(e.reason), "first\nsecond\tthird");
	snprintf(e.codec, sizeof(e.codec), "a b=c");
	e.encryption[0] = 0;
	hib_history_format(&e, line, sizeof(line));
	assert_null(strchr(line, '\n'));
	assert_int_equal(hib_history_parse(line, &back), 0);
	assert_string_equal(back.reason, "first second third");
	assert_string_equal(back.codec, "a_b_c");
	assert_string_equal(back.encryption, "");
}

/* Not a record of this version: refused; a newer writer's extra key: read. */
static void test_parse_refuses(void **state)
{
	static const char *const bad[] = {
		"",
		"start=1 result=resumed",
		"v=2 start=1 result=resumed",
		"v=1 result=resumed",
		"v=1 start=1",
		"v=1 start=1 result=exploded",
		"v=1 start=1 result=resumed stream_bytes=-5",
		"v=1 start=1 result=resumed stream_bytes=12x",
		"v=1 start=1 result=resumed garbage",
		"v=1 start=x result=resumed",
	};
	struct hib_history_entry e;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (hib_history_parse(bad[i], &e) == 0)
			fail_msg("parsed: '%s'", bad[i]);
	}
	assert_int_equal(hib_history_parse("v=1 start=7 result=cancelled newkey=1 threads=3\n", &e),
			 0);
	assert_int_equal(e.start_unix, 7);
	assert_int_equal(e.result, HIB_HISTORY_CANCELLED);
	assert_int_equal(e.threads, 3);
	assert_string_equal(e.reason, "");
}

static void temp_dir(char *dir)
{
	const char *t = getenv("TMPDIR");

	snprintf(dir, PATH_MAX, "%s/hib-history-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir))
		die("mkdtemp");
}

static unsigned count_lines(const char *path)
{
	FILE *f = fopen(path, "re");
	unsigned n = 0;
	int c;

	if (!f)
		return 0;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* 70 records into a history of 8: the last 8 stay, in order; the directory
 * is made; no .new file is left; a damaged line is skipped. */
static void test_bounded(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX + 32], tmp[PATH_MAX + 40];
	struct hib_history_entry got[16];
	struct hib_error err;
	size_t n;

	(void)state;
	temp_dir(dir);
	snprintf(path, sizeof(path), "%s/sub/history", dir);
	assert_int_equal(hib_history_load(path, got, 16, &n, &err), 0);
	assert_int_equal(n, 0);
	for (uint64_t i = 1; i <= 70; i++) {
		struct hib_history_entry e = sample(1000 + i, HIB_HISTORY_RESUMED);

		assert_int_equal(hib_history_add(path, &e, 8, &err), 0);
	}
	assert_int_equal(count_lines(path), 8);
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	assert_int_not_equal(access(tmp, F_OK), 0);
	assert_int_equal(hib_history_load(path, got, 16, &n, &err), 0);
	assert_int_equal(n, 8);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(got[i].start_unix, 1063 + i);
	/* Fewer asked than there are: the newest. */
	assert_int_equal(hib_history_load(path, got, 3, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_int_equal(got[0].start_unix, 1068);
	assert_int_equal(got[2].start_unix, 1070);
	/* A line cut by a crash of another writer is skipped, not fatal. */
	FILE *f = fopen(path, "ae");
	assert_non_null(f);
	fputs("v=1 start=99 res", f);
	fclose(f);
	assert_int_equal(hib_history_load(path, got, 16, &n, &err), 0);
	assert_int_equal(n, 8);
	assert_int_equal(remove_tree(dir), 0);
}

/* The initramfs's records move in once: the handover is gone after. */
static void test_import(void **state)
{
	char dir[PATH_MAX], hand[PATH_MAX + 32], path[PATH_MAX + 32];
	struct hib_history_entry got[4], r1 = sample(500, HIB_HISTORY_REFUSED),
					 r2 = sample(600, HIB_HISTORY_RESUME_FAILED);
	struct hib_error err;
	size_t n;

	(void)state;
	temp_dir(dir);
	snprintf(hand, sizeof(hand), "%s/run/resume-result", dir);
	snprintf(path, sizeof(path), "%s/history", dir);
	assert_int_equal(hib_history_import(hand, path, 64, got, 4, &n, &err), 0);
	assert_int_equal(n, 0);
	snprintf(r1.reason, sizeof(r1.reason), "the header does not check");
	assert_int_equal(hib_history_add(hand, &r1, 4, &err), 0);
	assert_int_equal(hib_history_add(hand, &r2, 4, &err), 0);
	assert_int_equal(hib_history_import(hand, path, 64, got, 4, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_same(&got[0], &r1);
	assert_int_not_equal(access(hand, F_OK), 0);
	assert_int_equal(hib_history_load(path, got, 4, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_same(&got[0], &r1);
	assert_same(&got[1], &r2);
	assert_int_equal(hib_history_import(hand, path, 64, got, 4, &n, &err), 0);
	assert_int_equal(n, 0);
	assert_int_equal(count_lines(path), 2);
	assert_int_equal(remove_tree(dir), 0);
}

/* A history that cannot be written says which file and why. */
static void test_unwritable(void **state)
{
	struct hib_history_entry e = sample(1, HIB_HISTORY_FAILED);
	struct hib_error err;

	(void)state;
	assert_true(hib_history_add("/proc/no/such/history", &e, 4, &err) < 0);
	assert_non_null(strstr(err.msg, "/proc/no/such"));
	assert_non_null(strstr(err.msg, "not written"));
}

static bool has_line(const char *dgram, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = dgram; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, line, n) == 0 && p[n] == '\n')
			return true;
	return false;
}

/* The datagram: every line KEY=value with an upper-case key, the fixed id,
 * the result and reason; received as sent on a socket of the test's own. */
static void test_journal(void **state)
{
	struct hib_history_entry e = sample(1765000000, HIB_HISTORY_REFUSED);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[PATH_MAX], buf[4096], got[4096];
	int fd, len;
	ssize_t n;

	(void)state;
	snprintf(e.reason, sizeof(e.reason), "block 3 of 17: \nchecksum mismatch");
	len = hib_history_journal_format(&e, buf, sizeof(buf));
	assert_true(len > 0);
	assert_true(has_line(buf, "MESSAGE_ID=" HIB_HISTORY_MESSAGE_ID));
	assert_true(has_line(buf, "HIBERNATE_RESULT=refused"));
	assert_true(has_line(buf, "HIBERNATE_REASON=block 3 of 17:  checksum mismatch"));
	assert_true(has_line(buf, "HIBERNATE_IMAGE_BYTES=24117248"));
	assert_true(has_line(buf, "HIBERNATE_LOAD_MS=2150"));
	assert_true(has_line(buf, "HIBERNATE_CODEC=zstd:3"));
	assert_true(has_line(buf, "PRIORITY=4"));
	for (const char *p = buf; *p; p = strchr(p, '\n') + 1) {
		size_t k = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");

		assert_true(k > 0 && p[k] == '=');
		assert_non_null(strchr(p, '\n'));
	}
	assert_int_equal(buf[len - 1], '\n');
	assert_int_equal(hib_history_journal_format(&e, buf, 64), -ENOBUFS);

	temp_dir(dir);
	if (strlen(dir) + sizeof("/socket") > sizeof(sa.sun_path))
		skip();
	memcpy(sa.sun_path, dir, strlen(dir));
	memcpy(sa.sun_path + strlen(dir), "/socket", sizeof("/socket"));
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(hib_history_journal_send(&e, sa.sun_path), 0);
	n = recv(fd, got, sizeof(got) - 1, MSG_DONTWAIT);
	assert_int_equal(n, len);
	len = hib_history_journal_format(&e, buf, sizeof(buf));
	assert_memory_equal(got, buf, (size_t)len);
	close(fd);
	unlink(sa.sun_path);
	/* No journal there: said, not hidden. */
	assert_int_equal(hib_history_journal_send(&e, sa.sun_path), -ENOENT);
	assert_int_equal(remove_tree(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),    cmocka_unit_test(test_cleaned),
		cmocka_unit_test(test_parse_refuses), cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_import),        cmocka_unit_test(test_unwritable),
		cmocka_unit_test(test_journal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
