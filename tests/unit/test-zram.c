// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * zram swap beside the target: which areas a cycle moves out of the way (the
 * plan, from fake /proc/swaps and /proc/meminfo files), the flags they come
 * back with, and, through the fake snapshot device with a swap environment
 * that records instead of calling swapoff/swapon, that every way a cycle
 * ends puts back exactly what was swapped off, and that a refusal touches
 * nothing. Also auto-swapon's area: off again only when the caller says.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/swap.h>

#include <cmocka.h>

#include "helpers.h"
#include "storage/swaps.h"

#define SEED 11
#define HEAD "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"

struct fx {
	char swap[PATH_MAX];    /* the target: a swap file */
	char swaps[PATH_MAX];   /* a fake /proc/swaps */
	char meminfo[PATH_MAX]; /* a fake /proc/meminfo */
};

/* What the recording environment was asked, in order: "off P", "on P FLAGS". */
static char calls[4096];
static int off_result[8]; /* what the n-th swapoff returns */
static unsigned off_count;

static int rec_swapoff(const char *path)
{
	size_t len = strlen(calls);

	snprintf(calls + len, sizeof(calls) - len, "off %s;", path);
	return off_count < 8 ? off_result[off_count++] : 0;
}

static int rec_swapon(const char *path, int flags)
{
	size_t len = strlen(calls);

	snprintf(calls + len, sizeof(calls) - len, "on %s %#x;", path, (unsigned)flags);
	return 0;
}

static struct hib_swap_env env;

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	int fd;

	make_swap_path(f->swap, "zram-target", 600);
	fd = make_temp(f->swaps, "zram-swaps");
	close(fd);
	fd = make_temp(f->meminfo, "zram-meminfo");
	close(fd);
	write_text_file(f->meminfo, "MemTotal:        1000000 kB\n"
				    "MemFree:          200000 kB\n"
				    "MemAvailable:     500000 kB\n");
	env = (struct hib_swap_env){ .proc_swaps = f->swaps,
				     .meminfo = f->meminfo,
				     .swapoff = rec_swapoff,
				     .swapon = rec_swapon };
	calls[0] = 0;
	memset(off_result, 0, sizeof(off_result));
	off_count = 0;
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	hib_swap_env_set(NULL);
	unlink(f->swap);
	unlink(f->swaps);
	unlink(f->meminfo);
	free(f);
	return 0;
}

/* Two zram areas around the target (a swap file at priority 10) and a disk
 * partition that is neither: 256 + 64 MiB in zram. */
static void usual_table(const struct fx *f)
{
	char table[4 * PATH_MAX];

	snprintf(table, sizeof(table),
		 HEAD "/dev/zram0\t\t\t\tpartition\t524284\t\t262144\t\t100\n"
		      "%s\t\t\t\tfile\t\t2396\t\t0\t\t10\n"
		      "/nonexistent/hib-test/vdb1\t\tpartition\t102400\t\t2400\t\t-2\n"
		      "/dev/zram1\t\t\t\tpartition\t131068\t\t65536\t\t-3\n",
		 f->swap);
	write_text_file(f->swaps, table);
}

/* ---- the plan ------------------------------------------------------------ */

static void plan_lists_zram_but_not_the_target(void **state)
{
	struct fx *f = *state;
	struct hib_target *t = NULL;
	struct hib_zram_plan p;

	usual_table(f);
	assert_int_equal(hib_target_open(f->swap, 0, false, &t), 0);
	assert_int_equal(hib_zram_plan_make(&env, t, &p), 0);
	assert_int_equal(p.n, 2);
	assert_string_equal(p.areas[0].a.path, "/dev/zram0");
	assert_int_equal(p.areas[0].a.prio, 100);
	assert_int_equal(p.areas[0].a.used_kib, 262144);
	assert_int_equal(p.areas[0].a.size_kib, 524284);
	assert_false(p.areas[0].off);
	assert_string_equal(p.areas[1].a.path, "/dev/zram1");
	assert_int_equal(p.areas[1].a.prio, -3);
	assert_int_equal(p.used_kib, 262144 + 65536);
	/* MemAvailable and the free space of the one other, non-zram area; not
	 * the target's (the image goes there) nor zram's. */
	assert_int_equal(p.room_kib, 500000 + 100000);
	assert_true(p.target_listed);
	assert_int_equal(p.target_prio, 10);
	hib_zram_plan_free(&p);
	assert_null(p.areas);
	hib_target_close(t);
}

static void plan_without_zram_is_empty(void **state)
{
	struct fx *f = *state;
	struct hib_zram_plan p;

	write_text_file(f->swaps, HEAD "/dev/vda1\t\t\t\tpartition\t1048572\t\t0\t\t-2\n");
	assert_int_equal(hib_zram_plan_make(&env, NULL, &p), 0);
	assert_int_equal(p.n, 0);
	assert_false(p.target_listed);
	hib_zram_plan_free(&p);
	write_text_file(f->swaps, HEAD);
	assert_int_equal(hib_zram_plan_make(&env, NULL, &p), 0);
	assert_int_equal(p.n, 0);
	hib_zram_plan_free(&p);
	env.proc_swaps = "/nonexistent/hib-test/swaps";
	assert_int_equal(hib_zram_plan_make(&env, NULL, &p), -ENOENT);
}

static void plan_fits_with_the_margin(void **state)
{
	struct hib_zram_plan p = { .used_kib = 1000 };

	(void)state;
	p.room_kib = 1000 + HIB_ZRAM_MARGIN_KIB;
	assert_true(hib_zram_plan_fits(&p));
	p.room_kib--;
	assert_false(hib_zram_plan_fits(&p));
	p.used_kib = 1;
	p.room_kib = 0; /* no MemAvailable line: nothing known to fit */
	assert_false(hib_zram_plan_fits(&p));
	p.used_kib = 0; /* but nothing needs to */
	assert_true(hib_zram_plan_fits(&p));
}

static void zram_names(void **state)
{
	(void)state;
	assert_true(hib_swap_is_zram("/dev/zram0"));
	assert_true(hib_swap_is_zram("/dev/zram12"));
	assert_false(hib_swap_is_zram("/dev/zram"));
	assert_false(hib_swap_is_zram("/dev/zram0p1"));
	assert_false(hib_swap_is_zram("/dev/zramx"));
	assert_false(hib_swap_is_zram("/tmp/dev/zram0"));
	assert_false(hib_swap_is_zram("/dev/vda1"));
}

/* Does swapon(2) with @flags discard the whole area before it returns (the
 * kernel's rule: SWAP_FLAG_DISCARD without the pages-only policy)? */
static bool discards_area(unsigned flags)
{
	return (flags & SWAP_FLAG_DISCARD) && !(flags & SWAP_FLAG_DISCARD_PAGES);
}

/* Back on at its priority, discarding freed clusters only: never the whole
 * area inside swapon (swaps.h); a priority the kernel chose is the kernel's
 * to choose again (swapon takes 0..32767 only). */
static void swapon_flags(void **state)
{
	static const struct {
		int prio;
		unsigned want;
	} cases[] = {
		{ 100, SWAP_FLAG_PREFER | SWAP_FLAG_DISCARD | SWAP_FLAG_DISCARD_PAGES | 100 },
		{ -2, SWAP_FLAG_DISCARD | SWAP_FLAG_DISCARD_PAGES },
		{ 0, SWAP_FLAG_PREFER | SWAP_FLAG_DISCARD | SWAP_FLAG_DISCARD_PAGES },
	};
	struct hib_swap_area a = { .path = "/dev/zram0" };
	char want[128];

	(void)state;
	_Static_assert(SWAP_FLAG_DISCARD_ONCE == 0x20000 && SWAP_FLAG_DISCARD_PAGES == 0x40000,
		       "the kernel's values (include/linux/swap.h)");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned got;

		calls[0] = 0;
		a.prio = cases[i].prio;
		assert_int_equal(hib_zram_on(&env, &a), 0);
		assert_int_equal(sscanf(calls, "on /dev/zram0 %x;", &got), 1);
		assert_false(discards_area(got));
		snprintf(want, sizeof(want), "on /dev/zram0 %#x;", cases[i].want);
		assert_string_equal(calls, want);
	}
}

/* ---- the cycle, through the fake device ----------------------------------- */

static char logged[8192];

static void keep_log(enum hib_loglevel l, const char *m, void *u)
{
	size_t len = strlen(logged);

	(void)u;
	snprintf(logged + len, sizeof(logged) - len, "%d:%s\n", (int)l, m);
}

/* AS_IS: as WRITTEN, into the swap file as it is (else made afresh: a written image stays). */
enum how { WRITTEN, READ_ERROR, CANCELLED, RESUMED, KEEP, AS_IS };

static bool cancel_now(void *ud)
{
	(void)ud;
	return true;
}

/* One cycle into the target with zram planned from the usual table. */
static int cycle(struct fx *f, enum how how, bool *ret_frozen)
{
	struct hib_fake_params fp = fake_params(SEED, 200, 600, 0);
	struct hib_target *t = NULL;
	struct hib_snapshot *snap = NULL;
	enum hib_suspend_outcome outcome = 0;
	struct hib_options o;
	bool frozen = true;
	int r, fd;

	hib_options_init(&o);
	o.powerdown = HIB_POWERDOWN_NONE;
	if (how == READ_ERROR)
		fp.fail_read_at = 20;
	fp.create_resumes = how == RESUMED;
	if (how == CANCELLED)
		o.cancel = cancel_now;
	if (how == KEEP)
		o.zram = HIB_ZRAM_KEEP;
	if (how != AS_IS) {
		fd = open(f->swap, O_RDWR | O_CLOEXEC);
		assert_true(fd >= 0);
		make_swap_file(fd, 600);
		close(fd);
	}
	hib_swap_env_set(&env);
	logged[0] = 0;
	hib_set_log(keep_log, NULL);
	assert_int_equal(hib_target_open(f->swap, 0, true, &t), 0);
	assert_int_equal(hib_snapshot_fake_new(&fp, HIB_SNAP_HIBERNATE, &snap), 0);
	r = hib_suspend(t, snap, &o, &outcome, NULL);
	hib_snapshot_fake_result(snap, NULL, NULL, NULL, &frozen);
	hib_snapshot_close(snap);
	hib_target_close(t);
	quiet_logs();
	if (ret_frozen)
		*ret_frozen = frozen;
	return cycle_result(r, outcome);
}

/* Both swapped off in order, both back on, newest first, as they were. */
#define OFF_ON "off /dev/zram0;off /dev/zram1;on /dev/zram1 0x50000;on /dev/zram0 0x58064;"

static void every_end_puts_zram_back(void **state)
{
	static const struct {
		enum how how;
		int want;
	} ends[] = {
		{ WRITTEN, HIB_SUSPEND_WRITTEN },
		{ READ_ERROR, -EIO },
		{ CANCELLED, HIB_SUSPEND_CANCELLED },
		{ RESUMED, HIB_SUSPEND_RESUMED },
	};
	struct fx *f = *state;

	_Static_assert(SWAP_FLAG_PREFER == 0x8000 && SWAP_FLAG_DISCARD == 0x10000 &&
			       SWAP_FLAG_DISCARD_PAGES == 0x40000,
		       "OFF_ON");
	usual_table(f);
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		bool frozen = true;

		calls[0] = 0;
		assert_int_equal(cycle(f, ends[i].how, &frozen), ends[i].want);
		assert_false(frozen);
		assert_string_equal(calls, OFF_ON);
		assert_non_null(strstr(logged, "3:/dev/zram0 (256 MiB used) swapped off for the "
					       "cycle, back on with priority 100\n"));
		assert_non_null(strstr(logged, "3:/dev/zram1 (64 MiB used) swapped off for the "
					       "cycle, back on with the kernel's next priority"));
	}
}

/* swapoff of the second area runs out of memory: the kernel keeps that one
 * on; the first goes back on, and nothing was frozen. */
static void swapoff_enomem_refuses_and_puts_back(void **state)
{
	struct fx *f = *state;
	bool frozen = true;

	usual_table(f);
	off_result[1] = -ENOMEM;
	assert_int_equal(cycle(f, WRITTEN, &frozen), -ENOMEM);
	assert_false(frozen);
	assert_string_equal(calls, "off /dev/zram0;off /dev/zram1;on /dev/zram0 0x58064;");
	assert_non_null(strstr(logged, "/dev/zram1 holds 64 MiB"));
	assert_non_null(strstr(logged, "zram = keep"));
}

/* Any other swapoff failure ends the cycle too, before the freeze, saying
 * how to leave zram on; nothing was swapped off, so nothing goes back on. */
static void swapoff_failure_refuses(void **state)
{
	struct fx *f = *state;
	bool frozen = true;

	usual_table(f);
	off_result[0] = -EPERM;
	assert_int_equal(cycle(f, WRITTEN, &frozen), -EPERM);
	assert_false(frozen);
	assert_string_equal(calls, "off /dev/zram0;");
	assert_non_null(strstr(logged, "swapoff /dev/zram0 failed"));
	assert_non_null(strstr(logged, "zram = keep"));
}

/* What zram holds would not fit: refused before any swapoff, nothing frozen. */
static void too_much_in_zram_refused_untouched(void **state)
{
	struct fx *f = *state;
	bool frozen = true;

	usual_table(f);
	write_text_file(f->meminfo, "MemAvailable:     100000 kB\n");
	assert_int_equal(cycle(f, WRITTEN, &frozen), -ENOMEM);
	assert_false(frozen);
	assert_string_equal(calls, "");
	assert_non_null(strstr(logged, "/dev/zram0 holds 256 MiB of swapped-out pages"));
	assert_non_null(strstr(logged, "set zram = keep in /etc/hibernate.conf"));
}

static void keep_leaves_zram_alone(void **state)
{
	struct fx *f = *state;

	usual_table(f);
	assert_int_equal(cycle(f, KEEP, NULL), HIB_SUSPEND_WRITTEN);
	assert_string_equal(calls, "");
	assert_non_null(strstr(logged, "/dev/zram0 (256 MiB used) kept on as swap (zram = keep)"));
}

static int cycle_again(struct fx *f)
{
	return cycle(f, AS_IS, NULL);
}

/* A target refused touches no swap area. */
static void refused_target_touches_no_zram(void **state)
{
	struct fx *f = *state;
	uint8_t zero[TEST_PAGE] = { 0 };

	usual_table(f);
	assert_int_equal(cycle(f, WRITTEN, NULL), HIB_SUSPEND_WRITTEN);
	calls[0] = 0;
	/* The image written stays: a second cycle is refused (-EEXIST). */
	assert_int_equal(cycle_again(f), -EEXIST);
	assert_string_equal(calls, "");
	pwrite_at(f->swap, 0, zero, sizeof(zero));
	assert_int_equal(cycle_again(f), -EMEDIUMTYPE);
	assert_string_equal(calls, "");
}

/* ---- auto-swapon's area ------------------------------------------------- */

/* The area a cycle turned on goes off through hib_target_auto_swapoff alone
 * (the caller's, once /dev/snapshot is closed: newer kernels refuse a swapoff
 * with EBUSY until then), once; a swapoff that failed is still owed. */
static void auto_swapoff_undoes_only_its_swapon(void **state)
{
	struct fx *f = *state;
	struct hib_target *t = NULL;
	char want[3 * PATH_MAX + 32];
	const char *name;

	hib_swap_env_set(&env);
	assert_int_equal(hib_target_open(f->swap, 0, true, &t), 0);
	name = hib_target_name(t);
	assert_int_equal(hib_target_auto_swapoff(t), 0);
	assert_string_equal(calls, "");
	assert_int_equal(hib_target_auto_swapon(t), 0);
	off_result[0] = -EBUSY;
	assert_int_equal(hib_target_auto_swapoff(t), -EBUSY);
	assert_int_equal(hib_target_auto_swapoff(t), 0);
	assert_int_equal(hib_target_auto_swapoff(t), 0);
	snprintf(want, sizeof(want), "on %s 0;off %s;off %s;", name, name, name);
	assert_string_equal(calls, want);
	hib_target_close(t);
	assert_int_equal(hib_target_auto_swapoff(NULL), 0);
}

#define FX(fn)                                                                                     \
	{                                                                                          \
		.name = #fn, .test_func = fn, .setup_func = fx_setup, .teardown_func = fx_teardown \
	}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		FX(plan_lists_zram_but_not_the_target),
		FX(plan_without_zram_is_empty),
		FX(plan_fits_with_the_margin),
		FX(zram_names),
		FX(swapon_flags),
		FX(every_end_puts_zram_back),
		FX(swapoff_enomem_refuses_and_puts_back),
		FX(swapoff_failure_refuses),
		FX(too_much_in_zram_refused_untouched),
		FX(keep_leaves_zram_alone),
		FX(refused_target_touches_no_zram),
		FX(auto_swapoff_undoes_only_its_swapon),
	};

	quiet_logs();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
