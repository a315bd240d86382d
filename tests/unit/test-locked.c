// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Locked memory for a secret (lib/util/locked.c): the bytes asked for are
 * usable and zeroed, locked (VmLck grows by them), fenced by a guard page on
 * each side (a touch there kills the toucher), given back on free; bad sizes
 * refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "util/locked.h"

/* AddressSanitizer turns mlock() into a no-op that succeeds: VmLck cannot
 * show the lock there. */
#if defined(__SANITIZE_ADDRESS__)
#define MLOCK_SEEN 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MLOCK_SEEN 0
#endif
#endif
#ifndef MLOCK_SEEN
#define MLOCK_SEEN 1
#endif

/* VmLck of this process, in KiB. */
static long locked_kib(void)
{
	long kib = proc_status_field("VmLck");

	assert_true(kib >= 0);
	return kib;
}

static void usable_zeroed_locked(void **state)
{
	long before = locked_kib(), pg = sysconf(_SC_PAGESIZE);
	uint8_t *p;

	(void)state;
	p = hib_locked_alloc(5000);
	if (!p && errno == EPERM)
		skip(); /* no CAP_IPC_LOCK and RLIMIT_MEMLOCK is 0 */
	assert_non_null(p);
	for (size_t i = 0; i < 5000; i++)
		assert_int_equal(p[i], 0);
	memset(p, 0xa5, 5000);
	if (MLOCK_SEEN)
		assert_int_equal(locked_kib() - before, 2 * pg / 1024);
	else
		print_message(
			"# the VmLck check skipped: AddressSanitizer's mlock() locks nothing\n");
	hib_locked_free(p, 5000);
	assert_int_equal(locked_kib(), before);
}

/* A child touches the byte at @off from the start; returns its signal or 0. */
static int touch_signal(ptrdiff_t off)
{
	uint8_t *p = hib_locked_alloc(100);
	int status;
	pid_t pid;

	assert_non_null(p);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL); /* cmocka's handler would catch it */
		*(volatile uint8_t *)(p + off) = 1;
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	hib_locked_free(p, 100);
	return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

static void guard_pages(void **state)
{
	long pg = sysconf(_SC_PAGESIZE);

	(void)state;
	assert_int_equal(touch_signal(0), 0);
	assert_int_equal(touch_signal(pg - 1), 0); /* the rest of the data page */
	assert_int_equal(touch_signal(-1), SIGSEGV);
	assert_int_equal(touch_signal(pg), SIGSEGV);
}

static void bad_sizes(void **state)
{
	(void)state;
	errno = 0;
	assert_null(hib_locked_alloc(0));
	assert_int_equal(errno, EINVAL);
	assert_null(hib_locked_alloc(SIZE_MAX));
	assert_int_equal(errno, EINVAL);
	hib_locked_free(NULL, 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(usable_zeroed_locked),
		cmocka_unit_test(guard_pages),
		cmocka_unit_test(bad_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
