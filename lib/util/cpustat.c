// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/cpustat.h"

int hib_cpu_parse(const char *text, uint64_t *ret_busy_ticks)
{
	uint64_t user, nice, sys, idle, iowait, irq, softirq, steal = 0;
	int n;

	/* user nice system idle iowait irq softirq [steal guest guest_nice]:
	 * guest time is inside user already. */
	if (strncmp(text, "cpu ", 4) != 0)
		return -EINVAL;
	n = sscanf(text + 4,
		   "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
		   " %" SCNu64 " %" SCNu64,
		   &user, &nice, &sys, &idle, &iowait, &irq, &softirq, &steal);
	if (n < 7)
		return -EINVAL;
	*ret_busy_ticks = user + nice + sys + irq + softirq + steal;
	return 0;
}

struct hib_cpu_sample hib_cpu_sample(void)
{
	struct hib_cpu_sample s = { 0 };
	char buf[512]; /* its first line; read(), not stdio: the image is held, nothing allocates */
	int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return s;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return s;
	buf[n] = 0;
	s.ok = hib_cpu_parse(buf, &s.busy_ticks) == 0;
	return s;
}

uint64_t hib_cpu_busy_ms(const struct hib_cpu_sample *from, const struct hib_cpu_sample *to)
{
	long hz = sysconf(_SC_CLK_TCK);

	if (!from->ok || !to->ok || to->busy_ticks < from->busy_ticks || hz <= 0)
		return 0;
	return (to->busy_ticks - from->busy_ticks) * 1000 / (uint64_t)hz;
}

unsigned hib_cpus_online(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned)n : 1;
}
